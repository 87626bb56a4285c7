"""The one error type for bad usage: the command line turns it into a one-line message and
exit code 2. Every module that can refuse what a user gave it (a profile, a target, a
descriptor file, an option) raises a subclass, so a ValueError from a bug in the suite is
never mistaken for the user's mistake."""


class UsageError(ValueError):
    """Input or options the user gave that name nothing or cannot be read."""

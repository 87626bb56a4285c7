"""The one error type for bad usage: the command line turns it into a one-line message and
exit code 2. Every module that can refuse what a user gave it (a profile, a target, a
descriptor file, an option) raises a subclass, so a ValueError from a bug in the suite is
never mistaken for the user's mistake."""
import os


class UsageError(ValueError):
    """Input or options the user gave that name nothing or cannot be read."""


def writable_folder(path: str, what: str) -> None:
    """Make the folder `path` (and its parents) unless it is there; a UsageError, its message
    f"{what} {path}: why", when it cannot be made or written. Checked before a run, so a bad
    place is a one-line error at the start, not a failure to save after a long run."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{what} {path}: it is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{what} {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: permission denied")

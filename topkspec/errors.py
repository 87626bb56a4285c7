"""The one error type for bad usage: the command line turns it into a one-line message and
exit code 2. Every module that can refuse what a user gave it (a profile, a target, a
descriptor file, an option) raises a subclass, so a ValueError from a bug in the suite is
never mistaken for the user's mistake."""
import os


class UsageError(ValueError):
    """Input or options the user gave that name nothing or cannot be read."""


class InputError(UsageError):
    """A file or stream given as input (a descriptor, a model) that cannot be read."""


def writable_folder(path: str, what: str) -> list[str]:
    """Make the folder `path` (and its parents) unless it is there; a UsageError, its message
    f"{what} {path}: why", when it cannot be made or written. Checked before a run, so a bad
    place is a one-line error at the start, not a failure to save after a long run.

    Returns the folders it made, outermost first: a run that writes nothing there takes them
    away again (`remove_if_empty`), so a run without failures leaves no empty folders."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{what} {path}: it is a file, not a folder")
    missing = []
    folder = os.path.abspath(path)
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        missing.insert(0, folder)
        folder = os.path.dirname(folder)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{what} {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        remove_if_empty(missing)
        raise UsageError(f"{what} {path}: permission denied")
    return missing


def remove_if_empty(folders: list[str]) -> None:
    """Remove the folders `writable_folder` made, innermost first, as long as they are empty."""
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:  # something was written there (or it is gone): it and its parents stay
            return

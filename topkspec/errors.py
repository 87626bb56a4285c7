"""The one error type for bad usage: the command line turns it into a one-line message and
exit code 2. Every module that can refuse what a user gave it (a profile, a target, a
descriptor file, an option) raises a subclass, so a ValueError from a bug in the suite is
never mistaken for the user's mistake."""
import os
import signal


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


# -- folders a command owns: it replaces only what its own manifest says it wrote ----------------

MANIFEST = ".topkspec-written"
STAGING = ".topkspec-staging-"  # a folder a command writes in first, then moves into place


def staging_folder(folder: str) -> str:
    """A new folder inside `folder` (made when missing) to write into before `replace_owned`."""
    import tempfile

    os.makedirs(folder, exist_ok=True)
    return tempfile.mkdtemp(prefix=STAGING, dir=folder)


def _entries(folder: str) -> list[str]:
    """Every file and link under `folder`, as paths relative to it (a link to a folder is an entry)."""
    found = []
    for where, dirs, files in os.walk(folder):
        if where == folder:
            dirs[:] = [d for d in dirs if not d.startswith(STAGING)]
            files = [f for f in files if f != MANIFEST]
        links = [d for d in dirs if os.path.islink(os.path.join(where, d))]
        dirs[:] = [d for d in dirs if d not in links]
        found += [os.path.relpath(os.path.join(where, name), folder) for name in files + links]
    return sorted(found)


def owned_entries(folder: str, what: str) -> list[str]:
    """The files topkspec wrote in `folder` last time (its manifest), [] for a folder that is not
    there or is empty; a UsageError for a folder that holds files and no manifest: nothing in it
    is ours to replace."""
    manifest = os.path.join(folder, MANIFEST)
    if not os.path.isdir(folder) or not [n for n in os.listdir(folder) if not n.startswith(STAGING)]:
        return []
    if not os.path.isfile(manifest):
        raise UsageError(f"{what} {folder}: it holds files topkspec did not write (no {MANIFEST}); "
                         "name a new or empty folder")
    with open(manifest, encoding="utf-8") as handle:
        listed = [line for line in handle.read().splitlines() if line]
    # only paths inside the folder: an edited manifest never reaches a file elsewhere
    return [e for e in listed if not os.path.isabs(e) and not os.path.normpath(e).startswith(os.pardir)]


def replace_owned(folder: str, staged: str, what: str) -> None:
    """Move everything under `staged` (a folder this command wrote) into `folder`, which first
    loses the files its manifest lists, and nothing else; the manifest then lists what was moved.
    A UsageError, before anything in `folder` changes, when a file to write is there and not ours."""
    import shutil

    old = set(owned_entries(folder, what))
    new = _entries(staged)
    theirs = [e for e in new if os.path.lexists(os.path.join(folder, e)) and e not in old]
    if theirs:
        shutil.rmtree(staged)
        raise UsageError(f"{what} {folder}: {theirs[0]} is there and topkspec did not write it; "
                         "move it or name another folder")
    for entry in sorted(old):
        path = os.path.join(folder, entry)
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.unlink(path)
        _prune(os.path.dirname(path), folder)
    for entry in new:
        os.makedirs(os.path.dirname(os.path.join(folder, entry)) or folder, exist_ok=True)
        os.replace(os.path.join(staged, entry), os.path.join(folder, entry))
    shutil.rmtree(staged)
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as handle:
        handle.write("".join(f"{entry}\n" for entry in new))


def _prune(directory: str, top: str) -> None:
    """Remove `directory` and its parents below `top` while they are empty."""
    top = os.path.abspath(top)
    directory = os.path.abspath(directory)
    while directory != top and directory.startswith(top + os.sep):
        try:
            os.rmdir(directory)
        except OSError:
            return
        directory = os.path.dirname(directory)


def read_toml(path: str, error: type, label: str) -> dict:
    """The TOML file at `path` as a dict; a file that cannot be read or is not TOML raises
    `error` (a UsageError) with one line that starts with `label`."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the tomli backport (a dependency there)
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise error(f"{label}: cannot read it: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{label}: not TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 text
        raise error(f"{label}: not TOML: not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise error(f"{label}: not TOML: nested too deeply") from None


# -- a worker process that ended or went silent during a call: raised by every kind of worker
# (targets.isolation, targets.foreign, the DirectML stack's clients) and caught above them

# Exit statuses of a Windows process killed by an exception (NTSTATUS), by name.
NTSTATUS_NAMES = {
    0xC0000005: "STATUS_ACCESS_VIOLATION",
    0xC000001D: "STATUS_ILLEGAL_INSTRUCTION",
    0xC0000094: "STATUS_INTEGER_DIVIDE_BY_ZERO",
    0xC00000FD: "STATUS_STACK_OVERFLOW",
    0xC0000374: "STATUS_HEAP_CORRUPTION",
    0xC0000409: "STATUS_STACK_BUFFER_OVERRUN",
    0x40000015: "STATUS_FATAL_APP_EXIT (abort)",
}


class TargetCrashed(Exception):
    """The worker process died during a call (its exit status is in the message)."""


class TargetHung(Exception):
    """The worker did not answer within the time limit and was killed."""


def describe_exit(code) -> str:
    """A process exit status in words, POSIX and Windows alike."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code > 0x7FFFFFFF or code in NTSTATUS_NAMES:  # an NTSTATUS, as Windows reports it
        name = NTSTATUS_NAMES.get(code)
        return f"ended with status 0x{code:08X}" + (f" ({name})" if name else "")
    return f"exited with code {code}"

"""Which files the portable DirectML bundle carries, read from a trace of a real run.

The bundle builder (make.py) runs the worker and its X server under `strace -f`, and this
module turns the trace into a file list: the files every process opened or executed that
belong to Wine, the X server or its keymap compiler, plus the shared libraries those programs
need. Libraries come from the programs' own dependencies (`ldd`) and from the libraries Wine
loads at run time by name (its X11 driver, the Vulkan loader, FreeType...), and never from the
Vulkan driver's side: the driver (lavapipe here, NVIDIA's on a GPU machine) is the host's.
glibc is the host's too. Standard library only; no function here runs a program except `ldd`.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field

# glibc's own libraries: every Linux host has them, and they must match its dynamic loader.
GLIBC = frozenset({
    "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
    "libresolv.so.2", "libutil.so.1", "libanl.so.1", "libmvec.so.1", "libBrokenLocale.so.1",
    "libnsl.so.1", "libthread_db.so.1", "libc_malloc_debug.so.0", "libmemusage.so", "libpcprofile.so",
})

# One line of `strace -f -e trace=%file,execve`: pid, call, the first quoted path, the result.
_CALL = re.compile(r'^(\d+)\s+(?:<\.\.\. )?(\w+)(?: resumed>)?\((?:AT_FDCWD, |\d+, )?"((?:[^"\\]|\\.)*)"')
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|0x[0-9a-f]+)")
_EXECVE_ARGS = re.compile(r'execve\("[^"]*", \[(.*?)\]')
_SONAME_TEXT = re.compile(rb"lib[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*\.so(?:\.\d+)*")


@dataclass
class Access:
    pid: int
    call: str
    path: str


def parse_strace(lines) -> tuple[list[Access], dict[int, list[str]]]:
    """(the successful file accesses, {pid: argv of its last execve}) of an `strace -f` log
    written with `-e trace=%file,execve`. Calls that failed (ENOENT and the like) are left out,
    as are calls strace split in two ("unfinished" ... "resumed") whose result it never gave."""
    accesses, argv = [], {}
    pending = {}  # pid -> (call, path) of an unfinished call
    for line in lines:
        line = line.rstrip("\n")
        if "<unfinished ...>" in line:
            match = _CALL.match(line)
            if match:
                pending[int(match.group(1))] = (match.group(2), _unescape(match.group(3)), line)
            continue
        if " resumed>" in line:
            pid = int(line.split(None, 1)[0])
            if pid not in pending:
                continue
            call, path, first = pending.pop(pid)
            result = _RESULT.search(line)
            if result and not result.group(1).startswith("-"):
                accesses.append(Access(pid, call, path))
                if call == "execve":
                    argv[pid] = _execve_argv(first)
            continue
        match = _CALL.match(line)
        result = _RESULT.search(line)
        if not match or not result or result.group(1).startswith("-"):
            continue
        pid, call, path = int(match.group(1)), match.group(2), _unescape(match.group(3))
        accesses.append(Access(pid, call, path))
        if call == "execve":
            argv[pid] = _execve_argv(line)
    return accesses, argv


def _unescape(text: str) -> str:
    return text.replace('\\"', '"').replace("\\\\", "\\")


def _execve_argv(line: str) -> list[str]:
    match = _EXECVE_ARGS.search(line)
    return [_unescape(a) for a in re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(1))] if match else []


def opened_files(accesses, argv, *, relative_roots: dict[str, str] | None = None) -> set[str]:
    """The regular files among the accesses, as absolute normalised paths. A relative path is
    kept only for a program named in `relative_roots` ({program name: the folder its relative
    paths are under}, e.g. xkbcomp, which reads its keymap files relative to its -R folder)."""
    files = set()
    for access in accesses:
        path = access.path
        if not path.startswith("/"):
            program = os.path.basename((argv.get(access.pid) or [""])[0])
            root = (relative_roots or {}).get(program)
            if root is None:
                continue
            path = os.path.join(root, path)
        if "/dosdevices/" in path or "/drive_c/" in path:
            path = os.path.realpath(path)  # a Wine drive (z: is /) or a prefix's link to a Wine DLL
        path = os.path.normpath(path)
        if os.path.isfile(path):
            files.add(path)
    return files


def is_shared_library(path: str) -> bool:
    return bool(re.search(r"\.so(\.\d+)*$", os.path.basename(path)))


def under(path: str, folder: str) -> bool:
    folder = os.path.normpath(folder)
    return path == folder or path.startswith(folder + os.sep)


def ldd(path: str, env: dict | None = None) -> dict[str, str]:
    """{soname: resolved path} of an ELF file's dependencies, as this machine's loader finds them."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, env=env)
    found = {}
    for line in out.stdout.splitlines():
        match = re.match(r"\s*(\S+) => (/\S+)", line)
        if match:
            found[match.group(1)] = match.group(2)
        else:
            match = re.match(r"\s*(/\S+/(ld-linux[^ ]*))", line)
            if match:
                found[match.group(2)] = match.group(1)
    return found


def sonames_named_in(path: str) -> set[str]:
    """The library names a file spells out, such as "libX11.so.6" in Wine's X11 driver, which
    loads it by name with dlopen at run time."""
    try:
        data = open(path, "rb").read()
    except OSError:
        return set()
    return {m.decode() for m in _SONAME_TEXT.findall(data)}


@dataclass
class Libraries:
    """The shared libraries the bundle carries, and how each was found."""

    carried: dict[str, str] = field(default_factory=dict)  # soname -> path on this machine
    why: dict[str, str] = field(default_factory=dict)  # soname -> "needed by X" / "loaded by name by X"
    left_to_host: set[str] = field(default_factory=set)  # glibc, and the Vulkan driver's own


def library_closure(programs, loaded: set[str], *, driver_libraries: set[str] = frozenset(),
                    resolve=ldd) -> Libraries:
    """The libraries `programs` (ELF files the bundle carries) need: their dependencies, the
    traced libraries (`loaded`, paths) one of them names (a dlopen by name), and all of those
    libraries' dependencies in turn; glibc and the Vulkan driver's own libraries (those only
    the driver needs: `driver_libraries`, paths) stay with the host. `resolve(path)` gives a
    file's {soname: path} dependencies."""
    libs = Libraries()
    carried_as_programs = {os.path.basename(p) for p in programs}
    by_name = {os.path.basename(p): p for p in loaded if is_shared_library(p)}
    queue = [(p, os.path.basename(p)) for p in programs]
    seen = set()
    while queue:
        path, label = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        wanted = {name: (found, f"needed by {label}") for name, found in resolve(path).items()}
        for name in sonames_named_in(path) & set(by_name):
            wanted.setdefault(name, (by_name[name], f"loaded by name by {label}"))
        for name, (found, why) in sorted(wanted.items()):
            if name in GLIBC or name.startswith("ld-linux"):
                libs.left_to_host.add(name)
                continue
            if name in libs.carried or name in carried_as_programs:
                continue
            libs.carried[name] = found
            libs.why[name] = why
            queue.append((found, name))
    driver_only = {os.path.basename(p) for p in driver_libraries} - set(libs.carried)
    libs.left_to_host |= driver_only
    return libs


def unaccounted(loaded: set[str], libs: Libraries, driver_libraries: set[str]) -> set[str]:
    """Traced libraries neither carried, glibc's, nor the driver's: the builder carries them
    too (and says so), since a run loaded them."""
    names = {os.path.basename(p): p for p in loaded if is_shared_library(p)}
    driver = {os.path.basename(p) for p in driver_libraries}
    return {path for name, path in names.items()
            if name not in libs.carried and name not in GLIBC and not name.startswith("ld-linux")
            and name not in driver}

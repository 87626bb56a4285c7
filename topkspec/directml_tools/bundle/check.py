"""`topkspec directml bundle-check FILE` (and `bundle FILE --check`): the bundle where no Wine is.

Two runs, as root on Linux (they need mount namespaces):

1. A clean root: a chroot holding the unpacked bundle, glibc, Mesa's lavapipe with the libraries
   it needs and its ICD file in /usr/share/vulkan/icd.d (as a host with a Vulkan driver has it),
   /bin/sh and the dozen commands the run script uses, an /etc/passwd, and /proc, /dev, /sys.
   No Wine, no X server, no Python. In it: `./run findings` (the device is made and both findings
   are judged) and `./run corpus` (every stored case as stored).
2. The suite through the bundle, with this machine's Wine, Xvfb and xkbcomp hidden (empty mounts
   over them): `topkspec targets` names the bundle, and a short `topkspec fuzz --target directml`
   campaign runs on it, with a cache folder of its own.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from topkspec.directml_tools.bundle import select

# What the run script calls besides sh's builtins.
COMMANDS = ("sh", "cat", "id", "rm", "mkdir", "cp", "ln", "mv", "sleep", "tr", "grep", "sed")
# Hidden for the suite's run: the installed Wine, X server and keymap compiler.
HIDDEN_FOLDERS = ("/usr/lib/wine", "/usr/lib/x86_64-linux-gnu/wine", "/usr/lib/i386-linux-gnu/wine",
                  "/usr/share/wine", "/opt/wine-stable", "/opt/wine-devel", "/opt/wine-staging")
HIDDEN_FILES = ("wine", "wine64", "wineserver", "wineboot", "Xvfb", "xkbcomp")


class CheckError(RuntimeError):
    """The check cannot run here (the message says why)."""


def unpack(file: str, folder: Path) -> Path:
    with tarfile.open(file, "r:*") as archive:
        archive.extractall(folder, filter="data")
    (inner,) = [p for p in folder.iterdir() if (p / "run").is_file()]
    return inner


def _copy_with_libraries(path: str, root: Path, env: dict | None = None, *, dest: str | None = None) -> None:
    """Copies an ELF file into root (at its own path, or dest) with every library it needs."""
    files = {path: dest or path, **{p: p for p in select.ldd(path, env).values()}}
    for source, target in files.items():
        inside = root / target.lstrip("/")
        if not inside.exists():
            inside.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, inside)


def make_clean_root(bundle: Path, root: Path, stack) -> dict:
    """The chroot of the module text; returns what went in besides the bundle."""
    shutil.copytree(bundle, root / "bundle", symlinks=True)
    for name in COMMANDS:
        found = shutil.which(name)
        if found is None:
            raise CheckError(f"{name} not found here, to put in the clean root")
        _copy_with_libraries(os.path.realpath(found), root, dest=f"/bin/{name}")
    if not stack.icd:
        raise CheckError("no lavapipe ICD from setup (state.json's mesa): run `topkspec directml setup`")
    icd = json.loads(Path(stack.icd).read_text())
    library = icd["ICD"]["library_path"]
    env = dict(os.environ, LD_LIBRARY_PATH=stack.mesa_lib or "")
    inside = "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
    _copy_with_libraries(library, root, env, dest=inside)
    for lib in select.ldd(library, env).values():  # Mesa's own copies land where the host keeps libraries
        target = root / "usr/lib/x86_64-linux-gnu" / os.path.basename(lib)
        if not target.exists():
            shutil.copy(lib, target)
    icd["ICD"]["library_path"] = inside
    (root / "usr/share/vulkan/icd.d").mkdir(parents=True)
    (root / "usr/share/vulkan/icd.d/lvp_icd.json").write_text(json.dumps(icd, indent=1))
    for folder in ("proc", "dev", "sys", "tmp", "root", "etc"):
        (root / folder).mkdir(exist_ok=True)
    os.chmod(root / "tmp", 0o1777)
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    libraries = sorted(p.name for p in (root / "usr/lib/x86_64-linux-gnu").iterdir())
    return {"commands": list(COMMANDS), "lavapipe": stack.mesa, "driver_libraries": len(libraries)}


def run_in_root(root: Path, script: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Runs a shell script in the chroot, in mount and PID namespaces of its own (so every process
    it leaves, wineserver and Xvfb included, ends with it), with a bare environment."""
    inner = (f"mount --make-rprivate / && mount -t proc proc {root}/proc && mount --rbind /dev {root}/dev && "
             f"mount --rbind /sys {root}/sys && exec chroot {root} /bin/sh -c {_quote(script)}")
    return subprocess.run(["unshare", "--mount", "--pid", "--fork", "--kill-child", "sh", "-c", inner],
                          env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "TMPDIR": "/tmp", "LANG": "C"},
                          capture_output=True, text=True, timeout=timeout)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def run_without_wine(bundle: Path, cache: Path, stack, args: list[str], timeout: float = 900):
    """`python -m topkspec ARGS` with the bundle as the stack and the installed Wine, Xvfb and
    xkbcomp hidden by empty mounts (a mount namespace of its own), on setup's lavapipe."""
    hide = ["mount --make-rprivate /"]
    for folder in HIDDEN_FOLDERS:
        if os.path.isdir(folder):
            hide.append(f"mount -t tmpfs none {folder}")
    for name in HIDDEN_FILES:
        for folder in ("/usr/bin", "/usr/local/bin", "/bin"):
            path = os.path.join(folder, name)
            if os.path.lexists(path) and not os.path.islink(path):
                hide.append(f"mount --bind /dev/null {path}")
    command = " && ".join(hide) + " && exec " + " ".join(_quote(a) for a in [sys.executable, "-m", "topkspec", *args])
    env = dict(os.environ, TOPKSPEC_DIRECTML_BUNDLE=str(bundle), TOPKSPEC_DIRECTML_CACHE=str(cache),
               TOPKSPEC_BUNDLE_HOME=str(cache / "bundle-home"))
    for name in ("DISPLAY", "TOPKSPEC_DIRECTML_DISPLAY", "TOPKSPEC_DIRECTML_DLL", "TOPKSPEC_ORT_DLL"):
        env.pop(name, None)
    if stack.icd:  # this machine's Vulkan driver is the lavapipe setup unpacked, outside the usual folders
        env["VK_ICD_FILENAMES"] = stack.icd
        env["LD_LIBRARY_PATH"] = ":".join(p for p in (stack.mesa_lib, env.get("LD_LIBRARY_PATH")) if p)
    return subprocess.run(["unshare", "--mount", "--pid", "--fork", "--kill-child", "sh", "-c", command],
                          env=env, capture_output=True, text=True, timeout=timeout)


def check(file: str, *, max_examples: int = 100, log=print) -> int:
    """Both runs; 0 when the bundle made its device and ran everything as expected, else 1."""
    from topkspec.directml.windows.environment import current_stack

    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("unshare") is None:
        raise CheckError("the bundle check runs as root on Linux (it makes a chroot and mount namespaces)")
    stack = current_stack()
    failures = []
    with tempfile.TemporaryDirectory(prefix="topkspec-bundle-check-") as scratch:
        scratch = Path(scratch)
        bundle = unpack(file, scratch / "unpacked")
        root = scratch / "root"
        made = make_clean_root(bundle, root, stack)
        log(f"clean root {root}: the bundle, glibc, /bin/sh and {', '.join(made['commands'][1:])}, lavapipe "
            f"(Mesa {made['lavapipe']}) with {made['driver_libraries']} libraries; no Wine, no X server, no Python")
        for command, expected in (("findings", (0, 1)), ("corpus", (0,))):
            done = run_in_root(root, f"cd /bundle && ./run {command}")
            log(f"in the clean root: ./run {command} (exit {done.returncode})")
            print(done.stdout + done.stderr, end="", flush=True)
            if done.returncode not in expected or "device: " not in done.stdout:
                failures.append(f"./run {command} exited {done.returncode}")

        cache = scratch / "cache"
        cache.mkdir()
        for args in (["targets"], ["fuzz", "--target", "directml", "--max-examples", str(max_examples), "--seed", "1",
                                   "--report-dir", str(scratch / "reports")]):
            done = run_without_wine(bundle, cache, stack, args)
            log(f"with Wine, Xvfb and xkbcomp hidden: topkspec {' '.join(args[:3])} ... (exit {done.returncode})")
            lines = (done.stdout + done.stderr).splitlines()
            if args[0] == "targets":  # the directml line and the one under it
                lines = [line for i, line in enumerate(lines)
                         if line.startswith("directml ") or (i and lines[i - 1].startswith("directml "))]
            print("\n".join(lines[-40:]), flush=True)
            if args[0] == "targets" and not any("from the bundle" in line for line in lines):
                failures.append("topkspec targets does not name the bundle")
            if args[0] == "fuzz" and done.returncode not in (0, 1):
                failures.append(f"topkspec fuzz exited {done.returncode}")
    if failures:
        log("FAILED: " + "; ".join(failures))
        return 1
    log("passed: the findings and the corpus in the clean root, and the suite's campaign with Wine hidden")
    return 0

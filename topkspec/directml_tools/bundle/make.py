"""`topkspec directml bundle FILE`: DirectML.dll, topkspec's worker and exactly the Wine, X server
and libraries they load, in one compressed file that runs on a Linux machine with a Vulkan
driver and no Wine (a GPU machine, say), through one entry script, `run`.

What goes in is read from a traced run (trace.py, select.py), not listed by hand:
the worker replays the two DirectML findings and the stored corpus on a fresh Wine session under
`strace -f`, and every file the processes opened that belongs to Wine, the X server or the
keymap compiler is carried, with the libraries those programs need (the Vulkan driver's and
glibc's stay the host's). Wine's PE DLLs lose their debug sections (the bulk of their size).

The layout (all paths relative to the bundle's folder):

    run                  the entry script (run.sh): findings, corpus, info, wine, xvfb
    README.txt, versions.txt, manifest.json (every file, its size and why it is there), bundle-id
    directml/            DirectML.dll, topk_worker.exe (and with --with-ep onnxruntime.dll,
                         onnxruntime_providers_shared.dll, topk_ort_worker.exe)
    wine/                the Wine files, in the folders relative to each other that Wine expects
    lib/                 shared libraries (the host's own copy wins where it has one)
    xvfb/                Xvfb, xkbcomp, the keymap files they read, xkb_bindir.so (xkb_bindir.c)
    prefix/              the Wine prefix's registry; `run` makes the prefix from it, no wineboot
    cases/               findings/ (the two cases, expected.txt), corpus/ (topkspec corpus), smoke/
"""
from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from topkspec.errors import owned_entries, replace_owned, staging_folder
from topkspec.directml_tools.bundle import select
from topkspec.directml_tools.bundle import trace
from topkspec.directml.worker.build import source_digest
from topkspec.directml.windows.environment import current_stack, pe_file_version, prefix_dir

HERE = Path(__file__).resolve().parent  # run.sh, readme.txt and xkb_bindir.c beside this file

XKB_DIR = "/usr/share/X11/xkb"


class BundleError(RuntimeError):
    """The bundle cannot be made here (the message says why and what to do)."""


def _is_elf(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == b"\x7fELF"


def write_prefix_template(folder: Path) -> None:
    """The registry of setup's prefix (Direct3D on Vulkan, no crash debugger) and an update
    stamp that tells Wine not to update the prefix: no wineboot --update, no wine.inf."""
    folder.mkdir(parents=True)
    for name in ("system.reg", "user.reg", "userdef.reg"):
        shutil.copy(prefix_dir() / name, folder / name)
    (folder / ".update-timestamp").write_text("disable\n")


# -- what the trace found -----------------------------------------------------------------------

def wine_folders(files: set[str]) -> dict:
    """The system Wine's folders, from where the traced files were: its loader (wine64), its unix
    libraries (ntdll.so), its PE files (ntdll.dll), its data (nls)."""
    def folder_of(name):
        found = sorted(os.path.dirname(p) for p in files if os.path.basename(p) == name)
        if not found:
            raise BundleError(f"the trace shows no {name}: did the worker run under Wine?")
        return found[0]

    nls = sorted(os.path.dirname(os.path.dirname(p)) for p in files if p.endswith(".nls"))
    loaders = sorted(os.path.dirname(p) for p in files
                     if os.path.basename(p) in ("wine64", "wine") and _is_elf(p))
    if not loaders:
        raise BundleError("the trace shows no Wine loader (wine64): did the worker run under Wine?")
    folders = {"loader": loaders[0], "unix": folder_of("ntdll.so"), "pe": folder_of("ntdll.dll"),
               "data": nls[0] if nls else None}
    folders["root"] = os.path.commonpath([v for v in folders.values() if v])
    return folders


def pick_files(wine_files: set[str], x_files: set[str], folders: dict, worker_paths: set[str]) -> dict:
    """{path in the bundle: path here} of the Wine and X server files the trace opened."""
    picked = {}
    for path in wine_files:
        if path in worker_paths:
            continue
        if any(select.under(path, folders[k]) for k in ("unix", "pe", "data") if folders[k]) or \
                (os.path.dirname(path) == folders["loader"] and _is_elf(path)):
            picked["wine/" + os.path.relpath(path, folders["root"])] = path
    for path in x_files:
        name = os.path.basename(path)
        if select.under(path, XKB_DIR):
            picked["xvfb/xkb/" + os.path.relpath(path, XKB_DIR)] = path
        elif name in ("Xvfb", "xkbcomp"):
            picked[f"xvfb/bin/{name}"] = path
    return picked


def strip_pe(path: Path) -> bool:
    """Drops a PE file's debug sections in place (Wine's own marker, in the DOS stub, stays)."""
    for tool in ("x86_64-w64-mingw32-strip", "strip"):
        if shutil.which(tool):
            done = subprocess.run([tool, "--strip-debug", str(path)], capture_output=True)
            if done.returncode == 0:
                return True
    return False


def compile_shim(out: Path) -> None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise BundleError("no C compiler (cc) for xkb_bindir.so: apt-get install gcc")
    done = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(out), str(HERE / "xkb_bindir.c")],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BundleError(f"building xkb_bindir.so failed: {done.stderr.strip()}")


# -- the whole bundle ---------------------------------------------------------------------------

def build(out_file: str, write_cases, *, with_ep: bool = False, log=print, keep: str | None = None) -> dict:
    """Makes the bundle; returns its summary (sizes, counts, time). `write_cases(folder)` writes
    the cases it replays (cli/bundle_cases.py: the findings and the corpus, which sit above the
    targets) and returns their counts."""
    started = time.monotonic()
    if keep:
        owned_entries(keep, "--keep")  # a folder of the user's is refused before any work
    stack = current_stack()
    if not stack.under_wine:
        raise BundleError("the bundle carries Wine: make it on Linux, where `topkspec directml setup` installed Wine")
    if stack.missing:
        raise BundleError("the directml target is not set up here: " + "; ".join(stack.missing))
    if getattr(stack, "bundle", None):
        raise BundleError("this stack runs from a bundle already: make a bundle from a Wine installed by setup")
    ort = None
    if with_ep:
        from topkspec.directml.client.ep_worker import ep_stack

        ort = ep_stack()
        if ort.missing:
            raise BundleError("--with-ep: the onnxruntime-directml target is not set up: " + "; ".join(ort.missing))
    with tempfile.TemporaryDirectory(prefix="topkspec-bundle-") as scratch:
        scratch = Path(scratch)
        root = scratch / "topkspec-directml"
        (root / "directml").mkdir(parents=True)
        shutil.copy(stack.dll, root / "directml" / "DirectML.dll")
        shutil.copy(stack.worker, root / "directml" / "topk_worker.exe")
        counts = write_cases(root / "cases")
        write_prefix_template(root / "prefix")
        log(f"cases: {counts['findings']} findings, {counts['corpus']} corpus cases; prefix template from {prefix_dir()}")

        # The traced run: Xvfb, then the worker replaying the findings and the corpus, then the EP.
        traces = scratch / "traces"
        traces.mkdir()
        prefix = trace.scratch_prefix(root / "prefix", scratch / "trace-home", Path(_pe_dir_of_system_wine()))
        xvfb, display = trace.start_traced_xvfb(traces / "xvfb.log", XKB_DIR)
        env = trace.traced_environment(stack, prefix, display)
        try:
            replayed = scratch / "replayed"
            shutil.copytree(root / "cases" / "corpus", replayed)
            for case in (root / "cases" / "findings").glob("*.json"):
                shutil.copy(case, replayed / case.name)
            output = trace.trace_replay(stack, env, replayed, traces / "worker.log", dll=stack.dll, worker=stack.worker)
            log("traced: " + output.splitlines()[0] + "; " + output.strip().splitlines()[-1])
            if ort is not None:
                log(f"traced: onnxruntime {trace.trace_ep(env, traces / 'ep.log')} on the DirectML EP")
        finally:
            trace.end_session(env)
            trace.stop(xvfb)
        summary = _lay_out(root, stack, ort, traces, log)
        if keep:
            keep_copy(root, keep)
        log(f"compressing (xz -9) into {out_file}")
        unpacked = _write_tarball(root, out_file)
    summary.update(unpacked_bytes=unpacked, compressed_bytes=os.path.getsize(out_file),
                   seconds=round(time.monotonic() - started, 1), file=str(out_file))
    return summary


def keep_copy(root: Path, keep: str) -> None:
    """Leave the unpacked bundle `root` in `keep` (--keep): it replaces what an earlier --keep
    left there (its manifest) and nothing else; a folder of the user's is refused (UsageError)."""
    owned_entries(keep, "--keep")
    staged = staging_folder(keep)
    try:
        shutil.copytree(root, staged, symlinks=True, dirs_exist_ok=True)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    replace_owned(keep, staged, "--keep")


def _pe_dir_of_system_wine() -> str:
    import glob

    for pattern in ("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows", "/usr/lib/wine/x86_64-windows",
                    "/usr/lib64/wine/x86_64-windows", "/opt/wine*/lib*/wine/x86_64-windows"):
        for found in glob.glob(pattern):
            if os.path.isfile(os.path.join(found, "ntdll.dll")):
                return found
    raise BundleError("Wine's x86_64-windows folder (with ntdll.dll) not found")


def _lay_out(root: Path, stack, ort, traces: Path, log) -> dict:
    """Copies what the trace found into the bundle, writes run, versions.txt and manifest.json."""
    wine_accesses, wine_argv = select.parse_strace(_lines(traces / "worker.log") + _lines(traces / "ep.log"))
    x_accesses, x_argv = select.parse_strace(_lines(traces / "xvfb.log"))
    wine_files = select.opened_files(wine_accesses, wine_argv)
    x_files = select.opened_files(x_accesses, x_argv, relative_roots={"xkbcomp": XKB_DIR})
    folders = wine_folders(wine_files)
    workers = {str(Path(p).resolve()) for p in (stack.dll, stack.worker)}
    picked = pick_files(wine_files, x_files, folders, workers)
    why = {path: "opened by the traced run" for path in picked}

    stripped = 0
    for inside, source in sorted(picked.items()):
        target = root / inside
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        if target.suffix.lower() in (".dll", ".exe", ".drv", ".sys") and not _is_elf(str(target)):
            stripped += strip_pe(target)

    # The libraries: what the carried programs need, and what Wine loads by name.
    programs = [source for inside, source in picked.items() if _is_elf(source)]
    loaded = {p for p in wine_files | x_files if select.is_shared_library(p)}
    driver = _driver_libraries(stack, wine_files)
    libs = select.library_closure(programs, loaded, driver_libraries=driver)
    extra = select.unaccounted(loaded - set(programs), libs, driver)
    for path in sorted(extra):
        name = os.path.basename(path)
        libs.carried[name], libs.why[name] = path, "loaded in the traced run"
    (root / "lib").mkdir()
    for name, source in sorted(libs.carried.items()):
        shutil.copy(source, root / "lib" / name)  # the file itself under its soname: no links
        why[f"lib/{name}"] = libs.why[name]
    log(f"carried: {len(picked)} Wine and X server files ({stripped} PE files stripped of debug sections), "
        f"{len(libs.carried)} libraries; left to the host: glibc and the Vulkan driver "
        f"({len(libs.left_to_host)} libraries)")
    if extra:
        log("  loaded in the run but named by no carried program (carried too): "
            + ", ".join(sorted(os.path.basename(p) for p in extra)))

    if ort is not None:
        same_directml = Path(ort.dll).read_bytes() == Path(stack.dll).read_bytes()
        folder = root / "directml" if same_directml else root / "ort"
        folder.mkdir(exist_ok=True)
        for source in (ort.ort_dll, ort.ort_dll.parent / "onnxruntime_providers_shared.dll", ort.worker,
                       *(() if same_directml else (ort.dll,))):
            shutil.copy(source, folder / Path(source).name)

    compile_shim(root / "xvfb" / "xkb_bindir.so")
    pe_dir = "wine/" + os.path.relpath(folders["pe"], folders["root"])
    in_loader_folder = {os.path.basename(source): inside for inside, source in picked.items()
                        if os.path.dirname(source) == folders["loader"]}
    loader = in_loader_folder.get("wine64") or in_loader_folder["wine"]
    server = in_loader_folder.get("wineserver64") or in_loader_folder.get("wineserver")
    if server is None:
        raise BundleError("the trace shows no wineserver started: was the Wine session fresh?")
    script = (HERE / "run.sh").read_text()
    script = (script.replace('"$here/wine/lib/wine/wine64"', f'"$here/{loader}"')
              .replace('"$here/wine/lib/wine/wineserver64"', f'"$here/{server}"')
              .replace('wine_lib="$here/wine/lib/x86_64-linux-gnu/wine"', f'wine_lib="$here/{os.path.dirname(pe_dir)}"'))
    (root / "run").write_text(script)
    os.chmod(root / "run", 0o755)

    versions = {"directml": stack.dll_file_version, "wine": stack.wine, "vkd3d": stack.vkd3d,
                "worker_source": source_digest("worker"), "made_on_mesa": stack.mesa}
    if ort is not None:
        versions.update(onnxruntime=pe_file_version(ort.ort_dll) or "?", ort_worker_source=source_digest("ort_worker"))
    (root / "versions.txt").write_text("".join(f"{k}: {v}\n" for k, v in versions.items()))
    (root / "README.txt").write_text(_readme())
    (root / "fonts.conf").write_text("<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    manifest = {"versions": versions, "glibc_needed": _glibc_needed(files),
                "files": {str(p.relative_to(root)): {"bytes": p.stat().st_size,
                                                     **({"why": why[str(p.relative_to(root))]}
                                                        if str(p.relative_to(root)) in why else {})}
                          for p in files}}
    text = json.dumps(manifest, indent=1, sort_keys=True)
    bundle_id = hashlib.sha256(text.encode()).hexdigest()[:12]
    (root / "manifest.json").write_text(text + "\n")
    (root / "bundle-id").write_text(bundle_id + "\n")
    return {"id": bundle_id, "files": len(files) + 2, "libraries": len(libs.carried),
            "wine_files": sum(1 for k in picked if k.startswith("wine/")),
            "top_level": sorted(p.name for p in root.iterdir()), "ep": ort is not None}


def _driver_libraries(stack, wine_files: set[str]) -> set[str]:
    """The Vulkan driver's libraries (its ICD library and what that needs): the host's, not carried.
    The drivers are the ICD files the run read (VK_ICD_FILENAMES, or the loader's icd.d folders)."""
    icd_files = {p for p in wine_files if p.endswith(".json") and "/icd.d/" in p}
    if stack.icd:
        icd_files.add(stack.icd)
    driver = set()
    env = dict(os.environ, LD_LIBRARY_PATH=stack.mesa_lib or "")
    for icd in icd_files:
        try:
            library = json.loads(Path(icd).read_text())["ICD"]["library_path"]
        except (OSError, ValueError, KeyError):
            continue
        if not library.startswith("/"):  # a bare name: the loaded file of that name
            library = next((p for p in wine_files if os.path.basename(p) == library), library)
        if os.path.isfile(library):
            driver |= {library, *select.ldd(library, env).values()}
    return driver


def _lines(path: Path) -> list[str]:
    return path.read_text(errors="replace").splitlines() if path.is_file() else []


def _glibc_needed(files) -> str:
    """The newest GLIBC_x.y symbol version a carried ELF file asks for (the host needs that glibc)."""
    import re

    newest = (0, 0)
    for path in files:
        if not _is_elf(str(path)):
            continue
        for match in re.findall(rb"GLIBC_2\.(\d+)", path.read_bytes()):
            newest = max(newest, (2, int(match)))
    return "%d.%d" % newest


def _readme() -> str:
    return (HERE / "readme.txt").read_text()


def _write_tarball(root: Path, out_file: str) -> int:
    """Writes root as FILE (.tar.xz, xz level 9 extreme); returns the unpacked size in bytes."""
    total = 0
    out_path = Path(out_file)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    os.close(handle)  # a name of its own: never a file of the user's beside FILE
    with lzma.open(tmp, "wb", preset=9 | lzma.PRESET_EXTREME) as compressed:
        with tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for path in sorted(root.rglob("*")):
                info = archive.gettarinfo(str(path), arcname=f"{root.name}/{path.relative_to(root)}")
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if path.is_file():
                    total += info.size
                    with open(path, "rb") as handle:
                        archive.addfile(info, handle)
                else:
                    archive.addfile(info)
    os.replace(tmp, out_path)
    return total

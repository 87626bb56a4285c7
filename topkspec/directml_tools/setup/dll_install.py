"""Step 4 of `topkspec directml setup`: DirectML.dll, from the onnxruntime-directml wheel that
carries the asked version (downloaded with pip), or a DLL the user names (--dll PATH)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

from topkspec.directml.windows import environment as env
from topkspec.directml_tools.setup.shell import Log, SetupError, _run


def _python_tags(preferred: str) -> list[str]:
    tags = [preferred, "3.11", "3.10", "3.9", "3.8", "3.12"]
    return list(dict.fromkeys(tags))


def download_wheel(ort_version: str, python: str, log: Log) -> Path:
    wheels = env.cache_dir() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"onnxruntime_directml-{ort_version}-*win_amd64.whl"))
    if found:
        log(f"wheel already downloaded: {found[0].name}")
        return found[0]
    last = ""
    for tag in _python_tags(python):
        out = _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform",
                    "win_amd64", "--python-version", tag, "-d", wheels, f"onnxruntime-directml=={ort_version}",
                    "--disable-pip-version-check", "-q"], log, check=False)
        found = sorted(wheels.glob(f"onnxruntime_directml-{ort_version}-*win_amd64.whl"))
        if out.returncode == 0 and found:
            return found[0]
        last = (out.stderr or out.stdout).strip().splitlines()[-1:] or [""]
        last = last[0]
    raise SetupError(f"pip could not download onnxruntime-directml=={ort_version} for win_amd64: {last}")


def extract_dll(wheel: Path, folder: Path) -> Path:
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.lower().endswith("/capi/directml.dll")]
        if not names:
            raise SetupError(f"{wheel.name} holds no onnxruntime/capi/DirectML.dll")
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / "DirectML.dll.tmp"
        tmp.write_bytes(archive.read(names[0]))
        os.replace(tmp, folder / "DirectML.dll")
    return folder / "DirectML.dll"


def install_dll(log: Log, *, dll: str | None = None, version: str | None = None) -> Path:
    """Puts DirectML.dll into the cache (from a path, or the wheel carrying `version`); returns it."""
    if dll:
        source = Path(dll).expanduser().resolve()
        if not source.is_file():
            raise SetupError(f"--dll {dll}: no such file")
        found = env.short_version(env.pe_file_version(source))
        if not found:
            raise SetupError(f"--dll {dll}: no FileVersion in it; is it DirectML.dll?")
        folder = env.cache_dir() / "dll" / found
        target = folder / "DirectML.dll"
        if target.is_file() and target.read_bytes() == source.read_bytes():
            log(f"DirectML {found} already in the cache: {target}")
        else:
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            (folder / "source.json").write_text(json.dumps({"path": str(source)}, indent=2) + "\n")
            log(f"copied {source} (DirectML {found}) to {target}")
        return target
    version = version or env.DEFAULT_DIRECTML
    if version not in env.DIRECTML_WHEELS:
        known = ", ".join(f"{v} (onnxruntime-directml {w[0]})" for v, w in env.DIRECTML_WHEELS.items())
        raise SetupError(f"--version {version}: no known onnxruntime-directml wheel carries it; known: {known}; "
                         f"or give --dll PATH")
    folder = env.cache_dir() / "dll" / version
    target = folder / "DirectML.dll"
    if target.is_file():
        log(f"DirectML {version} already in the cache: {target}")
        return target
    ort_version, python = env.DIRECTML_WHEELS[version]
    log(f"DirectML {version} comes with onnxruntime-directml {ort_version} (a Windows wheel; pip fetches it on "
        f"any platform)")
    wheel = download_wheel(ort_version, python, log)
    path = extract_dll(wheel, folder)
    found = env.short_version(env.pe_file_version(path))
    (folder / "source.json").write_text(json.dumps({"wheel": wheel.name, "onnxruntime-directml": ort_version,
                                                    "file_version": env.pe_file_version(path)}, indent=2) + "\n")
    if found != version:
        raise SetupError(f"{wheel.name} carries DirectML {found}, not {version}")
    log(f"extracted {path} (FileVersion {env.pe_file_version(path)})")
    return path


def step_dll(log: Log, *, dll=None, version=None) -> Path:
    log.section("DirectML.dll")
    path = install_dll(log, dll=dll, version=version)
    state = env.load_state()
    state["dll"] = str(path)
    env.save_state(state)
    log(f"in use from now on: DirectML {env.short_version(env.pe_file_version(path))} "
        f"(TOPKSPEC_DIRECTML_DLL overrides it for one run)")
    return path


# -- 5. the worker ----------------------------------------------------------------------------


# -- ONNX Runtime with the DirectML execution provider (the onnxruntime-directml target) -------

ORT_FILES = ("onnxruntime.dll", "onnxruntime_providers_shared.dll", "DirectML.dll")


def install_ort(log: Log, version: str = env.DEFAULT_ORT) -> Path:
    """Puts the Windows onnxruntime.dll (built with the DirectML EP) and the DirectML.dll it
    ships with into the cache, from the onnxruntime-directml wheel; returns onnxruntime.dll."""
    folder = env.cache_dir() / "ort" / version
    if all((folder / name).is_file() for name in ORT_FILES):
        log(f"ONNX Runtime {version} already in the cache: {folder}")
        return folder / "onnxruntime.dll"
    python = next((tag for ort, tag in env.DIRECTML_WHEELS.values() if ort == version), "3.11")
    wheel = download_wheel(version, python, log)
    with zipfile.ZipFile(wheel) as archive:
        by_name = {Path(n).name.lower(): n for n in archive.namelist() if "/capi/" in n}
        absent = [name for name in ORT_FILES if name.lower() not in by_name]
        if absent:
            raise SetupError(f"{wheel.name} holds no {', '.join(absent)} under onnxruntime/capi/ (wheels before "
                             f"1.20 link ONNX Runtime into the Python module): use onnxruntime-directml {env.DEFAULT_ORT}")
        folder.mkdir(parents=True, exist_ok=True)
        for name in ORT_FILES:
            tmp = folder / (name + ".tmp")
            tmp.write_bytes(archive.read(by_name[name.lower()]))
            os.replace(tmp, folder / name)
    (folder / "source.json").write_text(json.dumps({"wheel": wheel.name, "onnxruntime-directml": version},
                                                   indent=2) + "\n")
    log(f"extracted {', '.join(ORT_FILES)} from {wheel.name} into {folder}")
    return folder / "onnxruntime.dll"


def step_ort(log: Log) -> Path:
    log.section("ONNX Runtime with the DirectML execution provider (the Windows build, for onnxruntime-directml)")
    path = install_ort(log)
    state = env.load_state()
    state["ort"] = {"dll": str(path), "version": env.DEFAULT_ORT}
    env.save_state(state)
    log(f"onnxruntime.dll {path} (DirectML {env.short_version(env.pe_file_version(path.parent / 'DirectML.dll'))} "
        f"beside it)")
    return path

"""Where the DirectML target's pieces live, and what is missing. Standard library only.

Everything `topkspec directml setup` makes lives in one cache folder:

    $TOPKSPEC_DIRECTML_CACHE, else $XDG_CACHE_HOME/topkspec/directml, else ~/.cache/topkspec/directml
    (on Windows %LOCALAPPDATA%\\topkspec\\directml)

      state.json          what setup chose: the DirectML.dll in use, the Mesa it unpacked, the compiler
      dll/<version>/      DirectML.dll (+ source.json: the wheel or path it came from)
      worker/<hash>/      topk_worker.exe from worker.c, topk_ort_worker.exe from ort_worker.c (the hash
                          covers the source, worker_io.h and the compiler)
      ort/<version>/      onnxruntime.dll with the DirectML EP, its DirectML.dll (from the same wheel)
      wineprefix/         the 64-bit Wine prefix (Linux)
      mesa/<version>/     Mesa's lavapipe unpacked from Debian's archive, with its ICD file (Linux)
      wheels/             the onnxruntime-directml wheels DirectML.dll was taken from

      bundle/<id>/        a portable bundle unpacked by `setup --bundle FILE` (directml_tools.bundle.make)

With a bundle ($TOPKSPEC_DIRECTML_BUNDLE, an unpacked bundle's folder, else the one setup
unpacked), Wine, Xvfb, DirectML.dll and the workers are the bundle's, run through its `run`
script, on the host's Vulkan driver; no Wine install is needed.

Which DirectML.dll a run uses: $TOPKSPEC_DIRECTML_DLL (a path, or a version setup installed, such
as 1.13.1), else the bundle's, else the one setup chose last. $TOPKSPEC_DIRECTML_ADAPTER picks the adapter: `auto`
(hardware first, then software, then WARP), `warp`, or part of an adapter's name.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from topkspec.directml.worker.build import built_worker, missing_worker
from topkspec.directml.windows.bundle_stack import bundle_dir, bundle_program, bundle_versions
# The cache folder and state.json (cache.py); the setup steps read them here too (env.save_state()).
from topkspec.directml.cache import (IS_WINDOWS, WORKER_EXE, cache_dir, first_output_line,
                                             load_state, save_state)

# DirectML versions and the onnxruntime-directml wheels that carry them (read from each DLL's
# FileVersion). The Python tag is one the wheel exists for; the DLL is the same for every tag.
DIRECTML_WHEELS = {
    "1.15.4": ("1.24.4", "3.11"),
    "1.15.1": ("1.19.2", "3.11"),
    "1.13.1": ("1.17.0", "3.11"),
    "1.12.0": ("1.15.0", "3.11"),
    "1.9.0": ("1.12.0", "3.8"),
    "1.8.0": ("1.10.0", "3.8"),
    "1.5.1": ("1.9.0", "3.8"),
}
DEFAULT_DIRECTML = "1.15.4"
# The onnxruntime-directml wheel whose onnxruntime.dll (and DirectML.dll) the EP target runs.
DEFAULT_ORT = DIRECTML_WHEELS[DEFAULT_DIRECTML][0]
# Releases before 1.8 divide by the device's wave lane count, which vkd3d reports as 0.
LANE_WORKAROUND_BEFORE = (1, 8)


# -- DirectML.dll -----------------------------------------------------------------------------

def pe_file_version(path) -> str | None:
    """The FileVersion string of a Windows DLL's version resource ("1.15.4+241025-1615.1...."),
    read from the file without Windows; None when it has none."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    key = "FileVersion".encode("utf-16-le") + b"\0\0"
    at = data.find(key)
    while at >= 0:
        # A String block: wLength, wValueLength, wType, then the key; the value follows, 32-bit aligned.
        start = at - 6
        value_at = at + len(key)
        value_at += (-(value_at - start)) % 4
        end = data.find(b"\0\0", value_at)
        while end >= 0 and (end - value_at) % 2:
            end = data.find(b"\0\0", end + 1)
        if end > value_at:
            text = data[value_at:end].decode("utf-16-le", "replace").strip()
            if text and re.match(r"\d", text):
                return text
        at = data.find(key, at + 1)
    return None


def short_version(file_version: str | None) -> str | None:
    """"1.15.4" from "1.15.4+241025-1615.1.dml-1.15.fac7597" (or "1.15.4.0")."""
    if not file_version:
        return None
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", file_version)
    return ".".join(match.groups()) if match else file_version


def version_key(version: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", version or "")[:3])


def installed_dlls() -> dict:
    """{version: path} of the DirectML.dll files setup put in the cache."""
    found = {}
    for path in glob.glob(str(cache_dir() / "dll" / "*" / "DirectML.dll")):
        found[Path(path).parent.name] = Path(path)
    return dict(sorted(found.items(), key=lambda item: version_key(item[0])))


def chosen_dll() -> tuple[Path | None, str]:
    """(path of the DirectML.dll a run uses, how it was chosen); (None, why) when there is none."""
    given = os.environ.get("TOPKSPEC_DIRECTML_DLL")
    if given:
        if os.path.isfile(given):
            return Path(given).resolve(), "TOPKSPEC_DIRECTML_DLL"
        installed = installed_dlls()
        if given in installed:
            return installed[given], f"TOPKSPEC_DIRECTML_DLL={given}"
        return None, (f"TOPKSPEC_DIRECTML_DLL={given} is neither a file nor an installed version "
                      f"({', '.join(installed) or 'none installed'}): run `topkspec directml setup --version {given}`")
    state = load_state()
    if state.get("dll") and os.path.isfile(state["dll"]):
        return Path(state["dll"]), "setup"
    installed = installed_dlls()
    if installed:
        return list(installed.values())[-1], "newest installed"
    return None, "DirectML.dll not found: run `topkspec directml setup`"


def needs_lane_workaround(version: str | None) -> bool:
    return bool(version) and not IS_WINDOWS and version_key(version) < LANE_WORKAROUND_BEFORE


# -- Linux: Wine, Xvfb, Mesa ------------------------------------------------------------------

def wine_binary() -> str | None:
    for name in ("wine", "wine64"):
        path = shutil.which(name)
        if path:
            return path
    return None


def wine_version() -> str | None:
    wine = wine_binary()
    return first_output_line([wine, "--version"]) if wine else None


def prefix_dir() -> Path:
    return cache_dir() / "wineprefix"


def prefix_ready() -> bool:
    user = prefix_dir() / "user.reg"
    try:
        text = user.read_text(errors="replace")
    except OSError:
        return False
    return (prefix_dir() / "drive_c" / "windows" / "system32").is_dir() and '"renderer"="vulkan"' in text


def vkd3d_version() -> str | None:
    """The vkd3d inside Wine's d3d12.dll: the newest VKD3D_API_VERSION it names."""
    candidates = [prefix_dir() / "drive_c" / "windows" / "system32" / "d3d12.dll"]
    for pattern in ("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/d3d12.dll", "/usr/lib/wine/x86_64-windows/d3d12.dll",
                    "/usr/lib64/wine/x86_64-windows/d3d12.dll", "/opt/wine*/lib*/wine/x86_64-windows/d3d12.dll"):
        candidates += [Path(p) for p in glob.glob(pattern)]
    for path in candidates:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found = re.findall(rb"VKD3D_API_VERSION_1_(\d+)", data)
        if found:
            return f"1.{max(int(v) for v in found)}"
    return None


def mesa_info() -> dict:
    """{"version", "icd", "lib"} of the lavapipe the worker uses, or {} for the system's own."""
    mesa = load_state().get("mesa") or {}
    if mesa.get("icd") and os.path.isfile(mesa["icd"]):
        return mesa
    return {}


def system_lavapipe() -> str | None:
    for path in sorted(glob.glob("/usr/share/vulkan/icd.d/lvp_icd*.json")):
        return path
    return None


def system_mesa_version() -> str | None:
    if not shutil.which("dpkg-query"):
        return None
    out = first_output_line(["dpkg-query", "-W", "-f=${Version}", "mesa-vulkan-drivers"])
    return out if out and out != "?" and "no packages" not in out else None


def xvfb_binary() -> str | None:
    return shutil.which("Xvfb")


def to_windows_path(path) -> str:
    """A path as the worker sees it: itself on Windows, on Wine's Z: drive otherwise."""
    path = str(Path(path).resolve())
    return path if IS_WINDOWS else "Z:" + path.replace("/", "\\")


@dataclass
class DirectMLStack:
    """What the directml target runs on, and what is missing (empty when it can run)."""

    platform: str
    dll: Path | None = None
    dll_version: str | None = None
    dll_file_version: str | None = None
    dll_chosen_by: str = ""
    worker: Path | None = None
    wine: str | None = None
    vkd3d: str | None = None
    mesa: str | None = None
    icd: str | None = None
    mesa_lib: str | None = None
    missing: list = field(default_factory=list)
    bundle: Path | None = None  # an unpacked bundle the stack runs from (its Wine, Xvfb and workers)

    @property
    def under_wine(self) -> bool:
        return self.platform == "wine"

    def layers(self) -> str:
        """The layers beneath DirectML under Wine, in a few words."""
        text = f"{self.wine or 'Wine ?'}, vkd3d {self.vkd3d or '?'}"
        if self.bundle is not None:
            return f"{text}, from the bundle {self.bundle}, on the host's Vulkan driver"
        return f"{text}, Mesa {self.mesa or '?'}"

    def describe(self) -> str:
        """One line: DirectML version and, under Wine, the layers beneath it."""
        parts = [f"DirectML {self.dll_version or '?'}"]
        if self.under_wine:
            parts.append(self.layers() + ("" if self.bundle is not None else " lavapipe"))
        else:
            parts.append("Windows")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {"platform": self.platform, "dll": str(self.dll) if self.dll else None,
                "directml": self.dll_version, "directml_file_version": self.dll_file_version,
                "dll_chosen_by": self.dll_chosen_by, "worker": str(self.worker) if self.worker else None,
                "wine": self.wine, "vkd3d": self.vkd3d, "mesa": self.mesa, "missing": list(self.missing),
                "bundle": str(self.bundle) if self.bundle else None}


def platform_stack() -> DirectMLStack:
    """The layers beneath DirectML a run would use (Wine, Xvfb, the prefix, the Vulkan driver
    on Linux), with exactly what is missing; no DirectML.dll or worker yet."""
    import platform as platform_module

    machine = platform_module.machine().lower()
    if IS_WINDOWS:
        stack = DirectMLStack("windows")
    elif sys.platform.startswith("linux"):
        stack = DirectMLStack("wine")
    else:
        return DirectMLStack(sys.platform, missing=[f"DirectML runs on Windows, or under Wine on Linux; not on {sys.platform}"])
    if machine not in ("x86_64", "amd64"):
        stack.missing.append(f"DirectML.dll is x86-64 code; this machine is {machine}")
    bundle = bundle_dir() if stack.under_wine else None
    if bundle is not None:
        versions = bundle_versions(bundle)
        stack.bundle, stack.wine, stack.vkd3d = bundle, versions.get("wine"), versions.get("vkd3d")
        if not (bundle / "run").is_file() or not versions:
            where = "TOPKSPEC_DIRECTML_BUNDLE" if os.environ.get("TOPKSPEC_DIRECTML_BUNDLE") else "setup --bundle"
            stack.missing.append(f"{bundle} ({where}) is not an unpacked DirectML bundle (no run, no versions.txt)")
    elif stack.under_wine:
        stack.wine = wine_version()
        if stack.wine is None:
            stack.missing.insert(0, "Wine not found (Debian/Ubuntu: apt-get install wine wine64 libwine): "
                                    "run `topkspec directml setup` as root")
        if xvfb_binary() is None:
            stack.missing.append("Xvfb not found (apt-get install xvfb xauth): run `topkspec directml setup` as root")
        if not prefix_ready():
            stack.missing.append(f"the Wine prefix {prefix_dir()} is not set up: run `topkspec directml setup`")
        else:
            stack.vkd3d = vkd3d_version()
        mesa = mesa_info()
        if mesa:
            stack.mesa, stack.icd, stack.mesa_lib = mesa.get("version"), mesa["icd"], mesa.get("lib")
        elif system_lavapipe():
            stack.mesa, stack.icd = system_mesa_version(), system_lavapipe()
        else:
            stack.missing.append("no Vulkan driver (Mesa lavapipe with VK_EXT_descriptor_indexing): "
                                 "run `topkspec directml setup`")
    return stack


def ort_dll() -> Path | None:
    """The Windows onnxruntime.dll with the DirectML EP that setup installed: $TOPKSPEC_ORT_DLL
    (a path), the bundle's, or the one in the cache."""
    given = os.environ.get("TOPKSPEC_ORT_DLL")
    if given:
        return Path(given).resolve() if os.path.isfile(given) else None
    bundle = bundle_dir() if not IS_WINDOWS else None
    if bundle is not None:
        return next((p for p in (bundle / "directml" / "onnxruntime.dll", bundle / "ort" / "onnxruntime.dll")
                     if p.is_file()), None)
    path = (load_state().get("ort") or {}).get("dll")
    return Path(path) if path and os.path.isfile(path) else None


def current_stack() -> DirectMLStack:
    """The stack a run of the directml target would use, with exactly what is missing."""
    stack = platform_stack()
    if stack.platform not in ("windows", "wine"):
        return stack
    if stack.bundle is not None and not os.environ.get("TOPKSPEC_DIRECTML_DLL"):
        dll, how = stack.bundle / "directml" / "DirectML.dll", f"the bundle {stack.bundle}"
    else:
        dll, how = chosen_dll()
    if dll is None:
        stack.missing.append(how)
    else:
        stack.dll, stack.dll_chosen_by = dll, how
        stack.dll_file_version = pe_file_version(dll)
        stack.dll_version = short_version(stack.dll_file_version)
    if stack.bundle is not None:
        stack.worker, why = bundle_program(stack.bundle, WORKER_EXE, "worker_source", "worker")
        stack.worker = stack.worker or built_worker()
        if stack.worker is None:
            stack.missing.append(why)
        return stack
    stack.worker = built_worker()
    if stack.worker is None:
        stack.missing.append(missing_worker())
    return stack

"""`topkspec directml setup`: make the directml target available on this machine.

Idempotent: each step checks first and says what it found or did. Everything goes into the
cache folder (see directml.windows.environment); only the Debian packages go into the system.

Linux (Debian/Ubuntu, as root for the packages):
  1. Debian packages: wine, wine64, libwine, xvfb, xauth, libvulkan1, and mingw-w64 to build the worker;
  2. a lavapipe with VK_EXT_descriptor_indexing: on Debian 12 (bookworm), Mesa from bookworm-backports,
     fetched with apt-get download through a private source list and unpacked with dpkg -x (the
     system's Mesa is left alone); elsewhere the distribution's mesa-vulkan-drivers;
  3. a 64-bit Wine prefix with Direct3D's renderer set to Vulkan and no crash debugger;
  4. DirectML.dll, from the onnxruntime-directml wheel that carries the asked version (or --dll PATH);
  4b. (Linux) ONNX Runtime's Windows onnxruntime.dll with the DirectML EP, from the same wheel;
  5. the workers, built from worker.c and ort_worker.c with mingw-w64 (or Zig from PyPI);
  6. a check: the worker makes its device and computes DirectML's four worked examples exactly;
     (Linux) the ONNX Runtime worker computes a TopK on the DirectML EP exactly.
Windows: steps 4 to 6 (the compiler is Zig from PyPI unless mingw-w64's gcc is on PATH).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from topkspec.directml.windows import environment as env
from topkspec.directml.worker import build
from topkspec.directml_tools.setup.from_bundle import forget_bundle, setup_from_bundle
from topkspec.directml_tools.setup.dll_install import step_dll, step_ort
from topkspec.directml_tools.setup.check import step_check, step_check_ep
from topkspec.directml_tools.setup.shell import Log, SetupError, _run  # noqa: F401  (SetupError: the error of setup)

APT_PACKAGES = ["wine", "wine64", "libwine", "xvfb", "xauth", "libvulkan1",
                "gcc-mingw-w64-x86-64", "mingw-w64-x86-64-dev"]
BACKPORTS = "bookworm-backports"
MESA_PACKAGES = ["mesa-vulkan-drivers", "libdrm2", "libdrm-amdgpu1"]  # unpacked, not installed


# -- 1. Debian packages -----------------------------------------------------------------------

def os_release() -> dict:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return {}
    return {k: v.strip('"') for k, v in re.findall(r"^(\w+)=(.*)$", text, re.M)}


def is_debian_like() -> bool:
    release = os_release()
    return "debian" in (release.get("ID", "") + " " + release.get("ID_LIKE", "")).split() or \
        release.get("ID") == "ubuntu"


def package_installed(name: str) -> bool:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
    return out.returncode == 0 and "install ok installed" in out.stdout


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def apt_install(names, log: Log, *, updated: list) -> None:
    if not names:
        return
    if not is_root():
        raise SetupError(f"missing Debian packages {' '.join(names)}: as root, run "
                         f"`apt-get install -y --no-install-recommends {' '.join(names)}` (or run this setup as root)")
    env_vars = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if not updated:
        _run(["apt-get", "update"], log, env_vars=env_vars)
        updated.append(True)
    started = time.monotonic()
    _run(["apt-get", "install", "-y", "--no-install-recommends", *names], log, env_vars=env_vars)
    log(f"installed {' '.join(names)} in {time.monotonic() - started:.0f} s")


def step_packages(log: Log, updated: list) -> None:
    log.section("Debian packages")
    if not shutil.which("dpkg-query") or not is_debian_like():
        missing = [what for what, ok in (("Wine", env.wine_binary()), ("Xvfb", env.xvfb_binary())) if not ok]
        if missing:
            raise SetupError(f"{' and '.join(missing)} not found, and this is not Debian or Ubuntu: install "
                             f"Wine (64-bit), Xvfb and the Vulkan loader with your package manager, then run setup again")
        log("not Debian or Ubuntu: using the Wine and Xvfb on PATH")
        return
    missing = [name for name in APT_PACKAGES if not package_installed(name)]
    if not missing:
        log(f"all present: {' '.join(APT_PACKAGES)}")
        return
    apt_install(missing, log, updated=updated)


# -- 2. lavapipe ------------------------------------------------------------------------------

def _apt_options(root: Path) -> list[str]:
    return ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={root / 'sources'}",
            "-o", f"Dir::State::Lists={root / 'lists'}", "-o", f"Dir::Cache={root / 'cache'}",
            "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"]


def _deb_field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True).stdout.strip()


def _depends(field: str) -> list[str]:
    names = []
    for clause in field.split(","):
        first = clause.split("|")[0].strip()
        name = re.split(r"[\s(:]", first, 1)[0]
        if name:
            names.append(name)
    return names


def backports_lavapipe(log: Log, updated: list) -> dict:
    """Mesa's lavapipe from bookworm-backports, unpacked into the cache."""
    root = env.cache_dir() / "apt"
    for sub in ("sources", "lists/partial", "cache/archives/partial"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "sources" / "backports.sources").write_text(
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    _run(["apt-get", *_apt_options(root), "update"], log)
    debs = root / "debs"
    if debs.exists():
        shutil.rmtree(debs)
    debs.mkdir()
    out = subprocess.run(["apt-get", *_apt_options(root), "download", *MESA_PACKAGES], cwd=debs,
                         capture_output=True, text=True)
    log("$ apt-get download " + " ".join(MESA_PACKAGES) + "   (from " + BACKPORTS + ")")
    if out.returncode != 0:
        raise SetupError(f"apt-get download from {BACKPORTS} failed:\n{out.stderr.strip()[-800:]}")
    mesa_deb = next(debs.glob("mesa-vulkan-drivers_*.deb"))
    version = _deb_field(mesa_deb, "Version")
    target = env.cache_dir() / "mesa" / version
    icd = target / "lvp_icd.json"
    if not icd.is_file():
        if target.exists():
            shutil.rmtree(target)
        (target / "root").mkdir(parents=True)
        for deb in sorted(debs.glob("*.deb")):
            _run(["dpkg", "-x", deb, target / "root"], log)
        lib = next((target / "root").rglob("libvulkan_lvp.so"))
        icd.write_text(json.dumps({"file_format_version": "1.0.0",
                                   "ICD": {"library_path": str(lib), "api_version": "1.3.0"}}, indent=2) + "\n")
    lib_dir = str(next((target / "root").rglob("libvulkan_lvp.so")).parent)
    # What the unpacked libraries need from the system (the unpacked ones excepted).
    needed = [n for n in _depends(_deb_field(mesa_deb, "Depends")) if n not in MESA_PACKAGES]
    missing = [n for n in needed if not package_installed(n)]
    if missing:
        log(f"libraries lavapipe needs: {' '.join(missing)}")
        apt_install(missing, log, updated=updated)
    shutil.rmtree(debs, ignore_errors=True)
    return {"version": version, "icd": str(icd), "lib": lib_dir, "source": BACKPORTS}


def step_lavapipe(log: Log, updated: list) -> None:
    log.section("Vulkan driver: Mesa lavapipe with VK_EXT_descriptor_indexing")
    state = env.load_state()
    mesa = state.get("mesa") or {}
    if mesa.get("icd") and os.path.isfile(mesa["icd"]):
        log(f"already there: Mesa {mesa.get('version')} ({mesa['icd']})")
        return
    release = os_release()
    if release.get("VERSION_CODENAME") == "bookworm" and shutil.which("apt-get"):
        log("Debian 12's own Mesa (22.3) lacks VK_EXT_descriptor_indexing, which vkd3d needs: "
            f"taking mesa-vulkan-drivers from {BACKPORTS}, unpacked into the cache")
        mesa = backports_lavapipe(log, updated)
    else:
        if is_debian_like() and not package_installed("mesa-vulkan-drivers"):
            apt_install(["mesa-vulkan-drivers"], log, updated=updated)
        icd = env.system_lavapipe()
        if not icd:
            raise SetupError("no lavapipe ICD (/usr/share/vulkan/icd.d/lvp_icd*.json): install Mesa's Vulkan drivers")
        mesa = {"version": env.system_mesa_version() or "system", "icd": icd, "lib": None, "source": "system"}
        log(f"using the system's lavapipe: Mesa {mesa['version']} ({icd}); the check at the end tells whether "
            f"it has what vkd3d needs")
    state = env.load_state()
    state["mesa"] = mesa
    env.save_state(state)
    log(f"lavapipe: Mesa {mesa['version']} ({mesa['icd']})")


# -- 3. the Wine prefix -----------------------------------------------------------------------

def wine_env() -> dict:
    return dict(os.environ, WINEPREFIX=str(env.prefix_dir()), WINEARCH="win64", WINEDEBUG="-all",
                WINEDLLOVERRIDES="mscoree,mshtml=")


def step_prefix(log: Log) -> None:
    log.section(f"Wine prefix (64-bit): {env.prefix_dir()}")
    if env.prefix_ready():
        log("already set up (renderer=vulkan)")
        return
    wine = env.wine_binary()
    if wine is None:
        raise SetupError("Wine not found: install it (Debian/Ubuntu: apt-get install wine wine64 libwine)")
    env.prefix_dir().parent.mkdir(parents=True, exist_ok=True)
    variables = wine_env()
    started = time.monotonic()
    _run([shutil.which("wineboot") or wine, *([] if shutil.which("wineboot") else ["wineboot"]), "-i"], log,
         env_vars=variables, timeout=900)
    _run([wine, "reg", "add", r"HKCU\Software\Wine\Direct3D", "/v", "renderer", "/t", "REG_SZ", "/d", "vulkan",
          "/f"], log, env_vars=variables, timeout=300)
    # No crash debugger: a crashing worker must end, not wait in winedbg.
    _run([wine, "reg", "delete", r"HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug", "/v", "Debugger",
          "/f"], log, env_vars=variables, check=False, timeout=300)
    server = shutil.which("wineserver")
    if server:
        _run([server, "-w"], log, env_vars=variables, check=False, timeout=300)
    if not env.prefix_ready():
        raise SetupError(f"the Wine prefix {env.prefix_dir()} was not created (see the output above)")
    log(f"created in {time.monotonic() - started:.0f} s")


def step_worker(log: Log, updated: list) -> Path:
    log.section("the workers (worker.c for DirectML.dll, ort_worker.c for ONNX Runtime; built from source)")
    command, name = build.find_compiler()
    if command is None:
        log("no mingw-w64 gcc: installing Zig from PyPI (its first Windows build takes a few minutes)")
        _run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q", "ziglang"], log)
    built = [build.build_worker(log, program) for program in build.PROGRAMS]
    _prune_workers(built, log)
    return built[0]


def _prune_workers(keep: list, log: Log) -> None:
    for old in (env.cache_dir() / "worker").glob("*"):
        if old.is_dir() and old not in {exe.parent for exe in keep}:
            shutil.rmtree(old, ignore_errors=True)
            log(f"removed an older build: {old}")


# -- all of it --------------------------------------------------------------------------------

def setup(*, dll: str | None = None, version: str | None = None, adapter: str | None = None,
          bundle: str | None = None, stream=None) -> int:
    """Runs every step for this platform; 0 when the target is available at the end, else 1."""
    log = Log(stream)
    log.stream.write(f"topkspec directml setup: cache {env.cache_dir()}\n")
    if bundle is not None:
        return setup_from_bundle(log, bundle, adapter)
    updated: list = []
    previous = env.load_state().get("dll")
    installed = None
    try:
        if env.IS_WINDOWS:
            pass
        elif sys.platform.startswith("linux"):
            step_packages(log, updated)
            step_lavapipe(log, updated)
            step_prefix(log)
        else:
            raise SetupError(f"DirectML runs on Windows, or under Wine on Linux; not on {sys.platform}")
        installed = step_dll(log, dll=dll, version=version)
        if not env.IS_WINDOWS:  # on Windows the onnxruntime-directml wheel itself is the EP target
            step_ort(log)
        step_worker(log, updated)
        forget_bundle()
        step_check(log, adapter)
        if not env.IS_WINDOWS:
            step_check_ep(log)
    except SetupError as exc:
        log.stream.write(f"topkspec directml setup: failed: {exc}\n")
        if installed is not None and previous and os.path.isfile(previous) and previous != str(installed):
            state = env.load_state()
            state["dll"] = previous
            env.save_state(state)
            log.stream.write(f"topkspec directml setup: {installed} stays in the cache (`topkspec directml compare "
                             f"--versions` can still ask its CreateOperator), but the DirectML.dll in use is again "
                             f"{previous}\n")
        return 1
    log.stream.write(f"topkspec directml setup: done in {time.monotonic() - log.started:.0f} s; "
                     f"`topkspec targets` lists directml (and off Windows onnxruntime-directml) "
                     f"as available\n")
    return 0

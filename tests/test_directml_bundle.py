"""The portable DirectML bundle's parts that need no Wine: reading a trace, choosing the
libraries, the run script's arguments, the stack a bundle gives the targets, the CLI's errors.
The bundle commands of docs/directml.md are run by the end-to-end test below.

Making a bundle traces a real run and compresses ~85 MiB (about 2 minutes here), so the one
end-to-end test (build, then the clean-root check) runs only with TOPKSPEC_BUNDLE_E2E=1."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from topkspec.directml_tools.bundle import select
from topkspec.directml.windows import environment
from topkspec.directml.worker.build import source_digest
from topkspec.directml.client.worker_process import worker_command, worker_environment, xvfb_command

PACKAGE = Path(select.__file__).resolve().parent  # the bundle room: run.sh, readme.txt
REPOSITORY = PACKAGE.parents[2]

TRACE = """\
100 execve("/usr/lib/wine/wine64", ["/usr/lib/wine/wine64", "C:\\\\windows\\\\system32\\\\wineboot.exe"], 0x1 /* 4 vars */) = 0
100 openat(AT_FDCWD, "{unix}/ntdll.so", O_RDONLY|O_CLOEXEC) = 3
100 openat(AT_FDCWD, "/nowhere/libmissing.so.1", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)
101 openat(AT_FDCWD, "{pe}/kernel32.dll", O_RDONLY <unfinished ...>
102 execve("/usr/bin/xkbcomp", ["/usr/bin/xkbcomp", "-R/usr/share/X11/xkb"], 0x2 /* 3 vars */) = 0
101 <... openat resumed>) = 4
102 openat(AT_FDCWD, "./compat/basic", O_RDONLY) = 5
103 openat(AT_FDCWD, "./relative/elsewhere", O_RDONLY) = 6
104 stat("{gone}", <unfinished ...>
104 <... stat resumed>0x7ffc) = -1 ENOENT (No such file or directory)
+++ exited with 0 +++
"""


def test_a_trace_gives_the_files_opened_and_each_process_program(tmp_path):
    unix, pe, xkb = tmp_path / "unix", tmp_path / "pe", tmp_path / "xkb" / "compat"
    for folder in (unix, pe, xkb):
        folder.mkdir(parents=True)
    for path in (unix / "ntdll.so", pe / "kernel32.dll", xkb / "basic"):
        path.write_bytes(b"x")
    log = TRACE.format(unix=unix, pe=pe, gone=tmp_path / "gone").splitlines()
    accesses, argv = select.parse_strace(log)
    assert argv[100][0] == "/usr/lib/wine/wine64" and argv[102][0] == "/usr/bin/xkbcomp"
    paths = [a.path for a in accesses]
    assert str(pe / "kernel32.dll") in paths  # an unfinished call that succeeded when resumed
    assert "/nowhere/libmissing.so.1" not in paths and str(tmp_path / "gone") not in paths  # failed calls
    files = select.opened_files(accesses, argv, relative_roots={"xkbcomp": str(tmp_path / "xkb")})
    # Relative paths count only for a program whose root is known (xkbcomp reads under its -R folder).
    ours = {f for f in files if f.startswith(str(tmp_path))}  # the programs' own paths exist only where installed
    assert ours == {str(unix / "ntdll.so"), str(pe / "kernel32.dll"), str(xkb / "basic")}


def _library(folder: Path, name: str, names_inside: bytes = b"") -> str:
    path = folder / name
    path.write_bytes(b"\x7fELF" + names_inside)
    return str(path)


def test_the_libraries_carried_are_the_programs_needs_and_what_they_load_by_name(tmp_path):
    winex11 = _library(tmp_path, "winex11.so", b"\0libX11.so.6\0libXnotloaded.so.1\0")
    x11, xcb, libc = (_library(tmp_path, n) for n in ("libX11.so.6", "libxcb.so.1", "libc.so.6"))
    lvp, llvm = _library(tmp_path, "libvulkan_lvp.so"), _library(tmp_path, "libLLVM-15.so.1")
    needs = {winex11: {"libc.so.6": libc}, x11: {"libxcb.so.1": xcb, "libc.so.6": libc}, xcb: {"libc.so.6": libc},
             lvp: {"libLLVM-15.so.1": llvm, "libX11.so.6": x11}}
    loaded = {x11, xcb, libc, lvp, llvm}  # what the traced run opened (the driver's too)
    libs = select.library_closure([winex11], loaded, driver_libraries={lvp, llvm, x11}, resolve=lambda p: needs.get(p, {}))
    # libX11 is loaded by name (dlopen) by winex11.so; libxcb comes with it; glibc stays the host's.
    assert libs.carried == {"libX11.so.6": x11, "libxcb.so.1": xcb}
    assert libs.why["libX11.so.6"] == "loaded by name by winex11.so"
    assert "libc.so.6" in libs.left_to_host
    # The driver's own (libLLVM) stay with the host, though the run loaded them; libX11, which
    # Wine needs too, is carried.
    assert {"libvulkan_lvp.so", "libLLVM-15.so.1"} <= libs.left_to_host and "libX11.so.6" not in libs.left_to_host
    # A library the run loaded that nothing carried names is reported, to be carried too.
    stray = _library(tmp_path, "libstray.so.2")
    assert select.unaccounted(loaded | {stray}, libs, {lvp, llvm}) == {stray}


def test_a_planted_glibc_dependency_is_never_carried(tmp_path):
    program = _library(tmp_path, "ntdll.so")
    libm = _library(tmp_path, "libm.so.6")
    libs = select.library_closure([program], {libm}, resolve=lambda p: {"libm.so.6": libm} if p == program else {})
    assert libs.carried == {} and "libm.so.6" in libs.left_to_host


def test_a_findings_expectation_names_the_input_and_the_top_non_nan_values():
    from topkspec.cli.bundle_cases import finding_expectation

    case = json.loads((REPOSITORY / "findings/directml-nan-hides-larger-values/case.json").read_text())
    text = finding_expectation(case)
    assert "float32[3] = [1, nan, 0.5] (NaN at [1]), K = 1, largest first" in text
    assert "the input's top non-NaN values (1)" in text


# -- the run script ----------------------------------------------------------------------------

def _run_script(folder: Path, *args):
    (folder / "run").write_text((PACKAGE / "run.sh").read_text())
    os.chmod(folder / "run", 0o755)
    return subprocess.run(["sh", str(folder / "run"), *args], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("args", [(), ("bogus",), ("findings", "extra"), ("corpus", "a", "b"), ("info", "x"),
                                  ("wine",)])
def test_the_run_script_answers_bad_usage_with_its_usage_and_exit_2(tmp_path, args):
    done = _run_script(tmp_path, *args)
    assert done.returncode == 2, done
    assert done.stderr.startswith("usage: ") and "findings | corpus [DIR] | info" in done.stderr
    assert not (tmp_path / "lib").exists()  # nothing was set up


def test_the_run_script_names_a_missing_corpus_folder(tmp_path):
    done = _run_script(tmp_path, "corpus", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and done.stderr.strip() == f"run corpus: no folder {tmp_path / 'nowhere'}"


def test_the_run_script_is_posix_sh():
    assert subprocess.run(["sh", "-n", str(PACKAGE / "run.sh")]).returncode == 0


# -- the stack a bundle gives the targets -----------------------------------------------------

def _fake_bundle(folder: Path, worker_source: str) -> Path:
    (folder / "directml").mkdir(parents=True)
    (folder / "run").write_text("#!/bin/sh\n")
    (folder / "directml" / "DirectML.dll").write_bytes(b"MZ")
    (folder / "directml" / "topk_worker.exe").write_bytes(b"MZ")
    (folder / "versions.txt").write_text(f"directml: 1.15.4\nwine: wine-8.0 (Debian 8.0~repack-4)\nvkd3d: 1.6\n"
                                         f"worker_source: {worker_source}\n")
    return folder


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a bundle runs on Linux")
def test_a_bundle_is_the_stack_its_wine_xvfb_worker_and_dll(tmp_path, monkeypatch):
    bundle = _fake_bundle(tmp_path / "b", source_digest("worker"))
    monkeypatch.setenv("TOPKSPEC_DIRECTML_BUNDLE", str(bundle))
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TOPKSPEC_DIRECTML_DLL", raising=False)
    stack = environment.current_stack()
    assert not stack.missing, stack.missing
    assert stack.bundle == bundle.resolve() and stack.wine == "wine-8.0 (Debian 8.0~repack-4)" and stack.vkd3d == "1.6"
    assert stack.dll == bundle.resolve() / "directml" / "DirectML.dll"
    assert stack.worker == bundle.resolve() / "directml" / "topk_worker.exe"
    assert "from the bundle" in stack.describe() and "Mesa" not in stack.describe()
    assert worker_command(stack)[:2] == [str(bundle.resolve() / "run"), "wine"]
    assert xvfb_command(stack) == [str(bundle.resolve() / "run"), "xvfb"]
    env = worker_environment(stack, ":5")
    # The run script makes the bundle's own prefix; the cache's prefix and lavapipe are not passed on.
    assert env["DISPLAY"] == ":5" and env.get("WINEPREFIX") != str(environment.prefix_dir())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a bundle runs on Linux")
def test_a_bundle_whose_worker_came_from_another_source_is_refused(tmp_path, monkeypatch):
    bundle = _fake_bundle(tmp_path / "b", "0000000000000000")
    monkeypatch.setenv("TOPKSPEC_DIRECTML_BUNDLE", str(bundle))
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path / "cache"))  # no worker built here either
    stack = environment.current_stack()
    assert stack.worker is None
    assert any("built from another worker.c" in why and "make the bundle again" in why for why in stack.missing)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a bundle runs on Linux")
def test_a_folder_that_is_no_bundle_is_named_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPKSPEC_DIRECTML_BUNDLE", str(tmp_path))
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path / "cache"))
    stack = environment.platform_stack()
    assert any("is not an unpacked DirectML bundle" in why for why in stack.missing)


# -- the command line --------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["bundle", "out.zip"], "out.zip: the bundle is a .tar.xz file (name it so)"),
    (["bundle-check", "nowhere.tar.xz"], "nowhere.tar.xz: no such bundle file"),
    (["setup", "--bundle", "nowhere.tar.xz"], "nowhere.tar.xz: no such bundle file"),
])
def test_bad_bundle_arguments_are_one_line_errors_with_exit_2(tmp_path, args, message):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPOSITORY), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-m", "topkspec", "directml", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(os.environ.get("TOPKSPEC_BUNDLE_E2E") != "1",
                    reason="makes and checks a real bundle (about 3 minutes, root, Wine set up): TOPKSPEC_BUNDLE_E2E=1")
def test_a_bundle_made_here_runs_in_a_clean_root_and_under_the_suite(tmp_path):
    out = tmp_path / "bundle.tar.xz"
    done = subprocess.run([sys.executable, "-m", "topkspec", "directml", "bundle", str(out), "--check"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert out.stat().st_size < 55 * 1024 * 1024
    assert "=> the finding" in done.stdout and "0 not as stored" in done.stdout
    assert "passed: the findings and the corpus in the clean root" in done.stdout

"""Running the docs' blocks as a new user would: the shell and install they have, commands
several pages share run once, and reading what a page says about the output."""
import importlib.util
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tomllib

import pytest

from docs_blocks import ROOT, Block, all_blocks


BLOCKS = all_blocks()


WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


TIMEOUT = 600


def env() -> dict:
    """The tests' own install, with this checkout first on the path, as a new user's shell has it."""
    out = dict(os.environ)
    out["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), out.get("PATH", "")])
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), out.get("PYTHONPATH", "")) if p)
    out.pop("TOPKSPEC_DIRECTML_DLL", None)
    return out


class Done:
    def __init__(self, command: str, cwd: pathlib.Path, proc: subprocess.CompletedProcess):
        self.command, self.cwd, self.code = command, cwd, proc.returncode
        self.out, self.err = proc.stdout, proc.stderr

    def __str__(self):
        return f"$ {self.command}  (in {self.cwd}, exit {self.code})\n{self.out[-4000:]}{self.err[-4000:]}"


def sh(command: str, cwd: pathlib.Path, timeout: int = TIMEOUT) -> Done:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return Done(command, cwd, proc)


class Runs:
    """Commands several pages share (the quick start is on three) run once a session, each in
    a folder of its own that later checks read from."""

    def __init__(self, base: pathlib.Path):
        self.base, self.done = base, {}

    def once(self, command: str) -> Done:
        if command not in self.done:
            cwd = self.base / f"run{len(self.done)}"
            cwd.mkdir()
            self.done[command] = sh(command, cwd)
        return self.done[command]


def extras() -> set:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project.get("optional-dependencies", {}))


def install_checked(command: str) -> bool:
    """A `pip install -e` of this project is checked, not run: the tests run in that install.
    True when `command` is one (and its extras exist)."""
    words = shlex.split(command)
    if words[:2] != ["pip", "install"] or "-e" not in words:
        return False
    target = words[words.index("-e") + 1]
    wanted = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
    assert wanted, f"`{command}`: installs {target!r}, not this project"
    missing = set(filter(None, (wanted.group(1) or "").split(","))) - extras()
    assert not missing, f"`{command}`: pyproject.toml has no extra {sorted(missing)}"
    return True


def runnable(command: str) -> str:
    """The part of `pip install -e . && CMD` that runs; the install part is checked."""
    parts = command.split(" && ")
    while parts and install_checked(parts[0]):
        parts.pop(0)
    return " && ".join(parts)


def files_of(page: str) -> list[Block]:
    return [b for b in BLOCKS if b.page == page and b.lang == "python" and b.file_name]


def write_files(page: str, where: pathlib.Path) -> None:
    for block in files_of(page):
        (where / block.file_name).parent.mkdir(parents=True, exist_ok=True)
        (where / block.file_name).write_text(block.text)


def load_file(path: pathlib.Path):
    loader = importlib.util.spec_from_file_location(f"docs_{path.stem}", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def number(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word.lower()]


def claim(pattern: str, text: str, where: str):
    found = re.search(pattern, text, re.S)
    assert found, f"{where}: the page no longer says /{pattern}/ (update the check with the page):\n{text}"
    return found


def needs_directml():
    from directml_needed import need
    from topkspec.targets.registry import get_target
    need(get_target("directml")).close()


def needs_targets(block: Block, command: str) -> list[str]:
    """The targets `--targets` names, or a skip naming the first that cannot run here."""
    from topkspec.targets.registry import get_target
    names = claim(r"--targets ([\w,-]+)", command, block.where).group(1).split(",")
    for name in names:
        target = get_target(name)
        ok, why = target.available()
        target.close()
        if not ok:
            pytest.skip(f"{block.where} needs the {name} target: {why}")
    return names


def same_version(block: Block, claims: str, package: str, pattern: str) -> None:
    """The page's figures are for the version it names: skip comparing them under another."""
    from importlib.metadata import version
    named = claim(pattern, claims, block.where).group(1)
    if version(package) != named:
        pytest.skip(f"{block.where} gives figures for {package} {named}; {version(package)} is installed")


def assert_code(done: Done, code: int, where: str) -> None:
    assert done.code == code, f"{where}: the page says exit {code}\n{done}"


def descriptors(page: str) -> list[str]:
    return [b.text for b in BLOCKS if b.page == page and b.lang == "json"]


FAILURE = re.compile(r"^  \[(?P<cls>[^\]]+)\] (?P<rule>\S+) \((?P<status>[^)]+)\): (?P<case>[^\n]*?)(?: -> \S+)?\n"
                     r"(?:\s+what:[^\n]*\n)?(?:\s+input:\s+(?P<input>[^\n]*)\n)?", re.M)


def failures(done: Done) -> list[dict]:
    """The summary's failure lines: class, rule, the case and (without --report-dir) the input."""
    return [m.groupdict() for m in FAILURE.finditer(done.out)]


def run_plain(block: Block, where: pathlib.Path) -> None:
    write_files(block.page, where)
    if block.lang == "json":
        json.loads(block.text)
    elif block.lang == "python":
        if block.file_name:  # a file the page asks you to save: it must at least import
            module = block.file_name[:-3].replace("/", ".")
            done = sh(f"{shlex.quote(sys.executable)} -c 'import {module}'", where)
        else:
            (where / "block.py").write_text(block.text)
            done = sh(f"{shlex.quote(sys.executable)} block.py", where)
        assert_code(done, 0, block.where)
    else:
        for command in block.commands():
            command = runnable(command)
            if command:
                assert_code(sh(command, where), 0, block.where)

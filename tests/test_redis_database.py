"""Campaigns sharing their failures through a real Redis server, as campaigns on several
machines do (docs/ci.md, Several machines): each test starts its own `redis-server` on a free
port of 127.0.0.1 (nothing written to disk, stopped at the end) and runs `topkspec fuzz` in
processes of their own against a planted bug. Where there is no `redis-server` they skip.
"""
import json
import os
import pathlib
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from slow import slow

from docs_blocks import ROOT, blocks_of

try:
    import redis
except ImportError:  # only the tests that start a server need it
    redis = None

SERVER = shutil.which("redis-server")
NO_SERVER = ("needs Debian's redis-server on PATH (apt-get install redis-server; PyPI has no build of it "
             "for this Python): .ci/run installs it")
PLANTED = "tests/planted_bugs.py:ignores_direction"  # found by the valid group in its first 40 examples
PREFIX = b"hypothesis-example:"  # Hypothesis's RedisExampleDatabase: one set of values per key
SLOW = os.environ.get("TOPKSPEC_SLOW_TESTS") == "1"  # .ci/run sets it


def need_server() -> None:
    if SERVER is None and SLOW:  # .ci/run installs it: there a missing server is a fault
        pytest.fail(NO_SERVER)
    if SERVER is None:
        pytest.skip(NO_SERVER)
    if redis is None:
        pytest.skip("needs the redis package: pip install 'topkspec[all]'")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A redis-server of this test's own on 127.0.0.1, as `argv` (a command line naming
    --port PORT) starts it, on a free port, with nothing saved to disk."""

    def __init__(self, argv: list[str], folder: pathlib.Path, password: str | None = None):
        for _ in range(3):  # another process may take the free port before the server does
            self.port = _free_port()
            line = [SERVER if arg == "redis-server" else str(self.port) if arg == "PORT" else arg for arg in argv]
            self.proc = subprocess.Popen([*line, "--save", "", "--appendonly", "no", "--daemonize", "no",
                                          "--dir", str(folder)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.client = redis.Redis(host="127.0.0.1", port=self.port, password=password)
            if self._answers():
                return
            self.stop()
        raise AssertionError(f"redis-server did not start: {self.proc.stdout.read().decode(errors='replace')}")

    def _answers(self) -> bool:
        deadline = time.monotonic() + 10
        while self.proc.poll() is None and time.monotonic() < deadline:
            try:
                return self.client.ping()
            except redis.ConnectionError:
                time.sleep(0.05)
        return False

    def saved(self) -> dict:
        """{key: set of values}: everything Hypothesis saved on the server."""
        return {key: self.client.smembers(key) for key in self.client.scan_iter(match=PREFIX + b"*")}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def server(tmp_path):
    need_server()
    started = Server(["redis-server", "--bind", "127.0.0.1", "--port", "PORT"], tmp_path)
    yield started
    started.stop()


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def fuzz_line(url: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "topkspec", "fuzz", "--target", PLANTED, "--database", url,
            "--max-examples", "40", "--quiet", *options]


def run(line: list[str], cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(line, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def replay_note(out: str) -> str:
    notes = [line for line in out.splitlines() if line.startswith("note: replayed first from the example database")]
    assert notes, f"no note of failures replayed from the database in:\n{out}"
    return notes[0]


def examples_to_replay(note: str) -> int:
    """The examples the valid group took to replay its saved failures (from the note)."""
    return int(note.split("valid ", 1)[1].split("(in its first ", 1)[1].split(" ", 1)[0])


def all_values(saved: dict) -> set:
    return {(key.split(b".")[0], value) for key, values in saved.items() for value in values}


# -- Several machines, one database (docs/ci.md) ------------------------------------------------

def several_machines_block(workers: bool):
    """docs/ci.md's block for several machines (with --workers or without): (server line,
    campaign line), as argument lists."""
    for block in blocks_of(ROOT / "docs" / "ci.md"):
        if "test_redis_database.py" in block.marks.get("checked-by", ""):
            lines = [shlex.split(command) for command in block.commands()]
            if any("--workers" in line for line in lines) == workers:
                assert [line[0] for line in lines] == ["redis-server", "topkspec"], lines
                return lines
    raise AssertionError(f"docs/ci.md has no block for several machines {'with' if workers else 'without'} --workers")


PASSWORD = "not-a-secret"


def machines_from_docs(lines, tmp_path):
    """The docs' server, started here (its address 127.0.0.1, its port a free one), and its
    campaign line aimed at it and at the planted bug, with a budget a test can afford."""
    server_line, campaign = lines
    argv = [{"10.0.0.5": "127.0.0.1", "6379": "PORT", "$TOPKSPEC_REDIS_PASSWORD": PASSWORD}.get(arg, arg)
            for arg in server_line]
    started = Server(argv, tmp_path, password=PASSWORD)
    campaign = [arg.replace("$TOPKSPEC_REDIS_PASSWORD", PASSWORD).replace("10.0.0.5:6379", f"127.0.0.1:{started.port}")
                for arg in campaign]
    campaign = [str(ROOT / PLANTED) if arg == "onnxruntime" else arg for arg in campaign]
    assert any(arg.startswith("redis://") and f":{started.port}/" in arg for arg in campaign), campaign
    return started, [sys.executable, "-m", "topkspec", *campaign[1:], "--quiet"]


def machine(tmp_path, name: str) -> pathlib.Path:
    """The folder a machine's campaign runs in (its reports go there)."""
    (tmp_path / name).mkdir()
    return tmp_path / name


@slow
def test_the_second_machine_replays_and_reports_the_first_ones_failures_as_docs_ci_shows(tmp_path):
    need_server()
    started, campaign = machines_from_docs(several_machines_block(workers=False), tmp_path)
    try:
        # seeded: a seeded campaign saves what it finds too (and its valid group finds the bug;
        # unseeded, a later group may, and the second campaign's valid group find it first)
        first = run([*campaign, "--max-examples", "40", "--seed", "0"], cwd=machine(tmp_path, "first"))
        assert first.returncode == 1, f"the first machine's campaign: exit {first.returncode}\n{first.stdout[-3000:]}"
        assert "out.values.select" in first.stdout, first.stdout[-3000:]
        saved = started.saved()
        assert saved, "the first campaign saved nothing on the Redis server"
        second = run([*campaign, "--max-examples", "40", "--seed", "7"], cwd=machine(tmp_path, "second"))
        assert second.returncode == 1, f"the second machine's campaign: exit {second.returncode}\n{second.stdout[-3000:]}"
        note = replay_note(second.stdout)
        assert "out.values.select" in note, note
        assert examples_to_replay(note) <= 10, f"replayed in {examples_to_replay(note)} examples, expected few: {note}"
        assert "[wrong result] out.values.select" in second.stdout, second.stdout[-3000:]
        reports = tmp_path / "second" / "reports"
        assert list(reports.glob("*-out-values-select-*/repro.py")), \
            f"the second campaign wrote no report: {sorted(p.name for p in reports.glob('*'))}"
    finally:
        started.stop()


@pytest.mark.skipif(not SLOW, reason="slow (two --workers campaigns, about a minute): .ci/run runs it "
                                     "(TOPKSPEC_SLOW_TESTS=1)")
def test_machines_running_workers_share_the_database_as_docs_ci_shows(tmp_path):
    need_server()
    started, campaign = machines_from_docs(several_machines_block(workers=True), tmp_path)
    try:
        first = run([*campaign, "--max-examples", "40"], cwd=machine(tmp_path, "first"))
        assert first.returncode == 1, f"the first machine's campaign: exit {first.returncode}\n{first.stdout[-3000:]}"
        saved = started.saved()
        assert saved, "the first campaign's workers saved nothing on the Redis server"
        # one example per group: the saved failure replays whatever the budget
        second = run([*campaign, "--max-examples", "5"], cwd=machine(tmp_path, "second"))
        assert second.returncode == 1, f"the second machine's campaign: exit {second.returncode}\n{second.stdout[-3000:]}"
        assert "out.values.select" in second.stdout, second.stdout[-3000:]
    finally:
        started.stop()


# -- A campaign killed mid-run ------------------------------------------------------------------

def test_a_campaign_killed_mid_run_loses_nothing_it_had_saved(server, tmp_path):
    url = f"redis://127.0.0.1:{server.port}/0"
    proc = subprocess.Popen(fuzz_line(url, "--max-examples", "3000"), cwd=ROOT, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        saved = {}
        while proc.poll() is None and time.monotonic() < deadline and not saved:
            time.sleep(0.05)
            saved = server.saved()
        assert saved, f"no failure saved before the campaign ended (exit {proc.poll()})"
        assert proc.poll() is None, "the campaign ended before it could be killed: give it a longer budget"
        before = all_values(server.saved())
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"exit {proc.returncode}"
    after = all_values(server.saved())
    # a value the shrinker had improved on moves to the key's .secondary set: still there
    lost = before - after
    assert not lost, f"{len(lost)} of {len(before)} saved values gone after the kill"
    again = run(fuzz_line(url, "--seed", "3"))
    assert again.returncode == 1, f"exit {again.returncode}\n{again.stdout[-3000:]}"
    note = replay_note(again.stdout)  # the bug breaks two rules: the one saved first replays
    assert "out.values.select" in note or "out.order" in note, note


# -- Seeded runs save too (the first machine above runs seeded) -------------------------------

def test_a_seed_repeats_the_search_with_the_database_or_without(server):
    # the seeded search, now saving to the database, draws what it draws without one
    from topkspec.fuzz.config import RunConfig
    from topkspec.fuzz.run import run_fuzz

    def drawn(database):
        result = run_fuzz(RunConfig(target="tests/planted_bugs.py:CORRECT", max_examples=30, seed=4,
                                    settings="ci", database=database, groups=("valid",), isolate=False))
        assert result.ok, f"database {database}: {[f.rule for f in result.failures]}"
        calls = result.history.before(result.history.count)
        assert len(calls) >= 30, f"database {database}: {len(calls)} calls"
        return [(case.describe(), str(x.dtype), x.tobytes()) for case, x in calls]

    url = f"redis://127.0.0.1:{server.port}/0"
    assert drawn(url) == drawn(None), "a seeded search drew other examples with a database"


def test_the_bench_of_docs_speed_times_runs_with_each_database(server):
    (block,) = [b for b in blocks_of(ROOT / "docs" / "speed.md")
                if "test_redis_database.py" in b.marks.get("checked-by", "")]
    lines = block.commands()
    benches = [line for line in lines if line.startswith("topkspec bench")]
    assert len(benches) == 3, lines
    plain, directory, shared = benches
    assert directory.startswith(plain + " --database ") and shared.startswith(plain + " --database redis://"), \
        f"the three bench lines must differ only by --database: {benches}"
    url = shared.split("--database ", 1)[1].split()[0]
    small = shared.replace(url, f"redis://127.0.0.1:{server.port}/0").replace("--max-examples 300", "--max-examples 10")
    done = run([sys.executable, "-m", "topkspec", *shlex.split(small)[1:], "--repeat", "1", "--quiet"])
    assert done.returncode == 0, f"{small}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    targets = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"target"')]
    kinds = {line["target"]: line.get("database") for line in targets if line["target"] != "hypothesis-floor"}
    assert kinds == {"reference": "redis", "tests/planted_bugs.py:ignores_direction": "redis"}, kinds
    assert server.saved(), "the bench run against a planted bug saved nothing on the server"
    stats = [line for line in lines if line.startswith("redis-cli") and "commandstats" in line]
    assert stats and shutil.which("redis-cli"), f"{lines}: no redis-cli line, or no redis-cli here"
    counted = subprocess.run(["redis-cli", "-p", str(server.port), "info", "commandstats"], capture_output=True,
                             text=True, timeout=30)
    assert "cmdstat_smembers" in counted.stdout and "cmdstat_sadd" in counted.stdout, counted.stdout


# -- Seeded campaigns on --workers do not save: the run says so ---------------------------------

SEEDED_TEST = """
from hypothesis import given, settings, strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

@settings(database=DirectoryBasedExampleDatabase("db"))
@given(st.integers())
def test_small(n):
    assert n < 10
"""


def test_pytest_seeded_with_hypothesis_seed_saves_nothing_and_workers_runs_say_so(tmp_path, monkeypatch, capsys):
    # --workers passes --seed on as pytest's --hypothesis-seed: under it Hypothesis turns the
    # database off (nothing saved, nothing replayed), as this plain test shows
    (tmp_path / "test_small.py").write_text(SEEDED_TEST)
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:topkspec",
            "test_small.py"]
    for line, saves in ((base + ["--hypothesis-seed", "1"], False), (base, True)):
        done = subprocess.run(line, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, f"{line}: exit {done.returncode}\n{done.stdout[-2000:]}"
        saved = [p for p in (tmp_path / "db").rglob("*") if p.is_file()]
        assert bool(saved) == saves, f"{line}: {len(saved)} values saved, expected {'some' if saves else 'none'}"

    from topkspec.cli import main

    ran = []  # the campaign's pytest is not run: what it would be given, and the note, are checked
    monkeypatch.setattr(subprocess, "run", lambda line, **kw: ran.append(line) or subprocess.CompletedProcess(line, 0))
    for seed, noted in ((["--seed", "3"], True), ([], False)):
        assert main(["fuzz", "--target", "reference", "--workers", "2", "--database", str(tmp_path / "db2"),
                     *seed]) == 0
        err = capsys.readouterr().err
        assert ("neither saves failures to the example database" in err) == noted, f"--seed {seed}: {err!r}"
    assert len(ran) == 2 and "--topk-seed" in ran[0], ran

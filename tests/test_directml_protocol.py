"""The directml target's parts that need no Wine and no DirectML: the descriptor's binary form,
the frames, the worker process handling (against a stand-in worker written in Python), the
cache and what is missing, the runner's hooks for targets that take descriptors as written,
the comparison's classes, the observations, and the standalone repro's checks."""
import json
import os
import re
import stat
import struct
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from topkspec import spec
from topkspec.properties import failures
from topkspec.targets.isolation import TargetCrashed, TargetHung
from topkspec.spec.reference import reference_topk
from topkspec.fuzz import RunConfig, resolve_target, run_fuzz
from topkspec.strategies import invalid_descriptors, valid_cases
from topkspec.targets.base import Rejected, Target, as_index_type
from topkspec.directml_tools.analyses import compare
from topkspec.directml.windows import environment
from topkspec.directml.worker import ort_protocol, protocol
from topkspec.directml.client.worker_process import Worker
from topkspec.targets.runtimes.directml import DESCRIPTOR_RULES, DirectMLTarget

PACKAGE = Path(protocol.__file__).resolve().parent  # the worker programs


def base_desc(**body):
    desc = {"Type": "DML_OPERATOR_TOP_K1", "FeatureLevel": "DML_FEATURE_LEVEL_5_0", "Desc": {
        "InputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1, 1, 3, 4]},
        "OutputValueTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1, 1, 3, 2]},
        "OutputIndexTensor": {"DataType": "DML_TENSOR_DATA_TYPE_UINT32", "Sizes": [1, 1, 3, 2]},
        "Axis": 3, "K": 2, "AxisDirection": "DML_AXIS_DIRECTION_DECREASING"}}
    desc["Desc"].update(body)
    return desc


# -- the descriptor's binary form -------------------------------------------------------------

def test_every_field_reaches_the_struct_as_written():
    desc = base_desc()
    desc["Desc"]["InputTensor"].update(Strides=[24, 24, 8, 1], TotalTensorSizeInBytes=88,
                                       GuaranteedBaseOffsetAlignment=256, Flags=1)
    fields = protocol.decode_descriptor(protocol.encode_descriptor(desc))
    assert (fields["Type"], fields["Axis"], fields["K"], fields["AxisDirection"]) == (112, 3, 2, 1), fields
    tensor = fields["InputTensor"]
    assert tensor == {"TensorType": 1, "DataType": 1, "Flags": 1, "Sizes": [1, 1, 3, 4], "Strides": [24, 24, 8, 1],
                      "TotalTensorSizeInBytes": 88, "GuaranteedBaseOffsetAlignment": 256}, tensor
    out = fields["OutputIndexTensor"]
    assert out["DataType"] == 3 and out["Strides"] is None and out["TotalTensorSizeInBytes"] == 24, out


def test_names_short_names_and_enum_values_encode_alike():
    long_form = protocol.encode_descriptor(base_desc())
    short = base_desc(AxisDirection="DECREASING")
    short["Type"] = "TOP_K1"
    for name in ("InputTensor", "OutputValueTensor"):
        short["Desc"][name]["DataType"] = "FLOAT32"
    short["Desc"]["OutputIndexTensor"]["DataType"] = 3
    numbers = base_desc(AxisDirection=1)
    numbers["Type"] = 112
    assert protocol.encode_descriptor(short) == long_form == protocol.encode_descriptor(numbers)


def test_enum_values_outside_the_named_ones_still_reach_directml():
    fields = protocol.decode_descriptor(protocol.encode_descriptor(base_desc(AxisDirection=-1)))
    assert fields["AxisDirection"] == 0xFFFFFFFF, "an enum holds -1: DirectML must see it"
    desc = base_desc()
    desc["Desc"]["InputTensor"]["DataType"] = 12
    assert protocol.decode_descriptor(protocol.encode_descriptor(desc))["InputTensor"]["DataType"] == 12


@pytest.mark.parametrize("change, why", [
    (lambda d: d["Desc"].pop("K"), "member K is missing"),
    (lambda d: d["Desc"].update(Largest=1), "has no member Largest"),
    (lambda d: d["Desc"].update(K=-1), "K = -1 is not a UINT"),
    (lambda d: d["Desc"].update(Axis=2**32), "is not a UINT"),
    (lambda d: d["Desc"].update(K=2.0), "K = 2.0 is not a UINT"),
    (lambda d: d["Desc"]["InputTensor"].update(Strides=[1, 1, 1]), "3 entries but DimensionCount is 4"),
    (lambda d: d["Desc"]["InputTensor"].update(Layout="NCHW"), "no member Layout"),
    (lambda d: d["Desc"]["InputTensor"].update(DataType="BFLOAT16"), "names no DML_TENSOR_DATA_TYPE"),
    (lambda d: d["Desc"]["OutputValueTensor"]["Sizes"].__setitem__(0, "1"), "is not a UINT"),
    (lambda d: d["Desc"]["InputTensor"].update(TotalTensorSizeInBytes=-16), "is not a UINT64"),
    (lambda d: d.update(Type="DML_OPERATOR_ARGMAX"), "neither DML_OPERATOR_TOP_K nor"),
])
def test_json_no_struct_can_hold_is_inexpressible(change, why):
    desc = base_desc()
    change(desc)
    with pytest.raises(protocol.Inexpressible, match=re.escape(why)):
        protocol.encode_descriptor(desc)


def test_top_k_has_no_direction_member():
    desc = base_desc()
    desc["Type"] = "TOP_K"
    with pytest.raises(protocol.Inexpressible, match="DML_TOP_K_OPERATOR_DESC has no member AxisDirection"):
        protocol.encode_descriptor(desc)
    del desc["Desc"]["AxisDirection"]
    assert protocol.decode_descriptor(protocol.encode_descriptor(desc))["Type"] == 71


@pytest.mark.parametrize("data_type, sizes, strides, expected", [
    (1, [1, 1, 3, 4], None, 48),
    (2, [3], None, 8),  # 6 bytes rounded up to 4
    (5, [1, 1, 3, 4], [24, 24, 8, 1], 20),  # last element at 1 + 2*8 + 3 = 20, one byte each
    (11, [2, 3], [0, 1], 24),  # a broadcast dimension
    (1, [3, 0, 2], None, 0),
    (12, [4], None, 16),  # an unknown type counts 4 bytes an element
])
def test_buffer_sizes_follow_dmlcalcbuffertensorsize(data_type, sizes, strides, expected):
    assert protocol.calc_buffer_tensor_size(data_type, sizes, strides) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(valid_cases("dml:5.0"))
def test_a_case_encodes_as_the_spec_writes_it(case):
    assert protocol.encode_descriptor(protocol.case_descriptor(case)) == \
        protocol.encode_descriptor(spec.descriptor(case))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(invalid_descriptors("dml:6.4"))
def test_which_broken_descriptors_can_reach_createoperator(draw):
    """The runner hands DirectML the draws of DESCRIPTOR_RULES; the rest have no C form (or no
    feature level), except the ones a Case carries."""
    try:
        protocol.encode_descriptor(draw.descriptor)
        expressible = True
    except protocol.Inexpressible:
        expressible = False
    if draw.rules & {"dml.desc.fields", "dml.tensor.strides"}:
        assert not expressible, f"{draw.describe()} should have no C form"
    elif draw.rules <= DESCRIPTOR_RULES - {"dml.tensor.fields", "dml.direction.enum"}:
        assert expressible, f"{draw.describe()} should reach CreateOperator"
    elif draw.rules == {"dml.direction.enum"}:  # a number reaches it; a name no enum has does not
        assert expressible == isinstance(draw.descriptor["Desc"]["AxisDirection"], int), draw.describe()
    if draw.case is not None:
        assert draw.rules.isdisjoint(DESCRIPTOR_RULES - {"dml.rank.supported"}), draw.describe()


def test_frames_round_trip():
    frame = protocol.request(protocol.CMD_CREATE, b"abc")
    assert frame == struct.pack("<II", 7, 2) + b"abc"
    body = struct.pack("<II", 0x80070057, 1) + b"x"
    assert protocol.parse_reply(body) == (0x80070057, 1, b"x")
    payload = struct.pack("<Q", 3) + b"vvv" + struct.pack("<Q", 2) + b"ii" + struct.pack("<3d", 1, 2, 3)
    assert protocol.parse_outputs(payload) == (b"vvv", b"ii", (1.0, 2.0, 3.0))
    with pytest.raises(protocol.ProtocolError):
        protocol.parse_outputs(struct.pack("<Q", 9) + b"short")
    assert protocol.hresult_name(0x80070057) == "E_INVALIDARG (0x80070057)"
    assert protocol.hresult_name(0x887A002D) == "DXGI_ERROR_SDK_COMPONENT_MISSING (0x887A002D)"
    assert protocol.hresult_name(0x12345678) == "HRESULT 0x12345678"


def worker_defines(name: str) -> dict:
    """The protocol's #defines a worker's source sees: its own and worker_io.h's."""
    source = (PACKAGE / name).read_text() + (PACKAGE / "worker_io.h").read_text()
    return dict(re.findall(r"#define (CMD_\w+|STAGE_\w+|WORKER_PROTOCOL) (\d+)", source))


def test_the_worker_source_speaks_the_same_protocol():
    source = (PACKAGE / "worker.c").read_text()
    defines = worker_defines("worker.c")
    for name in ("CMD_CREATE", "CMD_EXECUTE", "CMD_CRASH", "CMD_HANG", "CMD_QUIT", "WORKER_PROTOCOL"):
        assert int(defines[name]) == getattr(protocol, name), name
    assert int(defines["STAGE_CREATE"]) == protocol.STAGE_CREATE
    assert int(defines["STAGE_DEVICE"]) == protocol.STAGE_DEVICE
    assert protocol.STAGES[int(defines["STAGE_COMPILE"])] == "CompileOperator"
    for name, value in protocol.DATA_TYPES.items():
        assert spec.tables.DML_DATA_TYPES[name] == value
    assert "0x80070057" not in source, "the worker reports HRESULTs, it does not name them"


def test_the_onnxruntime_worker_speaks_the_same_protocol():
    defines = worker_defines("ort_worker.c")
    for name in ("CMD_CRASH", "CMD_HANG", "CMD_QUIT", "WORKER_PROTOCOL", "STAGE_DEVICE"):
        assert int(defines[name]) == getattr(protocol, name), name
    for name in ("CMD_LOAD", "CMD_RUN", "STAGE_LOAD", "STAGE_RUN"):
        assert int(defines[name]) == getattr(ort_protocol, name), name
    assert not set(defines.items()) & {("CMD_LOAD", "2"), ("CMD_LOAD", "3")}, "LOAD and RUN are new commands"


def test_onnxruntime_frames_round_trip():
    payload = ort_protocol.run_payload(3, [("X", 1, (2,), b"\0" * 8)], ["Values"])
    assert payload == (struct.pack("<3I", 3, 1, 1) + struct.pack("<I", 1) + b"X" + struct.pack("<IIqQ", 1, 1, 2, 8)
                       + b"\0" * 8 + struct.pack("<I", 6) + b"Values")
    reply = struct.pack("<IIqQ", 7, 1, 1, 8) + struct.pack("<q", -5) + struct.pack("<d", 12.5)
    assert ort_protocol.parse_outputs(reply, 1) == ([(7, (1,), struct.pack("<q", -5))], 12.5)
    with pytest.raises(protocol.ProtocolError):
        ort_protocol.parse_outputs(reply[:-12], 1)
    error = ort_protocol.parse_error(struct.pack("<I", 6) + b"Non-zero status code")
    assert str(error) == "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code" and error.code == 6


# -- the cache and what is missing ------------------------------------------------------------

def version_resource(version: str) -> bytes:
    """A VS_VERSION_INFO String entry as a DLL's resource section holds it."""
    key = "FileVersion".encode("utf-16-le") + b"\0\0"
    value = version.encode("utf-16-le") + b"\0\0"
    head = struct.pack("<HHH", 0, len(version) + 1, 1)
    padding = b"\0" * ((-(len(head) + len(key))) % 4)
    return b"MZ" + b"\0" * 62 + head + key + padding + value + b"\0" * 16


def test_the_dll_version_is_read_from_its_resource(tmp_path):
    path = tmp_path / "DirectML.dll"
    path.write_bytes(version_resource("1.15.4+241025-1615.1.dml-1.15.fac7597"))
    assert environment.pe_file_version(path) == "1.15.4+241025-1615.1.dml-1.15.fac7597"
    assert environment.short_version(environment.pe_file_version(path)) == "1.15.4"
    path.write_bytes(b"MZ" + b"\0" * 100)
    assert environment.pe_file_version(path) is None


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("TOPKSPEC_DIRECTML_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name != "nt":
        assert environment.cache_dir() == tmp_path / "xdg" / "topkspec" / "directml"
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path / "mine"))
    assert environment.cache_dir() == tmp_path / "mine"


def test_the_dll_is_chosen_by_path_version_or_setup(monkeypatch, tmp_path):
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path))
    monkeypatch.delenv("TOPKSPEC_DIRECTML_DLL", raising=False)
    assert environment.chosen_dll() == (None, "DirectML.dll not found: run `topkspec directml setup`")
    for version in ("1.13.1", "1.15.4"):
        folder = tmp_path / "dll" / version
        folder.mkdir(parents=True)
        (folder / "DirectML.dll").write_bytes(version_resource(version))
    assert environment.chosen_dll()[0] == tmp_path / "dll" / "1.15.4" / "DirectML.dll", "newest by default"
    monkeypatch.setenv("TOPKSPEC_DIRECTML_DLL", "1.13.1")
    assert environment.chosen_dll()[0] == tmp_path / "dll" / "1.13.1" / "DirectML.dll"
    monkeypatch.setenv("TOPKSPEC_DIRECTML_DLL", "1.9.0")
    path, why = environment.chosen_dll()
    assert path is None and "topkspec directml setup --version 1.9.0" in why and "1.13.1, 1.15.4" in why


def test_an_empty_cache_says_exactly_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path))
    monkeypatch.delenv("TOPKSPEC_DIRECTML_DLL", raising=False)
    target = DirectMLTarget()
    ok, why = target.available()
    assert not ok
    assert "DirectML.dll not found: run `topkspec directml setup`" in why, why
    assert "topk_worker.exe is not built for this source" in why, why
    if sys.platform.startswith("linux"):
        assert f"the Wine prefix {tmp_path / 'wineprefix'} is not set up" in why, why
    assert target.version() == "DirectML (not set up)" and target.default_profile == "dml:5.0"
    target.close()


def test_old_releases_get_the_lane_workaround_under_wine_only():
    if os.name == "nt":
        assert not environment.needs_lane_workaround("1.5.1")
        return
    assert environment.needs_lane_workaround("1.5.1") and environment.needs_lane_workaround("1.7.0")
    assert not environment.needs_lane_workaround("1.8.0") and not environment.needs_lane_workaround("1.15.4")


def test_every_known_version_comes_from_a_wheel():
    assert environment.DEFAULT_DIRECTML in environment.DIRECTML_WHEELS
    for version, (ort, python) in environment.DIRECTML_WHEELS.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version) and re.fullmatch(r"\d+\.\d+\.\d+", ort), version
        assert python in ("3.8", "3.11"), python


# -- the worker process, with a stand-in worker ---------------------------------------------

STAND_IN = textwrap.dedent('''\
    #!{python}
    import json, struct, sys, time
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    def reply(status, stage, payload=b""):
        out.write(struct.pack("<III", 8 + len(payload), status, stage) + payload); out.flush()
    reply(0, 6, json.dumps({{"adapter": "stand-in", "feature_level": 0x6400,
                            "types": {{str(t): [t != 2, 0] for t in range(1, 12)}}}}).encode())
    while True:
        head = inp.read(4)
        if len(head) < 4:
            sys.exit(0)
        body = inp.read(struct.unpack("<I", head)[0])
        command = struct.unpack_from("<I", body)[0]
        if command == 2:
            reply(0x80070057, 1, struct.pack("<d", 3.0))
        elif command == 3:
            values = struct.pack("<2f", 11, 10)
            indices = struct.pack("<2I", 3, 2)
            reply(0, 0, struct.pack("<Q", 8) + values + struct.pack("<Q", 8) + indices + struct.pack("<3d", 0, 0, 0))
        elif command == 4:
            sys.exit(70)
        elif command == 5:
            time.sleep(3600)
        elif command == 6:
            reply(0, 0); sys.exit(0)
''')


@pytest.fixture
def stand_in(tmp_path):
    if os.name == "nt":
        pytest.skip("the stand-in worker is a script with a #! line")
    script = tmp_path / "worker.py"
    script.write_text(STAND_IN.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    stack = environment.DirectMLStack("windows", dll=tmp_path / "DirectML.dll", dll_version="1.15.4", worker=script)
    worker = Worker(stack, timeout=2.0)
    yield worker
    worker.close()


def test_the_client_reads_the_ready_frame_and_replies(stand_in):
    info = stand_in.start()
    assert info["adapter"] == "stand-in"
    status, micros = stand_in.create(b"desc")
    assert (status, micros) == (0x80070057, 3.0)
    status, stage, values, indices, _ = stand_in.execute(b"desc", b"data")
    assert status == 0 and np.frombuffer(values, np.float32).tolist() == [11, 10]
    assert np.frombuffer(indices, np.uint32).tolist() == [3, 2]


def test_a_dead_worker_is_a_crash_and_a_silent_one_a_hang(stand_in):
    stand_in.start()
    with pytest.raises(TargetCrashed, match="exited with code 70"):
        stand_in.call(protocol.CMD_CRASH, doing="crashing")
    assert stand_in.create(b"desc")[0] == 0x80070057, "a fresh worker answers after a crash"
    with pytest.raises(TargetHung, match="did not answer within 0.5s"):
        stand_in.call(protocol.CMD_HANG, timeout=0.5, doing="hanging")
    assert not stand_in.alive, "a hung worker is killed"
    assert stand_in.create(b"desc")[0] == 0x80070057, "a fresh worker answers after a hang"
    assert stand_in.starts == 3


# -- the runner's hooks ------------------------------------------------------------------------

def reference_result(case, x):
    values, indices = reference_topk(x, axis=case.norm_axis, k=case.k,
                                     largest=case.largest if case.op == "TOP_K1" else True)
    return values, as_index_type(indices, case.index_dtype)


class DescriptorTarget(Target):
    """Takes broken descriptors as written, like directml, and answers as told."""

    name = "descriptor-stand-in"
    validates = True
    validates_tables = ("dml",)
    descriptor_rules = DESCRIPTOR_RULES

    def __init__(self, accepts: bool):
        self.accepts = accepts
        self.asked = []

    def check_descriptor(self, descriptor):
        try:
            protocol.encode_descriptor(descriptor)
        except protocol.Inexpressible:
            return None
        self.asked.append(descriptor)
        return {"accepted": self.accepts, "detail": "S_OK" if self.accepts else "E_INVALIDARG"}

    def run(self, case, x):
        if spec.validate(spec.descriptor(case)):
            raise Rejected("invalid")
        return reference_result(case, x)


def test_broken_descriptors_no_case_carries_reach_the_target():
    target = DescriptorTarget(accepts=False)
    result = run_fuzz(RunConfig(target=target, max_examples=120, seed=3, settings="ci", groups=("invalid",)))
    assert result.ok, [f.violation.message for f in result.failures] + result.errors
    assert target.asked, "no broken descriptor reached check_descriptor"
    assert result.checks["rejects_invalid"] > len(target.asked) / 2


def test_a_broken_descriptor_accepted_as_written_is_a_finding():
    result = run_fuzz(RunConfig(target=DescriptorTarget(accepts=True), max_examples=120, seed=3,
                                settings="ci", groups=("invalid",)))
    found = [f for f in result.failures if f.failure_class == failures.ACCEPTS_INVALID]
    assert found and found[0].rule in DESCRIPTOR_RULES, [f.violation.message for f in result.failures]
    assert "but was accepted (S_OK)" in found[0].violation.message
    assert hasattr(found[0].case, "describe")


class RefusesKAtTheAxisSize(Target):
    name = "refuses-k-equal-n"
    validates = True

    def run(self, case, x):
        if case.k >= case.axis_size:
            raise Rejected("K must be less than the axis size")
        return reference_result(case, x)


def test_refusing_k_equal_to_the_axis_size_fails_neither_way():
    result = run_fuzz(RunConfig(target=RefusesKAtTheAxisSize(), max_examples=80, seed=0, settings="ci",
                                groups=("valid",)))
    assert result.ok, [f.violation.message for f in result.failures]
    assert result.refused_k_at_axis_size > 0, "no K equal to the axis size was refused"


class SelfIsolating(Target):
    name = "self-isolating"
    native = True
    isolates_itself = True
    timeout = None

    def set_timeout(self, timeout):
        self.timeout = timeout


def test_a_target_that_isolates_itself_is_not_wrapped(monkeypatch):
    made = SelfIsolating()
    assert resolve_target(made, isolate=None, timeout=7.5) is made and made.timeout == 7.5


# -- the comparison and the observations ----------------------------------------------------

def test_the_fixed_descriptor_set_breaks_every_rule_directml_can_be_asked_about():
    items = compare.fixed_descriptors()
    names = [item["name"] for item in items]
    assert len(names) == len(set(names)) > 100
    broken = set()
    for item in items:
        broken |= {f.rule for f in spec.validate(item["descriptor"])}
        broken |= {f.rule for f in spec.validate(item["descriptor"], strict_doc=True)}
    dml_rules = {r.id for r in spec.RULE_LIST if r.scope == "dml" and r.check}
    assert dml_rules <= broken, f"never broken: {sorted(dml_rules - broken)}"
    valid = [i for i in items if not spec.validate(i["descriptor"])]
    assert len(valid) > 40


@pytest.mark.parametrize("rules, at_device, strict, verdict, expected", [
    ([], [], [], {"accepted": True}, "agree"),
    (["dml.k.max"], ["dml.k.max"], ["dml.k.max_strict"], {"accepted": False}, "agree"),
    (["dml.k.max"], ["dml.k.max"], [], {"accepted": True}, "documents forbid, DirectML accepts"),
    ([], [], [], {"accepted": False}, "documents allow, DirectML refuses"),
    ([], [], ["dml.k.max_strict"], {"accepted": True}, "the text forbids, DirectML accepts"),
    (["dml.rank.supported"], [], [], {"accepted": True}, compare.OTHER_LEVEL),
    ([], ["dml.dtype.value_supported"], [], {"accepted": False}, compare.OTHER_LEVEL),
    (["dml.rank.supported"], [], [], {"accepted": False}, "documents allow, DirectML refuses"),
    (["dml.desc.fields"], ["dml.desc.fields"], [], {"accepted": False, "expressible": False}, "not expressible"),
])
def test_each_verdict_is_classified(rules, at_device, strict, verdict, expected):
    row = {"rules": rules, "rules_at_device": at_device, "strict_rules": strict}
    assert compare.classify(row, verdict) == expected


def test_the_table_shows_only_differences_and_groups_alike_rows():
    def row(name, rules, strict, accepted, cls):
        return {"name": name, "rules": rules, "strict_rules": strict, "rules_at_device": rules,
                "verdicts": {"1.15.4": {"accepted": accepted, "detail": "S_OK (0x0)" if accepted else
                                        "E_INVALIDARG (0x80070057)", "class": cls}}}
    result = {"directml": {"1.15.4": {"adapter": "a", "feature_level": "6_4", "file_version": "1.15.4+x"}},
              "rows": [row("K = 0", ["dml.k.positive"], [], False, "agree"),
                       row("rank 1, K = n", [], ["dml.k.max_strict"], True, "the text forbids, DirectML accepts"),
                       row("rank 2, K = n", [], ["dml.k.max_strict"], True, "the text forbids, DirectML accepts")]}
    text = compare.markdown(result)
    assert "K = 0 |" not in text
    assert "| rank 1, K = n; rank 2, K = n | valid; the literal text forbids it: `dml.k.max_strict` | " \
           "accepted (S_OK): the text forbids, DirectML accepts |" in text, text
    assert "- DirectML 1.15.4 (1.15.4+x) on a, feature level 6_4: 3 descriptors, 2 the text forbids, DirectML " \
           "accepts, 1 agree." in text, text
    notes = compare.observations(result)["rules"]
    assert set(notes) == {"dml.k.max_strict", "dml.k.max"}
    assert notes["dml.k.max"][0]["descriptors"] == ["rank 1, K = n", "rank 2, K = n"]


def test_the_rules_carry_the_recorded_observations():
    from topkspec.spec import observations

    recorded = json.loads(observations.PATH.read_text())
    assert recorded["rules"], "observations.json records nothing"
    for rule_id, notes in recorded["rules"].items():
        assert rule_id in spec.RULES, rule_id
        for note in notes:
            assert note["implementation"].startswith("DirectML ") and note["descriptors"] and note["observed"]
    k_max = spec.RULES["dml.k.max"]
    assert any("DirectML accepts" in n["observed"] for n in k_max.observations), k_max.observations
    exported = {r["id"]: r for r in spec.export()["rules"]}
    assert exported["dml.k.max"]["observations"] == k_max.observations
    assert exported["dml.axis.range"]["observations"] == []

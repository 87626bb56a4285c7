"""ONNX Runtime's CPU provider, run by topkspec's foreign worker in an environment of its own
(another version of onnxruntime). Standalone: numpy and onnxruntime only; the suite builds
the models and sends them as bytes. Sessions use the options of topkspec's onnxruntime target."""
import onnxruntime as ort

_sessions = []


def version():
    return f"onnxruntime {ort.__version__} (CPUExecutionProvider)"


def providers():
    return ort.get_available_providers()


def session(model: bytes) -> int:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    _sessions.append(ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]))
    return len(_sessions) - 1


def run(number: int, feeds: dict):
    return _sessions[number].run(None, feeds)

"""IREE's compiler as the `iree` target uses it: importing an ONNX model the way
`iree-import-onnx` does, compiling it for the CPU with the target's flags, and where compiled
modules are cached on disk (see iree_target's module text)."""
from __future__ import annotations

import os
from contextlib import contextmanager

from topkspec.targets.base import first_line

COMPILE_FLAGS = (
    "--iree-input-type=onnx",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
    "--iree-input-demote-f64-to-f32=false",
)


def _diagnostics(exc: BaseException) -> str:
    """IREE's diagnostic lines from a CompilerToolError (the error lines, not the command
    line it prints after them), else the exception's first line."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if "error:" in line]
    return "; ".join(lines[:3]) if lines else first_line(exc)


class CompileRefused(Exception):
    """iree-compile's refusal of a model, read back from the disk cache (its diagnostics)."""


def iree_version() -> str:
    from importlib import metadata

    return metadata.version("iree-base-compiler")


def cache_dir() -> str | None:
    """The on-disk module cache folder, or None when TOPKSPEC_IREE_CACHE is `off`."""
    chosen = os.environ.get("TOPKSPEC_IREE_CACHE")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "0", "off", "no", "false") else chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "topkspec", "iree")


def import_onnx(model) -> str:
    """The model as torch-dialect MLIR text, the way iree-import-onnx imports it (the ONNX
    checker, shape inference with data propagation, IREE's importer, verification): IREE's
    own front end, so its failures are IREE refusing the model."""
    import onnx
    from iree.compiler import ir
    from iree.compiler.extras import onnx_importer

    onnx.checker.check_model(model)
    model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    info = onnx_importer.ModelInfo(model)
    module = info.create_module(context=ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm()


@contextmanager
def _stderr_discarded():
    """File descriptor 2 sent to a scratch file for the duration (the compiler API writes its
    diagnostics straight to it, and they would interleave with a run's progress)."""
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def compile_mlir(asm: str) -> bytes:
    """The VM bytecode module IREE compiles from `asm` with COMPILE_FLAGS: in-process through
    iree.compiler.api, and, when that fails, through iree.compiler.compile_str, whose
    CompilerToolError carries IREE's diagnostics (raised as it is)."""
    from iree.compiler.api import Output, Session, Source

    session = Session()
    try:
        session.set_flags(*COMPILE_FLAGS)
        invocation = session.invocation()
        source = Source.wrap_buffer(session, asm.encode())
        with _stderr_discarded():  # the API prints its diagnostics there; compile_str returns them
            compiled = invocation.parse_source(source) and invocation.execute()
        if compiled:
            output = Output.open_membuffer()
            invocation.output_vm_bytecode(output)
            return bytes(output.map_memory())
    finally:
        session.close()
    import iree.compiler

    return iree.compiler.compile_str(asm, extra_args=list(COMPILE_FLAGS))

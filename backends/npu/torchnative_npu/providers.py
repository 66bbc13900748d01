"""ONNX Runtime's side: which execution provider (EP) runs the captured graphs, and which ONNX
operators (with which element types) that runtime has kernels for.

The EP is the first of PREFERENCE that `onnxruntime.get_available_providers()` lists (the NPU
ones first: QNN on Snapdragon, NNAPI on Android, CoreML on Apple; then WebGPU; the CPU provider
last), unless TORCHNATIVE_NPU_PROVIDERS names others (comma-separated, in order). The CPU
provider is always appended: ONNX Runtime itself places each node an accelerator EP does not take
on it, so a session always has a home for every node the runtime has a kernel for.

`supported(op, onnx_type)` reads ONNX Runtime's own kernel registry (`get_all_opkernel_def`): a
node whose operator/element type has no CPU kernel at OPSET is "rejected by the provider" before
it is ever put in a graph, and the backend runs that operator on the cpu backend instead
(kernels.py, docs/npu.md).
"""

from __future__ import annotations

import functools
import os

# The ONNX opset of every captured graph: 21 (LayerNormalization 17, Gelu 20, bitwise ops 18,
# ReduceSum's axes as an input 13/18) — what current mobile EPs' op tables reach.
OPSET = 21
PREFERENCE = ("QNNExecutionProvider", "NNAPIExecutionProvider", "CoreMLExecutionProvider",
              "WebGpuExecutionProvider", "CPUExecutionProvider")


def ort():
    import onnxruntime

    return onnxruntime


@functools.lru_cache(maxsize=None)
def providers() -> tuple[str, ...]:
    """The providers sessions are created with, most preferred first (CPU always last)."""
    available = ort().get_available_providers()
    wanted = [p.strip() for p in os.environ.get("TORCHNATIVE_NPU_PROVIDERS", "").split(",") if p.strip()]
    if wanted:
        missing = [p for p in wanted if p not in available]
        if missing:
            raise RuntimeError(f"TORCHNATIVE_NPU_PROVIDERS names {', '.join(missing)}, which this onnxruntime "
                               f"does not have (available: {', '.join(available)})")
        chosen = wanted
    else:
        chosen = [p for p in PREFERENCE if p in available][:1]
    if "CPUExecutionProvider" not in chosen:
        chosen.append("CPUExecutionProvider")
    return tuple(chosen)


@functools.lru_cache(maxsize=None)
def _kernel_table() -> dict:
    """(op, domain) -> set of element type names ("float", "int64", ...) some CPU kernel of an
    opset range covering OPSET accepts in any of its type constraints."""
    from onnxruntime.capi import _pybind_state as C

    table: dict = {}
    for d in C.get_all_opkernel_def():
        if d.provider != "CPUExecutionProvider":
            continue
        lo, hi = d.version_range
        if not lo <= OPSET <= hi:
            continue
        types = table.setdefault((d.op_name, d.domain), set())
        for allowed in d.type_constraints.values():
            types.update(t.removeprefix("tensor(").removesuffix(")") for t in allowed)
    return table


def supported(op: str, elem: str, domain: str = "") -> bool:
    """Whether the runtime has a kernel for ONNX operator `op` at OPSET on element type `elem`."""
    return elem in _kernel_table().get((op, domain), ())


def session_options():
    so = ort().SessionOptions()
    threads = os.environ.get("TORCHNATIVE_NPU_THREADS")
    if threads:
        so.intra_op_num_threads = int(threads)
    # Worker threads that spin between graph runs only burn a core another process wants (the
    # forward pass of MiniLM took 3x longer on a loaded 2-core machine with spinning on).
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 3  # errors only: ORT warns about unused initializers and the like
    return so

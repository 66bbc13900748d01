"""torchnative-npu: the NPU backend of torchnative (device key ``"npu"``).

Operators sent to ``npu`` tensors are not computed one by one: each kernel records ONNX nodes into
a pending graph (graph.py), which is lowered to one ONNX model and run by ONNX Runtime, on the
first execution provider available of QNN, NNAPI, CoreML, WebGPU and CPU (providers.py), when a
result leaves the device (``.cpu()``, printing, ``item()``) or its memory is otherwise needed.
Sessions are cached by the graph's structure, so a model's forward pass repeated with the same
shapes runs one cached session. docs/npu.md has the design and the measurements.

The entry point ``torchnative.backends: npu = "torchnative_npu:plugin"`` names :data:`plugin`.
``torchnative_describe`` is cheap (it looks for onnxruntime and onnx without importing them);
``torchnative_register`` registers the allocator (host RAM: memory.py) and the kernels
(kernels.py).

CPU fallback, two kinds (docs/npu.md):

* An operator the runtime *rejects* — it has no kernel for one of the ONNX nodes the operator
  lowers to, at that element type (float16 Erf, integer division, which ONNX Runtime cannot
  refuse by zero) — runs on the cpu backend, always: counted per operator in
  ``torchnative.fallback_report()`` and warned once (FallbackWarning). TORCHNATIVE_NPU_NO_FALLBACK=1
  refuses those by name instead (NotImplementedError).
* An operator with no npu kernel at all is refused by name by the core, unless the user opts in
  with TORCHNATIVE_CPU_FALLBACK=npu (the core's generic fallback, as for vulkan).
"""

from __future__ import annotations

import importlib.util
import os
from types import SimpleNamespace

__all__ = ["plugin", "NpuPlugin", "stats", "reset_stats", "flush", "provider"]

ABI_VERSION = 1 << 16
_DTYPE_NAMES = {0: "Byte", 1: "Char", 2: "Short", 3: "Int", 4: "Long", 5: "Half", 6: "Float", 7: "Double",
                11: "Bool", 15: "BFloat16", 8: "ComplexHalf", 9: "ComplexFloat", 10: "ComplexDouble"}


def _graph():
    from .graph import GRAPH

    return GRAPH


def stats() -> dict:
    """Counters since the last reset: graphs flushed, ONNX nodes run, sessions created and
    cache hits, aten kernels captured, operators the provider rejected, flush reasons."""
    return _graph().stats.as_dict()


def reset_stats() -> None:
    _graph().stats.reset()


def flush() -> None:
    """Run the pending graph now (every npu tensor's memory is then up to date)."""
    _graph().flush("torchnative_npu.flush()")


def provider() -> str:
    """The execution provider the sessions prefer ("CPUExecutionProvider" on this machine)."""
    from . import providers

    return providers.providers()[0]


def _check_fallback_allowed(op, args, outs, why):
    if os.environ.get("TORCHNATIVE_NPU_NO_FALLBACK", "") not in ("", "0"):
        code = next((t._tn_dtype_code for t in (*outs, *args) if hasattr(t, "_tn_dtype_code")), None)
        raise NotImplementedError(f'"{op}" not implemented for \'{_DTYPE_NAMES.get(code, code)}\' on device '
                                  f"'npu' ({why}; TORCHNATIVE_NPU_NO_FALLBACK is set)")


def _fallback(run_on_cpu, op, args, outs, why):
    """Run aten `op` on the cpu backend: operands' bytes to the host (flushing what is pending),
    the cpu kernel, outputs' bytes back, outputs the cpu kernel allocated moved to npu
    (`registrar.run_on_cpu`, the core's CPU fallback, counted there). Returns those moved outputs."""
    _check_fallback_allowed(op, args, outs, why)
    g = _graph()
    g.stats.rejected[op] = g.stats.rejected.get(op, 0) + 1
    return run_on_cpu(op, "npu", args, outs)


def _make(op, lower, run_on_cpu):
    from .graph import GRAPH, Rejected, Unsupported

    def kernel(args, outs):
        mark = GRAPH.checkpoint()
        try:
            lower(GRAPH, args, outs)
        except (Rejected, Unsupported) as e:
            GRAPH.rollback(mark)
            why = str(e) if isinstance(e, Rejected) else "no ONNX element type for this dtype"
            _fallback(run_on_cpu, op, args, outs, why)
            return
        GRAPH.after_kernel()
    kernel.__name__ = f"npu_{op}"
    return kernel


def _make_allocating(op, lower, run_on_cpu):
    from .graph import GRAPH, Rejected, Unsupported

    def kernel(args):
        mark = GRAPH.checkpoint()
        try:
            got = lower(GRAPH, args)
        except (Rejected, Unsupported) as e:
            GRAPH.rollback(mark)
            return _fallback(run_on_cpu, op, args, (None,), str(e))
        GRAPH.after_kernel()
        return got
    kernel.__name__ = f"npu_{op}"
    return kernel


class NpuPlugin:
    """The backend descriptor the torchnative plugin manager reads."""

    name = "npu"
    device_keys = ("npu",)
    priority = 40

    def is_available(self) -> tuple[bool, str]:
        missing = [m for m in ("onnxruntime", "onnx", "numpy") if importlib.util.find_spec(m) is None]
        if missing:
            return False, f"{', '.join(missing)} not installed (pip install torchnative[npu])"
        return True, ""

    def torchnative_describe(self):
        """Cheap at `import torch`: onnxruntime is looked for, not imported. Under `torchnative
        backends list/show` (TORCHNATIVE_BACKENDS_DETAIL=1) it is imported, so the row says which
        execution providers the sessions use, or why onnxruntime does not load."""
        ok, why = self.is_available()
        extra = {}
        if ok:
            from importlib import metadata

            try:
                extra["onnxruntime"] = metadata.version("onnxruntime")
            except metadata.PackageNotFoundError:  # another build of it (onnxruntime-qnn, ...)
                pass
            if os.environ.get("TORCHNATIVE_BACKENDS_DETAIL") == "1":
                try:
                    from . import providers

                    extra["execution_providers"] = list(providers.providers())
                except Exception as e:  # noqa: BLE001 - reported, not raised
                    ok, why = False, f"onnxruntime failed to load: {type(e).__name__}: {e}"
        return SimpleNamespace(name=self.name, device_keys=self.device_keys, priority=self.priority,
                               abi_version=ABI_VERSION, available=ok, reason=why, extra=extra)

    def torchnative_register(self, registrar) -> int:
        from .kernels import ALLOCATING, KERNELS
        from .memory import NpuAllocator

        registrar.register_allocator("npu", NpuAllocator())
        n = 0
        self.refused = []
        for op, lower in KERNELS.items():
            try:
                registrar.register_kernel(op, "npu", _make(op, lower, registrar.run_on_cpu))
                n += 1
            except ValueError:  # an overload this core does not have (e.g. an in-place spelling)
                self.refused.append(op)
        for op, lower in ALLOCATING.items():
            registrar.register_allocating_kernel(op, "npu", _make_allocating(op, lower, registrar.run_on_cpu))
            n += 1
        return n

    def kernel_names(self) -> list[str]:
        """The overloads this backend implements (index.Tensor among them, registered as an
        allocating kernel), without those the core did not know at the last registration."""
        from .kernels import ALLOCATING, KERNELS

        return sorted((set(KERNELS) - set(getattr(self, "refused", ()))) | set(ALLOCATING))

    def __repr__(self) -> str:
        return "<torchnative backend plugin 'npu' (device keys npu; ONNX Runtime)>"


plugin = NpuPlugin()

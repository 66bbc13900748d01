"""The CPU fallback a plugin may opt into for its device keys (`registrar.register_cpu_fallback`).

An operator with no kernel for such a key runs on the cpu backend instead: every operand on the
device is copied to host memory (the byte span its view covers, so strides and aliasing between
an in-place operand and its output survive), the cpu kernel runs, and the outputs' spans are
copied back through the device allocator. Slow, but a prototype device then works with all of
torch (printing a tensor included) while its own kernels are written one by one. Only missing
kernels fall back: an error raised by the device's own kernel propagates.
"""

from __future__ import annotations

import collections
import os
import warnings

# Device keys whose operators may fall back: those whose plugins opted in, plus those the user
# turned on (TORCHNATIVE_CPU_FALLBACK=vulkan,... at import, or torchnative.enable_cpu_fallback).
# Off for every other device: a missing kernel is then refused by name.
DEVICES: set[str] = {k.strip() for k in os.environ.get("TORCHNATIVE_CPU_FALLBACK", "").split(",") if k.strip()}
# (device key, operator) -> how many calls ran on the CPU fallback in this process.
COUNTS: collections.Counter = collections.Counter()


class FallbackWarning(UserWarning):
    """The first time an operator falls back to the CPU on a device (once per operator and device)."""


def enable(device_key: str) -> None:
    DEVICES.add(device_key)


def disable(device_key: str) -> None:
    DEVICES.discard(device_key)


def report() -> dict:
    """{device key: {operator: calls that ran on the CPU fallback}}, most frequent first."""
    out: dict = {}
    for (key, op), n in COUNTS.most_common():
        out.setdefault(key, {})[op] = n
    return out


def summary() -> str:
    """The report as lines a user can print: one per device and operator, with the call count."""
    rep = report()
    if not rep:
        return "CPU fallback: no operator fell back" + (f" (enabled for {', '.join(sorted(DEVICES))})" if DEVICES else " (off)")
    lines = []
    for key, ops in rep.items():
        lines.append(f"CPU fallback on {key}: {sum(ops.values())} calls of {len(ops)} operators (calls, operator):")
        lines += [f"  {n:8d}  {op}" for op, n in ops.items()]
    return "\n".join(lines)


if os.environ.get("TORCHNATIVE_FALLBACK_REPORT") not in (None, "", "0"):
    import atexit
    import sys

    atexit.register(lambda: print(summary(), file=sys.stderr))


def _name(op: str) -> str:
    """"exp" / "aten::sum.dim_IntList" -> "aten.exp.default" / "aten.sum.dim_IntList" (as refusals name them)."""
    op = op.removeprefix("aten::")
    return f"aten.{op}" if "." in op else f"aten.{op}.default"


def _count(key: str, op: str, stacklevel: int = 4) -> None:
    op = _name(op)
    COUNTS[key, op] += 1
    if COUNTS[key, op] == 1:
        warnings.warn(
            f"{op} has no kernel for device '{key}': it ran on the CPU fallback (operands copied to the "
            f"host and back); every call is counted, see torchnative.fallback_report()",
            FallbackWarning,
            stacklevel=stacklevel,
        )


def _span(t) -> int:
    """Elements from the view's first to its last, the gaps between strided elements included."""
    sizes, strides = t._tn_sizes, t._tn_strides
    return 1 + sum((n - 1) * s for n, s in zip(sizes, strides)) if all(sizes) else 0


def _device_of(args, outs):
    for t in (*outs, *args):
        for x in t if isinstance(t, (list, tuple)) else (t,):
            if hasattr(x, "_tn_device_key"):
                return x._tn_device_key, x._tn_device_index
    return None, 0


class _HostCopies:
    """Host views of device tensors, one per tensor object (an in-place operand and its output are
    the same object, so they stay one host tensor)."""

    def __init__(self, C, key):
        self.C, self.key, self.views = C, key, {}

    def __call__(self, x):
        if isinstance(x, (list, tuple)):
            return type(x)(self(v) for v in x)
        if not hasattr(x, "_tn_device_key") or x._tn_device_key != self.key:
            return x
        if id(x) not in self.views:
            span = _span(x)
            flat = self.C._tn_empty([span], x._tn_dtype_code, "cpu", 0)
            nbytes = span * x.element_size()
            if nbytes:
                self.C._tn_copy_bytes(flat, x, nbytes)
            view = flat._tn_as_strided(list(x._tn_sizes), list(x._tn_strides), 0, None)
            self.views[id(x)] = (x, view, nbytes)
        return self.views[id(x)][1]

    def write_back(self, outs):
        for o in outs:
            if o is not None and id(o) in self.views:
                dev, host, nbytes = self.views[id(o)]
                if nbytes:
                    self.C._tn_copy_bytes(dev, host, nbytes)


def run_on_cpu(C, op, args, outs, device_key):
    """Runs aten `op` on the cpu backend for operands on `device_key`: each device operand's span
    copied to the host (one host tensor per tensor object, so in-place aliasing survives), the cpu
    kernel, the outputs' spans copied back; counted per device and operator (`report()`) and
    warned about once. Returns `[(output index, tensor)]` for outputs the cpu kernel allocated
    itself (data-dependent shapes), moved to the device. Public: a backend reaches it through
    `registrar.run_on_cpu` when its own kernel declines a call (the npu backend's rejected nodes)."""
    _count(device_key, op, stacklevel=5)
    host = _HostCopies(C, device_key)
    allocated = C._tn_launch(op, host(tuple(args)), host(tuple(outs)))
    host.write_back(outs)
    moved = []
    if allocated:
        key, index = _device_of(args, outs)
        index = index if key == device_key else 0
        for i, t in allocated:  # outputs the cpu kernel allocated itself (data-dependent shapes)
            d = C._tn_empty(list(t._tn_sizes), t._tn_dtype_code, device_key, index)
            C._tn_copy_bytes(d, t, _span(t) * t.element_size())
            moved.append((i, d))
    return moved


def launch(C, op, args, outs):
    """`_tn_launch` on the CPU for a device without a kernel for `op`; None when the operands'
    device did not opt in (the caller then re-raises the refusal)."""
    key, _ = _device_of(args, outs)
    if key not in DEVICES or C._tn_has_kernel(op, key):
        return None
    return run_on_cpu(C, op, args, outs, key)

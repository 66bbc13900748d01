"""softmax and log_softmax (and their backward forms, _safe_softmax): the device's kernel, with
upstream's half-to-float option.
"""

from __future__ import annotations

from .. import base as B
from .. import impl


_door = B.door


def _torch():
    import torch

    return torch


def _cast(t, dtype):
    if dtype is None or B.dtype_of(t) is dtype:
        return t
    return B.call("_to_copy", t, dtype)


@impl("_softmax")
def _softmax(self, dim, half_to_float):
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, max(nd, 1))  # a scalar takes dims -1 and 0
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        _softmax_dtype_check("softmax", self, d, nd)
        B.launch("_softmax", (self, d, half_to_float), (out,))
    return out


@impl("_log_softmax")
def _log_softmax(self, dim, half_to_float):
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, max(nd, 1))  # a scalar takes dims -1 and 0
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        _softmax_dtype_check("log_softmax", self, d, nd)
        B.launch("_log_softmax", (self, d, half_to_float), (out,))
    return out


def _softmax_dtype_check(name, self, d, nd):
    """upstream's kernels take floating dtypes only (no promotion of integers: softmax.int casts
    only to an explicit dtype), named by whether the dim is the last."""
    B.floating_kernel_only(self, f"{name}_lastdim_kernel_impl" if d == nd - 1 or not nd else f"{name}_kernel_impl")


def _float_input(self, dtype):
    return self if dtype is None else _cast(self, dtype)


@impl("softmax.int")
def softmax(self, dim, dtype=None):
    return _door("_softmax", _float_input(self, dtype), dim, False)


@impl("log_softmax.int")
def log_softmax(self, dim, dtype=None):
    return _door("_log_softmax", _float_input(self, dtype), dim, False)


@impl("_safe_softmax")
def safe_softmax(self, dim, dtype=None):
    """softmax, with rows that are -inf throughout giving zeros instead of NaN."""
    out = _door("_softmax", _float_input(self, dtype), dim, False)
    masked = _door("all.dim", _door("eq.Scalar", self, float("-inf")), dim, True)
    return _door("masked_fill.Scalar", out, masked, 0.0)


def _opmath(*ts):
    """bfloat16/float16 operands widened to float32, as upstream's CPU kernels compute them."""
    torch = _torch()
    return [t.float() if t.dtype in (torch.bfloat16, torch.float16) else t for t in ts]


@impl("_softmax_backward_data")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    go, o = _opmath(grad_output, output)
    g = go * o
    out = g - o * g.sum(dim, keepdim=True)
    return out if out.dtype == input_dtype else out.to(input_dtype)


@impl("_log_softmax_backward_data")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    from .. import base as B

    sizes = list(output._tn_sizes)
    if (sizes and B.dtype_of(output) is B.F32 and B.dtype_of(grad_output) is B.F32 and input_dtype is B.F32
            and list(grad_output._tn_sizes) == sizes and B.wrap_dim(dim, len(sizes)) == len(sizes) - 1
            and output._tn_is_contiguous() and grad_output._tn_is_contiguous()
            and B.C._tn_has_kernel("_log_softmax_backward_data", output._tn_device_key)):
        # one kernel in upstream's vector order (the cpu backend's, on AVX2/AVX512 machines)
        out = B.empty(sizes, B.F32, B.device_of(output))
        try:
            B.launch("_log_softmax_backward_data", (grad_output, output, dim), (out,))
            return out
        except NotImplementedError:
            pass  # a machine without upstream's vector paths: the composite below
    go, o = _opmath(grad_output, output)
    out = go - o.exp() * go.sum(dim, keepdim=True)
    return out if out.dtype == input_dtype else out.to(input_dtype)

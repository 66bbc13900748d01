"""Counting operators: histc and bincount, composed through the door as upstream's CPU kernels
(SummaryOps.cpp, HistogramKernel.cpp) compute them."""

from __future__ import annotations

import math
from .. import base as B
from .. import impl
from ..elementwise.arithmetic import _type_name


D = B.door


def _scalar(value, dtype, device):
    return B.call("full", [], value, dtype, device=device)


def _histc_range(x, lo, hi):
    """upstream's select_outer_bin_edges: min == max means the data's range, widened by 1 if empty."""
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and B.numel(x._tn_sizes):
        lo, hi = D("min", x).item(), D("max", x).item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    return lo, hi


@impl("histc")
def histc(self, bins=100, min=0, max=0):
    d, dev = B.dtype_of(self), B.device_of(self)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_name(d)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    x = D("reshape", self, [-1])
    lo, hi = _histc_range(x, float(min), float(max))
    # upstream's LINEAR_INTERPOLATION: pos = (elt - leftmost) * bins / (rightmost - leftmost), in the
    # input's dtype, truncated; an element equal to the right edge goes to the last bin
    left, right = _scalar(lo, d, dev), _scalar(hi, d, dev)
    inside = D("logical_and", D("ge.Tensor", x, left), D("le.Tensor", x, right))
    scaled = D("div.Tensor", D("mul.Scalar", D("sub.Tensor", x, left, 1), bins), D("sub.Tensor", right, left, 1))
    pos = D("clamp", B.call("_to_copy", scaled, B.I64), None, bins - 1)
    hist = B.call("full", [bins], 0, d, device=dev)
    picked = D("masked_select", pos, inside)
    ones = B.call("full", list(picked._tn_sizes), 1, d, device=dev)
    return D("index_put_", hist, [picked], ones, True)


@impl("bincount")
def bincount(self, weights=None, minlength=0):
    """upstream's _bincount_cpu: int64 counts, or the weights summed per bin in float32 (float32
    weights) or float64 (any other), added in input order."""
    d = B.dtype_of(self)
    if d.is_floating_point or d.is_complex or d is B.BOOL:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_type_name(d)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    sizes, dev = list(self._tn_sizes), B.device_of(self)
    if len(sizes) == 1 and sizes[0] == 0:
        return B.call("zeros", [minlength], B.I64, device=dev)
    if len(sizes) != 1 or D("min", self).item() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (len(weights._tn_sizes) != 1 or weights._tn_sizes[0] != sizes[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    nbins = max(D("max", self).item() + 1, minlength)
    index = B.call("_to_copy", self, B.I64)
    if weights is None:
        return D("index_add", B.call("zeros", [nbins], B.I64, device=dev), 0, index,
                 B.call("ones", sizes, B.I64, device=dev), 1)
    wd = B.F32 if B.dtype_of(weights) is B.F32 else B.F64
    w = weights if B.dtype_of(weights) is wd else B.call("_to_copy", weights, wd)
    return D("index_add", B.call("zeros", [nbins], wd, device=dev), 0, index, w, 1)

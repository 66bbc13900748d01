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
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if not d.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_name(d)}'")
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


# --- histogram / histogramdd: upstream's Histogram.cpp and HistogramKernel.cpp ----------------------

def _dt_name(d):
    """The dtype as upstream's messages print a caffe2::TypeMeta."""
    name = str(d).replace("torch.", "")
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}.get(name, name)


def _check_dd(x, bins, weight):
    """upstream's histogramdd_check_inputs."""
    if x.dim() < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got {x.dim()}")
    n = x.size(-1)
    if len(bins) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional histogram "
                           f"but got {len(bins)}")
    for dim, b in enumerate(bins):
        if b.dtype != x.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_dt_name(x.dtype)} and bins for dimension {dim} with dtype "
                               f"{_dt_name(b.dtype)}")
        if b.dim() != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{b.dim()} dimensions in the bins tensor for dimension {dim}")
        if b.numel() <= 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got "
                               f"{b.numel()} elements in the bins tensor for dimension {dim}")
    if weight is not None:
        if weight.dtype != x.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({_dt_name(x.dtype)}), and "
                               f"weight({_dt_name(weight.dtype)})")
        wsizes = list(weight.shape) or [1]
        if list(x.shape[:-1]) != wsizes:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               "input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(x.shape)} and weight with shape {list(weight.shape)}")


def _check_counts(counts):
    for dim, c in enumerate(counts):
        if c <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {c} for dimension {dim}")


def _outer_edges(x2, rng):
    """upstream's select_outer_bin_edges over the (M, N) input: the range given, the data's extrema
    per column, or [0, 1] for empty input; an empty range widened by 0.5 each side."""
    n = x2.size(-1)
    lo, hi = [0.0] * n, [1.0] * n
    if rng is not None:
        if len(rng) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have {2 * n} "
                               f"elements, but got {len(rng)}")
        lo, hi = [float(v) for v in rng[0::2]], [float(v) for v in rng[1::2]]
    elif x2.numel() > 0:
        if not x2.dtype.is_floating_point or x2.dtype.itemsize == 2:
            raise NotImplementedError(f"\"histogramdd\" not implemented for '{_type_name(x2.dtype)}'")
        mn, mx = D("aminmax", x2, 0, False)
        lo, hi = [float(v) for v in mn.tolist()], [float(v) for v in mx.tolist()]
    for dim in range(n):
        if not (math.isfinite(lo[dim]) and math.isfinite(hi[dim])):
            raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{lo[dim]:g}, {hi[dim]:g}] is not finite")
        if lo[dim] > hi[dim]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo[dim]:g} max "
                               f"{hi[dim]:g} for dimension {dim}")
        if lo[dim] == hi[dim]:
            lo[dim] -= 0.5
            hi[dim] += 0.5
    return lo, hi


def _linspace_edges(x, lo, hi, counts):
    return [B.call("linspace", lo[d], hi[d], counts[d] + 1, x.dtype, device=B.device_of(x)) for d in range(len(counts))]


def _counts(x, edges, weight, density):
    """upstream's histogramdd_cpu_contiguous: each row's bin per dimension is the upper bound of its
    value among the edges, less one (the last edge closing the last bin); rows with a value outside
    [first edge, last edge] or NaN are skipped; weights (or ones) added into the bins in the input's
    dtype. (The linear-progression path's local search agrees with this search for linspace edges.)"""
    import torch

    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_name(x.dtype)}'")
    n = x.size(-1)
    sizes = [e.numel() - 1 for e in edges]
    rows = x.reshape(-1, n)
    hist = torch.zeros(sizes, dtype=x.dtype, device=x.device)
    if n == 0:
        return hist
    keep = torch.ones(rows.size(0), dtype=torch.bool, device=x.device)
    flat = torch.zeros(rows.size(0), dtype=torch.int64, device=x.device)
    stride = 1
    for d in range(n - 1, -1, -1):
        col, e = rows[:, d], edges[d].contiguous()
        keep = keep & (col >= e[0]) & (col <= e[-1])
        pos = torch.searchsorted(e, col.contiguous(), right=True) - 1
        pos = torch.where(pos == e.numel() - 1, pos - 1, pos)
        flat = flat + pos * stride
        stride *= sizes[d]
    w = weight.reshape(-1) if weight is not None else torch.ones(rows.size(0), dtype=x.dtype, device=x.device)
    idx = flat[keep]
    hist = hist.reshape(-1).index_put_((idx,), w[keep], accumulate=True).reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for d in range(n):
            shape = [1] * n
            shape[d] = sizes[d]
            hist = hist / edges[d].diff().reshape(shape)
    return hist


@impl("histogram.bins_tensor")
def histogram_bins_tensor(self, bins, weight=None, density=False):
    x = self.reshape(self.numel(), 1)
    w = weight.reshape(weight.numel()) if weight is not None else None
    _check_dd(x, [bins], w)
    _check_counts([bins.numel() - 1])
    edges = bins.clone()
    return _counts(x, [edges], w, density), edges


@impl("histogram.bin_ct")
def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):
    x = self.reshape(self.numel(), 1)
    w = weight.reshape(weight.numel()) if weight is not None else None
    _check_counts([bins])
    lo, hi = _outer_edges(x, range)
    edges = _linspace_edges(x, lo, hi, [bins])
    _check_dd(x, edges, w)
    return _counts(x, edges, w, density), edges[0]


def _dd_edges(self, bins, range):
    if self.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n = self.size(-1)
    x2 = self.reshape(-1, n)
    lo, hi = _outer_edges(x2, range)
    if len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    return _linspace_edges(self, lo, hi, list(bins))


@impl("_histogramdd_bin_edges")
def histogramdd_bin_edges(self, bins, range=None, weight=None, density=False):
    return _dd_edges(self, bins, range)


@impl("_histogramdd_from_bin_cts")
def histogramdd_from_bin_cts(self, bins, range=None, weight=None, density=False):
    edges = _dd_edges(self, bins, range)
    _check_dd(self, edges, weight)
    _check_counts([e.numel() - 1 for e in edges])
    return _counts(self, edges, weight, density)


@impl("_histogramdd_from_bin_tensors")
def histogramdd_from_bin_tensors(self, bins, weight=None, density=False):
    if self.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    _check_dd(self, list(bins), weight)
    _check_counts([b.numel() - 1 for b in bins])
    return _counts(self, [b.contiguous() for b in bins], weight, density)


@impl("histogramdd")
def histogramdd(self, bins, range=None, weight=None, density=False):
    from torch.return_types import histogramdd as ret

    edges = histogramdd_bin_edges(self, bins, range, weight, density)
    return ret((histogramdd_from_bin_cts(self, bins, range, weight, density), tuple(edges)))


@impl("histogramdd.int_bins")
def histogramdd_int_bins(self, bins, range=None, weight=None, density=False):
    return histogramdd(self, [bins] * self.size(-1), range, weight, density)


@impl("histogramdd.TensorList_bins")
def histogramdd_tensor_bins(self, bins, range=None, weight=None, density=False):
    from torch.return_types import histogramdd as ret

    # upstream ignores `range` when the edges are given
    return ret((histogramdd_from_bin_tensors(self, bins, weight, density), tuple(bins)))

"""scatter_reduce.two, index_reduce, segment_reduce and scatter.reduce (issue 4): reductions into
positions chosen by an index, element by element in index order as upstream's CPU loops do, in
Python numbers (integers exact; floating values accumulated in float64 and rounded once, within
upstream's float32 accumulation error)."""

from __future__ import annotations

import math

from . import base as B
from . import impl

D = B.door
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _torch():
    import torch

    return torch


def _strides(shape):
    st, acc = [0] * len(shape), 1
    for i in reversed(range(len(shape))):
        st[i] = acc
        acc *= shape[i]
    return st


def _flat(t):
    torch = _torch()
    if t.dtype == torch.bool:
        return [bool(v) for v in t.reshape(-1).tolist()]
    return t.detach().contiguous().reshape(-1).tolist()


def _combine(reduce, is_float):
    if reduce in ("sum", "mean"):
        return lambda a, b: a + b
    if reduce == "prod":
        return lambda a, b: a * b

    def pick(a, b, better):
        if is_float and (a != a or b != b):
            return math.nan
        return b if better(b, a) else a

    if reduce == "amax":
        return lambda a, b: pick(a, b, lambda x, y: x > y)
    return lambda a, b: pick(a, b, lambda x, y: x < y)


def _identity(reduce, is_float, dtype):
    torch = _torch()
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if is_float:
        return -math.inf if reduce == "amax" else math.inf
    info = torch.iinfo(dtype) if dtype != torch.bool else None
    if info is None:
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def _to_tensor(vals, shape, dtype):
    torch = _torch()
    if B.numel(shape) == 0:
        return torch.empty(shape, dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)
    return torch.tensor(vals, dtype=dtype).reshape(shape)


def _scatter(self, dim, index, src, reduce, include_self, name):
    """The core of scatter_reduce/scatter(reduce=): returns the reduced values as a tensor."""
    torch = _torch()
    if index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    nd = self.dim()
    if nd == 0 and index.dim() == 0:
        src1 = src.reshape(1) if isinstance(src, torch.Tensor) else src
        return _scatter(self.reshape(1), 0, index.reshape(1), src1, reduce, include_self, name).reshape([])
    d = B.wrap_dim(dim, nd)
    shape = list(self.shape)
    if index.dim() != max(nd, 1) and index.numel():
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    is_float = self.is_floating_point()
    out = _flat(self)
    ishape = list(index.shape)
    if B.numel(ishape) == 0:
        return self.clone()
    idx = _flat(index)
    srcv = _flat(src) if isinstance(src, torch.Tensor) else None
    if srcv is None and not is_float:
        src = bool(src) if self.dtype == torch.bool else int(src)  # the value converted to self's dtype
    sstrides = _strides(list(src.shape)) if srcv is not None else None
    ostrides = _strides(shape) if shape else [1]
    size_d = shape[d] if shape else 1
    istr = _strides(ishape)
    comb = _combine(reduce, is_float)
    ident = _identity(reduce, is_float, self.dtype)
    counts = {}
    touched = set()
    for flat_i, target in enumerate(idx):
        if target < -size_d or target >= size_d:
            raise RuntimeError(f"index {target} is out of bounds for dimension {d} with size {size_d}")
        if target < 0:
            target += size_d
        rem, o, s = flat_i, 0, 0
        for k in range(len(ishape)):
            c = rem // istr[k]
            rem -= c * istr[k]
            o += (target if k == d else c) * (ostrides[k] if shape else 0)
            if sstrides is not None:
                s += c * sstrides[k]
        v = srcv[s] if srcv is not None else src
        if o not in touched:
            touched.add(o)
            if not include_self:
                out[o] = ident
            counts[o] = 0
        out[o] = comb(out[o], v)
        counts[o] += 1
    if reduce == "mean":
        for o in touched:
            n = counts[o] + (1 if include_self else 0)
            out[o] = out[o] / n if is_float else out[o] // n
    return _to_tensor(out, shape, self.dtype)


@impl("scatter_reduce.two")
def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if self.dtype != src.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    return _scatter(self, dim, index, src, reduce, include_self, "scatter_reduce")


@impl("scatter_reduce_.two")
def scatter_reduce_(self, dim, index, src, reduce, include_self=True):
    return self.copy_(scatter_reduce(self, dim, index, src, reduce, include_self))


_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}


@impl("scatter.reduce")
def scatter_reduce_src(self, dim, index, src, reduce):
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    return _scatter(self, dim, index, src, _SCATTER_REDUCE[reduce], True, "scatter")


@impl("scatter.value_reduce")
def scatter_value_reduce(self, dim, index, value, reduce):
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    return _scatter(self, dim, index, value, _SCATTER_REDUCE[reduce], True, "scatter")


@impl("scatter_.reduce")
def scatter_reduce_src_(self, dim, index, src, reduce):
    return self.copy_(scatter_reduce_src(self, dim, index, src, reduce))


@impl("scatter_.value_reduce")
def scatter_value_reduce_(self, dim, index, value, reduce):
    return self.copy_(scatter_value_reduce(self, dim, index, value, reduce))


@impl("index_reduce")
def index_reduce(self, dim, index, source, reduce, include_self=True):
    """self.select(dim, index[i]) reduced with source.select(dim, i), i in order: a scatter with
    the index broadcast along every other dimension."""
    torch = _torch()
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if self.dtype != source.dtype:
        raise RuntimeError("index_reduce_(): self and source must have the same scalar type")
    nd = self.dim()
    if nd == 0:
        return index_reduce(self.reshape(1), 0, index, source.reshape(-1), reduce, include_self).reshape([])
    d = B.wrap_dim(dim, nd)
    src = source if source.dim() else source.reshape(1)
    shape = [src.shape[k] if k == d else self.shape[k] for k in range(nd)]
    view = [1] * nd
    view[d] = index.numel()
    full_index = index.to(torch.int64).reshape(view).expand(shape)
    return _scatter(self, d, full_index, src, reduce, include_self, "index_reduce")


@impl("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, include_self=True):
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self))


# --- segment_reduce -------------------------------------------------------------------------------

@impl("segment_reduce")
def segment_reduce(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    torch = _torch()
    if reduce not in ("sum", "mean", "max", "min", "prod"):
        raise RuntimeError(f"unsupported reduction {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    ax = B.wrap_dim(axis, data.dim())
    if offsets is not None:
        offs = offsets
        lens = offs[..., 1:] - offs[..., :-1]
    else:
        lens = lengths
    seg_dim = lens.dim() - 1
    if ax != seg_dim:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of lengths or offsets")
    is_float = data.is_floating_point()
    name = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    comb = _combine(name, is_float)
    if initial is not None:
        empty_val = initial
    else:
        empty_val = {"sum": 0.0, "prod": 1.0, "mean": math.nan, "max": -math.inf, "min": math.inf}[reduce]
    lead = list(data.shape[:ax])
    rest = list(data.shape[ax + 1:])
    nseg = lens.shape[-1]
    nlead, nrest, L = B.numel(lead), B.numel(rest), data.shape[ax]
    dv = data.detach().to(torch.float64).reshape(nlead, L, nrest).tolist() if nlead * L * nrest else None
    lv = lens.reshape(nlead, nseg).tolist() if nlead * nseg else [[] for _ in range(nlead)]
    out = []
    for b in range(nlead):
        start = 0
        rows = []
        for sgi in range(nseg):
            n = int(lv[b][sgi])
            vals = []
            for r in range(nrest):
                if n == 0:
                    vals.append(empty_val)
                    continue
                acc = dv[b][start][r]
                for j in range(start + 1, start + n):
                    acc = comb(acc, dv[b][j][r])
                if initial is not None:
                    acc = comb(acc, initial) if reduce != "mean" else acc + initial
                if reduce == "mean":
                    acc = acc / n
                vals.append(acc)
            rows.append(vals)
            start += n
        out.append(rows)
    return _to_tensor(out, lead + [nseg] + rest, data.dtype)

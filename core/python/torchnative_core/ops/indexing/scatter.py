"""Writes into positions chosen by an index: scatter (src, value, add, reduce), scatter_reduce.two,
index_reduce, segment_reduce, index_add/index_fill/index_copy, and the *_scatter embeddings
(diagonal, select, slice, as_strided). The reductions are the device's scatter-reduce kernel (the
cpu backend's scatter.rs: the index in order, as upstream's CPU loop); the rest compose through
the door as upstream's CPU kernels compute them.
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl
from ...surface.types import CONTIGUOUS_FORMAT
from ..elementwise.math import _num


D = B.door


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _torch():
    import torch

    return torch


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


def _to_tensor(vals, shape, dtype):
    torch = _torch()
    if B.numel(shape) == 0:
        return torch.empty(shape, dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)
    return torch.tensor(vals, dtype=dtype).reshape(shape)


def _scatter(self, dim, index, src, reduce, include_self, name):
    """The core of scatter_reduce/scatter(reduce=)/index_reduce: checks, then the device's
    kernel (the cpu backend's scatter.rs) into a new tensor of self's shape."""
    torch = _torch()
    if index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    nd = self.dim()
    if nd == 0 and index.dim() == 0:
        src1 = src.reshape(1) if isinstance(src, torch.Tensor) else src
        return _scatter(self.reshape(1), 0, index.reshape(1), src1, reduce, include_self, name).reshape([])
    d = B.wrap_dim(dim, nd)
    if index.dim() != max(nd, 1) and index.numel():
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if reduce == "mean" and self.dtype == torch.bool:
        # upstream's kernel dispatch refuses bool means; with no index its floor division does
        op = "scatter_gather_tensor_cpu_reduce_mean" if index.numel() else "div_floor_cpu"
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\'')
    if index.numel() == 0:
        return self.clone()
    if not isinstance(src, torch.Tensor):  # a scalar value, converted to self's dtype, at every index
        src = torch.full((), src, dtype=self.dtype, device=self.device).expand(index.shape)
    index = index.to(torch.int64)
    out = B.empty(list(self.shape), self.dtype, B.device_of(self))
    if out.numel():
        B.launch("scatter_reduce.two", (self, d, index, src, reduce, include_self), (out,))
    return out


@impl("scatter_reduce.two")
def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    B.wrap_dim(dim, max(len(self._tn_sizes), 1))
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
    B.wrap_dim(dim, max(len(self._tn_sizes), 1))
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    return _scatter(self, dim, index, src, _SCATTER_REDUCE[reduce], True, "scatter")


@impl("scatter.value_reduce")
def scatter_value_reduce(self, dim, index, value, reduce):
    B.wrap_dim(dim, max(len(self._tn_sizes), 1))
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
    if self.dtype == torch.bool:  # upstream's index_func_ kernel dispatch has no bool
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    nd = self.dim()
    if nd == 0:
        return index_reduce(self.reshape(1), 0, index, source.reshape(-1), reduce, include_self).reshape([])
    d = B.wrap_dim(dim, nd)
    src = source if source.dim() else source.reshape(1)
    shape = [src.shape[k] if k == d else self.shape[k] for k in range(nd)]
    view = [1] * nd
    view[d] = index.numel()
    if index.numel() and bool(((index < 0) | (index >= self.shape[d])).any()):
        raise IndexError("index out of range in self")
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


# --- scatter family through index_put_ (a full coordinate index per element of `index`) ------

def _coords(index, dim):
    """For scatter-like ops: the index tuple addressing self at (index along dim, position
    elsewhere) for every element of `index`."""
    nd = len(index._tn_sizes)
    dev = B.device_of(index)
    out = []
    for d in range(nd):
        if d == dim:
            out.append(index)
        else:
            shape = [1] * nd
            shape[d] = index._tn_sizes[d]
            ar = D("view", B.call("arange", index._tn_sizes[d], B.I64, device=dev), shape)
            out.append(D("expand", ar, list(index._tn_sizes), False))
    return out


def _src_for(index, src):
    sl = src
    for d, n in enumerate(index._tn_sizes):
        sl = D("slice.Tensor", sl, d, 0, n, 1)
    return sl


def _scatter_checks(self, dim, index, src=None, bounds=True):
    """scatter_meta_impl's checks in its order (dim wrapped, index and src dtypes, shapes), then
    (`bounds`) the kernel's bounds check on the index values; returns the wrapped dim."""
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, max(nd, 1))
    has_src = isinstance(src, B.C.TensorBase)
    n = B.numel(index._tn_sizes)
    if n and B.dtype_of(index)._tn_name not in ("int64", "int32"):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if has_src and B.dtype_of(src) is not B.dtype_of(self):
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not n:
        return d
    ni = len(index._tn_sizes)
    if max(nd, 1) != max(ni, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    isz, ssz = list(index._tn_sizes) or [1], list(self._tn_sizes) or [1]
    srcsz = (list(src._tn_sizes) or [1]) if has_src else None
    for k in range(len(isz)):
        if (k != d and isz[k] > ssz[k]) or (srcsz is not None and (len(srcsz) <= k or isz[k] > srcsz[k])):
            if srcsz is None:
                raise RuntimeError(f"Expected index {list(index._tn_sizes)} to be no larger than self "
                                   f"{list(self._tn_sizes)} apart from dimension {d}")
            raise RuntimeError(f"Expected index {list(index._tn_sizes)} to be no larger than self {list(self._tn_sizes)} "
                               f"apart from dimension {d} and to be no larger size than src {list(src._tn_sizes)}")
    if bounds and self._tn_device_key != "meta":
        lo, hi = int(D("min", index)), int(D("max", index))
        for v in (lo, hi):
            if v < 0 or v >= ssz[d]:
                raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {ssz[d]}")
    return d


def _scatter_0dim(op, self, dim, index, src):
    """A 0-dim self scatters as a 1-element vector (a view, so `self` is updated)."""
    x, idx, s = _as_1d(self, index, src)
    D(op, x, dim, idx, s)
    return self


@impl("scatter_.src")
def scatter_src_(self, dim, index, src):
    _scatter_checks(self, dim, index, src)
    if not B.numel(index._tn_sizes):
        return self
    if not self._tn_sizes:
        return _scatter_0dim("scatter_.src", self, dim, index, src)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    return D("index_put_", self, _coords(index, d), _src_for(index, src), False)


@impl("scatter.src")
def scatter_src(self, dim, index, src):
    return scatter_src_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, src)


@impl("scatter_.value")
def scatter_value_(self, dim, index, value):
    _scatter_checks(self, dim, index)
    if not B.numel(index._tn_sizes):
        return self
    if not self._tn_sizes:
        return _scatter_0dim("scatter_.value", self, dim, index, value)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    vals = B.call("full", list(index._tn_sizes), value, B.dtype_of(self), device=B.device_of(self))
    return D("index_put_", self, _coords(index, d), vals, False)


@impl("scatter.value")
def scatter_value(self, dim, index, value):
    return scatter_value_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, value)


def _native_sum(self, index):
    """Whether scatter_add can be the device's scatter_reduce sum with self included: the same
    per-position order; in float32/float64 a sum kept in the type is upstream's scatter_add
    (the reduced types round after every addition there, integers wrap in their own type)."""
    return (B.dtype_of(self) in (B.F32, B.F64) and self._tn_sizes and B.numel(index._tn_sizes)
            and B.C._tn_has_kernel("scatter_reduce.two", B.device_of(self).type))


def _scatter_sum(self, dim, index, src):
    """self with src added at index along dim, into a new tensor (the kernel checks the bounds)."""
    d = _scatter_checks(self, dim, index, src, bounds=False)
    torch = _torch()
    if not index._tn_sizes:
        index, src = index.reshape(1), src.reshape(-1)
    out = B.empty(list(self._tn_sizes), B.dtype_of(self), B.device_of(self))
    B.launch("scatter_reduce.two", (self, d, index.to(torch.int64), src, "sum", True), (out,))
    return out


@impl("scatter_add_")
def scatter_add_(self, dim, index, src):
    if _native_sum(self, index):
        return D("copy_", self, _scatter_sum(self, dim, index, src), False)
    _scatter_checks(self, dim, index, src)
    if not B.numel(index._tn_sizes):
        return self
    if not self._tn_sizes:
        return _scatter_0dim("scatter_add_", self, dim, index, src)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    return D("index_put_", self, _coords(index, d), _src_for(index, src), True)


@impl("scatter_add")
def scatter_add(self, dim, index, src):
    if _native_sum(self, index):
        return _scatter_sum(self, dim, index, src)
    return scatter_add_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, src)


@impl("index_add_")
def index_add_(self, dim, index, source, alpha=1):
    if (self._tn_sizes and _native_index_add(self, source)
            and self._tn_storage_id not in (source._tn_storage_id, index._tn_storage_id)):
        # the kernel adds into `self` itself (the embedding's backward: no second buffer, no copy);
        # the door has refused an internally overlapping `self` already
        _index_add_checks(self, dim, index, source)
        B.launch("index_add", (self, B.wrap_dim(dim, len(self._tn_sizes)), index, source, alpha), (self,))
        self._tn_bump_version()
        return self
    return D("copy_", self, D("index_add", self, dim, index, source, alpha), False)


def _native_index_add(self, source):
    return (B.dtype_of(self) in (B.F32, B.F64) and len(source._tn_sizes) == len(self._tn_sizes)
            and B.C._tn_has_kernel("index_add", B.device_of(self).type))


def _as_1d(self, *rest):
    """A 0-dim tensor as a 1-element vector (upstream treats its dim 0 so), with the others."""
    return [D("reshape", t, [1]) if isinstance(t, B.C.TensorBase) and not t._tn_sizes else t for t in (self, *rest)]


def _index_add_checks(self, dim, index, source):
    """index_func_meta_impl (TensorAdvancedIndexing.cpp) for index_add, in its order."""
    d = B.wrap_dim(dim, max(len(self._tn_sizes), 1))
    if len(index._tn_sizes) > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {len(index._tn_sizes)} with "
                         f"type: {B.scalar_type_name(B.dtype_of(index))} and size: {list(index._tn_sizes)}")
    if B.dtype_of(index)._tn_name not in ("int64", "int32"):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{B.scalar_type_name(B.dtype_of(index))}")
    if B.dtype_of(self) is not B.dtype_of(source):
        raise RuntimeError(f"index_add_(): self ({B.scalar_type_name(B.dtype_of(self))}) and source "
                           f"({B.scalar_type_name(B.dtype_of(source))}) must have the same scalar type")
    ssz = list(source._tn_sizes) or [1]
    n = B.numel(index._tn_sizes)
    if d >= len(ssz) or n != ssz[d]:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({ssz[d] if d < len(ssz) else 1}), for dim: {d}")
    if len(self._tn_sizes) != len(source._tn_sizes) and (len(self._tn_sizes) > 1 or len(source._tn_sizes) > 1
                                                       or not self._tn_sizes):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(self._tn_sizes)} source.shape = {list(source._tn_sizes)}")


@impl("index_add")
def index_add(self, dim, index, source, alpha=1):
    _index_add_checks(self, dim, index, source)
    if not self._tn_sizes:
        x, src = _as_1d(self, source)
        return D("reshape", D("index_add", x, dim, index, src, alpha), [])
    d = B.wrap_dim(dim, len(self._tn_sizes))
    if _native_index_add(self, source):
        # upstream's index_add_cpu_ loop natively: the slices added in index order
        out = B.empty(list(self._tn_sizes), B.dtype_of(self), B.device_of(self))
        B.launch("index_add", (self, d, index, source, alpha), (out,))
        return out
    if len(self._tn_sizes) > 1 and B.numel(index._tn_sizes):
        # upstream checks every index first (index_put_ below would wrap negative ones)
        n = self._tn_sizes[d]
        bad = D("nonzero", D("bitwise_or.Tensor", D("lt.Scalar", index, 0), D("ge.Scalar", index, n)))
        if B.numel(bad._tn_sizes):
            k = int(D("select.int", D("index.Tensor", index, [D("reshape", bad, [-1])]), 0, 0).item())
            raise RuntimeError(f"index {k} is out of bounds for dimension {d} with size {n}")
    moved = D("movedim.int", D("clone", self, CONTIGUOUS_FORMAT), d, 0)
    src = D("movedim.int", source if alpha == 1 else D("mul.Tensor", source, _num(alpha)), d, 0)
    out = D("index_put_", D("clone", moved, CONTIGUOUS_FORMAT), [index], src, True)
    return D("movedim.int", out, 0, d)


def _index_fill_checks(self, dim, index):
    if B.dtype_of(index) is not B.I64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = B.wrap_dim(dim, max(len(self._tn_sizes), 1))
    if len(index._tn_sizes) > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return d


@impl("index_fill_.int_Scalar")
def index_fill_(self, dim, index, value):
    _index_fill_checks(self, dim, index)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    view = D("movedim.int", self, d, 0)
    D("index_put_", view, [index], B.call("scalar_tensor", value, B.dtype_of(self), device=B.device_of(self)), False)
    return self


@impl("index_fill.int_Scalar")
def index_fill(self, dim, index, value):
    _index_fill_checks(self, dim, index)
    if not self._tn_sizes:  # a 0-dim tensor: index [0] fills it, an empty index leaves it
        B.wrap_dim(dim, 0)
        hit = B.numel(index._tn_sizes) > 0
        return B.call("full_like", self, value) if hit else D("clone", self, CONTIGUOUS_FORMAT)
    return index_fill_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, value)


@impl("index_fill.int_Tensor")
def index_fill_tensor(self, dim, index, value):
    if value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s).")
    return D("index_fill.int_Scalar", self, dim, index, value.item())


@impl("index_copy")
def index_copy(self, dim, index, source):
    torch = _torch()
    B.wrap_dim(dim, max(len(self._tn_sizes), 1))
    if index.dim() > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got {})".format(index.dim()))
    if index.dtype != torch.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got " + str(index.dtype).replace("torch.", "").capitalize())
    if self.dtype != source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) {self.dtype} and (source) {source.dtype}")
    if self.dim() == 0:
        out = self.reshape(1).clone()
        src = source.reshape(1)
        return index_copy(out, 0, index.reshape(-1), src).reshape([])
    d = B.wrap_dim(dim, self.dim())
    moved = self.movedim(d, 0).clone()
    src = (source if source.dim() else source.reshape(1)).movedim(d, 0) if source.dim() else source.reshape(1)
    D("index_put_", moved, [index.reshape(-1)], src, False)
    return moved.movedim(0, d).contiguous()


@impl("index_copy_")
def index_copy_(self, dim, index, source):
    return self.copy_(index_copy(self, dim, index, source))


@impl("diagonal_scatter")
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    out = self.clone()
    _copy_exact(out.diagonal(offset, dim1, dim2), src)
    return out


@impl("select_scatter")
def select_scatter(self, src, dim, index):
    out = self.clone()
    _copy_exact(out.select(dim, index), src)
    return out


def _copy_exact(view, src):
    """The *_scatter operators' copy: src has the slice's size (no broadcast), as upstream checks."""
    if list(view._tn_sizes) != list(src._tn_sizes):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src._tn_sizes)}, "
                           f"slice size = {list(view._tn_sizes)}")
    D("copy_", view, src, False)


@impl("slice_scatter")
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    out = self.clone()
    _copy_exact(D("slice.Tensor", out, dim, start, end, step), src)
    return out


@impl("as_strided_scatter")
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    out = self.clone()
    view = out.as_strided(size, stride, storage_offset if storage_offset is not None else out.storage_offset())
    view.copy_(src)
    return out

"""Indexing operators: index_select, gather, take, take_along_dim, embedding, one_hot, masked_fill,
masked_select, masked_scatter, advanced indexing (index.Tensor, index_put_), nonzero, argwhere,
where(cond), put, _unsafe_masked_index.
"""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import impl
from ..shape.join import _alloc_by_kernel


D = B.door



@impl("argwhere")
def argwhere(self):
    return D("nonzero", self)


@impl("where")
def where_single(condition):
    if not condition._tn_sizes:  # upstream's nonzero_numpy: a 0-dim condition as a 1-element one
        condition = D("unsqueeze", condition, 0)
    idx = D("nonzero", condition)
    return [D("select.int", idx, 1, i) for i in range(len(condition._tn_sizes))]


@impl("take")
def take(self, index):
    """self as flat, indexed by `index` (negative indices count from the end, as upstream)."""
    if B.dtype_of(index) is not B.I64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {B.scalar_type_name(B.dtype_of(index))}")
    n = B.numel(self._tn_sizes)
    flat = D("reshape", index, [-1])
    if B.numel(flat._tn_sizes):
        lo, hi = D("min", flat).item(), D("max", flat).item()
        for bad in (lo, hi):
            if bad < -n or bad >= n:
                raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
        flat = D("where.self", D("lt.Scalar", flat, 0), D("add.Scalar", flat, n, 1), flat)
    return D("view", D("index_select", D("reshape", self, [-1]), 0, flat), list(index._tn_sizes))


@impl("one_hot")
def one_hot(self, num_classes=-1):
    # upstream's aten/src/ATen/native/Onehot.cpp, checks in its order and words
    if B.dtype_of(self) is not B.I64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    sizes, dev = list(self._tn_sizes), B.device_of(self)
    if not B.numel(sizes):
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return B.empty(sizes + [num_classes], B.dtype_of(self), dev)
    if D("min", self).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = D("max", self).item() + 1
    elif D("max", self).item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = B.call("full", sizes + [num_classes], 0, B.dtype_of(self), device=dev)
    return D("scatter_.value", out, -1, D("unsqueeze", self, -1), 1)


@impl("take_along_dim")
def take_along_dim(self, indices, dim=None):
    # upstream's TensorAdvancedIndexing.cpp: gather after broadcasting all but `dim`
    if dim is None:
        return D("gather", D("reshape", self, [-1]), 0, D("reshape", indices, [-1]), False)
    if len(self._tn_sizes) != len(indices._tn_sizes):
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {len(self._tn_sizes)} dimensions for input, and {len(indices._tn_sizes)} "
                           "dimensions for indices")
    if B.dtype_of(indices) is not B.I64:
        from ..elementwise.arithmetic import _type_name

        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {_type_name(B.dtype_of(indices))}")
    d = B.wrap_dim(dim, len(self._tn_sizes))
    self_sizes, idx_sizes = list(self._tn_sizes), list(indices._tn_sizes)
    self_sizes[d] = indices._tn_sizes[d]
    idx_b = D("broadcast_to", indices, B.broadcast_shapes(self_sizes, indices._tn_sizes))
    idx_sizes[d] = self._tn_sizes[d]
    self_b = D("broadcast_to", self, B.broadcast_shapes(idx_sizes, self._tn_sizes))
    # upstream wraps the indices along `dim` modulo its size (any value, not only -size..-1);
    # the flattened form above does not
    size = self_b._tn_sizes[d]
    if size:
        idx_b = D("remainder.Scalar", idx_b, size)
    return D("gather", self_b, d, idx_b, False)


@impl("index_select")
def index_select(self, dim, index):
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, nd) if nd else 0
    if len(index._tn_sizes) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if B.dtype_of(index)._tn_name not in ("int64", "int32"):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = list(self._tn_sizes)
    n = B.numel(index._tn_sizes)
    if nd:
        shape[d] = n
    out = B.empty(shape, B.dtype_of(self), B.device_of(self))
    B.launch("index_select", (self, d, index), (out,))
    return out


@impl("gather")
def gather(self, dim, index, sparse_grad=False):
    B.wrap_dim(dim, max(len(self._tn_sizes), 1))
    out = B.empty(index._tn_sizes, B.dtype_of(self), B.device_of(self))
    if not B.numel(index._tn_sizes):
        B.wrap_dim(dim, max(len(self._tn_sizes), 1))  # upstream's meta step wraps dim; the rest is skipped
        return out
    if B.dtype_of(index)._tn_name not in ("int64", "int32"):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if B.dtype_of(index) is not B.I64:  # upstream accepts int32 indices; the kernel reads int64
        index = B.call("_to_copy", index, B.I64)
    src, idx, res = self, index, out
    if len(self._tn_sizes) + len(index._tn_sizes) == 1:  # upstream's ensure_nonempty_dim: 0-dim is (1,)
        src, idx, res = (D("view", t, [1]) if not t._tn_sizes else t for t in (self, index, out))
    B.launch("gather", (src, dim, idx, sparse_grad), (res,))
    return out


@impl("embedding")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if len(weight._tn_sizes) != 2:
        raise RuntimeError("'weight' must be 2-D")
    if B.dtype_of(indices)._tn_name not in ("int64", "int32"):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {B.tensor_type_string(indices)} instead (while checking arguments for embedding)"
        )
    out = B.empty(list(indices._tn_sizes) + [weight._tn_sizes[1]], B.dtype_of(weight), B.device_of(weight))
    if B.numel(out._tn_sizes):
        B.launch("embedding", (weight, indices, padding_idx, scale_grad_by_freq, sparse), (out,))
    return out


@impl("nonzero_numpy")
def nonzero_numpy(self):
    # upstream: a 0-d tensor is read as one element
    return D("unbind.int", D("nonzero", D("unsqueeze", self, 0) if not self._tn_sizes else self), 1)


@impl("embedding_renorm_")
def embedding_renorm_(self, indices, max_norm, norm_type):
    """upstream's embedding_renorm_cpu_: each distinct row named by `indices`, in sorted order,
    scaled by max_norm / (norm + 1e-7) where its norm exceeds max_norm."""
    tail = " (while checking arguments for embedding_renorm_)"
    if len(self._tn_sizes) != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {len(self._tn_sizes)}-dimensional tensor for "
                           f"argument #1 'self'{tail}")
    if B.dtype_of(indices)._tn_name not in ("int64", "int32"):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {B.tensor_type_string(indices)} instead{tail}")
    for i in sorted(set(D("reshape", indices, [-1]).tolist())):
        row = D("select.int", self, 0, i)
        norm = float(D("linalg_vector_norm", row, norm_type, None, False, None))
        if norm > max_norm:
            D("mul_.Scalar", row, max_norm / (norm + 1e-7))
    return self


@impl("masked_fill_.Scalar")
def masked_fill_(self, mask, value):
    if B.dtype_of(mask) is not B.BOOL:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {B.dtype_of(mask)}")
    m = B.expand_to(mask, list(self._tn_sizes))
    if B.numel(self._tn_sizes):
        B.launch("masked_fill_.Scalar", (self, m, value), (self,))
    self._tn_bump_version()
    return self


@impl("masked_fill.Scalar")
def masked_fill(self, mask, value):
    shape = B.broadcast_shapes(self._tn_sizes, mask._tn_sizes)
    out = D("clone", B.expand_to(self, shape), CONTIGUOUS_FORMAT)
    return masked_fill_(out, mask, value)


@impl("masked_fill_.Tensor")
def masked_fill_tensor_(self, mask, value):
    if len(value._tn_sizes) != 0:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {len(value._tn_sizes)} dimension(s)."
        )
    return masked_fill_(self, mask, value.item())


@impl("masked_fill.Tensor")
def masked_fill_tensor(self, mask, value):
    return masked_fill(self, mask, value.item())


def _check_indices(self, indices):
    """upstream's checkIndexTensorTypes and make_info: index tensors are int64, int32, uint8 or
    bool, and (a mask counting its dims, None one) no more than self's dims."""
    n = 0
    for t in indices:
        if t is None:
            n += 1
            continue
        d = B.dtype_of(t)._tn_name
        if d not in ("int64", "int32", "uint8", "bool"):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        n += len(t._tn_sizes) if d in ("uint8", "bool") else 1
    if n > len(self._tn_sizes):
        raise IndexError(f"too many indices for tensor of dimension {len(self._tn_sizes)} (got {n})")


@impl("index.Tensor")
def index(self, indices):
    indices = list(indices)
    if not indices:
        raise IndexError("at least one index must be provided")
    _check_indices(self, indices)
    return _alloc_by_kernel("index.Tensor", (self, indices))[0]


@impl("_index_put_impl_")
def index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    return index_put_(self, indices, values, accumulate)  # `unsafe` only skips a CUDA-side check


@impl("index_put_")
def index_put_(self, indices, values, accumulate=False):
    _check_indices(self, [t for t in indices])
    if B.dtype_of(values) is not B.dtype_of(self):
        values = B.call("_to_copy", values, B.dtype_of(self))
    B.launch("index_put_", (self, list(indices), values, accumulate), (self,))
    self._tn_bump_version()
    return self


@impl("index_put")
def index_put(self, indices, values, accumulate=False):
    return index_put_(D("clone", self, CONTIGUOUS_FORMAT), indices, values, accumulate)


@impl("masked_select")
def masked_select(self, mask):
    if B.dtype_of(mask) is not B.BOOL:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    # 0-dim operands select from a 1-element vector, so the result is (1,) or (0,), as upstream's
    shape = list(B.broadcast_shapes(self._tn_sizes, mask._tn_sizes)) or [1]
    return D("index.Tensor", B.expand_to(self, shape), [B.expand_to(mask, shape)])


@impl("nonzero")
def nonzero(self):
    return _alloc_by_kernel("nonzero", (self,))[0]


# --- the rest ----------------------------------------------------------------------------------

def _masked_scatter_into(out, mask, source):
    """upstream's masked_scatter_ on `out` (mask already of out's shape): its checks, then the
    source's leading elements written, in row-major order, where the mask is set."""
    import torch

    from ..elementwise.arithmetic import _type_name

    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")
    if out.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_name(out.dtype)} and {_type_name(source.dtype)}")
    idx = mask.reshape(-1).nonzero().reshape(-1)
    if idx.numel() > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if idx.numel():
        flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
        flat.index_put_((idx,), source.reshape(-1)[: idx.numel()])
        if not out.is_contiguous():
            out.copy_(flat.view(out.shape))
    return out


@impl("masked_scatter")
def masked_scatter(self, mask, source):
    """upstream: self and mask expanded to their common shape, a contiguous clone scattered into."""
    import torch

    shape = B.broadcast_shapes(list(mask._tn_sizes), list(self._tn_sizes))  # expand_outplace(mask, self)
    out = self.expand(shape).clone(memory_format=torch.contiguous_format)
    return _masked_scatter_into(out, mask.expand(shape), source)


@impl("masked_scatter_")
def masked_scatter_(self, mask, source):
    return _masked_scatter_into(self, mask.expand_as(self), source)


def _clamped(self, indices):
    """_unsafe_masked_index's clamp: each index into [-size, size - 1] of its dimension."""
    out = []
    for d, idx in enumerate(indices):
        out.append(None if idx is None else idx.clamp(-self.shape[d], self.shape[d] - 1))
    return out


@impl("_unsafe_masked_index")
def unsafe_masked_index(self, mask, indices, fill):
    import torch

    # where(mask, self[indices], fill), indexing only in bounds (indices clamped)
    return torch.ops.aten.index.Tensor(self, _clamped(self, indices)).masked_fill(mask.logical_not(), fill)


@impl("_unsafe_masked_index_put_accumulate")
def unsafe_masked_index_put_accumulate(self, mask, indices, values):
    masked = values.masked_fill(mask.logical_not(), 0)
    return self.index_put(_clamped(self, indices), masked, accumulate=True)


@impl("nonzero_static")
def nonzero_static(self, size, fill_value=-1):
    import torch

    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size: {size}")
    nz = torch.nonzero(self)
    n = nz.shape[0]
    if n >= size:
        return nz[:size].clone()
    pad = torch.full((size - n, nz.shape[1]), fill_value, dtype=nz.dtype)
    return torch.cat([nz, pad], 0)


@impl("put")
def put(self, index, source, accumulate=False):
    if B.dtype_of(index) is not B.I64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {B.scalar_type_name(B.dtype_of(index))}")
    if B.dtype_of(source) is not B.dtype_of(self):
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{B.scalar_type_name(B.dtype_of(self))} and source.dtype = "
                           f"{B.scalar_type_name(B.dtype_of(source))}")
    if B.numel(source._tn_sizes) != B.numel(index._tn_sizes):
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {B.numel(source._tn_sizes)}, index.numel() = {B.numel(index._tn_sizes)}")
    out = self.clone()
    flat = out.reshape(-1)
    idx = index.reshape(-1)
    n = flat.shape[0]
    if idx.numel() and (int(idx.max()) >= n or int(idx.min()) < -n):
        bad = int(idx.max()) if int(idx.max()) >= n else int(idx.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    idx = idx.remainder(n) if n else idx
    flat = flat.index_put((idx,), source.reshape(-1), accumulate=accumulate)
    return flat.reshape(self.shape)

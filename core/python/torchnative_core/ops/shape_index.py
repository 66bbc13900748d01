"""Joining and indexing operators: cat, stack, index_select, gather, embedding, masked_*,
advanced indexing (index.Tensor, index_put_), nonzero, sort, topk."""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

from . import base as B
from . import impl


_door = B.door


def _alloc_by_kernel(kernel, args, nouts=1):
    """For data-dependent output shapes: the kernel allocates through ctx.alloc_output."""
    got = B.launch(kernel, args, (None,) * nouts)
    outs = [None] * nouts
    for i, t in got:
        outs[i] = t
    return outs


@impl("cat")
def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # legacy: 1-d empty tensors are skipped for shape purposes
    shaped = [t for t in tensors if not (len(t._tn_sizes) == 1 and t._tn_sizes[0] == 0)]
    ref = shaped[0] if shaped else tensors[0]
    nd = len(ref._tn_sizes)
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = B.wrap_dim(dim, nd)
    # cat promotes as if every input were dimensioned (no 0-dim/wrapped-number tiers)
    out_dtype = None
    for t in tensors:
        out_dtype = B.promote_types(out_dtype, B.dtype_of(t))
    size = list(ref._tn_sizes)
    total = 0
    for i, t in enumerate(tensors):
        if len(t._tn_sizes) == 1 and t._tn_sizes[0] == 0 and nd != 1:
            continue
        if len(t._tn_sizes) != nd:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {nd} and {len(t._tn_sizes)}"
            )
        for j in range(nd):
            if j != d and t._tn_sizes[j] != size[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {size[j]} but got size "
                    f"{t._tn_sizes[j]} for tensor number {i} in the list."
                )
        total += t._tn_sizes[d]
    size[d] = total
    out = B.empty(size, out_dtype, B.device_of(tensors[0]))
    if B.numel(size):
        B.launch("cat", (tensors, d), (out,))
    return out


@impl("stack")
def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = list(tensors[0]._tn_sizes)
    for i, t in enumerate(tensors):
        if list(t._tn_sizes) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {first} at entry 0 and {list(t._tn_sizes)} at entry {i}"
            )
    d = B.wrap_dim(dim, len(first) + 1)
    return _door("cat", [_door("unsqueeze", t, d) for t in tensors], d)


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
    out = B.empty(index._tn_sizes, B.dtype_of(self), B.device_of(self))
    if not B.numel(index._tn_sizes):
        B.wrap_dim(dim, max(len(self._tn_sizes), 1))  # upstream's meta step wraps dim; the rest is skipped
        return out
    if B.dtype_of(index)._tn_name not in ("int64", "int32"):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if B.dtype_of(index) is not B.I64:  # upstream accepts int32 indices; the kernel reads int64
        index = _door("_to_copy", index, B.I64, None, None, None, False, None)
    src, idx, res = self, index, out
    if len(self._tn_sizes) + len(index._tn_sizes) == 1:  # upstream's ensure_nonempty_dim: 0-dim is (1,)
        src, idx, res = (_door("view", t, [1]) if not t._tn_sizes else t for t in (self, index, out))
    B.launch("gather", (src, dim, idx, sparse_grad), (res,))
    return out


@impl("embedding")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if len(weight._tn_sizes) != 2:
        raise RuntimeError("'weight' must be 2-D")
    if B.dtype_of(indices)._tn_name not in ("int64", "int32"):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {B.dtype_of(indices)} instead (while checking arguments for embedding)"
        )
    out = B.empty(list(indices._tn_sizes) + [weight._tn_sizes[1]], B.dtype_of(weight), B.device_of(weight))
    if B.numel(out._tn_sizes):
        B.launch("embedding", (weight, indices, padding_idx, scale_grad_by_freq, sparse), (out,))
    return out


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
    out = _door("clone", B.expand_to(self, shape), CONTIGUOUS_FORMAT)
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


@impl("index.Tensor")
def index(self, indices):
    return _alloc_by_kernel("index.Tensor", (self, list(indices)))[0]


@impl("index_put_")
def index_put_(self, indices, values, accumulate=False):
    if B.dtype_of(values) is not B.dtype_of(self):
        values = _door("_to_copy", values, B.dtype_of(self), None, None, None, False, None)
    B.launch("index_put_", (self, list(indices), values, accumulate), (self,))
    self._tn_bump_version()
    return self


@impl("index_put")
def index_put(self, indices, values, accumulate=False):
    return index_put_(_door("clone", self, CONTIGUOUS_FORMAT), indices, values, accumulate)


@impl("masked_select")
def masked_select(self, mask):
    if B.dtype_of(mask) is not B.BOOL:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    # 0-dim operands select from a 1-element vector, so the result is (1,) or (0,), as upstream's
    shape = list(B.broadcast_shapes(self._tn_sizes, mask._tn_sizes)) or [1]
    return _door("index.Tensor", B.expand_to(self, shape), [B.expand_to(mask, shape)])


@impl("nonzero")
def nonzero(self):
    return _alloc_by_kernel("nonzero", (self,))[0]


def _sort_like(kernel, self, args, shape):
    values = B.empty(shape, B.dtype_of(self), B.device_of(self))
    idx = B.empty(shape, B.I64, B.device_of(self))
    if B.numel(shape):
        B.launch(kernel, (self, *args), (values, idx))
    return values, idx


@impl("sort")
def sort(self, dim=-1, descending=False):
    from torch.return_types import sort as sort_t

    d = B.wrap_dim(dim, len(self._tn_sizes))
    return sort_t(_sort_like("sort", self, (d, descending), list(self._tn_sizes)))


@impl("sort.stable")
def sort_stable(self, stable=None, dim=-1, descending=False):
    from torch.return_types import sort as sort_t

    d = B.wrap_dim(dim, len(self._tn_sizes))
    return sort_t(_sort_like("sort.stable", self, (stable, d, descending), list(self._tn_sizes)))


@impl("argsort")
def argsort(self, dim=-1, descending=False):
    return sort(self, dim, descending)[1]


@impl("argsort.stable")
def argsort_stable(self, stable, dim=-1, descending=False):
    return sort_stable(self, stable, dim, descending)[1]


@impl("topk")
def topk(self, k, dim=-1, largest=True, sorted=True):
    from torch.return_types import topk as topk_t

    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, nd)
    size = self._tn_sizes[d] if nd else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    shape = list(self._tn_sizes)
    if nd:
        shape[d] = k
    return topk_t(_sort_like("topk", self, (k, d, largest, sorted), shape))


@impl("flatten_dense_tensors")
def flatten_dense_tensors(tensors):
    """torch/csrc/utils/tensor_flatten.h: every tensor made contiguous and flattened, then one cat."""
    flat = [B.door("view", B.door("contiguous", t, CONTIGUOUS_FORMAT), [-1]) for t in tensors]
    return flat[0] if len(flat) == 1 else B.door("cat", flat, 0)


@impl("unflatten_dense_tensors")
def unflatten_dense_tensors(flat, tensors):
    """The inverse: views of `flat` shaped as each tensor; an empty one gets a fresh empty tensor of its shape."""
    outs, offset = [], 0
    for t in tensors:
        n = t.numel()
        if n == 0:
            outs.append(B.empty(list(t.shape), flat.dtype, flat.device))
        else:
            outs.append(B.door("view", B.door("narrow", flat, 0, offset, n), list(t.shape)))
            offset += n
    return outs

"""Sorting and searching: sort, argsort, topk, msort, searchsorted/bucketize, unique (_unique2,
unique_consecutive).
"""

from __future__ import annotations

from .. import base as B
from .. import impl


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


@impl("msort")
def msort(self):
    return self.sort(0).values


# --- search ------------------------------------------------------------------------------------

@impl("searchsorted.Tensor")
def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    import torch

    if side is not None:
        right = side == "right"
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    if seq.dim() == 1:
        cmp = seq.reshape([1] * self.dim() + [-1])
        v = self.unsqueeze(-1)
    else:
        cmp = seq.unsqueeze(-2)
        v = self.unsqueeze(-1)
    hits = (cmp <= v) if right else (cmp < v)
    out = hits.sum(-1)
    return out.to(torch.int32 if out_int32 else torch.int64)


@impl("searchsorted.Scalar")
def searchsorted_scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    import torch

    return searchsorted(sorted_sequence, torch.scalar_tensor(self, dtype=sorted_sequence.dtype), out_int32=out_int32,
                        right=right, side=side, sorter=sorter)


@impl("bucketize.Tensor")
def bucketize(self, boundaries, out_int32=False, right=False):
    return searchsorted(boundaries, self, out_int32=out_int32, right=right)


@impl("bucketize.Scalar")
def bucketize_scalar(self, boundaries, out_int32=False, right=False):
    return searchsorted_scalar(boundaries, self, out_int32=out_int32, right=right)


@impl("_unique2")
def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """Sorted unique values (upstream's CPU _unique2 sorts whatever `sorted` says), the inverse
    indices in the input's shape and the counts."""
    import torch

    flat = self.reshape(-1)
    if flat.numel() == 0:
        empty = torch.empty(0, dtype=torch.int64)
        return flat.clone(), torch.empty(self.shape, dtype=torch.int64) if return_inverse else empty, empty
    vals, order = flat.sort(stable=True)
    first = torch.ones(vals.shape, dtype=torch.bool)
    if vals.numel() > 1:
        first[1:] = vals[1:] != vals[:-1]
    uniq = vals[first]
    group = first.to(torch.int64).cumsum(0) - 1
    inverse = torch.empty_like(group).index_put_((order,), group).reshape(self.shape) if return_inverse \
        else torch.empty(0, dtype=torch.int64)
    counts = torch.zeros(uniq.numel(), dtype=torch.int64).index_add_(0, group, torch.ones_like(group)) \
        if return_counts else torch.empty(0, dtype=torch.int64)
    return uniq, inverse, counts


@impl("unique_consecutive")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive_cpu: a new group wherever an element (a slice along `dim`) differs
    from the one before it (`!=`, so each NaN is its own group)."""
    import torch

    if dim is None:
        x = self.reshape(-1)
        n = x.shape[0]
        keys = x
    else:
        d = dim % max(self.dim(), 1)
        if any(s_ == 0 for i, s_ in enumerate(self.shape) if i != d):
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
        x = self.movedim(d, 0)
        n = x.shape[0]
        inner = 1
        for s_ in x.shape[1:]:
            inner *= s_
        keys = x.reshape(n, inner)
    if n == 0:
        inv_shape = list(self.shape) if dim is None else [0]
        return (x.clone() if dim is None else self.clone(), torch.zeros(inv_shape, dtype=torch.int64),
                torch.zeros(0, dtype=torch.int64))
    change = keys[1:] != keys[:-1]
    if dim is not None:
        change = change.any(1) if keys.shape[1] else torch.zeros(n - 1, dtype=torch.bool)
    first = torch.cat([torch.ones(1, dtype=torch.bool), change])
    out = x[first]
    if dim is not None:
        out = out.movedim(0, d)
    inverse = first.to(torch.int64).cumsum(0) - 1
    if dim is None:
        inverse = inverse.reshape(self.shape)
    starts = first.nonzero().reshape(-1)
    counts = torch.cat([starts[1:], torch.tensor([n])]) - starts
    return out, inverse, counts

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

def _searchsorted_checks(seq, values, out_int32, right, side, sorter):
    """searchsorted_pre_check (BucketizationUtils.h), in upstream's order; the side chosen."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                               "right was True")
    if sorter is not None:
        if list(sorter.shape) != list(seq.shape):
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
        if B.dtype_of(sorter) is not B.I64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{B.scalar_type_name(B.dtype_of(sorter))}")
        if sorter.numel() and (int(sorter.min()) < 0 or int(sorter.max()) >= sorter.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    if not (values.dim() > 0 or (values.numel() == 1 and seq.dim() == 1)):
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is "
                           f"1, but we got boundaries tensor dim({seq.dim()}) and input value's dim({values.dim()}) "
                           f"numel({values.numel()})")
    if seq.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    if seq.dim() != 1 and (seq.dim() != values.dim() or list(seq.shape[:-1]) != list(values.shape[:-1])):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           f"of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    return side == "right" if side is not None else bool(right)


@impl("searchsorted.Tensor")
def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """Upstream's binary search (cus_lower_bound / cus_upper_bound), run on every value at once:
    on a sequence that is not sorted it lands where upstream's lands."""
    import torch

    right = _searchsorted_checks(sorted_sequence, self, out_int32, right, side, sorter)
    out_dtype = torch.int32 if out_int32 else torch.int64
    common = torch.result_type(sorted_sequence, self)
    seq, values = sorted_sequence.to(common), self.to(common)
    m = seq.shape[-1]
    start = torch.zeros(values.shape, dtype=torch.int64)
    end = torch.full(values.shape, m, dtype=torch.int64)
    if m == 0 or not values.numel():
        return start.to(out_dtype)
    flat = seq.dim() == 1

    def at(index):
        if sorter is not None:
            index = sorter.take(index) if flat else sorter.gather(-1, index)
        return seq.take(index) if flat else seq.gather(-1, index)

    while True:
        active = start < end
        if not bool(active.any()):
            break
        mid = start + ((end - start) >> 1)
        mid_val = at(mid.clamp(max=m - 1))
        go_right = ~(mid_val > values) if right else ~(mid_val >= values)
        start = torch.where(active & go_right, mid + 1, start)
        end = torch.where(active & ~go_right, mid, end)
    return start.to(out_dtype)


@impl("searchsorted.Scalar")
def searchsorted_scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    import torch

    # upstream's scalar_to_tensor: a 0-dim double/long/bool/complex tensor, not a wrapped number
    dt = (torch.bool if isinstance(self, bool) else torch.int64 if isinstance(self, int)
          else torch.complex128 if isinstance(self, complex) else torch.float64)
    return searchsorted(sorted_sequence, torch.scalar_tensor(self, dtype=dt), out_int32=out_int32, right=right,
                        side=side, sorter=sorter)


def _check_boundaries(boundaries):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")


@impl("bucketize.Tensor")
def bucketize(self, boundaries, out_int32=False, right=False):
    _check_boundaries(boundaries)
    return searchsorted(boundaries, self, out_int32=out_int32, right=right)


@impl("bucketize.Scalar")
def bucketize_scalar(self, boundaries, out_int32=False, right=False):
    _check_boundaries(boundaries)
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
    if dim is None or (d == 0 and self.dim() == 1):
        # upstream's flat template fills only what was asked for; the rest stays empty
        empty = torch.zeros(0, dtype=torch.int64)
        inverse = inverse if return_inverse else empty
        counts = counts if return_counts else empty
    return out, inverse, counts

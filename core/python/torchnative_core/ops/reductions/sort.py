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
    """unique_consecutive_cpu: a new group wherever an element differs from the one before it
    (`!=`, so each NaN is its own group); with a dim (other than 0 of a 1-D tensor), upstream's
    unique_dim_consecutive."""
    import torch

    if dim is not None and not (dim == 0 and self.dim() == 1):
        return _unique_dim(self, dim, True)
    x = self.reshape(-1)
    n = x.shape[0]
    if n == 0:
        return x.clone(), torch.zeros(list(self.shape), dtype=torch.int64), torch.zeros(0, dtype=torch.int64)
    first = torch.cat([torch.ones(1, dtype=torch.bool), x[1:] != x[:-1]])
    inverse, counts = _groups(first, n)
    # upstream's flat template fills only what was asked for; the rest stays empty
    empty = torch.zeros(0, dtype=torch.int64)
    return (x[first], inverse.reshape(self.shape) if return_inverse else empty,
            counts if return_counts else empty)


def _groups(first, n):
    """(group of each element, size of each group) from the marks of each group's first."""
    import torch

    inverse = first.to(torch.int64).cumsum(0) - 1
    starts = first.nonzero().reshape(-1)
    return inverse, torch.cat([starts[1:], torch.tensor([n])]) - starts


def _size_dim(t, dim):
    """TensorBase::size(dim)'s wrap: a 0-d tensor has no dimension to name."""
    if not t._tn_sizes:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return B.wrap_dim(dim, len(t._tn_sizes))


@impl("unique_dim")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    return _unique_dim(self, dim, False)


@impl("unique_dim_consecutive")
def unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    return _unique_dim(self, dim, True)


def _unique_dim(self, dim, consecutive):
    """upstream's _unique_dim_cpu_template: the slices along `dim` (sorted lexicographically by
    `<` and `>` unless `consecutive`), a new group wherever a slice differs from the previous
    one (at::equal: a slice holding NaN is its own group); inverse and counts always computed."""
    import functools

    import torch

    if B.dtype_of(self).is_complex:
        raise NotImplementedError(f"\"unique_dim\" not implemented for '{B.scalar_type_name(B.dtype_of(self))}'")
    d = _size_dim(self, dim)
    sizes = list(self.shape)
    zeros = sizes.count(0)
    if sizes[d] == 0:
        if zeros != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
        return torch.empty(sizes, dtype=self.dtype), torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64)
    if zeros:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    x = self.movedim(d, 0)
    n = x.shape[0]
    keys = x.reshape(n, -1)
    order = list(range(n))
    if not consecutive:
        rows = keys.tolist()

        def compare(a, b):
            for u, v in zip(rows[a], rows[b]):
                if u < v:
                    return -1
                if u > v:
                    return 1
            return 0

        order.sort(key=functools.cmp_to_key(compare))
    perm = torch.tensor(order, dtype=torch.int64)
    ordered = keys.index_select(0, perm)
    change = (ordered[1:] != ordered[:-1]).any(1) if keys.shape[1] else torch.zeros(n - 1, dtype=torch.bool)
    first = torch.cat([torch.ones(1, dtype=torch.bool), change])
    groups, counts = _groups(first, n)
    inverse = torch.empty(n, dtype=torch.int64).index_put_((perm,), groups)
    out = x.index_select(0, perm[first]).movedim(0, d)
    return out, inverse, counts

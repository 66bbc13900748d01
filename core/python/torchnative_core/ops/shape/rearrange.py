"""Operators that copy elements into a new arrangement: flip, fliplr/flipud, rot90, roll, repeat,
tile, repeat_interleave, tril/triu, diag/diagflat.
"""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import impl


D = B.door


@impl("flip")
def flip(self, dims):
    out = self
    seen = set()
    for d in dims:
        d = B.wrap_dim(d, len(self._tn_sizes))
        if d in seen:  # dim_list_to_bitset
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
        n = self._tn_sizes[d]
        idx = B.call("arange.start_step", n - 1, -1, -1, B.I64, device=B.device_of(self))
        out = D("index_select", out, d, idx)
    return out if dims else D("clone", self, CONTIGUOUS_FORMAT)


def _tri(self, diagonal, upper):
    sizes = list(self._tn_sizes)
    if len(sizes) < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 dimensions")
    r, c = sizes[-2], sizes[-1]
    dev = B.device_of(self)
    rows = D("view", B.call("arange", r, B.I64, device=dev), [r, 1])
    cols = D("view", B.call("arange", c, B.I64, device=dev), [1, c])
    diff = D("sub.Tensor", cols, rows, 1)
    keep = D("ge.Scalar", diff, diagonal) if upper else D("le.Scalar", diff, diagonal)
    return D("where.self", keep, self, B.call("zeros_like", self))


@impl("tril")
def tril(self, diagonal=0):
    return _tri(self, diagonal, False)


@impl("triu")
def triu(self, diagonal=0):
    return _tri(self, diagonal, True)


@impl("roll")
def roll(self, shifts, dims=()):
    shifts, dims = list(shifts), list(dims or ())
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not dims:
        flat = D("reshape", self, [-1])
        return D("view", roll(flat, shifts, [0]), list(self._tn_sizes))
    out = self
    for s, d in zip(shifts, dims):
        d = B.wrap_dim(d, len(self._tn_sizes))
        n = self._tn_sizes[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = D("cat", [D("slice.Tensor", out, d, n - s, n, 1), D("slice.Tensor", out, d, 0, n - s, 1)], d)
    return out if out is not self else D("clone", self, CONTIGUOUS_FORMAT)


@impl("repeat")
def repeat(self, repeats):
    sizes = list(self._tn_sizes)
    if len(repeats) < len(sizes):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    pad = len(repeats) - len(sizes)
    sizes = [1] * pad + sizes
    # upstream multiplies in int64 (wrapping) and refuses the result's sizes before anything runs
    target = [(r * s + 2**63) % 2**64 - 2**63 for r, s in zip(repeats, sizes)]
    if any(t < 0 for t in target):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(target)}: {target}")
    if B.numel(target) * B.dtype_of(self).itemsize >= 2**63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={target}")
    x = D("view", D("contiguous", self, None), sizes)
    # interleave a broadcast dim before each dim, expand it to the repeat count, then merge
    x = D("view", x, [v for s in sizes for v in (1, s)])
    x = D("expand", x, [v for r, s in zip(repeats, sizes) for v in (r, s)], False)
    # upstream's repeat always returns a new contiguous tensor; a reshape of the expanded view can
    # stay a view with zero strides (a repeated size-1 dimension), so it is materialised
    return D("contiguous", D("reshape", x, [r * s for r, s in zip(repeats, sizes)]), None)


@impl("tile")
def tile(self, dims):
    dims = list(dims)
    if len(dims) < len(self._tn_sizes):
        dims = [1] * (len(self._tn_sizes) - len(dims)) + dims
    return D("repeat", self, dims)


# --- repeat_interleave (upstream: Repeat.cpp / TensorShape.cpp) ----------------------------------

@impl("repeat_interleave.Tensor")
def repeat_interleave_indices(repeats, output_size=None):
    """The index i repeated repeats[i] times: [0, 0, 1, 2, 2, 2] for [2, 1, 3]."""
    d = B.dtype_of(repeats)
    if d._tn_name not in ("int32", "int64"):  # upstream dispatches on the index types first
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{B.scalar_type_name(d)}'")
    if len(repeats._tn_sizes) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    counts = [int(v) for v in repeats.tolist()]
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    total = sum(counts)
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    from ..factories.tensors import from_python_values

    flat = [i for i, c in enumerate(counts) for _ in range(c)]
    return from_python_values(flat, [total], d)


@impl("repeat_interleave.self_Tensor")
def repeat_interleave_tensor(self, repeats, dim=None, output_size=None):
    if len(repeats._tn_sizes) > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    x = self if dim is not None else D("reshape", self, [-1])
    d = B.wrap_dim(dim if dim is not None else 0, len(x._tn_sizes))
    if len(repeats._tn_sizes) == 0 or (len(repeats._tn_sizes) == 1 and repeats._tn_sizes[0] == 1):
        repeats = D("expand", D("reshape", repeats, [1]), [x._tn_sizes[d] if x._tn_sizes else 1], False)
    elif repeats._tn_sizes[0] != (x._tn_sizes[d] if x._tn_sizes else 1):
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats._tn_sizes[0]} and input.size({d}) = {x._tn_sizes[d]}")
    return D("index_select", x, d, D("repeat_interleave.Tensor", repeats, output_size))


@impl("repeat_interleave.self_int")
def repeat_interleave_int(self, repeats, dim=None, output_size=None):
    """Each slice along `dim` repeated `repeats` times: unsqueeze after dim, expand, copy, flatten."""
    x = self if dim is not None else D("reshape", self, [-1])
    d = B.wrap_dim(dim if dim is not None else 0, len(x._tn_sizes))
    if repeats < 0:
        raise RuntimeError("Repeats can not be negative")
    if not x._tn_sizes:
        x = D("reshape", x, [1])
    u = D("unsqueeze", x, d + 1)
    shape = list(u._tn_sizes)
    shape[d + 1] = repeats
    if output_size is not None and output_size != x._tn_sizes[d] * repeats:
        raise RuntimeError("allocated size does not match required size")
    e = D("contiguous", D("expand", u, shape, False), None)
    return D("flatten.using_ints", e, d, d + 1)


@impl("fliplr")
def fliplr(self):
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip(1)


@impl("flipud")
def flipud(self):
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip(0)


@impl("diag")
def diag(self, diagonal=0):
    import torch

    if self.dim() == 1:
        n = self.shape[0] + abs(diagonal)
        out = torch.zeros(n, n, dtype=self.dtype, device=self.device)
        out.diagonal(diagonal).copy_(self)
        return out
    if self.dim() == 2:
        return self.diagonal(diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.dim()}D")


@impl("diagflat")
def diagflat(self, offset=0):
    return diag(self.reshape(-1), offset)


@impl("rot90")
def rot90(self, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.dim()}")
    d0, d1 = B.wrap_dim(dims[0], self.dim()), B.wrap_dim(dims[1], self.dim())
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = k % 4
    if k == 1:
        return self.flip(d1).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip(d0).transpose(d0, d1)
    return self.clone()

"""Joining and splitting: cat, stack and their variants (hstack, vstack, dstack, column_stack,
concat, block_diag, atleast_*d), tensor_split/hsplit/vsplit/dsplit, meshgrid, cartesian_prod,
combinations, broadcast_tensors, flatten/unflatten_dense_tensors.
"""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import impl


D = B.door



def _torch():
    import torch

    return torch


@impl("hstack")
def hstack(tensors):
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = [t if len(t._tn_sizes) else D("view", t, [1]) for t in tensors]
    return D("cat", ts, 0 if len(ts[0]._tn_sizes) == 1 else 1)


@impl("vstack", "row_stack")
def vstack(tensors):
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    ts = [D("view", t, [1, -1]) if len(t._tn_sizes) < 2 else t for t in tensors]
    return D("cat", ts, 0)


@impl("meshgrid.indexing")
def meshgrid(tensors, indexing="ij"):
    """Upstream's: "xy" swaps the first two inputs, builds the "ij" grids and swaps the first two
    outputs back (no transpose, so the grids are views with upstream's strides)."""
    ts = list(tensors)
    if not ts:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for a, b in zip(ts, ts[1:]):
        if a.dtype != b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    for t in ts:
        if len(t._tn_sizes) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    shape = [B.numel(t._tn_sizes) for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(D("expand", D("view", t, view), shape, False))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


_MESHGRID_WARNED = []


@impl("meshgrid")
def meshgrid_default(tensors):
    if not _MESHGRID_WARNED:  # upstream's TORCH_WARN_ONCE
        import warnings

        _MESHGRID_WARNED.append(True)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=3)
    return meshgrid(tensors, "ij")


def _check_tensor_split(self):
    if not self._tn_sizes:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")


@impl("tensor_split.sections")
def tensor_split(self, sections, dim=0):
    _check_tensor_split(self)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    n = self._tn_sizes[d]
    q, r = divmod(n, sections)
    sizes = [q + 1] * r + [q] * (sections - r)
    return D("split_with_sizes", self, sizes, d)


@impl("tensor_split.indices")
def tensor_split_indices(self, indices, dim=0):
    # upstream: slice(start, index) per index, each start the previous index as given, so a
    # negative index counts from the end as slice reads it
    _check_tensor_split(self)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    bounds = [0] + list(indices) + [self._tn_sizes[d]]
    return [D("slice.Tensor", self, d, a, b, 1) for a, b in zip(bounds, bounds[1:])]


@impl("broadcast_tensors")
def broadcast_tensors(tensors):
    shape = B.broadcast_shapes(*[t._tn_sizes for t in tensors])
    return [D("expand", t, shape, False) for t in tensors]


@impl("concat", "concatenate")
def concat(tensors, dim=0):
    return D("cat", tensors, dim)


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
    for i, t in enumerate(tensors):  # upstream's cat meta looks at every input before the dim
        if not t._tn_sizes:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    shaped = [t for t in tensors if not (len(t._tn_sizes) == 1 and t._tn_sizes[0] == 0)]
    ref = shaped[0] if shaped else tensors[0]
    nd = len(ref._tn_sizes)
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
    d = B.wrap_dim(dim, len(first) + 1)  # the dim is wrapped before the sizes are compared
    for i, t in enumerate(tensors):
        if list(t._tn_sizes) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {first} at entry 0 and {list(t._tn_sizes)} at entry {i}"
            )
    return D("cat", [D("unsqueeze", t, d) for t in tensors], d)


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


@impl("atleast_1d")
def atleast_1d(self):
    return self.reshape(1) if self.dim() == 0 else self


@impl("atleast_2d")
def atleast_2d(self):
    if self.dim() == 0:
        return self.reshape(1, 1)
    return self.unsqueeze(0) if self.dim() == 1 else self


@impl("atleast_3d")
def atleast_3d(self):
    if self.dim() == 0:
        return self.reshape(1, 1, 1)
    if self.dim() == 1:
        return self.unsqueeze(0).unsqueeze(-1)
    return self.unsqueeze(-1) if self.dim() == 2 else self


@impl("atleast_1d.Sequence")
def atleast_1d_seq(tensors):
    return [atleast_1d(t) for t in tensors]


@impl("atleast_2d.Sequence")
def atleast_2d_seq(tensors):
    return [atleast_2d(t) for t in tensors]


@impl("atleast_3d.Sequence")
def atleast_3d_seq(tensors):
    return [atleast_3d(t) for t in tensors]


@impl("column_stack")
def column_stack(tensors):
    import torch

    return torch.hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


@impl("dstack")
def dstack(tensors):
    import torch

    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return torch.cat([atleast_3d(t) for t in tensors], 2)


@impl("block_diag")
def block_diag(tensors):
    import torch

    mats = [t.reshape(1, -1) if t.dim() == 1 else (t.reshape(1, 1) if t.dim() == 0 else t) for t in tensors]
    for t in mats:
        if t.dim() != 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {mats.index(t)} has {t.dim()} dimensions")
    if not mats:  # upstream: an empty [1, 0] of the default dtype
        return torch.empty(1, 0)
    dtype = mats[0].dtype
    for t in mats[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    rows, cols = sum(t.shape[0] for t in mats), sum(t.shape[1] for t in mats)
    out = torch.zeros(rows, cols, dtype=dtype)
    r = c = 0
    for t in mats:
        out[r:r + t.shape[0], c:c + t.shape[1]] = t
        r, c = r + t.shape[0], c + t.shape[1]
    return out


@impl("cartesian_prod")
def cartesian_prod(tensors):
    torch = _torch()
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = torch.meshgrid(*tensors, indexing="ij")
    return torch.stack([g.flatten() for g in grids], 1)


@impl("combinations")
def combinations(self, r=2, with_replacement=False):
    torch = _torch()
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return torch.empty([0], dtype=self.dtype)
    n = self.numel()
    grids = torch.meshgrid(*([self] * r), indexing="ij")
    rng = torch.arange(n, dtype=torch.int64)
    index_grids = torch.meshgrid(*([rng] * r), indexing="ij")
    mask = torch.full(index_grids[0].shape, True, dtype=torch.bool)
    for i in range(r - 1):
        mask = mask * ((index_grids[i] <= index_grids[i + 1]) if with_replacement else (index_grids[i] < index_grids[i + 1]))
    return torch.stack([g.masked_select(mask) for g in grids], 1)


def _split_dims(self, name, need, dim):
    if self.dim() < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension{'s' if need > 1 else ''}, "
                           f"but got a tensor with {self.dim()} dimensions!")
    return dim


def _split_int(self, sections, name, need, dim):
    _split_dims(self, name, need, dim)
    if sections == 0 or self.shape[dim] % sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{self.shape[dim]} is not divisible by the split_size {sections}!")
    return D("tensor_split.sections", self, sections, dim)


for _name, _need, _dimfn in (("hsplit", 1, lambda t: 0 if t.dim() == 1 else 1), ("vsplit", 2, lambda t: 0),
                             ("dsplit", 3, lambda t: 2)):
    impl(_name + ".int")(lambda self, sections, n=_name, k=_need, f=_dimfn: _split_int(self, sections, n, k, f(self)))
    impl(_name + ".array")(lambda self, indices, n=_name, k=_need, f=_dimfn: D(
        "tensor_split.indices", self, list(indices), _split_dims(self, n, k, f(self) if self.dim() >= k else 0)))


@impl("tensor_split.tensor_indices_or_sections")
def tensor_split_tensor(self, tensor_indices_or_sections, dim=0):
    import torch

    t = tensor_indices_or_sections
    if t.device.type != "cpu":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {t.device}")
    if t.dtype != torch.int64:
        names = {"int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "float32": "Float",
                 "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}
        name = str(t.dtype).replace("torch.", "")
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{names.get(name, name)}")
    if t.dim() > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {t.dim()} dims")
    if t.dim() == 0:
        return torch.tensor_split(self, int(t.item()), dim)
    return torch.tensor_split(self, [int(v) for v in t.tolist()], dim)

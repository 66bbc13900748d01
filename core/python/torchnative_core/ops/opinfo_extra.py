"""Small operators OpInfo names that ours refused, each written as upstream defines it:
conv3d with string padding, trapz (trapezoid's old name), tensor_split by a tensor, logspace with
tensor ends, renorm (RenormKernel: the norm in the accumulate type, the scale factor in the
input's), nextafter (bitwise, as std::nextafter). Written with the public torch API: every call
still enters the door."""

from __future__ import annotations

from . import IMPLS, impl
from .nn_ops import _convnd

impl("conv3d.padding")(_convnd(3))


@impl("trapz.x")
def trapz_x(y, x, dim=-1):
    return IMPLS["trapezoid.x"](y, x, dim)


@impl("trapz.dx")
def trapz_dx(y, dx=1.0, dim=-1):
    return IMPLS["trapezoid.dx"](y, dx, dim)


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


def _logspace_tensors(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    sd = start.dim() if isinstance(start, torch.Tensor) else 0
    ed = end.dim() if isinstance(end, torch.Tensor) else 0
    if sd or ed:
        raise RuntimeError(f"logspace only supports 0-dimensional start and end tensors, but got start with {sd} "
                           f"dimension(s) and end with {ed} dimension(s).")
    s = start.item() if isinstance(start, torch.Tensor) else start
    e = end.item() if isinstance(end, torch.Tensor) else end
    return torch.logspace(s, e, steps, base, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


for _name in ("logspace.Tensor_Tensor", "logspace.Tensor_Scalar", "logspace.Scalar_Tensor"):
    impl(_name)(_logspace_tensors)


@impl("renorm")
def renorm(self, p, dim, maxnorm):
    import torch

    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    nd = self.dim()
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    d = dim % nd
    reduce_dims = [i for i in range(nd) if i != d]
    acc = torch.float32 if self.dtype in (torch.bfloat16, torch.float16) else self.dtype
    norm = torch.linalg.vector_norm(self, p, reduce_dims, keepdim=True, dtype=acc)
    # renorm_scale_factor: computed in the accumulate type, stored in the input's
    factor = torch.where(norm > maxnorm, maxnorm / (norm + 1e-7), torch.ones((), dtype=acc)).to(self.dtype)
    return self * factor


_INT_VIEW = {"torch.float64": "int64", "torch.float32": "int32", "torch.float16": "int16", "torch.bfloat16": "int16"}


@impl("nextafter")
def nextafter(self, other):
    import torch

    if self.dtype != other.dtype or str(self.dtype) not in _INT_VIEW:
        raise RuntimeError("nextafter: expected both arguments to be floating tensors of the same dtype")
    shape = torch.broadcast_shapes(self.shape, other.shape)
    x, y = self.expand(shape).contiguous(), other.expand(shape).contiguous()
    it = getattr(torch, _INT_VIEW[str(self.dtype)])
    bits = x.view(it)
    one = torch.ones((), dtype=it)
    # away from zero when y is further from zero on x's side, else towards it
    up = (y > x) == (x > 0)
    stepped = torch.where(up, bits + one, bits - one).view(self.dtype)
    # from zero: the smallest subnormal with y's sign
    tiny = torch.ones(shape, dtype=it).view(self.dtype)
    from_zero = torch.where(y > 0, tiny, -tiny)
    out = torch.where(x == 0, from_zero, stepped)
    out = torch.where(x == y, y, out)
    return torch.where(x.isnan() | y.isnan(), x + y, out)


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


@impl("as_strided_scatter")
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    out = self.clone()
    view = out.as_strided(size, stride, storage_offset if storage_offset is not None else out.storage_offset())
    view.copy_(src)
    return out


@impl("empty_permuted")
def empty_permuted(size, physical_layout, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    if len(size) != len(physical_layout):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout")
    phys = torch.empty([size[p] for p in physical_layout], dtype=dtype, device=device)
    inverse = [0] * len(physical_layout)
    for i, p in enumerate(physical_layout):
        inverse[p] = i
    return phys.permute(inverse)


def _shift(x, dim, half):
    dims = list(range(x.dim())) if dim is None else [d % max(x.dim(), 1) for d in dim]
    if not dims:
        return x.clone()
    return x.roll([half(x.shape[d]) for d in dims], dims)


@impl("fft_fftshift")
def fft_fftshift(self, dim=None):
    return _shift(self, dim, lambda n: n // 2)


@impl("fft_ifftshift")
def fft_ifftshift(self, dim=None):
    return _shift(self, dim, lambda n: (n + 1) // 2)


@impl("native_dropout_backward")
def native_dropout_backward(grad_output, mask, scale):
    return grad_output * mask * scale


def _randint_like(self, low, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    import torch

    out = torch.empty_like(self, dtype=dtype, device=device,
                           memory_format=memory_format if memory_format is not None else torch.preserve_format)
    return out.random_(low, high)


@impl("randint_like")
def randint_like(self, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, 0, int(high), dtype, layout, device, pin_memory, memory_format)


@impl("randint_like.Tensor")
def randint_like_tensor(self, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, 0, int(high.item()), dtype, layout, device, pin_memory, memory_format)


@impl("randint_like.low_dtype")
def randint_like_low(self, low, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, int(low), int(high), dtype, layout, device, pin_memory, memory_format)


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

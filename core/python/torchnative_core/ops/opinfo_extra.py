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

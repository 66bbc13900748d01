"""Pointwise and small linear-algebra operators composed of others, following upstream's
definitions (edge cases included: -0.0 in copysign, infinities in logaddexp, ties in
cummax/cummin). Written with the public torch API: every call still enters the door."""

from __future__ import annotations

import math

from . import base as B
from . import impl
from .elementwise import _type_name as type_name


def _float(x):
    import torch

    return x if x.is_floating_point() or x.is_complex() else x.to(torch.get_default_dtype())


@impl("is_signed")
def is_signed(self):
    return self.dtype.is_signed


@impl("logaddexp")
def logaddexp(self, other):
    import torch

    a, b = _float(self), _float(other)
    m = torch.maximum(a, b)
    out = m + (-(a - b).abs()).exp().log1p()
    return torch.where(a.isinf() & (a == b), a, out)


@impl("logaddexp2")
def logaddexp2(self, other):
    import torch

    a, b = _float(self), _float(other)
    m = torch.maximum(a, b)
    out = m + (-(a - b).abs()).exp2().log1p() / math.log(2.0)
    return torch.where(a.isinf() & (a == b), a, out)


@impl("deg2rad")
def deg2rad(self):
    return _float(self) * (math.pi / 180.0)


@impl("rad2deg")
def rad2deg(self):
    return _float(self) * (180.0 / math.pi)


@impl("signbit")
def signbit(self):
    if not self.is_floating_point():
        return self < 0 if self.dtype.is_signed else self != self
    return (self < 0) | ((self == 0) & ((1.0 / self) < 0))


@impl("copysign.Tensor")
def copysign(self, other):
    import torch

    a = _float(self)
    mag = a.abs()
    return torch.where(torch.signbit(other), -mag, mag).to(torch.result_type(a, other) if other.is_floating_point() else a.dtype)


@impl("copysign.Scalar")
def copysign_scalar(self, other):
    import torch

    return copysign(self, torch.scalar_tensor(float(other)))


@impl("sinc")
def sinc(self):
    import torch

    x = _float(self)
    px = x * math.pi
    return torch.where(x == 0, torch.ones((), dtype=x.dtype), px.sin() / px)


@impl("logit")
def logit(self, eps=None):
    x = _float(self)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


@impl("heaviside")
def heaviside(self, values):
    import torch

    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return torch.where(self == 0, values, (self > 0).to(self.dtype))


@impl("xlog1py.Tensor")
def xlog1py(self, other):
    from .activations import x_times_log

    return x_times_log(self, other, log1p=True)


@impl("conj")
def conj(self):
    if self.is_complex():  # upstream returns a lazily conjugated view (the conj bit), which we lack
        raise NotImplementedError("torchnative: conj of complex tensors (the conjugate bit) is not supported yet")
    return self


@impl("resolve_conj", "resolve_neg")
def resolve_conj(self):
    return self  # no tensor here ever carries the conjugate or negative bit


@impl("isreal")
def isreal(self):
    import torch

    return torch.ones_like(self, dtype=torch.bool)


@impl("angle")
def angle(self):
    import torch

    x = _float(self)
    return torch.where(x.isnan(), x, torch.where(x < 0, torch.full((), math.pi, dtype=x.dtype), torch.zeros((), dtype=x.dtype)))


@impl("clamp_min.Tensor")
def clamp_min_tensor(self, min):
    import torch

    return torch.clamp(self, min=min)


@impl("clamp_max.Tensor")
def clamp_max_tensor(self, max):
    import torch

    return torch.clamp(self, max=max)


@impl("msort")
def msort(self):
    return self.sort(0).values


@impl("ravel")
def ravel(self):
    return self.reshape(-1)


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


@impl("narrow.Tensor")
def narrow_tensor(self, dim, start, length):
    if start.dim() != 0 or start.is_floating_point():
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return self.narrow(dim, int(start.item()), length)


def _scalars_for(t, beta, alpha):
    if not (t.is_floating_point() or t.is_complex()):
        return int(beta), int(alpha)  # upstream converts the scalars to the integer type
    return beta, alpha


@impl("addmv")
def addmv(self, mat, vec, beta=1, alpha=1):
    prod = mat.mv(vec)
    beta, alpha = _scalars_for(prod, beta, alpha)
    prod = prod * alpha if alpha != 1 else prod
    return prod if beta == 0 else prod + (self * beta if beta != 1 else self)


@impl("addr")
def addr(self, vec1, vec2, beta=1, alpha=1):
    import torch

    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1
                           else f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    outer = torch.outer(vec1, vec2)
    if outer.dtype == torch.bool:
        return (self & bool(beta)) | (outer & bool(alpha)) if beta else outer & bool(alpha)
    beta, alpha = _scalars_for(outer, beta, alpha)
    outer = outer * alpha if alpha != 1 else outer
    return outer if beta == 0 else outer + (self * beta if beta != 1 else self)


@impl("addbmm")
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    prod = batch1.bmm(batch2).sum(0)
    beta, alpha = _scalars_for(prod, beta, alpha)
    prod = prod * alpha if alpha != 1 else prod
    return prod if beta == 0 else prod + (self * beta if beta != 1 else self)


@impl("inner")
def inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self.shape)} and {list(other.shape)}")
    n = self.shape[-1]
    out = self.reshape(-1, n).matmul(other.reshape(-1, n).t())
    return out.reshape(list(self.shape[:-1]) + list(other.shape[:-1]))


@impl("kron")
def kron(self, other):
    nd = max(self.dim(), other.dim())
    a = self.reshape([1] * (nd - self.dim()) + list(self.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    inter_a, inter_b = [], []
    for i in range(nd):
        inter_a += [a.shape[i], 1]
        inter_b += [1, b.shape[i]]
    out = a.reshape(inter_a) * b.reshape(inter_b)
    return out.reshape([a.shape[i] * b.shape[i] for i in range(nd)])


@impl("cross")
def cross(self, other, dim=None):
    import torch

    if dim is None:  # upstream's deprecated default: the first dimension of size 3
        dim = next((i for i, s in enumerate(torch.broadcast_shapes(self.shape, other.shape)) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return torch.linalg.cross(self, other, dim=dim)


@impl("linalg_cross")
def linalg_cross(self, other, dim=-1):
    import torch

    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    a, b = torch.broadcast_tensors(self, other)
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {self.shape[dim]} and {other.shape[dim]}")
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return torch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def _scan_dim(self, dim):
    """`dim` wrapped as upstream wraps it (a 0-dim tensor scans its one element along -1 or 0)."""
    return B.wrap_dim(dim, max(len(self._tn_sizes), 1))


@impl("cummax")
def cummax(self, dim):
    from torch.return_types import cummax as t

    return t(_cum_extreme("cummax", self, dim))


@impl("cummin")
def cummin(self, dim):
    from torch.return_types import cummin as t

    return t(_cum_extreme("cummin", self, dim))


def _cum_extreme(op, self, dim):
    """Values and int64 indices of the running extreme: the device's scan kernel (scan.rs)."""
    _scan_dim(self, dim)
    sizes, dev = list(self._tn_sizes), B.device_of(self)
    values, indices = B.empty(sizes, B.dtype_of(self), dev), B.empty(sizes, B.I64, dev)
    if B.numel(sizes):
        B.launch(op, (self, dim), (values, indices))
    return values, indices


@impl("logcumsumexp")
def logcumsumexp(self, dim):
    _scan_dim(self, dim)
    dt = B.dtype_of(self)
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{type_name(dt)}'")
    out = B.empty(list(self._tn_sizes), dt, B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("logcumsumexp", (self, dim), (out,))
    return out


@impl("diag")
def diag(self, diagonal=0):
    import torch

    if self.dim() == 1:
        n = self.shape[0] + abs(diagonal)
        out = torch.zeros(n, n, dtype=self.dtype)
        out.diagonal(diagonal).copy_(self)
        return out
    if self.dim() == 2:
        return self.diagonal(diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.dim()}D")


@impl("diagflat")
def diagflat(self, offset=0):
    return diag(self.reshape(-1), offset)


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


@impl("rot90")
def rot90(self, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.dim()}")
    d0, d1 = dims[0] % self.dim(), dims[1] % self.dim()
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


@impl("block_diag")
def block_diag(tensors):
    import torch

    mats = [t.reshape(1, -1) if t.dim() == 1 else (t.reshape(1, 1) if t.dim() == 0 else t) for t in tensors]
    for t in mats:
        if t.dim() != 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {mats.index(t)} has {t.dim()} dimensions")
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


@impl("trapezoid.x")
def trapezoid_x(y, x, dim=-1):
    d = dim % y.dim()
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    dx = x.diff(dim=dim) if x.dim() else x
    return ((y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * dx).sum(d) / 2


@impl("trapezoid.dx")
def trapezoid_dx(y, dx=1, dim=-1):
    d = dim % y.dim()
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    return (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)).sum(d) * (dx / 2)


@impl("diff")
def diff(self, n=1, dim=-1, prepend=None, append=None):
    """upstream's ReduceOps.cpp diff, operator for operator (export graphs show them): cat of
    prepend/self/append, then `narrow(1) - narrow(0)` n times, the second narrow made first as
    its compiled code evaluates them, on the dimension as given."""
    import torch

    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = dim % self.dim()
    for other in (prepend, append):
        if other is None:
            continue
        if other.dim() != self.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(other.dim()):
            if i != d and other.shape[i] != self.shape[i]:
                raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({i}) = {self.shape[i]}, "
                                   f"but got tensor.size({i}) = {other.shape[i]}")
    if n == 0:  # upstream returns a copy, and ignores prepend and append
        return self.clone()
    x = self
    if prepend is not None or append is not None:
        x = torch.cat([p for p in (prepend, self, append) if p is not None], dim)
    out_len = x.shape[d] - 1
    for _ in range(min(n, x.shape[d])):
        b = x.narrow(dim, 0, out_len)
        a = x.narrow(dim, 1, out_len)
        x = torch.logical_xor(a, b) if x.dtype == torch.bool else a - b
        out_len -= 1
    return x


_TYPEMETA = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


@impl("lerp.Tensor")
def lerp_tensor(self, end, weight):
    import torch

    for name, t in (("end", end), ("weight", weight)):
        if t.dtype != self.dtype:  # upstream's lerp meta function names dtypes as caffe2 TypeMeta prints them
            a, b = (_TYPEMETA.get(str(d).replace("torch.", ""), str(d)) for d in (self.dtype, t.dtype))
            raise RuntimeError(f"expected dtype {a} for `{name}` but got dtype {b}")
    from .composites import NO_SCALAR, _fused

    out = _fused("lerp.Tensor", (self, end, weight), NO_SCALAR)  # float32/float64: the FMA kernel
    if out is not None:
        return out
    diff = end - self
    # upstream's lerp formula: from the nearer end, so weight 0 and 1 give the ends exactly
    return torch.where(weight.abs() < 0.5, self + weight * diff, end - diff * (1 - weight))

"""Pointwise operators composed of others, following upstream's definitions (edge cases
included: -0.0 in copysign, infinities in logaddexp, ties in fmax/fmin): clamps, nan_to_num, the
fused addcmul/addcdiv/lerp, hypot, ldexp, float_power, frexp, nextafter, fill. Written with the
door or the public torch API, so every call still enters the door and autograd records the parts.
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl
from ..forms.inplace import copy_into_self


def _num(x):
    return B.C._tn_scalar_to_tensor(x)


@impl("square")
def square(self):
    return D("pow.Tensor_Scalar", self, 2)


@impl("sgn")
def sgn(self):
    return D("sign", self)


@impl("clamp_")
def clamp_(self, min=None, max=None):
    return copy_into_self(self, D("clamp", self, min, max))


@impl("nan_to_num")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("nan_to_num", (self, nan, posinf, neginf), (out,))
    return out


@impl("fmax")
def fmax(self, other):
    # NaN-ignoring maximum: where one side is NaN take the other
    m = D("maximum", self, other)
    return D("where.self", D("isnan", self), D("where.self", D("isnan", other), m, other), D("where.self", D("isnan", other), self, m))


@impl("fmin")
def fmin(self, other):
    m = D("minimum", self, other)
    return D("where.self", D("isnan", self), D("where.self", D("isnan", other), m, other), D("where.self", D("isnan", other), self, m))


@impl("clamp.Tensor")
def clamp_tensor(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    ops = [self] + [t for t in (min, max) if t is not None]
    common = B.result_type(*ops)
    shape = B.broadcast_shapes(*[t._tn_sizes for t in ops])
    cast = lambda t: None if t is None else B.expand_to(B.call("_to_copy", t, common) if B.dtype_of(t) is not common else t, shape)  # noqa: E731
    out = B.empty(shape, common, B.device_of(self))
    if B.numel(shape):
        B.launch("clamp.Tensor", (cast(self), cast(min), cast(max)), (out,))
    return out


@impl("lerp.Scalar")
def lerp_scalar(self, end, weight):
    if B.dtype_of(end) is not B.dtype_of(self):
        a, b = (B.cpp_type_name(B.dtype_of(t)) for t in (self, end))
        raise RuntimeError(f"expected dtype {a} for `end` but got dtype {b}")
    B.broadcast_shapes(self._tn_sizes, end._tn_sizes)
    B.floating_kernel_only(self, "lerp_kernel_scalar", complex_ok=True)
    out = _fused("lerp.Scalar", (self, end), weight)
    if out is not None:
        return out
    diff = D("sub.Tensor", end, self, 1)
    if abs(weight) < 0.5:
        return D("add.Tensor", self, D("mul.Tensor", diff, _num(weight)), 1)
    return D("sub.Tensor", end, D("mul.Tensor", diff, _num(1 - weight)), 1)


@impl("remainder_.Scalar")
def remainder_scalar_(self, other):
    return copy_into_self(self, D("remainder.Scalar", self, other))


@impl("remainder_.Tensor")
def remainder_tensor_(self, other):
    return copy_into_self(self, D("remainder.Tensor", self, other))


_FUSED_DTYPES = (B.F32, B.F64)


NO_SCALAR = object()  # _fused's `scalar` for a kernel of tensors only (lerp.Tensor)


def _fused(op, tensors, scalar, inplace=False):
    """One kernel for a pointwise operator of several float32/float64 operands of one dtype on one
    device (the cpu backend's `pointwise.rs`: upstream's rounding, fused multiply-adds included),
    or None where it does not apply and the caller composes. In place, `self` is written directly
    when it has the broadcast shape and no other operand shares its storage."""
    first = tensors[0]
    dt = B.dtype_of(first)
    if dt not in _FUSED_DTYPES:
        return None
    key, index = first._tn_device_key, first._tn_device_index
    for t in tensors[1:]:
        if B.dtype_of(t) is not dt or t._tn_device_key != key or t._tn_device_index != index:
            return None
    if not B.C._tn_has_kernel(op, key):
        return None
    shape = B.broadcast_shapes(*[t._tn_sizes for t in tensors])
    if inplace:
        if list(shape) != list(first._tn_sizes) or any(t._tn_storage_id == first._tn_storage_id for t in tensors[1:]):
            return None
        out = first
    else:
        out = B.empty(shape, dt, B.device_of(first))
    if B.numel(shape):
        expanded = [B.expand_to(t, shape) for t in tensors]
        B.launch(op, tuple(expanded) if scalar is NO_SCALAR else (*expanded, scalar), (out,))
    if inplace:
        out._tn_bump_version()
    return out


@impl("addcmul")
def addcmul(self, tensor1, tensor2, value=1):
    common = B.result_type(self, tensor1, tensor2)
    if common is B.BOOL:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if not (common.is_floating_point or common.is_complex) and isinstance(value, float):
        value = int(value)  # the kernel's value.to<scalar_t>(): an integer multiply truncates it
    out = _fused("addcmul", (self, tensor1, tensor2), value)
    if out is not None:
        return out
    return D("add.Tensor", self, D("mul.Tensor", D("mul.Tensor", tensor1, tensor2), _num(value)), 1)


@impl("addcdiv")
def addcdiv(self, tensor1, tensor2, value=1):
    if not (B.dtype_of(tensor1).is_floating_point or B.dtype_of(tensor1).is_complex) and \
            not (B.dtype_of(tensor2).is_floating_point or B.dtype_of(tensor2).is_complex):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
            "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
            "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
            "tensor2), for all dtypes.")
    out = _fused("addcdiv", (self, tensor1, tensor2), value)
    if out is not None:
        return out
    return D("add.Tensor", self, D("mul.Tensor", D("div.Tensor", tensor1, tensor2), _num(value)), 1)


def _fused_inplace(op, self, tensors, scalar, derived):
    """`op` (addcmul_, addcdiv_, lerp_.Scalar) writing into self with one kernel outside autograd;
    otherwise `derived()`: the functional result copied into self (ops/inplace.py's rule)."""
    every = (self, *tensors)
    if not (B.C.is_grad_enabled() and any(t._tn_requires_grad for t in every)):
        out = _fused(op, every, scalar, inplace=True)
        if out is not None:
            return out
    return derived()


def _copied(op, functional):
    from ..forms.inplace import _make

    return _make(op, functional)


_ADDCMUL_, _ADDCDIV_, _LERP_ = _copied("addcmul_", "addcmul"), _copied("addcdiv_", "addcdiv"), _copied("lerp_.Scalar", "lerp.Scalar")


@impl("addcmul_")
def addcmul_(self, tensor1, tensor2, value=1):
    return _fused_inplace("addcmul_", self, (tensor1, tensor2), value, lambda: _ADDCMUL_(self, tensor1, tensor2, value))


@impl("addcdiv_")
def addcdiv_(self, tensor1, tensor2, value=1):
    return _fused_inplace("addcdiv_", self, (tensor1, tensor2), value, lambda: _ADDCDIV_(self, tensor1, tensor2, value))


@impl("lerp_.Scalar")
def lerp_scalar_(self, end, weight):
    return _fused_inplace("lerp_.Scalar", self, (end,), weight, lambda: _LERP_(self, end, weight))


D = B.door


def _torch():
    import torch

    return torch


@impl("hypot")
def hypot(self, other):
    dtype = B.result_type(self, other)
    B.floating_kernel_only(dtype, "hypot_cpu")
    from .arithmetic import binary

    return binary("hypot", self, other)


@impl("ldexp.Tensor")
def ldexp(self, other):
    torch = _torch()
    if self.is_floating_point() and not (other.is_floating_point() or other.is_complex()):
        # upstream's kernel: std::ldexp(x, int(e)) in x's dtype; other operands multiply by
        # pow(2.0, other) (in other's dtype) with ordinary promotion
        if other.dtype == torch.bool:
            raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
        return _ldexp_exact(self, other)
    return torch.mul(self, torch.pow(2.0, other))


def _ldexp_exact(x, e):
    """std::ldexp(x, e) with e as a C int: x * 2**e rounded once, however large e is (a product
    with pow(2, e) overflows or underflows first)."""
    torch = _torch()
    f64 = torch.float64
    m, k = _frexp64(x.to(f64))  # x = m * 2**k, 0.5 <= |m| < 1
    n = (k + e.to(torch.int32).to(torch.int64)).clamp(-1130, 1030) - 1
    # 2m * 2**n: exact while the result is normal; a subnormal result goes through 2m * 2**-52
    # (exact) so that only the last product rounds
    s = torch.where(n < -1022, 52, 0)
    two = torch.tensor(2.0, dtype=f64)
    y = ((m * 2) * two.pow(-s)) * two.pow(n + s)
    y = torch.where((x == 0) | ~torch.isfinite(x), x.to(f64), y)
    if x.dtype != f64:
        y = y.to(torch.float32)  # float16/bfloat16 go through float32, as upstream's ldexp(float, int)
    return y.to(x.dtype)


def _float_power_dtype(*xs):
    torch = _torch()
    return torch.complex128 if any(isinstance(x, torch.Tensor) and x.is_complex() or isinstance(x, complex) for x in xs) else torch.float64


@impl("float_power.Tensor_Tensor")
def float_power_tt(self, exponent):
    d = _float_power_dtype(self, exponent)
    return self.to(d).pow(exponent.to(d))


@impl("float_power.Tensor_Scalar")
def float_power_ts(self, exponent):
    d = _float_power_dtype(self, exponent)
    return self.to(d).pow(complex(exponent) if d == _torch().complex128 else float(exponent))


def _float_power_(self, exponent, functional):
    d = _float_power_dtype(self, exponent)
    if self.dtype != d:
        raise RuntimeError(f"the base given to float_power_ has dtype {B.scalar_type_name(B.dtype_of(self))} but the "
                           f"operation's result requires dtype {B.scalar_type_name(d)}")
    return copy_into_self(self, functional(self, exponent))


for _name, _fn in (("float_power_.Tensor", float_power_tt), ("float_power_.Scalar", float_power_ts)):
    impl(_name)(lambda self, exponent, _fn=_fn: _float_power_(self, exponent, _fn))


@impl("float_power.Scalar")
def float_power_st(self, exponent):
    torch = _torch()
    d = _float_power_dtype(self, exponent)
    return torch.pow(complex(self) if d == torch.complex128 else float(self), exponent.to(d))


@impl("frexp.Tensor")
def frexp(self):
    from torch.return_types import frexp as ret

    torch = _torch()
    if not self.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, k = _frexp64(self.to(torch.float64))  # exact in float64 for every floating dtype
    return ret((m.to(self.dtype), k.to(torch.int32)))


def _frexp64(x):
    """x = m * 2**k with 0.5 <= |m| < 1, from the exponent bits (float64 x; zeros, infinities and
    NaN give (x, 0)). Subnormals are first scaled into the normal range by 2**64, exactly."""
    torch = _torch()
    tiny = x.abs() < 2.0 ** -1022
    xs = torch.where(tiny, x * 2.0 ** 64, x).contiguous()
    biased = (xs.view(torch.int64) >> 52) & 0x7FF
    m = xs * torch.tensor(2.0, dtype=torch.float64).pow(1022 - biased)  # a power of two: exact
    k = biased - 1022 - torch.where(tiny, 64, 0)
    special = (x == 0) | ~torch.isfinite(x)
    return torch.where(special, x, m), torch.where(special, 0, k)


@impl("fill.Scalar")
def fill_scalar(self, value):
    return B.call("full_like", self, value)


@impl("fill.Tensor")
def fill_tensor(self, value):
    if value.dim() != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    return B.call("full_like", self, value.item())


def _float(x):
    import torch

    return x if x.is_floating_point() or x.is_complex() else x.to(torch.get_default_dtype())


def _logaddexp_operands(self, other, kernel):
    """The operands in the computation type of upstream's logaddexp kernels, and the result's
    dtype: the operands' common dtype, which must be floating (the kernels dispatch on floating
    types only); float16/bfloat16 computed in float32 and rounded once."""
    import torch
    from .arithmetic import _check_devices

    # upstream's TensorIterator checks the devices and broadcasts before the kernel's dispatch
    if isinstance(other, B.C.TensorBase) and isinstance(self, B.C.TensorBase):
        _check_devices(self, other)
        B.broadcast_shapes(self._tn_sizes, other._tn_sizes)
    dt = torch.result_type(self, other)
    B.floating_kernel_only(dt, kernel, complex_ok=True)
    comp = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    return self.to(comp), other.to(comp), dt


@impl("logaddexp")
def logaddexp(self, other):
    import torch

    a, b, dt = _logaddexp_operands(self, other, "logaddexp_cpu")
    m = torch.maximum(a, b)
    out = m + (-(a - b).abs()).exp().log1p()
    return torch.where(a.isinf() & (a == b), a, out).to(dt)


@impl("logaddexp2")
def logaddexp2(self, other):
    import torch

    a, b, dt = _logaddexp_operands(self, other, "logaddexp2_cpu")
    m = torch.maximum(a, b)
    out = m + (-(a - b).abs()).exp2().log1p() / math.log(2.0)
    return torch.where(a.isinf() & (a == b), a, out).to(dt)


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
    return copysign(self, _num(other))  # a wrapped number (double), as upstream wraps it


@impl("sinc")
def sinc(self):
    import torch

    x = _float(self)
    px = x * math.pi
    return torch.where(x == 0, torch.ones((), dtype=x.dtype), px.sin() / px)


@impl("logit")
def logit(self, eps=None):
    x = _float(self)
    if eps is not None and not eps < 0:
        # upstream's `x < lo ? lo : (x > hi ? hi : x)` in x's dtype: a NaN eps compares false and
        # leaves x alone, and eps > 0.5 (lo > hi) sends x below lo to lo, where clamp would give hi
        torch = _torch()
        lo = torch.tensor(eps, dtype=x.dtype)
        hi = 1 - lo
        x = torch.where(x < lo, lo, torch.where(x > hi, hi, x))
    return (x / (1 - x)).log()


@impl("heaviside")
def heaviside(self, values):
    import torch

    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return torch.where(self == 0, values, (self > 0).to(self.dtype))


@impl("clamp_min.Tensor")
def clamp_min_tensor(self, min):
    import torch

    return torch.clamp(self, min=min)


@impl("clamp_max.Tensor")
def clamp_max_tensor(self, max):
    import torch

    return torch.clamp(self, max=max)




@impl("lerp.Tensor")
def lerp_tensor(self, end, weight):
    import torch

    for name, t in (("end", end), ("weight", weight)):
        if t.dtype != self.dtype:  # upstream's lerp meta function names dtypes as caffe2 TypeMeta prints them
            a, b = (B.cpp_type_name(B.dtype_of(u)) for u in (self, t))
            raise RuntimeError(f"expected dtype {a} for `{name}` but got dtype {b}")
    B.floating_kernel_only(self, "lerp_kernel_tensor", complex_ok=True)
    out = _fused("lerp.Tensor", (self, end, weight), NO_SCALAR)  # float32/float64: the FMA kernel
    if out is not None:
        return out
    diff = end - self
    # upstream's lerp formula: from the nearer end, so weight 0 and 1 give the ends exactly
    return torch.where(weight.abs() < 0.5, self + weight * diff, end - diff * (1 - weight))


_INT_VIEW = {"torch.float64": "int64", "torch.float32": "int32", "torch.float16": "int16", "torch.bfloat16": "int16"}


@impl("nextafter")
def nextafter(self, other):
    import torch

    # upstream's binary TensorIterator: the operands promote to one type, which the kernel
    # dispatches over floating types only
    common = torch.result_type(self, other)
    torch.broadcast_shapes(self.shape, other.shape)  # the iterator's shapes, before the dtype dispatch
    if str(common) not in _INT_VIEW:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{B.scalar_type_name(common)}'")
    self, other = self.to(common), other.to(common)
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

"""Elementwise operators from the coverage report's list (issue 4): hypot, ldexp, float_power,
frexp, fill, index_copy, index_fill with a tensor value — composed as upstream composes them
(BinaryOps.cpp, UnaryOps.cpp, TensorAdvancedIndexing.cpp) or, for frexp, computed per element by
the C library's function (Python's math.frexp) in float64 and rounded once; hypot is a cpu kernel."""

from __future__ import annotations

import math

from . import base as B
from . import impl
from .special import _map

D = B.door


def _torch():
    import torch

    return torch


@impl("hypot")
def hypot(self, other):
    dtype = B.result_type(self, other)
    if not dtype.is_floating_point:
        raise RuntimeError(f"\"hypot_cpu\" not implemented for '{str(dtype).replace('torch.', '').capitalize()}'")
    from .elementwise import binary

    return binary("hypot", self, other)


@impl("ldexp.Tensor")
def ldexp(self, other):
    return _torch().mul(self, _torch().pow(2.0, other))


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
    mant = _map(lambda x: math.frexp(x)[0] if math.isfinite(x) else x, self, dtype=self.dtype)
    expo = _map(lambda x: float(math.frexp(x)[1]) if math.isfinite(x) else 0.0, self, dtype=torch.float64).to(torch.int32)
    return ret((mant, expo))


@impl("fill.Scalar")
def fill_scalar(self, value):
    return D("full_like", self, value, None, None, None, None, None)


@impl("fill.Tensor")
def fill_tensor(self, value):
    if value.dim() != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    return D("full_like", self, value.item(), None, None, None, None, None)


@impl("index_fill.int_Tensor")
def index_fill_tensor(self, dim, index, value):
    if value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s).")
    return D("index_fill.int_Scalar", self, dim, index, value.item())


@impl("index_copy")
def index_copy(self, dim, index, source):
    torch = _torch()
    if index.dim() > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got {})".format(index.dim()))
    if index.dtype != torch.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got " + str(index.dtype).replace("torch.", "").capitalize())
    if self.dtype != source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) {self.dtype} and (source) {source.dtype}")
    if self.dim() == 0:
        out = self.reshape(1).clone()
        src = source.reshape(1)
        return index_copy(out, 0, index.reshape(-1), src).reshape([])
    d = B.wrap_dim(dim, self.dim())
    moved = self.movedim(d, 0).clone()
    src = (source if source.dim() else source.reshape(1)).movedim(d, 0) if source.dim() else source.reshape(1)
    D("index_put_", moved, [index.reshape(-1)], src, False)
    return moved.movedim(0, d).contiguous()


@impl("index_copy_")
def index_copy_(self, dim, index, source):
    return self.copy_(index_copy(self, dim, index, source))

"""Scans along a dimension composed as upstream composes them: cummax/cummin (ties as its CPU kernel),
logcumsumexp, diff, trapezoid/trapz and cumulative_trapezoid.
"""

from __future__ import annotations

from .. import base as B
from .. import impl
from ..elementwise.arithmetic import _type_name as type_name
from .. import IMPLS


def _torch():
    import torch

    return torch


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


def _size_along(y, d):
    if not y.dim():  # maybe_wrap_dim lets a scalar's dim through; its size is what refuses
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return y.shape[d]


@impl("trapezoid.x")
def trapezoid_x(y, x, dim=-1):
    """upstream's trapezoid(y, x): a 1-d x lies along dim (one value per sample), a lower-dim x is
    padded with leading 1s, and dx is the difference of x's neighbours along dim."""
    d = B.wrap_dim(dim, y.dim())
    n = _size_along(y, d)
    if n == 0:  # upstream's zeros_like_except: y's dtype, the dim removed
        return B.call("zeros", list(y.shape[:d]) + list(y.shape[d + 1:]), B.dtype_of(y), device=B.device_of(y))
    if y.dtype is B.BOOL or x.dtype is B.BOOL:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        x = x.view([x.shape[0] if i == d else 1 for i in range(y.dim())])
    elif x.dim() < y.dim():
        x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    dx = x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1) if x.shape[d] else x
    return (dx * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d) / 2


@impl("trapezoid.dx")
def trapezoid_dx(y, dx=1, dim=-1):
    d = B.wrap_dim(dim, y.dim())
    n = _size_along(y, d)
    if n == 0:  # upstream's zeros_like_except: y's dtype, the dim removed
        return B.call("zeros", list(y.shape[:d]) + list(y.shape[d + 1:]), B.dtype_of(y), device=B.device_of(y))
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
    if n == 0 and prepend is None and append is None:
        return self.clone()  # upstream's diff_helper: the dim is not looked at
    d = B.wrap_dim(dim, self.dim())
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


def _cumtrapz_dx(y, dx, dim):
    n = y.shape[dim]
    return (dx / 2.0 * (y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1))).cumsum(dim)


@impl("cumulative_trapezoid.x")
def cumulative_trapezoid_x(y, x, dim=-1):
    torch = _torch()
    d = B.wrap_dim(dim, y.dim())
    if y.dtype == torch.bool or x.dtype == torch.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[d] = x.shape[0]
        xv = x.view(sizes)
    elif x.dim() < y.dim():
        xv = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    else:
        xv = x
    n = xv.shape[d]
    dx = xv.narrow(d, 1, n - 1) - xv.narrow(d, 0, n - 1)
    m = y.shape[d]
    return ((y.narrow(d, 0, m - 1) + y.narrow(d, 1, m - 1)) * dx).cumsum(d) / 2.0


@impl("cumulative_trapezoid.dx")
def cumulative_trapezoid_dx(y, dx=1, dim=-1):
    torch = _torch()
    if isinstance(dx, (bool, complex)):
        raise RuntimeError("cumulative_trapezoid: Currently, we only support dx as a real number.")
    d = B.wrap_dim(dim, y.dim())
    if y.dtype == torch.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    return _cumtrapz_dx(y, float(dx), d)


@impl("trapz.x")
def trapz_x(y, x, dim=-1):
    return IMPLS["trapezoid.x"](y, x, dim)


@impl("trapz.dx")
def trapz_dx(y, dx=1.0, dim=-1):
    return IMPLS["trapezoid.dx"](y, dx, dim)

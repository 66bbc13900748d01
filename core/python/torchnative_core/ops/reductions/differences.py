"""torch.gradient: second-order accurate central differences in the interior and first- or
second-order one-sided differences at the edges, along each requested dimension, composed of
slices and arithmetic as upstream's CompositeImplicitAutograd kernel (ReduceOps.cpp) composes
them, so values, dtypes and the autograd graph follow from those operators."""

from __future__ import annotations

from .. import base as B
from .. import impl


def _check(self, spacing_size, dims, edge_order):
    """upstream's pre_check_gradient: the argument checks, in its order."""
    import torch

    nd = self.dim()
    if self.dtype == torch.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != nd:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {nd}', since dim argument was not given, but got a list of length "
                           f"{spacing_size}")
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for d in dims if dims is not None else range(nd):
        w = B.wrap_dim(d, nd)
        if dims is not None and w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    for d in dims if dims is not None else range(nd):
        if self.size(d) < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _sl(t, d, start, end=None):
    return t[(slice(None),) * d + (slice(start, end),)]


def _join(center, prepend, append, d):
    import torch

    # upstream's prepend_append_on_dim
    return torch.cat([prepend, center, append], d)


def _by_spacing(self, spacing, dims, edge_order):
    """Uniform spacing (a number per dimension): upstream's gradient_helper_float."""
    out = []
    for h, d0 in zip(spacing, dims):
        d = B.wrap_dim(d0, self.dim())
        center = (_sl(self, d, 2) - _sl(self, d, 0, -2)) / h
        if edge_order == 1:
            prepend = (_sl(self, d, 1, 2) - _sl(self, d, 0, 1)) / h
            append = (_sl(self, d, -1) - _sl(self, d, -2, -1)) / h
        else:
            prepend = (-1.5 * _sl(self, d, 0, 1) + 2 * _sl(self, d, 1, 2) - 0.5 * _sl(self, d, 2, 3)) / h
            append = (0.5 * _sl(self, d, -3, -2) - 2 * _sl(self, d, -2, -1) + 1.5 * _sl(self, d, -1)) / h
        out.append(_join(center / 2, prepend, append, d))
    return out


def _by_coordinates(self, coords, dims, edge_order):
    """Sample coordinates per dimension (non-uniform spacing): upstream's gradient_helper."""
    for c in coords:
        if c.device != self.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                               f"{self.device} and {c.device}!")
    out = []
    for c, d0 in zip(coords, dims):
        if c.dim() != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                               f"element with {c.dim()} dimensions!")
        d = B.wrap_dim(d0, self.dim())
        shape = [1] * self.dim()
        shape[d] = -1
        dx = c.diff(1, 0)
        dx1, dx2 = dx[:-1], dx[1:]
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        cc = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * _sl(self, d, 0, -2) + b * _sl(self, d, 1, -1) + cc * _sl(self, d, 2)
        if edge_order == 1:
            prepend = (_sl(self, d, 1, 2) - _sl(self, d, 0, 1)) / dx[0]
            append = (_sl(self, d, -1) - _sl(self, d, -2, -1)) / dx[-1]
        else:
            h0, h1 = dx[0], dx[1]
            a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
            b = (h0 + h1) / (h0 * h1)
            cc = (-h0) / (h1 * (h0 + h1))
            prepend = a * _sl(self, d, 0, 1) + b * _sl(self, d, 1, 2) + cc * _sl(self, d, 2, 3)
            g1, g2 = dx[-1], dx[-2]
            a = g1 / (g2 * (g1 + g2))
            b = -(g1 + g2) / (g1 * g2)
            cc = (2 * g1 + g2) / (g1 * (g1 + g2))
            append = a * _sl(self, d, -3, -2) + b * _sl(self, d, -2, -1) + cc * _sl(self, d, -1)
        out.append(_join(center, prepend, append, d))
    return out


def _all_dims(self, dim):
    return [dim] if dim is not None else list(range(self.dim()))


@impl("gradient.scalarint")
def gradient_scalarint(self, spacing=None, dim=None, edge_order=1):
    dims = _all_dims(self, dim)
    h = [spacing if spacing is not None else 1.0] * (1 if dim is not None else self.dim())
    _check(self, len(h) if spacing is not None else None, dims if dim is not None else None, edge_order)
    return _by_spacing(self, h, dims, edge_order)


@impl("gradient.scalararray")
def gradient_scalararray(self, spacing, dim, edge_order=1):
    h = [spacing] * len(dim)
    _check(self, len(h), list(dim), edge_order)
    return _by_spacing(self, h, list(dim), edge_order)


@impl("gradient.array")
def gradient_array(self, dim, edge_order=1):
    _check(self, len(dim), list(dim), edge_order)
    return _by_spacing(self, [1.0] * len(dim), list(dim), edge_order)


@impl("gradient.scalarrayint")
def gradient_scalarrayint(self, spacing, dim=None, edge_order=1):
    dims = _all_dims(self, dim)
    _check(self, len(spacing), dims if dim is not None else None, edge_order)
    return _by_spacing(self, list(spacing), dims, edge_order)


@impl("gradient.scalarrayarray")
def gradient_scalarrayarray(self, spacing, dim, edge_order=1):
    _check(self, len(spacing), list(dim), edge_order)
    return _by_spacing(self, list(spacing), list(dim), edge_order)


@impl("gradient.tensorarrayint")
def gradient_tensorarrayint(self, spacing, dim=None, edge_order=1):
    dims = _all_dims(self, dim)
    _check(self, len(spacing), dims if dim is not None else None, edge_order)
    return _by_coordinates(self, list(spacing), dims, edge_order)


@impl("gradient.tensorarray")
def gradient_tensorarray(self, spacing, dim, edge_order=1):
    _check(self, len(spacing), list(dim), edge_order)
    return _by_coordinates(self, list(spacing), list(dim), edge_order)

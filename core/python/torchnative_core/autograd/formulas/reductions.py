"""Reductions and scans."""

from __future__ import annotations

import torch

from ..formula import formula


def _dims(dim, ndim):
    if ndim == 0:
        return []  # a 0-dim tensor reduces over nothing (its dim 0 / -1 is itself)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    return sorted(d % max(ndim, 1) for d in dim)


def _unsqueeze_to(g, dims, ndim, keepdim):
    """A reduced gradient with its reduced dimensions put back (size 1)."""
    if keepdim or ndim == 0:
        return g
    for d in dims:
        g = g.unsqueeze(d)
    return g


def _numel(sizes, dims):
    n = 1
    for d in dims:
        n *= sizes[d]
    return n


@formula("sum")
def _(s, g):
    return g.expand(s.self_sizes)


@formula("sum.dim_IntList")
def _(s, g):
    sizes = s.self_sizes
    dims = _dims(s.dim, len(sizes))
    return _unsqueeze_to(g, dims, len(sizes), s.keepdim).expand(sizes)


@formula("mean")
def _(s, g):
    sizes = s.self_sizes
    return g.expand(sizes) / max(_numel(sizes, range(len(sizes))), 1)


def _mean_grad(g, sizes, dim, keepdim):
    dims = _dims(dim, len(sizes))
    return _unsqueeze_to(g, dims, len(sizes), keepdim).expand(sizes) / _numel(sizes, dims)


@formula("mean.dim")
def _(s, g):
    return _mean_grad(g, s.self_sizes, s.dim, s.keepdim)


def _evenly(g, x, result, dims, keepdim):
    """amax/amin/max/min: the gradient split evenly among the positions that attain the value."""
    if x.dim() == 0:
        return g.reshape([])
    r = _unsqueeze_to(result, dims, x.dim(), keepdim)
    gg = _unsqueeze_to(g, dims, x.dim(), keepdim)
    mask = x == r
    count = mask.sum(dims, keepdim=True) if dims else mask.sum()
    return gg * mask / count


@formula("amax", "amin", save=("self", "result"))
def _(s, g):
    x = s.self
    return _evenly(g, x, s.result, _dims(s.dim, x.dim()), s.keepdim)


@formula("max", "min", save=("self", "result"))
def _(s, g):
    x = s.self
    mask = x == s.result
    return g * mask / mask.sum()


def _scatter_back(g, idx, sizes, dim, keepdim):
    """The gradient of values picked at `idx` along `dim` (max/min with dim, sort, topk,
    kthvalue, median, mode): zeros with the gradient scattered back to where they came from."""
    if g is None:
        return None
    if not sizes:
        return g.reshape([])
    dim = dim % len(sizes)
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return torch.zeros(sizes, dtype=g.dtype, device=g.device).scatter(dim, idx, g)


@formula("max.dim", "min.dim", "kthvalue", "median.dim", "mode", save=("result1",), multi=True)
def _(s, grads):
    return _scatter_back(grads[0], s.result1, s.self_sizes, s.dim, s.keepdim)


@formula("cummax", "cummin", save=("result1",), multi=True)
def _(s, grads):
    """upstream's cummaxmin_backward: every output's gradient added back at the index it came
    from (scatter_add, as one input element can be the running extreme of many outputs)."""
    g = grads[0]
    if g is None:
        return None
    if not s.self_sizes:
        return g
    return torch.zeros(s.self_sizes, dtype=g.dtype, device=g.device).scatter_add(s.dim, s.result1, g)


def _var_grad(x, g, dim, correction, keepdim):
    dims = _dims(dim, x.dim())
    corr = 1 if correction is None else correction
    n = _numel(list(x.shape), dims)
    gg = _unsqueeze_to(g, dims, x.dim(), keepdim)
    return gg * 2 * (x - x.mean(dims, keepdim=True)) / max(n - corr, 0)


def _std_grad(x, g, result, dim, correction, keepdim):
    # d std = d var / (2 std), 0 where std is 0
    return _var_grad(x, (g / (2 * result)).masked_fill(result == 0, 0), dim, correction, keepdim)


@formula("var.correction", save=("self",))
def _(s, g):
    return _var_grad(s.self, g, s.dim, s.correction, s.keepdim)


@formula("std.correction", save=("self", "result"))
def _(s, g):
    return _std_grad(s.self, g, s.result, s.dim, s.correction, s.keepdim)


def _with_mean_grad(grad, gmean, x, dim, keepdim):
    """upstream's var_mean_backward/std_mean_backward: the spread's gradient plus the mean's."""
    if gmean is None:
        return grad
    aux = _mean_grad(gmean, list(x.shape), dim, keepdim)
    return aux if grad is None else grad + aux


@formula("var_mean.correction", save=("self",), multi=True)
def _(s, grads):
    x, (gv, gm) = s.self, grads
    gself = _var_grad(x, gv, s.dim, s.correction, s.keepdim) if gv is not None else None
    return _with_mean_grad(gself, gm, x, s.dim, s.keepdim)


@formula("std_mean.correction", save=("self", "result0"), multi=True)
def _(s, grads):
    x, (gs, gm) = s.self, grads
    gself = _std_grad(x, gs, s.result0, s.dim, s.correction, s.keepdim) if gs is not None else None
    return _with_mean_grad(gself, gm, x, s.dim, s.keepdim)


@formula("logsumexp", save=("self", "result"))
def _(s, g):
    x = s.self
    dims = _dims(s.dim, x.dim())
    r = _unsqueeze_to(s.result, dims, x.dim(), s.keepdim)
    return _unsqueeze_to(g, dims, x.dim(), s.keepdim) * (x - r).exp()


@formula("cumsum", "cumsum_")
def _(s, g):
    if g.dim() == 0:
        return g
    dim = s.dim
    return g.flip(dim).cumsum(dim).flip(dim)


@formula("linalg_vector_norm", save=("self", "result"))
def _(s, g):
    x = s.self
    dims = _dims(s.dim, x.dim())
    p = float(s.ord)
    r = _unsqueeze_to(s.result, dims, x.dim(), s.keepdim)
    gg = _unsqueeze_to(g, dims, x.dim(), s.keepdim)
    if p == 0:
        return x * 0
    if p == 1:
        return gg * x.sgn()
    if p == 2:
        return (gg * x / r).masked_fill(r == 0, 0)
    if p == float("inf") or p == float("-inf"):
        mask = x.abs() == r
        return gg * x.sgn() * mask / mask.sum(dims, keepdim=True)
    return (gg * x * x.abs().pow(p - 2) / r.pow(p - 1)).masked_fill(r == 0, 0)


@formula("prod", save=("self", "result"))
def _(s, g):
    x = s.self
    if bool((x == 0).any()):
        raise NotImplementedError("torchnative: the derivative of prod over inputs containing zeros is not implemented yet")
    return g * s.result / x


@formula("prod.dim_int", save=("self", "result"))
def _(s, g):
    x = s.self
    if bool((x == 0).any()):
        raise NotImplementedError("torchnative: the derivative of prod over inputs containing zeros is not implemented yet")
    dims = _dims(s.dim, x.dim())
    return _unsqueeze_to(g * s.result, dims, x.dim(), s.keepdim) / x


@formula("cumprod", save=("self", "result"))
def _(s, g):
    x = s.self
    if x.dim() == 0:
        return g
    if bool((x == 0).any()):
        raise NotImplementedError("torchnative: the derivative of cumprod over inputs containing zeros is not implemented yet")
    dim = s.dim
    return (g * s.result).flip(dim).cumsum(dim).flip(dim) / x


@formula("sort", "sort.stable", "topk", save=("result1",), multi=True)
def _(s, grads):
    return _scatter_back(grads[0], s.result1, s.self_sizes, s.dim if s.dim is not None else -1, True)

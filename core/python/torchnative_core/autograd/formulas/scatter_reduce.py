"""Derivatives of scatter_reduce.two and index_reduce: upstream's scatter_reduce_backward and
index_reduce_backward (FunctionsManual.cpp) as torch compositions — sum/mean split the gradient
by counts, prod divides out (with the single-zero case done by a second reduction), amax/amin
share the gradient evenly among ties."""

from __future__ import annotations

import torch

from ..formula import formula


def _reduce_backward(g, self_, src, result, reduce, include_self, take, add, reduce_again, clear):
    """take(t): t at the scattered positions (src-shaped); add(t, v): t with v added there;
    reduce_again(self, src): the forward again; clear(t): t zeroed at the targets."""
    if reduce == "sum":
        gs, gsrc = g, take(g)
    elif reduce == "prod":
        masked_self = self_.masked_fill(self_ == 0, 1)
        gs = g * reduce_again(masked_self, src) / masked_self
        src_zero = src == 0
        n_zeros = take(add(torch.zeros_like(self_), src_zero.to(self_.dtype)))
        single = src_zero & (n_zeros == 1)
        masked_src_result = reduce_again(self_, src.masked_fill(single, 1))
        gsrc = torch.where(single, take(g * masked_src_result), take(g * result) / src.masked_fill(src_zero, 1))
    elif reduce == "mean":
        N = torch.ones_like(g) if include_self else torch.zeros_like(g)
        N = add(N, torch.ones_like(src))
        N = N.masked_fill(N == 0, 1)
        gs = g / N
        gsrc = take(g) / take(N)
    else:  # amax, amin
        value = take(result)
        self_is = (self_ == result).to(self_.dtype)
        src_is = (src == value).to(self_.dtype)
        dist = g / add(self_is, src_is)
        gs = self_is * dist
        gsrc = src_is * take(dist)
    if not include_self:
        gs = clear(gs)
    return gs, gsrc


@formula("scatter_reduce.two", save=("self", "index", "src", "result"))
def _(s, g):
    d, idx, r, inc = s.dim, s.index, s.reduce, s.include_self
    gs, gsrc = _reduce_backward(
        g, s.self, s.src, s.result, r, inc,
        take=lambda t: t.gather(d, idx),
        add=lambda t, v: t.scatter_add(d, idx, v),
        reduce_again=lambda a, b: a.scatter_reduce(d, idx, b, r, include_self=inc),
        clear=lambda t: t.scatter(d, idx, 0.0))
    return (gs if s.needs(0) else None), (gsrc if s.needs(1) else None)


@formula("index_reduce", save=("self", "index", "source", "result"))
def _(s, g):
    d, idx, r, inc = s.dim, s.index, s.reduce, s.include_self
    gs, gsrc = _reduce_backward(
        g, s.self, s.source, s.result, r, inc,
        take=lambda t: t.index_select(d, idx),
        add=lambda t, v: t.index_add(d, idx, v),
        reduce_again=lambda a, b: a.index_reduce(d, idx, b, r, include_self=inc),
        clear=lambda t: t.index_fill(d, idx, 0.0))
    return (gs if s.needs(0) else None), (gsrc if s.needs(1) else None)


@formula("nanmedian.dim", save=("result1",), multi=True)
def _(s, grads):
    from .reductions import _scatter_back

    return _scatter_back(grads[0], s.result1, s.self_sizes, s.dim, s.keepdim)


@formula("nanmedian", save=("self", "result"))
def _(s, g):
    # upstream's evenly_distribute_backward: the gradient shared among the positions equal to the
    # result (NaN results: among the NaNs)
    x, r = s.self, s.result
    mask = (x == r) if not bool(r.isnan()) else x.isnan()
    return mask.to(g.dtype) * (g / mask.sum())

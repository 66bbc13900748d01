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


@formula("segment_reduce", save=("data", "result", "lengths", "offsets"))
def _(s, g):
    """upstream's _segment_reduce_backward: sum/mean spread the segment's gradient (mean divided
    by the length), max/min share it evenly among the elements equal to the result, prod gives
    result / x (the product of the others when x is 0). Computed per element in Python numbers;
    no double backward (upstream's is a kernel without one too)."""
    data, result = s.data, s.result
    lens = s.lengths if s.lengths is not None else (s.offsets[..., 1:] - s.offsets[..., :-1])
    ax = s.axis % data.dim()
    lead, rest = list(data.shape[:ax]), list(data.shape[ax + 1:])
    nlead, nrest, L = 1, 1, data.shape[ax]
    for v in lead:
        nlead *= v
    for v in rest:
        nrest *= v
    nseg = lens.shape[-1]
    if nlead * L * nrest == 0:
        return torch.zeros_like(data)
    dv = data.detach().to(torch.float64).reshape(nlead, L, nrest).tolist()
    rv = result.detach().to(torch.float64).reshape(nlead, nseg, nrest).tolist()
    gv = g.detach().to(torch.float64).reshape(nlead, nseg, nrest).tolist()
    lv = lens.reshape(nlead, nseg).tolist()
    out = [[[0.0] * nrest for _ in range(L)] for _ in range(nlead)]
    red = s.reduce
    for b in range(nlead):
        start = 0
        for sg in range(nseg):
            n = int(lv[b][sg])
            for r in range(nrest):
                gr, res = gv[b][sg][r], rv[b][sg][r]
                idx = range(start, start + n)
                if red == "sum":
                    for j in idx:
                        out[b][j][r] = gr
                elif red == "mean":
                    for j in idx:
                        out[b][j][r] = gr / n
                elif red in ("max", "min"):
                    hits = [j for j in idx if dv[b][j][r] == res or (dv[b][j][r] != dv[b][j][r] and res != res)]
                    for j in hits:
                        out[b][j][r] = gr / len(hits)
                else:  # prod
                    for j in idx:
                        x = dv[b][j][r]
                        if x != 0:
                            out[b][j][r] = gr * res / x
                        else:
                            p = 1.0
                            for k in idx:
                                if k != j:
                                    p *= dv[b][k][r]
                            if s.initial is not None:
                                p *= s.initial
                            out[b][j][r] = gr * p
            start += n
    return torch.tensor(out, dtype=torch.float64).reshape(list(data.shape)).to(data.dtype)

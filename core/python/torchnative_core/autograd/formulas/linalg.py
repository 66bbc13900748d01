"""Matrix products."""

from __future__ import annotations

from ..formula import formula


def _scale(g, a):
    return g if a == 1 else g * a


@formula("mm", save=("self", "mat2"))
def _(s, g):
    return (g.mm(s.mat2.t()) if s.needs(0) else None), (s.self.t().mm(g) if s.needs(1) else None)


@formula("bmm", save=("self", "mat2"))
def _(s, g):
    return (g.bmm(s.mat2.transpose(1, 2)) if s.needs(0) else None), (s.self.transpose(1, 2).bmm(g) if s.needs(1) else None)


@formula("addmm", "addmm_", save=("mat1", "mat2"))
def _(s, g):
    a = s.alpha
    return (
        _scale(g, s.beta) if s.needs(0) else None,
        _scale(g.mm(s.mat2.t()), a) if s.needs(1) else None,
        _scale(s.mat1.t().mm(g), a) if s.needs(2) else None,
    )


@formula("baddbmm", "baddbmm_", save=("batch1", "batch2"))
def _(s, g):
    a = s.alpha
    return (
        _scale(g, s.beta) if s.needs(0) else None,
        _scale(g.bmm(s.batch2.transpose(1, 2)), a) if s.needs(1) else None,
        _scale(s.batch1.transpose(1, 2).bmm(g), a) if s.needs(2) else None,
    )


@formula("dot", save=("self", "tensor"))
def _(s, g):
    return (g * s.tensor if s.needs(0) else None), (g * s.self if s.needs(1) else None)


@formula("mv", save=("self", "vec"))
def _(s, g):
    return (g.unsqueeze(1) * s.vec.unsqueeze(0) if s.needs(0) else None), (s.self.t().mv(g) if s.needs(1) else None)

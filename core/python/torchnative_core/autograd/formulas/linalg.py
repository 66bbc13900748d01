"""Matrix products."""

from __future__ import annotations

from ..formula import cj, formula


def _scale(g, a):
    return g if a == 1 else g * a


def _column_major(t):
    st = t.stride()
    return st[0] == 1 and st[1] == t.shape[0]


def _mat1_grad(g, mat1, mat2):
    # upstream's mm_mat1_backward: a column-major input (a transposed weight) gets a
    # column-major gradient, which AccumulateGrad can then keep without a copy
    if _column_major(mat1):
        return mat2.mm(g.t()).t()
    return g.mm(mat2.t())


def _mat2_grad(g, mat1, mat2):
    # upstream's mm_mat2_backward, likewise
    if _column_major(mat2):
        return g.t().mm(mat1).t()
    return mat1.t().mm(g)


@formula("mm", save=("self", "mat2"))
def _(s, g):
    m1, m2 = s.self, s.mat2
    return (_mat1_grad(g, m1, cj(m2)) if s.needs(0) else None), (_mat2_grad(g, cj(m1), m2) if s.needs(1) else None)


@formula("bmm", save=("self", "mat2"))
def _(s, g):
    return (g.bmm(cj(s.mat2).transpose(1, 2)) if s.needs(0) else None), \
        (cj(s.self).transpose(1, 2).bmm(g) if s.needs(1) else None)


@formula("addmm", "addmm_", save=("mat1", "mat2"))
def _(s, g):
    a = s.alpha
    m1, m2 = s.mat1, s.mat2
    return (
        _scale(g, s.beta) if s.needs(0) else None,
        _scale(_mat1_grad(g, m1, cj(m2)), cj(a)) if s.needs(1) else None,
        _scale(_mat2_grad(g, cj(m1), m2), cj(a)) if s.needs(2) else None,
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
    return (g * cj(s.tensor) if s.needs(0) else None), (g * cj(s.self) if s.needs(1) else None)


@formula("mv", save=("self", "vec"))
def _(s, g):
    return (g.unsqueeze(1) * s.vec.unsqueeze(0) if s.needs(0) else None), (s.self.t().mv(g) if s.needs(1) else None)

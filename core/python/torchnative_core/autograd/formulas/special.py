"""Derivatives of ops/special/functions.py's functions and of the gamma and Poisson samplers:
upstream's derivatives.yaml formulas (i1_backward and i1e_backward of FunctionsManual.cpp for the
Bessel I1 pair), as torch compositions."""

from __future__ import annotations

import math

import torch

from ..formula import formula


@formula("lgamma", save=("self",))
def _(s, g):
    return g * torch.digamma(s.self)


@formula("digamma", save=("self",))
def _(s, g):
    return g * torch.polygamma(1, s.self)


@formula("polygamma", save=("self",))
def _(s, g):
    return g * torch.polygamma(s.n + 1, s.self)


@formula("mvlgamma", save=("self",))
def _(s, g):
    p = s.p
    args = torch.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=s.self.dtype).add(s.self.unsqueeze(-1))
    return g * args.digamma().sum(-1)


@formula("i0", save=("self",))
def _(s, g):
    return g * torch.special.i1(s.self)


@formula("special_i0e", save=("self", "result"))
def _(s, g):
    return g * (torch.special.i1e(s.self) - s.self.sgn() * s.result)


def _safe(x):
    eps = torch.finfo(x.dtype).eps
    not_tiny = x.abs() > eps
    return not_tiny, torch.where(not_tiny, x, torch.full((), eps, dtype=x.dtype))


@formula("special_i1", save=("self", "result"))
def _(s, g):
    not_tiny, x = _safe(s.self)
    gradx = x.i0() - s.result * x.reciprocal()
    return g * torch.where(not_tiny, gradx, torch.full((), 0.5, dtype=x.dtype))


@formula("special_i1e", save=("self", "result"))
def _(s, g):
    not_tiny, x = _safe(s.self)
    gradx = torch.special.i0e(x) - s.result * (x.sgn() + x.reciprocal())
    return g * torch.where(not_tiny, gradx, torch.full((), 0.5, dtype=x.dtype))


@formula("special_entr", save=("self",))
def _(s, g):
    return g * -(1 + s.self.log())


@formula("special_erfcx", save=("self", "result"))
def _(s, g):
    return (2.0 * s.self * s.result - 2.0 / math.sqrt(math.pi)) * g


@formula("special_ndtri", save=("result",))
def _(s, g):
    return g * math.sqrt(2 * math.pi) * (s.result.square() / 2).exp()


@formula("special_log_ndtr", save=("self", "result"))
def _(s, g):
    return g / math.sqrt(2 * math.pi) * (s.result + s.self.pow(2) / 2).neg().exp()


@formula("special_zeta", save=("self", "other"))
def _(s, g):
    if s.needs(0):
        raise NotImplementedError("the derivative for 'special_zeta' with respect to self is not implemented")
    return None, g * -s.self * torch.special.zeta(s.self + 1.0, s.other)


def _igamma_grad(name, sign):
    """Upstream's derivative with respect to x only: x^(a-1) e^-x / Gamma(a), negated for Q; the
    derivative in a is refused as upstream's not_implemented("igamma: input")."""

    def grad(s, g):
        if s.needs(0):
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        a, x = s.self, s.other
        return None, sign * g * ((a - 1) * x.log() - x - a.lgamma()).exp()

    return grad


formula("igamma", save=("self", "other"))(_igamma_grad("igamma", 1))
formula("igammac", save=("self", "other"))(_igamma_grad("igammac", -1))


@formula("special_xlog1py", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    return (g * torch.special.xlog1py((a != 0).to(g.dtype), b) if s.needs(0) else None), (g * a / (b + 1) if s.needs(1) else None)


@formula("logcumsumexp", save=("self", "result"))
def _(s, g):
    """upstream's logcumsumexp_backward (real branch): the positive and negative parts of the
    gradient go through a reversed logcumsumexp in log space (its own derivative, so double
    backward is logcumsumexp's again; composing logaddexp steps gave a wrong second derivative)."""
    if g.dim() == 0 or g.numel() == 0:
        return g
    dim = s.dim
    self_, result = s.self, s.result

    def reverse_lcse(x):
        return torch.flip(torch.logcumsumexp(torch.flip(x, [dim]), dim), [dim])

    grad_min = torch.full((), torch.finfo(g.dtype).min, dtype=g.dtype)
    log_abs = g.abs().log()
    log_pos = torch.where(g > 0, log_abs, grad_min)
    log_neg = torch.where(g < 0, log_abs, grad_min)
    out_pos = (reverse_lcse(log_pos - result) + self_).exp()
    out_neg = (reverse_lcse(log_neg - result) + self_).exp()
    return out_pos - out_neg


# --- ops/elementwise/math.py ---------------------------------------------------------------------

@formula("hypot", save=("self", "other", "result"))
def _(s, g):
    return (g * s.self / s.result if s.needs(0) else None), (g * s.other / s.result if s.needs(1) else None)


@formula("nextafter", save=("other",))
def _(s, g):
    # derivatives.yaml: the step is treated as the identity for self, a constant in other
    return (g if s.needs(0) else None), (torch.zeros_like(s.other) if s.needs(1) else None)


@formula("frexp.Tensor", save=("result1",), multi=True)
def _(s, grads):
    g = grads[0]
    return None if g is None else g / s.result1.to(g.dtype).exp2()


@formula("fill.Scalar")
def _(s, g):
    return torch.zeros_like(g)


@formula("fill.Tensor")
def _(s, g):
    return (torch.zeros_like(g) if s.needs(0) else None), (g.sum() if s.needs(1) else None)


@formula("index_fill.int_Tensor", save=("index",))
def _(s, g):
    gs = g.index_fill(s.dim, s.index, 0) if s.needs(0) else None
    gv = g.index_select(s.dim, s.index.reshape(-1).unique()).sum() if s.needs(1) else None
    return gs, gv


@formula("_standard_gamma", save=("self", "result"))
def _(s, g):
    return g * torch._standard_gamma_grad(s.self, s.result)


@formula("poisson", save=())
def _(s, g):
    return torch.zeros_like(g)

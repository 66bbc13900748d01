"""Pointwise operators (derivatives.yaml's formulas, written with torch operators)."""

from __future__ import annotations

import math

import torch

from ..formula import formula


def _scale(g, alpha):
    return g if alpha == 1 else g * alpha


@formula("add.Tensor", "add_.Tensor")
def _(s, g):
    return g, (_scale(g, s.alpha) if s.needs(1) else None)


@formula("add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "clone", "alias", "positive", "lift_fresh")
def _(s, g):
    return g


@formula("sub.Tensor", "sub_.Tensor")
def _(s, g):
    return g, (-_scale(g, s.alpha) if s.needs(1) else None)


@formula("rsub.Tensor")
def _(s, g):
    return -_scale(g, s.alpha), g


@formula("rsub.Scalar")
def _(s, g):
    return -_scale(g, s.alpha)


@formula("mul.Tensor", "mul_.Tensor", save=("self", "other"))
def _(s, g):
    return (g * s.other if s.needs(0) else None), (g * s.self if s.needs(1) else None)


@formula("mul.Scalar", "mul_.Scalar")
def _(s, g):
    return g * s.other


@formula("div.Tensor", "div_.Tensor", save=("self", "other"))
def _(s, g):
    other = s.other
    gs = g / other if s.needs(0) else None
    go = -g * s.self / (other * other) if s.needs(1) else None
    return gs, go


@formula("div.Tensor_mode", "div_.Tensor_mode", save=("self", "other"))
def _(s, g):
    if s.rounding_mode is not None:
        return (g * 0 if s.needs(0) else None), (g * 0 if s.needs(1) else None)
    other = s.other
    return (g / other if s.needs(0) else None), (-g * s.self / (other * other) if s.needs(1) else None)


@formula("div.Scalar", "div_.Scalar")
def _(s, g):
    return g / s.other


@formula("neg", "neg_")
def _(s, g):
    return -g


@formula("exp", "exp_", save=("result",))
def _(s, g):
    return g * s.result


@formula("expm1", save=("result",))
def _(s, g):
    return g * (s.result + 1)


@formula("log", "log_", save=("self",))
def _(s, g):
    return g / s.self


@formula("log2", save=("self",))
def _(s, g):
    return g / (s.self * math.log(2.0))


@formula("log10", save=("self",))
def _(s, g):
    return g / (s.self * math.log(10.0))


@formula("log1p", save=("self",))
def _(s, g):
    return g / (s.self + 1)


@formula("sqrt", "sqrt_", save=("result",))
def _(s, g):
    return g / (2 * s.result)


@formula("rsqrt", "rsqrt_", save=("result",))
def _(s, g):
    r = s.result
    return -0.5 * g * r * r * r


@formula("reciprocal", "reciprocal_", save=("result",))
def _(s, g):
    r = s.result
    return -g * r * r


@formula("pow.Tensor_Scalar", "pow_.Scalar", save=("self",))
def _(s, g):
    e = s.exponent
    if e == 0:
        return g * 0
    return g * e * s.self.pow(e - 1)


@formula("pow.Tensor_Tensor", "pow_.Tensor", save=("self", "exponent", "result"))
def _(s, g):
    self, e = s.self, s.exponent
    gs = g * e * self.pow(e - 1) if s.needs(0) else None
    ge = None
    if s.needs(1):
        ge = g * torch.where((self == 0) & (e >= 0), torch.zeros_like(self), s.result * self.log())
    return gs, ge


@formula("pow.Scalar", save=("result",))
def _(s, g):
    base = s.self
    if base == 0:
        return g * torch.where(s.exponent >= 0, torch.zeros_like(s.result), s.result * math.log(base) if base > 0 else s.result)
    return g * s.result * math.log(base)


@formula("abs", save=("self",))
def _(s, g):
    return g * s.self.sgn()


@formula("sgn", "sign", "sign_", "floor", "ceil", "round", "round.decimals", "trunc")
def _(s, g):
    return g * 0


@formula("frac")
def _(s, g):
    return g


@formula("sin", save=("self",))
def _(s, g):
    return g * s.self.cos()


@formula("cos", save=("self",))
def _(s, g):
    return -g * s.self.sin()


@formula("tan", save=("result",))
def _(s, g):
    r = s.result
    return g * (1 + r * r)


@formula("tanh", "tanh_", save=("result",))
def _(s, g):
    r = s.result
    return g * (1 - r * r)


@formula("sigmoid", "sigmoid_", save=("result",))
def _(s, g):
    r = s.result
    return g * r * (1 - r)


@formula("relu", "relu_", save=("result",))
def _(s, g):
    return g * (s.result > 0)


@formula("gelu", "gelu_", save=("self",))
def _(s, g):
    x = s.self
    if s.approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (x + 0.044715 * x * x * x)
        t = inner.tanh()
        dinner = k * (1 + 3 * 0.044715 * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)
    cdf = 0.5 * (1 + (x * (1 / math.sqrt(2.0))).erf())
    pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2.0 * math.pi))
    return g * (cdf + x * pdf)


@formula("silu", "silu_", save=("self",))
def _(s, g):
    x = s.self
    sig = x.sigmoid()
    return g * sig * (1 + x * (1 - sig))


@formula("leaky_relu", "leaky_relu_", save=("self",))
def _(s, g):
    x = s.self
    return g * torch.where(x > 0, torch.ones_like(x), torch.full_like(x, s.negative_slope))


@formula("elu", save=("self",))
def _(s, g):
    x = s.self
    neg = s.alpha * s.scale * (x * s.input_scale).exp() * s.input_scale
    return g * torch.where(x > 0, torch.full_like(x, s.scale), neg)


@formula("erf", save=("self",))
def _(s, g):
    x = s.self
    return g * (2.0 / math.sqrt(math.pi)) * (-x * x).exp()


@formula("clamp", "clamp_", save=("self",))
def _(s, g):
    x = s.self
    mask = torch.ones_like(x, dtype=torch.bool)
    if s.min is not None:
        mask = mask & (x >= s.min)
    if s.max is not None:
        mask = mask & (x <= s.max)
    return g * mask


@formula("clamp.Tensor", "clamp_.Tensor", save=("self", "min", "max"))
def _(s, g):
    x, lo, hi = s.self, s.min, s.max
    mask = torch.ones_like(x, dtype=torch.bool)
    if lo is not None:
        mask = mask & (x >= lo)
    if hi is not None:
        mask = mask & (x <= hi)
    glo = g * ((x < lo) if hi is None else (x < lo) & (lo <= hi)) if lo is not None and s.needs(1) else None
    ghi = g * (x > hi) if hi is not None and s.needs(2) else None
    return g * mask, glo, ghi


@formula("clamp_min", "clamp_min_", save=("self",))
def _(s, g):
    return g * (s.self >= s.min)


@formula("clamp_max", "clamp_max_", save=("self",))
def _(s, g):
    return g * (s.self <= s.max)


@formula("where.self", save=("condition",))
def _(s, g):
    c = s.condition
    z = torch.zeros((), dtype=g.dtype, device=g.device)
    return (torch.where(c, g, z) if s.needs(0) else None), (torch.where(c, z, g) if s.needs(1) else None)


@formula("masked_fill.Scalar", "masked_fill_.Scalar", save=("mask",))
def _(s, g):
    return g.masked_fill(s.mask, 0)


@formula("masked_fill.Tensor", "masked_fill_.Tensor", save=("mask",))
def _(s, g):
    m = s.mask
    return (g.masked_fill(m, 0) if s.needs(0) else None), (torch.where(m, g, torch.zeros_like(g)).sum() if s.needs(1) else None)


@formula("maximum", "max.other", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    half = g / 2
    ga = torch.where(a == b, half, g).masked_fill(a < b, 0) if s.needs(0) else None
    gb = torch.where(a == b, half, g).masked_fill(a > b, 0) if s.needs(1) else None
    return ga, gb


@formula("minimum", "min.other", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    half = g / 2
    ga = torch.where(a == b, half, g).masked_fill(a > b, 0) if s.needs(0) else None
    gb = torch.where(a == b, half, g).masked_fill(a < b, 0) if s.needs(1) else None
    return ga, gb


@formula("_to_copy")
def _(s, g):
    dtype, device = s.self_dtype, s.self_meta[2]
    return g.to(device=device, dtype=dtype)


@formula("copy_", inputs=("self", "src"), node="CopyBackwards")
def _(s, g):
    return (g * 0 if s.needs(0) else None), g


@formula("fill_.Scalar", "zero_", "normal_", "uniform_", "exponential_", "bernoulli_.float", "random_", "random_.from",
         "random_.to")
def _(s, g):
    return g * 0


@formula("fill_.Tensor")
def _(s, g):
    return g * 0, g.sum()


@formula("lerp.Scalar", save=("weight",))
def _(s, g):
    w = s.weight
    return g * (1 - w), g * w

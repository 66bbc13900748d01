"""Pointwise operators (derivatives.yaml's formulas, written with torch operators)."""

from __future__ import annotations

import math

import torch

from ..formula import cj, formula


def _scale(g, alpha):
    return g if alpha == 1 else g * alpha


@formula("add.Tensor", "add_.Tensor")
def _(s, g):
    return g, (_scale(g, s.alpha) if s.needs(1) else None)


@formula("add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "clone", "alias", "lift_fresh")
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
    return (g * cj(s.other) if s.needs(0) else None), (g * cj(s.self) if s.needs(1) else None)


@formula("mul.Scalar", "mul_.Scalar")
def _(s, g):
    return g * cj(s.other)


@formula("div.Tensor", "div_.Tensor", save=("self", "other"))
def _(s, g):
    other = s.other
    gs = g / cj(other) if s.needs(0) else None
    go = -g * cj((s.self / other) / other) if s.needs(1) else None  # upstream's order: no overflow in other**2
    return gs, go


@formula("div.Tensor_mode", "div_.Tensor_mode", save=("self", "other"))
def _(s, g):
    if s.rounding_mode is not None:
        return (g * 0 if s.needs(0) else None), (g * 0 if s.needs(1) else None)
    other = s.other
    return (g / other if s.needs(0) else None), (-g * ((s.self / other) / other) if s.needs(1) else None)


@formula("div.Scalar", "div_.Scalar")
def _(s, g):
    return g / cj(s.other)


@formula("neg", "neg_")
def _(s, g):
    return -g


@formula("exp", "exp_", save=("result",))
def _(s, g):
    return g * cj(s.result)


@formula("expm1", save=("result",))
def _(s, g):
    return g * (s.result + 1)


@formula("log", "log_", save=("self",))
def _(s, g):
    return g / cj(s.self)


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
    return g / (2 * cj(s.result))


@formula("rsqrt", "rsqrt_", save=("result",))
def _(s, g):
    r = cj(s.result)
    return -0.5 * g * r * r * r


@formula("reciprocal", "reciprocal_", save=("result",))
def _(s, g):
    r = cj(s.result)
    return -g * r * r


@formula("pow.Tensor_Scalar", "pow_.Scalar", save=("self",))
def _(s, g):
    # upstream's pow_backward: zeros (whatever the gradient holds) for exponent 0, else
    # grad * (exponent * self^(exponent - 1)), multiplied in that order
    e = s.exponent
    if e == 0:
        return torch.zeros_like(s.self)
    return g * cj(e * s.self.pow(e - 1))


@formula("pow.Tensor_Tensor", "pow_.Tensor", save=("self", "exponent", "result"))
def _(s, g):
    self, e = s.self, s.exponent
    gs = None
    if s.needs(0):  # pow_backward_self
        gs = torch.where(e == 0, torch.zeros((), dtype=g.dtype, device=g.device), g * (e * self.pow(e - 1)))
    ge = None
    if s.needs(1):
        ge = g * torch.where((self == 0) & (e >= 0), torch.zeros_like(self), s.result * self.log())
    return gs, ge


@formula("pow.Scalar", save=("exponent", "result"))
def _(s, g):
    # upstream's pow_backward_exponent: grad * (result * log(base)), 0 where base == 0 and the
    # exponent is non-negative
    base = s.self
    log = math.log(base) if base > 0 else (float("-inf") if base == 0 else math.nan)
    if base == 0:
        return g * torch.where(s.exponent >= 0, torch.zeros_like(s.result), s.result * log)
    return g * (s.result * log)


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
    return g * cj(s.self.cos())


@formula("cos", save=("self",))
def _(s, g):
    return -g * cj(s.self.sin())


@formula("tan", save=("result",))
def _(s, g):
    r = s.result
    return g * (1 + r * r)


@formula("tanh", "tanh_", save=("result",))
def _(s, g):
    r = cj(s.result)
    return g * (1 - r * r)


@formula("sigmoid", "sigmoid_", save=("result",))
def _(s, g):
    r = cj(s.result)
    return g * r * (1 - r)


@formula("relu", "relu_", save=("result",))
def _(s, g):
    return torch._C._aten_dispatch("threshold_backward", g, s.result, 0)


@formula("threshold_backward", save=("self",))
def _(s, g):
    # upstream's derivatives.yaml: grad_output: threshold_backward(grad, self, threshold);
    # self: zeros_like(grad)
    return (torch._C._aten_dispatch("threshold_backward", g, s.self, s.threshold) if s.needs(0) else None), (
        torch.zeros_like(g) if s.needs(1) else None)


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
    if not torch.is_grad_enabled():  # upstream: silu_backward, unless a graph of it is recorded
        return torch._C._aten_dispatch("silu_backward", g, x)
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
    """upstream's clamp_backward_min_max: where min > max the result is max everywhere."""
    x, lo, hi = s.self, s.min, s.max
    zero = torch.zeros((), dtype=g.dtype, device=g.device)
    if lo is not None and hi is not None:
        below, above = x < lo, x > hi
        gx = torch.where((below | above).logical_not(), g, zero)
        glo = torch.where(below & (lo < hi), g, zero) if s.needs(1) else None
        ghi = torch.where(above | (hi < lo), g, zero) if s.needs(2) else None
        return gx, glo, ghi
    if lo is not None:
        return torch.where(x >= lo, g, zero), (torch.where(x < lo, g, zero) if s.needs(1) else None), None
    if hi is not None:
        return torch.where(x <= hi, g, zero), None, (torch.where(x > hi, g, zero) if s.needs(2) else None)
    return g, None, None


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


@formula("maximum", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    half = g / 2
    ga = torch.where(a == b, half, g).masked_fill(a < b, 0) if s.needs(0) else None
    gb = torch.where(a == b, half, g).masked_fill(a > b, 0) if s.needs(1) else None
    return ga, gb


@formula("minimum", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    half = g / 2
    ga = torch.where(a == b, half, g).masked_fill(a > b, 0) if s.needs(0) else None
    gb = torch.where(a == b, half, g).masked_fill(a < b, 0) if s.needs(1) else None
    return ga, gb


@formula("_to_copy")
def _(s, g):
    dtype, device = s.self_dtype, s.self_meta[2]
    if g.is_complex() and not dtype.is_complex:
        g = g.real  # a real-to-complex copy: the real part, without the discarding warning
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


@formula("addcmul", save=("tensor1", "tensor2"))
def _(s, g):
    # upstream's derivatives.yaml (real dtypes); broadcast gradients are reduced by the engine
    v = s.value
    return (g if s.needs(0) else None,
            g * (s.tensor2 * v) if s.needs(1) else None,
            g * (s.tensor1 * v) if s.needs(2) else None)


@formula("addcdiv", save=("tensor1", "tensor2"))
def _(s, g):
    v, t1, t2 = s.value, s.tensor1, s.tensor2
    return (g if s.needs(0) else None,
            g * (v / t2) if s.needs(1) else None,
            -g * v * t1 / (t2 * t2) if s.needs(2) else None)


@formula("asin", save=("self",))
def _(s, g):
    x = s.self
    return g * (-x * x + 1).rsqrt()


@formula("acos", save=("self",))
def _(s, g):
    x = s.self
    return g * -((-x * x + 1).rsqrt())


@formula("atan", save=("self",))
def _(s, g):
    x = s.self
    return g / (x * x + 1)


@formula("sinh", save=("self",))
def _(s, g):
    return g * s.self.cosh()


@formula("cosh", save=("self",))
def _(s, g):
    return g * s.self.sinh()


@formula("asinh", save=("self",))
def _(s, g):
    x = s.self
    return g * (x * x + 1).rsqrt()


@formula("acosh", save=("self",))
def _(s, g):
    x = s.self
    return g * ((x + 1).rsqrt() * (x - 1).rsqrt())


@formula("atanh", save=("self",))
def _(s, g):
    x = s.self
    return g / (1 - x * x)


@formula("erfc", save=("self",))
def _(s, g):
    x = s.self
    return g * (-2.0 / math.sqrt(math.pi)) * (-x * x).exp()


@formula("erfinv", save=("result",))
def _(s, g):
    r = s.result
    return g * (0.5 * math.sqrt(math.pi)) * (r * r).exp()


@formula("exp2", save=("result",))
def _(s, g):
    return g * s.result * math.log(2.0)


@formula("hardtanh", "hardtanh_", save=("self",))
def _(s, g):
    x = s.self
    return g * ((x > s.min_val) & (x < s.max_val))


@formula("softplus", save=("self",))
def _(s, g):
    x = s.self
    z = (x * s.beta).exp()
    return torch.where(x * s.beta > s.threshold, g, g * z / (z + 1))


@formula("logaddexp", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    return (g / (1 + (b - a).exp()) if s.needs(0) else None), (g / (1 + (a - b).exp()) if s.needs(1) else None)


@formula("remainder.Tensor", save=("self", "other"))
def _(s, g):
    return g, (-g * (s.self / s.other).floor() if s.needs(1) else None)


@formula("remainder.Scalar", "fmod.Scalar")
def _(s, g):
    return g


@formula("fmod.Tensor", save=("self", "other"))
def _(s, g):
    return g, (-g * (s.self / s.other).trunc() if s.needs(1) else None)


@formula("atan2", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    r = a * a + b * b
    return (g * b / r if s.needs(0) else None), (g * -a / r if s.needs(1) else None)


@formula("xlogy.Tensor", save=("self", "other"))
def _(s, g):
    a, b = s.self, s.other
    ga = torch.where(a == 0, torch.zeros_like(g * a), g * b.log()) if s.needs(0) else None
    gb = g * a / b if s.needs(1) else None
    return ga, gb


@formula("nan_to_num", "nan_to_num_", save=("self",))
def _(s, g):
    return g * s.self.isfinite()


@formula("bernoulli")
def _(s, g):
    return g * 0

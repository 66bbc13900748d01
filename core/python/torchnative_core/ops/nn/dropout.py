"""Dropout variants as upstream's _dropout_impl (Dropout.cpp): alpha_dropout, feature_dropout,
feature_alpha_dropout and their in-place forms — a bernoulli(1 - p) noise tensor (one draw per
channel for the feature forms), scaled, multiplied in (plus the alpha shift) — and
native_dropout_backward.
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl


D = B.door


_ALPHA = 1.7580993408473766


def _dropout_impl(input, p, train, feature, alpha, inplace):
    if not 0 <= p <= 1:  # NaN too
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = B.call("zeros", [], B.dtype_of(input), device=B.device_of(input))
        return D("mul_.Tensor", input, zero) if inplace else D("mul.Tensor", input, zero)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        sizes = list(input.shape[:2]) + [1] * (input.dim() - 2)
        noise = B.call("empty.memory_format", sizes, B.dtype_of(input), device=B.device_of(input))
    else:
        noise = B.call("empty_like", input)
    D("bernoulli_.float", noise, 1 - p, None)
    b = None
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = D("add.Scalar", noise, -1, 1)
        D("mul_.Scalar", b, _ALPHA * a)
        D("add_.Scalar", b, _ALPHA * a * p, 1)
        D("mul_.Scalar", noise, a)
    else:
        D("div_.Scalar", noise, 1 - p)
    out = D("mul_.Tensor", input, noise) if inplace else D("mul.Tensor", input, noise)
    if alpha:
        out = D("add_.Tensor", out, b, 1)
    return out


for _name, _feature, _alpha in (("alpha_dropout", False, True), ("feature_dropout", True, False),
                                ("feature_alpha_dropout", True, True)):
    impl(_name)(lambda input, p, train, f=_feature, a=_alpha: _dropout_impl(input, p, train, f, a, False))
    impl(_name + "_")(lambda self, p, train, f=_feature, a=_alpha: _dropout_impl(self, p, train, f, a, True))


@impl("native_dropout_backward")
def native_dropout_backward(grad_output, mask, scale):
    return grad_output * mask * scale

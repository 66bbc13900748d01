"""Randomized leaky ReLU (RReLU): in training each non-positive element is scaled by its own
slope drawn uniformly from [lower, upper], recorded in `noise`; in evaluation the slope is the
mean of the bounds (a leaky ReLU). The draws are upstream's bit for bit: one
uniform_real_distribution<double> per non-positive element, in order, each a 64-bit draw of
the generator."""

from __future__ import annotations

from .. import base as B
from .. import impl


def _check(self, noise, lower, upper, training):
    from ..elementwise.arithmetic import _type_name

    if list(noise._tn_sizes) != list(self._tn_sizes):
        raise RuntimeError(f"noise tensor shape must match self tensor shape. Got self.shape = {list(self._tn_sizes)} "
                           f"noise.shape = {list(noise._tn_sizes)}")
    dt = B.dtype_of(self)
    if training and dt._tn_name not in ("float32", "float64", "bfloat16"):
        raise NotImplementedError(f'"rrelu_with_noise_out_cpu" not implemented for \'{_type_name(dt)}\'')
    if B.dtype_of(noise) is not dt:
        raise RuntimeError(f"expected scalar type {B.scalar_type_name(dt)} but found "
                           f"{B.scalar_type_name(B.dtype_of(noise))}")
    if training and float(lower) > float(upper):  # the draw's own check
        raise RuntimeError("Expected from <= to to be true, but got false.  (Could this error message be improved?  "
                           "If so, please report an enhancement request to PyTorch.)")


def _opmath(v, dt):
    """A bound as upstream's kernel reads it: Scalar::to<opmath_t> (float below double)."""
    import struct

    return v if dt._tn_name == "float64" else struct.unpack("f", struct.pack("f", float(v)))[0]


@impl("rrelu_with_noise")
def rrelu_with_noise(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    import torch

    _check(self, noise, lower, upper, training)
    if not training:
        return torch.nn.functional.leaky_relu(self, (float(lower) + float(upper)) / 2)
    dt = B.dtype_of(self)
    x = self.detach().contiguous().reshape(-1)
    neg = x <= 0
    k = int(neg.sum())
    lo, hi = _opmath(lower, dt), _opmath(upper, dt)
    # random_() on int64 is one 64-bit draw per element, reduced mod 2^63: the low 53 bits that
    # uniform_real_distribution<double> keeps are untouched
    bits = torch.empty(k, dtype=torch.int64).random_(generator=generator)
    u = (bits & ((1 << 53) - 1)).to(torch.float64) * 2.0 ** -53
    r = (u * (hi - lo) + lo).to(torch.float64 if dt._tn_name == "float64" else torch.float32)
    slopes = torch.ones(x.shape[0], dtype=r.dtype).masked_scatter(neg, r)
    noise.copy_(slopes.reshape(self.shape))
    # recorded as the product it is (no formula): the gradient is grad * noise, upstream's
    # rrelu_with_noise_backward in training
    return (self.to(r.dtype) * slopes.reshape(self.shape)).to(self.dtype)


@impl("rrelu_with_noise.out")
def rrelu_with_noise_out(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None, out=None):
    """The functional result written into out, which must hold self's dtype (upstream's eval path
    is leaky_relu_out, a TensorIterator of one dtype; its training path writes self's scalar_t)."""
    from ..forms.out_variants import write_out

    result = rrelu_with_noise(self, noise, lower, upper, training, generator)
    if B.dtype_of(out) is not B.dtype_of(self):
        raise RuntimeError(f"Found dtype {B.scalar_type_name(B.dtype_of(out))} but expected "
                           f"{B.scalar_type_name(B.dtype_of(self))}")
    return write_out(out, result)


@impl("rrelu_with_noise_backward")
def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    import torch

    if training and float(upper) - float(lower) > 1e-6:
        return grad_output * noise
    slope = (float(lower) + float(upper)) / 2
    return torch.ops.aten.leaky_relu_backward(grad_output, self, slope, self_is_result)


@impl("rrelu")
def rrelu(self, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    import torch

    if float(lower) > float(upper):  # rrelu's own check; rrelu_with_noise has only the draw's
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")

    return torch.ops.aten.rrelu_with_noise(self, torch.empty_like(self), lower, upper, training, generator)


@impl("rrelu_with_noise_functional")
def rrelu_with_noise_functional(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """The functional form: the noise written into a copy, returned beside the result."""
    import torch

    noise_out = noise.clone()
    return torch.ops.aten.rrelu_with_noise(self, noise_out, lower, upper, training, generator), noise_out

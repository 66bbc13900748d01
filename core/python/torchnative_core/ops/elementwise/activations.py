"""Activations composed of other operators (upstream's composites, or the closed forms of its
kernels), or launched as the device's unary kernel (elu, hardtanh, softplus); each is
differentiable through its parts.
"""

from __future__ import annotations

from .. import OWN_KERNEL, impl
from .. import base as B
from .math import _num


D = B.door


_SELU_ALPHA = 1.6732632423543772848170429916717


_SELU_SCALE = 1.0507009873554804934193349852946


@impl("prelu")
def prelu(self, weight):
    """Upstream's checks, then its reshape of the weight to self's rank (a 0-dim input keeps its
    shape with a one-element weight)."""
    import torch

    from .arithmetic import _type_name

    if self.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_type_name(self.dtype)} and "
                           f"{_type_name(weight.dtype)}")
    if weight.numel() != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape[1] if self.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {weight.numel()} and "
                f"channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    B.floating_kernel_only(self, "prelu_cpu")
    if self.dim() != weight.dim():
        weight = weight.reshape([1, weight.numel()] + [1] * (self.dim() - 2) if self.dim() > 1 else [1] * self.dim())
    return torch.where(self > 0, self, weight * self)


@impl("selu")
def selu(self):
    import torch

    return torch.ops.aten.elu(self, _SELU_ALPHA, _SELU_SCALE, 1.0)


@impl("celu")
def celu(self, alpha=1.0):
    import torch

    return torch.ops.aten.elu(self, alpha, 1.0, 1.0 / alpha)


@impl("glu")
def glu(self, dim=-1):
    if not self.dim():
        raise RuntimeError("glu does not support 0-dimensional tensors")
    n = self.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % self.dim()} is size {n}")
    B.floating_kernel_only(self, "glu_cpu")
    a, b = self.chunk(2, dim)
    return a * b.sigmoid()


@impl("log_sigmoid_forward")
def log_sigmoid_forward(self):
    """min(x, 0) - log1p(z) with z = exp(-|x|), stable for large |x|; z is the buffer, as
    upstream's CPU kernel keeps it. Differentiated as one node (LogSigmoidBackward0)."""
    d = B.dtype_of(self)
    if not d.is_floating_point:
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{B.scalar_type_name(d)}\'')
    z = (-self.abs()).exp()
    return self.clamp(max=0) - z.log1p(), z.contiguous()


@impl("log_sigmoid_backward")
def log_sigmoid_backward(grad_output, self, buffer):
    """upstream's kernel: (max_deriv - sign * z / (1 + z)) * grad with z = exp(-|x|), max_deriv
    and sign 1 where x < 0, 0 and -1 elsewhere (so the slope at 0 is 1/2)."""
    import torch

    z = (-self.abs()).exp()
    q = z / (1 + z)
    return torch.where(self < 0, 1 - q, q) * grad_output


@impl("log_sigmoid")
def log_sigmoid(self):
    return D("log_sigmoid_forward", self)[0]


@impl("hardsigmoid")
def hardsigmoid(self):
    B.floating_kernel_only(self, "hardsigmoid_cpu")
    return (self / 6 + 0.5).clamp(0, 1)


@impl("softshrink")
def softshrink(self, lambd=0.5):
    import torch

    B.floating_kernel_only(self, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    zero = torch.zeros((), dtype=self.dtype)
    return torch.where(self > lambd, self - lambd, torch.where(self < -lambd, self + lambd, zero))


@impl("hardshrink")
def hardshrink(self, lambd=0.5):
    import torch

    B.floating_kernel_only(self, "hardshrink_cpu")
    return torch.where((self > lambd) | (self < -lambd), self, torch.zeros((), dtype=self.dtype))


@impl("threshold")
def threshold(self, threshold, value):
    import torch

    # upstream's kernel: x <= threshold ? value : x, so a NaN input stays NaN; every type but bool
    if B.dtype_of(self) is B.BOOL:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    # an integer tensor compares against the threshold in its own dtype (Scalar::to<scalar_t>:
    # truncated, and refused beyond the dtype); floating ones against it in opmath
    t = threshold if self.is_floating_point() else torch.full((), threshold, dtype=self.dtype)
    return torch.where(self <= t, torch.full((), value, dtype=self.dtype), self)


@impl("threshold_backward")
def threshold_backward(grad_output, self, threshold):
    """`self <= threshold ? 0 : grad_output` (the derivative of relu and threshold): one kernel
    where the device has it, else the same selection composed."""
    from .. import base as B
    from .arithmetic import binary

    if B.C._tn_has_kernel("threshold_backward", B.device_of(self).type):
        return binary("threshold_backward", grad_output, self, threshold)
    import torch

    return torch.where(self <= threshold, torch.zeros((), dtype=grad_output.dtype), grad_output)


@impl("silu_backward")
def silu_backward(grad_output, self):
    """Upstream's silu_backward kernel: float32 natively, bit for bit (its fused multiply-add
    included); other dtypes composed in its order, `dy * s * (1 + x * (1 - s))`."""
    from .arithmetic import binary

    if (B.dtype_of(grad_output) is B.F32 and B.dtype_of(self) is B.F32
            and B.C._tn_has_kernel("silu_backward", B.device_of(self).type)):
        return binary("silu_backward", grad_output, self)
    sig = D("sigmoid", self)
    one = B.C._tn_scalar_to_tensor(1)
    inner = D("add.Tensor", one, D("mul.Tensor", self, D("sub.Tensor", one, sig)))
    return D("mul.Tensor", D("mul.Tensor", grad_output, sig), inner)


OWN_KERNEL.add("silu_backward")  # launches the cpu kernel itself (no composite router in front)


@impl("mish")
def mish(self):
    B.floating_kernel_only(self, "mish_cpu")
    return D("mul.Tensor", self, D("tanh", D("softplus", self, 1, 20)))


@impl("hardswish")
def hardswish(self):
    B.floating_kernel_only(self, "hardswish_cpu")
    return D("div.Tensor", D("mul.Tensor", self, D("hardtanh", D("add.Tensor", self, _num(3), 1), 0, 6)), _num(6))


@impl("relu6")
def relu6(self):
    return D("hardtanh", self, 0, 6)


@impl("leaky_relu")
def leaky_relu(self, negative_slope=0.01):
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("leaky_relu", (self, negative_slope), (out,))
    return out


def _kernel_unary(name):
    def fn(self, *params):
        out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
        if B.numel(self._tn_sizes):
            B.launch(name, (self, *params), (out,))
        return out

    return fn


impl("elu")(_kernel_unary("elu"))


_hardtanh_kernel = _kernel_unary("hardtanh")


@impl("hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    # upstream's hardtanh_out: no bool; integer bounds (truncated) non-negative for uint8
    d = B.dtype_of(self)
    if d is B.BOOL:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if d._tn_name == "uint8" and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _hardtanh_kernel(self, min_val, max_val)


impl("softplus")(_kernel_unary("softplus"))

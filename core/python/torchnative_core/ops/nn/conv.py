"""Convolution: the `convolution` meta step (upstream's checks in its order) and kernel launch,
transposed convolution, and the conv1d/2d/3d and conv_transpose entry points with string padding.
"""

from __future__ import annotations

from .. import base as B
from .. import impl

_door = B.door


def _conv_out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """upstream's _convolution argument checks (Convolution.cpp: expand_param_if_needed and
    check_shape_forward), in its order, so a wrong call fails as upstream's does."""
    ws = list(weight._tn_sizes)
    nsp = len(ws) - 2
    if nsp <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    params = {"stride": stride, "padding": padding, "dilation": dilation, "output_padding": output_padding}
    for name, v in params.items():
        if len(v) != 1 and len(v) != nsp:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {nsp} values to match the "
                               f"convolution dimensions, but got {name}={list(v)}")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    k = len(input._tn_sizes)
    if k != len(ws) and k != len(ws) - 1:
        return  # the caller words the batched/unbatched message
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{ws}] instead")  # upstream prints the sizes in brackets twice
    if bias is not None:
        want = ws[1] * groups if transposed else ws[0]
        if len(bias._tn_sizes) != 1 or bias._tn_sizes[0] != want:
            given = "Given transposed=1, weight" if transposed else "Given weight"
            raise RuntimeError(f"{given} of size {ws}, expected bias to be 1-dimensional with {want} elements, "
                               f"but got bias of size {list(bias._tn_sizes)} instead")


@impl("convolution")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    _check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    nsp = len(weight._tn_sizes) - 2
    if len(input._tn_sizes) != nsp + 2:
        raise RuntimeError(
            f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to conv{nsp}d, but got input of size: {list(input._tn_sizes)}"
        )
    if transposed:
        return _conv_transposed(input, weight, bias, stride, padding, dilation, output_padding, groups)
    n, c = input._tn_sizes[0], input._tn_sizes[1]
    oc, icg = weight._tn_sizes[0], weight._tn_sizes[1]
    if icg * groups != c:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight._tn_sizes)}, expected input{list(input._tn_sizes)} to have "
            f"{icg * groups} channels, but got {c} channels instead"
        )
    expand = lambda v: list(v) * nsp if len(v) == 1 else list(v)  # noqa: E731
    stride, padding, dilation = expand(stride), expand(padding), expand(dilation)
    spatial = []
    for i in range(nsp):
        o = _conv_out(input._tn_sizes[2 + i], weight._tn_sizes[2 + i], stride[i], padding[i], dilation[i])
        if o <= 0:
            raise RuntimeError(
                f"Calculated output size: ({o}). Output size is too small"
            )
        spatial.append(o)
    out = B.empty([n, oc] + spatial, B.dtype_of(input), B.device_of(input))
    B.launch("convolution", (input, weight, bias, stride, padding, dilation, transposed, expand(output_padding), groups), (out,))
    return out


def _conv_transposed(input, weight, bias, stride, padding, dilation, output_padding, groups):
    """A transposed convolution as a stride-1 convolution of the zero-dilated, padded input with
    the spatially flipped, in/out-swapped weight (no kernel of its own needed). weight is
    (in, out / groups, *k); each output size is (in - 1) * stride - 2 * padding
    + dilation * (k - 1) + output_padding + 1."""
    nsp = len(weight._tn_sizes) - 2
    expand = lambda v: list(v) * nsp if len(v) == 1 else list(v)  # noqa: E731
    stride, padding, dilation, output_padding = expand(stride), expand(padding), expand(dilation), expand(output_padding)
    cin, cout_g = weight._tn_sizes[0], weight._tn_sizes[1]
    if input._tn_sizes[1] != cin:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight._tn_sizes)}, expected input{list(input._tn_sizes)} to have "
            f"{cin} channels, but got {input._tn_sizes[1]} channels instead"
        )
    k = list(weight._tn_sizes[2:])
    x = input
    for i, st in enumerate(stride):
        if st > 1:  # zeros between the input's elements
            n = x._tn_sizes[2 + i]
            shape = list(x._tn_sizes)
            shape[2 + i] = (n - 1) * st + 1
            z = B.call("zeros", shape, B.dtype_of(x), device=B.device_of(x))
            idx = B.call("arange.start_step", 0, shape[2 + i], st, B.I64, device=B.device_of(x))
            x = _door("index_add", z, 2 + i, idx, x, 1)
    for i in range(nsp):
        out_i = (input._tn_sizes[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k[i] - 1) + output_padding[i] + 1
        lo = dilation[i] * (k[i] - 1) - padding[i]
        hi = out_i - x._tn_sizes[2 + i] - lo + dilation[i] * (k[i] - 1)
        x = _pad_dim(x, 2 + i, lo, hi)
    w = _door("flip", weight, list(range(2, 2 + nsp)))
    w = _door("reshape", w, [groups, cin // groups, cout_g] + k)
    w = _door("reshape", _door("transpose.int", w, 1, 2), [groups * cout_g, cin // groups] + k)
    return _door("convolution", x, w, bias, [1] * nsp, [0] * nsp, dilation, False, [0] * nsp, groups)


def _pad_dim(t, dim, lo, hi):
    """Pads (or, for negative amounts, trims) dimension `dim` by lo before and hi after."""
    if lo < 0:
        t = _door("narrow", t, dim, -lo, t._tn_sizes[dim] + lo)
        lo = 0
    if hi < 0:
        t = _door("narrow", t, dim, 0, t._tn_sizes[dim] + hi)
        hi = 0
    if lo or hi:
        pad = [0, 0] * (len(t._tn_sizes) - 1 - dim) + [lo, hi]
        t = _door("constant_pad_nd", t, pad, 0)
    return t


def _conv_transpose_nd(nsp):
    def conv_t(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1, dilation=(1,)):
        unbatched = len(input._tn_sizes) == nsp + 1
        x = _door("unsqueeze", input, 0) if unbatched else input
        out = _door("convolution", x, weight, bias, list(stride), list(padding), list(dilation), True,
                    list(output_padding), groups)
        return _door("squeeze.dim", out, 0) if unbatched else out

    return conv_t


impl("conv_transpose1d")(_conv_transpose_nd(1))


impl("conv_transpose2d.input")(_conv_transpose_nd(2))


impl("conv_transpose3d.input")(_conv_transpose_nd(3))


_SAME_WARNED = []


def _warn_same_padding_once():
    if not _SAME_WARNED:  # upstream's TORCH_WARN_ONCE
        import warnings

        _SAME_WARNED.append(True)
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of "
                      "the input be created", UserWarning, stacklevel=4)


def _convnd(nsp):
    def conv(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        unbatched = len(input._tn_sizes) == nsp + 1
        x = _door("unsqueeze", input, 0) if unbatched else input
        if isinstance(padding, str):
            if padding == "valid":
                padding = [0] * nsp
            else:
                if any(s != 1 for s in (stride if len(stride) > 1 else stride * nsp)):
                    raise RuntimeError("padding='same' is not supported for strided convolutions")
                dil = dilation if len(dilation) > 1 else list(dilation) * nsp
                total = [d * (k - 1) for d, k in zip(dil, weight._tn_sizes[2:])]
                padding = [t // 2 for t in total]
                if any(t % 2 for t in total):
                    # upstream's _convolution_mode: the odd unit of padding goes on the right side
                    _warn_same_padding_once()
                    extra = []
                    for t in reversed(total):
                        extra += [0, t % 2]
                    x = _door("constant_pad_nd", x, extra, 0)
        out = _door("convolution", x, weight, bias, list(stride), list(padding), list(dilation), False, [0] * nsp, groups)
        return _door("squeeze.dim", out, 0) if unbatched else out

    return conv


impl("conv1d")(_convnd(1))


impl("conv2d")(_convnd(2))


impl("conv3d")(_convnd(3))


impl("conv1d.padding")(_convnd(1))


impl("conv2d.padding")(_convnd(2))


impl("conv3d.padding")(_convnd(3))


@impl("conv_tbc")
def conv_tbc(self, weight, bias, pad=0):
    """Time-batch-channel convolution (ConvolutionTBC.cpp): the output starts as the bias and each
    kernel tap adds one matrix product of the input rows it reaches."""
    import torch

    if self.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if weight.shape[1] != self.shape[2]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.dim() != 1 or weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    ilen, batch, cin = self.shape
    k, _, cout = weight.shape
    olen = ilen + 2 * pad - k + 1
    out = torch.empty(olen, batch, cout, dtype=self.dtype).copy_(bias.expand(olen, batch, cout))
    rows = []
    for kk in range(k):
        i_shift, o_shift = max(0, kk - pad), max(0, pad - kk)
        t = min(ilen + pad - kk, olen) - o_shift
        if t > 0:
            rows.append((o_shift, t, torch.mm(self[i_shift:i_shift + t].reshape(t * batch, cin), weight[kk])))
    for o_shift, t, p in rows:
        out = out.index_add(0, torch.arange(o_shift, o_shift + t), p.reshape(t, batch, cout))
    return out


@impl("conv_tbc_backward")
def conv_tbc_backward(self, input, weight, bias, pad):
    """The gradients of conv_tbc (self: the output's gradient) through its own composition."""
    import torch

    with torch.enable_grad():
        xs = [t.detach().requires_grad_() for t in (input, weight, bias)]
        out = conv_tbc(*xs, pad)
        return tuple(torch.autograd.grad(out, xs, self))


# --- the "slow" convolution entry points: upstream's unfolded-GEMM kernels, the same results as
# convolution (which they reach here), with their own argument checks -------------------------

def _slow_lengths(nd, style, **params):
    for name, v in params.items():
        if len(v) != nd:
            if style == "2d":
                raise RuntimeError(f"2D {name} expected")
            if style == "dilated":
                plural = {"stride": "strides", "dilation": "dilations", "padding": "paddings",
                          "kernel_size": "kernel sizes"}[name]
                raise RuntimeError(f"{plural} length should be {nd}, but got {len(v)}")
            raise RuntimeError(f"It is expected {name} equals to {nd}, but got size {len(v)}")


def _slow_conv(self, weight, kernel_size, bias, stride, padding, dilation, nd, style, transposed=False,
               output_padding=None):
    import torch

    params = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    if style == "3d":
        params = {"kernel_size": kernel_size, "padding": padding, "stride": stride}
    if style == "dilated":
        params["dilation"] = dilation
    if transposed:
        params = {"kernel_size": kernel_size, "stride": stride, "padding": padding, "output_padding": output_padding,
                  "dilation": dilation}
    _slow_lengths(nd, style, **params)
    groups = None
    if style == "3d" and nd == 3 and not transposed:
        # slow_conv3d divides input.size(1) by weight.size(1) (its group count) before its checks
        w1 = weight._tn_sizes[B.size_dim(1, weight.dim())]
        groups = self._tn_sizes[B.size_dim(1, self.dim())] // w1 if w1 else 0
    batched = self.dim() == nd + 2
    if not batched and (style != "dilated" and not transposed or self.dim() != nd + 1):
        if style == "2d":
            raise RuntimeError(f"Expected 4D input tensor, but got: {list(self.shape)}")
        raise RuntimeError(f"non-empty {nd + 2}D input tensor expected but got: {list(self.shape)}")
    if groups == 0:
        raise RuntimeError("none zero group size expected")
    if min(stride) <= 0:
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"stride_{n}: {v}" for n, v in zip(["depth", "height", "width"][-nd:], stride)))
    if list(weight.shape[2:]) != list(kernel_size):
        raise RuntimeError(f"kernel_size {list(kernel_size)} does not match the weight's sizes {list(weight.shape)}")
    x = self if batched else self.unsqueeze(0)
    out = torch.ops.aten.convolution(x, weight, bias, list(stride), list(padding), list(dilation), transposed,
                                     list(output_padding or [0] * nd), 1)
    # (upstream's transposed kernels keep the batch of one they add to an unbatched input)
    return out if batched or transposed else out.squeeze(0)


@impl("thnn_conv2d", "_slow_conv2d_forward")
def thnn_conv2d(self, weight, kernel_size, bias=None, stride=(1, 1), padding=(0, 0)):
    return _slow_conv(self, weight, kernel_size, bias, stride, padding, [1, 1], 2, "2d")


@impl("slow_conv3d", "slow_conv3d_forward")
def slow_conv3d(self, weight, kernel_size, bias=None, stride=(1, 1, 1), padding=(0, 0, 0)):
    return _slow_conv(self, weight, kernel_size, bias, stride, padding, [1, 1, 1], 3, "3d")


@impl("slow_conv_dilated2d")
def slow_conv_dilated2d(self, weight, kernel_size, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    return _slow_conv(self, weight, kernel_size, bias, stride, padding, dilation, 2, "dilated")


@impl("slow_conv_dilated3d")
def slow_conv_dilated3d(self, weight, kernel_size, bias=None, stride=(1, 1, 1), padding=(0, 0, 0),
                        dilation=(1, 1, 1)):
    return _slow_conv(self, weight, kernel_size, bias, stride, padding, dilation, 3, "dilated")


@impl("slow_conv_transpose2d")
def slow_conv_transpose2d(self, weight, kernel_size, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                          dilation=(1, 1)):
    return _slow_conv(self, weight, kernel_size, bias, stride, padding, dilation, 2, "3d", True, output_padding)


@impl("slow_conv_transpose3d")
def slow_conv_transpose3d(self, weight, kernel_size, bias=None, stride=(1, 1, 1), padding=(0, 0, 0),
                          output_padding=(0, 0, 0), dilation=(1, 1, 1)):
    return _slow_conv(self, weight, kernel_size, bias, stride, padding, dilation, 3, "3d", True, output_padding)

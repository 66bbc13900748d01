"""Neural-network operators: softmax, normalisations, convolution, pooling, dropout, attention.
Composite operators decompose the way upstream's CPU path does, so a TorchDispatchMode sees
the same operator sequence (e.g. layer_norm -> native_layer_norm)."""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

import math

from . import base as B
from . import impl


_door = B.door


def _cast(t, dtype):
    if dtype is None or B.dtype_of(t) is dtype:
        return t
    return _door("_to_copy", t, dtype, None, None, None, False, None)


@impl("_softmax")
def _softmax(self, dim, half_to_float):
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, nd) if nd else 0
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("_softmax", (self, d, half_to_float), (out,))
    return out


@impl("_log_softmax")
def _log_softmax(self, dim, half_to_float):
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, nd) if nd else 0
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("_log_softmax", (self, d, half_to_float), (out,))
    return out


def _float_input(self, dtype):
    if dtype is not None:
        return _cast(self, dtype)
    d = B.dtype_of(self)
    return self if (d.is_floating_point or d.is_complex) else _cast(self, B.default_dtype())


@impl("softmax.int")
def softmax(self, dim, dtype=None):
    return _door("_softmax", _float_input(self, dtype), dim, False)


@impl("log_softmax.int")
def log_softmax(self, dim, dtype=None):
    return _door("_log_softmax", _float_input(self, dtype), dim, False)


@impl("native_layer_norm")
def native_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    sizes = list(input._tn_sizes)
    k = len(normalized_shape)
    if list(sizes[len(sizes) - k:]) != list(normalized_shape) or k == 0 or k > len(sizes):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape [*, "
            + ", ".join(str(s) for s in normalized_shape) + f"], but got input of size{sizes}"
        )
    for w, name in ((weight, "weight"), (bias, "bias")):
        if w is not None and list(w._tn_sizes) != list(normalized_shape):
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(w._tn_sizes)} and normalized_shape = {list(normalized_shape)}"
            )
    x = input if input._tn_is_contiguous() else _door("contiguous", input, None)
    d = B.dtype_of(input)
    stat_dtype = d
    if d._tn_name in ("float16", "bfloat16") and weight is not None and B.dtype_of(weight)._tn_name == "float32":
        stat_dtype = B.F32
    stat_shape = sizes[: len(sizes) - k] + [1] * k
    out = B.empty(sizes, d, B.device_of(input))
    mean = B.empty(stat_shape, stat_dtype, B.device_of(input))
    rstd = B.empty(stat_shape, stat_dtype, B.device_of(input))
    B.launch("native_layer_norm", (x, list(normalized_shape), weight, bias, eps), (out, mean, rstd))
    return out, mean, rstd


@impl("layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _door("native_layer_norm", input, list(normalized_shape), weight, bias, eps)[0]


@impl("_native_batch_norm_legit_no_training")
def _bn_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    out = B.empty(input._tn_sizes, B.dtype_of(input), B.device_of(input))
    save = B.empty([0], B.dtype_of(input), B.device_of(input))
    save2 = B.empty([0], B.dtype_of(input), B.device_of(input))
    B.launch("_native_batch_norm_legit_no_training", (input, weight, bias, running_mean, running_var, momentum, eps),
             (out, save, save2))
    return out, save, save2


@impl("batch_norm")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    # upstream: batch_norm -> _batch_norm_impl_index -> native_batch_norm on CPU
    if not B.numel(list(input._tn_sizes)):
        # _batch_norm_impl_index: a copy (not a view, so the gradient chain holds), scaled and
        # shifted by the first weight and bias
        out = _door("clone", input, CONTIGUOUS_FORMAT)
        if weight is not None:
            out = _door("mul.Tensor", out, _door("select.int", weight, 0, 0))
        if bias is not None:
            out = _door("add.Tensor", out, _door("select.int", bias, 0, 0), 1)
        return out
    return _door("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


@impl("native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Inference uses the backend's kernel; training computes batch statistics by composition
    (biased variance to normalise, unbiased to update the running variance, as upstream)."""
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        return _door("_native_batch_norm_legit_no_training", input, weight, bias, running_mean, running_var, momentum, eps)
    sizes = list(input._tn_sizes)
    nd = len(sizes)
    dims = [0] + list(range(2, nd))
    shape = [1, sizes[1]] + [1] * (nd - 2)
    n = B.numel(sizes) // max(sizes[1], 1)
    if n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {sizes}")
    if B.C._tn_has_kernel("native_batch_norm", input._tn_device_key) and input._tn_is_contiguous():
        # one kernel in upstream's order (the cpu backend's: contiguous float32/float64 with
        # parameters of the input's dtype); it updates the running statistics in place
        dt, dev = B.dtype_of(input), B.device_of(input)
        out, save_mean, save_invstd = B.empty(sizes, dt, dev), B.empty([sizes[1]], dt, dev), B.empty([sizes[1]], dt, dev)
        try:
            B.launch("native_batch_norm", (input, weight, bias, running_mean, running_var, training, momentum, eps),
                     (out, save_mean, save_invstd))
        except NotImplementedError:
            pass
        else:
            # (upstream's kernel updates them without a version bump, as here)
            return out, save_mean, save_invstd
    var, mean = _door("var_mean.correction", input, dims, 0, False)
    invstd = _door("rsqrt", _door("add.Scalar", var, eps, 1))
    out = _door("mul.Tensor", _door("sub.Tensor", input, _door("view", mean, shape), 1), _door("view", invstd, shape))
    if weight is not None:
        out = _door("mul.Tensor", out, _door("view", weight, shape))
    if bias is not None:
        out = _door("add.Tensor", out, _door("view", bias, shape), 1)
    if running_mean is not None:
        _door("add_.Tensor", _door("mul_.Scalar", running_mean, 1 - momentum), mean, momentum)
    if running_var is not None:
        unbiased = _door("mul.Scalar", var, n / (n - 1))
        _door("add_.Tensor", _door("mul_.Scalar", running_var, 1 - momentum), unbiased, momentum)
    return out, mean, invstd


@impl("native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    """One kernel where the device has it (the cpu backend's: contiguous float32, upstream's
    batch_norm_cpu_backward order); otherwise upstream's decomposition. Outputs not asked for by
    output_mask are None, as upstream's."""
    dev = B.device_of(input)
    sizes = list(input._tn_sizes)
    if (len(sizes) >= 2 and B.C._tn_has_kernel("native_batch_norm_backward", input._tn_device_key)
            and input._tn_is_contiguous() and grad_out._tn_is_contiguous()):
        dt = B.dtype_of(input)
        dx, dw, db = B.empty(sizes, dt, dev), B.empty([sizes[1]], dt, dev), B.empty([sizes[1]], dt, dev)
        try:
            B.launch("native_batch_norm_backward", (grad_out, input, weight, running_mean, running_var, save_mean,
                                                    save_invstd, train, eps, output_mask), (dx, dw, db))
        except NotImplementedError:
            pass
        else:
            return tuple(t if m else None for t, m in zip((dx, dw, db), output_mask))
    from . import upstream_decompositions

    return upstream_decompositions.lookup("native_batch_norm_backward")(
        grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, output_mask)


@impl("_native_batch_norm_legit")
def native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    # upstream's CPU kernel (_batch_norm_legit_cpu) is batch_norm_cpu, as native_batch_norm's
    return _door("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)


@impl("_native_batch_norm_legit_functional")
def native_batch_norm_legit_functional(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """The functional variant (what functionalization and exported programs call): the updated
    running statistics are new tensors, the given ones untouched."""
    running_mean = _door("clone", running_mean, CONTIGUOUS_FORMAT)
    running_var = _door("clone", running_var, CONTIGUOUS_FORMAT)
    out, mean, invstd = _door("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum,
                              eps)
    return out, mean, invstd, running_mean, running_var


@impl("_native_batch_norm_legit.no_stats")
def native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return _door("native_batch_norm", input, weight, bias, None, None, training, momentum, eps)


@impl("_batch_norm_with_update")
def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """_batch_norm_with_update_cpu: training-mode batch_norm_cpu and an empty uint8 reserve."""
    out, mean, invstd = _door("native_batch_norm", input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, B.empty([0], B.T.BY_NAME["uint8"], B.device_of(input))


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
            z = _door("zeros", shape, B.dtype_of(x), None, B.device_of(x), None)
            idx = _door("arange.start_step", 0, shape[2 + i], st, B.I64, None, B.device_of(x), None)
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


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    o = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


@impl("max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
    k = two(kernel_size)
    s = two(stride) if stride else list(k)
    p, d = two(padding), two(dilation)
    sizes = list(self._tn_sizes)
    oh = _pool_out(sizes[-2], k[0], s[0], p[0], d[0], ceil_mode)
    ow = _pool_out(sizes[-1], k[1], s[1], p[1], d[1], ceil_mode)
    shape = sizes[:-2] + [oh, ow]
    out = B.empty(shape, B.dtype_of(self), B.device_of(self))
    idx = B.empty(shape, B.I64, B.device_of(self))
    B.launch("max_pool2d_with_indices", (self, k, s, p, d, ceil_mode), (out, idx))
    return out, idx


@impl("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """The gradient of max_pool2d: each output gradient added into the input position its index
    names. One kernel where the device has it, else a scatter_add over each plane."""
    sizes = list(self._tn_sizes)
    if len(sizes) not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got: {sizes}")
    if list(grad_output._tn_sizes) != list(indices._tn_sizes) or list(grad_output._tn_sizes[:-2]) != sizes[:-2]:
        raise RuntimeError(f"max_pool2d_with_indices_backward: grad_output of size {list(grad_output._tn_sizes)} does "
                           f"not fit indices {list(indices._tn_sizes)} and input {sizes}")
    dev = B.device_of(self)
    if B.C._tn_has_kernel("max_pool2d_with_indices_backward", dev.type):
        out = B.empty(sizes, B.dtype_of(grad_output), dev)
        B.launch("max_pool2d_with_indices_backward",
                 (grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices), (out,))
        return out
    lead = sizes[:-2]
    z = _door("zeros", lead + [sizes[-2] * sizes[-1]], B.dtype_of(grad_output), None, dev, None)
    flat = lambda t: _door("reshape", t, lead + [-1])  # noqa: E731
    _door("scatter_add_", z, len(lead), flat(indices), flat(grad_output))
    return _door("reshape", z, sizes)


@impl("max_pool1d_with_indices")
def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """A 1-D pool is the 2-D one over a height of one (indices are then positions along the row)."""
    one = lambda v: [1] + list(v)  # noqa: E731
    x = _door("unsqueeze", self, -2)
    out, idx = _door("max_pool2d_with_indices", x, one(kernel_size), one(stride) if len(stride) else [],
                     [0] + list(padding), one(dilation), ceil_mode)
    return _door("squeeze.dim", out, -2), _door("squeeze.dim", idx, -2)


@impl("max_pool1d")
def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return _door("max_pool1d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _max_unpool(self, indices, output_size, nd, name):
    """upstream's max_unpooling kernels (MaxUnpooling.cpp): each plane's values written at the
    positions its indices name in a zeroed output (a repeated index keeps the last value here;
    upstream's choice varies from run to run); an index outside the output plane is refused."""
    from .elementwise import _type_name

    sizes = list(self._tn_sizes)
    if B.dtype_of(indices) is not B.I64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_type_name(B.dtype_of(indices))}")
    words = {2: "two elements (height, width)", 3: "three elements (depth, height, width)"}[nd]
    if len(output_size) != nd:
        raise RuntimeError(f"There should be exactly {words} in output_size, but got {len(output_size)} elements.")
    if len(sizes) not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {len(sizes)} dimensions.")
    if sizes != list(indices._tn_sizes):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({sizes}) but got "
                           f"indices tensor with shape: {list(indices._tn_sizes)}")
    for i in range(1, len(sizes)):
        if sizes[i] <= 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{sizes} with dimension {i} being empty.")
    out_sp = [int(v) for v in output_size]
    total, lead = B.numel(out_sp), sizes[:-nd]
    rows = B.numel(lead)
    flat = _door("reshape", self, [rows, -1])
    idx = _door("reshape", indices, [rows, -1])
    bad = _door("logical_or", _door("lt.Scalar", idx, 0), _door("ge.Scalar", idx, total))
    if B.numel(sizes) and bool(_door("any", bad)):
        first = _door("masked_select", idx, bad)[0].item()
        # (upstream's planes run in parallel, so which invalid index it names may vary; the first here)
        raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of size "
                           f"{'x'.join(map(str, out_sp))})")
    out = _door("zeros", [rows, total], B.dtype_of(self), None, B.device_of(self), None)
    _door("scatter_.src", out, 1, idx, flat)
    return _door("reshape", out, lead + out_sp)


@impl("max_unpool2d")
def max_unpool2d(self, indices, output_size):
    return _max_unpool(self, indices, output_size, 2, "max_unpooling2d_forward_out_cpu()")


@impl("max_unpool3d")
def max_unpool3d(self, indices, output_size, stride, padding):
    if len(stride) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in stride, but got: "
                           f"{len(stride)} elements.")
    if len(padding) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in padding, but got: "
                           f"{len(padding)} elements.")
    if min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    return _max_unpool(self, indices, output_size, 3, "max_unpooling3d_forward_out_cpu()")


@impl("max_pool2d")
def max_pool2d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return _door("max_pool2d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


@impl("_scaled_dot_product_flash_attention_for_cpu")
def sdpa_flash_cpu(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    if query._tn_device_key != "cpu":
        # the cpu kernel reads grouped key/value heads in place, as upstream's fused kernel does
        # (no copy of the cache per decode step); other backends' kernels take equal head counts
        key, value = gqa_expand(query, key), gqa_expand(query, value)
    else:
        hq, hk = query._tn_sizes[-3], key._tn_sizes[-3]
        if hk == 0 or hq % hk or value._tn_sizes[-3] != hk:
            raise RuntimeError(f"number of heads in key/value ({hk}) must divide the number of heads in query ({hq})")
    sizes = list(query._tn_sizes)
    lse_dtype = B.F32 if B.dtype_of(query)._tn_name != "float64" else B.dtype_of(query)
    if query._tn_device_key in ("cpu", "meta") and len(sizes) == 4 and value._tn_sizes[-1] == sizes[-1]:
        # upstream's layouts (sdp_utils / attention.cpp): the output is empty_like(query), so it
        # keeps a (batch, seq, heads, dim) query's layout and `.transpose(1, 2).contiguous()`
        # after it copies nothing; logsumexp is [B, L, H] memory seen as [B, H, L]
        out = B.empty(sizes, B.dtype_of(query), B.device_of(query))
        strides = B.C._tn_elementwise_strides(sizes, [query])  # empty_like's preserve_format
        if strides is not None:
            out._tn_set_geometry(sizes, strides, 0)
        bn, hn, ln = sizes[:3]
        lse = B.empty([bn, ln, hn], lse_dtype, B.device_of(query))
        lse._tn_set_geometry([bn, hn, ln], [ln * hn, 1, hn], 0)
    else:
        out = B.empty(sizes[:-1] + [value._tn_sizes[-1]], B.dtype_of(query), B.device_of(query))
        lse = B.empty(sizes[:-1], lse_dtype, B.device_of(query))
    B.launch("_scaled_dot_product_flash_attention_for_cpu", (query, key, value, dropout_p, is_causal, attn_mask, scale),
             (out, lse))
    return out, lse


@impl("_scaled_dot_product_flash_attention_for_cpu_backward")
def sdpa_flash_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask=None,
                            scale=None):
    if dropout_p > 0.0:
        raise NotImplementedError("torchnative: the derivative of scaled_dot_product_attention with dropout is not "
                                  "implemented yet")
    operands = (grad_out, query, key, value, out, logsumexp) + ((attn_mask,) if attn_mask is not None else ())
    if query._tn_device_key != "cpu" or any(B.dtype_of(t) is not B.F32 for t in operands):
        # the cpu backend's kernel is float32; other dtypes and devices compose the gradient
        return tuple(sdpa_backward_math(grad_out, query, key, value, attn_mask, is_causal, scale))
    grads = tuple(B.empty(list(t._tn_sizes), B.F32, B.device_of(t)) for t in (query, key, value))
    B.launch("_scaled_dot_product_flash_attention_for_cpu_backward",
             (grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale), grads)
    return grads


def sdpa_backward_math(grad, query, key, value, attn_mask, is_causal, scale):
    """The gradients of attention `softmax(q k^T * scale + mask) v` (key/value heads serving
    several query heads, as the forward reads them) as a composition of operators: the backward
    of every dtype and device without a fused kernel, and the one that records a graph under
    `create_graph`."""
    import torch

    q, k0, v0 = query, key, value
    groups = q.shape[-3] // k0.shape[-3] if q.dim() >= 3 and k0.dim() >= 3 else 1
    k = k0.repeat_interleave(groups, -3) if groups > 1 else k0  # grouped-query attention
    v = v0.repeat_interleave(groups, -3) if groups > 1 else v0
    sc = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    a = q.matmul(k.transpose(-2, -1)) * sc
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        a = a.masked_fill(torch.ones(L, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    if attn_mask is not None:
        a = a + attn_mask
    p = a.softmax(-1)
    p = p.masked_fill(p != p, 0)  # rows masked entirely attend to nothing (the kernel outputs zeros)
    dv = p.transpose(-2, -1).matmul(grad)
    dp = grad.matmul(v.transpose(-2, -1))
    da = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = da.matmul(k) * sc
    dk = da.transpose(-2, -1).matmul(q) * sc
    if groups > 1:  # each key/value head's gradient is the sum over the query heads it served
        shape = list(k0.shape[:-3]) + [k0.shape[-3], groups] + list(k0.shape[-2:])
        dk, dv = dk.reshape(shape).sum(-3), dv.reshape(shape[:-1] + [v0.shape[-1]]).sum(-3)
    return dq, dk, dv


def gqa_expand(query, kv):
    """Grouped-query attention: each key/value head serves query_heads / kv_heads query heads
    (upstream's fused CPU kernel takes the smaller tensors as they are; ours sees them repeated)."""
    if len(kv._tn_sizes) < 3 or len(query._tn_sizes) < 3:
        return kv
    hq, hk = query._tn_sizes[-3], kv._tn_sizes[-3]
    if hq == hk:
        return kv
    if hk == 0 or hq % hk:
        raise RuntimeError(f"number of heads in key/value ({hk}) must divide the number of heads in query ({hq})")
    return _door("repeat_interleave.self_int", kv, hq // hk, -3, None)


def _bool_mask_to_float(attn_mask, dtype):
    # upstream's convert_boolean_attn_mask: where(mask, 0, -inf), its two scalars made in the
    # order (and with the options) its compiled code makes them, which export graphs show
    import torch

    dev = B.device_of(attn_mask)
    neg_inf = _door("scalar_tensor", float("-inf"), dtype, None, dev, None)
    zero = _door("scalar_tensor", 0.0, dtype, torch.strided, dev, None)
    return _door("where.self", attn_mask, zero, neg_inf)


def _flash_applies(q, k, v, attn_mask, dropout_p, enable_gqa):
    """upstream's CPU backend choice (sdp_utils_cpp.cpp use_flash_attention_cpp): the fused kernel
    for 4-d dense inputs with matching batch sizes and heads (GQA when enabled), equal head sizes,
    non-empty sequences, unit last-dim strides, a 2-d or 4-d mask that broadcasts without needing
    a gradient, and no dropout; the math composite otherwise."""
    qs, ks, vs = q._tn_sizes, k._tn_sizes, v._tn_sizes
    if dropout_p > 0.0 or not (len(qs) == len(ks) == len(vs) == 4):
        return False
    if not (qs[0] == ks[0] == vs[0]):
        return False
    if enable_gqa:
        if ks[1] != vs[1] or not ks[1] or qs[1] % ks[1]:
            return False
    elif not (qs[1] == ks[1] == vs[1]):
        return False
    if not (qs[-1] == ks[-1] == vs[-1]) or not qs[-2] or not ks[-2]:
        return False
    if attn_mask is not None:
        ms = attn_mask._tn_sizes
        if attn_mask.requires_grad or len(ms) not in (2, 4) or ms[-2] not in (qs[2], 1) or ms[-1] not in (ks[2], 1):
            return False
        if len(ms) == 4 and (ms[0] not in (1, qs[0]) or ms[1] not in (1, qs[1])):
            return False
    return all(t._tn_strides[-1] == 1 for t in (q, k, v))


@impl("scaled_dot_product_attention")
def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if not _flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _door("_scaled_dot_product_attention_math", query, key, value, attn_mask, dropout_p, is_causal, None,
                     scale, enable_gqa)[0]
    if attn_mask is not None and B.dtype_of(attn_mask) is B.BOOL:
        attn_mask = _bool_mask_to_float(attn_mask, B.dtype_of(query))
    return _door("_scaled_dot_product_flash_attention_for_cpu", query, key, value, dropout_p, is_causal, attn_mask, scale)[0]


@impl("_scaled_dot_product_attention_math")
def sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None,
              enable_gqa=False):
    """upstream's composite (attention.cpp): q and k each scaled by sqrt(scale), matmul, mask,
    _safe_softmax, dropout, matmul."""
    if dropout_mask is not None:
        raise NotImplementedError("aten._scaled_dot_product_attention_math with dropout_mask is not implemented yet")
    neg = scale is not None and scale < 0
    e = query._tn_sizes[-1]
    factor = (abs(scale) if scale is not None else 1.0 / math.sqrt(e)) ** 0.5
    q = _door("mul.Scalar", query, -factor if neg else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        L, S = query._tn_sizes[-2], key._tn_sizes[-2]
        ones = _door("ones", [L, S], B.BOOL, None, B.device_of(query), None)
        attn_mask = _door("tril", ones, 0)
    if attn_mask is not None and B.dtype_of(attn_mask) is B.BOOL:
        attn_mask = _bool_mask_to_float(attn_mask, B.dtype_of(query))
    if enable_gqa:
        # key and value repeat each to the query's heads by their own factor (upstream's
        # pre_process_group_query_attention_input: they may differ, e.g. NeMo's diarization)
        hq, hk, hv = query._tn_sizes[-3], key._tn_sizes[-3], value._tn_sizes[-3]
        if hq != hk:
            key = _door("repeat_interleave.self_int", key, hq // hk, -3, None)
        if hq != hv:
            value = _door("repeat_interleave.self_int", value, hq // hv, -3, None)
    kt = _door("mul.Scalar", _door("transpose.int", key, -2, -1), factor)
    attn = _door("matmul", q, kt)
    if attn_mask is not None:
        attn = _door("add.Tensor", attn, attn_mask, 1)
    attn = _door("_safe_softmax", attn, -1, None)
    if dropout_p > 0.0:
        attn = _door("dropout", attn, dropout_p, True)
    return _door("matmul", attn, value), attn


@impl("_safe_softmax")
def safe_softmax(self, dim, dtype=None):
    """softmax, with rows that are -inf throughout giving zeros instead of NaN."""
    out = _door("_softmax", _float_input(self, dtype), dim, False)
    masked = _door("all.dim", _door("eq.Scalar", self, float("-inf")), dim, True)
    return _door("masked_fill.Scalar", out, masked, 0.0)


@impl("_native_multi_head_attention")
def native_mha(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask=None,
               need_weights=True, average_attn_weights=True, mask_type=None):
    """nn.MultiheadAttention's inference fast path (batch_first), as a composition: project,
    split heads, scale q by 1/sqrt(head_dim), softmax(q k^T + mask) v, merge, project."""
    b, lq, _ = query._tn_sizes
    lk = key._tn_sizes[1]
    dh = embed_dim // num_head
    w_q, w_k, w_v = _door("split.Tensor", qkv_weight, embed_dim, 0)
    b_q, b_k, b_v = _door("split.Tensor", qkv_bias, embed_dim, 0)

    def heads(x, w, bias, length):
        y = _door("linear", x, w, bias)
        return _door("transpose.int", _door("view", y, [b, length, num_head, dh]), 1, 2)

    q = _door("div.Tensor", heads(query, w_q, b_q, lq), B.C._tn_scalar_to_tensor(float(dh) ** 0.5))
    k, v = heads(key, w_k, b_k, lk), heads(value, w_v, b_v, lk)
    scores = _door("matmul", q, _door("transpose.int", k, -2, -1))
    if mask is not None:
        m = mask
        if B.dtype_of(m) is B.BOOL:
            zero = _door("zeros_like", m, B.dtype_of(scores), None, None, None, None)
            m = _door("masked_fill.Scalar", zero, m, float("-inf"))
        if mask_type == 1 and len(m._tn_sizes) == 2:  # key padding mask (B, Lk)
            m = _door("view", m, [b, 1, 1, lk])
        scores = _door("add.Tensor", scores, m, 1)
    attn = _door("softmax.int", scores, -1, None)
    out = _door("matmul", attn, v)
    out = _door("reshape", _door("transpose.int", out, 1, 2), [b, lq, embed_dim])
    out = _door("linear", out, proj_weight, proj_bias)
    if not need_weights:
        return out, B.empty([0], B.dtype_of(query), B.device_of(query))
    weights = _door("mean.dim", attn, [1], False, None) if average_attn_weights else attn
    return out, weights

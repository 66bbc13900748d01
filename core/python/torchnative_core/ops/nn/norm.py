"""Normalisation layers: layer, batch, group, instance and RMS normalisation, and weight
normalisation. Composites decompose the way upstream's CPU path does (layer_norm ->
native_layer_norm; instance_norm is batch_norm over a (1, N*C, ...) view; rms_norm upcasts half
types), so a TorchDispatchMode sees the same operator sequence.
"""

from __future__ import annotations

from .. import impl
from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B


_door = B.door


@impl("native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    import torch

    x = input.reshape(N, group, (C // group) * HxW)  # explicit: N may be 0
    var, mean = torch.var_mean(x, dim=2, correction=0)
    rstd = (var + eps).rsqrt()
    out = ((x - mean.unsqueeze(2)) * rstd.unsqueeze(2)).reshape(input.shape)
    shape = [1, C] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean, rstd


@impl("group_norm")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    import torch

    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    hxw = input.numel() // max(n * c, 1)
    return torch.native_group_norm(input.contiguous(), weight, bias, n, c, hxw, num_groups, eps)[0]


@impl("instance_norm")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    import torch

    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    x = input.contiguous().view([1, b * c] + list(input.shape[2:]))
    rep = lambda t: t.repeat(b) if t is not None else None  # noqa: E731
    rm, rv = rep(running_mean), rep(running_var)
    out = torch.batch_norm(x, rep(weight), rep(bias), rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    with torch.no_grad():  # the running statistics are averaged back over the batch
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(input.shape)


@impl("rms_norm")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    import torch

    k = len(normalized_shape)
    if not k:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {list(normalized_shape)}")
    if input.dim() < k:  # (upstream's composite raises a ValueError here)
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.dim()}")
    if list(input.shape[input.dim() - k:]) != list(normalized_shape):
        # upstream's rms_norm spells the shape without layer_norm's comma after the star
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape [*"
            + ", ".join(str(s) for s in normalized_shape) + f"], but got input of size{list(input.shape)}"
        )
    B.floating_kernel_only(input, "rms_norm", complex_ok=True)
    half = input.dtype in (torch.float16, torch.bfloat16)
    x = input.float() if half else input
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    dims = list(range(input.dim() - k, input.dim()))
    out = (x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()).type_as(input)
    return out * weight if weight is not None else out


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
    sizes = list(input._tn_sizes)
    if not B.numel(sizes):
        # _batch_norm_impl_index: a copy (not a view, so the gradient chain holds), scaled and
        # shifted by the first weight and bias
        out = _door("clone", input, CONTIGUOUS_FORMAT)
        if weight is not None:
            out = _door("mul.Tensor", out, _door("select.int", weight, 0, 0))
        if bias is not None:
            out = _door("add.Tensor", out, _door("select.int", bias, 0, 0), 1)
        return out
    # _batch_norm_impl_index's checks, in its order (a 1-d input counts 0 features)
    features = sizes[1] if len(sizes) >= 2 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None:
            n = B.numel(list(t._tn_sizes))
            if n != features:
                raise RuntimeError(f"{name} should contain {features} elements not {n}")
        elif not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    return _door("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


@impl("batch_norm_update_stats")
def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """Each channel's mean and biased variance; the running statistics (when given) updated as
    native_batch_norm's training updates them (the unbiased variance)."""
    B.floating_kernel_only(input, "batch_norm_update_stats_cpu")
    params = [t for t in (running_mean, running_var) if t is not None]
    for t in params:
        if len(t._tn_sizes) != 1:
            raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {len(t._tn_sizes)}")
    x = input
    if any(B.dtype_of(t) is not B.dtype_of(input) for t in params):
        # upstream's mixed type: a float16/bfloat16 input with float32 statistics, in float32
        if B.dtype_of(input)._tn_name not in ("float16", "bfloat16") or any(B.dtype_of(t) is not B.F32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        x = B.call("_to_copy", input, B.F32)
    sizes = list(x._tn_sizes)
    n = B.numel(sizes) // max(sizes[1], 1)
    var, mean = _door("var_mean.correction", x, [0] + list(range(2, len(sizes))), 0, False)
    if running_mean is not None:
        _door("add_.Tensor", _door("mul_.Scalar", running_mean, 1 - momentum), mean, momentum)
    if running_var is not None:
        _door("add_.Tensor", _door("mul_.Scalar", running_var, 1 - momentum), _door("mul.Scalar", var, n / (n - 1)),
              momentum)
    return mean, var


@impl("native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Inference uses the backend's kernel; training computes batch statistics by composition
    (biased variance to normalise, unbiased to update the running variance, as upstream)."""
    if len(input._tn_sizes) < 2:
        B.wrap_dim(1, len(input._tn_sizes))  # upstream reads input.size(1): its IndexError
    if (running_mean is None) != (running_var is None):  # then batch_norm_cpu's first check
        raise ValueError("running_mean and running_var must either both be None or neither be None")
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
    from ..door import decompositions as upstream_decompositions

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
    return B.call("native_batch_norm", input, weight, bias, None, None, training, momentum, eps)


@impl("_batch_norm_with_update")
def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """_batch_norm_with_update_cpu: training-mode batch_norm_cpu and an empty uint8 reserve."""
    out, mean, invstd = _door("native_batch_norm", input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, B.empty([0], B.T.BY_NAME["uint8"], B.device_of(input))


# --- weight normalisation ----------------------------------------------------------------------

@impl("norm_except_dim")
def norm_except_dim(v, pow=2, dim=0):
    if dim == -1:
        return v.norm(pow)
    nd = v.dim()
    if dim == 0:
        shape = [v.shape[0]] + [1] * (nd - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == nd - 1:
        shape = [1] * (nd - 1) + [v.shape[-1]]
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@impl("_weight_norm_interface")
def _weight_norm_interface(v, g, dim=0):
    norms = norm_except_dim(v, 2, dim)
    return v * (g / norms), norms.reshape(g.shape) if norms.numel() == g.numel() else norms


@impl("_weight_norm")
def _weight_norm(v, g, dim=0):
    import torch

    if v.dtype != torch.float16 and g.dtype != torch.float16 and (dim == 0 or dim == v.dim() - 1):
        return _weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))

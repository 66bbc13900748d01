"""Neural-network operators: softmax, normalisation, convolution, pooling, dropout, losses,
attention. Convolution's backward is itself made of forward convolutions (the transposed
convolution for the input, a batch/channel-swapped convolution for the weight), so it needs no
backward kernel from the backend."""

from __future__ import annotations


import torch

from ...ops.nn.attention import sdpa_backward_math
from ..formula import formula


@formula("_softmax", "_safe_softmax", save=("result",))
def _(s, g):
    y = s.result
    return y * (g - (g * y).sum(s.dim, keepdim=True))


@formula("_log_softmax", save=("result",))
def _(s, g):
    return torch._C._aten_dispatch("_log_softmax_backward_data", g, s.result, s.dim, s.self_dtype)


@formula("_log_softmax_backward_data", save=("grad_output", "output"))
def _(s, g):
    # upstream's derivatives.yaml
    out = s.output
    gg = g.to(out.dtype)
    d_grad = gg - (gg * out.exp()).sum(s.dim, keepdim=True) if s.needs(0) else None
    d_out = (-s.grad_output.sum(s.dim, keepdim=True) * out.exp() * gg).to(out.dtype) if s.needs(1) else None
    return d_grad, d_out


@formula("native_layer_norm", save=("input", "weight", "result1", "result2"), multi=True)
def _(s, grads):
    g, g_mean, g_rstd = grads
    x, w = s.input, s.weight
    k = len(s.normalized_shape)
    nd = x.dim()
    norm_dims = list(range(nd - k, nd))
    batch_dims = list(range(nd - k))
    mean, rstd = s.result1, s.result2
    n = 1
    for d in s.normalized_shape:
        n *= d
    xhat = (x - mean) * rstd
    dx = _stat_grads(x, mean, rstd, n, g_mean, g_rstd) if s.needs(0) else None
    if g is None:
        return dx, None, None
    gw = g * w if w is not None else g
    if s.needs(0):
        d = (rstd / n) * (n * gw - gw.sum(norm_dims, keepdim=True) - xhat * (gw * xhat).sum(norm_dims, keepdim=True))
        dx = d if dx is None else dx + d
    # sum over the batch dimensions; none (input shaped like normalized_shape) means no sum
    bsum = (lambda t: t.sum(batch_dims)) if batch_dims else (lambda t: t)
    dw = bsum(g * xhat) if w is not None and s.needs(1) else None
    db = bsum(g) if s.needs(2) else None
    return dx, dw, db


def _stat_grads(x, mean, rstd, n, g_mean, g_rstd):
    """What gradients of the saved mean and 1/std outputs contribute to the input:
    d mean/dx = 1/n, d rstd/dx = -rstd^3 (x - mean) / n (biased variance)."""
    dx = None
    if g_mean is not None:
        dx = g_mean.reshape(mean.shape) / n + x * 0
    if g_rstd is not None:
        r = rstd
        d = -g_rstd.reshape(r.shape) * r * r * r * (x - mean) / n
        dx = d if dx is None else dx + d
    return dx


def _bn_backward_kernel(g, x):
    """Whether the gradient runs as one native_batch_norm_backward: no graph of the backward is
    built (upstream's double backward differentiates the formula below) and the device's kernel
    takes the layout (contiguous float32 planes of more than one element)."""
    return (not torch.is_grad_enabled() and x.dtype is torch.float32 and g.dtype is torch.float32 and x.dim() >= 3
            and x.numel() >= 2 * x.shape[0] * x.shape[1] > 0 and x.is_contiguous() and g.is_contiguous()
            and torch._C._tn_has_kernel("native_batch_norm_backward", x.device.type))


@formula("native_batch_norm", save=("input", "weight", "running_mean", "running_var", "result1", "result2"), multi=True)
def _(s, grads):
    g, g_mean, g_invstd = grads
    x, w = s.input, s.weight
    nd = x.dim()
    if g is not None and _bn_backward_kernel(g, x):
        # one kernel in upstream's order (the cpu backend's native_batch_norm_backward)
        mask = [s.needs(0), s.needs(1) and w is not None, s.needs(2)]
        dx, dw, db = torch._C._aten_dispatch("native_batch_norm_backward", g, x, w, s.running_mean, s.running_var,
                                             s.result1, s.result2, s.training, s.eps, mask)
        if s.training and s.needs(0) and (g_mean is not None or g_invstd is not None):
            shape = [1, x.shape[1]] + [1] * (nd - 2)
            extra = _stat_grads(x, s.result1.reshape(shape), s.result2.reshape(shape), x.numel() // x.shape[1], g_mean,
                                g_invstd)
            dx = extra if dx is None else dx + extra
        return dx, dw, db
    dims = [0] + list(range(2, nd))
    shape = [1, x.shape[1]] + [1] * (nd - 2)
    n = x.numel() // x.shape[1]
    if s.training:
        mean, invstd = s.result1.reshape(shape), s.result2.reshape(shape)
        dx = _stat_grads(x, mean, invstd, n, g_mean, g_invstd) if s.needs(0) else None
    else:
        mean, invstd = s.running_mean.reshape(shape), (s.running_var + s.eps).rsqrt().reshape(shape)
        dx = None
    if g is None:
        return dx, None, None
    xhat = (x - mean) * invstd
    gw = g * w.reshape(shape) if w is not None else g
    if s.needs(0):
        if s.training:
            d = (invstd / n) * (n * gw - gw.sum(dims, keepdim=True) - xhat * (gw * xhat).sum(dims, keepdim=True))
        else:
            d = gw * invstd
        dx = d if dx is None else dx + d
    dw = (g * xhat).sum(dims) if w is not None and s.needs(1) else None
    db = g.sum(dims) if s.needs(2) else None
    return dx, dw, db


# --- convolution ------------------------------------------------------------------------------

def conv_input_grad(g, weight, input_sizes, stride, padding, dilation, groups):
    """The gradient of a convolution with respect to its input: the transposed convolution of
    the output gradient with the same weight, output_padding chosen to give the input's size."""
    nsp = len(input_sizes) - 2
    k = list(weight.shape[2:])
    out_pad = [input_sizes[2 + i] - ((g.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k[i] - 1) + 1)
               for i in range(nsp)]
    return torch.convolution(g, weight, None, list(stride), list(padding), list(dilation), True, out_pad, groups)


def conv_weight_grad(x, g, weight_sizes, stride, padding, dilation, groups):
    """The gradient with respect to the weight: the input and the output gradient correlated,
    with batch and channels swapped (a convolution whose stride is the dilation and vice versa).
    With groups, one grouped convolution: group i's input channels become the batch and its
    samples the group's channels (vmap's per-sample weights make as many groups as samples)."""
    nsp = len(weight_sizes) - 2
    cin_g = weight_sizes[1]
    n, sp = x.shape[0], list(x.shape[2:])
    if groups > 1:
        xs = x.reshape([n, groups, cin_g] + sp).permute([2, 1, 0] + list(range(3, 3 + nsp)))
        xs = xs.reshape([cin_g, groups * n] + sp)
    else:
        xs = x.transpose(0, 1)
    r = torch.convolution(xs, g.transpose(0, 1), None, list(dilation), list(padding), list(stride), False, [0] * nsp,
                          groups)
    r = r.transpose(0, 1)
    for i in range(nsp):
        r = r.narrow(2 + i, 0, weight_sizes[2 + i])
    return r


def _expand(v, n):
    v = list(v)
    return v * n if len(v) == 1 else v


@formula("convolution", save=("input", "weight"))
def _(s, g):
    x, w = s.input, s.weight
    nsp = w.dim() - 2
    stride, padding, dilation = _expand(s.stride, nsp), _expand(s.padding, nsp), _expand(s.dilation, nsp)
    if s.transposed:
        # a transposed convolution is the adjoint of the convolution with the same weight
        gx = None
        if s.needs(0):
            gx = torch.convolution(g, w, None, stride, padding, dilation, False, [0] * nsp, s.groups)
            for i in range(nsp):  # an output_padding of a stride or more adds positions no input fed
                gx = gx.narrow(2 + i, 0, x.shape[2 + i])
        gw = conv_weight_grad(g, x, list(w.shape), stride, padding, dilation, s.groups) if s.needs(1) else None
    else:
        gx = conv_input_grad(g, w, list(x.shape), stride, padding, dilation, s.groups) if s.needs(0) else None
        gw = conv_weight_grad(x, g, list(w.shape), stride, padding, dilation, s.groups) if s.needs(1) else None
    gb = g.sum([0] + list(range(2, g.dim()))) if s.needs(2) else None
    return gx, gw, gb


# --- pooling ------------------------------------------------------------------------------------

def _max_pool_formulas(nd):
    # upstream's derivatives.yaml: self: max_pool{nd}d_with_indices_backward(grad, self, kernel_size,
    # stride, padding, dilation, ceil_mode, result1); the backward's own: grad_output:
    # max_pool_double_backward(grad, indices, nd) (the gradient gathered back at the indices),
    # self: zeros_like(self)
    @formula(f"max_pool{nd}d_with_indices", save=("self", "result1"), multi=True)
    def _(s, grads):
        g = grads[0]
        if g is None:
            return None
        return torch._C._aten_dispatch(f"max_pool{nd}d_with_indices_backward", g, s.self, s.kernel_size, s.stride,
                                       s.padding, s.dilation, s.ceil_mode, s.result1)

    @formula(f"max_pool{nd}d_with_indices_backward", save=("indices",))
    def _(s, g):
        idx = s.indices
        gg = g.flatten(-nd).gather(-1, idx.flatten(-nd)).view(idx.shape) if s.needs(0) else None
        return gg, (torch.zeros_like(g) if s.needs(1) else None)


_max_pool_formulas(2)
_max_pool_formulas(3)


@formula("_adaptive_avg_pool2d")
def _(s, g):
    sizes = s.self_sizes
    h, w = sizes[-2:]
    oh, ow = g.shape[-2:]
    if h % oh or w % ow:
        raise NotImplementedError("torchnative: the derivative of adaptive_avg_pool2d with uneven windows is not implemented yet")
    kh, kw = h // oh, w // ow
    lead = list(g.shape[:-2])
    e = g.reshape(lead + [oh, 1, ow, 1]).expand(lead + [oh, kh, ow, kw]).reshape(sizes)
    return e / (kh * kw)


@formula("avg_pool2d")
def _(s, g):
    sizes = s.self_sizes
    k = _expand(s.kernel_size, 2)
    stride = _expand(s.stride, 2) if s.stride else k
    pad = _expand(s.padding, 2)
    if s.ceil_mode or s.divisor_override is not None or (not s.count_include_pad and any(pad)):
        raise NotImplementedError(
            "torchnative: the derivative of avg_pool2d with ceil_mode, divisor_override or count_include_pad=False "
            "and padding is not implemented yet"
        )
    batched = len(sizes) == 4
    gg = g if batched else g.unsqueeze(0)
    full = sizes if batched else [1] + sizes
    c = full[1]
    weight = torch.full([c, 1] + k, 1.0 / (k[0] * k[1]), dtype=g.dtype, device=g.device)
    out = conv_input_grad(gg, weight, full, stride, pad, [1, 1], c)
    return out if batched else out.squeeze(0)


# --- dropout, losses, attention -----------------------------------------------------------------

@formula("log_sigmoid_forward", save=("self", "result1"), multi=True)
def _(s, grads):
    g = grads[0]
    return None if g is None else torch.ops.aten.log_sigmoid_backward(g, s.self, s.result1)


@formula("log_sigmoid_backward", save=("grad_output", "self", "buffer"))
def _(s, g):
    # derivatives.yaml: log_sigmoid_double_backward(grad * grad_output, self) and log_sigmoid_backward(grad, ...)
    z = s.self.sigmoid()
    return torch.ops.aten.log_sigmoid_backward(g, s.self, s.buffer), g * s.grad_output * (z - 1) * z


@formula("native_dropout", save=("result1",), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    if not s.train:
        return g
    scale = 0.0 if s.p == 1 else 1.0 / (1.0 - s.p)
    return g * s.result1 * scale


@formula("nll_loss_forward", save=("self", "target", "weight", "result1"), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    return torch._C._aten_dispatch("nll_loss_backward", g, s.self, s.target, s.weight, s.reduction, s.ignore_index,
                                   s.result1)


@formula("nll_loss_backward", save=("target", "weight"))
def _(s, g):
    # upstream's derivatives.yaml: grad_output: nll_loss(grad, target, weight, reduction,
    # ignore_index); self: zeros_like(grad)
    gg = torch.nn.functional.nll_loss(g, s.target, s.weight, reduction=_REDUCTIONS[s.reduction],
                                      ignore_index=s.ignore_index) if s.needs(0) else None
    return gg, (torch.zeros_like(g) if s.needs(1) else None)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


@formula("nll_loss2d_forward", save=("target", "weight", "result1"), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    target, weight = s.target, s.weight
    sizes = s.self_sizes
    valid = target != s.ignore_index
    safe = target.masked_fill(~valid, 0)
    w = weight.index_select(0, safe.reshape(-1)).reshape(safe.shape) if weight is not None else torch.ones_like(safe, dtype=g.dtype)
    w = w * valid
    coeff = -g * w / s.result1 if s.reduction == 1 else -g * w
    z = torch.zeros(sizes, dtype=g.dtype, device=g.device)
    return z.scatter(1, safe.unsqueeze(1), coeff.unsqueeze(1).to(g.dtype))


@formula("mse_loss", save=("self", "target"))
def _(s, g):
    d = s.self - s.target
    scale = 2.0 / d.numel() if s.reduction == 1 else 2.0
    gd = g * d * scale
    return (gd if s.needs(0) else None), (-gd if s.needs(1) else None)


@formula("_scaled_dot_product_flash_attention_for_cpu", save=("query", "key", "value", "attn_mask", "result0", "result1"),
         multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None, None, None
    if s.dropout_p > 0:
        raise NotImplementedError("torchnative: the derivative of scaled_dot_product_attention with dropout is not implemented yet")
    q, k, v, mask = s.query, s.key, s.value, s.attn_mask
    if torch.is_grad_enabled():
        # create_graph: a composition, so the gradients have a graph of their own (upstream's
        # backward kernel has none: double backward through it refuses there)
        return sdpa_backward_math(g, q, k, v, mask, s.is_causal, s.scale)
    return torch._C._aten_dispatch("_scaled_dot_product_flash_attention_for_cpu_backward", g, q, k, v, s.result0,
                                   s.result1, 0.0, s.is_causal, mask, s.scale)


@formula("multilabel_margin_loss_forward", save=("self", "target", "result1"), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    return torch._C._aten_dispatch("multilabel_margin_loss_backward", g, s.self, s.target, s.reduction, s.result1)


@formula("_embedding_bag", save=("weight", "indices", "offsets", "per_sample_weights", "result2", "result3"), multi=True)
def _(s, grads):
    # upstream's derivatives.yaml: weight from _embedding_bag_backward, per_sample_weights from
    # _embedding_bag_per_sample_weights_backward
    from ...ops.nn.embedding_bag import embedding_bag_grads

    g = grads[0]
    if g is None:
        return None, None
    return embedding_bag_grads(g, s.weight, s.indices, s.offsets, s.result3, s.result2, s.scale_grad_by_freq, s.mode,
                               s.sparse, s.per_sample_weights, s.include_last_offset, s.padding_idx, s.needs(0),
                               s.needs(1))


@formula("_ctc_loss", "_ctc_loss.Tensor", save=("log_probs", "targets", "input_lengths", "target_lengths", "result0",
                                              "result1"), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    op = "_ctc_loss_backward.Tensor" if isinstance(s.input_lengths, torch.Tensor) else "_ctc_loss_backward"
    return torch._C._aten_dispatch(op, g, s.log_probs, s.targets, s.input_lengths, s.target_lengths, s.result0,
                                   s.result1, s.blank, s.zero_infinity)



for _nd in (2, 3):
    def _fractional_formula(s, grads, _nd=_nd):
        g = grads[0]
        if g is None:
            return None
        return torch._C._aten_dispatch(f"fractional_max_pool{_nd}d_backward", g, s.self, s.kernel_size, s.output_size,
                                       s.result1)

    formula(f"fractional_max_pool{_nd}d", save=("self", "result1"), multi=True)(_fractional_formula)

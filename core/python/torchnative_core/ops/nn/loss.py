"""Loss functions, composed as upstream composes them (Loss.cpp; cross_entropy -> log_softmax +
nll_loss), with the same operators in the same order, so every dtype rounds where upstream's
composition rounds.
"""

from __future__ import annotations

from ...surface import types as T
from .. import base as B
from .. import impl
from ..elementwise.math import _num


NONE, MEAN, SUM = 0, 1, 2


_NLL_TARGETS = (B.I64, T.BY_NAME["uint8"])


D = B.door


def _check_reduction(name, reduction):
    """The structured losses' meta check (smooth_l1_loss, mse_loss): a reduction other than none,
    mean or sum fails upstream's internal assertion, a RuntimeError."""
    if reduction not in (0, MEAN, SUM):
        raise RuntimeError("reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT FAILED "
                           f"(upstream's {name} meta function): reduction must be 0, 1 or 2, got {reduction}")


def _reduce(loss, reduction):
    if reduction == MEAN:
        return D("mean", loss, None)
    if reduction == SUM:
        return D("sum", loss, None)
    return loss


def _nll_kernel(op, x, target, weight):
    """Whether `x`'s device has a kernel for the nll overload `op` that takes these operands:
    an int64 (or uint8) target and a weight of the input's dtype (others take the composite)."""
    return (
        B.dtype_of(target) in _NLL_TARGETS
        and (weight is None or B.dtype_of(weight) is B.dtype_of(x))
        and B.C._tn_has_kernel(op, x._tn_device_key)
    )


def _check_nll_weight(x, weight):
    n_classes = x._tn_sizes[-1]
    if weight is not None and (len(weight._tn_sizes) != 1 or B.numel(weight._tn_sizes) != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but got weight tensor "
            f"of shape: {list(weight._tn_sizes)}"
        )


def _check_nll_backward(grad_output, self, target, weight, reduction, total_weight):
    """upstream's nll_loss_backward meta checks, with its messages."""
    xs, ts = list(self._tn_sizes), list(target._tn_sizes)
    if len(xs) not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if len(ts) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if not (len(xs) == 1 and not ts) and (not ts or xs[0] != ts[0]):
        raise RuntimeError(f"size mismatch (got input: {xs}, target: {ts})")
    if B.numel(total_weight._tn_sizes) != 1:
        raise RuntimeError(
            f"expected total_weight to be a single element tensor, got: {list(total_weight._tn_sizes)} "
            f"({B.numel(total_weight._tn_sizes)} elements)"
        )
    _check_nll_weight(self, weight)
    gs = list(grad_output._tn_sizes)
    if reduction not in (MEAN, SUM) and len(xs) == 2:
        if len(gs) != 1 or gs[0] != xs[0]:
            raise RuntimeError(
                f"Expected tensor to have size {xs[0]} at dimension 0, but got size {gs[0] if gs else 1} for argument "
                "#1 'grad_output' (while checking arguments for nll_loss_backward)"
            )
    elif len(gs) > 1 or B.numel(gs) != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {gs}")


def _check_nll_target_dtype(self, target):
    """The CPU kernels' dtype checks: the target's, then the input's (AT_DISPATCH)."""
    import torch

    if target.dtype not in (torch.int64, torch.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {B.scalar_type_name(target.dtype)}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"nll_loss_out_frame" not implemented for \'{B.scalar_type_name(self.dtype)}\'')


@impl("nll_loss_forward")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    # upstream's meta checks (LossNLL.cpp), in its order, with its exception types
    xs, ts = list(self._tn_sizes), list(target._tn_sizes)
    if len(xs) not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if len(ts) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if B.dtype_of(target)._tn_name not in ("int64", "uint8"):  # before the sizes are compared
        _check_nll_target_dtype(self, target)
    if len(xs) == 1 and len(ts) == 1 and ts[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {ts[0]}")
    if not (len(xs) == 1 and not ts):
        if not ts:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if xs[0] != ts[0]:
            raise RuntimeError(f"size mismatch (got input: {xs}, target: {ts})")
    _check_nll_weight(self, weight)
    _check_nll_target_dtype(self, target)
    x = self if len(xs) == 2 else D("unsqueeze", self, 0)
    t = target if len(ts) == 1 else D("unsqueeze", target, 0)
    if len(target._tn_sizes) <= 1 and _nll_kernel("nll_loss_forward", self, target, weight):
        d, dev = B.dtype_of(self), B.device_of(self)
        rows = [self._tn_sizes[0]] if reduction not in (MEAN, SUM) and len(self._tn_sizes) == 2 else []
        out, total = B.empty(rows, d, dev), B.empty([], d, dev)
        B.launch("nll_loss_forward", (self, target, weight, reduction, ignore_index), (out, total))
        return out, total
    n_classes = x._tn_sizes[1]
    valid = D("ne.Scalar", t, ignore_index)
    safe_t = D("where.self", valid, t, B.call("zeros_like", t))
    if B.numel(safe_t._tn_sizes):
        lo, hi = D("min", safe_t).item(), D("max", safe_t).item()
        for bad in (hi, lo):
            if bad < 0 or bad >= n_classes:
                raise IndexError(f"Target {bad} is out of bounds.")
    picked = D("squeeze.dim", D("gather", x, 1, D("unsqueeze", safe_t, 1), False), 1)
    w = B.call("ones_like", picked) if weight is None else D("index_select", weight, 0, safe_t)
    w = D("mul.Tensor", w, B.call("_to_copy", valid, B.dtype_of(x)))
    loss = D("neg", D("mul.Tensor", picked, w))
    total = D("sum", w, None)
    if reduction == MEAN:
        out = D("div.Tensor", D("sum", loss, None), total)
    elif reduction == SUM:
        out = D("sum", loss, None)
    else:
        out = loss if len(self._tn_sizes) == 2 else D("squeeze.dim", loss, 0)
    return out, total


@impl("nll_loss_backward")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """The gradient of nll_loss_forward with respect to `self`: zeros, and at each row's target
    class `-weight[t] * grad` (divided by the total weight for the mean)."""
    _check_nll_backward(grad_output, self, target, weight, reduction, total_weight)
    if len(target._tn_sizes) <= 1 and _nll_kernel("nll_loss_backward", self, target, weight) and (
        B.dtype_of(grad_output) is B.dtype_of(self) and B.dtype_of(total_weight) is B.dtype_of(self)
    ):
        out = B.empty(list(self._tn_sizes), B.dtype_of(self), B.device_of(self))
        B.launch("nll_loss_backward", (grad_output, self, target, weight, reduction, ignore_index, total_weight), (out,))
        return out
    import torch

    g, sizes = grad_output, list(self._tn_sizes)
    cdim = 1 if len(sizes) >= 2 else 0
    valid = target != ignore_index
    safe = target.masked_fill(~valid, 0)
    if weight is not None:
        w = weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
    else:
        w = torch.ones_like(safe, dtype=g.dtype)
    coeff = -g * (w * valid)
    if reduction == MEAN:
        coeff = coeff / total_weight
    z = torch.zeros(sizes, dtype=g.dtype, device=g.device)
    return z.scatter(cdim, safe.unsqueeze(cdim), coeff.unsqueeze(cdim).to(g.dtype))


@impl("nll_loss2d_forward")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    """Images (N, C, H, W): the class dimension moved last, then the 2-D loss."""
    xs, ts = list(self._tn_sizes), list(target._tn_sizes)
    if len(ts) != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {len(ts)}")
    if len(xs) != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: {len(xs)}")
    if weight is not None and B.numel(weight._tn_sizes) != xs[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (xs[0], xs[2], xs[3]) != tuple(ts):
        raise RuntimeError(f"size mismatch (got input: {xs} , target: {ts}")  # upstream's message, unclosed
    _check_nll_target_dtype(self, target)
    n, c, h, w = self._tn_sizes
    flat = D("reshape", D("permute", self, [0, 2, 3, 1]), [-1, c])
    out, total = D("nll_loss_forward", flat, D("reshape", target, [-1]), weight, reduction, ignore_index)
    if reduction not in (MEAN, SUM):
        out = D("view", out, [n, h, w])
    return out, total


@impl("nll_loss2d")
def nll_loss2d(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return D("nll_loss2d_forward", self, target, weight, reduction, ignore_index)[0]


@impl("nll_loss")
def nll_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return D("nll_loss_forward", self, target, weight, reduction, ignore_index)[0]


@impl("nll_loss_nd")
def nll_loss_nd(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    """upstream's nll_loss_nd: 1-2 dims -> nll_loss, 4 -> nll_loss2d, others reshaped to 4."""
    nd = len(self._tn_sizes)
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    ts = list(target._tn_sizes)
    if nd != 1 and ts and self._tn_sizes[0] != ts[0]:
        raise ValueError(f"Expected input batch_size ({self._tn_sizes[0]}) to match target batch_size ({ts[0]}).")
    if nd <= 2:
        return D("nll_loss_forward", self, target, weight, reduction, ignore_index)[0]
    if nd == 4:
        return D("nll_loss2d_forward", self, target, weight, reduction, ignore_index)[0]
    sizes = list(self._tn_sizes)
    n, c = sizes[0], sizes[1]
    x = D("reshape", D("contiguous", self, None), [n, c, 1, -1])
    t = D("reshape", D("contiguous", target, None), [n, 1, -1])
    out = D("nll_loss2d_forward", x, t, weight, reduction, ignore_index)[0]
    if reduction not in (MEAN, SUM):
        out = D("view", out, [n] + sizes[2:])
    return out


@impl("cross_entropy_loss")
def cross_entropy_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100, label_smoothing=0.0):
    """upstream's composition: log_softmax + nll_loss for class indices; a weighted sum for class
    probabilities; label smoothing mixes in the mean over classes (LossNLL.cpp's formulas)."""
    if label_smoothing < 0 or label_smoothing > 1:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    dim = 1 if len(self._tn_sizes) >= 2 else 0
    logp = D("log_softmax.int", self, dim, None)
    if B.dtype_of(target).is_floating_point:
        return _cross_entropy_probs(self, logp, target, weight, reduction, label_smoothing, dim)
    nll = D("nll_loss_nd", logp, target, weight, reduction, ignore_index)
    if not label_smoothing:
        return nll

    n_classes = self.shape[dim]
    ignore = target == ignore_index
    if weight is not None:
        shape = [1] * logp.dim()
        shape[dim] = weight.shape[0]
        smooth = -(logp * weight.view(shape)).sum(dim)
    else:
        smooth = -logp.sum(dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == MEAN:
        if weight is not None:
            smooth = smooth.sum() / weight.gather(0, target.masked_select(~ignore).flatten()).sum()
        else:
            smooth = smooth.sum() / (~ignore).sum()
    elif reduction == SUM:
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


def _cross_entropy_probs(self, logp, target, weight, reduction, label_smoothing, dim):
    if list(self.shape) != list(target.shape):
        raise RuntimeError(f"Expected target size {list(self.shape)}, got {list(target.shape)}")
    n_classes = self.shape[dim]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    if weight is not None:
        shape = [1] * logp.dim()
        shape[dim] = n_classes
        loss = -(logp * target * weight.view(shape)).sum(dim)
    else:
        loss = -(logp * target).sum(dim)
    if reduction == MEAN:
        return loss.sum() / (self.numel() / n_classes) if self.numel() else loss.sum() * float("nan")
    if reduction == SUM:
        return loss.sum()
    return loss


@impl("binary_cross_entropy")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as upstream does."""
    # upstream's kernel: a TensorIterator over the squeezed loss, input and target (the size
    # warning is torch.nn.functional's, not the operator's): the target broadcasts to the input's
    # squeezed shape, with the input's dtype
    x_shape = [s for s in self.shape if s != 1]
    shape = list(B.broadcast_shapes(x_shape, [s for s in target.shape if s != 1]))
    if target.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {B.scalar_type_name(B.dtype_of(target))} but expected "
                           f"{B.scalar_type_name(B.dtype_of(self))}")
    if shape != x_shape:  # the loss (empty_like(input)) is resized to the broadcast shape, with a warning
        import warnings

        warnings.warn(f"An output with one or more elements was resized since it had shape {x_shape}, which does not "
                      f"match the required output shape {shape}.", UserWarning, stacklevel=2)
        self, target = self.squeeze().expand(shape), target.squeeze().expand(shape)
    elif list(target.shape) != list(self.shape):
        target = target.squeeze().expand(x_shape).reshape(self.shape)
    B.floating_kernel_only(self, "binary_cross_entropy")
    if self.numel() and bool(((self < 0) | (self > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if target.numel() and bool(((target < 0) | (target > 1)).any()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    loss = -(target * self.log().clamp(min=-100) + (1 - target) * (1 - self).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@impl("smooth_l1_loss")
def smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    B.floating_kernel_only(B.result_type(self, target), "smooth_l1_cpu")
    import torch

    d = (self - target).abs()
    loss = d if beta == 0 else torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


@impl("huber_loss")
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    if not delta > 0:  # NaN too, as upstream's TORCH_CHECK(delta > 0)
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    import torch

    # upstream's huber_loss: the loss is empty_like(input), filled by a binary TensorIterator, so
    # it computes in the operands' common dtype and stores in the input's (when that cast is safe)
    common, mine = B.result_type(self, target), B.dtype_of(self)
    B.check_safe_cast(common, mine)
    B.floating_kernel_only(common, "huber_cpu")
    d = (self - target).abs()
    loss = torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss if common is mine else loss.to(mine), reduction)


@impl("kl_div")
def kl_div(self, target, reduction=MEAN, log_target=False):
    import torch

    if not (self.is_floating_point() or self.is_complex()) or not (target.is_floating_point() or target.is_complex()):
        raise RuntimeError("kl_div: Integral inputs not supported.")

    loss = target.exp() * (target - self) if log_target else torch.xlogy(target, target) - target * self
    return _reduce(loss, reduction)


@impl("mse_loss")
def mse_loss(self, target, reduction=MEAN):
    _check_reduction("mse_loss", reduction)
    B.floating_kernel_only(B.result_type(self, target), "mse_cpu", complex_ok=True)
    d = D("sub.Tensor", self, target, 1)
    return _reduce(D("mul.Tensor", d, d), reduction)


@impl("l1_loss")
def l1_loss(self, target, reduction=MEAN):
    return _reduce(D("abs", D("sub.Tensor", self, target, 1)), reduction)


@impl("binary_cross_entropy_with_logits")
def bce_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    # upstream's composition (Loss.cpp), in-place steps included: the loss takes (1 - target)'s
    # dtype and shape, as upstream's does
    log_sigmoid = D("log_sigmoid", self)
    if pos_weight is not None:
        log_weight = D("add_.Scalar", D("mul.Tensor", D("sub.Tensor", pos_weight, _num(1), 1), target), 1, 1)
        log_sigmoid = D("mul_.Tensor", log_sigmoid, log_weight)
    loss = D("sub_.Tensor", D("mul_.Tensor", D("rsub.Scalar", target, 1, 1), self), log_sigmoid, 1)
    if weight is not None:
        loss = D("mul_.Tensor", loss, weight)
    return _reduce(loss, reduction)


EPSILON = 1e-12  # Loss.cpp's EPSILON for cosine_embedding_loss


@impl("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@impl("hinge_embedding_loss")
def hinge_embedding_loss(self, target, margin=1.0, reduction=MEAN):
    import torch

    zeros = torch.zeros_like(self)
    # upstream's C++ `margin - self` is empty_like(self).fill_(margin).sub_(self): self's dtype
    margin_clamp = torch.empty_like(self).fill_(margin).sub_(self).clamp_min_(0)
    output_margin = torch.where(target != 1, margin_clamp, zeros)
    output_self = torch.where(target != -1, self, zeros)
    return _reduce(output_margin + output_self, reduction)


@impl("soft_margin_loss")
def soft_margin_loss(input, target, reduction=MEAN):
    # soft_margin_loss_out: neg, mul_(target), exp_, log1p_ on the output, then the reduction.
    # Upstream resizes that output to 0-d after reducing it, so a code other than 0, 1, 2 (left
    # unreduced) comes back as the loss's first element: a wrong answer, refused here instead.
    if reduction not in (NONE, MEAN, SUM):
        raise RuntimeError(f"soft_margin_loss: invalid reduction {reduction} (0: none, 1: mean, 2: sum)")
    return _reduce((-input).mul(target).exp().log1p(), reduction)


@impl("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    import torch

    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                               f"{list(input1.shape)} and {list(input2.shape)}.")
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = (input1 * input1).sum(targ_dim) + EPSILON
    mag_square2 = (input2 * input2).sum(targ_dim) + EPSILON
    denom = (mag_square1 * mag_square2).sqrt()
    cos = prod_sum / denom
    zeros = torch.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    output_pos = torch.where(target == 1, pos, zeros)
    output_neg = torch.where(target == -1, neg, zeros)
    return _reduce(output_pos + output_neg, reduction)


@impl("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    import math

    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


@impl("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=MEAN):
    import torch

    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == nd):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    dist_pos = torch.pairwise_distance(anchor, positive, p, eps)
    dist_neg = torch.pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = torch.min(dist_neg, torch.pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


# --- multilabel margin loss ---------------------------------------------------------------------

def _multilabel_check(self, target):
    """upstream's multilabel_margin_loss_shape_check: 0-d, a vector or a batch of vectors (the
    batch may be empty), a Long target of the same shape with labels in [-1, dim)."""
    sizes, tsizes = list(self._tn_sizes), list(target._tn_sizes)
    nd = len(sizes)
    if not (nd <= 1 and B.numel(sizes) != 0 or nd == 2 and sizes[1] != 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {sizes}")
    if tsizes != sizes:
        raise RuntimeError(f"inconsistent target size: {tsizes} for input of size: {sizes}")
    if B.dtype_of(target) is not B.I64:
        raise RuntimeError(f"expected scalar type Long but found {B.scalar_type_name(B.dtype_of(target))}")
    dt = B.dtype_of(self)
    if dt not in (B.F32, B.F64):
        from ..elementwise.arithmetic import _type_name

        raise NotImplementedError(f'"multilabel_margin_loss_forward_out_frame" not implemented for \'{_type_name(dt)}\'')
    dim = sizes[-1] if nd else 1
    if B.numel(tsizes) and (int(D("min", target)) < -1 or int(D("max", target)) >= dim):
        raise RuntimeError("argument #2 'target' is out of range")


def _multilabel_terms(self, target):
    """Per sample [K, D] hinge terms 1 - (x[target_k] - x[j]) over the labels before the first -1
    (k) and the non-label classes (j), the mask of the pairs that count, and is_target."""
    import torch

    x = self.reshape(-1, self.shape[-1] if self.dim() else 1)
    t = target.reshape(x.shape)
    d = x.shape[1]
    valid = (t == -1).cumsum(1) == 0
    tv = torch.where(valid, t, d)
    is_target = torch.zeros(x.shape[0], d + 1, dtype=x.dtype).scatter_(1, tv, 1.0)[:, :d]
    xt = x.gather(1, torch.where(valid, t, 0))
    z = 1 - xt.unsqueeze(2) + x.unsqueeze(1)
    mask = valid.unsqueeze(2) & (is_target == 0).unsqueeze(1)
    return z, mask, is_target


@impl("multilabel_margin_loss_forward")
def multilabel_margin_loss_forward(self, target, reduction):
    import torch

    _multilabel_check(self, target)
    z, mask, is_target = _multilabel_terms(self.detach(), target)
    d = z.shape[2]
    per = torch.where(mask & (z > 0), z, 0).sum((1, 2)) / d
    if reduction == NONE and self.dim() == 2:
        out = per
    elif reduction == NONE:
        out = per.reshape([])
    elif reduction == MEAN:
        out = per.sum() / per.shape[0]
    else:
        out = per.sum()
    return out, is_target.reshape(target.shape)


@impl("multilabel_margin_loss_backward")
def multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
    import torch

    _multilabel_check(self, target)
    z, mask, _ = _multilabel_terms(self, target)
    n, k, d = z.shape
    g = grad_output.reshape(-1) if reduction == NONE and self.dim() == 2 else grad_output.reshape(1)
    if reduction == NONE and self.dim() == 2 and g.shape[0] != n:
        raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == {n} but got: dimension "
                           f"{grad_output.dim()} and tensor.size[0] = {g.shape[0]}")
    scale = g.to(self.dtype) / d / (n if reduction == MEAN else 1)
    hit = (mask & (z > 0)).to(self.dtype)
    x = self.reshape(n, d)
    t = torch.where((target.reshape(n, d) == -1).cumsum(1) == 0, target.reshape(n, d), d)
    gi = torch.zeros(n, d + 1, dtype=self.dtype).scatter_add_(1, t, -hit.sum(2))[:, :d] + hit.sum(1)
    return (gi * scale.reshape(-1, 1)).reshape(self.shape).to(x.dtype)


@impl("multilabel_margin_loss")
def multilabel_margin_loss(self, target, reduction=MEAN):
    return D("multilabel_margin_loss_forward", self, target, reduction)[0]


# --- connectionist temporal classification ------------------------------------------------------

_CTC_TAIL = " (while checking arguments for ctc_loss_allocate_outputs)"


def _ctc_prepare(log_probs, targets, input_lengths, target_lengths, blank):
    """upstream's ctc_loss_allocate_outputs checks, then each sample's extended target (blanks
    between and around the labels, padded with blanks) as [N, 2 * max_target_length + 1]."""
    import torch

    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional tensor for argument "
                           f"#1 'log_probs'{_CTC_TAIL}")
    dt = B.dtype_of(log_probs)
    if dt not in (B.F32, B.F64):
        from ..elementwise.arithmetic import _type_name

        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for \'{_type_name(dt)}\'')
    if B.dtype_of(targets)._tn_name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have scalar type Int; but got "
                           f"torch.{B.scalar_type_name(B.dtype_of(targets))}Tensor instead{_CTC_TAIL}")
    tmax, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in target_lengths:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v}{_CTC_TAIL}")
    for v in input_lengths:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v}{_CTC_TAIL}")
        if v > tmax:
            raise RuntimeError(f"Expected input_lengths to have value at most {tmax}, but got value {v}{_CTC_TAIL}")
    max_tl = max(target_lengths, default=0)
    t = targets.long()
    if targets.dim() == 1:
        total = sum(target_lengths)
        if t.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {t.shape[0]} for "
                               f"argument #2 'targets'{_CTC_TAIL}")
        starts = [0]
        for v in target_lengths[:-1]:
            starts.append(starts[-1] + v)
        rows = [torch.cat([t[s:s + v], t.new_full([max_tl - v], blank)]) for s, v in zip(starts, target_lengths)]
        padded = torch.stack(rows) if rows else t.new_zeros(0, max_tl)
    else:
        if t.shape[1] < max_tl:
            raise RuntimeError(f"Expected tensor to have size at least {max_tl} at dimension 1, but got size "
                               f"{t.shape[1]} for argument #2 'targets'{_CTC_TAIL}")
        padded = t[:, :max_tl]
    tl = torch.tensor(list(target_lengths), dtype=torch.long)
    live = torch.arange(max_tl) < tl.unsqueeze(1)
    padded = torch.where(live, padded, blank)
    ext = torch.full((batch, 2 * max_tl + 1), blank, dtype=torch.long)
    ext[:, 1::2] = padded
    if ext.numel() and (int(ext.min()) < 0 or int(ext.max()) >= classes):
        raise RuntimeError("Expected targets to be in the label range")
    s = torch.arange(2 * max_tl + 1)
    # a label may be reached from two positions back unless it repeats the label there (blanks never)
    skip = (s >= 2) & (ext != torch.cat([ext.new_full((batch, 2), -1), ext[:, :-2]], 1))
    in_target = s <= 2 * tl.unsqueeze(1)
    return ext, skip, in_target, tl, torch.tensor(list(input_lengths), dtype=torch.long)


def _lse3(a, b, c):
    """log(e^a + e^b + e^c) as upstream's CTC recursion computes it (the max taken out, 0 when
    every term is -inf)."""
    import torch

    m = torch.maximum(torch.maximum(a, b), c)
    m = torch.where(m == float("-inf"), 0, m)
    return ((a - m).exp() + (b - m).exp() + (c - m).exp()).log() + m


def _ctc_alpha(log_probs, ext, skip, in_target, tl, il):
    import torch

    tmax, batch, _ = log_probs.shape
    width = ext.shape[1]
    ninf = float("-inf")
    lp = log_probs.detach().permute(1, 0, 2).gather(2, ext.unsqueeze(1).expand(batch, tmax, width))  # [N, T, S]
    la = torch.zeros(batch, tmax, width, dtype=log_probs.dtype)
    if tmax == 0:
        return la, lp
    first = torch.full((batch, width), ninf, dtype=log_probs.dtype)
    first[:, 0] = lp[:, 0, 0]
    if width > 1:
        first[:, 1] = torch.where(tl > 0, lp[:, 0, 1], ninf)
    la[:, 0] = first
    prev = first
    pad = prev.new_full((batch, 1), ninf)
    for t in range(1, tmax):
        one = torch.cat([pad, prev[:, :-1]], 1)
        two = torch.where(skip, torch.cat([pad, pad, prev[:, :-2]], 1)[:, :width], ninf)
        cur = _lse3(prev, one, two) + lp[:, t]
        active = in_target & (t < il).unsqueeze(1)
        la[:, t] = torch.where(active, cur, torch.where(in_target, la[:, t], 0))
        prev = torch.where(in_target, cur, ninf)
    return la, lp


def _ctc_nll(la, tl, il):
    import torch

    batch = la.shape[0]
    if la.shape[1] == 0:
        return torch.full((batch,), float("inf"), dtype=la.dtype)
    last = la[torch.arange(batch), (il - 1).clamp_min(0)]
    l1 = last.gather(1, (2 * tl).unsqueeze(1)).squeeze(1)
    l2 = torch.where(tl > 0, last.gather(1, (2 * tl - 1).clamp_min(0).unsqueeze(1)).squeeze(1), float("-inf"))
    m = torch.maximum(l1, l2)
    m = torch.where(m == float("-inf"), 0, m)
    ll = ((l1 - m).exp() + (l2 - m).exp()).log() + m
    return torch.where(il > 0, -ll, float("inf"))


def _lengths(v, what):
    if hasattr(v, "_tn_sizes"):
        if B.dtype_of(v).is_floating_point or B.dtype_of(v).is_complex:
            raise RuntimeError(f"{what} must be integral")
        return [int(x) for x in v.reshape(-1).tolist()]
    return [int(x) for x in v]


@impl("_ctc_loss", "_ctc_loss.Tensor")
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    il_list, tl_list = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    ext, skip, in_target, tl, il = _ctc_prepare(log_probs, targets, il_list, tl_list, blank)
    la, _ = _ctc_alpha(log_probs, ext, skip, in_target, tl, il)
    return _ctc_nll(la, tl, il), la


@impl("_ctc_loss_backward", "_ctc_loss_backward.Tensor")
def _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha, blank,
                       zero_infinity=False):
    """d(nll)/d(log_probs) from alpha and beta (upstream's ctc_loss_backward_cpu_template):
    exp(lp) - exp(logsumexp over the positions carrying the class of alpha + beta, + nll - lp),
    zero past each input's length, and zero for an infinite loss under zero_infinity."""
    import torch

    il_list, tl_list = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    ext, skip, in_target, tl, il = _ctc_prepare(log_probs, targets, il_list, tl_list, blank)
    tmax, batch, classes = log_probs.shape
    width = ext.shape[1]
    ninf = float("-inf")
    lp = log_probs.detach().permute(1, 0, 2).gather(2, ext.unsqueeze(1).expand(batch, tmax, width))
    la = log_alpha.detach()
    lb = torch.full((batch, tmax, width), ninf, dtype=log_probs.dtype)
    s = torch.arange(width)
    # beta starts at each sample's last time step on its last label and the blank after it
    start = (s == 2 * tl.unsqueeze(1)) | ((s == 2 * tl.unsqueeze(1) - 1) & (tl > 0).unsqueeze(1))
    skip_next = torch.cat([skip[:, 2:], skip.new_zeros(batch, 2)], 1)[:, :width] if width > 2 else \
        skip.new_zeros(batch, width)
    pad = lb.new_full((batch, 1), ninf)
    nxt = torch.full((batch, width), ninf, dtype=log_probs.dtype)
    for t in range(tmax - 1, -1, -1):
        here = torch.where(start, lp[:, t], ninf)
        one = torch.cat([nxt[:, 1:], pad], 1)
        two = torch.where(skip_next, torch.cat([nxt[:, 2:], pad, pad], 1)[:, :width], ninf)
        rec = torch.where(in_target, _lse3(nxt, one, two) + lp[:, t], ninf)
        cur = torch.where((t == il - 1).unsqueeze(1), here, torch.where((t < il - 1).unsqueeze(1), rec, ninf))
        lb[:, t] = cur
        nxt = cur
    # logsumexp of alpha + beta over the extended positions carrying each class
    ab = la + lb
    ab = torch.where(in_target.unsqueeze(1), ab, ninf)
    onehot = ext.unsqueeze(2) == torch.arange(classes)  # [N, S, C]
    per = torch.where(onehot.unsqueeze(1), ab.unsqueeze(3), ninf)  # [N, T, S, C]
    lcab = per.logsumexp(2)  # [N, T, C]
    lpn = log_probs.detach().permute(1, 0, 2)
    nll = neg_log_likelihood.detach().reshape(batch, 1, 1)
    g = grad.detach().reshape(batch, 1, 1).to(log_probs.dtype) if grad.dim() else grad.detach().expand(batch).reshape(
        batch, 1, 1).to(log_probs.dtype)
    res = (lpn.exp() - (lcab + nll - lpn).exp()) * g
    live = (torch.arange(tmax).unsqueeze(0) < il.unsqueeze(1)).unsqueeze(2)
    res = torch.where(live, res, 0)
    if zero_infinity:
        res = torch.where((nll == float("inf")), 0, res)
    return res.permute(1, 0, 2).contiguous()


def _ctc_loss_reduced(log_probs, targets, il_list, tl_list, blank, reduction, zero_infinity):
    import torch

    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    res = torch.ops.aten._ctc_loss(lp, tg, il_list, tl_list, blank, zero_infinity)[0]
    if zero_infinity:
        res = torch.where(res == float("inf"), torch.zeros((), dtype=res.dtype), res)
    if reduction == MEAN:
        tl = torch.tensor(tl_list, dtype=torch.long).clamp_min(1).to(res.dtype)
        return (res / tl).mean()
    if reduction == SUM:
        return res.sum()
    return res if batched else res.squeeze(0)


@impl("ctc_loss.IntList")
def ctc_loss_intlist(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN, zero_infinity=False):
    return _ctc_loss_reduced(log_probs, targets, list(input_lengths), list(target_lengths), blank, reduction,
                             zero_infinity)


@impl("ctc_loss.Tensor")
def ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN, zero_infinity=False):
    return _ctc_loss_reduced(log_probs, targets, _lengths(input_lengths, "input_lengths"),
                             _lengths(target_lengths, "target_lengths"), blank, reduction, zero_infinity)

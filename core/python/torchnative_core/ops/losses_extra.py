"""Losses and channel_shuffle that upstream composes of other operators (aten/src/ATen/native/
Loss.cpp, ChanelShuffle.cpp), written with the same operators in the same order, so that every
dtype (bfloat16/float16 included) rounds where upstream's composition rounds. Written with the
public torch API: every call still enters the door."""

from __future__ import annotations

from . import impl

NONE, MEAN, SUM = 0, 1, 2
EPSILON = 1e-12  # Loss.cpp's EPSILON for cosine_embedding_loss


def _reduce(loss, reduction):
    """apply_loss_reduction"""
    if reduction == MEAN:
        return loss.mean()
    if reduction == SUM:
        return loss.sum()
    return loss


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
    # soft_margin_loss_out: neg, mul_(target), exp_, log1p_ on the output, then the reduction
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


@impl("channel_shuffle", "native_channel_shuffle")
def channel_shuffle(self, groups):
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if self.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes "
                           f"{list(self.shape)}")
    c = self.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    b, rest = self.shape[0], list(self.shape[2:])
    out = self.reshape([b, groups, c // groups] + rest).transpose(1, 2).contiguous()
    return out.reshape([b, c] + rest)

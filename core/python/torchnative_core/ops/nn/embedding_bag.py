"""Embedding bags (EmbeddingBag.cpp): rows of a table gathered by index and reduced per bag
(sum, mean or max), with upstream's auxiliary outputs (offset2bag, bag_size, max_indices) and
its backward for the table and the per-sample weights."""

from __future__ import annotations

from .. import base as B
from .. import impl

SUM, MEAN, MAX = 0, 1, 2
_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _fast_path(weight, padding_idx):
    """upstream's index_select_add fast path (fbgemm): float32/float16/bfloat16 tables with
    contiguous rows and no padding index; it leaves offset2bag empty for sum."""
    return B.dtype_of(weight)._tn_name != "float64" and padding_idx < 0 and weight.stride(1) == 1


def _check(weight, indices, offsets, mode, per_sample_weights, padding_idx):
    import torch

    tail = " (while checking arguments for embedding_bag)"
    if B.dtype_of(indices)._tn_name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {B.tensor_type_string(indices)} instead{tail}")
    if B.dtype_of(offsets)._tn_name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #1 'offsets' to have one of the following scalar types: "
                           f"Long, Int; but got {B.tensor_type_string(offsets)} instead{tail}")
    if B.dtype_of(weight)._tn_name not in _FLOATS:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got {B.tensor_type_string(weight)} instead{tail}")
    if mode not in (SUM, MEAN, MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None:
        if mode != SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if B.dtype_of(per_sample_weights) is not B.dtype_of(weight):
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                               f"#1 'per_sample_weights'; but type {B.tensor_type_string(weight)} does not equal "
                               f"{B.tensor_type_string(per_sample_weights)}{tail}")
        if per_sample_weights.numel() != indices.numel():
            raise RuntimeError("Expected per_sample_weights.value().numel() == indices.numel() to be true, but got "
                               "false.")
    if weight.dim() != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if offsets.dim() != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.dim()}")
    length = indices.shape[0] if indices.dim() else 1
    if offsets.numel():
        if int(offsets[0]) != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {int(offsets[0])}")
        if int(offsets[-1]) > length:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} but got offsets[-1] of "
                               f"{int(offsets[-1])}")
        if offsets.numel() > 1 and bool((offsets[1:] < offsets[:-1]).any()):
            raise RuntimeError("embedding_bag: offsets have to be non-decreasing")
    n = weight.shape[0]
    idx = indices.reshape(-1)
    bad = (idx < 0) | (idx >= n)
    if idx.numel() and bool(bad.any()):
        pos = int(torch.nonzero(bad)[0, 0])
        # the sum/mean fast path reads indices through its own check
        if mode == MAX or not _fast_path(weight, padding_idx):
            raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                               f"{int(idx[pos])}")
        raise RuntimeError(f"Index {pos} of input takes value {int(idx[pos])} which is not in the valid range [0, {n})")


def _bags(indices, offsets, include_last_offset, padding_idx):
    """Per index position: its bag, whether it feeds the sum (in a bag's [start, next start)
    range, not padding), and whether it counts for bag_size (upstream's offset2bag assigns the
    positions past the last offset to the last bag)."""
    import torch

    idx = indices.reshape(-1).long()
    num = idx.shape[0]
    offs = offsets.long()
    nb = offs.shape[0] - 1 if include_last_offset else offs.shape[0]
    nb = max(nb, 0)
    pos = torch.arange(num)
    bag = torch.searchsorted(offs[:nb], pos, right=True) - 1 if nb else torch.zeros(num, dtype=torch.long)
    keep = idx != padding_idx if padding_idx >= 0 else torch.ones(num, dtype=torch.bool)
    feeds = keep & (pos < offs[nb]) if include_last_offset and nb else keep
    if not nb:
        feeds = torch.zeros(num, dtype=torch.bool)
    return idx, bag, nb, keep, feeds


@impl("_embedding_bag", "_embedding_bag_forward_only")
def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                   include_last_offset=False, padding_idx=-1):
    import torch

    _check(weight, indices, offsets, mode, per_sample_weights, padding_idx)
    w = weight.detach()
    it = indices.dtype  # the auxiliary outputs are in the indices' type
    idx, bag, nb, keep, feeds = _bags(indices, offsets, include_last_offset, padding_idx)
    d = w.shape[1]
    counts = torch.zeros(nb, dtype=torch.long).index_add_(0, bag[keep], torch.ones_like(bag[keep])) if nb else \
        torch.zeros(0, dtype=torch.long)
    rows = w.index_select(0, idx)
    if mode == MAX:
        lowest = torch.finfo(w.dtype).min
        out = torch.full((nb, d), lowest, dtype=w.dtype)
        out = out.index_reduce(0, bag[keep], rows[keep], "amax") if nb else out
        # the first position reaching each bag's maximum (upstream's `current > output` scan)
        pos = torch.arange(idx.shape[0]).unsqueeze(1).expand(-1, d)
        hit = keep.unsqueeze(1) & (rows == out[bag]) if nb else keep.unsqueeze(1)
        big = idx.shape[0]
        first = torch.full((nb, d), big, dtype=torch.long)
        first = first.index_reduce(0, bag[keep], torch.where(hit, pos, big)[keep], "amin") if nb else first
        empty = (counts == 0).unsqueeze(1)
        max_indices = torch.where(empty, 0, torch.cat([idx, idx.new_zeros(1)])[first.clamp_max(big)])
        out = torch.where(empty, 0, out)
        return out, bag.to(it), counts.to(it), max_indices.to(it)
    # float16/bfloat16 bags weigh and accumulate in float32 and round once
    acc = torch.float32 if w.dtype in (torch.float16, torch.bfloat16) else w.dtype
    rows = rows.to(acc)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.detach().reshape(-1, 1).to(acc)
    out = torch.zeros(nb, d, dtype=acc).index_add_(0, bag[feeds], rows[feeds]).to(w.dtype)
    if mode == MEAN:
        out = out / counts.clamp_min(1).unsqueeze(1).to(w.dtype)
        return out, bag.to(it), counts.to(it), counts.to(it)
    offset2bag = bag.new_zeros(0) if _fast_path(weight, padding_idx) else bag
    return out, offset2bag.to(it), torch.zeros(nb, dtype=it), torch.zeros(nb, dtype=it)


def _weight_grad(g, idx, bag, feeds, bag_size, max_indices, num_weights, mode, per_sample_weights):
    """Each bag's gradient added into the rows that fed it, scaled as the forward scaled them
    (the max mode: into the row that won each column)."""
    import torch

    d = g.shape[1]
    gw = torch.zeros(num_weights, d, dtype=g.dtype)
    if mode == MAX:
        live = (bag_size > 0).unsqueeze(1).expand(-1, d)
        flat = (max_indices.long() * d + torch.arange(d))[live]
        return gw.reshape(-1).index_add(0, flat, g[live]).reshape(num_weights, d)
    contrib = g.index_select(0, bag[feeds])
    if per_sample_weights is not None:
        contrib = contrib * per_sample_weights.reshape(-1)[feeds].unsqueeze(1)
    if mode == MEAN:
        contrib = contrib / bag_size.long().clamp_min(1)[bag[feeds]].unsqueeze(1).to(g.dtype)
    return gw.index_add(0, idx[feeds], contrib)


def _refuse_sparse(sparse):
    if sparse:
        raise NotImplementedError("torchnative: the gradient of embedding_bag with sparse=True (a sparse gradient) "
                                  "is not implemented")


def _by_frequency(gw, idx):
    """scale_grad_by_freq as upstream's CPU backward applies it: the k-th distinct row (in
    ascending order) is divided by the count of the k-th entry of the sorted indices, which is
    not always that row's own count (upstream indexes its counts by group number)."""
    import torch

    if not idx.numel():
        return gw
    ordered = idx.sort().values
    rows = torch.unique(ordered)
    counts = torch.zeros(gw.shape[0], dtype=torch.long).index_add_(0, idx, torch.ones_like(idx))
    divisor = counts[ordered[:rows.shape[0]]].to(gw.dtype).unsqueeze(1)
    return gw.index_copy(0, rows, gw.index_select(0, rows) / divisor)


def _psw_grad(g, weight, idx, bag, feeds, shape):
    """The bag gradient dotted with the row each weight scaled."""
    import torch

    if not g.shape[0]:
        return g.new_zeros(shape)
    dots = (g.index_select(0, bag.clamp(0, g.shape[0] - 1)) * weight.index_select(0, idx)).sum(1)
    return torch.where(feeds, dots, 0).reshape(shape)


def embedding_bag_grads(g, weight, indices, offsets, max_indices, bag_size, scale_grad_by_freq, mode, sparse,
                        per_sample_weights, include_last_offset, padding_idx, needs_weight, needs_psw):
    """The gradients of _embedding_bag for the table and the per-sample weights."""
    idx, bag, nb, keep, feeds = _bags(indices, offsets, include_last_offset, padding_idx)
    gw = gp = None
    if needs_weight:
        _refuse_sparse(sparse)
        gw = _weight_grad(g, idx, bag, feeds, bag_size, max_indices, weight.shape[0], mode, per_sample_weights)
        gw = _by_frequency(gw, idx) if scale_grad_by_freq and mode != MAX else gw
    if needs_psw and per_sample_weights is not None:
        gp = _psw_grad(g, weight, idx, bag, feeds, per_sample_weights.shape)
    return gw, gp


def _given_bags(indices, offsets, offset2bag, padding_idx):
    """The backward ops' bags: offset2bag, or (the sum fast path leaves it empty) the bags the
    offsets make; every non-padding index counts."""
    import torch

    idx = indices.reshape(-1).long()
    if offset2bag.numel() or offsets is None:
        bag = offset2bag.long()
    else:
        offs = offsets.long()
        bag = torch.searchsorted(offs, torch.arange(idx.shape[0]), right=True) - 1
    feeds = idx != padding_idx if padding_idx >= 0 else torch.ones_like(idx, dtype=torch.bool)
    return idx, bag, feeds


@impl("_embedding_bag_dense_backward")
def _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                  scale_grad_by_freq, mode, per_sample_weights, padding_idx=-1):
    idx, bag, feeds = _given_bags(indices, None, offset2bag, padding_idx)
    gw = _weight_grad(grad, idx, bag, feeds, bag_size, maximum_indices, num_weights, mode, per_sample_weights)
    return _by_frequency(gw, idx) if scale_grad_by_freq and mode != MAX else gw


@impl("_embedding_bag_backward")
def _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights,
                            scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx=-1):
    _refuse_sparse(sparse)
    idx, bag, feeds = _given_bags(indices, offsets, offset2bag, padding_idx)
    gw = _weight_grad(grad, idx, bag, feeds, bag_size, maximum_indices, num_weights, mode, per_sample_weights)
    return _by_frequency(gw, idx) if scale_grad_by_freq and mode != MAX else gw


@impl("_embedding_bag_per_sample_weights_backward")
def _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    if mode != SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    idx, bag, feeds = _given_bags(indices, offsets, offset2bag, padding_idx)
    return _psw_grad(grad, weight, idx, bag, feeds, indices.shape)


def _promoted(indices, offsets):
    """upstream's promoteIndicesAndOffsets: int32 with int64 becomes int64."""
    import torch

    if indices.dtype != offsets.dtype:
        return indices.to(torch.int64), offsets.to(torch.int64)
    return indices, offsets


@impl("embedding_bag.padding_idx")
def embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                              include_last_offset, padding_idx):
    import torch

    pad = -1
    if padding_idx is not None:
        # upstream reads weight.size(0) first and wraps a negative padding_idx (-1 is the last row,
        # not "none" as _embedding_bag's -1 is)
        n = weight._tn_sizes[B.size_dim(0, len(weight._tn_sizes))]
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, "
                               f"but got {padding_idx}")
        pad = padding_idx + n if padding_idx < 0 else padding_idx
    indices, offsets = _promoted(indices, offsets)
    return torch.ops.aten._embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                         per_sample_weights, include_last_offset, pad)


@impl("embedding_bag")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False):
    return embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                     include_last_offset, None)

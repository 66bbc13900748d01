"""Views, shape operators, joins and indexing."""

from __future__ import annotations

import torch

from ..formula import formula
from ..graph import meta_parts


def _zeros(s, g, name="self"):
    return torch.zeros(getattr(s, name + "_sizes"), dtype=g.dtype, device=g.device)


@formula("view", "_unsafe_view", "squeeze", "squeeze.dim", "squeeze.dims", "squeeze_", "squeeze_.dim")
def _(s, g):
    return g.reshape(s.self_sizes)


@formula("expand")
def _(s, g):
    return g.sum_to_size(s.self_sizes)


@formula("unsqueeze")
def _(s, g):
    return g.squeeze(s.dim)


@formula("permute")
def _(s, g):
    dims = [d % max(len(s.dims), 1) for d in s.dims]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return g.permute(inv)


@formula("transpose.int", "transpose_")
def _(s, g):
    return g.transpose(s.dim0, s.dim1)


@formula("t", "t_")
def _(s, g):
    return g.t()


def _embed(g, dim, size, start, step=1):
    """g placed along `dim` of a zero tensor of length `size` at start, start+step, ...: out of
    place, so it stays differentiable for double backward."""
    n = g.shape[dim]
    if step == 1:
        pad = [0, 0] * (g.dim() - 1 - dim) + [start, size - start - n]
        return torch.constant_pad_nd(g, pad, 0)
    shape = list(g.shape)
    shape[dim] = size
    idx = torch.arange(start, start + step * n, step, device=g.device)
    return torch.zeros(shape, dtype=g.dtype, device=g.device).index_add(dim, idx, g)


@formula("select.int")
def _(s, g):
    sizes = s.self_sizes
    dim = s.dim % len(sizes)
    index = s.index % sizes[dim]
    return _embed(g.unsqueeze(dim), dim, sizes[dim], index)


@formula("slice.Tensor")
def _(s, g):
    sizes = s.self_sizes
    dim = s.dim % len(sizes)
    start = s.start if s.start is not None else 0
    if start < 0:
        start += sizes[dim]
    start = min(max(start, 0), sizes[dim])
    return _embed(g, dim, sizes[dim], start, s.step)


@formula("split.Tensor", "split_with_sizes", "unsafe_split.Tensor", multi=True)
def _(s, grads):
    metas = [meta_parts(m) for m in s._node._tn_out_meta]
    parts = [g if g is not None else torch.zeros(m[0], dtype=m[1], device=m[2]) for g, m in zip(grads, metas)]
    return torch.cat(parts, s.dim)


@formula("unbind.int", multi=True)
def _(s, grads):
    metas = [meta_parts(m) for m in s._node._tn_out_meta]
    parts = [g if g is not None else torch.zeros(m[0], dtype=m[1], device=m[2]) for g, m in zip(grads, metas)]
    return torch.stack(parts, s.dim)


@formula("cat")
def _(s, g):
    metas = s.tensors_meta
    dim = s.dim
    nd = g.dim()
    dim = dim % nd
    out, off = [], 0
    for m in metas:
        shape = m[0]
        if len(shape) == 1 and shape[0] == 0 and nd != 1:
            out.append(None)  # legacy empty tensor skipped by cat
            continue
        out.append(g.narrow(dim, off, shape[dim]))
        off += shape[dim]
    return out


@formula("stack")
def _(s, g):
    return list(g.unbind(s.dim))


@formula("index_select", save=("index",))
def _(s, g):
    if not s.self_sizes:
        return g.sum()  # a 0-dim input is selected by index [0] only
    return _zeros(s, g).index_add_(s.dim, s.index, g)


@formula("gather", save=("index",))
def _(s, g):
    return _zeros(s, g).scatter_add_(s.dim, s.index, g)


@formula("scatter.src", "scatter_.src", save=("index",))
def _(s, g):
    idx = s.index
    return (g.scatter(s.dim, idx, 0) if s.needs(0) else None), (g.gather(s.dim, idx) if s.needs(1) else None)


@formula("scatter.value", "scatter_.value", save=("index",))
def _(s, g):
    return g.scatter(s.dim, s.index, 0)


@formula("scatter_add", "scatter_add_", save=("index",))
def _(s, g):
    return g, (g.gather(s.dim, s.index) if s.needs(1) else None)


@formula("index_add", "index_add_", save=("index",))
def _(s, g):
    gs = g
    src = g.index_select(s.dim, s.index) * s.alpha if s.needs(1) else None
    if src is not None and src.dim() != len(s.source_sizes):
        src = src.reshape(s.source_sizes)
    return gs, src


@formula("index.Tensor", save=("indices",))
def _(s, g):
    return _zeros(s, g).index_put_(tuple(s.indices), g, True)


@formula("index_put", "index_put_", save=("indices",))
def _(s, g):
    idx = tuple(s.indices)
    gs = g.index_put(idx, torch.zeros((), dtype=g.dtype, device=g.device), False) if s.needs(0) and not s.accumulate else g
    gv = g[idx] if s.needs(1) else None
    return gs, gv


@formula("embedding", save=("indices",))
def _(s, g):
    w = s.weight_sizes
    idx = s.indices.reshape(-1)
    rows = g.reshape(-1, w[-1])
    if s.padding_idx is not None and s.padding_idx >= 0:
        rows = rows.masked_fill((idx == s.padding_idx).unsqueeze(1), 0)
    if s.scale_grad_by_freq:
        counts = torch.zeros(w[0], dtype=torch.int64, device=g.device).index_add_(0, idx, torch.ones_like(idx))
        rows = rows / counts.index_select(0, idx).unsqueeze(1).to(rows.dtype)
    return torch.zeros(w, dtype=g.dtype, device=g.device).index_add_(0, idx, rows)


@formula("flip")
def _(s, g):
    return g.flip(s.dims)


@formula("roll")
def _(s, g):
    shifts = [-x for x in s.shifts]
    return g.roll(shifts, s.dims) if s.dims else g.reshape(-1).roll(shifts).reshape(g.shape)


@formula("tril", "tril_")
def _(s, g):
    return g.tril(s.diagonal)


@formula("triu", "triu_")
def _(s, g):
    return g.triu(s.diagonal)


@formula("repeat")
def _(s, g):
    sizes = s.self_sizes
    reps = list(s.repeats)
    lead = len(reps) - len(sizes)
    g = g.sum(list(range(lead))) if lead else g
    shape = []
    for r, d in zip(reps[lead:], sizes):
        shape += [r, d]
    dims = list(range(0, 2 * len(sizes), 2))
    return g.reshape(shape).sum(dims) if dims else g


@formula("constant_pad_nd")
def _(s, g):
    pad = list(s.pad)
    nd = g.dim()
    for i in range(len(pad) // 2):
        dim = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = s.self_sizes[dim]
        if lo >= 0 and hi >= 0:
            g = g.narrow(dim, lo, size)
        else:
            raise NotImplementedError("torchnative: the derivative of constant_pad_nd with negative padding is not implemented yet")
    return g


@formula("diagonal")
def _(s, g):
    """The gradient added at the diagonal's storage positions of a zero tensor (out of place,
    so double backward works)."""
    sizes = s.self_sizes
    view = torch.empty(sizes, device=g.device).diagonal(s.offset, s.dim1, s.dim2)
    pos = _flat_positions(list(view.shape), list(view.stride()), view.storage_offset(), g.device)
    n = 1
    for d in sizes:
        n *= d
    return torch.zeros(n, dtype=g.dtype, device=g.device).index_add(0, pos, g.reshape(-1)).reshape(sizes)


@formula("masked_select", save=("mask",))
def _(s, g):
    mask = s.mask
    shape = torch.broadcast_shapes(tuple(s.self_sizes), tuple(mask.shape))
    return torch.zeros(shape, dtype=g.dtype, device=g.device).index_put((mask.expand(shape),), g)


def _flat_positions(sizes, strides, offset, device):
    """The storage position of every element of a strided geometry, in element order."""
    pos = torch.full(list(sizes), offset, dtype=torch.int64, device=device)
    for d, (n, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        pos = pos + (torch.arange(n, device=device) * st).reshape(shape)
    return pos.reshape(-1)


@formula("as_strided", save=("self",))
def _(s, g):
    """Gradients summed per storage position the output read, then read back through the
    input's own geometry (inputs that overlap themselves are not supported yet)."""
    x = s.self
    if any(st == 0 and n > 1 for n, st in zip(x.shape, x.stride())):
        raise NotImplementedError("torchnative: the derivative of as_strided over a self-overlapping input is not implemented yet")
    base = x.storage_offset()
    offset = s.storage_offset if s.storage_offset is not None else base
    out_pos = _flat_positions(list(s.size), list(s.stride), offset - base, g.device)
    in_pos = _flat_positions(list(x.shape), list(x.stride()), 0, g.device)
    both = torch.cat([out_pos, in_pos])
    if both.numel() == 0:
        return torch.zeros(x.shape, dtype=g.dtype, device=g.device)
    lo = int(both.min().item())  # the output may read storage before the input's first element
    length = int(both.max().item()) - lo + 1
    buf = torch.zeros(length, dtype=g.dtype, device=g.device).index_add(0, out_pos - lo, g.reshape(-1))
    return buf.index_select(0, in_pos - lo).reshape(x.shape)


@formula("index_fill.int_Scalar", "index_fill_.int_Scalar", save=("index",))
def _(s, g):
    return g.index_fill(s.dim, s.index, 0)

"""Batched tensors: what `torch.vmap` hands the function it maps.

A batched tensor at level L is an ordinary tensor object whose geometry is the *logical* tensor
(the batch dimension left out, i.e. sample 0 of the batch), carrying `(value, bdim, level)` in
its `__dict__`: `value` is the tensor one level down that holds the whole batch in dimension
`bdim`. Shape, dtype and device queries therefore answer logically with no extra code, and the
door's vmap step (dispatch.py) unwraps `value` before any operator runs. The core marks the
object (`_tn_batched`) so that no kernel or host reader takes its sample-0 geometry as data.

Nested vmaps nest values: a level-2 tensor's value may itself be a level-1 tensor. `canonical`
flattens such a chain into one real tensor with every batch dimension at the front, and
`rebuild` wraps it back; the autograd translation (grad.py) and the view rule use the two."""

from __future__ import annotations

from ..ops import base as B

KEY = "_tn_batched"


def info(t):
    """(value, bdim, level) of a batched tensor, else None."""
    d = getattr(t, "__dict__", None)
    return d.get(KEY) if d else None


def make(value, bdim, level):
    """The batched tensor at `level` over `value`'s dimension `bdim`."""
    sizes, strides = value._tn_sizes, value._tn_strides
    t = value._tn_batch_view(sizes[:bdim] + sizes[bdim + 1:], strides[:bdim] + strides[bdim + 1:],
                             value.storage_offset())
    t._tn_batched = True
    t.__dict__[KEY] = (value, bdim, level)
    t._tn_requires_grad = value._tn_requires_grad and _grad_inside(level)
    return t


def _grad_inside(level) -> bool:
    """Whether a gradient transform runs inside the vmap of `level`: only then does a batched
    tensor report requires_grad (upstream's BatchedTensor does not; a GradTrackingTensor above it
    does), so code inside a plain vmap sees what it sees upstream."""
    from . import levels

    return any(e.kind in ("grad", "jvp") and e.level > level for e in levels.stack())


def D(op, *args):
    return B.C._aten_dispatch(op, *args)


def canonical(t):
    """(real, levels): the unbatched tensor holding all of `t`'s batches, its batch dimensions
    first in ascending level order, then `t`'s logical dimensions."""
    i = info(t)
    if i is None:
        return t, []
    value, bdim, level = i
    real, levels = canonical(value)
    k = len(levels)
    if bdim != 0:
        real = D("movedim.int", real, k + bdim, k)
    return real, levels + [level]


def rebuild(real, placed):
    """Wraps `real` as batched at each (level, dim of real) in `placed` (the inverse of
    canonical when placed = [(level, i) for i, level in enumerate(levels)])."""
    t = real
    gone = []
    for level, pos in sorted(placed):
        p = pos - sum(1 for g in gone if g < pos)
        t = make(t, p, level)
        gone.append(pos)
    return t


def add_batch_dim(tensor, bdim, level):
    if bdim < 0:
        bdim += len(tensor._tn_sizes)
    return make(tensor, bdim, level)


def remove_batch_dim(tensor, level, batch_size, out_dim):
    """The tensor one level down, its level-`level` batch in dimension `out_dim`; a tensor not
    batched at `level` is expanded along a new `out_dim` (upstream's _remove_batch_dim)."""
    i = info(tensor)
    if i is not None and i[2] == level:
        value, bdim, _ = i
        if bdim == out_dim:
            return value
        return D("movedim.int", value, bdim, out_dim)
    if i is not None and i[2] > level:
        raise RuntimeError(f"vmap: a tensor batched at level {i[2]} escaped to level {level}")
    out = D("unsqueeze", tensor, out_dim)
    sizes = list(out._tn_sizes)
    sizes[out_dim] = batch_size
    return D("expand", out, sizes, False)


def unwrap_batched(tensor, level):
    """`torch._C._functorch._unwrap_batched`: (value, bdim) at `level`, or (tensor, None)."""
    i = info(tensor)
    if i is not None and i[2] == level:
        return i[0], i[1]
    return tensor, None

"""The legacy vmap of torch/_vmap_internals.py (what `torch.autograd.grad(..., is_grads_batched=True)`
and `torch.autograd.functional.jacobian/hessian(vectorize=True)` use): its own nesting calls and
the `torch._add_batch_dim`/`torch._remove_batch_dim` operators, on the same batched tensors. Its
level learns the batch size from the first tensor batched at it; random operators refuse, as
the legacy vmap's do."""

from __future__ import annotations

from ..ops import impl
from . import batched as BT
from . import levels as LV


def increment_nesting() -> int:
    return LV.push("vmap", None, "error")


def decrement_nesting() -> int:
    return LV.pop("vmap")


@impl("_add_batch_dim")
def add_batch_dim(tensor, batch_dim, level):
    entry = LV.layer(level)
    if entry is not None and entry.batch_size is None:
        entry.batch_size = tensor._tn_sizes[batch_dim]
    return BT.add_batch_dim(tensor, batch_dim, level)


@impl("_remove_batch_dim")
def remove_batch_dim(tensor, level, batch_size, out_dim):
    return BT.remove_batch_dim(tensor, level, batch_size, out_dim)

"""The door's vmap step: while a vmap is active the door hands every operator call here first.

The highest level any argument is batched at is the one handled; its batching rule (rules.py)
runs the operator on the unwrapped values through the door again, so lower levels, autograd and
the kernels see physical tensors, and wraps the results. Random operators follow the vmap's
`randomness`, as upstream's do."""

from __future__ import annotations

from ..ops import base as B
from . import batched as BT
from . import levels as LV
from . import rules

_RANDOM: dict = {}

ERROR_RANDOMNESS = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
    "'different' randomness flags on vmap or perform the randomness operation out of vmap"
)


def _is_random(op) -> bool:
    """Tagged nondeterministic_seeded and not composite (a composite's parts are checked: scaled
    dot-product attention draws only with dropout)."""
    r = _RANDOM.get(op)
    if r is None:
        import torch

        from ..ops.door.modes import overload_packet

        try:
            r = torch.Tag.nondeterministic_seeded in overload_packet(op).tags
        except (AttributeError, RuntimeError):
            r = False
        r = r and not rules.facts(op).composite
        _RANDOM[op] = r
    return r


# operators that draw only when their dropout probability (at this position) is not zero
_DRAWS_WITH_DROPOUT = {"_scaled_dot_product_flash_attention_for_cpu": 3}


def _draws(op, args) -> bool:
    if not _is_random(op):
        return False
    pos = _DRAWS_WITH_DROPOUT.get(op)
    return pos is None or pos >= len(args) or args[pos] != 0


def top_level(args, kwargs=None) -> int:
    TB = B.C.TensorBase
    top = 0
    for a in args:
        if isinstance(a, TB):
            i = a.__dict__.get(BT.KEY)
            if i is not None and i[2] > top:
                top = i[2]
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TB):
                    i = x.__dict__.get(BT.KEY)
                    if i is not None and i[2] > top:
                        top = i[2]
    if kwargs:
        top = max(top, top_level(tuple(kwargs.values())))
    return top


def _innermost_vmap():
    for entry in reversed(LV.stack()):
        if entry.kind == "vmap":
            return entry
    return None


def handle(op, args, kwargs=None):
    level = top_level(args, kwargs)
    random = _draws(op, args)
    if not level:
        if not random:
            return NotImplemented
        entry = _innermost_vmap()
        if entry.randomness == "error":
            raise RuntimeError(ERROR_RANDOMNESS)
        if entry.randomness == "same":
            return NotImplemented
        # "different": a fresh draw per sample, batched at the innermost vmap
        return rules.loop(op, args, kwargs or {}, entry.level, entry.batch_size)
    entry = LV.layer(level)
    if entry is None or entry.kind != "vmap":
        raise RuntimeError(
            "vmap: a batched tensor was used after the vmap that made it returned (it escaped through a "
            "global, a closure or an attribute); return it from the vmapped function instead"
        )
    kwargs = kwargs or {}
    if random:
        if entry.randomness == "error":
            raise RuntimeError(ERROR_RANDOMNESS)
        return rules.loop(op, args, kwargs, level, entry.batch_size, same_randomness=entry.randomness == "same")
    rule = rules.RULES.get(op)
    if rule is not None:
        return rule(op, args, kwargs, level, entry.batch_size)
    return rules.default(op, args, kwargs, level, entry.batch_size)

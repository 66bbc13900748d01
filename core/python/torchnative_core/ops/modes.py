"""TorchDispatchMode support at the door: the innermost mode sees every operator as an
`OpOverload` (`torch.ops.aten.add.Tensor`), with itself popped while it runs, as upstream does."""

from __future__ import annotations

from . import base as B


def overload_packet(op: str):
    import torch

    name, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, name)
    return getattr(packet, overload or "default")


def _split(op, args):
    """Door arguments are in schema order; a mode sees positional arguments positionally and
    keyword-only ones as kwargs, leaving out those still at their default, as upstream does."""
    from ..binding.functions import _schema_default
    from ..binding.schema import all_schemas

    schema = all_schemas().get(op)
    if schema is None:
        return tuple(args), {}
    pos, kw = [], {}
    for a, v in zip(schema.args, args):
        if a.kwarg_only:
            if not (a.has_default and v == _schema_default(a)) and v is not None:
                kw[a.name] = v
        else:
            pos.append(v)
    return tuple(pos), kw


def handle(op, args, kwargs=None):
    C = B.C
    from ..binding.schema import all_schemas

    schema = all_schemas().get(op)
    if schema is not None and schema.extra.get("composite_implicit"):
        # CompositeImplicitAutograd operators decompose before the Python key upstream, so a
        # mode sees their parts (t + addmm for linear), never the composite itself.
        return C._tn_call_impl(op, *args, **(kwargs or {}))
    mode = C._pop_torch_dispatch_stack()
    try:
        func = overload_packet(op)
        pos, kw = _split(op, args)
        kw.update(kwargs or {})
        types = tuple({type(a) for a in args if isinstance(a, C.TensorBase)})
        return mode.__torch_dispatch__(func, types, pos, kw)
    finally:
        C._push_on_torch_dispatch_stack(mode)

"""TorchDispatchMode support at the door: the innermost mode sees every operator as an
`OpOverload` (`torch.ops.aten.add.Tensor`), with itself popped while it runs, as upstream does."""

from __future__ import annotations

from . import base as B


def overload_packet(op: str):
    import torch

    name, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, name)
    return getattr(packet, overload or "default")


def handle(op, args, kwargs=None):
    C = B.C
    mode = C._pop_torch_dispatch_stack()
    try:
        func = overload_packet(op)
        types = tuple({type(a) for a in args if isinstance(a, C.TensorBase)})
        return mode.__torch_dispatch__(func, types, tuple(args), kwargs or {})
    finally:
        C._push_on_torch_dispatch_stack(mode)

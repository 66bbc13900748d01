"""The functorch transform stack (upstream's DynamicLayer stack): one entry per active vmap or
grad transform, numbered from 1 as upstream numbers them. Thread-local, as upstream's is."""

from __future__ import annotations

import threading

from ..ops import base as B


class Layer:
    __slots__ = ("level", "kind", "batch_size", "randomness", "alive", "inputs", "clean", "saved")

    def __init__(self, level, kind, batch_size=None, randomness=None):
        self.level = level
        self.kind = kind  # "vmap", "grad", "jvp" or "functionalize"
        self.batch_size = batch_size
        self.randomness = randomness  # "error", "same" or "different" (vmap only)
        self.alive = True
        # grad/jvp: ids of the graph inputs this transform made (its results keep history only
        # where it reaches other leaves that require grad)
        self.inputs = set()
        self.clean = set()  # graph nodes known not to reach other leaves (grad.reaches_outside)
        self.saved = None  # functionalize: the thread's functionalization state to restore


_local = threading.local()


def stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def layer(level):
    for entry in stack():
        if entry.level == level:
            return entry
    return None


def vmap_levels_below(level):
    return [e for e in stack() if e.kind == "vmap" and e.level < level]


def _sync_door():
    """The door's vmap step is installed exactly while a vmap layer is on this thread's stack."""
    from . import dispatch

    active = any(e.kind == "vmap" for e in stack())
    B.C._tn_set_vmap_handler(dispatch.handle if active else None)


def push(kind, batch_size=None, randomness=None) -> int:
    s = stack()
    entry = Layer(len(s) + 1, kind, batch_size, randomness)
    s.append(entry)
    if kind == "vmap":
        _sync_door()
    return entry.level


def pop(kind) -> int:
    s = stack()
    if not s or s[-1].kind != kind:
        raise RuntimeError(f"functorch: expected a {kind} transform on top of the stack to pop")
    entry = s.pop()
    entry.alive = False
    if kind == "vmap":
        _sync_door()
    return entry.level


def undo_to_depth(depth: int) -> None:
    """Pops whatever transforms sit above `depth` (upstream's
    pop_dynamic_layer_stack_and_undo_to_depth, used after an exception skipped the pops)."""
    s = stack()
    while len(s) > depth:
        pop(s[-1].kind)

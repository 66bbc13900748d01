"""Functional wrappers: upstream's FunctionalTensorWrapper and FunctionalStorageImpl in Python.

A functional wrapper is a plain `torch.Tensor` object with no data of its own (a meta storage,
the wrapped value's geometry, dtype and device) carrying a `Wrapper` in its `__dict__`: the
`value` it stands for, the `Storage` it shares with its aliases, and the view metas that
regenerate it from that storage's base. A mutation never writes: it computes the functional
variant, replaces the wrapper's value and queues the new value on the shared storage; every
alias brings itself up to date (`sync`) before its next use by scattering the queued updates
into the base and replaying its views on it. Each of those steps is an operator call on the
values, below functionalization, so a tracing mode records the functional program.
"""

from __future__ import annotations

from ..ops import base as B

KEY = "_tn_functional"


class Storage:
    """What aliases share: the base value and the updates not yet applied to it."""

    __slots__ = ("base", "updates", "generation", "mutations", "mutations_no_grad", "mutations_hidden",
                 "storage_changes", "nbytes_before", "frozen")

    def __init__(self, base):
        self.base = base
        self.updates = []  # (new value, view metas of the alias that was mutated)
        self.generation = 0
        self.mutations = self.mutations_no_grad = self.mutations_hidden = self.storage_changes = 0
        self.nbytes_before = _nbytes(base)
        self.frozen = False

    def add_update(self, value, metas):
        if self.frozen:
            raise RuntimeError("cannot mutate tensors with frozen storage")
        self.updates.append((value, list(metas)))
        self.generation += 1

    def apply_updates(self):
        """Scatters every queued update into the base (upstream's apply_update): the mutated
        alias's views are replayed on the base up to the last one, then each inverse puts the
        new value back one level."""
        for value, metas in self.updates:
            if not metas:
                self.base = value
                continue
            levels = [self.base]
            for m in metas[:-1]:
                levels.append(m.forward(levels[-1]))
            t = value
            for m, below in zip(reversed(metas), reversed(levels)):
                t = m.inverse(below, t)
            self.base = t
        self.updates.clear()


class Wrapper:
    __slots__ = ("value", "storage", "generation", "metas", "metadata_mutated", "storage_changed")

    def __init__(self, value, storage, metas=()):
        self.value = value
        self.storage = storage
        # 0, as upstream's: a view made after a mutation of its storage is stale at birth and
        # regenerated from the base at its first use (the same ops upstream traces)
        self.generation = 0
        self.metas = list(metas)
        self.metadata_mutated = False
        self.storage_changed = False


def _nbytes(t):
    return t.untyped_storage().nbytes() if isinstance(t, B.C.TensorBase) else 0


def state(t) -> Wrapper | None:
    if not isinstance(t, B.C.TensorBase) or not t._tn_functional:
        return None
    return t.__dict__[KEY]


def is_functional(t) -> bool:
    return isinstance(t, B.C.TensorBase) and t._tn_functional


def make(value, storage=None, metas=()):
    """A wrapper over `value`: a new base (its own storage) unless `storage` is an alias's."""
    import torch

    from ..binding.tensor_methods import wrapper_tensor

    out = wrapper_tensor(torch.Tensor, value.shape, value.stride(), value.storage_offset(), value.dtype,
                         value.device)
    out.__dict__[KEY] = Wrapper(value, storage if storage is not None else Storage(value), metas)
    out._tn_functional = True
    return out


def set_value(t, value):
    """Points the wrapper at `value`, taking its geometry (a metadata mutation or a replace)."""
    w = t.__dict__[KEY]
    w.value = value
    if list(t.shape) != list(value.shape) or t.stride() != value.stride() or \
            t.storage_offset() != value.storage_offset() or t.dtype != value.dtype:
        import torch

        from ..binding.tensor_methods import wrapper_tensor

        fresh = wrapper_tensor(torch.Tensor, value.shape, value.stride(), value.storage_offset(), value.dtype,
                               value.device)
        t._tn_set_storage_from(fresh, list(fresh.shape), list(fresh.stride()), fresh.storage_offset())


def unwrap(t):
    """The current value of a wrapper (no sync: `_from_functional_tensor`)."""
    return t.__dict__[KEY].value


def sync(t):
    """Brings `t` up to date with its storage: pending updates applied to the base, then `t`
    regenerated from the base by its views."""
    w = t.__dict__[KEY]
    s = w.storage
    if w.generation == s.generation:
        return
    s.apply_updates()
    value = s.base
    for m in w.metas:
        value = m.forward(value)
    set_value(t, value)
    w.generation = s.generation


def replace(t, value):
    """`_functionalize_replace`: the wrapper's value becomes `value` (the functional result of a
    mutation); `commit_update` then queues it on the storage."""
    w = t.__dict__[KEY]
    set_value(t, value)
    w.storage.mutations += 1
    if not B.C.is_grad_enabled() or B.C.is_inference_mode_enabled():
        w.storage.mutations_no_grad += 1


def commit_update(t):
    """Queues the wrapper's value on its storage. The wrapper itself is not marked up to date
    (upstream dropped that shortcut): the sync that follows a mutation regenerates it."""
    w = t.__dict__[KEY]
    w.storage.add_update(w.value, w.metas)

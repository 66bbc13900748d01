"""`torch._C.DispatchKeySet` and the keyset queries upstream's Python makes (torch/_ops.py,
torch/_subclasses). torchnative has one door rather than a key-ordered dispatcher, so a keyset
here is an honest description of a tensor (its backend key plus the dense/autograd keys upstream
would attach), used by Python code to decide which Python kernels to run."""

from __future__ import annotations

import threading

# The thread's local include/exclude sets (c10::impl::LocalDispatchKeySet). The door reads two
# of their keys: Python excluded turns TorchDispatchMode and subclass dispatch off, Meta included
# makes every operand compute as its meta twin (FakeTensorMode's kernel invocations).
_tls = threading.local()


def local_include():
    return getattr(_tls, "include", _EMPTY)


def local_exclude():
    return getattr(_tls, "exclude", _EMPTY)


def _set_local(include, exclude):
    before = local_include()
    _tls.include, _tls.exclude = include, exclude
    _sync_pre_dispatch(before, include)


_PRE_DISPATCH = []  # DispatchKey.PreDispatch, once torch._C's enum exists


def _sync_pre_dispatch(before, after):
    """Tells the door whether PreDispatch is included (torch._ops includes it while a
    pre-dispatch mode is set): the door reads a native flag, not this Python set."""
    if not _PRE_DISPATCH:
        from torch._C import DispatchKey

        _PRE_DISPATCH.append(DispatchKey.PreDispatch)
    key = _PRE_DISPATCH[0]
    on = after.has(key)
    if on != before.has(key):
        import torch

        from ..ops.door.modes import pre_dispatch

        torch._C._tn_set_pre_dispatch(on, pre_dispatch)


class DispatchKeySet:
    __slots__ = ("_keys",)

    def __init__(self, key=None):
        from torch._C import DispatchKey

        if key is None:
            self._keys = frozenset()
        elif isinstance(key, DispatchKeySet):
            self._keys = key._keys
        elif isinstance(key, DispatchKey):
            self._keys = frozenset([key])
        else:
            self._keys = frozenset(key)

    @classmethod
    def _of(cls, keys):
        ks = cls.__new__(cls)
        ks._keys = frozenset(keys)
        return ks

    def __or__(self, other):
        return DispatchKeySet._of(self._keys | DispatchKeySet(other)._keys)

    def __and__(self, other):
        return DispatchKeySet._of(self._keys & DispatchKeySet(other)._keys)

    def __sub__(self, other):
        return DispatchKeySet._of(self._keys - DispatchKeySet(other)._keys)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self):
        return hash(self._keys)

    def has(self, key):
        return key in self._keys

    def add(self, key):
        return DispatchKeySet._of(self._keys | {key})

    def remove(self, key):
        return DispatchKeySet._of(self._keys - {key})

    def empty(self):
        return not self._keys

    def highestPriorityTypeId(self):
        from torch._C import DispatchKey

        if not self._keys:
            return DispatchKey.Undefined
        return max(self._keys, key=lambda k: k.value)

    def raw_repr(self):
        return sum(1 << (k.value % 63) for k in self._keys)

    @staticmethod
    def from_raw_repr(raw):
        from torch._C import DispatchKey

        return DispatchKeySet._of(k for k in DispatchKey if raw & (1 << (k.value % 63)))

    def __iter__(self):
        return iter(sorted(self._keys, key=lambda k: -k.value))

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"


_EMPTY = DispatchKeySet._of(())


def included(key) -> bool:
    inc = local_include()
    return bool(inc._keys) and inc.has(key)


def excluded(key) -> bool:
    ex = local_exclude()
    return bool(ex._keys) and ex.has(key)


def set_included(key, on) -> None:
    inc = local_include()
    _set_local(inc.add(key) if on else inc.remove(key), local_exclude())


def set_excluded(key, on) -> None:
    ex = local_exclude()
    _set_local(local_include(), ex.add(key) if on else ex.remove(key))


class _ForceDispatchKeyGuard:
    """Sets both local sets for the guard's extent (upstream: c10::impl::ForceDispatchKeyGuard).
    The other guards differ only in the sets they derive from the current ones (`_apply`)."""

    def __init__(self, include=None, exclude=None):
        self._new = (DispatchKeySet(include), DispatchKeySet(exclude))

    def _apply(self, include, exclude):
        return self._new

    def __enter__(self):
        self._saved = (local_include(), local_exclude())
        _set_local(*self._apply(*self._saved))
        return self

    def __exit__(self, *exc):
        _set_local(*self._saved)
        return False


class _PreserveDispatchKeyGuard(_ForceDispatchKeyGuard):
    """Restores both local sets on exit, whatever happened inside."""

    def __init__(self):
        pass

    def _apply(self, include, exclude):
        return include, exclude


class _IncludeDispatchKeyGuard(_ForceDispatchKeyGuard):
    def __init__(self, key):
        self._key = key

    def _apply(self, include, exclude):
        return include.add(self._key), exclude


class _ExcludeDispatchKeyGuard(_ForceDispatchKeyGuard):
    def __init__(self, keyset):
        self._keys = DispatchKeySet(keyset)

    def _apply(self, include, exclude):
        return include, exclude | self._keys


class _SetExcludeDispatchKeyGuard(_ForceDispatchKeyGuard):
    """Sets (True) or clears (False) one key in the exclude set."""

    def __init__(self, key, enabled):
        self._key, self._enabled = key, bool(enabled)

    def _apply(self, include, exclude):
        return include, exclude.add(self._key) if self._enabled else exclude.remove(self._key)


class _EnablePythonDispatcher(_PreserveDispatchKeyGuard):
    """Marks the thread as running upstream's Python dispatcher (the PythonDispatcher key in the
    include set, which torch._ops reads). The door already routes every overload through Python,
    so nothing else changes."""

    def _apply(self, include, exclude):
        from torch._C import DispatchKey

        return include.add(DispatchKey.PythonDispatcher), exclude


class _DisablePythonDispatcher(_PreserveDispatchKeyGuard):
    def _apply(self, include, exclude):
        from torch._C import DispatchKey

        return include.remove(DispatchKey.PythonDispatcher), exclude


class _DisableTorchDispatch(_PreserveDispatchKeyGuard):
    """Python dispatch off while inside, as upstream's guard: the Python key is excluded, so the
    door skips modes and subclass `__torch_dispatch__` (the mode stack itself is untouched)."""

    def _apply(self, include, exclude):
        from torch._C import DispatchKey

        return include, exclude.add(DispatchKey.Python)


def install(C) -> None:
    DispatchKeySet.__module__ = "torch._C"
    C.DispatchKeySet = DispatchKeySet
    DK = C.DispatchKey

    def _dispatch_keyset_full():
        return DispatchKeySet._of(list(DK))

    def _dispatch_keyset_full_after(key):
        return DispatchKeySet._of(k for k in DK if k.value < key.value)

    def _dispatch_keys(tensor):
        dev = tensor._tn_device_key
        backend = {"cpu": DK.CPU, "meta": DK.Meta}.get(dev, DK.PrivateUse1)
        keys = {backend, DK.ADInplaceOrView}
        autograd = {"cpu": "AutogradCPU", "meta": "AutogradMeta"}.get(dev, "AutogradPrivateUse1")
        if hasattr(DK, autograd):
            keys.add(getattr(DK, autograd))
        if hasattr(DK, "Dense"):
            keys.add(DK.Dense)
        from .torch_function import overrides_torch_dispatch

        if overrides_torch_dispatch(type(tensor)):
            keys.update((DK.Python, DK.PythonTLSSnapshot))
        return DispatchKeySet._of(keys)

    def _dispatch_key_set(tensor):
        # upstream: toString(tensor.key_set())
        return repr(_dispatch_keys(tensor))

    def _dispatch_tls_local_include_set():
        return local_include()

    def _dispatch_tls_local_exclude_set():
        return local_exclude()

    def _dispatch_tls_is_dispatch_key_excluded(key):
        return excluded(key)

    def _dispatch_tls_is_dispatch_key_included(key):
        return included(key)

    def _dispatch_tls_set_dispatch_key_excluded(key, value):
        set_excluded(key, value)

    def _dispatch_tls_set_dispatch_key_included(key, value):
        set_included(key, value)

    def _parse_dispatch_key(name):
        # torch.library asks whether a string names a dispatch key; None means it does not.
        return getattr(DK, name, None) if isinstance(name, str) else None

    def _dispatch_key_for_device(device_type):
        # c10::getAutogradRelatedKeySetFromBackend's backend half: the key name of a device.
        return {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA", "mps": "MPS", "xpu": "XPU"}.get(device_type, "PrivateUse1")

    for fn in (_dispatch_key_set, _parse_dispatch_key, _dispatch_key_for_device, _dispatch_keyset_full, _dispatch_keyset_full_after, _dispatch_keys, _dispatch_tls_local_include_set,
               _dispatch_tls_local_exclude_set, _dispatch_tls_is_dispatch_key_excluded,
               _dispatch_tls_is_dispatch_key_included, _dispatch_tls_set_dispatch_key_excluded,
               _dispatch_tls_set_dispatch_key_included):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
    for cls in (_ForceDispatchKeyGuard, _PreserveDispatchKeyGuard, _IncludeDispatchKeyGuard,
                _ExcludeDispatchKeyGuard, _SetExcludeDispatchKeyGuard, _EnablePythonDispatcher,
                _DisablePythonDispatcher, _DisableTorchDispatch):
        cls.__module__ = "torch._C"
        setattr(C, cls.__name__, cls)
    C._after_autograd_keyset = _dispatch_keyset_full()
    C._after_ADInplaceOrView_keyset = _dispatch_keyset_full()
    C._additional_keys_to_prop_for_wrapper_tensors = DispatchKeySet()
    C._dispatch_autogradother_backends = DispatchKeySet()

"""`torch._C.DispatchKeySet` and the keyset queries upstream's Python makes (torch/_ops.py,
torch/_subclasses). torchnative has one door rather than a key-ordered dispatcher, so a keyset
here is an honest description of a tensor (its backend key plus the dense/autograd keys upstream
would attach), used by Python code to decide which Python kernels to run."""

from __future__ import annotations


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
        return DispatchKeySet._of(keys)

    def _dispatch_tls_local_include_set():
        return DispatchKeySet()

    def _dispatch_tls_local_exclude_set():
        return DispatchKeySet()

    def _dispatch_tls_is_dispatch_key_excluded(key):
        return False

    def _dispatch_tls_is_dispatch_key_included(key):
        return False

    def _dispatch_tls_set_dispatch_key_excluded(key, value):
        return None

    def _dispatch_tls_set_dispatch_key_included(key, value):
        return None

    def _parse_dispatch_key(name):
        # torch.library asks whether a string names a dispatch key; None means it does not.
        return getattr(DK, name, None) if isinstance(name, str) else None

    def _dispatch_key_for_device(device_type):
        # c10::getAutogradRelatedKeySetFromBackend's backend half: the key name of a device.
        return {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA", "mps": "MPS", "xpu": "XPU"}.get(device_type, "PrivateUse1")

    for fn in (_parse_dispatch_key, _dispatch_key_for_device, _dispatch_keyset_full, _dispatch_keyset_full_after, _dispatch_keys, _dispatch_tls_local_include_set,
               _dispatch_tls_local_exclude_set, _dispatch_tls_is_dispatch_key_excluded,
               _dispatch_tls_is_dispatch_key_included, _dispatch_tls_set_dispatch_key_excluded,
               _dispatch_tls_set_dispatch_key_included):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
    C._after_autograd_keyset = _dispatch_keyset_full()
    C._after_ADInplaceOrView_keyset = _dispatch_keyset_full()
    C._additional_keys_to_prop_for_wrapper_tensors = DispatchKeySet()
    C._dispatch_autogradother_backends = DispatchKeySet()

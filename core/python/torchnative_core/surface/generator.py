"""`torch._C.Generator` and `default_generator`.

The state machine (MT19937 plus torch's normal cache, bit-identical to upstream's CPU generator)
is native: `torch._C._TnCpuGenerator` from the `torchnative-rng` crate. This class carries
upstream's Python API around it."""

from __future__ import annotations

from . import types as T

_DEFAULT_SEED = 67280421310721  # c10::detail::default_rng_seed_val


class _GeneratorMeta(type):
    """Generator's metaclass; `_set_generator_metaclass` rebases it onto the metaclass upstream
    asks for (a class's own __class__ cannot be reassigned)."""


class Generator(metaclass=_GeneratorMeta):
    def __init__(self, device="cpu"):
        from torch._C import _TnCpuGenerator  # native; absent only in a broken build

        self._tn_device = T.device(device) if not isinstance(device, T.device) else device
        self._tn_impl = _TnCpuGenerator(_DEFAULT_SEED)

    @property
    def device(self):
        return self._tn_device

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise RuntimeError("Overflow when unpacking long long")
        self._tn_impl.manual_seed(seed & ((1 << 64) - 1))
        return self

    def seed(self):
        return self._tn_impl.seed()

    def initial_seed(self):
        return self._tn_impl.initial_seed()

    def get_state(self):
        from torch._C import _tn_from_bytes

        raw = bytes(self._tn_impl.get_state())
        return _tn_from_bytes(raw, [len(raw)], T.BY_NAME["uint8"]._tn_code, "cpu", 0)

    def set_state(self, new_state):
        from torch._C import _tn_to_bytes

        if new_state.dtype is not T.BY_NAME["uint8"]:
            raise TypeError(f"expected a torch.ByteTensor, but got {new_state.type()}")
        self._tn_impl.set_state(bytes(_tn_to_bytes(new_state.contiguous())))
        return self

    def graphsafe_get_state(self):
        return self.get_state()

    def graphsafe_set_state(self, state):
        return self.set_state(state)

    def clone_state(self):
        g = Generator(self.device)
        g.set_state(self.get_state())
        return g

    def __reduce__(self):
        return (_rebuild, (str(self.device), bytes(self._tn_impl.get_state())))

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


def _rebuild(device, state):
    g = Generator(device)
    g._tn_impl.set_state(state)
    return g


def _set_generator_metaclass(metaclass):
    # Upstream swaps the Python type of torch.Generator for OpaqueBaseMeta so FakeScriptObject
    # can register as a virtual subclass; a class's metaclass can be swapped the same way here.
    if not issubclass(_GeneratorMeta, metaclass):
        _GeneratorMeta.__bases__ = (metaclass,)


def install(C) -> None:
    C._set_generator_metaclass = _set_generator_metaclass
    Generator.__module__ = "torch._C"
    C.Generator = Generator
    if hasattr(C, "_TnCpuGenerator"):
        C.default_generator = Generator("cpu")
    else:
        C.default_generator = None

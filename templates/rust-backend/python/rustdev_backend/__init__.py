"""rustdev: a native torchnative backend (device key "rustdev") built from Rust with maturin.

The hooks (documented in `torchnative.hookspecs`) stay in Python; the work is in the compiled
module `rustdev_backend._native`, which registers an allocator and `extern "C"` kernels through
the C registrar the core hands over in a PyCapsule.
"""

from __future__ import annotations

from types import SimpleNamespace

NAME = "rustdev"


class Plugin:
    def torchnative_describe(self):
        try:
            from . import _native
        except ImportError as e:  # reported as unavailable, with the reason
            return SimpleNamespace(name=NAME, device_keys=(NAME,), abi_version=None, available=False,
                                   reason=f"rustdev_backend._native failed to import: {e}")
        return SimpleNamespace(name=NAME, device_keys=(NAME,), abi_version=_native.ABI_VERSION, priority=0,
                               available=True, reason="")

    def torchnative_register(self, registrar) -> int:
        from . import _native

        return _native.register(registrar.capsule)


plugin = Plugin()

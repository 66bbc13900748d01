"""rustdev: a native torchnative backend (device key "rustdev") built from Rust with maturin.

The hooks (documented in `torchnative_core.hookspecs`) come from the backend SDK's
`NativePlugin`; the work is in the compiled module `rustdev_backend._native`, which registers an
allocator and `extern "C"` kernels through the C registrar the core hands over in a PyCapsule.
"""

from __future__ import annotations

from torchnative_core.native_plugin import NativePlugin


class Plugin(NativePlugin):
    name = "rustdev"  # the entry-point name (pyproject.toml)
    device_keys = ("rustdev",)
    priority = 0


plugin = Plugin()

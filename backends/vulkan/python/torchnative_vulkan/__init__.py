"""torchnative-vulkan: the Vulkan backend of torchnative (device key ``"vulkan"``), wgpu compute
shaders written in WGSL.

The entry point ``torchnative.backends: vulkan = "torchnative_vulkan:plugin"`` names
:data:`plugin`, a :class:`~torchnative_core.native_plugin.NativePlugin` around the compiled module
``torchnative_vulkan._native``. Its probe asks wgpu for a Vulkan adapter (once per process; no
device is opened): without one the plugin reports itself ``unavailable: no Vulkan adapter`` and
``import torch`` carries on. The device is opened on the first allocation. Operators without a
vulkan kernel are refused by name by the core; this backend has no host fallback of its own.
"""

from __future__ import annotations

from torchnative_core.native_plugin import NativePlugin

__all__ = ["plugin", "VulkanPlugin"]


def _probe(native):
    """``native.probe()`` with Mesa's implicit device-select layer off (``NODEVICE_SELECT=1``)
    unless the user set that variable: the layer only orders GPUs for a display server, and
    without a Wayland session it prints "error: XDG_RUNTIME_DIR is invalid" at every
    ``import torch``. The variable is restored after the probe (the loader reads it once, when
    the instance is created)."""
    import os

    unset = "NODEVICE_SELECT" not in os.environ
    if unset:
        os.environ["NODEVICE_SELECT"] = "1"
    try:
        return native.probe()
    finally:
        if unset:
            del os.environ["NODEVICE_SELECT"]


class VulkanPlugin(NativePlugin):
    """The backend descriptor the torchnative plugin manager reads (agrees with
    torchnative/plugins.toml)."""

    name = "vulkan"
    device_keys = ("vulkan",)
    priority = 50

    def probe(self, native) -> tuple[bool, str]:
        """(True, "") when wgpu finds a Vulkan adapter."""
        return _probe(native)

    def adapter(self) -> str:
        """The adapter wgpu found ("llvmpipe (LLVM 15.0.6, 256 bits) (Cpu, Vulkan)"), or the reason."""
        return _probe(self._native())[1]


plugin = VulkanPlugin()

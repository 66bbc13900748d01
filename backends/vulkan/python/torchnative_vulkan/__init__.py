"""torchnative-vulkan: the Vulkan backend of torchnative (device key ``"vulkan"``), wgpu compute
shaders written in WGSL.

The entry point ``torchnative.backends: vulkan = "torchnative_vulkan:plugin"`` names
:data:`plugin`, which implements the two hooks of ``torchnative.hookspecs`` by name.
``torchnative_describe`` loads ``torchnative_vulkan._native`` and asks wgpu for a Vulkan adapter
(once per process; no device is opened): without one the plugin reports itself
``unavailable: no Vulkan adapter`` and ``import torch`` carries on. The device is opened on the
first allocation. Operators without a vulkan kernel are refused by name by the core; this
backend has no host fallback of its own.
"""

from __future__ import annotations

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


class VulkanPlugin:
    """The backend descriptor the torchnative plugin manager reads."""

    name = "vulkan"
    device_keys = ("vulkan",)
    priority = 50

    @staticmethod
    def _native():
        from . import _native

        return _native

    @property
    def abi_version(self) -> int:
        """The backend ABI this build speaks (``major << 16 | minor``)."""
        return self._native().ABI_VERSION

    def is_available(self) -> tuple[bool, str]:
        """(True, "") when the native module loads and wgpu finds a Vulkan adapter."""
        try:
            native = self._native()
        except Exception as e:  # noqa: BLE001 - the reason is reported, not raised
            return False, "torchnative_vulkan._native failed to import: %s: %s" % (type(e).__name__, e)
        ok, why = _probe(native)
        return bool(ok), "" if ok else why

    def adapter(self) -> str:
        """The adapter wgpu found ("llvmpipe (LLVM 15.0.6, 256 bits) (Cpu, Vulkan)"), or the reason."""
        return _probe(self._native())[1]

    def torchnative_describe(self):
        """The descriptor hook: name, device keys, priority, ABI version, availability."""
        from types import SimpleNamespace

        ok, why = self.is_available()
        return SimpleNamespace(name=self.name, device_keys=self.device_keys, priority=self.priority,
                               abi_version=self.abi_version if ok else None, available=ok, reason=why)

    def torchnative_register(self, registrar) -> int:
        """The register hook: the vulkan allocator and every kernel, through the C registrar."""
        return self.register(registrar.capsule)

    def register(self, registrar_capsule) -> int:
        """Registers the allocator and every kernel with the core's registrar capsule; returns the
        number of kernels registered."""
        return self._native().register(registrar_capsule)

    def kernel_names(self) -> list[str]:
        """The operator overloads this backend implements."""
        return list(self._native().kernel_names())

    def refused_kernels(self) -> list[tuple[str, int]]:
        """The overloads the core refused at the last ``register`` (with its return code)."""
        return list(self._native().refused_kernels())

    def __repr__(self) -> str:
        return "<torchnative backend plugin %r (device keys %s)>" % (self.name, ", ".join(self.device_keys))


plugin = VulkanPlugin()

"""The Python half of the backend SDK: :class:`NativePlugin`, the plugin object of a backend whose
kernels are a compiled extension built on the ``torchnative-backend`` crate (``sdk/``).

Such an extension, ``<package>._native``, exports ``ABI_VERSION``, ``DEVICE_KEY``,
``register(capsule)``, ``kernel_names()`` and ``refused_kernels()`` (the crate's
``python::add_backend_functions``). A backend's Python package then only says who it is::

    from torchnative_core.native_plugin import NativePlugin

    class Plugin(NativePlugin):
        name = "rustdev"            # the entry-point name
        device_keys = ("rustdev",)
        priority = 0

    plugin = Plugin()               # [project.entry-points."torchnative.backends"] rustdev = "rustdev_backend:plugin"

and overrides :meth:`NativePlugin.probe` when its device may be absent (vulkan asks for an adapter).
First-party plugins must agree with ``torchnative/plugins.toml`` (name, device keys, priority),
which tests/test_packaging.py checks.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

__all__ = ["NativePlugin"]


class NativePlugin:
    """The descriptor and register hooks of a native backend (``torchnative_core.hookspecs``),
    implemented by name, so the plugin manager needs no marker."""

    name: str = ""
    device_keys: tuple[str, ...] = ()
    priority: int = 0
    #: The compiled module; by default ``_native`` beside the subclass's module.
    native_module: str | None = None

    def _native(self):
        module = self.native_module or f"{type(self).__module__}._native"
        return importlib.import_module(module)

    @property
    def abi_version(self) -> int:
        """The backend ABI this build speaks (``major << 16 | minor``)."""
        return self._native().ABI_VERSION

    def probe(self, native) -> tuple[bool, str]:
        """Whether the device is here, once the module loaded: ``(True, "")`` or ``(False, the
        reason)``. Cheap: no device memory, no kernel compilation."""
        return True, ""

    def is_available(self) -> tuple[bool, str]:
        """(True, "") when the native module loads and :meth:`probe` agrees; otherwise (False,
        the reason)."""
        try:
            native = self._native()
        except Exception as e:  # noqa: BLE001 - the reason is reported, not raised
            module = self.native_module or f"{type(self).__module__}._native"
            return False, "%s failed to import: %s: %s" % (module, type(e).__name__, e)
        ok, why = self.probe(native)
        return bool(ok), "" if ok else why

    def torchnative_describe(self):
        """The descriptor hook: name, device keys, priority, ABI version, availability."""
        ok, why = self.is_available()
        return SimpleNamespace(name=self.name, device_keys=tuple(self.device_keys), priority=self.priority,
                               abi_version=self.abi_version if ok else None, available=ok, reason=why)

    def torchnative_register(self, registrar) -> int:
        """The register hook: the allocator and every kernel, through the C registrar."""
        return self.register(registrar.capsule)

    def register(self, registrar_capsule) -> int:
        """Registers the allocator and every kernel with the core's registrar (a PyCapsule named
        ``"torchnative.registrar"``); returns the number of kernels the core accepted. Raises
        ImportError naming both versions when the core's ABI major differs."""
        return self._native().register(registrar_capsule)

    def kernel_names(self) -> list[str]:
        """The operator overloads this backend implements."""
        return list(self._native().kernel_names())

    def refused_kernels(self) -> list[tuple[str, int]]:
        """The overloads the core refused at the last ``register`` (with its return code)."""
        return list(self._native().refused_kernels())

    def __repr__(self) -> str:
        return "<torchnative backend plugin %r (device keys %s)>" % (self.name, ", ".join(self.device_keys))

"""torchnative-cpu: the CPU backend of torchnative (device key ``"cpu"``).

The entry point ``torchnative.backends: cpu = "torchnative_cpu:plugin"`` names :data:`plugin`,
which implements the hooks of ``torchnative.hookspecs`` by name (no pluggy import needed):
``torchnative_describe`` loads the compiled module ``torchnative_cpu._native`` to read its ABI
version (its failure to load is reported as unavailability), and ``torchnative_register`` hands
the C registrar capsule to it; ``torchnative_set_num_threads`` passes ``torch.set_num_threads`` on.
"""

from __future__ import annotations

__all__ = ["plugin", "CpuPlugin"]


class CpuPlugin:
    """The backend descriptor the torchnative plugin manager reads."""

    name = "cpu"
    device_keys = ("cpu",)
    priority = 100

    @staticmethod
    def _native():
        from . import _native

        return _native

    @property
    def abi_version(self) -> int:
        """The backend ABI this build speaks (``major << 16 | minor``)."""
        return self._native().ABI_VERSION

    def is_available(self) -> tuple[bool, str]:
        """(True, "") when the native module loads; otherwise (False, the reason)."""
        try:
            self._native()
        except Exception as e:  # noqa: BLE001 - the reason is reported, not raised
            return False, "torchnative_cpu._native failed to import: %s: %s" % (type(e).__name__, e)
        return True, ""

    def torchnative_describe(self):
        """The descriptor hook: name, device keys, priority, ABI version, availability."""
        from types import SimpleNamespace

        ok, why = self.is_available()
        return SimpleNamespace(name=self.name, device_keys=self.device_keys, priority=self.priority,
                               abi_version=self.abi_version if ok else None, available=ok, reason=why)

    def torchnative_register(self, registrar) -> int:
        """The register hook: the host allocator and every kernel, through the C registrar."""
        return self.register(registrar.capsule)

    def torchnative_set_num_threads(self, n: int) -> None:
        """``torch.set_num_threads(n)``: kernels split work into at most ``n`` parts (``1``: on the
        calling thread), bounded by the thread pool's size (``RAYON_NUM_THREADS``)."""
        self._native().set_num_threads(n)

    def register(self, registrar_capsule) -> int:
        """Registers the host allocator and every kernel with the core's registrar (a PyCapsule
        named ``"torchnative.registrar"``); returns the number of kernels registered. Raises
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


plugin = CpuPlugin()

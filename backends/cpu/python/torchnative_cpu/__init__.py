"""torchnative-cpu: the CPU backend of torchnative (device key ``"cpu"``).

The entry point ``torchnative.backends: cpu = "torchnative_cpu:plugin"`` names :data:`plugin`, a
:class:`~torchnative_core.native_plugin.NativePlugin` (the backend SDK's plugin class: the
describe and register hooks around the compiled module ``torchnative_cpu._native``); the cpu's
own hook is ``torchnative_set_num_threads``, which passes ``torch.set_num_threads`` on.
"""

from __future__ import annotations

from torchnative_core.native_plugin import NativePlugin

__all__ = ["plugin", "CpuPlugin"]


class CpuPlugin(NativePlugin):
    """The backend descriptor the torchnative plugin manager reads (agrees with
    torchnative/plugins.toml)."""

    name = "cpu"
    device_keys = ("cpu",)
    priority = 100

    def torchnative_set_num_threads(self, n: int) -> None:
        """``torch.set_num_threads(n)``: kernels split work into at most ``n`` parts (``1``: on the
        calling thread), bounded by the thread pool's size (``RAYON_NUM_THREADS``)."""
        self._native().set_num_threads(n)


plugin = CpuPlugin()

"""mydev: a torchnative backend in pure Python (device key "mydev").

`plugin` is what the entry point names. torchnative calls its two hooks (documented in
`torchnative.hookspecs`) at `import torch`: `torchnative_describe`, which must be cheap, then
`torchnative_register`, which registers the allocator and the kernels. Methods named like the
hooks are found without importing pluggy or torchnative.
"""

from __future__ import annotations

from types import SimpleNamespace

from . import kernels
from .memory import HostAllocator

# The backend ABI this plugin was written for: major << 16 | minor. A core with another major
# skips the plugin and records why (`torchnative backends list`).
ABI_VERSION = 1 << 16


class Backend:
    """One backend object; `name` must equal the entry-point name."""

    def __init__(self, name: str = "mydev", device_keys=("mydev",), priority: int = 0, cpu_fallback: bool = True):
        self.name = name
        self.device_keys = tuple(device_keys)
        self.priority = priority
        # Operators without a kernel here run on the cpu backend (copied over and back), so all
        # of torch works on the device while its kernels are written; False makes them refuse.
        self.cpu_fallback = cpu_fallback
        self.allocators = {key: HostAllocator() for key in self.device_keys}

    def torchnative_describe(self):
        return SimpleNamespace(name=self.name, device_keys=self.device_keys, priority=self.priority,
                               abi_version=ABI_VERSION, available=True, reason="")

    def torchnative_register(self, registrar) -> int:
        n = 0
        for key in self.device_keys:
            registrar.register_allocator(key, self.allocators[key])
            for op, fn in kernels.KERNELS.items():
                registrar.register_kernel(op, key, fn)
                n += 1
            if self.cpu_fallback:
                registrar.register_cpu_fallback(key)
        return n


# What the entry point names. `Backend(cpu_fallback=False)` makes an operator without a kernel here
# refuse by name instead of running on cpu: how `torchnative conformance mydev` judges your kernels.
plugin = Backend()

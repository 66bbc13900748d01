"""The CPU fallback for operators a device has no kernel for: off unless turned on, and counted.

    import torchnative, torch
    torchnative.enable_cpu_fallback("vulkan")    # or TORCHNATIVE_CPU_FALLBACK=vulkan before import
    ...
    print(torchnative.fallback_summary())        # or TORCHNATIVE_FALLBACK_REPORT=1: printed at exit
    torchnative.fallback_report()                # {"vulkan": {"aten::foo": 3, ...}}

With it off (the default for vulkan), an operator without a kernel raises
``NotImplementedError: aten.foo.default has no kernel for device 'vulkan' (...)``. With it on, such
an operator runs on the cpu backend (operands copied to the host, outputs back), a
``FallbackWarning`` is issued the first time each operator falls back on a device, and every call
is counted. A plugin may also opt its own device in (the Python template does); those calls are
counted the same way. See docs/vulkan.md.
"""


def _impl():
    import torch  # noqa: F401 -- the core (and its plugins) must be loaded first

    from torchnative_core import cpu_fallback

    return cpu_fallback


def enable_cpu_fallback(device: str) -> None:
    """Operators `device` lacks run on the CPU from now on (counted)."""
    _impl().enable(device)


def disable_cpu_fallback(device: str) -> None:
    """Operators `device` lacks are refused by name again."""
    _impl().disable(device)


def cpu_fallback_devices() -> list[str]:
    """The device keys whose missing operators fall back to the CPU now."""
    return sorted(_impl().DEVICES)


def fallback_report() -> dict:
    """{device key: {operator: number of calls that ran on the CPU fallback}} in this process."""
    return _impl().report()


def fallback_summary() -> str:
    """fallback_report() as printable lines."""
    return _impl().summary()

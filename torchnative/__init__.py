"""torchnative: upstream torch 2.13.0's Python on our own torch._C (Rust, PyO3, abi3)."""

__version__ = "0.1.0.dev0"

from .fallback import (  # noqa: E402 -- none of these imports torch until called
    cpu_fallback_devices,
    disable_cpu_fallback,
    enable_cpu_fallback,
    fallback_report,
    fallback_summary,
)

__all__ = ["cpu_fallback_devices", "disable_cpu_fallback", "enable_cpu_fallback", "fallback_report",
           "fallback_summary"]

"""torchnative: upstream torch 2.13.0's Python on our own torch._C (Rust, PyO3, abi3)."""

__version__ = "0.1.0.dev0"

"""Spectral analysis: torch.fft and the window functions."""

from . import fft, windows  # noqa: F401  (registration by import)

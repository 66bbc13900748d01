"""Spectral analysis: torch.fft, the short-time transform and its inverse, the window functions."""

from . import fft, stft, windows  # noqa: F401  (registration by import)

"""Special functions (torch.special) and the Cephes algorithms upstream computes them with."""

from . import bessel, functions  # noqa: F401  (registration by import)

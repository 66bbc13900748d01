"""Random sampling, bit-identical to upstream's CPU generator."""

from . import distributions, sampling  # noqa: F401  (registration by import)

"""Elementwise operators: arithmetic, casts and comparisons, pointwise math, activations."""

from . import activations, arithmetic, compare, math  # noqa: F401  (registration by import)

"""Complex tensors as pairs of reals: views and arithmetic composed from the real kernels."""

# arithmetic wraps the implementations registered before it (conjugation's among them)
from . import conjugation, views, arithmetic  # noqa: F401  (registration by import)

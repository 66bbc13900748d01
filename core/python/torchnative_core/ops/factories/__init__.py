"""Factory operators: tensors made from sizes, values and ranges."""

from . import tensors  # noqa: F401  (registration by import)

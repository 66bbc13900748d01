"""Factory operators: tensors made from sizes, values and ranges."""

from . import files, tensors  # noqa: F401  (registration by import)

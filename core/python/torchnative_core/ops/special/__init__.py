"""Special functions (torch.special): their checks and dtypes, and the ones the device's kernels
do not compute."""

from . import functions  # noqa: F401  (registration by import)

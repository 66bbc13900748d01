"""Reading and writing positions chosen by an index or a mask."""

from . import index, scatter  # noqa: F401  (registration by import)

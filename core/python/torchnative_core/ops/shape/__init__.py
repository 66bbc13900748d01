"""Views, joins and rearrangements of elements, and tensor metadata."""

from . import join, metadata, rearrange, views  # noqa: F401  (registration by import)

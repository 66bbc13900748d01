"""Derived forms of operators, registered from the schema table: aliases, in-place and out= overloads, _foreach_*."""

from . import aliases, foreach, inplace, out_variants  # noqa: F401  (registration by import)

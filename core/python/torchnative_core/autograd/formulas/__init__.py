"""Backward formulas by family. Each module registers its formulas on import (formula.py)."""

from __future__ import annotations

from . import complex, elementwise, linalg, linalg_decomp, nn, reductions, scatter_reduce, shape, special  # noqa: F401
from ..formula import COMPLEX_READY, FORMULAS

# the shape and indexing formulas only move the gradient's values: the same for complex ones
COMPLEX_READY.update(op for op, f in FORMULAS.items() if f.fn.__module__ == shape.__name__)


def node_names():
    """Every node class name upstream's derivatives.yaml defines (torch._C._functions lists them
    all, implemented or not), plus the hand-written ones."""
    from .. import record
    from ..formula import FORMULAS

    names = {e["node"] for e in record._table().values() if e["node"]}
    names |= {f.node for f in FORMULAS.values() if f.node}
    return sorted(names)

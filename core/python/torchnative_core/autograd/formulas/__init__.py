"""Backward formulas by family. Each module registers its formulas on import (formula.py)."""

from __future__ import annotations

from . import elementwise, linalg, linalg_decomp, nn, reductions, scatter_reduce, shape, special  # noqa: F401


def node_names():
    """Every node class name upstream's derivatives.yaml defines (torch._C._functions lists them
    all, implemented or not), plus the hand-written ones."""
    from .. import record
    from ..formula import FORMULAS

    names = {e["node"] for e in record._table().values() if e["node"]}
    names |= {f.node for f in FORMULAS.values() if f.node}
    return sorted(names)

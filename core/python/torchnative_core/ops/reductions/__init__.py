"""Reductions, scans, order statistics, sorting and searching, histograms, statistics."""

from . import histogram, quantile, reduce, scan, select, sort, statistics  # noqa: F401  (registration by import)

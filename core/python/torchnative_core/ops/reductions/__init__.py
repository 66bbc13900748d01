"""Reductions, scans, finite differences (torch.gradient), order statistics, sorting and searching, histograms, statistics."""

from . import differences, histogram, quantile, reduce, scan, select, sort, statistics  # noqa: F401  (registration by import)

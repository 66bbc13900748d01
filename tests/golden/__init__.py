"""Golden harness: run small case programs on upstream torch 2.13.0 and on ours, compare.

See docs/golden.md.  Nothing in this package imports torch at import time: the pytest process
only orchestrates; each torch runs in its own subprocess (runner.py).
"""

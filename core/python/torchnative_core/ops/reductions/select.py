"""Order statistics: kthvalue, median and nanmedian with upstream's tie order (see `kthvalue_lines`).
"""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
import math
from .. import base as B
from .. import impl


D = B.door


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


def _register():
    from .. import base as B
    from .. import impl

    @impl("mode")
    def mode(self, dim=-1, keepdim=False):
        from torch.return_types import mode as t

        if not self._tn_sizes:
            B.wrap_dim(dim, 0)
            return t((B.door("clone", self, CONTIGUOUS_FORMAT), B.call("zeros", [], B.I64, device=B.device_of(self))))
        sizes = list(self._tn_sizes)
        d = B.wrap_dim(dim, len(sizes))
        if sizes[d] == 0:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        out = sizes[:d] + [1] * keepdim + sizes[d + 1:]
        dev = B.device_of(self)
        values, indices = B.empty(out, B.dtype_of(self), dev), B.empty(out, B.I64, dev)
        if B.numel(out):
            # the device's kernel: upstream's std::sort of (value, index) pairs (sort.rs)
            B.launch("mode", (self, d, keepdim), (values, indices))
        return t((values, indices))


_register()


def _nanmedian_line(line):
    """(value, index): the lower median of the non-NaN values, the first position holding it in
    a stable ascending order (NaN last), as upstream's nanmedian returns for lines with numbers;
    an all-NaN line gives NaN (upstream's index there follows its nth_element; ours is 0)."""

    order = sorted(range(len(line)), key=lambda j: (line[j] != line[j], 0.0 if line[j] != line[j] else line[j]))
    m = sum(1 for v in line if v == v)
    j = order[(m - 1) // 2] if m else 0
    return (line[j] if m else math.nan), j


def _register_nanmedian():
    from .. import base as B
    from .. import impl

    @impl("nanmedian")
    def nanmedian(self):
        import torch

        if not self.is_floating_point():
            return B.door("median", self)
        flat = self.detach().reshape(-1).tolist()
        if not flat:
            return torch.full((), float("nan"), dtype=self.dtype)
        return torch.tensor(_nanmedian_line(flat)[0], dtype=self.dtype)

    @impl("nanmedian.dim")
    def nanmedian_dim(self, dim, keepdim=False):
        import torch
        from torch.return_types import nanmedian as t

        if not self.is_floating_point():
            return t(tuple(B.door("median.dim", self, dim, keepdim)))
        if not self._tn_sizes:
            B.wrap_dim(dim, 0)
            return t((B.door("clone", self, CONTIGUOUS_FORMAT), B.call("zeros", [], B.I64, device=B.device_of(self))))
        d = B.wrap_dim(dim, len(self._tn_sizes))
        moved = self.movedim(d, -1)
        n, rest = moved.shape[-1], list(moved.shape[:-1])
        if n == 0:
            raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
        native = _line_kernel("nanmedian.dim", self, d, keepdim, t)
        if native is not None:
            return native
        lines = moved.reshape(-1, n).tolist() if moved.numel() else []
        vi = [_nanmedian_line(line) for line in lines]
        v = torch.tensor([a for a, _ in vi], dtype=self.dtype).reshape(rest) if lines else torch.empty(rest, dtype=self.dtype)
        i = torch.tensor([b for _, b in vi], dtype=torch.int64).reshape(rest) if lines else torch.empty(rest, dtype=torch.int64)
        if keepdim:
            v, i = v.unsqueeze(d), i.unsqueeze(d)
        return t((v, i))


_register_nanmedian()


def _no_bool_median(self, kernel):
    if B.dtype_of(self) is B.BOOL and B.numel(self._tn_sizes):
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _line_kernel(op, self, d, keepdim, result_type, *before_dim):
    """kthvalue / median.dim / nanmedian.dim through the device's kernel (upstream's quickselect
    or nth_element per line, sort.rs): `(self, *before_dim, d, keepdim)`; None where the device
    lacks it."""
    dev = B.device_of(self)
    if not B.C._tn_has_kernel(op, dev.type):
        return None
    out = list(self._tn_sizes)
    out[d:d + 1] = [1] if keepdim else []
    values, indices = B.empty(out, B.dtype_of(self), dev), B.empty(out, B.I64, dev)
    if B.numel(out):
        B.launch(op, (self, *before_dim, d, keepdim), (values, indices))
    return result_type((values, indices))


@impl("median")
def median(self):
    _no_bool_median(self, "median_cpu")
    flat = D("reshape", self, [-1])
    n = B.numel(flat._tn_sizes)
    s = D("sort", flat, 0, False)[0]
    has_nan = bool(D("any", D("isnan", flat)).item()) if B.dtype_of(self).is_floating_point else False
    return D("select.int", s, 0, n - 1 if has_nan else (n - 1) // 2)


# --- order statistics via sort ---------------------------------------------------------------

@impl("median.dim")
def median_dim(self, dim, keepdim=False):
    from torch.return_types import median as t

    _no_bool_median(self, "median_out")
    if not self._tn_sizes:  # a 0-dim tensor is its own median, at index 0
        B.wrap_dim(dim, 0)
        return t((D("clone", self, CONTIGUOUS_FORMAT), B.call("zeros", [], B.I64, device=B.device_of(self))))
    d = B.wrap_dim(dim, len(self._tn_sizes))
    n = self._tn_sizes[d]
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    native = _line_kernel("median.dim", self, d, keepdim, t)
    if native is not None:
        return native
    values, idx = D("sort.stable", self, True, d, False)
    k = (n - 1) // 2
    v, i = D("select.int", values, d, k), D("select.int", idx, d, k)
    if keepdim:
        v, i = D("unsqueeze", v, d), D("unsqueeze", i, d)
    return t((v, i))


@impl("kthvalue")
def kthvalue(self, k, dim=-1, keepdim=False):
    from torch.return_types import kthvalue as t

    d = B.wrap_dim(dim, len(self._tn_sizes))
    if k < 1 or k > (self._tn_sizes[d] if self._tn_sizes else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if not self._tn_sizes:  # a 0-dim tensor is its own k=1 value, at index 0
        return t((D("clone", self, CONTIGUOUS_FORMAT), B.call("zeros", [], B.I64, device=B.device_of(self))))
    native = _line_kernel("kthvalue", self, d, keepdim, t, k)
    if native is not None:
        return native
    v, i = kthvalue_lines(self, k, d)
    if keepdim:
        v, i = D("unsqueeze", v, d), D("unsqueeze", i, d)
    return t((v, i))

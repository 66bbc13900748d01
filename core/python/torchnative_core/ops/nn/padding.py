"""Padding: constant_pad_nd, the reflect/replicate/circular modes, and `pad`'s dispatch by mode.
"""

from __future__ import annotations

from .. import base as B
from .. import impl


D = B.door


@impl("constant_pad_nd")
def constant_pad_nd(self, pad, value=0):
    sizes = list(self._tn_sizes)
    nd = len(sizes)
    if len(pad) % 2 or len(pad) // 2 > nd:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    new = list(sizes)
    src = self
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            src = D("slice.Tensor", src, d, -lo, None, 1)
        if hi < 0:
            src = D("slice.Tensor", src, d, 0, src._tn_sizes[d] + hi, 1)
        new[d] = sizes[d] + lo + hi
    out = B.call("full", new, value, B.dtype_of(self), device=B.device_of(self))
    dst = out
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo = max(pad[2 * i], 0)
        dst = D("slice.Tensor", dst, d, lo, lo + src._tn_sizes[d], 1)
    D("copy_", dst, src, False)
    return out


@impl("pad")
def pad(self, pad, mode="constant", value=None):
    if mode != "constant":
        return pad_with_mode(self, list(pad), mode, value)
    return D("constant_pad_nd", self, list(pad), 0 if value is None else value)


# --- padding modes -----------------------------------------------------------------------------

def _pad_index(n, lo, hi, mode):
    import torch

    i = torch.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension of input {n}")
        i = i.abs()
        return torch.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return i.clamp(0, n - 1)
    return i.remainder(n)  # circular


def _pad_mode(x, pad, mode):
    k = len(pad) // 2
    for j in range(k):
        d = x.dim() - 1 - j
        lo, hi = pad[2 * j], pad[2 * j + 1]
        if lo == 0 and hi == 0:
            continue
        x = x.index_select(d, _pad_index(x.shape[d], lo, hi, mode))
    return x


def _check_pad(x, pad, nd, mode):
    """padding::check_valid_input and the reflection/replication meta functions' checks."""
    if len(pad) != 2 * nd:
        raise RuntimeError(f"padding size is expected to be {2 * nd}, but got: {len(pad)}")
    sizes = list(x.shape)
    batch = len(sizes) == nd + 2
    if len(sizes) not in (nd + 1, nd + 2) or any(s == 0 for s in sizes[1 if batch else 0:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {sizes}")
    spatial = sizes[-nd:]
    if mode == "reflect":
        for j in range(nd):  # pad (left, right) of the last dimension first
            lo, hi = pad[2 * j], pad[2 * j + 1]
            d = len(sizes) - 1 - j
            if lo >= sizes[d] or hi >= sizes[d]:
                raise RuntimeError(f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input {sizes}")
    outs = [spatial[nd - 1 - j] + pad[2 * j] + pad[2 * j + 1] for j in range(nd)][::-1]
    if any(o < 1 for o in outs):
        names = "DHW"[3 - nd:]
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        calc = " ".join(f"{n}: {o}" for n, o in zip(names, outs))
        raise RuntimeError(f"input ({given}) is too small. Calculated output {calc}")


def _pad_op(mode, nd):
    def run(self, padding):
        _check_pad(self, list(padding), nd, mode)
        return _pad_mode(self, list(padding), mode)

    return run


for _mode, _prefix in (("reflect", "reflection_pad"), ("replicate", "replication_pad")):
    for _nd in (1, 2, 3):
        impl(f"{_prefix}{_nd}d")(_pad_op(_mode, _nd))


@impl("_pad_circular")
def pad_circular(self, pad):
    """upstream's _pad_circular_symint: negative pads crop first, and the wrapped borders are taken
    from the cropped tensor (not from the input)."""
    import torch

    pad = list(pad)
    k = len(pad) // 2
    if self.dim() - k not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(self.dim() - 1) * 2} or {(self.dim() - 2) * 2} respectively but "
                           f"got {len(pad)}")
    for j in range(k):
        n = self.shape[self.dim() - 1 - j]
        lo, hi = pad[2 * j], pad[2 * j + 1]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    x = self
    for j in range(k):
        d = x.dim() - 1 - j
        lo, hi = pad[2 * j], pad[2 * j + 1]
        n = x.shape[d]
        first, m = max(-lo, 0), n + min(lo, 0) + min(hi, 0)
        if m <= 0:
            x = x.narrow(d, 0, 0)
            continue
        if lo == 0 and hi == 0:
            continue
        x = x.index_select(d, torch.arange(-max(lo, 0), m + max(hi, 0)).remainder(m) + first)
    return x


def pad_with_mode(self, pad, mode, value=None):
    """aten::pad's non-constant modes (PadNd.cpp _pad_enum), called by composites.pad: upstream's
    checks, then the operator for the padded rank (reflection_pad*, replication_pad*,
    _pad_circular)."""
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad, nd = list(pad), self.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {nd}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if k in (1, 2, 3) and nd in (k + 1, k + 2):
        if mode == "circular":
            return B.door("_pad_circular", self, pad)
        return B.door(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{k}d", self, pad)
    raise NotImplementedError(
        f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


@impl("_pad_enum")
def _pad_enum(self, pad, mode, value=None):
    import torch

    if mode == 0:
        return torch.constant_pad_nd(self, pad, 0 if value is None else value)
    return pad_with_mode(self, pad, {1: "reflect", 2: "replicate", 3: "circular"}[mode], value)

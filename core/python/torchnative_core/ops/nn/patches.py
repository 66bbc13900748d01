"""Rearranging images into patches and back: pixel_shuffle/unshuffle, channel_shuffle,
Tensor.unfold, im2col and col2im.
"""

from __future__ import annotations

from .. import base as B
from .. import impl


# --- patches -----------------------------------------------------------------------------------

@impl("pixel_shuffle")
def pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    if self.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if self.shape[-3] % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={self.shape[-3]} is not divisible by {r * r}")
    *lead, c, h, w = self.shape
    oc = c // (r * r)
    x = self.reshape(*lead, oc, r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, oc, h * r, w * r)


@impl("pixel_unshuffle")
def pixel_unshuffle(self, downscale_factor):
    r = downscale_factor
    if self.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, d in (("height", -2), ("width", -1)):
        if self.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={self.shape[d]} is not divisible by {r}")
    *lead, c, h, w = self.shape
    x = self.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


@impl("unfold")
def unfold(self, dimension, size, step):
    nd = self.dim()
    B.wrap_dim(dimension, max(nd, 1))
    d = dimension % nd if nd else 0
    n = self.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    sizes = list(self.shape)
    strides = list(self.stride())
    if nd:
        sizes[d] = count
        strides[d] = strides[d] * step
    return self.as_strided(sizes + [size], strides + [self.stride(d) if nd else 1], self.storage_offset())


def _pair(v):
    v = list(v)
    return v * 2 if len(v) == 1 else v


def _grid(kernel_size, dilation, stride, h, w):
    """Output positions of a sliding window over an (h, w) plane (padding included): the row and
    column each kernel element reads, shaped (kh, oh) and (kw, ow)."""
    import torch

    kh, kw = _pair(kernel_size)
    dh, dw = _pair(dilation)
    sh, sw = _pair(stride)
    oh = (h - (dh * (kh - 1) + 1)) // sh + 1
    ow = (w - (dw * (kw - 1) + 1)) // sw + 1
    rows = (torch.arange(kh) * dh).unsqueeze(1) + (torch.arange(oh) * sh).unsqueeze(0)
    cols = (torch.arange(kw) * dw).unsqueeze(1) + (torch.arange(ow) * sw).unsqueeze(0)
    return kh, kw, oh, ow, rows, cols


@impl("im2col")
def im2col(self, kernel_size, dilation, padding, stride):
    import torch

    ph, pw = _pair(padding)
    batched = self.dim() == 4
    x = self if batched else self.unsqueeze(0)
    x = torch.constant_pad_nd(x, [pw, pw, ph, ph], 0)
    n, c, h, w = x.shape
    kh, kw, oh, ow, rows, cols = _grid(kernel_size, dilation, stride, h, w)
    x = x.index_select(2, rows.flatten()).reshape(n, c, kh, oh, w)
    x = x.index_select(4, cols.flatten()).reshape(n, c, kh, oh, kw, ow)
    out = x.permute(0, 1, 2, 4, 3, 5).reshape(n, c * kh * kw, oh * ow)
    return out if batched else out.squeeze(0)


@impl("col2im")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    import torch

    oh_, ow_ = _pair(output_size)
    ph, pw = _pair(padding)
    batched = self.dim() == 3
    x = self if batched else self.unsqueeze(0)
    H, W = oh_ + 2 * ph, ow_ + 2 * pw
    kh, kw, oh, ow, rows, cols = _grid(kernel_size, dilation, stride, H, W)
    n, ckk, _ = x.shape
    c = ckk // (kh * kw)
    pos = (rows.reshape(kh, 1, oh, 1) * W + cols.reshape(1, kw, 1, ow)).flatten()
    vals = x.reshape(n, c, kh * kw * oh * ow)
    out = torch.zeros(n, c, H * W, dtype=self.dtype).index_add(2, pos, vals).reshape(n, c, H, W)
    out = out[:, :, ph:ph + oh_, pw:pw + ow_]
    return out if batched else out.squeeze(0)


@impl("channel_shuffle", "native_channel_shuffle")
def channel_shuffle(self, groups):
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if self.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes "
                           f"{list(self.shape)}")
    c = self.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    b, rest = self.shape[0], list(self.shape[2:])
    out = self.reshape([b, groups, c // groups] + rest).transpose(1, 2).contiguous()
    return out.reshape([b, c] + rest)

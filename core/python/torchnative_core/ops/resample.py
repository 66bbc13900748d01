"""Resampling, padding modes and patch operators for vision and audio models (issue 5 item 7):
upsample (nearest, nearest-exact, linear/bilinear/trilinear, bicubic), adaptive pooling of any
size, avg_pool1d, reflection/replication/circular padding, pixel_shuffle, Tensor.unfold and
im2col/col2im. Compositions of other operators; source indices and weights are computed as
upstream's CPU kernels compute them (aten/src/ATen/native/UpSample.h: in float for float32
inputs, in the input's type otherwise), so the same source elements and weights are used."""

from __future__ import annotations

import math

from . import base as B
from . import impl


def _opmath(x):
    import torch

    return torch.float64 if x.dtype == torch.float64 else torch.float32


_MISMATCH = "Expected static_cast<int64_t>({}->size()) == spatial_dimensions to be true, but got false.  " \
    "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"


def _out_sizes(x, nd, output_size, scale_factors):
    """upstream's compute_output_size for the .vec overloads (UpSample.cpp), then the common
    check of the fixed-size overload they call."""
    spatial = x.dim() - 2
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        if len(output_size) != spatial:
            raise RuntimeError(_MISMATCH.format("output_size"))
        sizes, sf = list(output_size), [None] * nd
    elif scale_factors is not None:
        if len(scale_factors) != spatial:
            raise RuntimeError(_MISMATCH.format("scale_factors"))
        sf = list(scale_factors)
        sizes = [int(s * f) for s, f in zip(x.shape[2:], sf)]  # static_cast<int64_t>: truncation
    else:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    _common_check(x, nd, sizes)
    return sizes, sf


def _common_check(x, nd, output_size):
    """upsample_{1,2,3}d_common_check (UpSample.h): the sizes' lengths, then positive sizes."""
    if len(output_size) != nd:
        raise RuntimeError(f"It is expected output_size equals to {nd}, but got size {len(output_size)}")
    if x.dim() != nd + 2:
        raise RuntimeError(f"It is expected input_size equals to {nd + 2}, but got size {x.dim()}")
    ins, outs = list(x.shape[2:]), list(output_size)
    if min(ins + outs) <= 0:
        names = ("W",) if nd == 1 else ("H", "W") if nd == 2 else ("D", "H", "W")
        i = ", ".join(f"{n}: {v}" for n, v in zip(names, ins))
        o = ", ".join(f"{n}: {v}" for n, v in zip(names, outs))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({i}) "
                           f"{'and ' if nd == 1 else ''}output ({o})")
    if x.numel() == 0 and math.prod(x.shape[1:]) == 0:  # the kernels' meta step: only the batch may be empty
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with sizes {list(x.shape)}")


def _scale(in_size, out_size, scale, dtype, align_corners=False):
    """compute_scales_value / area_pixel_compute_scale, rounded to `dtype` as upstream's scalar_t."""
    import torch

    if align_corners:
        return torch.tensor(in_size - 1, dtype=dtype) / (out_size - 1) if out_size > 1 else torch.tensor(0.0, dtype=dtype)
    if scale is not None and scale > 0:
        return torch.tensor(1.0 / scale, dtype=dtype)
    return torch.tensor(in_size, dtype=dtype) / out_size


def _nearest_index(in_size, out_size, scale, exact):
    import torch

    dst = torch.arange(out_size)
    if not exact:
        if out_size == in_size:
            return dst
        if out_size == 2 * in_size:
            return dst // 2
    s = _scale(in_size, out_size, scale, torch.float32)
    pos = dst.to(torch.float32) + 0.5 if exact else dst.to(torch.float32)
    return torch.clamp((pos * s).floor().to(torch.int64), max=in_size - 1)


def _nearest(x, nd, output_size, scales, exact):
    out_sizes = list(output_size)
    for i in range(nd):
        d = x.dim() - nd + i
        idx = _nearest_index(x.shape[d], out_sizes[i], scales[i] if scales else None, exact)
        x = x.index_select(d, idx)
    return x


def _nearest_vec(nd, exact):
    def f(input, output_size, scale_factors):
        sizes, sf = _out_sizes(input, nd, output_size, scale_factors)
        return _nearest(input, nd, sizes, sf, exact)

    return f


def _nearest_fixed(nd, exact):
    def f(self, output_size, *scales):
        _common_check(self, nd, output_size)
        return _nearest(self, nd, output_size, list(scales) + [None] * (nd - len(scales)), exact)

    return f


for _nd, _n in ((1, "1d"), (2, "2d"), (3, "3d")):
    impl(f"upsample_nearest{_n}.vec")(_nearest_vec(_nd, False))
    impl(f"_upsample_nearest_exact{_n}.vec")(_nearest_vec(_nd, True))
    impl(f"upsample_nearest{_n}")(_nearest_fixed(_nd, False))
    impl(f"_upsample_nearest_exact{_n}")(_nearest_fixed(_nd, True))


def _stored(w, wdtype):
    """A weight as upstream's kernel stores it: its scalar_t, read back into opmath."""
    return w if wdtype is None or w.dtype == wdtype else w.to(wdtype).to(w.dtype)


def _linear_weights(in_size, out_size, scale, align_corners, dtype, wdtype=None):
    """compute_source_index_and_lambda: (index0, index1, lambda0, lambda1) per output index;
    `wdtype`: the reduced type the lambdas are stored in (scalar_t), lambda0 = 1 - lambda1 in it."""
    import torch

    dst = torch.arange(out_size)
    if out_size == in_size and not align_corners:
        return dst, dst, torch.ones(out_size, dtype=dtype), torch.zeros(out_size, dtype=dtype)
    s = _scale(in_size, out_size, scale, dtype, align_corners)
    d = dst.to(dtype)
    real = s * d if align_corners else torch.clamp(s * (d + 0.5) - 0.5, min=0)
    i0 = torch.clamp(real.floor().to(torch.int64), max=in_size - 1)
    lam1 = _stored(torch.clamp(real - i0.to(dtype), 0, 1), wdtype)
    i1 = i0 + (i0 < in_size - 1).to(torch.int64)
    return i0, i1, _stored(1 - lam1, wdtype), lam1


def _reduced_weights(x, nd, output_size):
    """bfloat16/float16: the type upstream stores interpolation weights in. The generic kernel
    (upsample_generic_Nd_kernel_impl, HelperInterpLinear/HelperInterpCubic) keeps them in
    scalar_t and interpolates in float; 2-d bilinear takes the channels-last kernel instead, with
    float weights, when _use_vectorized_kernel_cond_2d holds (UpSampleKernel.cpp): channels-last
    with more than 3 channels, output height + width <= 128, or one thread and 3 channels; 3-d
    likewise for channels-last-3d with more than 3 channels. Measured against upstream on the
    OpInfo samples and larger random inputs (linear, bicubic, trilinear bit for bit)."""
    import torch

    if x.dtype not in (torch.bfloat16, torch.float16) or x.dim() < 3:
        return None
    c = x.shape[1]
    if nd == 2 and ((x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and c > 3)
                    or sum(output_size) <= 128 or (torch.get_num_threads() == 1 and c == 3)):
        return None
    if nd == 3 and x.dim() == 5 and x.is_contiguous(memory_format=torch.channels_last_3d) and c > 3:
        return None
    return x.dtype


def _linear(x, nd, output_size, align_corners, scales):
    dtype = _opmath(x)
    wdtype = _reduced_weights(x, nd, output_size)
    src = x.to(dtype) if x.dtype != dtype else x
    # the outermost interpolated dimension is combined last (upstream's Interpolate recursion)
    for i in reversed(range(nd)):
        d = src.dim() - nd + i
        i0, i1, l0, l1 = _linear_weights(src.shape[d], output_size[i], scales[i] if scales else None,
                                         align_corners, dtype, wdtype)
        shape = [1] * src.dim()
        shape[d] = -1
        src = src.index_select(d, i0) * l0.reshape(shape) + src.index_select(d, i1) * l1.reshape(shape)
    return src.to(x.dtype)


def _linear_vec(nd):
    def f(input, output_size, align_corners, scale_factors):
        sizes, sf = _out_sizes(input, nd, output_size, scale_factors)
        return _linear(input, nd, sizes, align_corners, sf)

    return f


def _linear_fixed(nd):
    def f(self, output_size, align_corners, *scales):
        _common_check(self, nd, output_size)
        return _linear(self, nd, output_size, align_corners, list(scales) + [None] * (nd - len(scales)))

    return f


for _nd, _name in ((1, "upsample_linear1d"), (2, "upsample_bilinear2d"), (3, "upsample_trilinear3d")):
    impl(f"{_name}.vec")(_linear_vec(_nd))
    impl(_name)(_linear_fixed(_nd))


def _cubic_coeffs(t, A=-0.75):
    """upstream's get_cubic_upsample_coefficients (cubic convolution, A = -0.75)."""
    x1 = t
    c0 = ((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A
    c1 = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1
    x2 = 1 - t
    c2 = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1
    c3 = ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A
    return c0, c1, c2, c3


def _bicubic(x, output_size, align_corners, scales):
    import torch

    dtype = _opmath(x)
    wdtype = _reduced_weights(x, 1, output_size)  # the generic kernel, whatever the layout
    src = x.to(dtype) if x.dtype != dtype else x
    for i in reversed(range(2)):
        d = src.dim() - 2 + i
        in_size, out_size = src.shape[d], output_size[i]
        s = _scale(in_size, out_size, scales[i] if scales else None, dtype, align_corners)
        dst = torch.arange(out_size).to(dtype)
        real = s * dst if align_corners else s * (dst + 0.5) - 0.5
        base = real.floor()
        t = real - base
        base = base.to(torch.int64)
        shape = [1] * src.dim()
        shape[d] = -1
        out = None
        for k, c in enumerate(_cubic_coeffs(t)):
            idx = torch.clamp(base - 1 + k, 0, in_size - 1)
            term = src.index_select(d, idx) * _stored(c, wdtype).reshape(shape)
            out = term if out is None else out + term
        src = out
    return src.to(x.dtype)


@impl("upsample_bicubic2d.vec")
def upsample_bicubic2d_vec(input, output_size, align_corners, scale_factors):
    sizes, sf = _out_sizes(input, 2, output_size, scale_factors)
    return _bicubic(input, sizes, align_corners, sf)


@impl("upsample_bicubic2d")
def upsample_bicubic2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    _common_check(self, 2, output_size)
    return _bicubic(self, list(output_size), align_corners, [scales_h, scales_w])


# --- adaptive pooling and 1-d average pooling -------------------------------------------------

def _windows(in_size, out_size):
    """start = floor(i * in / out), end = ceil((i + 1) * in / out) (AdaptivePooling.h)."""
    return [((i * in_size) // out_size, -(-((i + 1) * in_size) // out_size)) for i in range(out_size)]


def _adaptive(x, output_size, reduce):
    import torch

    nd = len(output_size)
    _output_fits(x, output_size)
    for i in range(nd):
        d = x.dim() - nd + i
        out = output_size[i] if output_size[i] is not None else x.shape[d]
        wins = _windows(x.shape[d], out)
        if all(e - s == wins[0][1] - wins[0][0] for s, e in wins) and all(s == k * wins[0][1] for k, (s, _) in enumerate(wins)):
            k = wins[0][1]
            x = reduce(x.unflatten(d, (out, k)), d + 1)
        else:
            x = torch.stack([reduce(x.narrow(d, s, e - s), d) for s, e in wins], d)
    return x


@impl("adaptive_avg_pool1d")
def adaptive_avg_pool1d(self, output_size):
    return _adaptive(self, list(output_size), lambda t, d: t.mean(d))


@impl("adaptive_avg_pool3d", "_adaptive_avg_pool3d")
def adaptive_avg_pool3d(self, output_size):
    return _adaptive(self, list(output_size), lambda t, d: t.mean(d))


def adaptive_avg_pool2d_any(self, output_size):
    """Any output size (the divisible case is an average pool, as in composites.py)."""
    return _adaptive(self, list(output_size), lambda t, d: t.mean(d))


def _output_fits(x, output_size):
    """The result's allocation first, as upstream's kernels allocate it before looping: a
    negative, overflowing or unallocatable output size raises upstream's RuntimeError here
    instead of building one window per output element."""
    nd = len(output_size)
    if x.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(x.shape)}")
    sizes = [o if o is not None else x.shape[x.dim() - nd + i] for i, o in enumerate(output_size)]
    B.empty(list(x.shape[: x.dim() - nd]) + sizes, B.dtype_of(x))


def _adaptive_max(self, output_size):
    import torch

    _output_fits(self, output_size)
    nd = len(output_size)
    lead = list(self.shape[:-nd])
    out_sizes = [o if o is not None else self.shape[-nd + i] for i, o in enumerate(output_size)]
    in_sizes = list(self.shape[-nd:])
    wins = [_windows(n, o) for n, o in zip(in_sizes, out_sizes)]
    flat = self.flatten(-nd) if nd > 1 else self
    vals, idxs = [], []
    import itertools

    for cell in itertools.product(*wins):
        pos = torch.tensor([0])
        for (s, e), n in zip(cell, in_sizes):
            pos = (pos.unsqueeze(-1) * n + torch.arange(s, e)).flatten()
        sel = flat.index_select(-1, pos)
        v, j = sel.max(-1)
        vals.append(v)
        idxs.append(pos[j])
    v = torch.stack(vals, -1).reshape(lead + out_sizes)
    i = torch.stack(idxs, -1).reshape(lead + out_sizes)
    return v, i


@impl("adaptive_max_pool1d")
def adaptive_max_pool1d(self, output_size):
    return _adaptive_max(self, list(output_size))


@impl("adaptive_max_pool2d")
def adaptive_max_pool2d(self, output_size):
    return _adaptive_max(self, list(output_size))


@impl("avg_pool1d")
def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    import torch

    x = self.unsqueeze(-2)
    out = torch.nn.functional.avg_pool2d(x, [1, kernel_size[0]], [1, (list(stride or ()) or list(kernel_size))[0]],
                                         [0, padding[0]], ceil_mode, count_include_pad)
    return out.squeeze(-2)


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


for _mode, _prefix in (("reflect", "reflection_pad"), ("replicate", "replication_pad")):
    for _nd in (1, 2, 3):
        impl(f"{_prefix}{_nd}d")((lambda m: lambda self, padding: _pad_mode(self, list(padding), m))(_mode))


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

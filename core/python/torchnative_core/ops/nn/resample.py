"""Resampling: upsample (nearest, nearest-exact, linear/bilinear/trilinear, bicubic) with
upstream's source-index and weight computations, and grid sampling (2-d and 3-d).
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl


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
    B.floating_kernel_only(x, "compute_indices_weights_nearest", also=("uint8",))
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
    B.floating_kernel_only(x, "compute_indices_weights_linear")
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

    B.floating_kernel_only(x, "compute_indices_weights_cubic")

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


# --- grid_sample (GridSampler.cpp, 2-d: bilinear / nearest, zeros / border / reflection) --------

def _unnormalize(coord, size, align_corners):
    return ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord, lo2, hi2):
    """reflect_coordinates: twice-scaled bounds (as upstream, to handle half-integers)."""
    import torch

    if lo2 == hi2:
        return torch.zeros_like(coord)
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    c = (coord - lo).abs()
    extra = torch.fmod(c, span)
    flips = (c / span).floor()
    return torch.where(flips.remainder(2) == 0, extra + lo, span - extra + lo)


def _source(coord, size, padding, align_corners):
    return _padded(_unnormalize(coord, size, align_corners), size, padding, align_corners)


def _padded(coord, size, padding, align_corners):
    """compute_coordinates: a pixel coordinate under the padding mode (zeros: as it is)."""
    if padding == 1:  # border
        coord = coord.clamp(0, size - 1)
    elif padding == 2:  # reflection
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = coord.clamp(0, size - 1)
    return coord


@impl("grid_sampler_2d")
def grid_sampler_2d(input, grid, interpolation_mode=0, padding_mode=0, align_corners=False):
    import torch

    _grid_checks(input, grid, interpolation_mode, 2)
    n, c, h, w = input.shape
    flat = input.reshape(n, c, h * w)
    if interpolation_mode not in (0, 1, 2):
        return input.new_zeros([n, c] + list(grid.shape[1:3]))

    def tap(yy, xx):
        valid = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        idx = yy.clamp(0, h - 1).to(torch.int64) * w + xx.clamp(0, w - 1).to(torch.int64)
        idx = idx.reshape(n, 1, -1).expand(n, c, -1)
        v = flat.gather(2, idx).reshape(n, c, *xx.shape[1:])
        return v * valid.unsqueeze(1).to(v.dtype)

    if interpolation_mode == 2:
        return _bicubic_sample(grid, h, w, padding_mode, align_corners, tap)
    x = _source(grid[..., 0], w, padding_mode, align_corners)
    y = _source(grid[..., 1], h, padding_mode, align_corners)
    if interpolation_mode == 1:  # nearest: round half to even, as nearbyint
        return tap(y.round(), x.round())
    x0, y0 = x.floor(), y.floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = x - x0, y - y0
    wx0, wy0 = x1 - x, y1 - y
    out = tap(y0, x0) * (wx0 * wy0).unsqueeze(1) + tap(y0, x1) * (wx1 * wy0).unsqueeze(1)
    return out + tap(y1, x0) * (wx0 * wy1).unsqueeze(1) + tap(y1, x1) * (wx1 * wy1).unsqueeze(1)


def _bicubic_sample(grid, h, w, padding_mode, align_corners, tap):
    """Bicubic sampling (GridSamplerKernel.cpp): cubic convolution (A = -0.75) over the 4 x 4
    pixels around the unnormalised point, each tap's coordinate put through the padding mode on
    its own; rows interpolated along x first, then the four rows along y."""
    x = _unnormalize(grid[..., 0], w, align_corners)
    y = _unnormalize(grid[..., 1], h, align_corners)
    ix, iy = x.floor(), y.floor()
    cx, cy = _cubic_coeffs(x - ix), _cubic_coeffs(y - iy)
    out = None
    for i in range(4):
        yy = _padded(iy + (i - 1), h, padding_mode, align_corners)
        row = None
        for j in range(4):
            term = tap(yy, _padded(ix + (j - 1), w, padding_mode, align_corners)) * cx[j].unsqueeze(1)
            row = term if row is None else row + term
        term = row * cy[i].unsqueeze(1)
        out = term if out is None else out + term
    return out


def _grid_checks(input, grid, interpolation_mode, nd=3):
    """upstream's check_grid_sampler_common, then the 2-d or 3-d sampler's own checks."""
    si, sg = list(input.shape), list(grid.shape)
    if not si or not sg:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if si[0] != sg[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {si} and grid with sizes {sg}")
    if sg[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {sg}")
    for i in range(2, input.dim()):
        if si[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {si} with dimension {i} being empty")
    if input.dim() != nd + 2 or grid.dim() != nd + 2:
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, but got "
                           f"input with sizes {si} and grid with sizes {sg}")
    if nd == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        from .. import base as B

        raise RuntimeError(f"expected scalar type {B.scalar_type_name(B.dtype_of(input))} but found "
                           f"{B.scalar_type_name(B.dtype_of(grid))}")
    if not input.is_floating_point():
        from .. import base as B
        from ..elementwise.arithmetic import _type_name

        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(B.dtype_of(input))}\'')


@impl("grid_sampler_3d")
def grid_sampler_3d(input, grid, interpolation_mode=0, padding_mode=0, align_corners=False):
    """GridSampler.cpp's 3-d sampler: trilinear (the eight corners added in upstream's order,
    top-north-west first) or nearest (round half to even); out-of-volume corners add nothing."""
    import torch

    _grid_checks(input, grid, interpolation_mode)
    n, c, d, h, w = input.shape
    x = _source(grid[..., 0], w, padding_mode, align_corners)
    y = _source(grid[..., 1], h, padding_mode, align_corners)
    z = _source(grid[..., 2], d, padding_mode, align_corners)
    flat = input.reshape(n, c, d * h * w)
    out_sp = list(grid.shape[1:4])
    if interpolation_mode not in (0, 1):
        return input.new_zeros([n, c] + out_sp)

    def tap(zz, yy, xx):
        valid = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1) & (zz >= 0) & (zz <= d - 1)
        # the flat index in integers: a reduced-precision coordinate cannot hold it
        iz, iy, ix = (t.clamp(0, n - 1).to(torch.int64) for t, n in ((zz, d), (yy, h), (xx, w)))
        idx = (iz * h + iy) * w + ix
        v = flat.gather(2, idx.reshape(n, 1, -1).expand(n, c, -1)).reshape([n, c] + out_sp)
        return v * valid.unsqueeze(1).to(v.dtype)

    if interpolation_mode == 1:
        return tap(z.round(), y.round(), x.round())
    x0, y0, z0 = x.floor(), y.floor(), z.floor()
    x1, y1, z1 = x0 + 1, y0 + 1, z0 + 1
    out = None
    for zz, wz in ((z0, z1 - z), (z1, z - z0)):
        for yy, wy in ((y0, y1 - y), (y1, y - y0)):
            for xx, wx in ((x0, x1 - x), (x1, x - x0)):
                term = tap(zz, yy, xx) * (wx * wy * wz).unsqueeze(1)
                out = term if out is None else out + term
    return out


@impl("grid_sampler")
def grid_sampler(input, grid, interpolation_mode=0, padding_mode=0, align_corners=False):
    op = grid_sampler_2d if input.dim() == 4 else grid_sampler_3d
    return op(input, grid, interpolation_mode, padding_mode, align_corners)


def _sampler_backward(forward, grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    """The sampler's gradients through its own composition (the same arithmetic upstream's
    backward kernel differentiates)."""
    import torch

    with torch.enable_grad():
        xi = input.detach().requires_grad_(bool(output_mask[0]))
        xg = grid.detach().requires_grad_(bool(output_mask[1]))
        out = forward(xi, xg, interpolation_mode, padding_mode, align_corners)
        wrt = [t for t, m in ((xi, output_mask[0]), (xg, output_mask[1])) if m]
        grads = torch.autograd.grad(out, wrt, grad_output, allow_unused=True) if wrt else []
    it = iter(grads)
    gi = next(it) if output_mask[0] else None
    gg = next(it) if output_mask[1] else None
    if output_mask[0] and gi is None:
        gi = torch.zeros_like(input)
    if output_mask[1] and gg is None:
        gg = torch.zeros_like(grid)
    return gi, gg


@impl("grid_sampler_3d_backward")
def grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    return _sampler_backward(grid_sampler_3d, grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask)


# --- antialiased bilinear / bicubic (separable, as PIL: the filter widened by the scale) --------

def _aa_filter(x, cubic):
    """upstream's aa_filter: the triangle, or Keys' cubic with a = -0.5 (not upsample's -0.75)."""
    import torch

    x = x.abs()
    if not cubic:
        return torch.where(x < 1, 1 - x, 0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return torch.where(x < 1, near, torch.where(x < 2, far, 0))


def _aa_weights(in_size, out_size, scale, align_corners, dtype, cubic):
    """Per output index: the first input index, and the normalised filter weights over a window
    of `support` either side of the centre scale * (i + 0.5) (widened by the scale when
    downsampling, so every input under the output pixel contributes)."""
    import torch

    s = float(_scale(in_size, out_size, scale, dtype, align_corners))
    support = (2.0 if cubic else 1.0) * (s if s >= 1.0 else 1.0)
    invscale = 1.0 / s if s >= 1.0 else 1.0
    centers = torch.tensor(s, dtype=dtype) * (torch.arange(out_size, dtype=dtype) + 0.5)
    xmin = (centers - support + 0.5).to(torch.int64).clamp_min(0)
    xmax = (centers + support + 0.5).to(torch.int64).clamp_max(in_size)
    size = xmax - xmin
    width = int(size.max()) if out_size else 0
    j = torch.arange(width)
    w = _aa_filter(((j + xmin.unsqueeze(1)).to(dtype) - centers.unsqueeze(1) + 0.5) * invscale, cubic)
    w = torch.where(j < size.unsqueeze(1), w, 0).to(dtype)
    total = w[:, :1]
    for k in range(1, width):  # summed in order, in the weights' type, as upstream
        total = total + w[:, k:k + 1]
    w = torch.where(total != 0, w / torch.where(total != 0, total, 1), w)
    idx = (xmin.unsqueeze(1) + j).clamp_max(in_size - 1)
    return idx, w


def _aa(x, output_size, align_corners, scales, cubic, name):
    import torch

    if x.dtype == torch.uint8 or not x.is_floating_point():
        raise NotImplementedError(f"aten.{name} has no kernel for device 'cpu' for {x.dtype}")
    dtype = _opmath(x)
    src = x.to(dtype) if x.dtype != dtype else x
    # the contiguous dimension first (horizontal), then height; a dimension keeping its size is
    # not resampled
    for i in (1, 0):
        d = src.dim() - 2 + i
        in_size, out_size = src.shape[d], output_size[i]
        if in_size == out_size:
            continue
        idx, w = _aa_weights(in_size, out_size, scales[i] if scales else None, align_corners, dtype, cubic)
        shape = [1] * src.dim()
        shape[d] = -1
        out = None
        for k in range(idx.shape[1]):
            term = src.index_select(d, idx[:, k]) * w[:, k].reshape(shape)
            out = term if out is None else out + term
        src = out.to(x.dtype).to(dtype)  # each pass stores its result in the input's type
    return src.to(x.dtype)


def _aa_ops(name, cubic):
    def vec(input, output_size, align_corners, scale_factors):
        sizes, sf = _out_sizes(input, 2, output_size, scale_factors)
        return _aa(input, sizes, align_corners, sf, cubic, name)

    def fixed(self, output_size, align_corners, scales_h=None, scales_w=None):
        _common_check(self, 2, output_size)
        return _aa(self, list(output_size), align_corners, [scales_h, scales_w], cubic, name)

    def backward(grad_output, output_size, input_size, align_corners, scales_h=None, scales_w=None):
        import torch

        if len(input_size) != 4:
            raise RuntimeError(f"It is expected input_size equals to 4, but got size {len(input_size)}")
        if len(output_size) != 2:
            raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
        expect = list(input_size[:2]) + list(output_size)
        if list(grad_output.shape) != expect:
            raise RuntimeError(f"Expected grad_output to have the same shape as output; output.size({grad_output.dim() - 1})"
                               f" = {expect[-1]} but got grad_output.size({grad_output.dim() - 1}) = "
                               f"{grad_output.shape[-1]}")
        # the forward is linear in its input: its transpose applied to grad_output
        with torch.enable_grad():
            z = torch.zeros(list(input_size), dtype=grad_output.dtype, requires_grad=True)
            out = _aa(z, list(output_size), align_corners, [scales_h, scales_w], cubic, name)
            return torch.autograd.grad(out, z, grad_output.detach())[0]

    impl(f"{name}.vec")(vec)
    impl(name)(fixed)
    impl(f"{name}_backward")(backward)


_aa_ops("_upsample_bilinear2d_aa", False)
_aa_ops("_upsample_bicubic2d_aa", True)

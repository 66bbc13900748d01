"""Operators transformers models call that were missing (issue 5 item 7, found by
tools/model_sweep.py): weight normalisation (norm_except_dim, _weight_norm,
_weight_norm_interface), average pooling with ceil_mode / count_include_pad=False /
divisor_override, bucketize and searchsorted, masked_scatter, normal with float mean and std,
linspace with tensor ends. Compositions of other operators, with upstream's definitions
(aten/src/ATen/native/WeightNorm.cpp, AveragePool2d.cpp, Bucketization.cpp)."""

from __future__ import annotations

from . import base as B
from . import impl


# --- weight normalisation ----------------------------------------------------------------------

@impl("norm_except_dim")
def norm_except_dim(v, pow=2, dim=0):
    if dim == -1:
        return v.norm(pow)
    nd = v.dim()
    if dim == 0:
        shape = [v.shape[0]] + [1] * (nd - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == nd - 1:
        shape = [1] * (nd - 1) + [v.shape[-1]]
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@impl("_weight_norm_interface")
def _weight_norm_interface(v, g, dim=0):
    norms = norm_except_dim(v, 2, dim)
    return v * (g / norms), norms.reshape(g.shape) if norms.numel() == g.numel() else norms


@impl("_weight_norm")
def _weight_norm(v, g, dim=0):
    import torch

    if v.dtype != torch.float16 and g.dtype != torch.float16 and (dim == 0 or dim == v.dim() - 1):
        return _weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


# --- average pooling, every option -------------------------------------------------------------

def _pool_out(n, k, p, s, ceil):
    num = n + 2 * p - (k - 1) - 1 + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= n + p:
        out -= 1
    return out


def _divisors(n, k, p, s, out, count_include_pad):
    """Per output position along one dimension: (window size incl. padding, size within the input)."""
    full, inner = [], []
    for o in range(out):
        start = o * s - p
        end = min(start + k, n + p)
        full.append(end - start)
        inner.append(min(end, n) - max(start, 0))
    return full if count_include_pad else inner


def avg_pool_nd(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    import torch

    def n_tuple(v, default=None):
        v = list(v) if v is not None and len(v) else (default or [])
        return v * nd if len(v) == 1 else v

    k = n_tuple(kernel)
    s = n_tuple(stride, k)
    p = n_tuple(padding, [0])
    sizes = list(x.shape[-nd:])
    outs = [_pool_out(n, kk, pp, ss, ceil_mode) for n, kk, pp, ss in zip(sizes, k, p, s)]
    # zero padding on the left, and on the right as far as the last window reaches
    pads = []
    for n, kk, pp, ss, o in zip(sizes, k, p, s, outs):
        right = max((o - 1) * ss + kk - n - pp, 0)
        pads.append((pp, right))
    flat_pad = [v for lo_hi in reversed(pads) for v in lo_hi]
    xp = torch.constant_pad_nd(x, flat_pad, 0)
    for i in range(nd):  # windows gathered per dimension (index_select, not overlapping views); kernel axes last
        d = x.dim() - nd + i
        idx = (torch.arange(outs[i]) * s[i]).unsqueeze(1) + torch.arange(k[i])
        xp = xp.index_select(d, idx.flatten()).unflatten(d, (outs[i], k[i])).movedim(d + 1, -1)
    summed = xp.sum(list(range(-nd, 0)), dtype=x.dtype)
    integer = not (x.is_floating_point() or x.is_complex())
    if divisor_override:
        div = torch.tensor(divisor_override, dtype=x.dtype)
    else:
        div = None
        for i in range(nd):
            f = torch.tensor(_divisors(sizes[i], k[i], p[i], s[i], outs[i], count_include_pad), dtype=x.dtype)
            f = f.reshape([-1] + [1] * (nd - 1 - i))
            div = f if div is None else div * f
    # integer inputs divide as C++ integers do (toward zero), as upstream's kernel
    return torch.div(summed, div, rounding_mode="trunc") if integer else summed / div


def avg_pool2d_any(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                   divisor_override=None):
    return avg_pool_nd(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@impl("avg_pool3d")
def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return avg_pool_nd(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


# --- search ------------------------------------------------------------------------------------

@impl("searchsorted.Tensor")
def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    import torch

    if side is not None:
        right = side == "right"
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    if seq.dim() == 1:
        cmp = seq.reshape([1] * self.dim() + [-1])
        v = self.unsqueeze(-1)
    else:
        cmp = seq.unsqueeze(-2)
        v = self.unsqueeze(-1)
    hits = (cmp <= v) if right else (cmp < v)
    out = hits.sum(-1)
    return out.to(torch.int32 if out_int32 else torch.int64)


@impl("searchsorted.Scalar")
def searchsorted_scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    import torch

    return searchsorted(sorted_sequence, torch.scalar_tensor(self, dtype=sorted_sequence.dtype), out_int32=out_int32,
                        right=right, side=side, sorter=sorter)


@impl("bucketize.Tensor")
def bucketize(self, boundaries, out_int32=False, right=False):
    return searchsorted(boundaries, self, out_int32=out_int32, right=right)


@impl("bucketize.Scalar")
def bucketize_scalar(self, boundaries, out_int32=False, right=False):
    return searchsorted_scalar(boundaries, self, out_int32=out_int32, right=right)


# --- the rest ----------------------------------------------------------------------------------

def _masked_scatter_into(out, mask, source):
    """upstream's masked_scatter_ on `out` (mask already of out's shape): its checks, then the
    source's leading elements written, in row-major order, where the mask is set."""
    import torch

    from .elementwise import _type_name

    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")
    if out.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_name(out.dtype)} and {_type_name(source.dtype)}")
    idx = mask.reshape(-1).nonzero().reshape(-1)
    if idx.numel() > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if idx.numel():
        flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
        flat.index_put_((idx,), source.reshape(-1)[: idx.numel()])
        if not out.is_contiguous():
            out.copy_(flat.view(out.shape))
    return out


@impl("masked_scatter")
def masked_scatter(self, mask, source):
    """upstream: self and mask expanded to their common shape, a contiguous clone scattered into."""
    import torch

    shape = B.broadcast_shapes(list(mask._tn_sizes), list(self._tn_sizes))  # expand_outplace(mask, self)
    out = self.expand(shape).clone(memory_format=torch.contiguous_format)
    return _masked_scatter_into(out, mask.expand(shape), source)


@impl("masked_scatter_")
def masked_scatter_(self, mask, source):
    return _masked_scatter_into(self, mask.expand_as(self), source)


@impl("normal.float_float")
def normal_float_float(mean, std, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    return torch.empty(size, dtype=dtype, device=device).normal_(mean, std, generator=generator)


@impl("linspace.Scalar_Tensor")
def linspace_scalar_tensor(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    return torch.linspace(start, end.item(), steps, dtype=dtype, device=device)


@impl("linspace.Tensor_Scalar")
def linspace_tensor_scalar(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    return torch.linspace(start.item(), end, steps, dtype=dtype, device=device)


@impl("linspace.Tensor_Tensor")
def linspace_tensor_tensor(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    return torch.linspace(start.item(), end.item(), steps, dtype=dtype, device=device)


# --- recurrent cells (RNN.cpp: GRUCell, LSTMCell, SimpleCell) ------------------------------------

def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    import torch

    return torch.nn.functional.linear(input, w_ih, b_ih), torch.nn.functional.linear(hx, w_hh, b_hh)


@impl("gru_cell")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    reset = (h_r + i_r).sigmoid()
    update = (h_z + i_z).sigmoid()
    new = (i_n + h_n * reset).tanh()
    return (hx - new) * update + new


@impl("lstm_cell")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return (o.sigmoid() * cy.tanh(), cy)


@impl("rnn_tanh_cell")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


@impl("rnn_relu_cell")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


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
    coord = _unnormalize(coord, size, align_corners)
    if padding == 1:  # border
        coord = coord.clamp(0, size - 1)
    elif padding == 2:  # reflection
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = coord.clamp(0, size - 1)
    return coord


@impl("grid_sampler_2d", "grid_sampler")
def grid_sampler_2d(input, grid, interpolation_mode=0, padding_mode=0, align_corners=False):
    import torch

    if interpolation_mode not in (0, 1):
        raise NotImplementedError("aten.grid_sampler_2d with bicubic interpolation has no kernel for device 'cpu' yet")
    n, c, h, w = input.shape
    x = _source(grid[..., 0], w, padding_mode, align_corners)
    y = _source(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(yy, xx):
        valid = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        idx = (yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1)).to(torch.int64).reshape(n, 1, -1).expand(n, c, -1)
        v = flat.gather(2, idx).reshape(n, c, *xx.shape[1:])
        return v * valid.unsqueeze(1).to(v.dtype)

    if interpolation_mode == 1:  # nearest: round half to even, as nearbyint
        return tap(y.round(), x.round())
    x0, y0 = x.floor(), y.floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = x - x0, y - y0
    wx0, wy0 = x1 - x, y1 - y
    out = tap(y0, x0) * (wx0 * wy0).unsqueeze(1) + tap(y0, x1) * (wx1 * wy0).unsqueeze(1)
    return out + tap(y1, x0) * (wx0 * wy1).unsqueeze(1) + tap(y1, x1) * (wx1 * wy1).unsqueeze(1)


# --- distances and index helpers ---------------------------------------------------------------

@impl("_euclidean_dist")
def _euclidean_dist(x1, x2):
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1).sqrt()


@impl("cdist", "_cdist_forward")
def cdist(x1, x2, p=2.0, compute_mode=None):
    d = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (d != 0).to(x1.dtype).sum(-1)
    if p == float("inf"):
        return d.amax(-1)
    if p == 1:
        return d.sum(-1)
    if p == 2:
        return d.pow(2).sum(-1).sqrt()
    return d.pow(p).sum(-1).pow(1.0 / p)


@impl("pairwise_distance")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    import torch

    nd = max(x1.dim(), x2.dim())
    return torch.linalg.vector_norm(x1 - x2 + eps, p, nd - 1 if nd else 0, keepdim) if nd else (x1 - x2 + eps).abs()


def _tri(row, col, offset, upper, dtype, device):
    import torch

    r = torch.arange(row).unsqueeze(1).expand(row, col)
    c = torch.arange(col).unsqueeze(0).expand(row, col)
    keep = (c - r >= offset) if upper else (c - r <= offset)
    return torch.stack([r[keep], c[keep]]).to(dtype or torch.int64)


@impl("tril_indices")
def tril_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
    return _tri(row, col, offset, False, dtype, device)


@impl("triu_indices")
def triu_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
    return _tri(row, col, offset, True, dtype, device)


@impl("_unique2")
def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """Sorted unique values (upstream's CPU _unique2 sorts whatever `sorted` says), the inverse
    indices in the input's shape and the counts."""
    import torch

    flat = self.reshape(-1)
    if flat.numel() == 0:
        empty = torch.empty(0, dtype=torch.int64)
        return flat.clone(), torch.empty(self.shape, dtype=torch.int64) if return_inverse else empty, empty
    vals, order = flat.sort(stable=True)
    first = torch.ones(vals.shape, dtype=torch.bool)
    if vals.numel() > 1:
        first[1:] = vals[1:] != vals[:-1]
    uniq = vals[first]
    group = first.to(torch.int64).cumsum(0) - 1
    inverse = torch.empty_like(group).index_put_((order,), group).reshape(self.shape) if return_inverse \
        else torch.empty(0, dtype=torch.int64)
    counts = torch.zeros(uniq.numel(), dtype=torch.int64).index_add_(0, group, torch.ones_like(group)) \
        if return_counts else torch.empty(0, dtype=torch.int64)
    return uniq, inverse, counts


@impl("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Distance.cpp: each side divided by its norm clamped to eps, then the product summed
    (upstream clamps in place under a NoGradGuard; out of place here, the same values)."""
    import torch

    if not (x1.is_floating_point() or x1.is_complex()):
        x1 = x1.to(torch.get_default_dtype())
    if not (x2.is_floating_point() or x2.is_complex()):
        x2 = x2.to(torch.get_default_dtype())
    x1, x2 = torch.broadcast_tensors(x1, x2)
    n1 = torch.linalg.vector_norm(x1, 2, dim, True).clamp_min(eps)
    n2 = torch.linalg.vector_norm(x2, 2, dim, True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@impl("_is_all_true")
def _is_all_true(self):
    return self.all()


@impl("_is_any_true")
def _is_any_true(self):
    return self.any()

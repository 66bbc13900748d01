"""Operators transformers models call that were missing (issue 5 item 7, found by
tools/model_sweep.py): weight normalisation (norm_except_dim, _weight_norm,
_weight_norm_interface), average pooling with ceil_mode / count_include_pad=False /
divisor_override, bucketize and searchsorted, masked_scatter, normal with float mean and std,
linspace with tensor ends. Compositions of other operators, with upstream's definitions
(aten/src/ATen/native/WeightNorm.cpp, AveragePool2d.cpp, Bucketization.cpp)."""

from __future__ import annotations

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

@impl("masked_scatter")
def masked_scatter(self, mask, source):
    m = mask.expand_as(self) if mask.shape != self.shape else mask
    out = self.clone()
    idx = m.reshape(-1).nonzero().reshape(-1)
    if idx.numel():
        out.view(-1).index_put_((idx,), source.reshape(-1)[: idx.numel()].to(self.dtype))
    return out


@impl("masked_scatter_")
def masked_scatter_(self, mask, source):
    return self.copy_(masked_scatter(self, mask, source))


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

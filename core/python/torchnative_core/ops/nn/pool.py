"""Pooling: max pooling (with indices, and its backward), max unpooling, average pooling of any
dimension (ceil_mode, count_include_pad, divisor_override), adaptive average and max pooling.
"""

from __future__ import annotations

from .. import base as B
from .. import impl


D = B.door



# --- pooling -----------------------------------------------------------------------------------

@impl("avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override is not None or not B.dtype_of(self).is_floating_point:
        return avg_pool2d_any(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
    k = two(kernel_size)
    s = two(stride) if stride else list(k)
    p = two(padding)
    unbatched = len(self._tn_sizes) == 3
    x = D("unsqueeze", self, 0) if unbatched else self
    c = x._tn_sizes[1]
    w = B.call("full", [c, 1, k[0], k[1]], 1.0 / (k[0] * k[1]), B.dtype_of(self), device=B.device_of(self))
    out = D("convolution", x, w, None, s, p, [1, 1], False, [0, 0], c)
    return D("squeeze.dim", out, 0) if unbatched else out


@impl("adaptive_avg_pool2d")
def adaptive_avg_pool2d_composite(self, output_size):
    # upstream (AdaptiveAveragePooling.cpp): a global pool is a mean, anything else the kernel
    if list(output_size) in ([1, 1], [1]):
        return D("mean.dim", self, [-1, -2], True, None)
    return D("_adaptive_avg_pool2d", self, list(output_size))


@impl("_adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    oh, ow = (list(output_size) * 2)[:2] if len(output_size) == 1 else list(output_size)
    h, w = self._tn_sizes[-2:]
    if h % oh or w % ow:
        return adaptive_avg_pool2d_any(self, [oh, ow])
    return avg_pool2d(self, [h // oh, w // ow], [h // oh, w // ow], [0, 0])


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    o = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


@impl("max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
    k = two(kernel_size)
    s = two(stride) if stride else list(k)
    p, d = two(padding), two(dilation)
    sizes = list(self._tn_sizes)
    oh = _pool_out(sizes[-2], k[0], s[0], p[0], d[0], ceil_mode)
    ow = _pool_out(sizes[-1], k[1], s[1], p[1], d[1], ceil_mode)
    shape = sizes[:-2] + [oh, ow]
    out = B.empty(shape, B.dtype_of(self), B.device_of(self))
    idx = B.empty(shape, B.I64, B.device_of(self))
    B.launch("max_pool2d_with_indices", (self, k, s, p, d, ceil_mode), (out, idx))
    return out, idx


@impl("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """The gradient of max_pool2d: each output gradient added into the input position its index
    names. One kernel where the device has it, else a scatter_add over each plane."""
    sizes = list(self._tn_sizes)
    if len(sizes) not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got: {sizes}")
    if list(grad_output._tn_sizes) != list(indices._tn_sizes) or list(grad_output._tn_sizes[:-2]) != sizes[:-2]:
        raise RuntimeError(f"max_pool2d_with_indices_backward: grad_output of size {list(grad_output._tn_sizes)} does "
                           f"not fit indices {list(indices._tn_sizes)} and input {sizes}")
    dev = B.device_of(self)
    if B.C._tn_has_kernel("max_pool2d_with_indices_backward", dev.type):
        out = B.empty(sizes, B.dtype_of(grad_output), dev)
        B.launch("max_pool2d_with_indices_backward",
                 (grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices), (out,))
        return out
    lead = sizes[:-2]
    z = B.call("zeros", lead + [sizes[-2] * sizes[-1]], B.dtype_of(grad_output), device=dev)
    flat = lambda t: D("reshape", t, lead + [-1])  # noqa: E731
    D("scatter_add_", z, len(lead), flat(indices), flat(grad_output))
    return D("reshape", z, sizes)


@impl("max_pool1d_with_indices")
def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """A 1-D pool is the 2-D one over a height of one (indices are then positions along the row)."""
    one = lambda v: [1] + list(v)  # noqa: E731
    x = D("unsqueeze", self, -2)
    out, idx = D("max_pool2d_with_indices", x, one(kernel_size), one(stride) if len(stride) else [],
                     [0] + list(padding), one(dilation), ceil_mode)
    return D("squeeze.dim", out, -2), D("squeeze.dim", idx, -2)


@impl("max_pool1d")
def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return D("max_pool1d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _max_unpool(self, indices, output_size, nd, name):
    """upstream's max_unpooling kernels (MaxUnpooling.cpp): each plane's values written at the
    positions its indices name in a zeroed output (a repeated index keeps the last value here;
    upstream's choice varies from run to run); an index outside the output plane is refused."""
    from ..elementwise.arithmetic import _type_name

    sizes = list(self._tn_sizes)
    if B.dtype_of(indices) is not B.I64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_type_name(B.dtype_of(indices))}")
    words = {2: "two elements (height, width)", 3: "three elements (depth, height, width)"}[nd]
    if len(output_size) != nd:
        raise RuntimeError(f"There should be exactly {words} in output_size, but got {len(output_size)} elements.")
    if len(sizes) not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {len(sizes)} dimensions.")
    if sizes != list(indices._tn_sizes):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({sizes}) but got "
                           f"indices tensor with shape: {list(indices._tn_sizes)}")
    for i in range(1, len(sizes)):
        if sizes[i] <= 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{sizes} with dimension {i} being empty.")
    out_sp = [int(v) for v in output_size]
    total, lead = B.numel(out_sp), sizes[:-nd]
    rows = B.numel(lead)
    flat = D("reshape", self, [rows, -1])
    idx = D("reshape", indices, [rows, -1])
    bad = D("logical_or", D("lt.Scalar", idx, 0), D("ge.Scalar", idx, total))
    if B.numel(sizes) and bool(D("any", bad)):
        first = D("masked_select", idx, bad)[0].item()
        # (upstream's planes run in parallel, so which invalid index it names may vary; the first here)
        raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of size "
                           f"{'x'.join(map(str, out_sp))})")
    out = B.call("zeros", [rows, total], B.dtype_of(self), device=B.device_of(self))
    D("scatter_.src", out, 1, idx, flat)
    return D("reshape", out, lead + out_sp)


@impl("max_unpool2d")
def max_unpool2d(self, indices, output_size):
    return _max_unpool(self, indices, output_size, 2, "max_unpooling2d_forward_out_cpu()")


@impl("max_unpool3d")
def max_unpool3d(self, indices, output_size, stride, padding):
    if len(stride) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in stride, but got: "
                           f"{len(stride)} elements.")
    if len(padding) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in padding, but got: "
                           f"{len(padding)} elements.")
    if min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    return _max_unpool(self, indices, output_size, 3, "max_unpooling3d_forward_out_cpu()")


@impl("max_pool2d")
def max_pool2d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return D("max_pool2d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


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


# --- average pooling, every option -------------------------------------------------------------

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
    outs = [_pool_out(n, kk, ss, pp, 1, ceil_mode) for n, kk, pp, ss in zip(sizes, k, p, s)]
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

"""Pooling: max pooling (with indices, and its backward), max unpooling, average pooling of any
dimension (ceil_mode, count_include_pad, divisor_override), adaptive average and max pooling.
"""

from __future__ import annotations

from .. import base as B
from .. import impl


D = B.door



# --- pooling -----------------------------------------------------------------------------------

def _check_pool2d_lengths(op, kernel_size, stride, padding, dilation=None, downcast=False):
    """The 2-d pools' meta functions: one or two values each, stride possibly none; `downcast`:
    each argument's values then narrowed to int (safe_downcast) before the next is looked at."""
    for what, v, empty_ok in (("kernel_size must either be a single int, or a tuple of two ints", kernel_size, False),
                              ("stride must either be omitted, a single int, or a tuple of two ints", stride, True),
                              ("padding must either be a single int, or a tuple of two ints", padding, False),
                              ("dilation must be either a single int, or a tuple of two ints", dilation, False)):
        if v is None:
            continue
        if len(v) not in (1, 2) and not (empty_ok and not len(v)):
            raise RuntimeError(f"{op}: {what}")
        if downcast and any(not -(2**31) <= int(x) < 2**31 for x in v):
            raise RuntimeError("value cannot be converted to type int without overflow")


def _check_avg_pool2d(self, kernel_size, stride, padding, ceil_mode, divisor_override):
    """upstream's avg_pool2d meta function, in its order (its sizes downcast to int)."""
    stride = stride or ()  # F.avg_pool2d passes None for the schema's default []
    _check_pool2d_lengths("avg_pool2d", kernel_size, stride, padding, downcast=True)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sizes = list(self._tn_sizes)
    if len(sizes) < 3:
        B.wrap_dim(-3, len(sizes))  # upstream reads input.size(-3) here: IndexError
    two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
    k = two(kernel_size)
    s = two(stride) if len(stride) else list(k)
    p = two(padding)
    oh = _pool_output_shape(sizes[-2], k[0], p[0], s[0], 1, ceil_mode)
    ow = _pool_output_shape(sizes[-1], k[1], p[1], s[1], 1, ceil_mode)
    _pool2d_shape_check(sizes, k, s, p, [1, 1], oh, ow)
    if B.dtype_of(self)._tn_name != "int64":  # its kernel: floating types and Long
        B.floating_kernel_only(self, "avg_pool2d")


@impl("avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    _check_avg_pool2d(self, kernel_size, stride, padding, ceil_mode, divisor_override)
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
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if list(output_size) == [1, 1]:
        return D("mean.dim", self, [-1, -2], True, None)
    return D("_adaptive_avg_pool2d", self, list(output_size))


@impl("_adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    # upstream's adaptive_avg_pool2d_out_cpu_template checks, in its order
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    sizes = list(self._tn_sizes)
    if len(sizes) not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {sizes}")
    for i in (-2, -1):
        if sizes[i] <= 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {sizes} with dimension {i + len(sizes)} being empty")
    oh, ow = list(output_size)
    if oh < 0 or ow < 0:
        raise RuntimeError("numel: integer multiplication overflow")  # resize_ of the output, as upstream's
    if not oh or not ow:
        return B.empty(sizes[:-2] + [oh, ow], B.dtype_of(self), B.device_of(self))
    h, w = sizes[-2:]
    if h % oh or w % ow:
        return adaptive_avg_pool2d_any(self, [oh, ow])
    return avg_pool2d(self, [h // oh, w // ow], [h // oh, w // ow], [0, 0])


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _pool_output_shape(size, k, p, s, d, ceil_mode):
    """upstream's pooling_output_shape, with its checks."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > _trunc_div((k - 1) * d + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and "
                           f"dilation={d}")
    return _pool_out(size, k, s, p, d, ceil_mode)


def _pool2d_shape_check(sizes, k, s, p, d, oh, ow):
    """upstream's pool2d_shape_check (Pool.h), in its order."""
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    if not all(sizes[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                           f"{sizes}")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, padH = "
                           f"{p[0]}, kW = {k[1]}, kH = {k[0]}")
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({sizes[-3]}x{sizes[-2]}x{sizes[-1]}). Calculated output size: "
                           f"({sizes[-3]}x{oh}x{ow}). Output size is too small")


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    o = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


@impl("max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    stride = stride or ()
    _check_pool2d_lengths("max_pool2d", kernel_size, stride, padding, dilation)
    two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
    k = two(kernel_size)
    s = two(stride) if stride else list(k)
    p, d = two(padding), two(dilation)
    sizes = list(self._tn_sizes)
    if len(sizes) not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    oh = _pool_output_shape(sizes[-2], k[0], p[0], s[0], d[0], ceil_mode)
    ow = _pool_output_shape(sizes[-1], k[1], p[1], s[1], d[1], ceil_mode)
    _pool2d_shape_check(sizes, k, s, p, d, oh, ow)
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
    # upstream's check_max_pool1d, then its kernel's dtype dispatch (floating types only)
    stride = stride or ()
    sizes = list(self._tn_sizes)
    if not (len(sizes) in (2, 3) and all(sizes[-2:])):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{sizes}")
    for what, v, ok in (("kernel_size must be an int, list of ints or tuple of ints", kernel_size, (1,)),
                        ("stride must be None, an int, list of ints, or tuple of ints", stride, (0, 1)),
                        ("padding must be an int, list of ints, or tuple of ints", padding, (1,)),
                        ("dilation must be an int, list of ints or tuple of ints", dilation, (1,))):
        if len(v) not in ok:
            raise RuntimeError(f"max_pool1d() {what} of size 1 but got size {len(v)}")
    k, p, d = kernel_size[0], padding[0], dilation[0]
    s = stride[0] if len(stride) else k
    for ok, msg in ((k > 0, f"kernel_size must be greater than zero, but got {k}"),
                    (s > 0, f"stride must be greater than zero, but got {s}"),
                    (p >= 0, f"padding must be non-negative, but got {p}"),
                    (p <= k // 2, f"padding should be at most half of kernel size, but got padding={p} and kernel_size={k}"),
                    (d > 0, f"dilation must be greater than zero, but got {d}")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {msg}")
    ol = _pool_output_shape(sizes[-1], k, p, s, d, ceil_mode)
    if ol <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {ol}")
    if not B.dtype_of(self).is_floating_point:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{B.scalar_type_name(B.dtype_of(self))}'")
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
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
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
    if not self.is_floating_point():  # upstream's kernels dispatch over floating types
        name = "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d"
        raise NotImplementedError(f"\"{name}\" not implemented for '{B.scalar_type_name(B.dtype_of(self))}'")
    lead = list(self.shape[:-nd])
    out_sizes = [o if o is not None else self.shape[-nd + i] for i, o in enumerate(output_size)]
    if not self.numel():  # an empty batch: nothing to scan, however many windows
        shape = lead + out_sizes
        return torch.empty(shape, dtype=self.dtype), torch.empty(shape, dtype=torch.int64)
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


    if self.dim() not in (2, 3):  # upstream's checkDimRange(self, 2, 4)
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.dim()}-dimensional tensor for argument #1 'self' "
                           "(while checking arguments for avg_pool1d)")
    # upstream's check_1d, in its order (kernel_size, stride, padding); after the rank; an empty stride is the kernel size
    for name, v, empty_ok in (("kernel_size", kernel_size, False), ("stride", stride or (), True),
                              ("padding", padding, False)):
        if len(v) != 1 and not (empty_ok and len(v) == 0):
            raise RuntimeError(f"avg_pool1d() argument '{name}' should contain one int (got {len(v)})")
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
    if self.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    return avg_pool_nd(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


# --- max pooling over gathered windows (3-d, fractional) ----------------------------------------

def _window_table(pos, sizes):
    """Flat input positions of every window: `pos[i]` holds dimension i's positions as
    [..., O_i, K_i] (a leading plane dimension where windows differ per plane). Returns
    [..., O, K] with each window's in-bounds positions first, in window order, and the
    out-of-bounds ones pointing at a sentinel slot just past the plane (upstream's loops skip
    padding, so a window's first in-bounds element is its initial maximum)."""
    import torch

    nd = len(pos)
    flat, valid = None, None
    for i, p in enumerate(pos):
        lead = list(p.shape[:-2])
        o, k = p.shape[-2:]
        shape = lead + [1] * nd + [1] * nd
        shape[len(lead) + i], shape[len(lead) + nd + i] = o, k
        q = p.reshape(shape)
        ok = (q >= 0) & (q < sizes[i])
        stride = 1
        for n in sizes[i + 1:]:
            stride *= n
        flat = q * stride if flat is None else flat + q * stride
        valid = ok if valid is None else valid & ok
    lead = list(flat.shape[:-2 * nd])
    o = B.numel(flat.shape[len(lead):len(lead) + nd])
    flat = flat.reshape(lead + [o, -1])
    valid = valid.reshape(list(flat.shape))
    total = 1
    for n in sizes:
        total *= n
    if bool(valid.all()):  # no window reaches padding (fractional pools never do)
        return flat
    order = torch.argsort((~valid).to(torch.int8), dim=-1, stable=True)
    return torch.where(valid, flat, total).gather(-1, order)


def _window_max(x, nd, table, out_sizes):
    """Max over each window of `table` (see _window_table) on x's last nd dimensions: values and
    flat indices. The first maximum wins; a NaN wins over numbers and the last NaN over earlier
    ones (upstream's `val > max || isnan(val)`)."""
    import torch

    lead = list(x.shape[:-nd])
    xf = x.flatten(-nd) if nd > 1 else x
    low = float("-inf") if x.is_floating_point() else torch.iinfo(x.dtype).min
    xf = torch.cat([xf, xf.new_full(lead + [1], low)], -1)
    o, k = table.shape[-2:]
    t = table.expand(lead + [o, k]) if table.dim() == 2 else table.reshape(lead + [o, k])
    g = xf.gather(-1, t.reshape(lead + [o * k])).reshape(lead + [o, k])
    v, j = g.max(-1)
    if x.is_floating_point():
        nan = g.isnan()
        last = (k - 1) - nan.flip(-1).to(torch.int8).argmax(-1)
        j = torch.where(nan.any(-1), last, j)
        v = g.gather(-1, j.unsqueeze(-1)).squeeze(-1)
    idx = t.gather(-1, j.unsqueeze(-1)).squeeze(-1)
    return v.reshape(lead + out_sizes), idx.reshape(lead + out_sizes)


def _triple(v, what, name, allow_empty=False):
    v = list(v)
    if len(v) == 3 or len(v) == 1 or (allow_empty and not v):
        return v * 3 if len(v) == 1 else v
    must = {"kernel_size": "must either be a single int, or a tuple of three ints",
            "stride": "must either be omitted, a single int, or a tuple of three ints",
            "padding": "must either be a single int, or a tuple of three ints",
            "dilation": "must be either a single int, or a tuple of three ints"}[what]
    raise RuntimeError(f"{name}: {what} {must}")


def _pool3d_check(x, k, s, p, d, ceil_mode, name):
    """upstream's pool3d_shape_check: argument ranges, then the input's rank, then the output."""
    sizes = list(x._tn_sizes)
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    if len(sizes) not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for i in range(len(sizes) - 4, len(sizes)):
        if sizes[i] == 0:
            raise RuntimeError(f"{name}(): Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {sizes} and non-batch dimension {i - (len(sizes) - 4)} has length zero!")
    for pp, kk in zip(p, k):
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
    for pp, kk, dd in zip(p, k, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    outs = [_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(sizes[-3:], k, s, p, d)]
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, sizes[-4:]))}). Calculated output size: "
                           f"({sizes[-4]}x{'x'.join(map(str, outs))}). Output size is too small")
    return outs


@impl("max_pool3d_with_indices")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    import torch

    k = _triple(kernel_size, "kernel_size", "max_pool3d")
    s = _triple(stride, "stride", "max_pool3d", allow_empty=True) or list(k)
    p = _triple(padding, "padding", "max_pool3d")
    d = _triple(dilation, "dilation", "max_pool3d")
    dt = B.dtype_of(self)
    if dt.is_complex or dt is B.BOOL:
        from ..elementwise.arithmetic import _type_name

        raise NotImplementedError(f'"max_pool3d" not implemented for \'{_type_name(dt)}\'')
    outs = _pool3d_check(self, k, s, p, d, ceil_mode, "max_pool3d_with_indices_out_cpu_template")
    dev = B.device_of(self)
    if B.C._tn_has_kernel("max_pool3d_with_indices", dev.type):
        shape = list(self._tn_sizes[:-3]) + outs
        out, idx = B.empty(shape, dt, dev), B.empty(shape, B.I64, dev)
        B.launch("max_pool3d_with_indices", (self, k, s, p, d, ceil_mode), (out, idx))
        return out, idx
    sizes = list(self.shape[-3:])
    pos = [(torch.arange(o) * ss - pp).unsqueeze(1) + torch.arange(kk) * dd
           for o, kk, ss, pp, dd in zip(outs, k, s, p, d)]
    table = _window_table(pos, sizes).to(B.device_of(self))
    return _window_max(self, 3, table, outs)


@impl("max_pool3d")
def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return D("max_pool3d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _max_pool_backward(grad_output, self, indices, nd, name, args):
    """Each output gradient added into the input position its index names (overlapping windows
    accumulate): the device's kernel `name` on the operator's `args` where it has one, else a
    scatter_add over each plane."""
    sizes = list(self._tn_sizes)
    gs = list(grad_output._tn_sizes)
    if B.dtype_of(indices) is not B.I64:
        raise RuntimeError(f"expected scalar type Long but found {B.scalar_type_name(B.dtype_of(indices))}")
    if B.dtype_of(grad_output) is not B.dtype_of(self):
        raise RuntimeError(f"expected dtype {B.cpp_type_name(B.dtype_of(self))} for `gradOutput` but got dtype "
                           f"{B.cpp_type_name(B.dtype_of(grad_output))}")
    for i, (a, b) in enumerate(zip(gs, list(indices._tn_sizes))):
        if a != b or len(gs) != len(indices._tn_sizes):
            raise RuntimeError(f"Expected a tensor of dimension {len(gs)} and tensor.size[{i}] == {a} but got: "
                               f"dimension {len(indices._tn_sizes)} and tensor.size[{i}] = {b}")
    if len(gs) != len(sizes) or gs[:-nd] != sizes[:-nd]:
        raise RuntimeError(f"{name}: grad_output of size {gs} does not fit input {sizes}")
    dev = B.device_of(self)
    if B.C._tn_has_kernel(name, dev.type):
        out = B.empty(sizes, B.dtype_of(grad_output), dev)
        B.launch(name, args, (out,))
        return out
    lead = sizes[:-nd]
    z = B.call("zeros", lead + [B.numel(sizes[-nd:])], B.dtype_of(grad_output), device=B.device_of(self))
    flat = lambda t: D("reshape", t, lead + [-1])  # noqa: E731
    D("scatter_add_", z, len(lead), flat(indices), flat(grad_output))
    return D("reshape", z, sizes)


@impl("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _max_pool_backward(grad_output, self, indices, 3, "max_pool3d_with_indices_backward",
                              (grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices))


# --- fractional max pooling ---------------------------------------------------------------------

def _fractional_starts(sample, in_size, out_size, pool):
    """Window starts along one dimension for each plane's sample u (FractionalMaxPool2d.cpp's
    generate_intervals, in the input's dtype as upstream computes it): with
    alpha = (in - pool) / (out - 1), start_i = int((i + u) * alpha) - int(u * alpha), and the
    last window ends at the input's end."""
    import torch

    planes = sample.shape[0]
    starts = torch.full((planes, out_size), in_size - pool, dtype=torch.long)
    if out_size > 1:
        alpha = torch.tensor(in_size - pool, dtype=sample.dtype) / torch.tensor(out_size - 1, dtype=sample.dtype)
        i = torch.arange(out_size - 1).unsqueeze(0)
        u = sample.unsqueeze(1)
        starts[:, :-1] = ((i + u) * alpha).to(torch.int32).long() - (u * alpha).to(torch.int32).long()
    return starts


def _fractional(self, kernel_size, output_size, random_samples, nd):
    import torch

    name = f"fractional_max_pool{nd}d"
    what = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    if len(kernel_size) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {what}")
    if len(output_size) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {what}")
    sizes = list(self._tn_sizes)
    if len(sizes) not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {sizes}")
    for i in range(len(sizes) - nd - 1, len(sizes)):
        if sizes[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{sizes} with dimension {i} being empty.")
    dt = B.dtype_of(self)
    if not dt.is_floating_point:
        from ..elementwise.arithmetic import _type_name

        raise NotImplementedError(f'"{name}_out_frame" not implemented for \'{_type_name(dt)}\'')
    if random_samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {random_samples.dim()}")
    batch = sizes[0] if len(sizes) == nd + 2 else 1
    planes = sizes[-nd - 1]
    if random_samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if random_samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if random_samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {random_samples.shape[2]}.")
    if B.dtype_of(random_samples) is not dt:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    words = ["time", "height", "width"][-nd:]
    prefix = f"{name}()" if nd == 2 else f"{name}_out()"
    for w, n, o, k in zip(words, sizes[-nd:], output_size, kernel_size):
        if o + k - 1 > n:
            raise RuntimeError(f"{prefix}: pool {w} {k} too large relative to input {w} {n}")
    outs = [int(o) for o in output_size]
    dev = B.device_of(self)
    if B.C._tn_has_kernel(name, dev.type):
        shape = sizes[:-nd] + outs
        v, i = B.empty(shape, dt, dev), B.empty(shape, B.I64, dev)
        if B.numel(shape):
            B.launch(name, (self, list(kernel_size), outs, random_samples), (v, i))
        return v, i
    x = self if len(sizes) == nd + 2 else self.unsqueeze(0)
    samples = random_samples[:batch].reshape(batch * planes, nd).detach()
    # upstream's sample order: (width, height) in 2-d, (time, height, width) in 3-d
    which = [1, 0] if nd == 2 else [0, 1, 2]
    pos = []
    for d in range(nd):
        st = _fractional_starts(samples[:, which[d]], x.shape[2 + d], int(output_size[d]), int(kernel_size[d]))
        pos.append(st.unsqueeze(2) + torch.arange(int(kernel_size[d])))
    if B.numel(outs) == 0 or batch == 0:
        shape = list(x.shape[:2]) + outs
        v, i = torch.empty(shape, dtype=self.dtype), torch.empty(shape, dtype=torch.long)
    else:
        table = _window_table(pos, list(x.shape[2:]))
        v, i = _window_max(x, nd, table, outs)
    return (v, i) if len(sizes) == nd + 2 else (v.squeeze(0), i.squeeze(0))


@impl("fractional_max_pool2d")
def fractional_max_pool2d(self, kernel_size, output_size, random_samples):
    return _fractional(self, list(kernel_size), list(output_size), random_samples, 2)


@impl("fractional_max_pool3d")
def fractional_max_pool3d(self, kernel_size, output_size, random_samples):
    return _fractional(self, list(kernel_size), list(output_size), random_samples, 3)


@impl("fractional_max_pool2d_backward")
def fractional_max_pool2d_backward(grad_output, self, kernel_size, output_size, indices):
    return _max_pool_backward(grad_output, self, indices, 2, "fractional_max_pool2d_backward",
                              (grad_output, self, kernel_size, output_size, indices))


@impl("fractional_max_pool3d_backward")
def fractional_max_pool3d_backward(grad_output, self, kernel_size, output_size, indices):
    return _max_pool_backward(grad_output, self, indices, 3, "fractional_max_pool3d_backward",
                              (grad_output, self, kernel_size, output_size, indices))

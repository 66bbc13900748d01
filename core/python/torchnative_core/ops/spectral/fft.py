"""`torch.fft`: the transforms as upstream composes them (aten/src/ATen/native/SpectralOps.cpp),
and fftshift/ifftshift.
"""

from __future__ import annotations

import math

from .. import base as B
from .. import impl


_door = B.door


# upstream's fft_norm_mode
NONE, BY_ROOT_N, BY_N = 0, 1, 2


def _norm(norm, forward):
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(t, require_complex=False):
    """promote_tensor_fft: integers to the default float; on the cpu only float and double."""
    d = B.dtype_of(t)
    if d.is_complex:
        return t
    target = d if d.is_floating_point else B.default_dtype()
    if target._tn_name not in ("float32", "float64") and not (target._tn_name == "float16" and t._tn_device_key == "meta"):
        raise RuntimeError(f"Unsupported dtype {B.scalar_type_name(target)}")
    if require_complex:
        target = target.to_complex()
    return t if target is d else B.call("_to_copy", t, target)


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"dimension specified as {dim} but tensor has no dimensions")
    return B.wrap_dim(dim, ndim)


def _resize(x, dims, sizes):
    """resize_fft_input: slice each dim longer than its size, zero-pad each shorter one."""
    pad = [0] * (2 * len(x._tn_sizes))
    must_pad = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        have = x._tn_sizes[d]
        if have < n:
            must_pad = True
            pad[len(pad) - 2 * d - 1] = n - have
        elif have > n:
            x = _door("slice.Tensor", x, d, 0, n, 1)
    return _door("constant_pad_nd", x, pad, 0) if must_pad else x


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _conj(t):
    return _door("conj", t)


# --- one-dimensional ---------------------------------------------------------------------------

def _c2c(name, x, n, dim, norm, forward):
    if not B.dtype_of(x).is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {B.scalar_type_name(B.dtype_of(x))}")
    dim = _wrap(dim, len(x._tn_sizes))
    size = x._tn_sizes[dim] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, [dim], [n])
    return _door("_fft_c2c", x, [dim], _norm(norm, forward), forward)


def _r2c(name, x, n, dim, norm, forward, onesided):
    if B.dtype_of(x).is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {B.scalar_type_name(B.dtype_of(x))}")
    x = _promote(x)
    dim = _wrap(dim, len(x._tn_sizes))
    size = x._tn_sizes[dim] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, [dim], [n])
    out = _door("_fft_r2c", x, [dim], _norm(norm, forward), onesided)
    return out if forward else _conj(out)


def _c2r(name, x, n, dim, norm, forward):
    x = _promote(x, require_complex=True)
    dim = _wrap(dim, len(x._tn_sizes))
    size = 2 * (x._tn_sizes[dim] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, [dim], [size // 2 + 1])
    if forward:
        x = _conj(x)
    return _door("_fft_c2r", x, [dim], _norm(norm, forward), size)


@impl("fft_fft")
def fft_fft(self, n=None, dim=-1, norm=None):
    if B.dtype_of(self).is_complex:
        return _c2c("fft", self, n, dim, norm, True)
    return _r2c("fft", self, n, dim, norm, True, False)


@impl("fft_ifft")
def fft_ifft(self, n=None, dim=-1, norm=None):
    if B.dtype_of(self).is_complex:
        return _c2c("ifft", self, n, dim, norm, False)
    return _r2c("ifft", self, n, dim, norm, False, False)


@impl("fft_rfft")
def fft_rfft(self, n=None, dim=-1, norm=None):
    return _r2c("rfft", self, n, dim, norm, True, True)


@impl("fft_irfft")
def fft_irfft(self, n=None, dim=-1, norm=None):
    return _c2r("irfft", self, n, dim, norm, False)


@impl("fft_hfft")
def fft_hfft(self, n=None, dim=-1, norm=None):
    return _c2r("hfft", self, n, dim, norm, True)


@impl("fft_ihfft")
def fft_ihfft(self, n=None, dim=-1, norm=None):
    return _r2c("ihfft", self, n, dim, norm, False, True)


# --- n-dimensional -----------------------------------------------------------------------------

def _shape_and_dims(x, s, dim):
    """canonicalize_fft_shape_and_dim_args."""
    ndim = len(x._tn_sizes)
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x._tn_sizes[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, shape = list(range(ndim)), list(x._tn_sizes)
    else:
        shape = [x._tn_sizes[d] for d in dims]
    for n in shape:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return shape, dims


def _c2r_shape_and_dims(name, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: the last dim's output size, and its input size."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    s_list = None if s is None else ([s] if isinstance(s, int) else list(s))
    last = 2 * (x._tn_sizes[dims[-1]] - 1) if (s_list is None or s_list[-1] == -1) else shape[-1]
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _fftn(x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(_promote(x, require_complex=True), dims, shape)
    if not dims:
        return x
    return _door("_fft_c2c", x, dims, _norm(norm, forward), forward)


@impl("fft_fftn")
def fft_fftn(self, s=None, dim=None, norm=None):
    return _fftn(self, s, dim, norm, True)


@impl("fft_ifftn")
def fft_ifftn(self, s=None, dim=None, norm=None):
    return _fftn(self, s, dim, norm, False)


@impl("fft_rfftn")
def fft_rfftn(self, s=None, dim=None, norm=None):
    if B.dtype_of(self).is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {B.scalar_type_name(B.dtype_of(self))}")
    shape, dims = _shape_and_dims(self, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(self), dims, shape)
    return _door("_fft_r2c", x, dims, _norm(norm, True), True)


@impl("fft_irfftn")
def fft_irfftn(self, s=None, dim=None, norm=None):
    shape, dims, last = _c2r_shape_and_dims("irfftn", self, s, dim)
    x = _resize(_promote(self, require_complex=True), dims, shape)
    return _door("_fft_c2r", x, dims, _norm(norm, False), last)


@impl("fft_hfftn")
def fft_hfftn(self, s=None, dim=None, norm=None):
    shape, dims, last = _c2r_shape_and_dims("hfftn", self, s, dim)
    x = _resize(_promote(self, require_complex=True), dims, shape)
    mode = _norm(norm, True)
    tmp = _door("_fft_c2c", x, dims[:-1], mode, True) if len(dims) > 1 else x
    return _door("_fft_c2r", _conj(tmp), [dims[-1]], mode, last)


@impl("fft_ihfftn")
def fft_ihfftn(self, s=None, dim=None, norm=None):
    shape, dims = _shape_and_dims(self, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(self), dims, shape)
    mode = _norm(norm, False)
    tmp = _conj(_door("_fft_r2c", x, [dims[-1]], mode, True))
    if len(dims) == 1:
        return tmp
    return _door("_fft_c2c", tmp, dims[:-1], mode, False)


for _two, _n in (("fft_fft2", fft_fftn), ("fft_ifft2", fft_ifftn), ("fft_rfft2", fft_rfftn),
                 ("fft_irfft2", fft_irfftn), ("fft_hfft2", fft_hfftn), ("fft_ihfft2", fft_ihfftn)):
    impl(_two)(lambda self, s=None, dim=(-2, -1), norm=None, _n=_n: _n(self, s, list(dim), norm))


# --- frequencies -------------------------------------------------------------------------------

def _freq_dtype(dtype):
    d = dtype or B.default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("fftfreq requires a floating point or complex dtype")
    return d


@impl("fft_fftfreq")
def fft_fftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None):
    out = _door("arange", n, _freq_dtype(dtype), layout, device, pin_memory)
    right = _door("slice.Tensor", out, 0, (n + 1) // 2, None, 1)
    _door("copy_", right, B.call("arange.start", -(n // 2), 0, B.dtype_of(out), device=B.device_of(out)), False)
    return _door("mul_.Tensor", out, B.C._tn_scalar_to_tensor(_reciprocal(n * d)))


def _reciprocal(x):
    """C++'s 1.0 / x in double: n * d == 0 gives an infinity (upstream's n = 0 result is NaN)."""
    x = float(x)
    return 1.0 / x if x != 0 else math.copysign(math.inf, x)


@impl("fft_rfftfreq")
def fft_rfftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None):
    half = n // 2 if n >= 0 else -(-n // 2)  # C++'s n / 2, toward zero
    out = _door("arange", half + 1, _freq_dtype(dtype), layout, device, pin_memory)
    return _door("mul_.Tensor", out, B.C._tn_scalar_to_tensor(_reciprocal(n * d)))


# --- the primitives' meta steps ------------------------------------------------------------------

def _launch(op, x, out_sizes, out_dtype, *args):
    out = B.empty(out_sizes, out_dtype, B.device_of(x))
    if B.numel(out_sizes):
        B.launch(op, (x, *args), (out,))
    return out


@impl("_fft_c2c")
def _fft_c2c(self, dim, normalization, forward):
    dims = [_wrap(d, len(self._tn_sizes)) for d in dim]
    return _launch("_fft_c2c", self, list(self._tn_sizes), B.dtype_of(self), dims, normalization, forward)


@impl("_fft_r2c")
def _fft_r2c(self, dim, normalization, onesided):
    dims = [_wrap(d, len(self._tn_sizes)) for d in dim]
    sizes = list(self._tn_sizes)
    if onesided:
        sizes[dims[-1]] = sizes[dims[-1]] // 2 + 1
    return _launch("_fft_r2c", self, sizes, B.dtype_of(self).to_complex(), dims, normalization, onesided)


@impl("_fft_c2r")
def _fft_c2r(self, dim, normalization, last_dim_size):
    dims = [_wrap(d, len(self._tn_sizes)) for d in dim]
    sizes = list(self._tn_sizes)
    sizes[dims[-1]] = last_dim_size
    return _launch("_fft_c2r", self, sizes, B.dtype_of(self).to_real(), dims, normalization, last_dim_size)


def _shift(x, dim, half):
    """roll by half of each dim (upstream's fftshift/ifftshift: dims wrapped, then roll, which
    wants at least one shift)."""
    nd = x.dim()
    dims = list(range(nd)) if dim is None else [B.wrap_dim(d, max(nd, 1)) for d in dim]
    if not dims:
        raise RuntimeError("`shifts` required")
    if not nd:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return x.roll([half(x.shape[d]) for d in dims], dims)


@impl("fft_fftshift")
def fft_fftshift(self, dim=None):
    return _shift(self, dim, lambda n: n // 2)


@impl("fft_ifftshift")
def fft_ifftshift(self, dim=None):
    return _shift(self, dim, lambda n: (n + 1) // 2)

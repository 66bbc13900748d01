"""Factory operators: empty, zeros, ones, full, arange, linspace, logspace, eye, scalar_tensor,
tril_indices/triu_indices, empty_permuted, *_like.
"""

from __future__ import annotations

import math
import numbers
import struct
from .. import base as B
from .. import impl
from ..elementwise.math import _FUSED_DTYPES, _num


D = B.door


def _dev(device):
    return device if device is not None else B.CPU


# Host packing formats for building small tensors from Python values.
PACK = {
    "float32": "f", "float64": "d", "int64": "q", "int32": "i", "int16": "h", "int8": "b", "uint8": "B",
    "bool": "?", "float16": "e",
}


_COMPLEX_PACK = {"complex64": "f", "complex128": "d"}  # a complex element is its two parts


def from_python_values(values, sizes, dtype, device=None):
    """A contiguous tensor of `dtype` holding flat Python `values` (already converted)."""
    name = dtype._tn_name
    if name == "bfloat16":
        raw = _f32_to_bf16_bytes(values)
    elif name in PACK:
        raw = _pack(PACK[name], values)
    elif name in _COMPLEX_PACK:
        parts = [p for v in values for p in (v.real, v.imag)]
        raw = _pack(_COMPLEX_PACK[name], parts)
    else:
        raise NotImplementedError(f"torchnative: creating {dtype} tensors from Python values is not supported yet")
    dev = _dev(device)
    if dev.type == "meta":
        return B.empty(list(sizes), dtype, dev)  # a meta tensor keeps the shape, not the values
    return B.C._tn_from_bytes(raw, list(sizes), dtype._tn_code, dev.type, dev.index or 0)


def _pack(fmt, values):
    try:
        return struct.pack(f"<{len(values)}{fmt}", *values)
    except OverflowError:
        if fmt not in "fe":
            raise
        # a finite double beyond float32's or float16's range: struct refuses it, C's conversion
        # (upstream's) gives the signed infinity
        return struct.pack(f"<{len(values)}{fmt}", *(_narrow(v, fmt) for v in values))


def _narrow(v, fmt):
    try:
        struct.pack("<" + fmt, v)
    except OverflowError:
        return math.copysign(math.inf, v)
    return v


def _f32_to_bf16_bytes(values):
    out = bytearray()
    for v in values:
        (bits,) = struct.unpack("<I", struct.pack("<f", _narrow(v, "f")))
        if math.isnan(v):
            b16 = 0x7FC0
        else:
            # round to nearest even, as c10::BFloat16 does
            b16 = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        out += struct.pack("<H", b16 & 0xFFFF)
    return bytes(out)


def wrapped_number(x):
    # numpy's scalars count as the Python number they stand for, as upstream's scalar parsing does
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        t = from_python_values([bool(x)], [], B.BOOL)
    elif isinstance(x, numbers.Integral):
        t = from_python_values([int(x)], [], B.I64)
    elif isinstance(x, numbers.Real):
        t = from_python_values([float(x)], [], B.F64)
    elif isinstance(x, numbers.Complex):
        t = from_python_values([complex(x)], [], B.T.BY_NAME["complex128"])
    else:
        raise TypeError(f"expected a number, got {type(x).__name__}")
    t._tn_wrapped_number = True
    return t


@impl("empty.memory_format")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return B.empty(size, dtype or B.default_dtype(), device)


@impl("empty_strided")
def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    # Allocate enough storage for the strided geometry, then give the fresh tensor that geometry
    # in place: the result owns its storage and is not a view, as upstream's.
    size, stride = [B.concrete(s) for s in size], [B.concrete(s) for s in stride]
    need = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(s > 0 for s in size) else 0
    itemsize = (dtype or B.default_dtype()).itemsize
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if need * itemsize >= 2**63:  # upstream's computeStorageNbytes, before any allocation
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    out = B.empty([need], dtype or B.default_dtype(), device)
    out._tn_set_geometry(list(size), list(stride), 0)
    return out


@impl("fill_.Scalar")
def fill_(self, value):
    B.launch("fill_.Scalar", (self, value), (self,))
    self._tn_bump_version()
    return self


@impl("zero_")
def zero_(self):
    return fill_(self, 0)


def _filled(size, value, dtype, device):
    t = B.empty(size, dtype, device)
    if B.numel(size):
        fill_(t, value)
    return t


@impl("zeros")
def zeros(size, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(size, 0, dtype or B.default_dtype(), device)


@impl("ones")
def ones(size, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(size, 1, dtype or B.default_dtype(), device)


@impl("full")
def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        dtype = B.result_type(fill_value)  # bool -> bool, int -> int64, float -> default dtype
    return _filled(size, fill_value, dtype, device)


@impl("scalar_tensor")
def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled([], s, dtype or B.default_dtype(), device)


def like(self, dtype=None, device=None, memory_format=None):
    """empty_like: with preserve_format (the default) in `self`'s memory order, as upstream's
    (a permuted dense tensor's strides; a random fill then draws in that order)."""
    from ..elementwise.arithmetic import _empty_like

    return _empty_like(self, dtype or B.dtype_of(self), device or B.device_of(self), memory_format)


@impl("empty_like")
def empty_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return like(self, dtype, device, memory_format)


@impl("zeros_like")
def zeros_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    t = like(self, dtype, device, memory_format)
    return fill_(t, 0) if B.numel(self._tn_sizes) else t


@impl("ones_like")
def ones_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    t = like(self, dtype, device, memory_format)
    return fill_(t, 1) if B.numel(self._tn_sizes) else t


@impl("full_like")
def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    t = like(self, dtype, device, memory_format)
    return fill_(t, fill_value) if B.numel(self._tn_sizes) else t


def _arange_len(start, end, step, dtype):
    """arange's length as upstream's arange_out computes it (RangeFactories.cpp): the checks on the
    arguments as given; for int64 with a float argument the bounds and step are truncated to
    integers first (a step that truncates to 0 is a ValueError), and the length is
    ceil((end - start) / step) of those."""
    if dtype is B.BOOL:
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(float(v)) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        return max(0, -((start - end) // step))
    if dtype is B.I64:
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    return max(0, math.ceil((end - start) / step))


@impl("arange.start_step")
def arange_start_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        dtype = B.I64 if all(isinstance(v, int) for v in (start, end, step)) else B.default_dtype()
    n = _arange_len(start, end, step, dtype)
    out = B.empty([n], dtype, device)
    if n:
        B.launch("arange.start_out", (start, end, step, out), (out,))
    return out


@impl("arange")
def arange(end, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype, layout, device, pin_memory)


@impl("arange.start")
def arange_start(start, end, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype, layout, device, pin_memory)


@impl("arange.start_out")
def arange_start_out(start, end, step=1, out=None):
    """upstream's arange_out: the values in out's dtype, written in order into out, which is
    resized only when its number of elements differs (a 0-dim out of one element stays 0-dim)."""
    vals = B.call("arange.start_step", start, end, step, B.dtype_of(out), device=B.device_of(out))
    n, have = B.numel(vals._tn_sizes), B.numel(out._tn_sizes)
    if have != n:
        if have:
            import warnings

            warnings.warn(f"The number of elements in the out tensor of shape {list(out._tn_sizes)} is {have} which "
                          f"does not match the computed number of elements {n}. Note that this may occur as a result "
                          f"of rounding error. The out tensor will be resized to a tensor of shape ({n},).")
        B.door("resize_", out, [n], None)
    B.door("copy_", out, B.door("reshape", vals, list(out._tn_sizes)), False)
    return out


@impl("arange.out")
def arange_out(end, out=None):
    return arange_start_out(0, end, 1, out=out)


@impl("range.out")
def range_out(start, end, step=1, out=None):
    # upstream's range_out (RangeFactories.cpp): inclusive of `end`, computed in the type's
    # accumulation type (double for floating types, int64 for integers) as start + i * step
    import torch

    dtype = out.dtype
    if dtype is torch.bool or dtype.is_complex:
        from ..elementwise.arithmetic import _type_name

        raise NotImplementedError(f'"range_cpu" not implemented for \'{_type_name(dtype)}\'')
    # the step and the bounds are checked as the Scalars' values, before an integer type truncates
    # them (range(0.2, 0.1) of int64 is inconsistent though both bounds truncate to 0)
    xs, xe, xst = float(start), float(end), float(step)
    if not (xst > 0 or xst < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xs) and math.isfinite(xe)):
        raise RuntimeError(f"unsupported range: {xs:g} -> {xe:g}")
    if not ((xst > 0 and xe >= xs) or (xst < 0 and xe <= xs)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if not dtype.is_floating_point:
        xs, xe, xst = (_to_int64(v) for v in (start, end, step))
        if xst == 0:  # a fractional step truncated to 0: upstream divides by it (SIGFPE); we raise
            raise RuntimeError("step must be nonzero")
    size = int((xe - xs) / xst + 1) if dtype.is_floating_point else int((xe - xs) / xst) + 1
    acc = torch.float64 if dtype.is_floating_point else torch.int64
    values = B.door("add.Scalar", B.door("mul.Scalar", B.call("arange", size, acc, device=out.device), xst), xs, 1)
    if list(out.shape) != [size]:
        B.door("resize_", out, [size], None)
    return B.door("copy_", out, values, False)


def _to_int64(v):
    # c10::Scalar::to<int64_t>: truncation, refused where the value does not fit
    iv = int(v)
    if not -(2**63) <= iv < 2**63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return iv


@impl("range.out_")
def range_out_default_step(start, end, out=None):
    return range_out(start, end, 1, out=out)


@impl("range.step")
def range_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    return range_out(start, end, step, out=B.empty([0], dtype or B.default_dtype(), device))


@impl("range")
def range_(start, end, dtype=None, layout=None, device=None, pin_memory=None):
    return range_step(start, end, 1, dtype, layout, device, pin_memory)


@impl("linspace")
def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    out = B.empty([steps], dtype or B.default_dtype(), device)
    if steps:
        for v in (start, end):
            _check_scalar_fits(v, B.dtype_of(out))
        B.C._aten_dispatch("linspace.out", start, end, steps, out)
    return out


_FLOAT_MAX = {"float32": 3.4028234663852886e38, "float16": 65504.0, "bfloat16": 3.3895313892515355e38}


def _check_scalar_fits(v, dtype):
    """Scalar::to<scalar_t>'s checked conversion: a finite real outside the dtype's range (an
    integer dtype: also NaN and the infinities) overflows; a negative integer wraps into an
    unsigned type while its magnitude fits."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return
    name = dtype._tn_name
    if name in _FLOAT_MAX:
        bad = math.isfinite(v) and abs(v) > _FLOAT_MAX[name]
    elif name in B.INT_RANGE:
        lo, hi = B.INT_RANGE[name]
        if isinstance(v, float):
            bad = not math.isfinite(v) or not lo <= v <= hi
        else:
            bad = v > hi or (-v > hi if lo == 0 else v < lo)
    else:
        bad = False
    if bad:
        raise RuntimeError(f"value cannot be converted to type {B.cpp_type_name(dtype)} without overflow")


@impl("eye")
def eye(n, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype, layout, device, pin_memory)


@impl("eye.m")
def eye_m(n, m, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    out = zeros([n, m], dtype, layout, device)
    k = min(n, m)
    if k:
        diag = out._tn_as_strided([k], [m + 1], 0, None)
        fill_(diag, 1)
    return out


# new_*: factories that default dtype and device to self's (TensorFactories.cpp).
def _new_opts(self, dtype, device):
    return dtype or B.dtype_of(self), device or B.device_of(self)


@impl("new_empty")
def new_empty(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    return B.empty(size, *_new_opts(self, dtype, device))


@impl("new_zeros")
def new_zeros(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(size, 0, *_new_opts(self, dtype, device))


@impl("new_ones")
def new_ones(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(size, 1, *_new_opts(self, dtype, device))


@impl("new_full")
def new_full(self, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(size, fill_value, *_new_opts(self, dtype, device))


@impl("new_empty_strided")
def new_empty_strided(self, size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    d, dev = _new_opts(self, dtype, device)
    return empty_strided(size, stride, d, None, dev, None)


@impl("logspace")
def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    start, end = _integral_bounds(start, end, dtype or B.default_dtype())
    exps = B.call("linspace", start, end, steps, B.F64, device=device)
    out = D("pow.Scalar", base, exps)
    return B.call("_to_copy", out, dtype or B.default_dtype())


def _integral_bounds(start, end, dtype):
    """upstream's linspace and logspace kernels convert start and end to an integral output type
    first (`Scalar::to<scalar_t>`: truncation), then step in double between those."""
    if dtype.is_floating_point or dtype.is_complex or isinstance(start, complex) or isinstance(end, complex):
        return start, end
    return int(start), int(end)


@impl("linspace.out")
def _linspace_out(start, end, steps, out):
    """upstream's LinspaceKernel: the first half counts up from start, the second half down
    from end, with step = (end - start) / (steps - 1) in the output's (or double's) type."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if B.numel(out._tn_sizes) != steps:  # upstream's linspace_out resizes (no warning)
        D("resize_", out, [steps], None)
    if not steps:
        return out
    d = B.dtype_of(out)
    start, end = _integral_bounds(start, end, d)
    work = d if d.is_floating_point else B.F64
    dev = B.device_of(out)
    if steps == 1:
        return D("fill_.Scalar", out, start)
    if (d in _FUSED_DTYPES and list(out._tn_sizes) == [steps] and not isinstance(start, complex)
            and not isinstance(end, complex) and B.C._tn_has_kernel("linspace.out", out._tn_device_key)):
        B.launch("linspace.out", (start, end, steps), (out,))  # upstream's rounding, bit for bit
        out._tn_bump_version()
        return out
    step = (float(end) - float(start)) / (steps - 1)
    idx = B.call("arange", steps, work, device=dev)
    lo = D("add.Tensor", D("mul.Tensor", idx, _num(step)), _num(float(start)), 1)
    rev = D("sub.Tensor", _num(float(steps - 1)), idx, 1)
    hi = D("sub.Tensor", _num(float(end)), D("mul.Tensor", rev, _num(step)), 1)
    half = steps // 2
    val = D("where.self", D("lt.Scalar", idx, half), lo, hi)
    return D("copy_", out, val, False)


def _zero_dim_bounds(name, start, end):
    """The Tensor overloads of linspace/logspace take 0-dim bounds only."""
    bad = [f"{k} with {len(t._tn_sizes)} dimension(s)" for k, t in (("start", start), ("end", end))
           if isinstance(t, B.C.TensorBase) and len(t._tn_sizes)]
    if bad:
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {' and '.join(bad)}.")


@impl("linspace.Scalar_Tensor")
def linspace_scalar_tensor(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    _zero_dim_bounds("linspace", start, end)

    return torch.linspace(start, end.item(), steps, dtype=dtype, device=device)


@impl("linspace.Tensor_Scalar")
def linspace_tensor_scalar(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    _zero_dim_bounds("linspace", start, end)

    return torch.linspace(start.item(), end, steps, dtype=dtype, device=device)


@impl("linspace.Tensor_Tensor")
def linspace_tensor_tensor(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    _zero_dim_bounds("linspace", start, end)

    return torch.linspace(start.item(), end.item(), steps, dtype=dtype, device=device)


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


def _logspace_tensors(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    _zero_dim_bounds("logspace", start, end)
    s = start.item() if isinstance(start, torch.Tensor) else start
    e = end.item() if isinstance(end, torch.Tensor) else end
    return torch.logspace(s, e, steps, base, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


for _name in ("logspace.Tensor_Tensor", "logspace.Tensor_Scalar", "logspace.Scalar_Tensor"):
    impl(_name)(_logspace_tensors)


@impl("empty_permuted")
def empty_permuted(size, physical_layout, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    if len(size) != len(physical_layout):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout")
    seen = set()
    for i, p in enumerate(physical_layout):
        if not 0 <= p < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got {p} at "
                               f"index {i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if p in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(p)
    phys = torch.empty([size[p] for p in physical_layout], dtype=dtype, device=device)
    inverse = [0] * len(physical_layout)
    for i, p in enumerate(physical_layout):
        inverse[p] = i
    return phys.permute(inverse)

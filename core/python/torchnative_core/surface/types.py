"""The small value types of `torch._C`: dtype, layout, memory_format, qscheme, device, Size,
finfo and iinfo. Upstream defines them in C++ (torch/csrc/Dtype.cpp, Device.cpp, Size.cpp,
TypeInfo.cpp); these keep the same names, reprs, attributes and pickling behaviour."""

from __future__ import annotations

# (name, ScalarType code, itemsize, is_floating_point, is_complex, is_signed, aliases) in the
# order of upstream's c10/core/ScalarType.h. Codes are upstream's ScalarType numbering.
_DTYPES = [
    ("uint8", 0, 1, False, False, False, ()),
    ("int8", 1, 1, False, False, True, ()),
    ("int16", 2, 2, False, False, True, ("short",)),
    ("int32", 3, 4, False, False, True, ("int",)),
    ("int64", 4, 8, False, False, True, ("long",)),
    ("float16", 5, 2, True, False, True, ("half",)),
    ("float32", 6, 4, True, False, True, ("float",)),
    ("float64", 7, 8, True, False, True, ("double",)),
    ("complex32", 8, 4, False, True, True, ("chalf",)),
    ("complex64", 9, 8, False, True, True, ("cfloat",)),
    ("complex128", 10, 16, False, True, True, ("cdouble",)),
    ("bool", 11, 1, False, False, False, ()),
    ("qint8", 12, 1, False, False, True, ()),
    ("quint8", 13, 1, False, False, False, ()),
    ("qint32", 14, 4, False, False, True, ()),
    ("bfloat16", 15, 2, True, False, True, ()),
    ("quint4x2", 16, 1, False, False, False, ()),
    ("quint2x4", 17, 1, False, False, False, ()),
    ("bits1x8", 18, 1, False, False, False, ()),
    ("bits2x4", 19, 1, False, False, False, ()),
    ("bits4x2", 20, 1, False, False, False, ()),
    ("bits8", 21, 1, False, False, False, ()),
    ("bits16", 22, 2, False, False, False, ()),
    ("float8_e5m2", 23, 1, True, False, True, ()),
    ("float8_e4m3fn", 24, 1, True, False, True, ()),
    ("float8_e5m2fnuz", 25, 1, True, False, True, ()),
    ("float8_e4m3fnuz", 26, 1, True, False, True, ()),
    ("uint16", 27, 2, False, False, False, ()),
    ("uint32", 28, 4, False, False, False, ()),
    ("uint64", 29, 8, False, False, False, ()),
    ("uint1", 30, 1, False, False, False, ()),
    ("uint2", 31, 1, False, False, False, ()),
    ("uint3", 32, 1, False, False, False, ()),
    ("uint4", 33, 1, False, False, False, ()),
    ("uint5", 34, 1, False, False, False, ()),
    ("uint6", 35, 1, False, False, False, ()),
    ("uint7", 36, 1, False, False, False, ()),
    ("int1", 37, 1, False, False, True, ()),
    ("int2", 38, 1, False, False, True, ()),
    ("int3", 39, 1, False, False, True, ()),
    ("int4", 40, 1, False, False, True, ()),
    ("int5", 41, 1, False, False, True, ()),
    ("int6", 42, 1, False, False, True, ()),
    ("int7", 43, 1, False, False, True, ()),
    ("float8_e8m0fnu", 44, 1, True, False, False, ()),
    ("float4_e2m1fn_x2", 45, 1, False, False, False, ()),
]


# dtype.abbr and the order of torch._C._get_all_dtypes(), as upstream 2.13.0 reports them
# (read from the reference build; quantized dtypes are not listed there).
ABBR = {
    "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float16": "f16",
    "float32": "f32", "float64": "f64", "complex32": "c32", "complex64": "c64", "complex128": "c128",
    "bool": "b8", "bfloat16": "bf16", "bits1x8": "b1x8", "bits2x4": "b2x4", "bits4x2": "b4x2", "bits8": "b8x1",
    "bits16": "b16x1", "float8_e5m2": "f8e5m2", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2fnuz": "f8e5m2fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float8_e8m0fnu": "f8e8m0fnu", "float4_e2m1fn_x2": "f4e2m1fnx2",
}


class dtype:
    """`torch.dtype`. Instances are singletons created once, like upstream's THPDtype."""

    __slots__ = ("_tn_code", "_tn_name", "is_floating_point", "is_complex", "is_signed", "itemsize", "abbr",
                 "__weakref__")

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.dtype' instances")

    @classmethod
    def _make(cls, name, code, itemsize, is_float, is_complex, is_signed):
        self = object.__new__(cls)
        self._tn_code = code
        self._tn_name = name
        self.is_floating_point = is_float
        self.is_complex = is_complex
        self.is_signed = is_signed
        self.itemsize = itemsize
        self.abbr = ABBR.get(name, name)
        return self

    def __repr__(self):
        return "torch." + self._tn_name

    def __reduce__(self):
        return self._tn_name

    def to_real(self):
        real = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}.get(self._tn_name)
        return BY_NAME[real] if real else self

    def to_complex(self):
        cx = {"float16": "complex32", "float32": "complex64", "float64": "complex128", "bfloat16": "complex64"}.get(self._tn_name)
        return BY_NAME[cx] if cx else self


BY_CODE: dict[int, dtype] = {}
BY_NAME: dict[str, dtype] = {}
for _name, _code, _size, _fl, _cx, _sg, _aliases in _DTYPES:
    _d = dtype._make(_name, _code, _size, _fl, _cx, _sg)
    BY_CODE[_code] = _d
    BY_NAME[_name] = _d
    for _a in _aliases:
        BY_NAME[_a] = _d


class _Named:
    """Shared body of layout / memory_format / qscheme: a named singleton printed as torch.NAME."""

    __slots__ = ("_tn_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"cannot create 'torch.{cls.__name__}' instances")

    @classmethod
    def _make(cls, name):
        self = object.__new__(cls)
        self._tn_name = name
        return self

    def __repr__(self):
        return "torch." + self._tn_name

    def __reduce__(self):
        return self._tn_name


class layout(_Named):
    __slots__ = ()


class memory_format(_Named):
    __slots__ = ()


class qscheme(_Named):
    __slots__ = ()


LAYOUTS = {n: layout._make(n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged")}
MEMORY_FORMATS = {n: memory_format._make(n) for n in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")}
# what the core's own clones ask for where they need a contiguous result (clone's default,
# memory_format=None, keeps the input's layout, as upstream's preserve_format)
CONTIGUOUS_FORMAT = MEMORY_FORMATS["contiguous_format"]
QSCHEMES = {
    n: qscheme._make(n)
    for n in ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams")
}


class device:
    """`torch.device`: a (type, index) pair. Any device key a backend registered is a valid type."""

    __slots__ = ("type", "index", "__weakref__")

    # Device types upstream knows without a backend; plugins add theirs (see registry).
    _known_types = {"cpu", "cuda", "mps", "meta", "xpu", "mtia", "hpu", "xla", "lazy", "ipu", "ve", "fpga", "maia",
                    "vulkan", "privateuseone", "npu", "mkldnn", "opengl", "opencl", "ideep", "hip", "msnpu"}

    def __new__(cls, type=None, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' must be str, not torch.device")
            return type
        self = object.__new__(cls)
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            # torch.device(0) means the current accelerator; without one upstream says:
            raise RuntimeError("Found no accelerator device, cannot construct device from an ordinal")
        if not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got ({_typename(type)}), but expected one of:\n"
                " * (torch.device device)\n * (str type, int index = -1)\n"
            )
        spec = type
        if ":" in spec:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {spec}")
            spec, _, idx = spec.partition(":")
            if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if spec not in cls._known_types:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
                f"vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {type}"
            )
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"device(): argument 'index' must be int, not {_typename(index)}")
            if index < 0:
                if index == -1:
                    index = None
                else:
                    raise RuntimeError(f"Device index must be -1 or non-negative, got {index}")
        if spec == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be -1 or zero, got {index}")
        object.__setattr__(self, "type", spec)
        object.__setattr__(self, "index", index)
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type,) if self.index is None else (self.type, self.index))

    def __enter__(self):
        # upstream pushes a torch.utils._device.DeviceContext mode and returns the device
        from torch.utils._device import DeviceContext

        ctx = DeviceContext(self)
        ctx.__enter__()
        _DEVICE_CONTEXTS.append(ctx)
        return self

    def __exit__(self, *exc):
        _DEVICE_CONTEXTS.pop().__exit__(*exc)
        return None


_DEVICE_CONTEXTS: list = []  # the modes `with torch.device(...)` entered, innermost last


def _typename(x):
    return type(x).__name__


class Size(tuple):
    """`torch.Size`: a tuple of ints."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = tuple(sizes)
        out = []
        for s in items:
            if hasattr(s, "__index__") and not isinstance(s, bool):
                out.append(s.__index__() if not isinstance(s, int) else s)
            elif type(s).__name__ in ("SymInt",):
                out.append(s)
            else:
                # A 0-dim integer tensor is accepted as upstream does.
                item = getattr(s, "item", None)
                if item is not None and getattr(s, "dim", lambda: 1)() == 0:
                    out.append(int(item()))
                    continue
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {len(out)} is '{_typename(s)}')")
        return tuple.__new__(cls, out)

    def __repr__(self):
        return "torch.Size([" + ", ".join(repr(s) for s in self) + "])"

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __reduce__(self):
        return (Size, (tuple(self),))


class iinfo:
    """`torch.iinfo`."""

    def __init__(self, type):
        if not isinstance(type, dtype) or type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.dtype'")
        name = type._tn_name
        if name == "bool":
            self.bits, self.min, self.max = 8, 0, 1
        else:
            self.bits = type.itemsize * 8
            if type.is_signed:
                self.min, self.max = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
            else:
                self.min, self.max = 0, (1 << self.bits) - 1
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# (bits, eps, max, tiny/smallest_normal, resolution) of the floating types, from IEEE-754 and
# bfloat16/float8 definitions (the same constants upstream reads from std::numeric_limits).
_FINFO = {
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14, 0.001),
    "bfloat16": (16, 2.0**-7, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
    "float32": (32, 2.0**-23, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
    "float64": (64, 2.0**-52, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
    "float8_e5m2": (8, 0.25, 57344.0, 6.103515625e-05, 1.0),
    "float8_e4m3fn": (8, 0.125, 448.0, 0.015625, 1.0),
    "float8_e5m2fnuz": (8, 0.125, 57344.0, 3.0517578125e-05, 1.0),
    "float8_e4m3fnuz": (8, 0.0625, 240.0, 0.0078125, 1.0),
    "float8_e8m0fnu": (8, 1.0, 1.7014118346046923e38, 5.877471754111438e-39, 1.0),
}


class finfo:
    """`torch.finfo`."""

    def __init__(self, type=None):
        if type is None:
            from torch import get_default_dtype

            type = get_default_dtype()
        if not isinstance(type, dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not {_typename(type)}")
        name = type._tn_name
        real = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}.get(name, name)
        if real not in _FINFO:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        bits, eps, mx, tiny, res = _FINFO[real]
        self.bits = bits  # upstream: a complex dtype reports its real part's finfo, bits included
        self.eps = eps
        self.max = mx
        self.min = -mx if real != "float8_e8m0fnu" else tiny
        self.tiny = tiny
        self.smallest_normal = tiny
        self.resolution = res
        self.dtype = real

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


def _get_all_dtypes():
    return [BY_NAME[n] for n in ABBR]


def install(C):
    C._get_all_dtypes = _get_all_dtypes
    C.dtype = dtype
    C.layout = layout
    C.memory_format = memory_format
    C.qscheme = qscheme
    C.device = device
    C.Size = Size
    C.finfo = finfo
    C.iinfo = iinfo
    for name, d in BY_NAME.items():
        setattr(C, name, d)
    for table in (LAYOUTS, MEMORY_FORMATS, QSCHEMES):
        for name, v in table.items():
            setattr(C, name, v)
    for cls in (dtype, layout, memory_format, qscheme, device, Size, finfo, iinfo):
        cls.__module__ = "torch"


"""`torch.*` functions upstream binds by hand (python_torch_functions_manual.cpp,
tensor_new.cpp): tensor construction from Python data and numpy, `nonzero`, `numel`."""

from __future__ import annotations

from ..surface import types as T

C = None


def _door(op, *args):
    return C._aten_dispatch(op, *args)


def _infer_dtype(flat):
    """tensor_new.cpp's infer_scalar_type for Python values."""
    kinds = set()
    for v in flat:
        if isinstance(v, bool):
            kinds.add("b")
        elif isinstance(v, int):
            kinds.add("i")
        elif isinstance(v, float):
            kinds.add("f")
        elif isinstance(v, complex):
            kinds.add("c")
        elif isinstance(v, C.TensorBase):
            kinds.add("t:" + T.BY_CODE[v._tn_dtype_code]._tn_name)
        else:
            raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
    if "c" in kinds:
        return C._get_default_dtype().to_complex()
    if "f" in kinds:
        return C._get_default_dtype()
    tensor_kinds = [k[2:] for k in kinds if k.startswith("t:")]
    if tensor_kinds:
        from ..ops.base import promote_types

        d = None
        for k in tensor_kinds:
            d = promote_types(d, T.BY_NAME[k])
        if "i" in kinds:
            d = promote_types(d, T.BY_NAME["int64"])
        return d
    if "i" in kinds:
        return T.BY_NAME["int64"]
    if "b" in kinds:
        return T.BY_NAME["bool"]
    return C._get_default_dtype()


def _flatten(data, depth=0):
    """(flat values, shape) of nested sequences, with upstream's ragged-shape errors."""
    if isinstance(data, C.TensorBase):
        if data.dim() == 0:
            return [data.item()], []
        return _flatten(data.tolist(), depth)
    if _is_numpy(data):
        return _flatten(data.tolist(), depth)
    if isinstance(data, (list, tuple)):
        if not data:
            return [], [0]
        parts = [_flatten(e, depth + 1) for e in data]
        shape0 = parts[0][1]
        for i, (_, sh) in enumerate(parts):
            if sh != shape0:
                raise ValueError(f"expected sequence of length {shape0[0] if shape0 else 0} at dim {depth + 1} (got {sh[0] if sh else 0})")
        return [v for p, _ in parts for v in p], [len(data)] + shape0
    if isinstance(data, (bool, int, float, complex)):
        return [data], []
    if isinstance(data, str):
        raise ValueError("too many dimensions 'str'")
    if hasattr(data, "__index__"):
        return [data.__index__()], []
    if hasattr(data, "__float__"):
        return [float(data)], []
    raise TypeError(f"new(): invalid data type '{type(data).__name__}'")


def _is_numpy(x):
    return type(x).__module__ == "numpy" and hasattr(x, "__array_interface__")


def _convert(v, dtype):
    """A Python number as upstream's tensor constructor stores it in `dtype` (its store_scalar with
    c10::checked_convert): floats narrow to the format's infinities, integers must fit."""
    if dtype.is_complex:
        return complex(v)
    if dtype.is_floating_point:
        return float(v)
    if dtype is T.BY_NAME["bool"]:
        return bool(v)
    name = dtype._tn_name
    from ..ops.base import INT_RANGE

    lo, hi = INT_RANGE[name]
    overflow = f"value cannot be converted to type {name} without overflow"
    if isinstance(v, float):
        # from a double: NaN, the infinities and values outside [lowest, max] overflow; the rest
        # truncate toward zero (2**63 passes the check against int64's max as a double and lands,
        # as x86's conversion makes it, on INT64_MIN)
        if v != v or v < lo or v > float(hi):
            raise RuntimeError(overflow)
        i = int(v)
        return lo if i > hi else i
    i = int(v)
    if not -(2**63) <= i < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if lo == 0:
        # a negative integer wraps into an unsigned type (as `a - b` on uint8 does) while its
        # magnitude fits
        if i > hi or -i > hi:
            raise RuntimeError(overflow)
        return i & hi
    if not lo <= i <= hi:
        raise RuntimeError(overflow)
    return i


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if pin_memory:
        from ..ops.shape.metadata import NO_PINNING

        raise RuntimeError(NO_PINNING)
    if C._len_torch_dispatch_stack():
        # As upstream's internal_new_from_data: the data becomes a tensor with Python dispatch
        # off, and a mode sees only the `lift_fresh` of the result (FakeTensorMode fakes it there).
        with C._DisableTorchDispatch():
            out = _tensor_from_data(data, dtype, device)
        out = _door("detach_", _door("lift_fresh", out))  # tensor_ctor's detach_ (a leaf)
    else:
        out = _tensor_from_data(data, dtype, device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _tensor_from_data(data, dtype, device):
    from ..ops.factories.tensors import from_python_values
    from ..surface.types import dtype as dtype_type
    from .functions import _python_type_as_dtype

    dtype = _python_type_as_dtype(dtype)
    if dtype is not None and not isinstance(dtype, dtype_type):
        raise TypeError(f"tensor(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")

    if isinstance(data, C.TensorBase):
        import warnings

        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        out = _door("_to_copy", data, dtype, None, _dev(device), None, False, None)
        out = _door("detach", out) if out is data else out
    elif _is_numpy(data):
        import numpy as np

        out = from_numpy(np.array(data))  # a copy; numpy scalars become 0-dim arrays of their dtype
        out = _door("_to_copy", out, dtype, None, _dev(device), None, False, None)
    else:
        flat, shape = _flatten(data)
        d = dtype if dtype is not None else _infer_dtype(flat)
        vals = [_convert(v, d) for v in flat]
        out = from_python_values(vals, shape, d, _dev(device))
    return out


def _dev(device):
    if device is None or isinstance(device, T.device):
        return device
    return T.device(device) if isinstance(device, str) else T.device("cpu", device)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, C.TensorBase):
        return _door("to.dtype_layout", data, dtype, None, _dev(device), None, False, False, None)
    if _is_numpy(data):
        import numpy as np

        t = from_numpy(np.asarray(data))
        return _door("to.dtype_layout", t, dtype, None, _dev(device), None, False, False, None)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    from ..surface import storage

    if storage.is_storage(obj):
        obj = storage.tensor_over_storage(obj, dtype)  # shares the storage, as upstream's asarray does
        if copy:
            obj = _door("clone", obj, T.CONTIGUOUS_FORMAT)
    if isinstance(obj, C.TensorBase) and copy:
        out = _door("_to_copy", obj, dtype, None, _dev(device), None, False, None)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


_NP_TO_TORCH = {"float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64", "int32": "int32",
                "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool", "uint16": "uint16",
                "uint32": "uint32", "uint64": "uint64", "complex64": "complex64", "complex128": "complex128"}


def from_numpy(arr):
    import numpy as np

    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    name = _NP_TO_TORCH.get(arr.dtype.name)
    if name is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{arr.dtype.name}. The only supported types are: float64, float32, "
            "float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
        )
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with array.copy().) "
        )
    if not arr.flags.writeable:
        import warnings

        warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors.")
    d = T.BY_NAME[name]
    itemsize = arr.dtype.itemsize
    strides = [s // itemsize for s in arr.strides]
    nbytes = (sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + itemsize) if arr.size else 0
    return C._tn_from_address(arr.__array_interface__["data"][0], nbytes, list(arr.shape), strides, d._tn_code, arr)


def nonzero(input, *, out=None, as_tuple=False):
    if out is None:
        return input.nonzero(as_tuple=as_tuple)
    if as_tuple:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    return _door("nonzero.out", input, out)


def numel(input):
    return input.numel()


# Tensor-kind queries: torchnative tensors are never lazy-conjugated, lazily negated or zero
# tensors (inference tensors and functional wrappers are real: functionalize/ makes the latter).
def is_conj(t):
    return False


def is_neg(t):
    return False


def _is_zerotensor(t):
    return False


def is_inference(t):
    return t._tn_inference


def _parse_to(*args, **kwargs):
    """`torch._C._nn._parse_to` (Module.to's parser): (device, dtype, non_blocking, memory_format)."""
    from .tensor_methods import _parse_to as parse

    dtype, device, _copy, non_blocking, memory_format = parse(None, args, dict(kwargs))
    return device, dtype, non_blocking, memory_format


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
          requires_grad=False):
    """torch.range: bound by hand upstream too (python_torch_functions_manual.cpp), with its
    deprecation warning; `end` is included."""
    import warnings

    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if out is not None:
        return _door("range.out", start, end, step, out)
    r = _door("range.step", start, end, step, dtype, layout, device, pin_memory)
    return r.requires_grad_() if requires_grad else r


def install(C_, VF) -> None:
    global C
    C = C_
    from ..functionalize import _is_functional_tensor, _is_functional_tensor_base

    for fn in (_is_functional_tensor, _is_functional_tensor_base, is_conj, is_neg, _is_zerotensor, is_inference):
        setattr(C_.TensorBase, fn.__name__, lambda self, fn=fn: fn(self))
    from ..surface.storage import frombuffer
    from ..surface.torch_function import with_modes

    for fn in (tensor, as_tensor, asarray, from_numpy, frombuffer, nonzero, numel, is_conj, is_neg, _is_zerotensor,
               is_inference, range):
        fn.__module__ = "torch._C._VariableFunctions"
        setattr(type(VF), fn.__name__, staticmethod(with_modes(fn)))

"""Tensor members that upstream binds by hand (torch/csrc/autograd/python_variable.cpp and
python_variable_methods.cpp) rather than from native_functions.yaml: metadata properties,
conversions to Python (`item`, `tolist`, `numpy`), `to`/`type`, and the dtype shortcuts."""

from __future__ import annotations

import struct

from ..surface import dispatch_keys as _dispatch_keys
from ..surface import torch_function as _TF
from ..surface import types as T
from ..surface.torch_function import overrides_torch_dispatch

C = None

_UNPACK = {"float32": "f", "float64": "d", "int64": "q", "int32": "i", "int16": "h", "int8": "b", "uint8": "B",
           "bool": "?", "float16": "e", "uint16": "H", "uint32": "I", "uint64": "Q"}

_LEGACY_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


_STRIDED = [None]  # torch.strided, once the layouts exist
_DTYPE_TYPE = [None]  # torch.dtype


def _door(op, *args):
    return C._aten_dispatch(op, *args)


def host_values(t):
    """The elements of `t` as a flat list of Python numbers, in row-major order."""
    if t._tn_batched:
        from ..functorch.rules import item_error

        raise item_error()
    if T.BY_CODE[t._tn_dtype_code].is_complex:  # read as (real, imag) pairs of the real dtype
        pairs = host_values(_door("view_as_real", t))
        return [complex(re, im) for re, im in zip(pairs[::2], pairs[1::2])]
    if t._tn_device_key != "cpu":
        t = _door("_to_copy", t, None, None, T.device("cpu"), None, False, None)
    t = _door("contiguous", t, None)
    raw = C._tn_to_bytes(t)
    name = T.BY_CODE[t._tn_dtype_code]._tn_name
    n = len(raw) // T.BY_CODE[t._tn_dtype_code].itemsize
    if name == "bfloat16":
        halves = struct.unpack(f"<{n}H", raw)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    if name not in _UNPACK:
        raise NotImplementedError(f"torchnative: reading {name} tensors is not supported yet")
    return list(struct.unpack(f"<{n}{_UNPACK[name]}", raw))


def _nest(flat, sizes):
    if not sizes:
        return flat[0]
    if len(sizes) == 1:
        return list(flat)
    step = len(flat) // sizes[0] if sizes[0] else 0
    return [_nest(flat[i * step : (i + 1) * step], sizes[1:]) for i in range(sizes[0])]


def wrapper_tensor(cls, size, strides, storage_offset, dtype, device, requires_grad=False):
    """A `cls` tensor of the given geometry over a fresh meta storage, reporting `device`."""
    size = [int(s) for s in size]
    offset = int(storage_offset or 0)
    if strides is None:
        strides, step = [], 1
        for s in reversed(size):
            strides.insert(0, step)
            step *= max(s, 1)
    strides = [int(s) for s in strides]
    need = offset + 1 + sum((s - 1) * st for s, st in zip(size, strides)) if all(s > 0 for s in size) else offset
    out = C._tn_empty([need], dtype._tn_code, "meta")._tn_alias(cls)
    out._tn_set_geometry(size, strides, offset)
    dev = T.device(device) if device is not None else T.device("cpu")
    if dev.type != "meta":
        out.__dict__["_tn_wrapper_device"] = dev
    out._tn_requires_grad = bool(requires_grad)
    return out


def install(C_) -> None:
    global C
    C = C_
    TB = C.TensorBase
    Size = T.Size
    _STRIDED[0] = T.LAYOUTS["strided"]
    _DTYPE_TYPE[0] = T.dtype

    def _size_of(sizes, _new=tuple.__new__):
        # `_tn_sizes` is a list of ints, which Size's checks accept unchanged: skip them
        return _new(Size, sizes)

    def size(self, dim=None):
        sizes = self._tn_sizes
        if dim is None:
            return _size_of(sizes)
        if type(dim) is int and -len(sizes) <= dim < len(sizes):
            return sizes[dim]
        if isinstance(dim, str):
            raise NotImplementedError("named dimensions are not supported by torchnative")
        return self._tn_sizes[_wrap(dim, len(self._tn_sizes))]

    def stride(self, dim=None):
        if dim is None:
            return tuple(self._tn_strides)
        return self._tn_strides[_wrap(dim, len(self._tn_strides))]

    def _wrap(dim, n):
        from ..ops.base import wrap_dim

        return wrap_dim(dim, n)

    def item(self):
        n = 1
        for s in self._tn_sizes:
            n *= s
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        return _read_scalar(self, "item")

    def tolist(self):
        return _nest(host_values(self), list(self._tn_sizes))

    def numpy(self, *, force=False):
        import numpy as np

        if self._tn_device_key != "cpu":
            raise TypeError(
                f"can't convert {self._tn_device_key} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
            )
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        dt = T.BY_CODE[self._tn_dtype_code]
        np_dtype = {"bfloat16": None}.get(dt._tn_name, dt._tn_name)
        if np_dtype is None:
            raise TypeError("Got unsupported ScalarType BFloat16")
        itemsize = dt.itemsize
        holder = _ArrayHolder(self, np_dtype, itemsize)
        return np.asarray(holder)

    def is_contiguous(self, memory_format=None):
        name = "contiguous_format" if memory_format is None else str(memory_format).replace("torch.", "")
        if name == "contiguous_format":
            return self._tn_is_contiguous()
        order = {"channels_last": (4, (1, 3, 2, 0)), "channels_last_3d": (5, (1, 4, 3, 2, 0))}.get(name)
        if order is None:  # preserve_format: the default contiguity, as upstream answers
            return self._tn_is_contiguous()
        # c10's compute_channels_last_contiguous_{2,3}d: dims in channels-last order, size-1 skipped
        ndim, dims = order
        sizes, strides = self._tn_sizes, self._tn_strides
        if len(sizes) != ndim:
            return False
        expected = 1
        for d in dims:
            if sizes[d] != 1:
                if strides[d] != expected:
                    return False
                expected *= sizes[d]
        return True

    def _dtype(self):
        return T.BY_CODE[self._tn_dtype_code]

    devices = {}  # (key, index) -> torch.device: immutable, so one object serves every tensor

    def _device(self):
        wrapped = getattr(self, "__dict__", None)
        if wrapped and "_tn_wrapper_device" in wrapped:  # a wrapper tensor (no data of its own)
            return wrapped["_tn_wrapper_device"]
        key = self._tn_device_key
        index = None if key in ("cpu", "meta") else self._tn_device_index
        dev = devices.get((key, index))
        if dev is None:
            dev = devices[(key, index)] = T.device(key) if index is None else T.device(key, index)
        return dev

    def _type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            d = T.BY_CODE[self._tn_dtype_code]
            prefix = "torch." if self._tn_device_key == "cpu" else f"torch.{self._tn_device_key}."
            return prefix + _LEGACY_TYPES.get(d._tn_name, d._tn_name)
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            for k, v in _LEGACY_TYPES.items():
                if v == name:
                    dtype = T.BY_NAME[k]
                    break
            else:
                raise ValueError(f"invalid type: '{dtype}'")
        return _door("to.dtype", self, dtype, non_blocking, False, None)

    def to(self, *args, **kwargs):
        # upstream's THPVariable_to: nothing asked, no call; a dtype alone is to.dtype, a device
        # and a dtype to.device, anything else to.dtype_layout with self's options filled in
        # (so a traced graph records the same overload and arguments)
        if _TF.mode_active():  # a TorchFunctionMode sees the call
            from torch.overrides import handle_torch_function

            return handle_torch_function(to, _TF._relevant_args((self, *args), kwargs), self, *args, **kwargs)
        if len(args) == 1 and not kwargs and type(args[0]) is _DTYPE_TYPE[0]:  # x.to(dtype), the common call
            return _door("to.dtype", self, args[0], False, False, None)
        dtype, device, copy, non_blocking, memory_format = _parse_to(self, args, kwargs)
        if device is None and dtype is None:
            if not copy and memory_format is None:
                return self
            return _door("to.dtype_layout", self, _dtype(self), _STRIDED[0], _device(self), None, non_blocking,
                         copy, memory_format)
        if device is None:
            return _door("to.dtype", self, dtype, non_blocking, copy, memory_format)
        if dtype is None:
            return _door("to.dtype_layout", self, _dtype(self), _STRIDED[0], device, None, non_blocking, copy,
                         memory_format)
        return _door("to.device", self, device, dtype, non_blocking, copy, memory_format)

    def cpu(self, memory_format=None):
        return _door("to.dtype_layout", self, _dtype(self), _STRIDED[0], T.device("cpu"), None, False, False,
                     memory_format)

    def dim_order(self, *, ambiguity_check=False):
        strides = self._tn_strides
        return tuple(sorted(range(len(strides)), key=lambda i: -strides[i]))

    def requires_grad_(self, requires_grad=True):  # autograd/tensor.py installs the checked one
        self._tn_requires_grad = bool(requires_grad)
        return self

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, C.TensorBase):
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
        return _door("copy_", self, src, non_blocking)

    def contiguous(self, memory_format=None):
        # upstream's binding returns an already-contiguous tensor itself without dispatching,
        # so neither modes nor traced graphs see the call
        if memory_format is None and self.is_contiguous():
            return self
        return _door("contiguous", self, memory_format)

    def nonzero(self, *, as_tuple=False):
        idx = _door("nonzero", self)
        if not as_tuple:
            return idx
        # upstream: one index tensor per dimension (a 0-dim input counts as 1-dim)
        if self.dim() == 0:
            idx = _door("nonzero", _door("unsqueeze", self, 0))
        return tuple(_door("select.int", idx, 1, i) for i in range(max(self.dim(), 1)))

    def set_(self, source=None, storage_offset=0, size=None, stride=None):
        if source is None:
            self._tn_resize([0])
            return self
        if isinstance(source, C.TensorBase):
            if source.dtype != self.dtype:
                from ..ops.base import cpp_type_name, dtype_of

                raise RuntimeError(f"Could not set tensor of type {cpp_type_name(dtype_of(source))} to a tensor of type "
                                   f"{cpp_type_name(dtype_of(self))}")
            self._tn_set_storage_from(source, list(source._tn_sizes), list(source._tn_strides), source.storage_offset())
            return self
        from ..surface.storage import set_from_storage

        return set_from_storage(self, source, storage_offset, size, stride)

    def _adjoint(self, name, conjugate):
        # upstream's `_adjoint` (TensorShape.cpp): a 0-D tensor is its own transpose; only
        # 1-D is refused. There is no conjugate bit here, so `conj` of a complex tensor copies.
        n = self.dim()
        if n == 1:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        r = self if n == 0 else _door("transpose.int", self, -2, -1)
        return _door("conj", r) if conjugate and self.is_complex() else r

    def _mT(self):
        return _adjoint(self, "mT", False)

    def _mH(self):
        return _adjoint(self, "mH", True)

    def _H(self):
        n = self.dim()
        if n not in (0, 2):
            hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
        return _adjoint(self, "H", True)

    def _T(self):
        n = self.dim()
        if n != 2 and n != 0:
            import warnings

            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor."
            )
        return _door("permute", self, list(range(n - 1, -1, -1)))

    props = {
        "T": property(_T),
        "mT": property(_mT),
        "H": property(_H),
        "mH": property(_mH),
        "dtype": property(_dtype),
        "device": property(_device),
        "shape": property(lambda self: _size_of(self._tn_sizes)),
        "layout": property(lambda self: T.LAYOUTS["strided"]),
        "is_cuda": property(lambda self: self._tn_device_key == "cuda"),
        # a wrapper subclass reports the device it was made for (its own storage is meta)
        "is_cpu": property(lambda self: _device(self).type == "cpu"),
        "is_meta": property(lambda self: _device(self).type == "meta"),
        "is_mps": property(lambda self: self._tn_device_key == "mps"),
        "is_xpu": property(lambda self: False),
        "is_mtia": property(lambda self: False),
        "is_vulkan": property(lambda self: self._tn_device_key == "vulkan"),
        "is_sparse": property(lambda self: False),
        "is_sparse_csr": property(lambda self: False),
        "is_quantized": property(lambda self: False),
        "is_mkldnn": property(lambda self: False),
        "is_nested": property(lambda self: False),
        "is_ipu": property(lambda self: False),
        "is_xla": property(lambda self: False),
        "is_maia": property(lambda self: False),
        "is_hpu": property(lambda self: False),
        "is_lazy": property(lambda self: False),
        "_is_zerotensor": lambda self: False,
        # Sizes are always concrete here (no SymInt sizes): FakeTensorMode's cache asks.
        "_has_symbolic_sizes_strides": property(lambda self: False),
        "names": property(lambda self: (None,) * len(self._tn_sizes)),
        "itemsize": property(lambda self: T.BY_CODE[self._tn_dtype_code].itemsize),
        "nbytes": property(lambda self: T.BY_CODE[self._tn_dtype_code].itemsize * self.numel()),
    }
    methods = dict(copy_=copy_, contiguous=contiguous, nonzero=nonzero, set_=set_, size=size, stride=stride, item=item, tolist=tolist, numpy=numpy, is_contiguous=is_contiguous,
                   type=_type, to=to, cpu=cpu, dim_order=dim_order, requires_grad_=requires_grad_,
                   numel=lambda self: TB.numel_(self), ndimension=lambda self: self.dim(),
                   get_device=lambda self: -1 if self._tn_device_key == "cpu" else (self._tn_device_index or 0),
                   is_floating_point=lambda self: T.BY_CODE[self._tn_dtype_code].is_floating_point,
                   is_complex=lambda self: T.BY_CODE[self._tn_dtype_code].is_complex,
                   is_signed=lambda self: T.BY_CODE[self._tn_dtype_code].is_signed,
                   __bool__=lambda self: bool(_scalar_for(self, "bool")),
                   __float__=lambda self: float(_scalar_for(self, "float")),
                   __int__=lambda self: int(_scalar_for(self, "int")),
                   __index__=_index, __complex__=lambda self: complex(_scalar_for(self, "complex")),
                   __invert__=lambda self: _door("logical_not", self) if T.BY_CODE[self._tn_dtype_code] is T.BY_NAME["bool"]
                   else _door("bitwise_not", self))
    for shortcut, name in (("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
                           ("int", "int32"), ("long", "int64"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                           ("bool", "bool")):
        methods[shortcut] = _make_cast(T.BY_NAME[name])
    def _make_subclass(cls, data, requires_grad=False, **kwargs):
        # A new object of `cls` sharing data's storage and geometry (nn.Parameter's constructor).
        out = data._tn_alias(cls)
        out._tn_requires_grad = bool(kwargs.get("require_grad", requires_grad))
        return out

    TB._make_subclass = staticmethod(_make_subclass)

    def as_subclass(self, cls):
        # upstream's THPVariable_as_subclass: an object of `cls` holding self.alias(), a view
        # that autograd records (AliasBackward0) where self requires grad
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, TB):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        alias = _door("alias", self)
        out = alias._tn_alias(cls)
        if alias._tn_edge is not None:
            out._tn_set_edge(*alias._tn_edge)
        out._tn_requires_grad = alias._tn_requires_grad
        return out

    TB.as_subclass = as_subclass

    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None, dtype=None,
                               layout=None, device=None, pin_memory=False, requires_grad=False,
                               dispatch_sizes_strides_policy=None, dispatch_device=False, dispatch_layout=False,
                               _extra_dispatch_keys=None, storage_size=None):
        """A `cls` tensor with the given geometry, dtype and device and no data of its own (the
        subclass's `__torch_dispatch__` computes on the tensors it wraps), as upstream's: its
        storage is a meta storage; it reports `device`. Made without the door, so that no
        dispatch mode sees a wrapper being built (FunctionalTensorMode builds one per result)."""
        import torch

        return wrapper_tensor(cls, size, strides, storage_offset, dtype or torch.get_default_dtype(), device,
                              requires_grad)

    TB._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from .torch_functions import tensor

        return tensor(data, dtype=dtype or T.BY_CODE[self._tn_dtype_code], device=device or _device(self),
                      requires_grad=requires_grad)

    methods["new_tensor"] = new_tensor
    methods["const_data_ptr"] = lambda self: self.data_ptr()
    methods["mutable_data_ptr"] = lambda self: self.data_ptr()
    methods["cfloat"] = _make_cast(T.BY_NAME["complex64"])
    methods["cdouble"] = _make_cast(T.BY_NAME["complex128"])
    _unset = object()

    def _get_grad_dtype(self):
        # A leaf's gradient dtype: its own dtype unless set (None: any dtype is accepted).
        got = getattr(self, "__dict__", {}).get("_tn_grad_dtype", _unset)
        return T.BY_CODE[self._tn_dtype_code] if got is _unset else got

    def _set_grad_dtype(self, value):
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        self.__dict__["_tn_grad_dtype"] = value

    props["grad_dtype"] = property(_get_grad_dtype, _set_grad_dtype)

    def __delitem__(self, key):
        raise TypeError("Tensor does not support deleting items")

    def _volatile(self):
        import warnings

        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    # The TensorBase members upstream's torch.overrides lists (so they must exist) that have no
    # stub: the named-tensor `name`, the removed `volatile`, Python-key and refcount probes, and
    # the view-replay functions, which return None because views record none (view replay, a
    # torch.compile feature, is never on here).
    methods.update(__delitem__=__delitem__, __long__=lambda self: int(self),
                   __ifloordiv__=lambda self, other: _door("floor_divide_.Tensor", self, other)
                   if isinstance(other, C.TensorBase) else _door("floor_divide_.Scalar", self, other),
                   _fix_weakref=lambda self: None, _use_count=lambda self: 1,
                   _view_func=lambda self, new_base, symint_visitor_fn=None, tensor_visitor_fn=None: None,
                   _rev_view_func_unsafe=lambda self, new_base: None)
    props.update(name=property(lambda self: None), volatile=property(_volatile),
                 _cdata=property(lambda self: id(self)),
                 _python_dispatch=property(lambda self: overrides_torch_dispatch(type(self))))
    props["real"] = property(_real, _set_part("real"))
    props["imag"] = property(_imag, _set_part("imag"))
    for dev in ("cuda", "xpu", "mtia", "ipu", "hpu", "mps"):
        methods[dev] = _make_unavailable_device(dev)
    for name, value in {**props, **methods}.items():
        setattr(TB, name, value)

    TB.data = property(_data, _set_data)


def _data(self):
    if self._tn_batched:  # a vmap batched tensor: its value's data, batched alike
        from ..functorch import batched

        value, bdim, level = batched.info(self)
        return batched.make(_data(value), bdim, level)
    return self._tn_variable_data()


def _set_data(self, new):
    if new is self:
        return  # `p.data = p` (Module._apply when `to` changed nothing)
    self._tn_set_storage_from(new, list(new._tn_sizes), list(new._tn_strides), new.storage_offset())


def _real(self):
    return _door("real", self)


def _imag(self):
    return _door("imag", self)


def _set_part(part):
    def setter(self, value):  # upstream: `t.real = x` copies into the view
        _door(part, self).copy_(value)

    return setter


def _make_unavailable_device(dev):
    def move(self, *args, **kwargs):
        # upstream's CPU-only build raises through torch.cuda._lazy_init the same way
        raise AssertionError(f"Torch not compiled with {dev.upper()} enabled")

    move.__name__ = dev
    return move


def _make_cast(dtype):
    def cast(self, memory_format=None):
        return _door("to.dtype", self, dtype, False, False, None)

    return cast


def _scalar_for(t, what):
    if what == "bool" and t._tn_batched:
        from ..functorch.rules import data_dependent_error

        raise data_dependent_error()
    n = 1
    for s in t._tn_sizes:
        n *= s
    if n != 1:
        if what == "bool":
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} is ambiguous")
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return _read_scalar(t, what)


def _read_scalar(t, what):
    # Through the door (`is_nonzero` for bool(), else `item`; both decompose into
    # `_local_scalar_dense` as upstream's do) when a mode or a dispatching subclass may want to
    # see it; a plain read otherwise.
    if C._len_torch_dispatch_stack() or overrides_torch_dispatch(type(t)) or _pre_dispatch_on():
        return _door("is_nonzero" if what == "bool" else "item", t)
    v = t._tn_read_one()  # a CPU element of a plain dtype, read natively
    return host_values(t)[0] if v is None else v


def _pre_dispatch_on():
    return _dispatch_keys.included(C.DispatchKey.PreDispatch)


def _index(self):
    d = T.BY_CODE[self._tn_dtype_code]
    n = 1
    for s in self._tn_sizes:
        n *= s
    if d.is_floating_point or d.is_complex or d is T.BY_NAME["bool"] or n != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(host_values(self)[0])


def _parse_to(self, args, kwargs):
    """Tensor.to's manual overloads: (device, dtype, ...), (dtype, ...), (tensor, ...)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    from .functions import _python_type_as_dtype

    # a Python scalar type names a dtype as the keyword or in either of the first two positions
    # (to(int), to(device, int))
    dtype = _python_type_as_dtype(dtype)
    rest = [_python_type_as_dtype(a) for a in args[:2]] + list(args[2:])
    if rest and isinstance(rest[0], C.TensorBase):
        other = rest.pop(0)
        dtype, device = T.BY_CODE[other._tn_dtype_code], other.device
    elif rest and (rest[0] is None or isinstance(rest[0], (str, T.device))
                   or (isinstance(rest[0], int) and not isinstance(rest[0], bool))):
        # to(Device? device, ScalarType? dtype, ...): a leading None is the device (nn.Module.to passes it)
        device = rest.pop(0)
        if rest and isinstance(rest[0], T.dtype):
            dtype = rest.pop(0)
    elif rest and isinstance(rest[0], T.dtype):
        dtype = rest.pop(0)
    if rest:
        non_blocking = rest.pop(0)
    if rest:
        copy = rest.pop(0)
    if device is not None and not isinstance(device, T.device):
        device = T.device(device) if isinstance(device, str) else T.device("cpu", device)
    return dtype, device, copy, non_blocking, memory_format


class _ArrayHolder:
    """Exposes a CPU tensor's memory to numpy through the array interface, so `numpy()` shares it."""

    def __init__(self, t, np_dtype, itemsize):
        import numpy as np

        self._t = t
        self.__array_interface__ = {
            "data": (t.data_ptr(), False),
            "shape": tuple(t._tn_sizes),
            "strides": tuple(s * itemsize for s in t._tn_strides),
            "typestr": np.dtype(np_dtype).str,
            "version": 3,
        }

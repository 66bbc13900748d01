"""Shared meta-step helpers: dtypes, devices, allocation, broadcasting, type promotion."""

from __future__ import annotations

from .. import allocating, cpu_fallback
from ..surface import types as T


F32, F64, I64, BOOL = T.BY_NAME["float32"], T.BY_NAME["float64"], T.BY_NAME["int64"], T.BY_NAME["bool"]


CPU = T.device("cpu")


C = None  # torch._C, set by ops.install (this module is imported while _C initialises)


def dtype_of(t):
    return T.BY_CODE[t._tn_dtype_code]


_DEVICES: dict = {}


def device_of(t):
    """The tensor's torch.device (one cached object per device; they are immutable)."""
    if t._tn_device_key == "meta" and type(t) is not C._tn_tensor_class_ref[0]:
        # a fake or wrapper tensor holds meta storage but stands for another device: its own
        # `device` says which (FakeTensor answers meta inside its kernel invocations)
        return t.device
    key = (t._tn_device_key, t._tn_device_index)
    dev = _DEVICES.get(key)
    if dev is None:
        dev = T.device(key[0]) if key[0] in ("cpu", "meta") else T.device(key[0], key[1])
        _DEVICES[key] = dev
    return dev


def door(op, *args):
    """Re-enter the single door: how operators compose other operators."""
    return C._aten_dispatch(op, *args)


_REQUIRED = object()
_ARGUMENT_PLANS: dict = {}


def call(op, *args, **kwargs):
    """The door with keyword arguments: what a call does not name takes the schema's default, so
    a composite names what it sets (`call("_to_copy", x, dtype=d)`) instead of passing runs of
    positional Nones. The schema's names and defaults are read once per overload."""
    plan = _ARGUMENT_PLANS.get(op)
    if plan is None:
        from ..binding.functions import _schema_default
        from ..binding.schema import all_schemas

        args_ = all_schemas()[op].args
        plan = _ARGUMENT_PLANS[op] = tuple((a.name, _schema_default(a) if a.has_default else _REQUIRED) for a in args_)
    argv = list(args)
    for name, default in plan[len(args):]:
        value = kwargs.pop(name, default)
        if value is _REQUIRED:
            raise TypeError(f"{op}() missing required argument '{name}'")
        argv.append(list(value) if type(value) is list else value)  # a list default is never shared
    if kwargs:
        raise TypeError(f"{op}() got unexpected keyword arguments {sorted(kwargs)}")
    return C._aten_dispatch(op, *argv)


def default_dtype():
    return C._get_default_dtype()


def empty(sizes, dtype, device=None):
    dev = device or CPU
    return C._tn_empty(list(sizes), dtype._tn_code, dev.type, dev.index or 0)


def launch(op, args, outs):
    if outs and getattr(outs[0], "_tn_device_key", None) == "meta":
        return []  # meta tensors hold no data: the meta step has already made the result
    if outs and outs[0] is None and allocating.KERNELS:  # a Python kernel allocating its outputs
        fn = allocating.find(op, args)
        if fn is not None:
            return fn(args)
    try:
        return C._tn_launch(op, tuple(args), tuple(outs))
    except NotImplementedError:
        # A kernel that refuses a complex dtype: the same result from the device's real kernels.
        from .complex.arithmetic import launch as complex_launch

        done = complex_launch(op, args, outs)
        if done is not None:
            return done
        # A device that opted into the CPU fallback runs the kernels it lacks on the cpu backend.
        moved = cpu_fallback.launch(C, op, args, outs) if cpu_fallback.DEVICES else None
        if moved is None:
            raise
        return moved


def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def size_dim(dim, ndim):
    """The dim `Tensor.size(dim)` reads, wrapped: a 0-dim tensor has none (wrap_scalar=false)."""
    if not ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def broadcast_shapes(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise RuntimeError(
                    f"The size of tensor a ({out[j]}) must match the size of tensor b ({d}) at non-singleton dimension {j}"
                )
    return out


def broadcast_error(a_shape, b_shape):
    ndim = max(len(a_shape), len(b_shape))
    for k in range(ndim):
        i = ndim - 1 - k
        da = a_shape[len(a_shape) - 1 - k] if k < len(a_shape) else 1
        db = b_shape[len(b_shape) - 1 - k] if k < len(b_shape) else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )
    return None


def expand_to(t, shape):
    """A stride-0 view of `t` broadcast to `shape` (no copy)."""
    sizes, strides = t._tn_sizes, t._tn_strides
    if list(sizes) == list(shape):
        return t
    nd = len(shape)
    if len(sizes) > nd:
        raise RuntimeError(f"expand({list(sizes)}, size={list(shape)}): the number of sizes provided ({nd}) must be "
                           f"greater or equal to the number of dimensions in the tensor ({len(sizes)})")
    new_strides = [0] * nd
    off = nd - len(sizes)
    for i in range(len(sizes)):
        if sizes[i] == shape[i + off]:
            new_strides[i + off] = strides[i]
        elif sizes[i] == 1:
            new_strides[i + off] = 0
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i + off]}) must match the existing size ({sizes[i]}) at "
                f"non-singleton dimension {i + off}.  Target sizes: {list(shape)}.  Tensor sizes: {list(sizes)}"
            )
    return t._tn_as_strided(list(shape), new_strides, t.storage_offset())


# --- type promotion (at::native::result_type) ---------------------------------------------------

def _category(d):
    if d.is_complex:
        return 3
    if d.is_floating_point:
        return 2
    if d is BOOL:
        return 0
    return 1


def promote_types(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return T.BY_CODE[C._tn_promote_types(a._tn_code, b._tn_code)]


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is BOOL or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """Upstream's three-tier rule: dimensioned tensors > zero-dim tensors > wrapped numbers; a
    lower tier only raises the category (bool < int < float < complex)."""
    dim_r = zero_r = wrapped_r = None
    for x in operands:
        if x is None:
            continue
        if isinstance(x, C.TensorBase):
            d = dtype_of(x)
            if x._tn_wrapped_number:
                if d.is_complex:
                    d = default_dtype().to_complex()
                elif d.is_floating_point:
                    d = default_dtype()
                wrapped_r = promote_types(wrapped_r, d)
            elif len(x._tn_sizes) == 0:
                zero_r = promote_types(zero_r, d)
            else:
                dim_r = promote_types(dim_r, d)
        else:
            d = python_scalar_dtype(x)
            if d.is_complex:
                d = default_dtype().to_complex()
            elif d.is_floating_point:
                d = default_dtype()
            wrapped_r = promote_types(wrapped_r, d)
    return _combine(dim_r, _combine(zero_r, wrapped_r))


def python_scalar_dtype(x):
    if isinstance(x, bool):
        return BOOL
    if isinstance(x, int):
        return I64
    if isinstance(x, float):
        return F64
    if isinstance(x, complex):
        return T.BY_NAME["complex128"]
    raise TypeError(f"expected a number, got {type(x).__name__}")


def can_cast(frm, to):
    """at::canCast: no float->int, no complex->real, no non-bool->bool."""
    if frm.is_complex and not to.is_complex:
        return False
    if frm.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    if frm is not BOOL and to is BOOL:
        return False
    return True


def check_safe_cast(result, out):
    """TensorIterator's check on an output it writes in place or through out=: the result dtype
    must be castable (can_cast) to the output's."""
    if not can_cast(result, out):
        raise RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the desired output type "
                           f"{scalar_type_name(out)}")


# c10::ScalarType names, as upstream's messages print a dtype ("expected Float but got Long")
SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                     "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                     "bool": "Bool", "complex32": "ComplexHalf", "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble"}


# The integer dtypes' ranges, for upstream's checked conversions of Python numbers
INT_RANGE = {"int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
             "int64": (-(2**63), 2**63 - 1), "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
             "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}


# C++ type names (caffe2::TypeMeta, typeid), which a few of upstream's checks print instead
CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                  "uint8": "unsigned char", "bool": "bool"}


def scalar_type_name(d) -> str:
    """A dtype's c10::ScalarType name (`Float`, `Long`, ...)."""
    return SCALAR_TYPE_NAMES.get(d._tn_name, d._tn_name)


def cpp_type_name(d) -> str:
    """A dtype's C++ type name (`float`, `long int`, ...)."""
    return CPP_TYPE_NAMES.get(d._tn_name, d._tn_name)


_LEGACY_TENSOR_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                        "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
                        "uint8": "ByteTensor"}


def tensor_type_string(t) -> str:
    """What upstream's TensorArg checks (checkScalarTypes) print for a tensor's type: the legacy
    `torch.FloatTensor` names where a CPU type has one, else `CPUBoolType`, `CPUBFloat16Type`."""
    dtype, key = dtype_of(t), t._tn_device_key
    legacy = _LEGACY_TENSOR_NAMES.get(dtype._tn_name)
    if legacy is not None and key == "cpu":
        return f"torch.{legacy}"
    return f"{'CPU' if key == 'cpu' else key.capitalize()}{scalar_type_name(dtype)}Type"


def floating_kernel_only(t, kernel, complex_ok=False, also=()):
    """Upstream's kernels dispatched over floating types (AT_DISPATCH_FLOATING_TYPES_AND2; with
    `complex_ok` the complex ones too, and the dtypes named in `also`) refuse other dtypes by the
    kernel's name, with NotImplementedError. `t`: a tensor or a dtype."""
    d = t if isinstance(t, T.dtype) else dtype_of(t)
    if not (d.is_floating_point or (complex_ok and d.is_complex) or d._tn_name in also):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(d)}'")


def concrete(s):
    """A size our tensors can hold: an int. Our tensors' sizes are concrete: a symbolic size
    that stands for an input's dimension (dynamic shapes) is refused by name, any other symbolic
    expression is specialized with a guard (`int()`), and a symbol that only describes the base
    of a view input is fixed without one: FakeTensorMode rebuilds that base with fresh
    symbols, the program never receives it, and upstream's symbolic allocation records no guard
    on it. That symbol is fixed at its hint in the ShapeEnv without a guard; a guard on
    `input._base` would refuse every later input that is not such a view."""
    if isinstance(s, int) or type(s).__name__ != "SymInt":
        return s
    node = s.node
    expr, env = node.expr, node.shape_env
    if getattr(expr, "is_Symbol", False) and node.hint is not None:
        sources = env.var_to_sources.get(expr, [])
        if sources and all("._base" in src.name for src in sources):
            import sympy

            env._set_replacement(expr, sympy.Integer(int(node.hint)), "torchnative: the base of a view input")
            return int(node.hint)
        if sources:
            # an input's dimension marked dynamic (torch.export's dynamic_shapes=): refused here,
            # by name, rather than specialized into upstream's later "you marked ... as dynamic
            # but your code specialized it to be a constant"
            raise NotImplementedError(
                f"torchnative does not support dynamic shapes yet: {sources[0].name} is symbolic ({expr}), and "
                "torchnative's tensors have concrete sizes. Export with static shapes (no dynamic_shapes=, or "
                "torch.export.Dim.STATIC) instead.")
    return int(s)


_CORE_DIR = __file__.rsplit("/ops/", 1)[0] + "/"


def warn(message, category=UserWarning):
    """A warning attributed to the first frame outside the core, as upstream's TORCH_WARN is
    attributed to the Python line that called into C++ (whatever bindings lie between)."""
    import sys
    import warnings

    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_CORE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)

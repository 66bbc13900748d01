"""Elementwise operators: copies and casts, unary and binary arithmetic, comparisons.

The meta step here follows upstream's TensorIterator: broadcast the operands, compute the
common dtype with `result_type`, cast operands to the computation dtype, allocate the output,
and hand the kernel operands already broadcast (stride 0) and cast (see
docs/design/kernel-conventions.md).
"""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import OWN_KERNEL, impl


_door = B.door


# --- copies and casts -------------------------------------------------------------------------

@impl("copy_")
def copy_(self, src, non_blocking=False):
    dst_shape = list(self._tn_sizes)
    try:
        src_b = B.expand_to(src, dst_shape)
    except RuntimeError:
        raise RuntimeError(
            f"output with shape {dst_shape} doesn't match the broadcast shape "
            f"{B.broadcast_shapes(dst_shape, src._tn_sizes)}"
        ) from None
    if not B.numel(dst_shape):
        return self
    if self._tn_device_key == "meta":
        return self  # a meta tensor holds no data
    if src._tn_device_key == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if not _same_device(self, src):
        if self._tn_is_contiguous() and B.dtype_of(self) is B.dtype_of(src_b):
            # Straight into place: one host<->device transfer, no staging tensor on the device.
            c = contiguous(src_b)
            B.C._tn_copy_bytes(self, c, B.numel(dst_shape) * B.dtype_of(c).itemsize)
            self._tn_bump_version()
            return self
        src_b = _to_device(src_b, B.device_of(self))
    B.launch("copy_", (self, src_b, non_blocking), (self,))
    self._tn_bump_version()
    return self


def _result(shape, dtype, device, *inputs):
    """An elementwise result laid out as upstream's TensorIterator lays it out from its inputs
    (core/src/layout.rs): contiguous unless the inputs are ordered otherwise in memory."""
    out = B.empty(shape, dtype, device)
    if len(shape) > 1:
        strides = B.C._tn_elementwise_strides(list(shape), [t for t in inputs if isinstance(t, B.C.TensorBase)])
        if strides is not None:
            out._tn_set_geometry(list(shape), strides, 0)
    return out


def _to_device(t, device):
    """A contiguous copy of `t` on `device` (same dtype), through the allocators' host copies."""
    if device.type == "meta":
        return B.empty(t._tn_sizes, B.dtype_of(t), device)
    if t._tn_device_key == "meta":
        raise NotImplementedError(
            "Cannot copy out of meta tensor; no data! Please consider using torch.nn.Module.to_empty() instead of "
            "torch.nn.Module.to() when moving module from meta to a different device.")
    c = contiguous(t)
    out = B.empty(c._tn_sizes, B.dtype_of(c), device)
    nbytes = B.numel(c._tn_sizes) * B.dtype_of(c).itemsize
    B.C._tn_copy_bytes(out, c, nbytes)
    return out


@impl("_local_scalar_dense")
def _local_scalar_dense(self):
    # The host read behind item()/bool()/float()/int(): an operator so modes see it (FakeTensorMode
    # refuses it as data-dependent), as upstream's item decomposes into it.
    from ...binding.tensor_methods import host_values

    return host_values(self)[0]


@impl("item")
def item(self):
    n = B.numel(self._tn_sizes)
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return B.C._aten_dispatch("_local_scalar_dense", self)


@impl("is_nonzero")
def is_nonzero(self):
    n = B.numel(self._tn_sizes)
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(B.C._aten_dispatch("item", self))


@impl("_to_copy")
def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    dtype = dtype or B.dtype_of(self)
    src_dev = B.device_of(self)
    device = device or src_dev
    if device.type != src_dev.type or device.index not in (None, src_dev.index):
        moved = _to_device(self, device)
        return moved if dtype is B.dtype_of(self) else _to_copy(moved, dtype)
    return copy_(_empty_like(self, dtype, device, memory_format), self)


@impl("clone")
def clone(self, memory_format=None):
    return copy_(_empty_like(self, B.dtype_of(self), B.device_of(self), memory_format), self)


def _empty_like(self, dtype, device, memory_format):
    """empty_like's layouts: `self`'s own order for preserve_format (the default), else the
    format asked for."""
    if _preserves(memory_format):
        return _result(self._tn_sizes, dtype, device, self)
    out = B.empty(self._tn_sizes, dtype, device)
    strides = _format_strides(self._tn_sizes, memory_format)
    if strides is not None:
        out._tn_set_geometry(list(self._tn_sizes), strides, 0)
    return out


def _preserves(memory_format) -> bool:
    return memory_format is None or str(memory_format) == "torch.preserve_format"


@impl("contiguous")
def contiguous(self, memory_format=None):
    if self._tn_is_contiguous():
        return self
    return _door("clone", self, CONTIGUOUS_FORMAT)


def _to_impl(self, dtype, device, copy, memory_format=None):
    same = (dtype is None or dtype is B.dtype_of(self)) and (device is None or device == B.device_of(self)
                                                                 or (device.type == self._tn_device_key and device.index is None))
    if same and not copy and _in_format(self, memory_format):
        return self
    return B.call("_to_copy", self, dtype, device=device, memory_format=memory_format)


def _in_format(t, memory_format):
    return _preserves(memory_format) or t.is_contiguous(memory_format=memory_format)


def _format_strides(sizes, memory_format):
    """Strides of a fresh tensor in `memory_format` (None: contiguous)."""
    name = str(memory_format).replace("torch.", "")
    if name == "channels_last" and len(sizes) == 4:
        n, c, h, w = sizes
        return [h * w * c, 1, w * c, c]
    if name == "channels_last_3d" and len(sizes) == 5:
        n, c, d, h, w = sizes
        return [d * h * w * c, 1, h * w * c, w * c, c]
    return None


@impl("to.dtype")
def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, dtype, None, copy, memory_format)


@impl("to.device")
def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, dtype, device, copy, memory_format)


@impl("to.dtype_layout")
def to_dtype_layout(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False,
                    memory_format=None):
    return _to_impl(self, dtype, device, copy, memory_format)


@impl("to.other")
def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, B.dtype_of(other), B.device_of(other), copy, memory_format)


def cast(t, dtype):
    return t if B.dtype_of(t) is dtype else B.call("_to_copy", t, dtype)


# --- binary -----------------------------------------------------------------------------------

def _device_operand(a, b):
    for t in (a, b):
        if not t._tn_wrapped_number and t._tn_sizes:
            return t
    for t in (a, b):  # two 0-dim operands: a non-CPU one is TensorIterator's common device
        if not t._tn_wrapped_number and t._tn_device_key != "cpu":
            return t
    return b if a._tn_wrapped_number else a


def _same_device(a, b):
    return a._tn_device_key == b._tn_device_key and a._tn_device_index == b._tn_device_index


def _check_devices(a, b):
    # 0-dim operands (and wrapped numbers) may live on the CPU beside a device tensor, as upstream allows
    if not _same_device(a, b) and a._tn_sizes and b._tn_sizes:
        # TensorIterator names its common device (the first non-CPU operand's) first.
        first, other = (b, a) if a._tn_device_key == "cpu" else (a, b)
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{B.device_of(first)} and {B.device_of(other)}!"
        )


# Upstream's CPU mul/div on float16/bfloat16 read a 0-dim `other` at float precision from its
# original value (TensorIterator's cpu_scalar path) rather than rounding it to the dtype first;
# the cpu kernels apply that rule when `other` arrives uncast (docs/design/kernel-conventions.md).
_OPMATH_SCALAR_OPS = {"mul.Tensor", "div.Tensor", "div.Tensor_mode"}


def _prepare(a, b, compute_dtype, kernel=None):
    _check_devices(a, b)
    shape = B.broadcast_shapes(a._tn_sizes, b._tn_sizes)
    dev = B.device_of(_device_operand(a, b))
    keep_b = (kernel in _OPMATH_SCALAR_OPS and compute_dtype._tn_name in ("float16", "bfloat16")
              and not b._tn_sizes and b._tn_device_key == "cpu" and B.dtype_of(b).is_floating_point)
    ops = []
    for t in (a, b):
        if not (keep_b and t is b):
            t = cast(t, compute_dtype)
        if B.device_of(t) != dev:
            t = _to_device(t, dev)
        ops.append(B.expand_to(t, shape))
    return ops[0], ops[1], shape, dev


def _launch(kernel, args, out, shape):
    """The kernel writing `out`. An empty result still launches on the cpu device (its kernels
    take zero elements), so a dtype the kernel does not take is refused as upstream's dispatch
    refuses it whatever the size; other devices skip empty launches."""
    if B.numel(shape) or out._tn_device_key == "cpu":
        B.launch(kernel, args, (out,))


def binary(kernel, a, b, *extra, compute=None, out_dtype=None):
    common = B.result_type(a, b)
    compute_dtype = compute(common) if compute else common
    x, y, shape, dev = _prepare(a, b, compute_dtype, kernel)
    out = _result(shape, out_dtype or compute_dtype, dev, a, b)
    _launch(kernel, (x, y, *extra), out, shape)
    return out


def binary_(kernel, self, other, *extra, compute=None):
    """In-place: computes in the common dtype, which must be castable to self's dtype."""
    common = B.result_type(self, other)
    compute_dtype = compute(common) if compute else common
    mine = B.dtype_of(self)
    B.check_safe_cast(compute_dtype, mine)
    shape = B.broadcast_shapes(self._tn_sizes, other._tn_sizes)
    if list(shape) != list(self._tn_sizes):
        raise RuntimeError(
            f"output with shape {list(self._tn_sizes)} doesn't match the broadcast shape {list(shape)}"
        )
    if compute_dtype is mine:
        keep = (kernel in _OPMATH_SCALAR_OPS and mine._tn_name in ("float16", "bfloat16") and not other._tn_sizes
                and other._tn_device_key == "cpu" and B.dtype_of(other).is_floating_point)
        y = B.expand_to(other if keep else cast(other, mine), shape)
        if B.device_of(y) != B.device_of(self):
            y = _to_device(y, B.device_of(self))
        _launch(kernel, (self, y, *extra), self, shape)
        self._tn_bump_version()
        return self
    return copy_(self, binary(kernel, self, other, *extra, compute=compute))


def _type_name(d):
    return B.scalar_type_name(d)


def _float_compute(common):
    return common if (common.is_floating_point or common.is_complex) else B.default_dtype()


def _no_bool_sub(a, b, name):
    """upstream's sub_check: no bool operand at all (a number True is a bool operand too)."""
    if B.dtype_of(a) is B.BOOL and B.dtype_of(b) is B.BOOL:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."
        )
    if B.dtype_of(a) is B.BOOL or B.dtype_of(b) is B.BOOL:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


@impl("add.Tensor")
def add(self, other, alpha=1):
    return binary("add.Tensor", self, other, alpha)


@impl("add_.Tensor")
def add_(self, other, alpha=1):
    return binary_("add.Tensor", self, other, alpha)


@impl("sub.Tensor")
def sub(self, other, alpha=1):
    _no_bool_sub(self, other, "sub")
    return binary("sub.Tensor", self, other, alpha)


@impl("sub_.Tensor")
def sub_(self, other, alpha=1):
    _no_bool_sub(self, other, "sub")
    return binary_("sub.Tensor", self, other, alpha)


@impl("rsub.Tensor")
def rsub(self, other, alpha=1):
    return _door("sub.Tensor", other, self, alpha)


@impl("rsub.Scalar")
def rsub_scalar(self, other, alpha=1):
    return _door("sub.Tensor", B.C._tn_scalar_to_tensor(other), self, alpha)


@impl("mul.Tensor")
def mul(self, other):
    return binary("mul.Tensor", self, other)


@impl("mul_.Tensor")
def mul_(self, other):
    return binary_("mul.Tensor", self, other)


@impl("div.Tensor")
def div(self, other):
    return binary("div.Tensor", self, other, compute=_float_compute)


@impl("div_.Tensor")
def div_(self, other):
    return binary_("div.Tensor", self, other, compute=_float_compute)


@impl("div.Tensor_mode")
def div_mode(self, other, rounding_mode=None):
    if rounding_mode is None:
        return div(self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    return binary("div.Tensor_mode", self, other, rounding_mode)


@impl("div_.Tensor_mode")
def div_mode_(self, other, rounding_mode=None):
    if rounding_mode is None:
        return div_(self, other)
    return binary_("div.Tensor_mode", self, other, rounding_mode)


@impl("floor_divide")
def floor_divide(self, other):
    return binary("div.Tensor_mode", self, other, "floor")


@impl("floor_divide.Scalar")
def floor_divide_scalar(self, other):
    return floor_divide(self, B.C._tn_scalar_to_tensor(other))  # a wrapped number, cast unchecked


@impl("floor_divide_.Tensor")
def floor_divide_(self, other):
    return binary_("div.Tensor_mode", self, other, "floor")


@impl("floor_divide_.Scalar")
def floor_divide_scalar_(self, other):
    return floor_divide_(self, B.C._tn_scalar_to_tensor(other))


@impl("div.Scalar_mode")
def div_scalar_mode(self, other, rounding_mode=None):
    # upstream wraps the number as a tensor and calls div.Tensor_mode (BinaryOps.cpp)
    from ..factories.tensors import wrapped_number

    return div_mode(self, wrapped_number(other), rounding_mode)


@impl("remainder.Tensor")
def remainder(self, other):
    return binary("remainder.Tensor", self, other)


@impl("remainder.Scalar")
def remainder_scalar(self, other):
    return remainder(self, B.C._tn_scalar_to_tensor(other))


@impl("remainder.Scalar_Tensor")
def remainder_scalar_tensor(self, other):
    return remainder(B.C._tn_scalar_to_tensor(self), other)


@impl("fmod.Tensor")
def fmod(self, other):
    return binary("fmod.Tensor", self, other)


@impl("fmod.Scalar")
def fmod_scalar(self, other):
    return fmod(self, B.C._tn_scalar_to_tensor(other))


@impl("pow.Tensor_Tensor")
def pow_tt(self, exponent):
    return binary("pow.Tensor_Tensor", self, exponent)


@impl("pow.Tensor_Scalar")
def pow_ts(self, exponent):
    d = B.dtype_of(self)
    if isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0 and not (d.is_floating_point or d.is_complex):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if (d.is_floating_point or d.is_complex) and isinstance(exponent, (int, float)) and not isinstance(exponent, bool):
        # upstream's pow_Tensor_Scalar_out and pow_tensor_scalar_kernel (Pow.cpp,
        # cpu/PowKernel.cpp) compute these exponents without pow: a copy for 1; sqrt, rsqrt and
        # reciprocal for 0.5, -0.5 and -1; and, where the arithmetic type is the tensor's own
        # (float32, float64), x * x, x * x * x and 1 / (x * x) for 2, 3 and -2. The kernels
        # launched here are what a dispatch mode still sees as aten.pow.Tensor_Scalar.
        if exponent == 1:
            return _door("clone", self, CONTIGUOUS_FORMAT)
        if exponent == 0 and d.is_complex:  # pow_Tensor_Scalar_out fills ones (0 ** 0 included)
            return B.call("ones_like", self)
        if exponent == 2:  # x * x: one rounding whatever the dtype
            return binary("mul.Tensor", self, self)
        if exponent in (0.5, -0.5, -1):
            return _door({0.5: "sqrt", -0.5: "rsqrt", -1: "reciprocal"}[exponent], self)
        if exponent in (3, -2) and (d in (B.F32, B.F64) or d.is_complex):
            sq = binary("mul.Tensor", self, self)
            return binary("mul.Tensor", sq, self) if exponent == 3 else _door("reciprocal", sq)
    return binary("pow.Tensor_Tensor", self, B.C._tn_scalar_to_tensor(exponent))


@impl("pow.Scalar")
def pow_st(self, exponent):
    return binary("pow.Tensor_Tensor", B.C._tn_scalar_to_tensor(self), exponent)


for _name in ("maximum", "minimum", "atan2", "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor",
              "bitwise_left_shift.Tensor", "bitwise_right_shift.Tensor", "gcd", "lcm"):
    def _mk(name):
        compute = _float_compute if name == "atan2" else None

        def fn(self, other):
            return binary(name, self, other, compute=compute)

        return fn

    impl(_name)(_mk(_name))


for _name in ("bitwise_and.Scalar", "bitwise_or.Scalar", "bitwise_xor.Scalar", "__and__.Scalar", "__or__.Scalar",
              "__xor__.Scalar"):
    def _mk_s(name):
        stem = name.split(".")[0].strip("_")  # bitwise_and, or and for __and__
        base = ("" if stem.startswith("bitwise_") else "bitwise_") + stem + ".Tensor"

        def fn(self, other):
            # through the door, so modes see the bitwise operator as upstream's composite calls it
            return B.C._aten_dispatch(base, self, B.C._tn_scalar_to_tensor(other))

        return fn

    impl(_name)(_mk_s(_name))


for _name in ("bitwise_and.Scalar_Tensor", "bitwise_or.Scalar_Tensor", "bitwise_xor.Scalar_Tensor"):
    def _mk_st(name):
        base = name.split(".")[0] + ".Tensor"

        def fn(self, other):  # a Scalar self: wrapped into a tensor, as upstream's composite does
            return B.C._aten_dispatch(base, B.C._tn_scalar_to_tensor(self), other)

        return fn

    impl(_name)(_mk_st(_name))


for _name in ("__and__.Tensor", "__or__.Tensor", "__xor__.Tensor"):
    def _mk_t(name):
        stem = name.split(".")[0].strip("_")  # bitwise_and, or and for __and__
        base = ("" if stem.startswith("bitwise_") else "bitwise_") + stem + ".Tensor"

        def fn(self, other):
            return B.C._aten_dispatch(base, self, other)

        return fn

    impl(_name)(_mk_t(_name))


# the shift operators and overloads: the shift kernels, a number wrapped as a 0-dim operand
# (Scalar_Tensor's number is `self`, the left operand, as the arguments arrive)
for _name in ("__lshift__.Tensor", "__lshift__.Scalar", "bitwise_left_shift.Tensor_Scalar",
              "bitwise_left_shift.Scalar_Tensor", "__rshift__.Tensor", "__rshift__.Scalar",
              "bitwise_right_shift.Tensor_Scalar", "bitwise_right_shift.Scalar_Tensor"):
    def _mk_shift(kernel):
        def wrap(v):
            return v if isinstance(v, B.C.TensorBase) else B.C._tn_scalar_to_tensor(v)

        def fn(self, other):
            return binary(kernel, wrap(self), wrap(other))

        return fn

    impl(_name)(_mk_shift("bitwise_left_shift.Tensor" if "lshift" in _name or "left" in _name
                          else "bitwise_right_shift.Tensor"))


for _name in ("__ilshift__.Scalar", "__ilshift__.Tensor", "__irshift__.Scalar", "__irshift__.Tensor"):
    def _mk_ishift(kernel):
        def fn(self, other):
            other = other if isinstance(other, B.C.TensorBase) else B.C._tn_scalar_to_tensor(other)
            return binary_(kernel, self, other)

        return fn

    impl(_name)(_mk_ishift("bitwise_left_shift.Tensor" if "lshift" in _name else "bitwise_right_shift.Tensor"))


for _name in ("logical_and", "logical_or", "logical_xor"):
    def _mk_l(name):
        def fn(self, other):
            return binary(name, self, other, out_dtype=B.BOOL)

        return fn

    impl(_name)(_mk_l(_name))


# Comparisons: computed in the common dtype, result bool. Scalar overloads wrap the number.
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    def _mk_cmp(name):
        def tensor_fn(self, other):
            return binary(name + ".Tensor", self, other, out_dtype=B.BOOL)

        def scalar_fn(self, other):
            return binary(name + ".Tensor", self, B.C._tn_scalar_to_tensor(other), out_dtype=B.BOOL)

        def tensor_fn_(self, other):
            return copy_(self, tensor_fn(self, other))

        def scalar_fn_(self, other):
            return copy_(self, scalar_fn(self, other))

        impl(name + ".Tensor")(tensor_fn)
        impl(name + ".Scalar")(scalar_fn)
        impl(name + "_.Tensor")(tensor_fn_)
        impl(name + "_.Scalar")(scalar_fn_)

    _mk_cmp(_cmp)


# Scalar arithmetic overloads reached through torch.ops (Python spellings wrap numbers already).
@impl("add.Scalar")
def add_scalar(self, other, alpha=1):
    return add(self, B.C._tn_scalar_to_tensor(other), alpha)


@impl("sub.Scalar")
def sub_scalar(self, other, alpha=1):
    return sub(self, B.C._tn_scalar_to_tensor(other), alpha)


@impl("mul.Scalar")
def mul_scalar(self, other):
    return mul(self, B.C._tn_scalar_to_tensor(other))


@impl("div.Scalar")
def div_scalar(self, other):
    return div(self, B.C._tn_scalar_to_tensor(other))


@impl("mul_.Scalar")
def mul_scalar_(self, other):
    return binary_("mul.Tensor", self, B.C._tn_scalar_to_tensor(other))


@impl("div_.Scalar")
def div_scalar_(self, other):
    return binary_("div.Tensor", self, B.C._tn_scalar_to_tensor(other), compute=_float_compute)


@impl("where.self")
def where(condition, self, other):
    if B.dtype_of(condition)._tn_name == "uint8":
        # upstream's where_self_out: a uint8 condition is cast to bool (with a deprecation warning)
        import warnings

        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                      "future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=2)
        condition = cast(condition, B.BOOL)
    if B.dtype_of(condition) is not B.BOOL:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_type_name(B.dtype_of(condition))}")
    common = B.result_type(self, other)
    shape = B.broadcast_shapes(condition._tn_sizes, self._tn_sizes, other._tn_sizes)
    dev = B.device_of(_device_operand(self, other))
    x = B.expand_to(cast(self, common), shape)
    y = B.expand_to(cast(other, common), shape)
    c = B.expand_to(condition, shape)
    out = _result(shape, common, dev, condition, self, other)
    if B.numel(shape):
        B.launch("where.self", (c, x, y), (out,))
    return out


# Composite upstream: where.self through the door, so that autograd records it (WhereBackward0).
def _where_operand(value, dtype, device):
    # upstream's where.Scalar* make the number a 0-dim tensor with at::scalar_tensor (a call modes
    # see, so FakeTensorMode fakes it) in the result's dtype
    from ...surface.types import LAYOUTS

    return B.door("scalar_tensor", value, dtype, LAYOUTS["strided"], device, None)


@impl("where.ScalarOther")
def where_scalar_other(condition, self, other):
    dtype = B.result_type(self, B.C._tn_scalar_to_tensor(other))
    return B.door("where.self", condition, self, _where_operand(other, dtype, B.device_of(self)))


@impl("where.ScalarSelf")
def where_scalar_self(condition, self, other):
    dtype = B.result_type(B.C._tn_scalar_to_tensor(self), other)
    return B.door("where.self", condition, _where_operand(self, dtype, B.device_of(other)), other)


@impl("where.Scalar")
def where_scalar(condition, self, other):
    dtype = B.result_type(B.C._tn_scalar_to_tensor(self), B.C._tn_scalar_to_tensor(other))
    dev = B.device_of(condition)
    return B.door("where.self", condition, _where_operand(self, dtype, dev), _where_operand(other, dtype, dev))


# --- unary ------------------------------------------------------------------------------------

# Float-only functions: integer and bool inputs compute in the default float dtype.
FLOAT_UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
               "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc",
               "erfinv", "reciprocal"]


# Same dtype in and out.
SAME_UNARY = ["neg", "abs", "sign", "relu", "bitwise_not", "floor", "ceil", "round", "trunc", "frac"]


def unary(kernel, self, *extra, float_only=False, lead=()):
    """`lead`: scalar arguments the schema puts before `self` (polygamma's n)."""
    d = B.dtype_of(self)
    out_dtype = d if (not float_only or d.is_floating_point or d.is_complex) else B.default_dtype()
    x = cast(self, out_dtype)
    out = _result(self._tn_sizes, out_dtype, B.device_of(self), self)
    _launch(kernel, (*lead, x, *extra), out, self._tn_sizes)
    return out


def unary_(kernel, self, *extra, float_only=False):
    d = B.dtype_of(self)
    if float_only and not (d.is_floating_point or d.is_complex):
        B.check_safe_cast(B.default_dtype(), d)  # an integer self cannot hold the float result
    _launch(kernel, (self, *extra), self, self._tn_sizes)
    self._tn_bump_version()
    return self


def _register_unary(name, float_only):
    impl(name)(lambda self: unary(name, self, float_only=float_only))
    impl(name + "_")(lambda self: unary_(name, self, float_only=float_only))


for _n in FLOAT_UNARY:
    _register_unary(_n, True)


for _n in SAME_UNARY:
    _register_unary(_n, False)


def _no_bool_neg(self):
    if B.dtype_of(self) is B.BOOL:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


@impl("neg")
def neg(self):
    _no_bool_neg(self)
    return unary("neg", self)


@impl("neg_")
def neg_(self):
    _no_bool_neg(self)
    return unary_("neg", self, float_only=False)


@impl("bitwise_not")
def bitwise_not(self):
    _integral_only_not(self)
    return unary("bitwise_not", self)


@impl("bitwise_not_")
def bitwise_not_(self):
    _integral_only_not(self)
    return unary_("bitwise_not", self, float_only=False)


def _integral_only_not(self):
    d = B.dtype_of(self)
    if d.is_floating_point or d.is_complex:  # upstream's kernel dispatches over integral types
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{B.scalar_type_name(d)}'")


for _n in ("floor", "ceil", "round", "trunc"):
    def _mk_round(name):
        def fn(self):
            d = B.dtype_of(self)
            if d is B.BOOL:  # upstream's integral shortcut excludes bool; its kernel refuses it
                raise NotImplementedError(f"\"{name}_vml_cpu\" not implemented for 'Bool'")
            if not d.is_floating_point:
                return clone(self)
            return unary(name, self)

        return fn

    impl(_n)(_mk_round(_n))


@impl("round.decimals")
def round_decimals(self, decimals=0):
    return unary("round.decimals", self, decimals)


@impl("logical_not")
def logical_not(self):
    out = _result(self._tn_sizes, B.BOOL, B.device_of(self), self)
    if B.numel(self._tn_sizes):
        B.launch("logical_not", (self,), (out,))
    return out


for _n in ("isnan", "isinf", "isfinite"):
    def _mk_is(name):
        def fn(self):
            out = _result(self._tn_sizes, B.BOOL, B.device_of(self), self)
            if B.numel(self._tn_sizes):
                B.launch(name, (self,), (out,))
            return out

        return fn

    impl(_n)(_mk_is(_n))


OWN_KERNEL.add("isfinite")  # composite upstream (isfinite = (x == x) & (x.abs() != inf)), one kernel here


@impl("gelu")
def gelu(self, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    B.floating_kernel_only(self, "GeluKernelImpl")
    return unary("gelu", self, approximate, float_only=True)


@impl("silu")
def silu(self):
    B.floating_kernel_only(self, "silu_cpu")  # (float tensors take the native fast path before this)
    return unary("silu", self, float_only=True)


@impl("positive")
def positive(self):
    if B.dtype_of(self) is B.BOOL:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


@impl("clamp")
def clamp(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    common = B.result_type(self, *[v for v in (min, max) if v is not None])
    x = cast(self, common)
    out = _result(self._tn_sizes, common, B.device_of(self), self)
    _launch("clamp", (x, min, max), out, self._tn_sizes)
    return out


@impl("clamp_min")
def clamp_min(self, min):
    return clamp(self, min, None)


@impl("clamp_max")
def clamp_max(self, max):
    return clamp(self, None, max)

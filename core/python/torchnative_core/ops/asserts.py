"""Runtime assertions: the operators export and torch.compile graphs carry to check, at run time,
what tracing assumed (`_assert_async`, `_assert_scalar`, `sym_constrain_range*`), and their
functional forms threading a dependency token (ShapeAssert.cpp, TensorCompare.cpp). Eager
calls check the value and return nothing, or the token's copy."""

from __future__ import annotations

from . import base as B
from . import impl

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


@impl("_assert_async")
def _assert_async(self):
    if not B.door("is_nonzero", self):
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero")


@impl("_assert_async.msg")
def _assert_async_msg(self, assert_msg):
    if not B.door("is_nonzero", self):
        raise RuntimeError(assert_msg or "Assertion is failed")


@impl("_assert_scalar")
def _assert_scalar(self, assert_msg):
    if not bool(self):
        raise RuntimeError(assert_msg)


@impl("sym_constrain_range")
def sym_constrain_range(size, min=None, max=None):
    lo = _I64_MIN if min is None else min
    hi = _I64_MAX if max is None else max
    value = int(size)  # Scalar::toLong truncates
    if hi < lo:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={lo} max={hi}")
    if not lo <= value <= hi:
        raise RuntimeError(f"Invalid value range for {value} between [{lo}, {hi}].")


@impl("sym_constrain_range_for_size")
def sym_constrain_range_for_size(size, min=None, max=None):
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    sym_constrain_range(size, 0 if min is None else min, max)


def _token(dep_token):
    return B.door("clone", dep_token, None)


@impl("_functional_assert_async.msg")
def _functional_assert_async_msg(self, assert_msg, dep_token):
    _assert_async_msg(self, assert_msg)
    return _token(dep_token)


@impl("_functional_assert_scalar")
def _functional_assert_scalar(self, assert_msg, dep_token):
    _assert_scalar(self, assert_msg)
    return _token(dep_token)


@impl("_functional_sym_constrain_range")
def _functional_sym_constrain_range(size, min, max, dep_token):
    sym_constrain_range(size, min, max)
    return _token(dep_token)


@impl("_functional_sym_constrain_range_for_size")
def _functional_sym_constrain_range_for_size(size, min, max, dep_token):
    sym_constrain_range_for_size(size, min, max)
    return _token(dep_token)


@impl("_make_dep_token")
def _make_dep_token(dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return B.call("empty.memory_format", [], dtype=dtype, device=device, memory_format=memory_format)

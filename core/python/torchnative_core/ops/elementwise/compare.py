"""Comparisons composed of other operators as upstream composes them: equal, isclose, allclose,
isposinf/isneginf, isin, and the comparison aliases (greater, less_equal, ...).
"""

from __future__ import annotations

from .. import base as B
from .. import impl
from .math import _num


D = B.door


@impl("equal")
def equal(self, other):
    if list(self._tn_sizes) != list(other._tn_sizes):
        return False
    return bool(D("all", D("eq.Tensor", self, other)).item())


@impl("isclose")
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if B.dtype_of(self) is not B.dtype_of(other):
        raise RuntimeError(f"{B.scalar_type_name(B.dtype_of(self))} did not match {B.scalar_type_name(B.dtype_of(other))}")
    if B.dtype_of(self).is_complex and equal_nan:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = D("eq.Tensor", self, other)
    if equal_nan:
        close = D("logical_or", close, D("logical_and", D("isnan", self), D("isnan", other)))
    d = B.dtype_of(self)
    if d is B.BOOL or not (d.is_floating_point or d.is_complex):
        if rtol == 0 and atol == 0:
            return close
        a, b = B.call("_to_copy", self, B.default_dtype()), B.call("_to_copy", other, B.default_dtype())
    else:
        a, b = self, other
    diff = D("abs", D("sub.Tensor", a, b, 1))
    tol = D("add.Tensor", D("mul.Tensor", D("abs", b), _num(rtol)), _num(atol), 1)
    within = D("logical_and", D("isfinite", diff), D("le.Tensor", diff, tol))
    return D("logical_or", close, within)


@impl("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(D("all", isclose(self, other, rtol, atol, equal_nan)).item())


@impl("isposinf")
def isposinf(self):
    return D("logical_and", D("isinf", self), D("gt.Scalar", self, 0))


@impl("isneginf")
def isneginf(self):
    return D("logical_and", D("isinf", self), D("lt.Scalar", self, 0))


# Comparison aliases: upstream's CompositeImplicit greater(self, other) is at::gt(self, other), and so on.
for _alias, _op in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
                    ("not_equal", "ne")):
    for _suffix in ("", "_"):
        for _kind in (".Tensor", ".Scalar"):
            impl(_alias + _suffix + _kind)((lambda target: lambda self, other: D(target, self, other))(_op + _suffix + _kind))


def _isin_dtype_check(*tensors):
    for t in tensors:
        d = B.dtype_of(t)
        if d is B.BOOL or d.is_complex:
            from .arithmetic import _type_name

            raise RuntimeError(f"Unsupported input type encountered for isin(): {_type_name(d)}")


@impl("isin.Tensor_Tensor")
def isin(elements, test_elements, assume_unique=False, invert=False):
    # upstream's default CPU kernel: elements compared with every test element in the common dtype
    _isin_dtype_check(elements, test_elements)
    flat = D("reshape", test_elements, [-1])
    hit = D("any.dim", D("eq.Tensor", D("unsqueeze", elements, -1), flat), -1, False)
    return D("logical_not", hit) if invert else hit


@impl("isin.Scalar_Tensor")
def isin_scalar_tensor(element, test_elements, assume_unique=False, invert=False):
    return isin(_num(element), test_elements, assume_unique, invert)


@impl("isin.Tensor_Scalar")
def isin_tensor_scalar(elements, test_element, assume_unique=False, invert=False):
    _isin_dtype_check(elements)
    if isinstance(test_element, bool):  # upstream checks the scalar's type too
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return D("ne.Scalar" if invert else "eq.Scalar", elements, test_element)

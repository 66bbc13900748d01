"""Python values checked and converted against a schema argument's type, as upstream's
`torch.ops` binding does (torch/csrc/jit/python/pybind_utils.h `toIValue` and pybind11's
casters): a value the type does not take raises upstream's RuntimeError ("Expected a value of
type ..."); one it takes is converted to the plain Python value our implementations read.

The rules below were measured against upstream 2.13.0 in the reference environment, one value
kind per argument type (`tests/test_jit_arguments.py` re-measures them side by side):

- int, SymInt, ScalarType, Layout, MemoryFormat: an int or a bool (pybind11's int caster takes a
  bool), or a one-element tensor (its item); int also takes a dtype (its ScalarType number).
  Never a float, a list, a str.
- float: a bool, int or float, or a one-element tensor.  bool: anything with a truth value that
  is a number, None (False) or a one-element tensor; never a list, a str, a dtype.
- Scalar: a bool, int, float or complex, or a dtype (its number); never a tensor.
- int[N] (a fixed size, not SymInt[N]) broadcasts a single int; every int list takes a list or
  tuple of ints, bools or one-element tensors; SymInt lists also take a 1-d integer tensor.
  float[N] broadcasts a single float. bool[N] takes a list of anything with a truth value.
- Tensor: a tensor or None (an undefined tensor, refused later by the operator); a number only
  for the operators upstream lets wrap one (`_should_allow_numbers_as_tensors`).
- Tensor[] and Tensor?[]: a list or tuple of tensors (and None for Tensor?[]), never a tensor.
- str: a str.  Device: a str or a torch.device.  Generator: a torch.Generator.
"""

from __future__ import annotations

import re

_LIST = re.compile(r"^(\w+)\[(\d*)\]$")
_INTLIKE = ("int", "SymInt")


class Mismatch(Exception):
    """The value is not of the argument's type (the caller words upstream's message)."""


def _tensor_cls():
    import torch

    return torch.Tensor


def _one_element(v):
    return isinstance(v, _tensor_cls()) and v.numel() == 1


def _as_int(v, symint=False):
    if isinstance(v, int):  # bool included, as pybind11's caster takes it
        return int(v)
    if _one_element(v):
        return int(v.item())
    import torch

    if isinstance(v, torch.SymInt):
        return v
    if not symint and isinstance(v, torch.dtype):
        return v._tn_code
    raise Mismatch


def _as_float(v):
    if isinstance(v, (int, float)):
        return float(v) if not isinstance(v, float) else v
    if _one_element(v):
        return float(v.item())
    import torch

    if isinstance(v, (torch.SymFloat, torch.SymInt)):
        return v
    raise Mismatch


def _as_bool(v):
    if v is None or isinstance(v, (bool, int, float, complex)):
        return bool(v)
    if _one_element(v):
        return bool(v.item())
    import torch

    if isinstance(v, torch.SymBool):
        return v
    raise Mismatch


def _as_scalar(v):
    import torch

    if isinstance(v, (bool, int, float, complex, torch.SymInt, torch.SymFloat, torch.SymBool)):
        return v
    if isinstance(v, torch.dtype):
        return v._tn_code
    raise Mismatch


def _enum(kind):
    """ScalarType, Layout, MemoryFormat: their own objects, or an int read as the enum's number."""

    def convert(v):
        from . import types as T

        if kind == "ScalarType":
            import torch

            if isinstance(v, torch.dtype):
                return v
            table = T.BY_CODE
        elif kind == "Layout":
            if isinstance(v, T.layout):
                return v
            table = dict(enumerate(T.LAYOUTS.values()))
        else:
            if isinstance(v, T.memory_format):
                return v
            table = {0: T.MEMORY_FORMATS["contiguous_format"], 1: T.MEMORY_FORMATS["preserve_format"],
                     2: T.MEMORY_FORMATS["channels_last"], 3: T.MEMORY_FORMATS["channels_last_3d"]}
        n = _as_int(v, symint=True)
        # a number without an enum value goes on as the number: the operator refuses it, as upstream's does
        return table.get(n, n)

    return convert


def _as_str(v):
    if isinstance(v, str):
        return v
    raise Mismatch


def _as_device(v):
    import torch

    if isinstance(v, torch.device):
        return v
    if isinstance(v, str):
        from ..binding.functions import _to_device

        return _to_device(v)  # the JIT reads a device from its string, as torch.device does
    raise Mismatch


def _as_generator(v):
    import torch

    if isinstance(v, torch.Generator):
        return v
    raise Mismatch


def _as_tensor(v):
    if isinstance(v, _tensor_cls()) or v is None:
        return v
    raise Mismatch


def _sequence(v):
    if isinstance(v, (list, tuple)):
        return v
    raise Mismatch


def _int_list(symint, n):
    def convert(v):
        if isinstance(v, int) and n and not symint:
            return [int(v)] * n
        if symint and isinstance(v, _tensor_cls()) and v.dim() == 1 and not v.is_floating_point():
            return [int(x) for x in v.tolist()]
        return [_as_int(x, symint) for x in _sequence(v)]

    return convert


def _float_list(n):
    def convert(v):
        if isinstance(v, float) and n:
            return [v] * n
        return [_as_float(x) for x in _sequence(v)]

    return convert


def _bool_list(n):
    def convert(v):
        out = [_as_bool(x) for x in _sequence(v)]
        if n and len(out) != n:  # bound to a std::array<bool, N>
            raise RuntimeError(f"Tried to convert a List with {len(out)} elements to a fixed-size array of size {n}")
        return out

    return convert


def _tensor_list(optional_items):
    def convert(v):
        items = _sequence(v)
        for x in items:
            if not (isinstance(x, _tensor_cls()) or (optional_items and x is None)):
                raise Mismatch
        return v

    return convert


_SCALARS = {
    "int": lambda v: _as_int(v), "SymInt": lambda v: _as_int(v, symint=True), "float": _as_float,
    "bool": _as_bool, "Scalar": _as_scalar, "str": _as_str, "Device": _as_device,
    "Generator": _as_generator, "ScalarType": _enum("ScalarType"), "Layout": _enum("Layout"),
    "MemoryFormat": _enum("MemoryFormat"), "Tensor": _as_tensor,
}


def converter(base_type: str):
    """The conversion for a schema type (alias annotations removed), or None for a type this
    module leaves to the operator (Dimname, Storage, Stream, ...). Tensor arguments are left to
    the caller, which knows whether numbers may stand for them."""
    optional = base_type.endswith("?")
    t = base_type[:-1] if optional else base_type
    m = _LIST.match(t)
    if m:
        elem, n = m.group(1), int(m.group(2) or 0)
        if elem in _INTLIKE:
            conv = _int_list(elem == "SymInt", n)
        elif elem == "float":
            conv = _float_list(n)
        elif elem == "bool":
            conv = _bool_list(n)
        elif elem in ("Tensor", "Tensor?"):
            conv = _tensor_list(elem == "Tensor?")
        else:
            return None
    elif t.startswith("Tensor?[") or t == "Tensor?[]":
        conv = _tensor_list(True)
    else:
        conv = _SCALARS.get(t)
        if conv is None:
            return None
    if not optional:
        return conv

    def maybe(v):
        return None if v is None else conv(v)

    return maybe


def jit_type_name(t: str) -> str:
    """A schema type as the JIT's messages print it: `int[1]?` -> `Optional[List[int]]`."""
    opt = t.endswith("?")
    base = t.rstrip("?")
    lst = base.endswith("]")
    base = re.sub(r"\[\d*\]$", "", base)
    base = {"SymInt": "int", "Scalar": "number"}.get(base, base)
    if lst:
        base = f"List[{base}]"
    return f"Optional[{base}]" if opt else base

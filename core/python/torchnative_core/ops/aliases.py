"""Operators that are another operator under a second name, or a copy of a view (`view_copy`,
`t_copy`, ... are `view`, `t`, ... materialised), registered from the schema table."""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

from . import IMPLS
from . import base as B

# upstream's alias pairs (native_functions.yaml documents each as "alias for ...")
ALIASES = {
    "divide.Tensor": "div.Tensor", "divide.Scalar": "div.Scalar", "divide.Tensor_mode": "div.Tensor_mode",
    "divide.Scalar_mode": "div.Scalar_mode", "true_divide.Tensor": "div.Tensor", "true_divide.Scalar": "div.Scalar",
    "multiply.Tensor": "mul.Tensor", "multiply.Scalar": "mul.Scalar", "subtract.Tensor": "sub.Tensor",
    "subtract.Scalar": "sub.Scalar", "unsafe_chunk": "chunk", "unsafe_split.Tensor": "split.Tensor",
    "unsafe_split_with_sizes": "split_with_sizes", "special_xlog1py": "xlog1py", "arctan2": "atan2",
    "clip": "clamp", "clip.Tensor": "clamp.Tensor",
}


def _alias(target):
    def run(*args):
        return B.door(target, *args)

    return run


def _copy_of(view_op):
    def run(*args):
        out = B.door(view_op, *args)
        if isinstance(out, (tuple, list)):
            return [B.door("contiguous", B.door("clone", t, CONTIGUOUS_FORMAT), None) for t in out]
        return B.door("contiguous", B.door("clone", out, CONTIGUOUS_FORMAT), None)

    return run


def install():
    from ..binding.schema import all_schemas

    schemas = all_schemas()
    for name, target in ALIASES.items():
        if name in schemas and name not in IMPLS and target in IMPLS:
            IMPLS[name] = _alias(target)
    for op, s in schemas.items():
        base, _, ov = op.partition(".")
        if op in IMPLS or s.is_out or not base.endswith("_copy") or base == "copy":
            continue
        view_op = base[: -len("_copy")] + ("." + ov if ov else "")
        if view_op in IMPLS:
            IMPLS[op] = _copy_of(view_op)

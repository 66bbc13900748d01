"""The `_foreach_*` operators, as the loop over their per-tensor operator that upstream's slow
path (ForeachOpsKernels.cpp) is: optimizers and clip_grad_norm_ use them on CPU.

Each foreach overload maps to a per-element overload by upstream's naming: `List` and `Tensor`
take the Tensor overload, `Scalar` and `ScalarList` the Scalar one (falling back to the default
overload). List arguments (`Tensor[]`, `Scalar[]`) are indexed per element; the rest are shared.
"""

from __future__ import annotations

from .. import IMPLS
from .. import base as B


_OVERLOADS = {
    "List": ("Tensor", ""),
    "Tensor": ("Tensor", ""),
    "Scalar": ("Scalar", "", "Tensor"),
    "ScalarList": ("Scalar", "", "Tensor"),
    "": ("", "Tensor", "Scalar"),
}


# foreach names whose per-element operator is spelt differently
_RENAMED = {("maximum", "Scalar"): "clamp_min", ("maximum", "ScalarList"): "clamp_min",
            ("minimum", "Scalar"): "clamp_max", ("minimum", "ScalarList"): "clamp_max"}


def _element_op(base, overload):
    inplace = base.endswith("_")
    stem = base[:-1] if inplace else base
    stem = _RENAMED.get((stem, overload), stem)
    if stem == "norm":
        return "linalg_vector_norm"
    for ov in _OVERLOADS.get(overload, (overload,)):
        name = stem + ("_" if inplace else "") + ("." + ov if ov else "")
        if name in IMPLS:
            return name
    return None


def _make(op, schema):
    base, _, overload = op.partition(".")
    base = base[len("_foreach_"):]
    list_args = [i for i, a in enumerate(schema.args) if a.type.rstrip("?").endswith("[]") and "Tensor" in a.type
                 or a.type.startswith("Scalar[]")]
    scalars_tensor = [i for i, a in enumerate(schema.args) if a.name == "scalars" and a.type == "Tensor"]
    inplace = base.endswith("_")

    def run(*args):
        elem = _element_op(base, overload)
        if elem is None:
            raise NotImplementedError(f"aten.{op} has no per-tensor operator implemented in torchnative yet")
        n = len(args[list_args[0]]) if list_args else 0
        out = []
        for i in range(n):
            a = list(args)
            for j in list_args:
                a[j] = args[j][i]
            for j in scalars_tensor:
                a[j] = args[j][i].item()
            if elem == "linalg_vector_norm":
                a = [a[0], a[1] if len(a) > 1 else 2, None, False, a[2] if len(a) > 2 else None]
            out.append(B.door(elem, *a))
        return None if inplace else out

    return run


def install():
    from ...binding.schema import all_schemas

    for op, schema in all_schemas().items():
        if op.startswith("_foreach_") and op not in IMPLS:
            IMPLS[op] = _make(op, schema)

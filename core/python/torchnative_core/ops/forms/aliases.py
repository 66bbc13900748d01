"""Operators that are another operator under a second name, or a copy of a view (`view_copy`,
`t_copy`, ... are `view`, `t`, ... materialised), registered from the schema table."""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
from .. import IMPLS
from .. import base as B


# upstream's aliases (native_functions.yaml documents each as "alias for ..."; torch's docs say
# "Alias for :func:`...`"): every overload, in-place and out= form of the first name runs the
# second's (tests/test_aliases.py checks the list against upstream's documentation)
ALIAS_PAIRS = (
    ("absolute", "abs"), ("arccos", "acos"), ("arccosh", "acosh"), ("arcsin", "asin"), ("arcsinh", "asinh"),
    ("arctan", "atan"), ("arctanh", "atanh"), ("arctan2", "atan2"), ("clip", "clamp"), ("fix", "trunc"),
    ("negative", "neg"), ("divide", "div"), ("multiply", "mul"), ("subtract", "sub"), ("true_divide", "div"),
    ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne"),
    ("ger", "outer"), ("moveaxis", "movedim"), ("swapaxes", "transpose"), ("swapdims", "transpose"),
    ("row_stack", "vstack"), ("concat", "cat"), ("concatenate", "cat"), ("orgqr", "linalg_householder_product"),
    ("det", "linalg_det"), ("linalg_matmul", "matmul"), ("special_digamma", "digamma"), ("special_psi", "digamma"),
    ("special_gammaln", "lgamma"), ("special_erf", "erf"), ("special_erfc", "erfc"), ("special_erfinv", "erfinv"),
    ("special_exp2", "exp2"), ("special_expm1", "expm1"), ("special_expit", "sigmoid"), ("special_logit", "logit"),
    ("special_sinc", "sinc"), ("special_round", "round"), ("special_log1p", "log1p"), ("special_i0", "i0"),
    ("special_polygamma", "polygamma"), ("special_logsumexp", "logsumexp"), ("special_softmax", "softmax"),
    ("special_log_softmax", "log_softmax"), ("special_xlogy", "xlogy"), ("special_xlog1py", "xlog1py"),
    ("special_multigammaln", "mvlgamma"), ("special_gammainc", "igamma"), ("special_gammaincc", "igammac"),
    ("inverse", "linalg_inv"), ("slogdet", "linalg_slogdet"), ("trapz", "trapezoid"),
    ("matrix_exp", "linalg_matrix_exp"), ("linalg_matrix_power", "matrix_power"), ("unsafe_chunk", "chunk"),
    ("unsafe_split", "split"), ("unsafe_split_with_sizes", "split_with_sizes"),
)


def _arg_types(schema):
    return [a.base_type for a in schema.args]


def _counterparts(schemas):
    """(alias overload, target overload) pairs with the same argument types, both directions: the
    core implements whichever of the two names it implements, the other runs it."""
    by_base: dict[str, list[str]] = {}
    for op in schemas:
        by_base.setdefault(op.partition(".")[0], []).append(op)
    for a, b in ALIAS_PAIRS:
        for suffix in ("", "_"):
            for op in by_base.get(a + suffix, ()):
                ov = op.partition(".")[2]
                same_name = b + suffix + ("." + ov if ov else "")
                cands = [same_name] if same_name in schemas else []
                # an overload named otherwise (trapz.x / trapezoid.x agree; transpose has only .int)
                cands += [t for t in by_base.get(b + suffix, ()) if t != same_name]
                for t in cands:
                    if _arg_types(schemas[op]) == _arg_types(schemas[t]):
                        yield op, t
                        break


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
    from ...binding.schema import all_schemas

    schemas = all_schemas()
    for name, target in _counterparts(schemas):
        if name not in IMPLS and target in IMPLS:
            IMPLS[name] = _alias(target)
        elif target not in IMPLS and name in IMPLS:
            IMPLS[target] = _alias(name)
    for op, s in schemas.items():
        base, _, ov = op.partition(".")
        if op in IMPLS or s.is_out or not base.endswith("_copy") or base == "copy":
            continue
        view_op = base[: -len("_copy")] + ("." + ov if ov else "")
        if view_op in IMPLS:
            IMPLS[op] = _copy_of(view_op)

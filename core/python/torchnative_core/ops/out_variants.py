"""`out=` overloads (`add.out`, `maximum.out`, ...) without an implementation of their own: the
functional overload with the same inputs computes the result, which is written into `out` with
upstream's rules: the result dtype must be castable to out's, and an `out` of the wrong shape is
resized (with upstream's deprecation warning when it held elements)."""

from __future__ import annotations

import warnings

from . import IMPLS
from . import base as B


def _resize_like(out, shape):
    if list(out._tn_sizes) == list(shape):
        return
    if B.numel(out._tn_sizes):
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(out._tn_sizes)}, which does not "
            f"match the required output shape {list(shape)}. This behavior is deprecated, and in a future PyTorch release "
            "outputs will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by "
            "resizing it, inplace, to zero elements with t.resize_(0).",
            UserWarning,
            stacklevel=4,
        )
    fresh = B.empty(shape, B.dtype_of(out), B.device_of(out))
    out._tn_set_storage_from(fresh, list(fresh._tn_sizes), list(fresh._tn_strides), 0)


def write_out(out, result):
    """Copies `result` into the user's `out` tensor, as upstream's out= kernels do."""
    from .elementwise import _type_name

    got, mine = B.dtype_of(result), B.dtype_of(out)
    if not B.can_cast(got, mine):
        raise RuntimeError(f"result type {_type_name(got)} can't be cast to the desired output type {_type_name(mine)}")
    _resize_like(out, result._tn_sizes)
    B.door("copy_", out, result, False)
    return out


def _make(op, functional, n_out):
    def run(*args):
        ins, outs = args[: len(args) - n_out], args[len(args) - n_out:]
        res = B.door(functional, *ins)
        results = res if isinstance(res, (tuple, list)) else (res,)
        for o, r in zip(outs, results):
            write_out(o, r)
        return outs[0] if n_out == 1 else tuple(outs)

    run.__name__ = op.replace(".", "_")
    return run


def install():
    from ..binding.schema import all_schemas

    schemas = all_schemas()
    by_base: dict = {}
    for name, s in schemas.items():
        if not s.is_out and not s.is_mutable:
            by_base.setdefault(name.split(".")[0], []).append(name)
    for op, s in schemas.items():
        if not s.is_out or op in IMPLS:
            continue
        outs = [a for a in s.args if a.is_write and a.kwarg_only]
        ins = [a.name for a in s.args if not (a.is_write and a.kwarg_only)]
        for cand in by_base.get(op.split(".")[0], ()):
            if cand in IMPLS and [a.name for a in schemas[cand].args] == ins:
                IMPLS[op] = _make(op, cand, len(outs))
                break

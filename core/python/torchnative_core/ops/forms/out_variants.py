"""`out=` overloads (`add.out`, `maximum.out`, ...) without an implementation of their own: the
functional overload with the same inputs computes the result, which is written into `out` with
upstream's rules: the result dtype must be castable to out's, and an `out` of the wrong shape is
resized (with upstream's deprecation warning when it held elements)."""

from __future__ import annotations

import warnings
from .. import IMPLS
from .. import base as B


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


def write_out(out, result, exact=False):
    """Copies `result` into the user's `out` tensor, as upstream's out= kernels do; `exact`: as
    the out= wrappers torchgen generates (the `generated` tag: resize_out_helper, then copy_arg,
    which takes only out's own dtype)."""
    got, mine = B.dtype_of(result), B.dtype_of(out)
    src, dst = B.device_of(result), B.device_of(out)
    if src != dst:  # TensorIterator's check: out= never moves a result to another device
        raise RuntimeError(f"Attempting to copy from device {src} to device {dst}, but cross-device copies are not "
                           "allowed!")
    if exact:
        _resize_like(out, result._tn_sizes)
        if got is not mine:
            raise RuntimeError(f"Expected out tensor to have dtype {B.cpp_type_name(got)}, but got "
                               f"{B.cpp_type_name(mine)} instead")
    elif not B.can_cast(got, mine):
        raise RuntimeError(f"result type {B.scalar_type_name(got)} can't be cast to the desired output type "
                           f"{B.scalar_type_name(mine)}")
    else:
        _resize_like(out, result._tn_sizes)
    B.door("copy_", out, result, False)
    return out


def _make(op, functional, n_out, wrap=(), exact=False):
    def run(*args):
        ins, outs = args[: len(args) - n_out], args[len(args) - n_out:]
        if wrap:  # numbers where the functional overload takes tensors: wrapped, as upstream does
            ins = [B.C._tn_scalar_to_tensor(x) if w and not isinstance(x, B.C.TensorBase) else x for x, w in zip(ins, wrap)]
        res = B.door(functional, *ins)
        results = res if isinstance(res, (tuple, list)) else (res,)
        for o, r in zip(outs, results):
            write_out(o, r, exact)
        return outs[0] if n_out == 1 else tuple(outs)

    run.__name__ = op.replace(".", "_")
    return run


def install():
    from ...binding.schema import all_schemas

    schemas = all_schemas()
    by_base: dict = {}
    for name, s in schemas.items():
        if not s.is_out and not s.is_mutable:
            by_base.setdefault(name.split(".")[0], []).append(name)
    for op, s in schemas.items():
        if not s.is_out or op in IMPLS:
            continue
        outs = [a for a in s.args if a.is_write and a.kwarg_only]
        exact = "generated" in s.tags
        # the functional overload with the same inputs, names and types (mul.Scalar_out is
        # mul.Scalar's, not mul.Tensor's, whose arguments have the same names)
        ins = [(a.name, a.type) for a in s.args if not (a.is_write and a.kwarg_only)]
        cands = [c for c in by_base.get(op.split(".")[0], ()) if c in IMPLS]
        for cand in cands:
            if [(a.name, a.type) for a in schemas[cand].args] == ins:
                IMPLS[op] = _make(op, cand, len(outs), exact=exact)
                break
        else:
            # floor_divide.Scalar_out, div.Scalar_mode_out, bitwise_and.Scalar_Tensor_out: the
            # overload taking tensors where this one takes a Scalar
            for cand in cands:
                theirs = [(a.name, a.type) for a in schemas[cand].args]
                if len(theirs) == len(ins) and all(n == m and (t == u or (t == "Scalar" and u == "Tensor"))
                                                   for (n, t), (m, u) in zip(ins, theirs)):
                    IMPLS[op] = _make(op, cand, len(outs), [t != u for (_, t), (_, u) in zip(ins, theirs)], exact)
                    break

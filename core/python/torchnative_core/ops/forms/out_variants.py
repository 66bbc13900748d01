"""`out=` overloads (`add.out`, `maximum.out`, ...) without an implementation of their own: the
functional overload with the same inputs computes the result, which is written into `out` with
upstream's rules: the result dtype must be castable to out's, and an `out` of the wrong shape is
resized (with upstream's deprecation warning when it held elements)."""

from __future__ import annotations

import warnings
from .. import IMPLS
from .. import base as B
from ...surface import types as T


def _resize_like(out, shape, warn=True):
    if list(out._tn_sizes) == list(shape):
        return
    if warn and B.numel(out._tn_sizes):
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
    else:
        B.check_safe_cast(got, mine)
        _resize_like(out, result._tn_sizes)
    B.door("copy_", out, result, False)
    return out


def _bool_result(name):
    def check(ins, out):
        if B.dtype_of(out) is not B.BOOL:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")
    return check


def _byte_bool_result(name):
    def check(ins, out):  # check_result_is_bytebool (ReduceOps.cpp): out is bool or uint8, whatever the input
        d = B.dtype_of(out)
        if d is not B.BOOL and d._tn_name != "uint8":
            raise RuntimeError(f"{name} only supports bool tensor for result, got: {B.scalar_type_name(d)}")
    return check


def _exact_result(dtype_name):
    def check(ins, out):
        d = B.dtype_of(out)
        if d._tn_name != dtype_name:
            raise RuntimeError(f"Expected out tensor to have dtype {B.cpp_type_name(T.BY_NAME[dtype_name])}, "
                               f"but got {B.cpp_type_name(d)} instead")
    return check


def _nonzero_static_result(ins, out):
    d = B.dtype_of(out)
    if d is not B.I64:
        raise RuntimeError(f"nonzero_static: Expected out tensor to have scalar type Long but got scalar type"
                           f"{B.scalar_type_name(d)}")


def _same_as_input(name):
    def check(ins, out):
        if B.dtype_of(out) is not B.dtype_of(ins[0]):
            raise RuntimeError(f"{name}: dtype of out: {B.scalar_type_name(B.dtype_of(out))} should be same as input: "
                               f"{B.scalar_type_name(B.dtype_of(ins[0]))}")
    return check


def _same_dtype_as_input(ins, out):
    """build_borrowing_unary_op's check_all_same_dtype: out must hold the input's dtype."""
    got, want = B.dtype_of(out), B.dtype_of(ins[0])
    if got is not want:
        raise RuntimeError(f"Found dtype {B.scalar_type_name(got)} but expected {B.scalar_type_name(want)}")


# Unary operators whose TensorIterator keeps one dtype for input and output (floats to floats,
# no cast into out), by operator name; clamp only with Scalar bounds.
_SAME_DTYPE_UNARY = ("abs", "absolute", "neg", "negative", "sign", "sgn", "floor", "ceil", "round", "trunc", "fix",
                     "frac", "bitwise_not", "silu", "gelu", "elu", "leaky_relu", "hardsigmoid", "hardswish",
                     "hardtanh", "softplus", "mish", "hardshrink", "softshrink", "clamp.out", "clamp_min.out",
                     "clamp_max.out")


# The out= dtype each operator's upstream kernel demands, checked after its input checks (as the
# structured meta functions check in set_output), by operator name.
OUT_DTYPE_CHECKS = {
    "signbit": _bool_result("signbit"), "isneginf": _bool_result("isneginf"), "isposinf": _bool_result("isposinf"),
    "any": _byte_bool_result("any"), "all": _byte_bool_result("all"),
    "argmax": _exact_result("int64"), "argmin": _exact_result("int64"), "isin": _exact_result("bool"),
    "nonzero_static": _nonzero_static_result, "nan_to_num": _same_as_input("nan_to_num"),
    "aminmax": lambda ins, out: _exact_result(B.dtype_of(ins[0])._tn_name)(ins, out),
    **{name: _same_dtype_as_input for name in _SAME_DTYPE_UNARY},
}


def _fft_out(name, complex_out):
    def check(ins, outs):
        d = B.dtype_of(outs[0])
        if complex_out and not d.is_complex:
            raise RuntimeError(f"{name} expects a complex output tensor, but got {B.scalar_type_name(d)}")
        if not complex_out and not d.is_floating_point:
            raise RuntimeError(f"{name} expects a floating point output tensor, but got {B.scalar_type_name(d)}")
    return check


def _floating_result(name):
    def check(ins, outs):
        d = B.dtype_of(outs[0])
        if not d.is_floating_point:
            raise RuntimeError(f"{name}(): Expected floating point type for result tensor, but got: {B.scalar_type_name(d)}")
    return check


def _scan_result(ins, outs):
    """cummax/cummin (values, indices) and logcumsumexp: checked before the dim is wrapped."""
    def expect(want, t):
        if B.dtype_of(t) is not want:
            raise RuntimeError(f"expected scalar_type {B.scalar_type_name(want)} but found "
                               f"{B.scalar_type_name(B.dtype_of(t))}")
    if len(outs) > 1:
        expect(B.I64, outs[1])
    expect(B.dtype_of(ins[0]), outs[0])


def _float_power_result(ins, out):
    complex_in = any(isinstance(a, complex) or (isinstance(a, B.C.TensorBase) and B.dtype_of(a).is_complex) for a in ins)
    want = T.BY_NAME["complex128" if complex_in else "float64"]
    if B.dtype_of(out) is not want:
        raise RuntimeError(f"the output given to float_power has dtype {B.scalar_type_name(B.dtype_of(out))} but the "
                           f"operation's result requires dtype {B.scalar_type_name(want)}")


def _frexp_result(ins, outs):
    mantissa, exponent = outs
    if B.dtype_of(mantissa) is not B.dtype_of(ins[0]):
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {B.cpp_type_name(B.dtype_of(ins[0]))} but got "
                           f"{B.cpp_type_name(B.dtype_of(mantissa))}")
    if B.dtype_of(exponent)._tn_name != "int32":
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                           f"{B.cpp_type_name(B.dtype_of(exponent))}")


def _nonzero_result(ins, outs):
    d = B.dtype_of(outs[0])
    if d is not B.I64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type"
                           f"{B.scalar_type_name(d)}")


OUT_DTYPE_CHECKS.update({"argsort": _exact_result("int64"), "float_power": _float_power_result})


def _cat_result(ins, outs):
    """cat's meta function: the inputs' promoted dtype castable to out's, before any shape check
    (a TypeError, TORCH_CHECK_TYPE)."""
    tensors = list(ins[0]) if ins and isinstance(ins[0], (list, tuple)) else []
    common = None
    for t in tensors:
        common = B.promote_types(common, B.dtype_of(t))
    if common is not None and not B.can_cast(common, B.dtype_of(outs[0])):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{B.scalar_type_name(B.dtype_of(outs[0]))}")


# Checks upstream makes on out before it looks at the other arguments, by operator name.
EARLY_OUT_CHECKS = {
    **{name: _cat_result for name in ("cat", "concat", "concatenate", "column_stack", "hstack", "vstack", "dstack",
                                      "row_stack")},
    **{name: OUT_DTYPE_CHECKS.pop(name) for name in ("signbit", "isneginf", "isposinf", "any", "all", "nan_to_num",
                                                      "nonzero_static")},
    **{f"fft_{k}": _fft_out(k, k in ("fft", "ifft", "rfft", "ihfft"))
       for k in ("fft", "ifft", "rfft", "ihfft", "hfft", "irfft")},
    "logsumexp": _floating_result("logsumexp"), "special_logsumexp": _floating_result("logsumexp"),
    "cummax": _scan_result, "cummin": _scan_result, "logcumsumexp": _scan_result,
    "frexp": _frexp_result, "nonzero": _nonzero_result,
}
for _name in ("signbit", "isneginf", "isposinf", "any", "all", "nan_to_num", "nonzero_static"):
    EARLY_OUT_CHECKS[_name] = (lambda c: lambda ins, outs: c(ins, outs[0]))(EARLY_OUT_CHECKS[_name])


# Structured kernels whose meta function takes out's dtype (or checks castability itself), so
# their out= is not held to the computed dtype: cat (can_cast), cumsum/cumprod and
# sum/mean/prod without dtype= (out's dtype), pow.Scalar, all/any (bool or uint8).
_STRUCTURED_TAKING_OUT_DTYPE = {"cat", "cumsum", "cumprod", "sum", "nansum", "mean", "prod", "pow", "all", "any"}


# Unstructured out= overloads that take only the dtype of their result, as upstream's kernels
# check it (resize_output plus a dtype check, check_all_same_dtype, or their own message): found
# by calling each with an out of another dtype on both sides (`tools/fuzz_ops.py probe-out`).
_EXACT_OUT = {
    "adaptive_avg_pool2d.out", "binary_cross_entropy.out", "block_diag.out", "bucketize.Tensor_out", "clip.out",
    "conj_physical.out", "cross.out", "diag.out", "dot.out", "frobenius_norm.out", "heaviside.out", "histc.out",
    "histogram.bin_ct_out", "index.Tensor_out", "inverse.out", "lerp.Tensor_out", "lift.out", "linalg_cholesky.out",
    "linalg_det.out", "linalg_eigh.eigvals", "linalg_inv.out", "linalg_matmul.out", "linalg_matrix_norm.out",
    "linalg_norm.out", "linalg_slogdet.out", "linalg_solve.out", "linalg_solve_triangular.out", "linalg_svdvals.out",
    "linalg_vecdot.out", "linear.out", "log_sigmoid.out", "log_sigmoid_forward.output", "log_softmax.int_out",
    "masked_select.out", "matmul.out", "msort.out", "narrow_copy.out", "nuclear_norm.dim_out",
    "nuclear_norm.out", "qr.Q", "slogdet.out", "soft_margin_loss.out", "softmax.int_out", "special_round.out", "svd.U",
    "take.out", "take_along_dim.out", "tensordot.out", "vdot.out", "where.self_out",
}


def _input_dtype_result(ins, out):
    """amax/amin's own check (ReduceOps.cpp): out holds the input's dtype."""
    a, b = B.dtype_of(ins[0]), B.dtype_of(out)
    if a is not b:
        raise RuntimeError(f"Expected the dtype for input and out to match, but got {B.scalar_type_name(a)} for "
                           f"input's dtype and {B.scalar_type_name(b)} for out's dtype.")


OUT_DTYPE_CHECKS.update({"amax": _input_dtype_result, "amin": _input_dtype_result})


def _structured_result(outs, results):
    """A structured kernel's set_output (resize_out): each out must have the dtype the meta
    function computed, checked before anything is resized."""
    for o, r in zip(outs, results):
        got, want = B.dtype_of(o), B.dtype_of(r)
        if got is not want:
            raise RuntimeError(f"Expected out tensor to have dtype {B.cpp_type_name(want)}, but got "
                               f"{B.cpp_type_name(got)} instead")


def _iterator_out_checks(op, ins, out):
    """What a TensorIterator checks on out before its kernel's dtype dispatch, run when the
    functional overload refused the dtype (so upstream's earlier error is the one raised):
    check_all_same_dtype for the unary operators that keep one dtype, else the operands' common
    dtype castable to out's."""
    tensors = [a for a in ins if isinstance(a, B.C.TensorBase)]
    if not tensors:
        return
    if op.split(".")[0] in _SAME_DTYPE_UNARY or op in _SAME_DTYPE_UNARY:
        _same_dtype_as_input(tensors, out)
    else:
        B.check_safe_cast(B.result_type(*[a for a in ins if isinstance(a, (B.C.TensorBase, bool, int, float))]),
                          B.dtype_of(out))


# Reductions whose out= without dtype= computes in out's dtype (get_dtype_from_result): a float32
# sum into a float64 out accumulates in float64, not in float32 and then cast. A dtype= must be
# out's (nansum and nanmean, which is nansum_out divided, say so in their own words).
_DTYPE_FROM_RESULT = {"sum", "nansum", "nanmean", "mean", "prod"}


def _dtype_from_result(op, ins, dtype_at, out):
    want = B.dtype_of(out)
    if ins[dtype_at] is None:
        ins = list(ins)
        ins[dtype_at] = want
    elif ins[dtype_at] is not want:
        given = ins[dtype_at]
        if op.startswith("nan"):
            raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got {B.scalar_type_name(want)} "
                               f"and {B.scalar_type_name(given)}.")
        raise RuntimeError(f"Expected out tensor to have dtype {B.cpp_type_name(given)}, but got "
                           f"{B.cpp_type_name(want)} instead")
    return ins


def _make(op, functional, n_out, wrap=(), exact=False, pointwise=False, structured=False, reduction_at=None,
          dtype_at=None):
    check = OUT_DTYPE_CHECKS.get(op, OUT_DTYPE_CHECKS.get(op.split(".")[0]))
    if op.split(".")[0] in ("clamp", "clamp_min", "clamp_max") and op not in OUT_DTYPE_CHECKS:
        check = None  # Tensor bounds promote
    early = EARLY_OUT_CHECKS.get(op.split(".")[0])
    def run(*args):
        ins, outs = args[: len(args) - n_out], args[len(args) - n_out:]
        if wrap:  # numbers where the functional overload takes tensors: wrapped, as upstream does
            ins = [B.C._tn_scalar_to_tensor(x) if w and not isinstance(x, B.C.TensorBase) else x for x, w in zip(ins, wrap)]
        if dtype_at is not None and dtype_at < len(ins):
            ins = _dtype_from_result(op, ins, dtype_at, outs[0])
        for o in outs:  # TensorIterator's compute_mem_overlaps, before any shape is looked at
            if pointwise and any(st == 0 and sz > 1 for sz, st in zip(o._tn_sizes, o._tn_strides)):
                raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                                   "single memory location. Please clone() the tensor before performing the operation.")
        if early is not None:
            early(ins, outs)
        if reduction_at is not None and reduction_at < len(ins) and ins[reduction_at] not in (0, 1, 2):
            # upstream's loss out= kernels either assert or write the unreduced loss's first
            # element for another code (huber_loss.out): a wrong answer, so refused
            raise RuntimeError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {ins[reduction_at]}")
        try:
            res = B.door(functional, *ins)
        except NotImplementedError:
            if pointwise:
                _iterator_out_checks(op, ins, outs[0])
            raise
        if check is not None:
            check(ins, outs[0])
        results = res if isinstance(res, (tuple, list)) else (res,)
        if structured:
            _structured_result(outs, results)
        for o, r in zip(outs, results):
            if any(o is a for a in ins) and list(o._tn_sizes) != list(r._tn_sizes):
                if pointwise:  # TensorIterator does not resize an output that is also an input
                    raise RuntimeError(f"output with shape {list(o._tn_sizes)} doesn't match the broadcast shape "
                                       f"{list(r._tn_sizes)}")
                # upstream resizes out, and with it the input, then reads the resized input: a result
                # of its implementation's order, not of the operator; refused
                raise RuntimeError(f"{op}: out= is also an input and would be resized from {list(o._tn_sizes)} to "
                                   f"{list(r._tn_sizes)} before being read; pass a separate out tensor")
            write_out(o, r, exact)
        return outs[0] if n_out == 1 else tuple(outs)

    run.__name__ = op.replace(".", "_")
    return run


# Elementwise operators whose out= runs through a TensorIterator but whose schema lacks the
# `pointwise` tag (activations, the special_ names).
_ITERATOR_OPS = {"hardsigmoid", "hardswish", "silu", "gelu", "elu", "leaky_relu", "hardtanh", "softplus", "mish",
                 "hardshrink", "softshrink", "threshold", "special_xlogy", "special_xlog1py", "special_entr"}


def _iterator_bases(schemas):
    """Operator names whose out= upstream runs through a TensorIterator (its overlap and alias
    rules): the `pointwise`-tagged ones, their aliases, and _ITERATOR_OPS (torchgen's generated
    out= wrappers, the `exact` ones, resize and copy instead)."""
    from .aliases import ALIAS_PAIRS

    bases = {name.split(".")[0] for name, s in schemas.items() if "pointwise" in s.tags} | _ITERATOR_OPS
    return bases | {a for a, b in ALIAS_PAIRS if b in bases}


_OPTIONS = ("dtype", "layout", "device", "pin_memory")


def _refusing_as(op, functional, call):
    """Runs `call`; a refusal of the functional overload is reported as the out= overload's own
    (the user called `op`, and the functional's name would send them looking for the wrong one)."""
    try:
        return call()
    except NotImplementedError as e:
        theirs = "aten." + (functional if "." in functional else functional + ".default")
        msg = str(e)
        if not msg.startswith(theirs + " has no kernel"):
            raise
        raise NotImplementedError("aten." + op + msg[len(theirs):]) from None


def _make_factory(op, functional, names, exact):
    """An out= overload of a factory or a `*_like` operator: the functional overload takes
    TensorOptions the out= form has not; both of upstream's kinds pass out's dtype, layout and
    device (torchgen's translate takes them from out). torchgen's generated wrappers (`exact`:
    the `*_like` and window forms) then resize out with the deprecation warning and copy; the
    hand-written factory kernels (zeros_out, rand_out, randperm_out, eye_out, full_out,
    linspace_out, ...) resize out silently and fill it."""
    def run(*args):
        ins, out = args[:-1], args[-1]
        kwargs = dict(zip(names, ins))
        res = _refusing_as(op, functional, lambda: B.call(functional, **kwargs, dtype=B.dtype_of(out),
                                                           device=B.device_of(out)))
        if exact:
            return write_out(out, res, exact=True)
        _resize_like(out, res._tn_sizes, warn=False)
        B.door("copy_", out, res, False)
        return out

    run.__name__ = op.replace(".", "_")
    return run


def install():
    from ...binding.schema import all_schemas

    schemas = all_schemas()
    iterator_bases = _iterator_bases(schemas)
    by_base: dict = {}
    for name, s in schemas.items():
        if not s.is_out and not s.is_mutable:
            by_base.setdefault(name.split(".")[0], []).append(name)
    for op, s in schemas.items():
        if not s.is_out or op in IMPLS:
            continue
        outs = [a for a in s.args if a.is_write and a.kwarg_only]
        exact = "generated" in s.tags
        structured = op in _EXACT_OUT or (s.extra.get("structured") == "kernel"
                                          and op.split(".")[0] not in _STRUCTURED_TAKING_OUT_DTYPE)
        # the functional overload with the same inputs, names and types (mul.Scalar_out is
        # mul.Scalar's, not mul.Tensor's, whose arguments have the same names)
        ins = [(a.name, a.type) for a in s.args if not (a.is_write and a.kwarg_only)]
        names = [n for n, _ in ins]
        reduction_at = names.index("reduction") if "reduction" in names else None
        dtype_at = names.index("dtype") if "dtype" in names and op.split(".")[0] in _DTYPE_FROM_RESULT else None
        cands = [c for c in by_base.get(op.split(".")[0], ()) if c in IMPLS]
        for cand in cands:
            if [(a.name, a.type) for a in schemas[cand].args] == ins:
                IMPLS[op] = _make(op, cand, len(outs), exact=exact,
                                  pointwise=op.split(".")[0] in iterator_bases and not exact, structured=structured,
                                  reduction_at=reduction_at, dtype_at=dtype_at)
                break
        else:
            # floor_divide.Scalar_out, div.Scalar_mode_out, bitwise_and.Scalar_Tensor_out: the
            # overload taking tensors where this one takes a Scalar
            for cand in cands:
                theirs = [(a.name, a.type) for a in schemas[cand].args]
                if len(theirs) == len(ins) and all(n == m and (t == u or (t == "Scalar" and u == "Tensor"))
                                                   for (n, t), (m, u) in zip(ins, theirs)):
                    IMPLS[op] = _make(op, cand, len(outs), [t != u for (_, t), (_, u) in zip(ins, theirs)], exact,
                                      op.split(".")[0] in iterator_bases and not exact, structured)
                    break
            else:
                # zeros.out, rand.generator_out, zeros_like.out: the functional overload has the
                # same inputs plus TensorOptions
                for cand in cands:
                    theirs = [(a.name, a.type) for a in schemas[cand].args
                              if not (a.kwarg_only and a.name in _OPTIONS)]
                    if len(outs) == 1 and theirs == ins and len(theirs) < len(schemas[cand].args):
                        IMPLS[op] = _make_factory(op, cand, [n for n, _ in ins], exact)
                        break

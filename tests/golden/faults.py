"""Fault injector for the self-test: take an (upstream) encoded result and produce plausibly
wrong versions of it, each labelled with the comparator that is responsible for rejecting it.

    for name, comparator, wrong in faults(result, case_opts): ...

A fault is only produced where it is a real fault (a permutation of equal elements is not
one).  Float value faults are sized by MUST_DETECT, which does not read compare.TOLERANCES:
a tolerance loosened too far makes the self-test fail instead of shrinking the faults.
"""
import math

from .compare import FLOAT_DTYPES

FAULT_NAMES = (
    "harness_error", "exception_swapped", "exception_missing", "unexpected_exception",
    "container_type", "container_dropped_item", "dict_key_renamed", "leaf_kind",
    "tensor_type", "dtype", "shape_extra_dim", "shape_reversed", "value_rel",
    "value_ulps", "value_int_off_by_one", "value_bool_flipped", "permuted", "nan_injected",
    "nan_lost", "inf_sign", "scalar_pytype", "string_changed", "size_changed", "dtype_result",
)
# The float errors a tolerance comparison MUST catch, fixed here independently of the
# tolerances under test: an error e on an element whose upstream value is v is a fault when
# e >= rel * max(|v|, floor).  float32 (and Python floats): 1e-4 relative, ten times stricter
# than the brief's 1e-3.  float64: 1e-12.  float16/bfloat16 cannot resolve 1e-3 (their eps
# is 1e-3 and 8e-3): 2e-2 and 1e-1.  Loosening a tolerance past these fails the self-test;
# test_tolerances_are_measured keeps them within 3x of the measurement.
MUST_DETECT = {"torch.float32": (1e-4, 0.2), "float32": (1e-4, 0.2),
               "builtins.float": (1e-4, 0.2), "torch.float64": (1e-12, 0.1),
               "float64": (1e-12, 0.1), "torch.float16": (2e-2, 1.0), "float16": (2e-2, 1.0),
               "torch.bfloat16": (1e-1, 1.0)}
# Mantissa bits: one ulp of a value stored in that dtype (all values travel as float64).
MANTISSA = {"torch.float16": 10, "float16": 10, "torch.bfloat16": 7, "torch.float32": 23,
            "float32": 23, "torch.float64": 52, "float64": 52, "builtins.float": 52}
OTHER_DTYPE = {"torch.float32": "torch.float64", "torch.float64": "torch.float32",
               "torch.float16": "torch.bfloat16", "torch.bfloat16": "torch.float16",
               "torch.int64": "torch.int32", "torch.int32": "torch.int64",
               "torch.int16": "torch.int8", "torch.int8": "torch.int16",
               "torch.uint8": "torch.int8", "torch.bool": "torch.uint8"}


def ulp(v, dtype):
    return math.ulp(v) * 2.0 ** (52 - MANTISSA.get(dtype, 52))


def faults(ref, opts):
    yield "harness_error", "harness", {"kind": "harness_error", "stage": "serialise",
                                       "error": "injected", "traceback": ""}
    if ref["kind"] == "raised":
        other = "builtins.ValueError" if ref["type"] != "builtins.ValueError" \
            else "builtins.RuntimeError"
        yield "exception_swapped", "exception_type", {**ref, "type": other}
        yield "exception_missing", "kind", {"kind": "scalar", "pytype": "builtins.NoneType",
                                            "value": None}
        return
    yield "unexpected_exception", "kind", {"kind": "raised", "type": "builtins.RuntimeError",
                                           "message": "injected", "traceback": ""}
    yield from _inner(ref, opts)


def _inner(r, opts):
    kind = r["kind"]
    if kind in ("seq", "dict"):
        yield from _container(r, opts)
    elif kind in ("tensor", "ndarray"):
        yield from _tensor(r, opts)
    elif kind == "scalar":
        yield from _scalar(r, opts)
    elif kind == "size":
        yield "size_changed", "shape", {**r, "items": r["items"][:-1] + [r["items"][-1] + 1]
                                        if r["items"] else [1]}
        yield "leaf_kind", "kind", {"kind": "seq", "pytype": "builtins.tuple", "items": [
            {"kind": "scalar", "pytype": "builtins.int", "value": s} for s in r["items"]]}
    elif kind == "dtype":
        yield "dtype_result", "dtype", {**r, "name": OTHER_DTYPE.get(r["name"], "torch.int64")
                                        if r["name"] != "torch.int64" else "torch.int32"}


def _container(r, opts):
    items = r["items"]
    other = "builtins.list" if r["pytype"] != "builtins.list" else "builtins.tuple"
    yield "container_type", "pytype", {**r, "pytype": other}
    if items:
        yield "container_dropped_item", "structure", {**r, "items": items[:-1]}
    if r["kind"] == "dict" and items:
        yield "dict_key_renamed", "structure", {**r, "items": [[items[0][0] + "'",
                                                                 items[0][1]]] + items[1:]}
    for i, item in enumerate(items):  # every fault of every child, in place
        child = item[1] if r["kind"] == "dict" else item
        for name, comp, wrong in _inner(child, opts):
            new = list(items)
            new[i] = [item[0], wrong] if r["kind"] == "dict" else wrong
            yield name, comp, {**r, "items": new}


def _with(r, i, v):
    data = list(r["data"])
    data[i] = v
    return {**r, "data": data}


def _tensor(r, opts):
    data, dtype, shape = r["data"], r["dtype"], r["shape"]
    other = OTHER_DTYPE.get(dtype) or OTHER_DTYPE.get("torch." + dtype, "torch.float32")
    if r["kind"] == "ndarray":
        other = other.replace("torch.", "")
    yield "dtype", "dtype", {**r, "dtype": other}
    yield "shape_extra_dim", "shape", {**r, "shape": shape + [1]}
    if len(shape) >= 2 and shape != shape[::-1]:
        yield "shape_reversed", "shape", {**r, "shape": shape[::-1]}
    if r["kind"] == "tensor":
        yield "tensor_type", "pytype", {**r, "pytype": "torch.nn.parameter.Parameter"
                                        if r["pytype"] == "torch.Tensor" else "torch.Tensor"}
    if not data:
        return
    pytype = {bool: "builtins.bool", int: "builtins.int", float: "builtins.float"}
    yield "leaf_kind", "kind", {"kind": "scalar", "pytype": pytype[type(data[0])],
                                "value": data[0]}
    yield from _values(r, data, dtype, opts, lambda i, v: _with(r, i, v))


def _values(r, data, dtype, opts, put):
    """Value faults shared by tensors and scalars; put(i, v) returns the faulted result."""
    if dtype in FLOAT_DTYPES:
        exact = bool(opts.get("exact"))
        comp = "exact" if exact else "close"
        rel, floor = MUST_DETECT[dtype]
        finite = [i for i, v in enumerate(data) if math.isfinite(v)]
        if finite:
            i = max(finite, key=lambda j: abs(data[j]))
            v = data[i]
            if exact:
                yield "value_ulps", "exact", put(i, v + ulp(v, dtype))
            else:
                yield "value_rel", "close", put(i, v + rel * max(abs(v), floor))
            yield "nan_injected", "nonfinite", put(i, float("nan"))
            lo = min(finite, key=lambda j: data[j])
            hi = max(finite, key=lambda j: data[j])
            big = max(abs(data[lo]), abs(data[hi]), floor)
            if (data[hi] > data[lo]) if exact else (data[hi] - data[lo] >= rel * big):
                yield "permuted", comp, _swap(put, data, lo, hi)
        nans = [i for i, v in enumerate(data) if math.isnan(v)]
        if nans:
            yield "nan_lost", "nonfinite", put(nans[0], 0.0)
        infs = [i for i, v in enumerate(data) if math.isinf(v)]
        if infs:
            yield "inf_sign", "nonfinite", put(infs[0], -data[infs[0]])
    elif all(isinstance(v, bool) for v in data):
        yield "value_bool_flipped", "exact", put(0, not data[0])
        if len(set(data)) > 1:
            yield "permuted", "exact", _swap(put, data, data.index(False), data.index(True))
    elif all(isinstance(v, int) for v in data):
        yield "value_int_off_by_one", "exact", put(0, data[0] + 1)
        lo, hi = data.index(min(data)), data.index(max(data))
        if data[lo] != data[hi]:
            yield "permuted", "exact", _swap(put, data, lo, hi)


def _swap(put, data, i, j):
    swapped = put(i, data[j])
    swapped["data"][j] = data[i]
    return swapped


def _scalar(r, opts):
    v, pytype = r["value"], r["pytype"]
    if isinstance(v, str):
        yield "string_changed", "exact", {**r, "value": v[:-1] + chr(ord(v[-1]) ^ 1)
                                          if v else "x"}
        return
    if v is None:
        yield "scalar_pytype", "pytype", {**r, "pytype": "builtins.int", "value": 0}
        return
    # int <-> float <-> bool confusion, same numeric value where possible
    swap = {"builtins.bool": ("builtins.int", int), "builtins.int": ("builtins.float", float),
            "builtins.float": ("builtins.int", int)}.get(pytype)
    if swap and not (isinstance(v, float) and not math.isfinite(v)):
        yield "scalar_pytype", "pytype", {**r, "pytype": swap[0], "value": swap[1](v)}
    dtype = "builtins.float" if isinstance(v, float) and pytype == "builtins.float" else \
        "float64" if isinstance(v, float) else None
    if dtype == "float64":  # numpy float scalars compare exactly (not in FLOAT_DTYPES)
        yield "value_ulps", "exact", {**r, "value": v + math.ulp(v)}
        return
    for name, comp, wrong in _values(r, [v], dtype, opts, lambda i, x: {**r, "value": x}):
        if name != "permuted":
            yield name, comp, wrong

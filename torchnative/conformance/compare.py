"""Comparators: is our encoded result the same as upstream's?  Pure Python (no torch/numpy).

compare(ref, ours, opts) returns None when they agree, else a Mismatch naming the
comparator that rejected (one of COMPARATORS) and a readable diff.  Checks run from the
coarsest to the finest, so a fault is reported by the comparator responsible for it.
test_selftest.py proves that every comparator rejects the faults it is responsible for.
"""
import math

COMPARATORS = (
    "harness",         # either side failed to run/serialise the case (never a pass)
    "kind",            # tensor vs number vs container vs raised exception
    "exception_type",  # both raised, different exception types
    "pytype",          # Python type of a value: int vs float, tuple vs list, Tensor vs Parameter
    "structure",       # container length or dict keys
    "dtype",           # tensor/ndarray dtype, or a dtype result
    "shape",           # tensor/ndarray shape, or a torch.Size result
    "nonfinite",       # NaN positions and signed infinities
    "exact",           # bit-for-bit (ints, bools, strings, exact=True floats)
    "close",           # floats within the per-dtype tolerance
)

# (atol, rtol) per dtype: |ours - ref| <= atol + rtol * |ref| elementwise.  MEASURED by
# `measure_tolerances.py` (see docs/golden.md); test_selftest.py::test_tolerances_are_measured
# re-measures them on every run and fails if these stop covering the measurement.
TOLERANCES = {
    "torch.float16": (3e-3, 5e-3),
    "torch.bfloat16": (2e-2, 4e-2),
    "torch.float32": (7e-6, 6e-6),
    "torch.float64": (2e-14, 2e-14),
}
# numpy names and Python floats.  A Python float result is almost always a float32 value
# (.item(), .tolist() of the default dtype), so it gets float32's tolerance.
TOLERANCES.update({
    "float16": TOLERANCES["torch.float16"], "float32": TOLERANCES["torch.float32"],
    "float64": TOLERANCES["torch.float64"], "builtins.float": TOLERANCES["torch.float32"],
})
FLOAT_DTYPES = frozenset(TOLERANCES)


class Mismatch:
    def __init__(self, comparator, path, message):
        assert comparator in COMPARATORS, comparator
        self.comparator, self.path, self.message = comparator, path, message

    def __str__(self):
        where = f" at result{self.path}" if self.path else ""
        return f"[{self.comparator}]{where}: {self.message}"

    __repr__ = __str__


class _Reject(Exception):
    pass


def _reject(comparator, path, message):
    raise _Reject(Mismatch(comparator, path, message))


def describe(r):
    """One-line summary of an encoded result, for diffs."""
    k = r.get("kind")
    if k == "raised":
        return f"raised {r['type']}: {r['message'][:300]}"
    if k == "harness_error":
        return f"harness error ({r['stage']}): {r['error'][:300]}"
    if k in ("tensor", "ndarray"):
        return f"{k} dtype={r['dtype']} shape={tuple(r['shape'])}"
    if k == "scalar":
        return f"{r['pytype']} {r['value']!r}"
    if k == "size":
        return f"torch.Size({r['items']})"
    if k == "dtype":
        return r["name"]
    return f"{r.get('pytype')} of {len(r.get('items', []))}"


def compare(ref, ours, opts=None):
    try:
        _compare(ref, ours, opts or {}, "")
    except _Reject as e:
        return e.args[0]
    return None


def _compare(ref, ours, opts, path):
    for side, r in (("reference", ref), ("ours", ours)):
        if r["kind"] == "harness_error":
            _reject("harness", path, f"{side}: {describe(r)}\n{r.get('traceback', '')}")
    if ref["kind"] != ours["kind"]:
        _reject("kind", path, f"expected {describe(ref)}\n  got {describe(ours)}" +
                (f"\n{ours.get('traceback', '')}" if ours["kind"] == "raised" else ""))
    kind = ref["kind"]
    if kind == "raised":
        if ref["type"] != ours["type"]:
            _reject("exception_type", path, f"expected {describe(ref)}\n  got "
                                            f"{describe(ours)}\n{ours.get('traceback', '')}")
        return  # messages are recorded, not compared
    if ref["pytype"] != ours["pytype"]:
        _reject("pytype", path, f"expected {ref['pytype']}, got {ours['pytype']}")
    if kind in ("seq", "dict"):
        if kind == "dict":
            rk, ok = [k for k, _ in ref["items"]], [k for k, _ in ours["items"]]
            if rk != ok:
                _reject("structure", path, f"keys differ: expected {rk}, got {ok}")
            for (k, r), (_, o) in zip(ref["items"], ours["items"]):
                _compare(r, o, opts, f"{path}[{k}]")
        else:
            if len(ref["items"]) != len(ours["items"]):
                _reject("structure", path, f"length {len(ours['items'])}, expected "
                                           f"{len(ref['items'])}")
            for i, (r, o) in enumerate(zip(ref["items"], ours["items"])):
                _compare(r, o, opts, f"{path}[{i}]")
    elif kind == "dtype":
        if ref["name"] != ours["name"]:
            _reject("dtype", path, f"expected {ref['name']}, got {ours['name']}")
    elif kind == "size":
        if ref["items"] != ours["items"]:
            _reject("shape", path, f"expected torch.Size({ref['items']}), got "
                                   f"torch.Size({ours['items']})")
    elif kind == "scalar":
        _values([ref["value"]], [ours["value"]], [], ref["pytype"], opts, path)
    else:  # tensor, ndarray
        if ref["dtype"] != ours["dtype"]:
            _reject("dtype", path, f"expected {ref['dtype']}, got {ours['dtype']}")
        if ref["shape"] != ours["shape"]:
            _reject("shape", path, f"expected {tuple(ref['shape'])}, got {tuple(ours['shape'])}")
        _values(ref["data"], ours["data"], ref["shape"], ref["dtype"], opts, path)


def _index(flat, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat % s)
        flat //= s
    return tuple(reversed(idx))


def _same_bits(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)  # 0.0 vs -0.0
    return type(a) is type(b) and a == b


def _values(ref, ours, shape, dtype, opts, path):
    def where(i):
        return f"index {_index(i, shape)}" if shape else "value"

    floats = dtype in FLOAT_DTYPES
    if floats:  # NaN positions and infinities first: they break any arithmetic tolerance
        for i, (a, b) in enumerate(zip(ref, ours)):
            fa, fb = isinstance(a, float) and not math.isfinite(a), \
                isinstance(b, float) and not math.isfinite(b)
            if (fa or fb) and not _same_bits(float(a), float(b)):
                _reject("nonfinite", path, f"{where(i)}: expected {a!r}, got {b!r}")
    if not floats or opts.get("exact"):
        bad = [i for i, (a, b) in enumerate(zip(ref, ours)) if not _same_bits(a, b)]
        if bad:
            i = bad[0]
            _reject("exact", path, f"{len(bad)}/{len(ref)} elements differ; first at "
                                   f"{where(i)}: expected {ref[i]!r}, got {ours[i]!r}"
                                   + _errors(ref, ours, floats))
        return
    atol, rtol = TOLERANCES[dtype]
    atol, rtol = opts.get("atol", atol), opts.get("rtol", rtol)
    bad = [i for i, (a, b) in enumerate(zip(ref, ours))
           if math.isfinite(a) and not abs(b - a) <= atol + rtol * abs(a)]
    if bad:
        i = bad[0]
        _reject("close", path, f"{len(bad)}/{len(ref)} elements outside atol={atol:g} "
                               f"rtol={rtol:g}; first at {where(i)}: expected {ref[i]!r}, "
                               f"got {ours[i]!r}" + _errors(ref, ours, True))


def _errors(ref, ours, floats):
    if not floats:
        return ""
    pairs = [(a, b) for a, b in zip(ref, ours) if math.isfinite(a) and math.isfinite(b)]
    abs_err = max((abs(b - a) for a, b in pairs), default=0.0)
    rel_err = max((abs(b - a) / abs(a) for a, b in pairs if a != 0), default=0.0)
    return f"\n  max abs error {abs_err:.3g}, max rel error {rel_err:.3g}"

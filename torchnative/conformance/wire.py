"""The runners' wire format: a case's result (or exception) as JSON, the same under upstream torch and
ours, and the timeout a case runs under. Imported by torchnative/conformance/runner.py and by the
golden suite's runner (tests/golden/runner.py), both of which run under either torch: so this
module imports nothing but the standard library (torch is passed in).
"""
import traceback


class CaseTimeout(BaseException):
    """Raised by SIGALRM inside a case that ran too long (a harness error, not a result)."""


def on_alarm(signum, frame):
    raise CaseTimeout()


def typename(x):
    t = type(x)
    return f"{t.__module__}.{t.__qualname__}"


def flatten(nested, ndim):
    """tolist() output -> flat row-major list."""
    if ndim == 0:
        return [nested]
    out = []
    stack = [(nested, ndim)]
    while stack:  # iterative, row-major
        obj, d = stack.pop()
        if d == 1:
            out.extend(obj)
        else:
            stack.extend((o, d - 1) for o in reversed(obj))
    return out


def _leaf(x):
    if isinstance(x, (bool, int, float)):
        return x
    raise TypeError(f"tolist() produced {typename(x)}, expected bool/int/float")


def encode(v, torch):
    """Result -> JSON-able dict.  Floats are stored as Python floats (repr round-trips, so
    float64 keeps full precision; NaN/inf use json's NaN/Infinity)."""
    if isinstance(v, torch.Tensor):
        dt = v.dtype
        shape = [int(s) for s in v.shape]
        # Half types go through float32 (exact widening) so tolist() needs no half support.
        src = v.float() if dt in (torch.float16, torch.bfloat16) else v
        data = [_leaf(x) for x in flatten(src.tolist(), len(shape))]
        n = 1
        for s in shape:
            n *= s
        if len(data) != n:
            raise ValueError(f"tolist() gave {len(data)} elements for shape {shape}")
        return {"kind": "tensor", "pytype": typename(v), "dtype": str(dt), "shape": shape,
                "contiguous": bool(v.is_contiguous()), "data": data}
    if type(v).__module__ == "numpy" and hasattr(v, "dtype"):
        if hasattr(v, "shape") and v.shape != ():  # ndarray (0-d arrays fall through too)
            shape = [int(s) for s in v.shape]
            return {"kind": "ndarray", "pytype": typename(v), "dtype": str(v.dtype),
                    "shape": shape, "data": [_leaf(x) for x in flatten(v.tolist(), len(shape))]}
        return {"kind": "scalar", "pytype": typename(v), "value": _leaf(v.item())}
    if isinstance(v, torch.Size):  # before tuple: Size is a tuple subclass
        return {"kind": "size", "pytype": typename(v), "items": [int(s) for s in v]}
    if isinstance(v, torch.dtype):
        return {"kind": "dtype", "pytype": typename(v), "name": str(v)}
    if isinstance(v, torch.device):
        return {"kind": "scalar", "pytype": typename(v), "value": str(v)}
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"kind": "scalar", "pytype": typename(v), "value": v}
    if isinstance(v, (tuple, list)):  # incl. torch.return_types.* (structseq)
        return {"kind": "seq", "pytype": typename(v), "items": [encode(x, torch) for x in v]}
    if isinstance(v, dict):
        return {"kind": "dict", "pytype": typename(v),
                "items": [[repr(k), encode(x, torch)] for k, x in v.items()]}
    raise TypeError(f"unsupported result type {typename(v)}; return tensors/numbers/"
                    f"str/Size/dtype or containers of them")


def exc_record(e):
    try:
        msg = str(e)
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    except BaseException:  # a broken exception object still has a type
        msg = tb = "<str() of the exception failed>"
    return {"kind": "raised", "type": typename(e), "message": msg[:2000],
            "traceback": tb[-3000:]}


def harness_error(what, e):
    return {"kind": "harness_error", "stage": what, "error": f"{typename(e)}: {e}"[:2000],
            "traceback": traceback.format_exc()[-3000:]}

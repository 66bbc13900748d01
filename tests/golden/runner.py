"""Run golden cases in *this* interpreter and write one JSON line per event.

    python runner.py OUT.jsonl IDS.json [MODULE ...]

Runs under either torch (upstream or ours), one process per batch.  Output lines:

    {"header": {...}}                 torch imported; versions
    {"import_error": "traceback"}     `import torch` failed; nothing else follows
    {"start": id}                     written (and flushed) before each case runs, so the
                                      parent can name the case if the interpreter dies
    {"id": id, "result": {...}}       the encoded result (see encode())

The runner's own use of torch is deliberately tiny, because our runtime is young: it calls
only manual_seed, isinstance(Tensor), .dtype, .shape, .is_contiguous(), .tolist() and
.float() (for float16/bfloat16 only).  A failure there is a "harness_error", distinct from an
exception raised by the case itself ("raised").
"""
import json
import pathlib
import signal
import sys
import traceback

HERE = pathlib.Path(__file__).resolve().parent
# Import cases as the package `golden` (relative imports inside it).  Drop the script's own
# directory from sys.path so that nothing in it can shadow an installed module.
sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
PACKAGE = HERE.name


class CaseTimeout(BaseException):
    """Raised by SIGALRM inside a case that ran too long (a harness error, not a result)."""


def _on_alarm(signum, frame):
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


def main(out_path, ids_path, modules):
    ids = json.loads(pathlib.Path(ids_path).read_text())
    out = open(out_path, "a", encoding="utf-8")

    def emit(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        import torch
    except BaseException:  # noqa: B036 -- anything, incl. SystemExit from a broken build
        emit({"import_error": traceback.format_exc()})
        return 3
    emit({"header": {"torch": getattr(torch, "__version__", None), "python": sys.executable,
                     "torch_file": getattr(torch, "__file__", None)}})
    import importlib
    registry = importlib.import_module(f"{PACKAGE}.registry")
    cases = registry.load_all(modules or None)
    signal.signal(signal.SIGALRM, _on_alarm)
    for cid in ids:
        emit({"start": cid})
        c = cases[cid]
        try:
            torch.manual_seed(0)
        except BaseException as e:
            emit({"id": cid, "result": harness_error("manual_seed", e)})
            continue
        value = None
        signal.alarm(int(c.opts.get("timeout", 60)))
        try:
            try:
                value = c.fn()
            except (CaseTimeout, KeyboardInterrupt):
                raise
            except BaseException as e:  # the case's own exception is its result
                result = exc_record(e)
            else:
                try:
                    result = encode(value, torch)
                except (CaseTimeout, KeyboardInterrupt):
                    raise
                except BaseException as e:
                    result = harness_error("serialise", e)
        except CaseTimeout as e:
            result = harness_error("timeout", e)
        finally:
            signal.alarm(0)
        value = None  # drop references before the next case
        emit({"id": cid, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))

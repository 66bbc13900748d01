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
import importlib.util
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


# The wire format (encode, exc_record, harness_error, CaseTimeout) is the library's
# torchnative/conformance/wire.py; loaded by path, as the upstream interpreter has no torchnative.
_spec = importlib.util.spec_from_file_location(
    "_tn_wire", HERE.parents[1] / "torchnative" / "conformance" / "wire.py")
wire = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wire)
CaseTimeout, _on_alarm, encode, exc_record, harness_error = (
    wire.CaseTimeout, wire.on_alarm, wire.encode, wire.exc_record, wire.harness_error)


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

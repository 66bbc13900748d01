"""gradcheck over upstream's OpInfo database, on whatever interpreter runs this.

    .venv/bin/python tools/gradcheck_sweep.py [--samples N] [--ops a,b] [--json OUT] [--gradgrad]

For every OpInfo that says it supports autograd, the first N float64 sample inputs are checked
with torch.autograd.gradcheck as upstream's test_ops_gradients calls it (no batched grad, no
forward AD); with --gradgrad, torch.autograd.gradgradcheck instead (double backward), for the
OpInfos that say they support it. Each op is classed: pass (all samples), fail (a gradient disagrees with finite
differences), refused (an operator or derivative torchnative lacks, refused by name), error
(anything else), skip (no float64 samples, or upstream's own test skips or xfails it). Prints the counts and writes per-op details."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings


def upstream_skips(op, torch, test_name):
    """Whether upstream's own test (TestBwdGradients.<test_name>, cpu, float64) skips or
    expects failure for this OpInfo."""
    for d in list(op.skips) + list(op.decorators):
        is_active = getattr(d, "is_active", None)
        if is_active is not None and is_active("TestBwdGradients", test_name, "cpu", torch.float64, {}):
            return True
    return False


def classify(op, n_samples, torch, gradcheck, gradgrad=False):
    if upstream_skips(op, torch, "test_fn_gradgrad" if gradgrad else "test_fn_grad"):
        return "skip", "upstream skips or xfails test_fn_grad for it"
    try:
        samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))[:n_samples]
    except Exception as e:  # noqa: BLE001
        return "error", f"sample_inputs: {type(e).__name__}: {e}"[:300]
    if not samples:
        return "skip", "no float64 samples"
    variant = op.get_op()
    for s in samples:
        inputs = (*s.input, *s.args) if isinstance(s.input, (list, tuple)) else (s.input, *s.args)
        n_in = len(s.input) if isinstance(s.input, (list, tuple)) else 1

        def fn(*xs, s=s, n_in=n_in):
            first = list(xs[:n_in]) if isinstance(s.input, (list, tuple)) else xs[0]
            out = op.gradcheck_wrapper(variant, first, *xs[n_in:], **s.kwargs)
            return s.output_process_fn_grad(out)

        try:
            if gradgrad:
                ok = torch.autograd.gradgradcheck(fn, inputs, check_batched_grad=False, check_grad_dtypes=True,
                                                  nondet_tol=op.gradcheck_nondet_tol, fast_mode=op.gradcheck_fast_mode,
                                                  check_fwd_over_rev=False, check_rev_over_rev=True,
                                                  raise_exception=True)
            else:
                ok = gradcheck(fn, inputs, check_batched_grad=False, check_grad_dtypes=True,
                               nondet_tol=op.gradcheck_nondet_tol, fast_mode=op.gradcheck_fast_mode,
                               check_forward_ad=False, check_undefined_grad=True, raise_exception=True)
            if not ok:
                return "fail", "gradcheck returned False"
        except NotImplementedError as e:
            return "refused", f"{e}"[:300]
        except ValueError as e:
            if "requires_grad=True" in str(e):
                continue  # a sample with nothing to differentiate (upstream's test skips it too)
            return "error", f"ValueError: {e}"[:300]
        except sys.modules["torch.autograd.gradcheck"].GradcheckError as e:
            return "fail", f"{e}"[:300]
        except Exception as e:  # noqa: BLE001
            return "error", f"{type(e).__name__}: {e}"[:300]
    return "pass", f"{len(samples)} samples"


class Timeout(Exception):
    pass


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--ops", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--gradgrad", action="store_true")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch
    from torch.autograd import gradcheck
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(filter(None, args.ops.split(",")))
    results = {}

    def on_alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    t0 = time.time()
    for op in op_db:
        if not op.supports_autograd or (wanted and op.name not in wanted):
            continue
        if args.gradgrad and not op.supports_gradgrad:
            continue
        key = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        signal.alarm(args.timeout)
        try:
            status, detail = classify(op, args.samples, torch, gradcheck, args.gradgrad)
        except Timeout:
            status, detail = "error", f"timeout after {args.timeout}s"
        finally:
            signal.alarm(0)
        results[key] = {"status": status, "detail": detail}
    counts = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = {"torch": torch.__version__, "ops": len(results), "counts": counts, "seconds": round(time.time() - t0, 1)}
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "results": results}, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

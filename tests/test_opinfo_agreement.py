"""Upstream's OpInfo samples replayed on torchnative (issue 4): recorded by the reference
interpreter, replayed by ours, compared in value, shape, dtype and exception type.

tests/data/opinfo_agree.txt lists the OpInfo entries that agree (614 of 692 recorded; this said 606
listed of 611 agreeing before ormqr agreed and the rest were added on 2026-12-03, 577 listed before the operators of 755ef28 and after (ops/reduced_precision.py, losses_extra.py,
opinfo_extra.py), 571 before sort, argsort, matrix_exp, bessel_j0/y1 and __ror__ agreed, and 394 before the
linalg, special-function and scatter-reduce operators of issue 4; most of the rest
refuse by name for an operator not implemented yet). Every listed entry must keep agreeing; the
only disagreements allowed are those in KNOWN_DISAGREEMENTS, each with its reason."""

import json
import subprocess
from pathlib import Path

import pytest
from test_training import OURS, _ref_python

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "opinfo_agreement.py"

# The disagreements allowed, each for a documented reason (docs/STATUS.md, OpInfo agreement row).
# kthvalue left this list when it took upstream's quickselect tie order; sort, argsort and topk
# ("indices among equal values: upstream's unstable introsort orders ties its own way; ours is
# stable") when the unstable sort took libstdc++'s introsort (tests/test_sort_ties.py).
# matrix_exp left it when it took upstream's algorithm in the input's dtype (ops/linalg/matrix_exp.py,
# tests/test_matrix_exp.py); it was "float32: upstream's own float32 rounding (its float32 result
# differs from its float64 one by as much); ours is the float64 result rounded once".
# special.bessel_j0/bessel_y1 left it when J0, J1, Y0, Y1 took upstream's Cephes approximations
# (now the cpu backend's bessel.rs); they were "near zeros of the functions upstream's float64 values are up
# to 3e-7 from the true value (mpmath, 30 digits); ours are within 1e-15".
# linalg.ldl_factor(_ex): float32 sample 0's factor differs from LAPACK's ssytf2 by up to 1.65e-5
# (ops/linalg/ldl.py composes sytf2's Bunch-Kaufman steps from tensor operations, whose rank-1
# updates round in another order than ssyr's); float64 and the other samples agree.
KNOWN_DISAGREEMENTS: set[str] = {"linalg.ldl_factor", "linalg.ldl_factor_ex"}

pytestmark = pytest.mark.runtime


def _record(d, *extra):
    out = subprocess.run([_ref_python(), str(TOOL), "record", str(d), *extra], capture_output=True, text=True,
                         timeout=1800, cwd=str(d.parent))
    assert out.returncode == 0, out.stderr[-3000:]
    return d


def _replay_and_check(recorded, tmp_path, agree_file, known):
    """Replays on ours; every entry of `agree_file` must agree, and only `known` may disagree."""
    report = tmp_path / "replay.json"
    out = subprocess.run([OURS, str(TOOL), "replay", str(recorded), "--json", str(report)], capture_output=True,
                         text=True, timeout=1800, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(report.read_text())["results"]
    expected = [ln.strip() for ln in (REPO / "tests" / "data" / agree_file).read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
    regressed = {e: results.get(e, {}).get("detail", "not replayed") for e in expected if results.get(e, {}).get("status") != "agree"}
    disagree = {k: v["detail"] for k, v in results.items() if v["status"] == "disagree" and k not in known}
    assert not regressed, f"no longer agreeing: {regressed}"
    assert not disagree, f"disagree with upstream: {disagree}"


def test_opinfo_samples_agree_with_upstream(tmp_path):
    recorded = _record(tmp_path / "rec")
    _replay_and_check(recorded, tmp_path, "opinfo_agree.txt", KNOWN_DISAGREEMENTS)


# bfloat16/float16 entries allowed to differ from upstream by more than torch.testing's tolerance
# for the dtype: none beyond KNOWN_DISAGREEMENTS. This set named 14 entries before the operators
# rounded where upstream's kernels round (torchnative_core/ops/reduced_precision.py): addbmm, addr,
# masked.normalize, native_batch_norm, adaptive_avg_pool3d, batch_norm, conv_transpose1d/2d/3d,
# instance_norm, interpolate bicubic/linear/trilinear, scaled_dot_product_attention; each now
# agrees bit for bit on its samples (docs/STATUS.md, the bfloat16/float16 row).
KNOWN_REDUCED_DISAGREEMENTS = KNOWN_DISAGREEMENTS


def test_reduced_precision_samples_agree_with_upstream(tmp_path):
    """bfloat16 and float16 samples (issue 4 item 6): composites computed in float32 and rounded
    once where upstream's kernels do (torchnative_core/ops/opmath.py), and rounded at upstream's
    intermediate points where its kernels round between steps (ops/reduced_precision.py)."""
    recorded = _record(tmp_path / "rec", "--dtypes", "reduced")
    _replay_and_check(recorded, tmp_path, "opinfo_agree_reduced.txt", KNOWN_REDUCED_DISAGREEMENTS)


def test_comparison_catches_a_small_error():
    """The comparator (plain Python numbers) tells apart a 0.1% error, a dtype and a shape."""
    code = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
from opinfo_agreement import compare
ref = torch.linspace(-2, 3, 50)
assert compare(ref, ref.clone(), torch) is None
assert compare(ref, ref * 1.001, torch) is not None
assert compare(ref, ref.double(), torch) is not None
assert compare(ref, ref.reshape(5, 10), torch) is not None
assert compare((ref, torch.arange(3)), (ref, torch.tensor([0, 1, 3])), torch) is not None
assert compare(torch.tensor([float('nan')]), torch.tensor([float('nan')]), torch) is None
print("ok")
"""
    out = subprocess.run([OURS, "-c", code, str(REPO / "tools")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_up_to_sign_comparison_accepts_sign_flips_only():
    """Singular vectors compare through the sample's output_process_fn_grad (as upstream's
    test_compare_cpu): a valid SVD with a flipped pair of singular vectors agrees, a 1% error in
    U or the same flip without its partner (an invalid SVD) does not."""
    code = r"""
import io, sys, torch
sys.path.insert(0, sys.argv[1])
import opinfo_agreement as oa
from torch.testing._internal.common_methods_invocations import op_db
op = next(o for o in op_db if o.name == "linalg.svd")
torch.manual_seed(0)
samples = list(op.sample_inputs("cpu", torch.float64))
i = next(j for j, s in enumerate(samples) if s.input.shape == (3, 3) and j % 4 == 3)  # the U @ Vh, S view
s = samples[i]
buf = io.BytesIO(); torch.save((s.input, s.args, s.kwargs), buf)
U, S, Vh = torch.linalg.svd(s.input, **s.kwargs)
def rec(res):
    return [{"dtype": "float64", "sample": i, "inputs": buf.getvalue(), "result": res}]
flipped = (U * torch.tensor([-1.0, 1.0, 1.0]), S, Vh * torch.tensor([[-1.0], [1.0], [1.0]]))
half = (U * torch.tensor([-1.0, 1.0, 1.0]), S, Vh)
wrong = (U * 1.01, S, Vh)
r = [oa._replay_records(op, rec(x), torch)["status"] for x in (flipped, half, wrong)]
print(r)
"""
    out = subprocess.run([OURS, "-c", code, str(REPO / "tools")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "['agree', 'disagree', 'disagree']", out.stdout

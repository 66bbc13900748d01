"""Training parity with upstream (issue 6): an MLP and a small CNN trained 200 seeded steps on
scikit-learn's digits, by upstream torch and by torchnative in separate processes (both pinned to
one CPU instruction-set path by tests/conftest.py).

Tolerances are upstream's own spread across its instruction-set paths, measured by
`tools/training_spread.py` (upstream's native run against ATEN_CPU_CAPABILITY=avx2 and =default,
MKL_CBWR=AVX2/AVX512/AUTO/COMPATIBLE and ONEDNN_MAX_CPU_ISA=AVX2/AVX512_CORE; AMD EPYC Zen 5,
2026-12-01):

- MLP: losses differ by at most 2.4e-7 and final parameters by 1.3e-6; the tolerance is 1e-5.
- CNN: one ulp anywhere (the first differing step is 4 under avx2, 11 under MKL_CBWR) grows over
  200 Adam steps to 8.0e-4 in the losses and 5.5e-3 in the parameters, on every one of those
  paths; the tolerance is 2e-3 and 2e-2. (Upstream's run with MKL on its own choice, as the
  suite leaves it, agrees with ours bit for bit there; pinned to MKL_CBWR=AVX2 it is one of the
  shifted runs; an Intel Xeon with AMX measured the same 8.0e-4 and 5.5e-3 against ours.)

The self-tests scale the first Linear layer's output by 1.001 (a 0.1% error in one activation):
the MLP's and the CNN's runs must both be told apart from the clean ones (the CNN's by 4.9e-3 in
the losses and 8.1e-2 in the parameters)."""

import json
import subprocess
from pathlib import Path

import pytest

from torchnative.datasets import digits_path

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "train_digits.py"
OURS = str(REPO / ".venv" / "bin" / "python")
# (loss, parameters) per model: upstream's spread across its paths, with a margin (docstring)
TOL = {"mlp": (1e-5, 1e-5), "cnn": (2e-3, 2e-2)}

pytestmark = pytest.mark.runtime


def _ref_python():
    marker = REPO / "build" / "ref-python"
    if not marker.exists():
        pytest.fail("no reference environment: run `python3 tools/build.py --ref`")
    return marker.read_text().strip()


def _train(python, kind, steps, act_scale=1.0):
    out = subprocess.run([python, str(PROGRAM), str(digits_path()), kind, str(steps), str(act_scale)],
                         capture_output=True, text=True, timeout=900, cwd=str(REPO))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _max_diff(a, b):
    worst = 0.0
    for x, y in zip(a, b):
        if isinstance(x, list):
            worst = max(worst, _max_diff(x, y))
        else:
            worst = max(worst, abs(x - y))
    return worst


def _agree(ours, ref, kind):
    if len(ours["losses"]) != len(ref["losses"]) or [len(p) for p in ours["params"]] != [len(p) for p in ref["params"]]:
        return "different shapes"
    dl, dp = _max_diff(ours["losses"], ref["losses"]), _max_diff(ours["params"], ref["params"])
    tl, tp = TOL[kind]
    if dl > tl or dp > tp:
        return f"loss differs by {dl:.3g}, parameters by {dp:.3g} (tolerance {tl}, {tp})"
    return None


@pytest.fixture(scope="module")
def ref_runs():
    py = _ref_python()
    return {k: _train(py, k, 200) for k in ("mlp", "cnn")}


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_matches_upstream(kind, ref_runs):
    ours, ref = _train(OURS, kind, 200), ref_runs[kind]
    assert "torchnative" in ours["torch"] and "torchnative" not in ref["torch"]
    problem = _agree(ours, ref, kind)
    assert problem is None, problem
    assert ours["accuracy"] >= 0.95 and ref["accuracy"] >= 0.95, (ours["accuracy"], ref["accuracy"])
    assert abs(ours["accuracy"] - ref["accuracy"]) < 1e-6


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_comparison_catches_a_small_gradient_error(kind, ref_runs):
    """Upstream itself, with the first Linear layer's output scaled by 1.001 (a 0.1% error in one
    activation), must be told apart from the clean upstream run."""
    ref = ref_runs[kind]
    bad = _train(_ref_python(), kind, 200, act_scale=1.001)
    assert _agree(bad, ref, kind) is not None
    assert _agree(ref, ref, kind) is None

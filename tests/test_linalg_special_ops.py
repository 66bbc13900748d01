"""igamma/igammac, torch.gradient, histogram/histogramdd and stft/istft against upstream:
tests/programs/linalg_special_cases.py runs on both interpreters (upstream's in the reference
environment) and every case must produce the same outcome — the same exception type and message,
or the same dtype and shape and values within a tolerance of the result's largest magnitude set by
the result's dtype (float64 `REL64`; float32 `REL32`, where a transform or a sum rounds in
another order than upstream's; the half types one unit in their last place)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_complex_fft import run_both
from test_complex_fft import disagreements as complex_fft_disagreements

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "linalg_special_cases.py"
REL64 = 1e-12
REL32 = 2e-6
REL = {"torch.float64": REL64, "torch.complex128": REL64, "torch.float32": REL32, "torch.complex64": REL32,
       "torch.float16": 1e-3, "torch.bfloat16": 8e-3}


def disagreements(ours, ref):
    """Every case of `ref` (upstream's outcome) that `ours` does not reproduce, as text."""
    return complex_fft_disagreements(ours, ref, rel=REL.__getitem__)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return run_both(tmp_path_factory.mktemp("linalg_special"), PROGRAM)


def test_linalg_special_ops_agree_with_upstream(outcomes):
    ours, ref = outcomes
    assert len(ref[0]) >= 100
    assert disagreements(ours, ref) == []


def test_the_comparison_can_fail(outcomes):
    """A perturbed value (one ulp-scale step beyond the tolerance), a changed error message and a
    changed dtype are each caught."""
    (meta, arrays), ref = outcomes
    for name, change in (("igamma_grid_f64", "value"), ("igammac_grad_other", "value"), ("gradient_coords", "value"),
                         ("hist_weight_density", "value"), ("stft_window_hop", "value"), ("igamma_grad_self", "message"),
                         ("hist_dtype_mismatch", "message"), ("istft_default", "dtype")):
        m, a = json.loads(json.dumps(meta)), dict(arrays)
        if change == "value":
            a[name] = a[name].copy()
            finite = np.isfinite(a[name])
            a[name][finite] += 4 * REL[m[name]["dtype"]] * max(1.0, float(np.abs(a[name][finite]).max()))
        elif change == "message":
            m[name]["message"] += "!"
        else:
            m[name]["dtype"] = "torch.float16"
        assert any(b.startswith(name + ":") for b in disagreements((m, a), ref)), (name, change)

"""Composed operators and argument checks against upstream: tests/programs/composite_checks_cases.py
runs on both interpreters; every case must give the same exception type and message, or the same
dtype, shape and values. Measured: all bit-identical but bilinear upsampling with align_corners,
within 1e-7 (its weights round differently), hence the float32 tolerance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from program_json import described_disagreements, run_json_side_by_side

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "composite_checks_cases.py"
TOL = {"torch.float64": 0.0, "torch.float32": 1e-6, "torch.float16": 0.0}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return run_json_side_by_side(PROGRAM, tmp_path_factory.mktemp("composite_checks"))


def test_cases_agree_with_upstream(outcomes):
    ours, ref = outcomes
    assert len(ref) >= 100
    assert described_disagreements(ours, ref, TOL) == []


def test_the_comparison_can_fail(outcomes):
    ours, ref = outcomes
    for name, change in (("quantile_linear_dim1", "value"), ("nll_2d_target", "message"),
                         ("lerp_tensor_f64_bcast", "value"), ("unflatten_dense", "shape")):
        doctored = json.loads(json.dumps(ours))
        case = doctored[name]
        if change == "message":
            case["message"] += "!"
        elif change == "shape":
            case[1]["shape"] = [0]
        else:
            case["values"][0] += 1e-12
        assert any(d.startswith(name + ":") for d in described_disagreements(doctored, ref, TOL)), name

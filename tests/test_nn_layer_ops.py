"""Pooling (max_pool3d, fractional), embedding bags, CTC and multilabel margin losses, RReLU,
bilinear, conv_tbc, 3-d grid sampling and antialiased resizing against upstream:
tests/programs/nn_layer_cases.py runs on both interpreters; every case must give the same
exception type and message, or the same dtype, shape and values (gradients included, and the
seeded draws of rrelu and fractional pooling), float64 within 1e-10, float32 within 1e-5."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from program_json import described_disagreements, run_json_side_by_side

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "nn_layer_cases.py"
TOL = {"torch.float64": 1e-10, "torch.float32": 1e-5}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return run_json_side_by_side(PROGRAM, tmp_path_factory.mktemp("nn_layer"))


def test_cases_agree_with_upstream(outcomes):
    ours, ref = outcomes
    assert len(ref) >= 80
    assert described_disagreements(ours, ref, TOL) == []


def test_the_comparison_can_fail(outcomes):
    ours, ref = outcomes
    for name, change in (("ctc_grad", "value"), ("bag_err_mode", "message"), ("rrelu_train_f32", "value"),
                         ("max_pool3d", "dtype")):
        doctored = json.loads(json.dumps(ours))
        case = doctored[name]
        if change == "message":
            case["message"] += "!"
        elif change == "dtype":
            case[1]["dtype"] = "torch.int32"
        else:
            case[1]["values"][-1] += 1e-4
        assert any(d.startswith(name + ":") for d in described_disagreements(doctored, ref, TOL)), name


GRADCHECK = r"""
import torch, torch.nn.functional as F
torch.manual_seed(0)
d = torch.float64
A = torch.ops.aten
samples = torch.rand(1, 2, 2, dtype=d)
checks = {
    "max_pool3d": (lambda t: F.max_pool3d(t, 2, 1, 1), [torch.randn(1, 2, 3, 4, 3, dtype=d)]),
    "fractional_max_pool2d": (lambda t: A.fractional_max_pool2d(t, [2, 2], [3, 3], samples)[0],
                              [torch.randn(1, 2, 5, 6, dtype=d)]),
    "embedding_bag": (lambda w, p: F.embedding_bag(torch.tensor([0, 2, 1, 2]), w, torch.tensor([0, 1]),
                                                   per_sample_weights=p, mode="sum"),
                      [torch.randn(3, 2, dtype=d), torch.rand(4, dtype=d)]),
    "ctc_loss": (lambda t: F.ctc_loss(t.log_softmax(2), torch.tensor([[1, 2], [1, 1]]), (4, 5), (2, 2)),
                 [torch.randn(5, 2, 3, dtype=d)]),
    "multilabel_margin_loss": (lambda t: F.multilabel_margin_loss(t, torch.tensor([[2, 0, -1, 1]])),
                               [torch.randn(1, 4, dtype=d)]),
    "bilinear": (lambda a, b, w: F.bilinear(a, b, w), [torch.randn(2, 3, dtype=d), torch.randn(2, 2, dtype=d),
                                                       torch.randn(2, 3, 2, dtype=d)]),
    "grid_sampler_3d": (lambda a, g: F.grid_sample(a, g, align_corners=False),
                        [torch.randn(1, 1, 2, 3, 2, dtype=d), torch.rand(1, 2, 1, 2, 3, dtype=d) * 1.6 - 0.8]),
    "upsample_bicubic2d_aa": (lambda t: F.interpolate(t, size=(2, 3), mode="bicubic", antialias=True),
                              [torch.randn(1, 1, 5, 6, dtype=d)]),
    "conv_tbc": (lambda a, w, b: A.conv_tbc(a, w, b, 1), [torch.randn(4, 1, 2, dtype=d), torch.randn(2, 2, 3, dtype=d),
                                                          torch.randn(3, dtype=d)]),
}
for name, (fn, xs) in checks.items():
    xs = [x.requires_grad_() for x in xs]
    assert torch.autograd.gradcheck(fn, xs), name
print("ok", len(checks))
"""


def test_gradcheck_float64():
    p = subprocess.run([str(REPO / ".venv/bin/python"), "-c", GRADCHECK], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["ok", "9"]


REFUSALS = r"""
import torch
x, t = torch.ones(2, 2), torch.ones(2, 2)
for r in (-3, 3, 5):
    try:
        torch.ops.aten.soft_margin_loss.default(x, t, r)
    except RuntimeError as e:
        assert "invalid reduction" in str(e), e
    else:
        raise AssertionError(f"reduction {r} computed")
# the out= form of every loss refuses the same codes (upstream's huber_loss.out writes the
# unreduced loss's first element, mse_loss.out asserts)
for op in (torch.ops.aten.huber_loss.out, torch.ops.aten.mse_loss.out, torch.ops.aten.smooth_l1_loss.out):
    y = torch.ones(3)
    try:
        op(y, torch.zeros(3), 3, out=y)
    except RuntimeError as e:
        assert "reduction must be" in str(e), e
    else:
        raise AssertionError(f"{op} with reduction 3 computed")
    assert y.tolist() == [1.0, 1.0, 1.0], y  # out untouched
print("ok")
"""


def test_soft_margin_loss_refuses_unknown_reductions():
    """Upstream returns the unreduced loss's first element for a reduction code other than
    0/1/2 (it resizes the output to 0-d after leaving it unreduced); ours refuses."""
    p = subprocess.run([str(REPO / ".venv/bin/python"), "-c", REFUSALS], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]

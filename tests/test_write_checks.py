"""Writes upstream refuses, refused the same way: in-place and out= writes into expanded
tensors (several elements on one memory location: upstream's internal-overlap check,
core/src/overlap.rs and ops/forms/out_variants.py), `pin_memory` without an accelerator, out= on
another device. tests/programs/write_checks_cases.py runs on both interpreters.

Where upstream writes into an overlapping tensor without a check and the result depends on the
order of the writes (reductions into an expanded out=, tril_/triu_, bmm), ours refuses instead
(the brief: where upstream gives a wrong answer, we raise). Pinning: the reference is a CUDA build
and says "Found no NVIDIA driver"; ours says what a CPU-only build says; both raise RuntimeError."""

from __future__ import annotations

from pathlib import Path

import pytest
from program_json import run_json_side_by_side

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "write_checks_cases.py"

# upstream writes each of these into the expanded tensor with no check: the result depends on
# which write lands last
ORDER_DEPENDENT = {"amax", "baddbmm_", "bmm(out)", "cummax(out)", "linalg_vector_norm(out)", "nansum", "norm",
                   "prod", "std", "sum(out)", "tril(out)", "tril_", "triu(out)", "triu_"}
PINNING = {"pin_factory", "pin_like", "pin_method", "pin_op"}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return run_json_side_by_side(PROGRAM, tmp_path_factory.mktemp("write_checks"))


def disagreements(ours, ref):
    bad = []
    for k, want in ref.items():
        got = ours.get(k)
        if k in ORDER_DEPENDENT:
            ok = want == "ok" and got == "OVERLAP"
        elif k in PINNING:
            ok = want.startswith("RuntimeError") and got == "RuntimeError: Cannot access accelerator device when none is available."
        else:
            ok = got == want
        if not ok:
            bad.append(f"{k}: ours {got}, upstream {want}")
    return bad


def test_writes_are_refused_as_upstream_refuses_them(outcomes):
    ours, ref = outcomes
    assert len(ref) >= 90 and sum(v == "OVERLAP" for v in ref.values()) >= 50
    assert disagreements(ours, ref) == []


def test_the_comparison_can_fail(outcomes):
    ours, ref = outcomes
    for name, wrong in (("add(out)", "ok"), ("mul_", "ok"), ("fill_", "OVERLAP"), ("sum(out)", "ok"),
                        ("pin_factory", "ok")):
        doctored = dict(ours, **{name: wrong})
        assert any(d.startswith(name + ":") for d in disagreements(doctored, ref)), name

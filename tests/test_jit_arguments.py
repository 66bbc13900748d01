"""`torch.ops.aten.<op>.<overload>` binds Python values to schema arguments as upstream's does:
tests/programs/jit_argument_cases.py passes every kind of value (None, numbers, lists, tensors,
strings, dtypes) to every kind of argument type, on ours and on upstream (the reference
environment), and the same values must be refused while binding ("Expected a value of type
..."), and the same accepted (surface/jit_arguments.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from program_json import run_json_side_by_side

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "jit_argument_cases.py"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return run_json_side_by_side(PROGRAM, tmp_path_factory.mktemp("jit_arguments"))


def binding_disagreements(ours, ref):
    """Pairs where one side refused the value while binding and the other did not."""
    return [f"{k}: ours {ours.get(k)}, upstream {v}" for k, v in ref.items() if (v == "bind") != (ours.get(k) == "bind")]


def test_values_are_refused_while_binding_as_upstream_refuses_them(outcomes):
    ours, ref = outcomes
    assert len(ref) >= 500 and sum(v == "bind" for v in ref.values()) >= 300
    assert binding_disagreements(ours, ref) == []


def test_accepted_values_mostly_reach_the_same_outcome(outcomes):
    """Past binding, the operator's own checks decide; today 10 of the 504 pairs end differently
    (an operator's argument check raising another type, such as mv's dimension check or
    upsample's output size length), all of them values upstream's binding also accepts. Kept
    from growing."""
    ours, ref = outcomes
    differ = [k for k, v in ref.items() if ours.get(k) != v]
    assert len(differ) <= 10, differ


def test_the_comparison_can_fail(outcomes):
    ours, ref = outcomes
    doctored = dict(ours)
    key = "int[] (permute dims) <- int"
    assert ref[key] == "bind"
    doctored[key] = "TypeError"  # what a value reaching the implementation gave before
    assert binding_disagreements(doctored, ref) == [f"{key}: ours TypeError, upstream bind"]

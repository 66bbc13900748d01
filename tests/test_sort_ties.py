"""sort, argsort, msort, topk and kthvalue order equal values exactly as upstream 2.13's CPU kernels
do (issue 4): libstdc++'s introsort for the unstable sort, stable_sort for stable=True, fbgemm's
radix sort (stable) for long 1-D integer rows, the filled indices for stride-0 inputs, topk's
partial_sort / nth_element + sort. tests/programs/sort_ties.py runs 25,992 cases on both
interpreters from the same description; every result must be identical (values with -0.0/NaN
told apart, indices)."""

from pathlib import Path

import pytest
from program_json import run_json
from test_training import OURS, _ref_python

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "sort_ties.py"

pytestmark = pytest.mark.runtime


def _run(python, out, *extra):
    return run_json(python, PROGRAM, out, *extra)


def _differ(ref, ours):
    assert ref.keys() == ours.keys()
    return sorted(k for k in ref if ref[k] != ours[k])


@pytest.fixture(scope="module")
def ref_results(tmp_path_factory):
    return _run(_ref_python(), tmp_path_factory.mktemp("ref") / "ref.json")


def test_tie_order_matches_upstream(ref_results, tmp_path):
    ours = _run(OURS, tmp_path / "ours.json")
    assert len(ours) > 10000
    bad = _differ(ref_results, ours)
    assert not bad, f"{len(bad)} of {len(ours)} cases differ, e.g. {bad[:10]}"


@pytest.mark.parametrize("fault", ["swap", "stable"])
def test_comparison_catches_a_changed_tie_order(ref_results, tmp_path, fault):
    """Two tied elements exchanged in one result, or a stable sort where upstream's is unstable
    (what ours did before), are caught."""
    dtypes = ["bool", "float32", "int64"]
    ours = _run(OURS, tmp_path / "ours.json", "--dtypes", ",".join(dtypes), "--fault", fault)
    ref = {k: ref_results[k] for k in ours}
    bad = _differ(ref, ours)
    assert bad and all(k.startswith(("sort.unstable/", "radix/")) for k in bad), bad[:10]
    if fault == "stable":
        # fbgemm's radix sort is stable itself: only its introsort neighbours differ
        assert "radix/int64/(32768,)/desc0" not in bad and "radix/int64/(32767,)/desc0" in bad

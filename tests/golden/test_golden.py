"""One test per golden case: our runtime must agree with upstream torch 2.13.0.

    python -m pytest tests/golden/test_golden.py                 # ours = .venv/bin/python
    TORCHNATIVE_GOLDEN_OURS=ref python -m pytest tests/golden    # ref vs ref (pipeline check)
    TORCHNATIVE_GOLDEN_OURS=/path/to/python ...                  # any other interpreter
"""
import os

import pytest

from . import compare, registry
from .known_gaps import GAPS

CASES = registry.load_all()


def _params():
    ref_vs_ref = os.environ.get("TORCHNATIVE_GOLDEN_OURS") == "ref"
    for case_id in CASES:
        if case_id in GAPS and not ref_vs_ref:
            yield pytest.param(case_id, marks=pytest.mark.xfail(strict=True, reason=GAPS[case_id]))
        else:
            yield case_id


@pytest.mark.parametrize("case_id", list(_params()))
def test_golden(case_id, ref_batch, our_batch):
    ref = ref_batch.results[case_id]
    ours = our_batch.results.get(case_id)
    if our_batch.header is None:  # torch never imported on our side: fail, don't skip
        pytest.fail(f"our runtime could not start ({our_batch.python}): "
                    f"{ours['error']}\n{ours['traceback']}", pytrace=False)
    mismatch = compare.compare(ref, ours, CASES[case_id].opts)
    if mismatch is not None:
        pytest.fail(f"{case_id} {mismatch}", pytrace=False)

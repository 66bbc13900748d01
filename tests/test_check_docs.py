"""tools/check_docs.py: the figures in docs/STATUS.md agree with their records, and the check
fails when one does not (a doctored copy of the page)."""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import check_docs  # noqa: E402

STATUS = (REPO / "docs" / "STATUS.md").read_text()


def test_status_figures_match_their_records():
    assert check_docs.check_figures(STATUS) == []


def test_status_marks_the_recorded_figures():
    # the lists the tests enforce, the fuzz floor and the kernel tables are all checked
    records = {m.group(2) for m in check_docs.MARKED.finditer(STATUS)}
    assert {"tests/data/opinfo_agree.txt", "tests/data/opinfo_agree_reduced.txt", "tests/data/gradcheck_pass.txt",
            "tests/data/vmap_agree.txt", "tests/data/fuzz_corpus_floor.txt", "tests/golden",
            "backends/cpu/src", "backends/vulkan/src"} <= records


def test_a_wrong_figure_is_reported():
    m = re.search(r"\*\*(\d+) of (\d+)\*\*<!-- record: tests/data/opinfo_agree.txt lines -->", STATUS)
    assert m, "the OpInfo figure the doctoring below changes"
    agree, total = int(m.group(1)), m.group(2)
    doctored = STATUS.replace(f"**{agree} of {total}**", f"**{agree + 1} of {total}**")
    bad = check_docs.check_figures(doctored)
    assert len(bad) == 1
    assert f"{agree + 1} of {total}" in bad[0] and "tests/data/opinfo_agree.txt" in bad[0] and str(agree) in bad[0]


def test_decimals_and_thousands_are_compared_as_written():
    training = check_docs.record_value("docs/bench/training-step-2026-12-05-amd-epyc.json", "json rows[case=mlp].ratio")
    ok = f"**{training:.2f}x**<!-- record: docs/bench/training-step-2026-12-05-amd-epyc.json json rows[case=mlp].ratio -->"
    assert check_docs.check_figures(ok) == []
    assert check_docs.check_figures(ok.replace(f"{training:.2f}", f"{training + 0.01:.2f}"))
    cases = check_docs.record_value("backends/cpu/tests/golden", r"grep ^case\s")
    assert check_docs.check_figures(f"**{cases:,}**<!-- record: backends/cpu/tests/golden grep ^case\\s -->") == []


def test_a_marker_without_a_figure_or_record_is_reported():
    assert check_docs.check_figures("agree <!-- record: tests/data/vmap_agree.txt lines -->")
    assert check_docs.check_figures("**3**<!-- record: tests/data/no_such_list.txt lines -->")
    assert check_docs.check_figures("**3**<!-- record: tests/data/vmap_agree.txt no_such_way -->")

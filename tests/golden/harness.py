"""Pytest-side orchestration: find the two interpreters, run a batch of cases in one
subprocess per side (runner.py), survive crashes and hangs, return results by case id.
This module never imports torch."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUNNER = HERE / "runner.py"
REF_VERSION = "2.13.0"
MAX_RESTARTS = 25  # a crashing case costs one interpreter restart; give up after this many


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


class Batch:
    def __init__(self, python):
        self.python = python
        self.header = None   # {"torch": version, ...} from the runner, once torch imported
        self.results = {}    # case id -> encoded result (runner.encode / harness_error)


def _fail(stage, error, tail=""):
    return {"kind": "harness_error", "stage": stage, "error": error, "traceback": tail}


def run_batch(python, ids, modules=(), timeout=900, runner=RUNNER):
    """Run `ids` under `python` with `runner` (runner.py, or a script speaking its protocol:
    tests/conformance/runner.py).  Every id gets a result: a crash or hang is recorded as a
    harness_error for the case that was running, and the rest continue in a new process."""
    batch = Batch(python)
    remaining = list(ids)
    restarts = 0
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        while remaining:
            out = pathlib.Path(tmp, f"out{restarts}.jsonl")
            ids_file = pathlib.Path(tmp, f"ids{restarts}.json")
            ids_file.write_text(json.dumps(remaining))
            cmd = [python, str(runner), str(out), str(ids_file), *modules]
            try:
                # cwd=tmp: nothing in the repo root can shadow an installed package.
                proc = subprocess.run(cmd, cwd=tmp, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, timeout=timeout)
                rc, tail = proc.returncode, proc.stdout.decode(errors="replace")[-3000:]
            except subprocess.TimeoutExpired as e:
                rc = "timeout"
                tail = (e.output or b"").decode(errors="replace")[-3000:]
            except OSError as e:  # missing or non-executable interpreter
                rc, tail = None, f"{type(e).__name__}: {e}"
            started, done = None, 0
            lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
            for line in lines:
                rec = json.loads(line)
                if "header" in rec:
                    batch.header = rec["header"]
                elif "import_error" in rec:
                    r = _fail("startup", f"`import torch` failed under {python}",
                              rec["import_error"])
                    batch.results.update({i: r for i in remaining})
                    return batch
                elif "start" in rec:
                    started = rec["start"]
                else:
                    batch.results[rec["id"]] = rec["result"]
                    started, done = None, done + 1
            remaining = [i for i in remaining if i not in batch.results]
            if not remaining:
                break
            if batch.header is None or (started is None and done == 0):
                # Died before torch was imported, or made no progress: nothing more to learn.
                r = _fail("startup", f"interpreter {python} exited ({rc}) without running "
                                     f"a case", tail)
                batch.results.update({i: r for i in remaining})
                break
            if started is not None:
                how = "hung (batch timeout)" if rc == "timeout" else f"died (exit {rc})"
                batch.results[started] = _fail("crash", f"interpreter {how} while running "
                                                         f"this case", tail)
                remaining.remove(started)
            restarts += 1
            if restarts > MAX_RESTARTS:
                r = _fail("crash", f"not run: more than {MAX_RESTARTS} interpreter crashes")
                batch.results.update({i: r for i in remaining})
                break
    return batch


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

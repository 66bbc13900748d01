"""Run a batch of cases in one subprocess per try (a runner script: torchnative/conformance/runner.py
or the golden suite's), surviving crashes and hangs, and return results by case id. The runner
speaks a line protocol: {"header"}, {"import_error"}, {"setup_error": harness_error},
{"start": id} before each case, {"id", "result"} after it. Never imports torch.
"""
import json
import pathlib
import subprocess
import tempfile

MAX_RESTARTS = 25  # a crashing case costs one interpreter restart; give up after this many


class Batch:
    def __init__(self, python):
        self.python = python
        self.header = None   # {"torch": version, ...} from the runner, once torch imported
        self.results = {}    # case id -> encoded result (runner.encode / harness_error)


def _fail(stage, error, tail=""):
    return {"kind": "harness_error", "stage": stage, "error": error, "traceback": tail}


def run_batch(python, ids, runner, modules=(), timeout=900):
    """Run `ids` under `python` with the `runner` script.  Every id gets a result: a crash or hang is recorded as a
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
                elif "setup_error" in rec:  # the runner's own code failed before any case
                    batch.results.update({i: rec["setup_error"] for i in remaining})
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

"""Runs a program of tests/programs/ that writes JSON (on the reference interpreter or ours) and
returns what it wrote; shared by the tests that compare such outputs side by side."""

import json
import subprocess


def run_json(python, program, out, *extra, key="results", timeout=600):
    p = subprocess.run([python, str(program), str(out), *extra], capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(out.read_text())[key]

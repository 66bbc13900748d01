#!/usr/bin/env python3
"""Upstream's own spread across its instruction-set paths in the training-parity runs
(tests/test_training.py states the figures): upstream's digits training (tests/programs/
train_digits.py, 200 steps) run natively and under each path variable, each compared with the
native run by the largest loss and final-parameter difference.

    .venv/bin/python tools/training_spread.py [mlp] [cnn]      # about 40 s per model
"""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from torchnative.datasets import digits_path  # noqa: E402

PROGRAM = REPO / "tests" / "programs" / "train_digits.py"
PATH_VARS = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")
VARIANTS = [{"ATEN_CPU_CAPABILITY": "avx2"}, {"ATEN_CPU_CAPABILITY": "default"},
            {"MKL_CBWR": "AVX2"}, {"MKL_CBWR": "AVX512"}, {"MKL_CBWR": "AUTO"}, {"MKL_CBWR": "COMPATIBLE"},
            {"ONEDNN_MAX_CPU_ISA": "AVX2"}, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
            {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}]


def train(kind, env):
    e = {k: v for k, v in os.environ.items() if k not in PATH_VARS}
    e.update(env)
    ref = (REPO / "build" / "ref-python").read_text().strip()
    out = subprocess.run([ref, str(PROGRAM), str(digits_path()), kind, "200"], capture_output=True,
                         text=True, env=e, cwd=str(REPO), timeout=900)
    if out.returncode:
        sys.exit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def max_diff(a, b):
    return max((max_diff(x, y) if isinstance(x, list) else abs(x - y) for x, y in zip(a, b)), default=0.0)


def main(kinds):
    for kind in kinds or ("mlp", "cnn"):
        base = train(kind, {})
        worst = (0.0, 0.0)
        for env in VARIANTS:
            r = train(kind, env)
            dl, dp = max_diff(r["losses"], base["losses"]), max_diff(r["params"], base["params"])
            worst = (max(worst[0], dl), max(worst[1], dp))
            print(f"{kind} {env}: losses {dl:.3g}, parameters {dp:.3g}", flush=True)
        print(f"{kind} spread: losses {worst[0]:.3g}, parameters {worst[1]:.3g}")


if __name__ == "__main__":
    main(sys.argv[1:])

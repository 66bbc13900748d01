"""torch.linalg.matrix_exp on fixed inputs, written as JSON of float.hex values (run by the
reference interpreter and by ours; tests/test_matrix_exp.py compares).

    python tests/programs/matrix_exp_cases.py OUT.json [--fault float64]

Inputs come from Python's `random.Random`, scaled so that every degree of upstream's choice (1, 2,
4, 8, 12, 18 with 0 to 6 squarings) is taken, single matrices and batches, float32 and float64,
n = 2 to 12 (up to 8x8 upstream's products accumulate in k order; larger sizes MKL). `--fault float64` computes
float32 results in float64 and rounds once (what ours did before), for the test's self-check.
"""

import json
import random
import sys

import torch

SCALES = (1e-9, 1e-7, 3e-4, 1e-3, 0.03, 0.3, 0.5, 1.0, 1.4, 2.0, 2.9, 5.0, 30.0, 100.0)


def cases():
    rng = random.Random(1234)
    for dtype in ("float32", "float64"):
        for n in (2, 3, 5, 7, 8, 12):
            for scale in SCALES:
                for batch in ((), (3,), (2, 2)):
                    shape = batch + (n, n)
                    count = 1
                    for s in shape:
                        count *= s
                    vals = [rng.gauss(0.0, 1.0) * scale / n for _ in range(count)]
                    yield f"{dtype}/n{n}/s{scale}/b{batch}", dtype, shape, vals


def main(out, fault=None):
    results = {}
    for name, dtype, shape, vals in cases():
        a = torch.tensor(vals, dtype=getattr(torch, dtype)).reshape(shape)
        if fault == "float64" and dtype == "float32":
            r = torch.linalg.matrix_exp(a.double()).float()
        else:
            r = torch.linalg.matrix_exp(a)
        results[name] = [float(v).hex() for v in r.flatten().tolist()]
    json.dump({"torch": torch.__version__, "results": results}, open(out, "w"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--fault" else None)

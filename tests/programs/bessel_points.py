"""special.bessel_j0/j1/y0/y1 (float64) at fixed points, written as JSON (run by the reference
interpreter and by ours; tests/test_bessel_cephes.py compares)."""

import json
import random
import sys

import torch

rng = random.Random(0)
xs = [0.0, -0.0, 1e-6, -1e-6, 5.0, -5.0, 5.000000001, float("inf"), float("-inf"), float("nan"), 1e300, -1e300,
      2.404825557695773, 3.8317059702075125, 0.8935769662791675, 2.197141326031017]
xs += [rng.uniform(-30, 30) for _ in range(3000)] + [rng.uniform(-6, 6) for _ in range(1000)]
xs += [10 ** rng.uniform(-8, 8) for _ in range(1000)]
t = torch.tensor(xs, dtype=torch.float64)
out = {name: [repr(v) for v in getattr(torch.special, name)(t).tolist()]
       for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1")}
json.dump({"x": xs, "values": out}, open(sys.argv[1], "w"))

"""Measure the float tolerances used by compare.py.  Run under the UPSTREAM interpreter:

    $(cat build/ref-python || echo ~/.cache/torchnative/ref-2.13.0/bin/python) \
        tests/golden/measure_tolerances.py [--markdown]

Method.  For each low-precision dtype d (float16, bfloat16, float32) and each representative
op (elementwise math, reductions, matmuls, nn functionals at the sizes the golden cases
use), upstream computes op(x_d) in d, and the "truth" is op(x_d.double()): the same rounded
inputs, computed in float64.  Elementwise error e = |op(x_d) - truth| is split by magnitude:
    rtol_d = max e/|truth| over elements with |truth| >= 1
    atol_d = max e         over elements with |truth| <  1
so that e <= atol_d + rtol_d*|truth| holds for every measured element.  Our kernels and
upstream's are two independent implementations, each within that error of the truth, so they
may differ from each other by twice as much: the tolerance is 2x the measurement, rounded up
to one significant digit.  float64 has no wider truth on CPU: its tolerance is float32's measurement
in units of machine epsilon (same algorithms, same ulp counts), times eps(float64).

Prints JSON {dtype: {"measured": [atol, rtol], "tolerance": [atol, rtol], "worst": ...}}.
"""
import json
import math
import sys

import torch
import torch.nn.functional as F

EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7, torch.float32: 2.0 ** -23,
       torch.float64: 2.0 ** -52}


def up1(x):
    """x rounded UP to one significant digit (3.2e-6 -> 4e-6)."""
    if x <= 0:
        return 0.0
    e = math.floor(math.log10(x))
    for m in range(1, 11):
        v = float(f"{m}e{e}")
        if v >= x * (1 - 1e-12):
            return v


def inputs():
    g = torch.Generator().manual_seed(1234)

    def randn(*s):
        return torch.randn(*s, generator=g, dtype=torch.float64)

    x, y = randn(64, 64), randn(64, 64)
    pos = randn(64, 64).abs() + 0.05
    w = randn(64, 64) / 8
    # op name -> function of a dtype-cast tuple of inputs; inputs stay representable in f16.
    return {
        "add": (lambda a, b: a + b, (x, y)),
        "sub": (lambda a, b: a - b, (x, y)),
        "mul": (lambda a, b: a * b, (x, y)),
        "div": (lambda a, b: a / b, (x, pos)),
        "exp": (torch.exp, (x,)),
        "log": (torch.log, (pos,)),
        "sqrt": (torch.sqrt, (pos,)),
        "rsqrt": (torch.rsqrt, (pos,)),
        "sin": (torch.sin, (x,)),
        "cos": (torch.cos, (x,)),
        "tanh": (torch.tanh, (x,)),
        "sigmoid": (torch.sigmoid, (x,)),
        "pow": (lambda a: torch.pow(a, 2.5), (pos,)),
        "erf": (torch.erf, (x,)),
        "gelu": (F.gelu, (x,)),
        "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"), (x,)),
        "silu": (F.silu, (x,)),
        "softmax": (lambda a: torch.softmax(a, -1), (x,)),
        "log_softmax": (lambda a: torch.log_softmax(a, -1), (x,)),
        "sum16": (lambda a: a[:, :16].sum(-1), (x,)),
        "sum64": (lambda a: a.sum(-1), (x,)),
        "sum_all4096": (lambda a: a.sum(), (x,)),
        "mean64": (lambda a: a.mean(0), (x,)),
        "var64": (lambda a: a.var(-1), (x,)),
        "std64": (lambda a: a.std(-1), (x,)),
        "prod8": (lambda a: (1 + a[:, :8] / 8).prod(-1), (x,)),
        "cumsum64": (lambda a: a.cumsum(-1), (x,)),
        "mm16": (lambda a, b: a[:, :16] @ b[:16], (x, y)),
        "mm64": (lambda a, b: a @ b, (x, y)),
        "bmm": (lambda a, b: torch.bmm(a.view(4, 16, 64), b.view(4, 64, 16)), (x, y)),
        "addmm": (lambda a, b, c: torch.addmm(c[0], a, b), (x, w, y)),
        "linear": (lambda a, b, c: F.linear(a, b, c[0]), (x, w, y)),
        "conv2d": (lambda a, b: F.conv2d(a.view(4, 4, 16, 16), b[:8, :36].reshape(8, 4, 3, 3),
                                         padding=1), (x, w)),
        "layer_norm": (lambda a: F.layer_norm(a, (64,)), (x,)),
        "batch_norm": (lambda a, b: F.batch_norm(a.view(4, 4, 16, 16), b[0, :4], 1 + b[1, :4].abs(),
                                                 training=False), (x, w)),
        "sdpa": (lambda a, b, c: F.scaled_dot_product_attention(
            a.view(2, 4, 8, 64), b.view(2, 4, 8, 64), c.view(2, 4, 8, 64)), (x, y, w)),
    }


def measure(dtype):
    worst_abs, worst_rel = (0.0, None), (0.0, None)
    for name, (fn, args) in inputs().items():
        low = tuple(a.to(dtype) for a in args)
        truth = fn(*(a.double() for a in low))
        got = fn(*low).double()
        err = (got - truth).abs()
        small = truth.abs() < 1
        if small.any():
            a = err[small].max().item()
            worst_abs = max(worst_abs, (a, name))
        if (~small).any():
            r = (err[~small] / truth[~small].abs()).max().item()
            worst_rel = max(worst_rel, (r, name))
    return worst_abs, worst_rel


def main():
    table = {}
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        (a, aop), (r, rop) = measure(dtype)
        table[str(dtype)] = {"measured": [a, r], "tolerance": [up1(2 * a), up1(2 * r)],
                             "worst": [aop, rop], "eps": EPS[dtype]}
    f32 = table["torch.float32"]
    a, r = (m / EPS[torch.float32] * EPS[torch.float64] for m in f32["measured"])
    table["torch.float64"] = {"measured": [a, r], "tolerance": [up1(2 * a), up1(2 * r)],
                              "worst": ["from float32 in eps units"] * 2,
                              "eps": EPS[torch.float64]}
    if "--markdown" in sys.argv:
        print("| dtype | measured atol (op) | measured rtol (op) | atol | rtol |")
        print("|---|---|---|---|---|")
        for d, t in table.items():
            print(f"| {d} | {t['measured'][0]:.3g} ({t['worst'][0]}) | "
                  f"{t['measured'][1]:.3g} ({t['worst'][1]}) | {t['tolerance'][0]:g} | "
                  f"{t['tolerance'][1]:g} |")
    else:
        print(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()

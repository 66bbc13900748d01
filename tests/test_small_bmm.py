"""Batched products of fewer than 400 multiply-adds per matrix agree with upstream bit for bit, on
any CPU: upstream takes its naive `baddbmm_cpu_kernel` for them (a k-order sum in the op-math
type, no FMA), and so does the cpu backend (backends/cpu/src/linalg.rs `naive_product`), in
float32, float64, float16 and bfloat16, through bmm, matmul and baddbmm, for contiguous and
transposed operands. Products from 400 multiply-adds on go to upstream's MKL and our gemm, whose
rounding is only within tolerance in general. Same inputs on both sides; the oracle runs in its
own process. About 5 s."""


import numpy as np
import pytest
from program_json import run_npz_side_by_side


# (batch, n, k, m): every one under 400 multiply-adds per matrix; 7x7x7 is the largest cube
SHAPES = [(3, 7, 7, 7), (2, 1, 5, 3), (4, 9, 4, 10), (1, 2, 99, 2), (5, 3, 3, 3), (2, 6, 11, 6)]
DTYPES = ("float32", "float64", "float16", "bfloat16")

PROGRAM = r"""
import sys, numpy as np, torch
torch.set_num_threads(1)
inp = dict(np.load(sys.argv[1]))
out = {}
for key in sorted(k[:-2] for k in inp if k.endswith("/a")):
    for dt in %r:
        a = torch.from_numpy(inp[key + "/a"]).to(getattr(torch, dt))
        b = torch.from_numpy(inp[key + "/b"]).to(getattr(torch, dt))
        c = torch.from_numpy(inp[key + "/c"]).to(getattr(torch, dt))
        bt = b.transpose(1, 2).contiguous().transpose(1, 2)  # same values, column-major
        for tag, y in (("bmm", torch.bmm(a, b)), ("matmul", torch.matmul(a, bt)),
                       ("baddbmm", torch.baddbmm(c, a, b, beta=0.5, alpha=2.0))):
            out[f"{key}/{dt}/{tag}"] = y.float().numpy().copy() if dt == "bfloat16" else y.numpy().copy()
np.savez(sys.argv[2], **out)
""" % (DTYPES,)


def _inputs() -> dict:
    rs = np.random.RandomState(11)
    d = {}
    for bs, n, k, m in SHAPES:
        key = f"{bs}x{n}x{k}x{m}"
        d[key + "/a"] = rs.randn(bs, n, k).astype(np.float32)
        d[key + "/b"] = rs.randn(bs, k, m).astype(np.float32)
        d[key + "/c"] = rs.randn(bs, n, m).astype(np.float32)
    return d


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_npz_side_by_side(PROGRAM, _inputs(), tmp_path_factory.mktemp("small_bmm"), timeout=300)


def differing(ours: dict, ref: dict) -> list:
    """Names whose output is not bit-identical with upstream's (shape and dtype included)."""
    bad = []
    for name, r in ref.items():
        o = ours[name]
        if o.shape != r.shape or o.dtype != r.dtype or o.tobytes() != r.tobytes():
            bad.append(name)
    return bad


def test_small_batched_products_agree_bit_for_bit(results):
    ours, ref = results
    assert len(ref) == len(SHAPES) * len(DTYPES) * 3
    assert not differing(ours, ref)


def test_comparator_catches_a_one_ulp_fault(results):
    ours, ref = results
    faulty = dict(ours)
    y = faulty["3x7x7x7/float32/bmm"].copy()
    y.view(np.int32)[1, 2, 3] += 1
    faulty["3x7x7x7/float32/bmm"] = y
    assert differing(faulty, ref) == ["3x7x7x7/float32/bmm"]

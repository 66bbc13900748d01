"""float32 scaled dot-product attention against upstream's `cpu_flash_attention`, which the cpu
backend follows step for step (backends/cpu/src/flash.rs): query blocks of 32/64/256 rows, key
blocks of 512 with the online-softmax rescale between them, `exp_u20` over whole vectors, the
causal block skip, the fused mask `a * scale + b`, `out = acc * (1 / sum)`; and its backward,
`cpu_flash_attention_backward` (the gradients through `F.scaled_dot_product_attention`).

Only the two matrix products round differently (upstream: MKL; ours: the gemm crate), so the
log-sum-exp, which the products reach only through `q @ k^T`, agrees bit for bit on almost every
row, and the output agrees to a few ulp. A row with every key masked gives zeros and lse 0 on
both sides. Same inputs on both sides; the oracle runs in its own process. About 15 s."""

import sys

import numpy as np
import pytest
from program_json import run_npz_side_by_side

from test_kernel_agreement import ulp_diff


# (B, H, L, S, E, causal, mask): lengths around the block sizes (32/64/256 query rows, 512 keys),
# key lengths past one key block, and tails shorter than a vector.
CASES = [
    (1, 8, 512, 512, 32, False, None),
    (1, 8, 512, 512, 32, True, None),
    (1, 8, 512, 512, 32, False, "float"),
    (2, 3, 100, 77, 16, False, None),
    (2, 3, 100, 77, 16, True, None),
    (2, 3, 100, 77, 16, False, "float"),
    (1, 2, 800, 1100, 64, False, None),
    (1, 2, 800, 1100, 64, True, None),
    (1, 4, 200, 600, 8, False, "float"),
    (1, 4, 200, 600, 8, False, "row_masked"),
    (1, 4, 200, 600, 8, True, None),
    (1, 1, 1, 37, 8, False, None),
    (1, 1, 3, 5, 8, False, "row_masked"),
    # grouped-query attention (key/value heads = H / group, read in place): decode and prefill
    (1, 8, 1, 48, 32, False, None, 2),
    (1, 8, 128, 128, 32, True, None, 2),
    (2, 6, 40, 70, 16, False, "float", 3),
]

PROGRAM = r"""
import sys, numpy as np, torch
torch.set_num_threads(1)
inp = dict(np.load(sys.argv[1]))
out = {}
n = int(inp["n"])
for i in range(n):
    q, k, v = (torch.from_numpy(inp[f"{i}/{t}"]) for t in "qkv")
    m = torch.from_numpy(inp[f"{i}/mask"]) if f"{i}/mask" in inp else None
    causal = bool(inp[f"{i}/causal"])
    o, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=m)[:2]
    out[f"{i}/out"], out[f"{i}/lse"] = o.numpy().copy(), lse.numpy().copy()
    gqa = k.shape[1] != q.shape[1]
    out[f"{i}/F"] = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal,
                                                                     enable_gqa=gqa).numpy().copy()
    # backward through the fused kernel; odd cases in the layout transformers hands it
    # ([B, L, H, E] transposed: no unit stride between rows)
    lay = (lambda t: t.transpose(1, 2).contiguous().transpose(1, 2)) if i % 2 else (lambda t: t)
    qg, kg, vg = (lay(t).requires_grad_() for t in (q, k, v))
    o = torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, attn_mask=m, is_causal=causal, enable_gqa=gqa)
    o.backward(torch.from_numpy(inp[f"{i}/go"]))
    out[f"{i}/node"] = np.array(o.grad_fn.name())
    for t, g in zip("qkv", (qg.grad, kg.grad, vg.grad)):
        out[f"{i}/d{t}"] = g.numpy().copy()
np.savez(sys.argv[2], **out)
"""


def _inputs() -> dict:
    rs = np.random.RandomState(5)
    rg = np.random.RandomState(6)  # the incoming gradients, apart so the forward cases stay as they were
    d = {"n": np.array(len(CASES))}
    for i, (b, h, lq, s, e, causal, mask, *group) in enumerate(CASES):
        kvh = h // (group[0] if group else 1)
        for t, n, heads in (("q", lq, h), ("k", s, kvh), ("v", s, kvh)):
            d[f"{i}/{t}"] = rs.randn(b, heads, n, e).astype(np.float32)
        d[f"{i}/causal"] = np.array(causal)
        d[f"{i}/go"] = rg.randn(b, h, lq, e).astype(np.float32)
        if mask == "float":
            d[f"{i}/mask"] = rs.randn(lq, s).astype(np.float32)
        elif mask == "row_masked":
            m = np.zeros((lq, s), np.float32)
            m[lq // 2] = -np.inf  # one query row sees no key
            d[f"{i}/mask"] = m
    return d


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_npz_side_by_side(PROGRAM, _inputs(), tmp_path_factory.mktemp("flash"), timeout=600)


def lse_faults(ours: dict, ref: dict) -> dict:
    """{case: (share of rows not bit-identical, max ulp)} where the lse is not at least 99%
    bit-identical (one row of a smaller case may differ) with every difference within 4 ulp."""
    bad = {}
    for i in range(len(CASES)):
        u = ulp_diff(ours[f"{i}/lse"], ref[f"{i}/lse"])
        share = float((u > 0).mean())
        if (u > 0).sum() > max(1, 0.01 * u.size) or u.max() > 4:
            bad[CASES[i]] = (share, int(u.max()))
    return bad


def out_faults(ours: dict, ref: dict, key: str) -> dict:
    """{case: largest difference} where an output is further from upstream than the products'
    rounding can explain (2e-6 absolute; the values are O(1))."""
    bad = {}
    for i in range(len(CASES)):
        a, b = ours[f"{i}/{key}"], ref[f"{i}/{key}"]
        assert a.shape == b.shape and a.dtype == b.dtype
        diff = float(np.abs(a.astype(np.float64) - b).max()) if a.size else 0.0
        if not diff <= 2e-6:
            bad[CASES[i]] = diff
    return bad


def test_logsumexp_agrees_bit_for_bit(results):
    ours, ref = results
    bad = lse_faults(ours, ref)
    assert not bad, f"lse differs from upstream: {bad}"


def test_output_agrees_within_the_products_rounding(results):
    ours, ref = results
    assert not out_faults(ours, ref, "out"), out_faults(ours, ref, "out")
    assert not out_faults(ours, ref, "F"), out_faults(ours, ref, "F")


def grad_faults(ours: dict, ref: dict) -> dict:
    """{(case, gradient): relative difference} where a gradient of the fused backward is further
    from upstream's than the products' rounding explains: 4e-6 of the gradient's largest
    magnitude (sums over up to 1,100 keys or 800 query rows; measured at most 1.3e-6, and 0 on
    the cases whose blocks the gemm crate sums in MKL's order)."""
    bad = {}
    for i in range(len(CASES)):
        for t in "qkv":
            a, b = ours[f"{i}/d{t}"], ref[f"{i}/d{t}"]
            assert a.shape == b.shape and a.dtype == b.dtype
            if not a.size:
                continue
            rel = float(np.abs(a.astype(np.float64) - b).max() / max(1.0, float(np.abs(b).max())))
            if not rel <= 4e-6:
                bad[(CASES[i], t)] = rel
    return bad


def test_gradients_agree_within_the_products_rounding(results):
    ours, ref = results
    for i in range(len(CASES)):
        assert str(ours[f"{i}/node"]) == str(ref[f"{i}/node"]), (CASES[i], ours[f"{i}/node"], ref[f"{i}/node"])
    bad = grad_faults(ours, ref)
    assert not bad, f"gradients differ from upstream: {bad}"


def test_fully_masked_row_gives_zeros_and_lse_zero(results):
    ours, ref = results
    for i, case in enumerate(CASES):
        if case[-1] != "row_masked":
            continue
        row = case[2] // 2
        assert (ref[f"{i}/out"][:, :, row] == 0).all() and (ref[f"{i}/lse"][:, :, row] == 0).all()
        assert (ours[f"{i}/out"][:, :, row] == 0).all(), ours[f"{i}/out"][:, :, row]
        assert (ours[f"{i}/lse"][:, :, row] == 0).all(), ours[f"{i}/lse"][:, :, row]


def test_comparators_catch_faults(results):
    ours, ref = results
    lse = dict(ours)
    y = lse["0/lse"].copy()
    y.view(np.int32)[0, 0, :100] += 1  # 100 of 4096 rows one ulp off: over the 1% allowance
    lse["0/lse"] = y
    assert CASES[0] in lse_faults(lse, ref)
    out = dict(ours)
    z = out["3/out"].copy()
    z[1, 2, 50, 7] += 1e-5
    out["3/out"] = z
    assert CASES[3] in out_faults(out, ref, "out")
    z = out["3/out"].copy()
    z[0, 0, 0, 0] = np.nan
    out["3/out"] = z
    assert CASES[3] in out_faults(out, ref, "out")
    grads = dict(ours)
    z = grads["6/dk"].copy()
    z[0, 1, 1000, 3] += 1e-5 * max(1.0, float(np.abs(z).max()))
    grads["6/dk"] = z
    assert (CASES[6], "k") in grad_faults(grads, ref)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

"""The cpu backend's softmax, log_softmax, layer_norm and (float32/float64) linspace compute what
upstream's CPU kernels compute, bit for bit, on machines with AVX2+FMA (upstream's AVX2 and
AVX512 capabilities): same inputs on both sides (random rows of many lengths, odd and length-1 rows, -inf rows, NaN,
very large and very small values, denormals, non-contiguous views, softmax over a dim that is
not the last), each output compared by its bits and the differences counted in ulps.
`test_comparator_catches_a_one_ulp_fault` shows the comparison failing on an injected fault.

The algorithms are in backends/cpu/src/vecmath.rs (Sleef's expf/logf, Vectorized's reduction
order, RowwiseMoments); about 10 s."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]

PROGRAM = r"""
import sys, numpy as np, torch
import torch.nn.functional as F
torch.set_num_threads(1)
inp = dict(np.load(sys.argv[1]))
T = {k: torch.from_numpy(v) for k, v in inp.items()}
out = {}
def put(name, t):
    out[name] = t.contiguous().numpy().copy()
for k, x in T.items():
    if k.startswith("row"):
        put(k + "/softmax", torch.softmax(x, -1))
        put(k + "/log_softmax", torch.log_softmax(x, -1))
    if k.startswith("cube"):
        for d in range(x.dim()):
            put(f"{k}/softmax{d}", torch.softmax(x, d))
            put(f"{k}/log_softmax{d}", torch.log_softmax(x, d))
        put(k + "/softmax_t", torch.softmax(x.transpose(0, -1), -1))
    if k.startswith("ln"):
        n = x.shape[-1]
        w, b = T["w" + k[2:]], T["b" + k[2:]]
        for tag, args in (("wb", (w, b)), ("w", (w, None)), ("b", (None, b)), ("none", (None, None))):
            y, mean, rstd = torch.native_layer_norm(x, (n,), *args, 1e-5)
            put(f"{k}/{tag}/y", y); put(f"{k}/{tag}/mean", mean); put(f"{k}/{tag}/rstd", rstd)
        put(k + "/F", F.layer_norm(x, (n,), w, b))
        if x.dim() == 2 and x.shape[0] > 1:
            xt = x.t().contiguous().t()  # same values, column-major
            put(k + "/noncontig", F.layer_norm(xt, (n,), w, b))
for dt in (torch.float32, torch.float64):
    for a, b in ((-2, 3), (0, 1), (1e-3, 7.25), (5, -11.5), (-1e6, 1e6 + 1)):
        for n in (2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 1000, 40001):
            put(f"linspace/{dt}/{a}/{b}/{n}", torch.linspace(a, b, n, dtype=dt))
np.savez(sys.argv[2], **out)
print(torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, "cpu") else "?")
"""


def _inputs() -> dict:
    rs = np.random.RandomState(8)
    d = {}
    for n in (1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 255, 1000, 1024, 4097):
        d[f"row{n}"] = (rs.randn(5, n) * 3).astype(np.float32)
    e = (rs.randn(8, 40) * 2).astype(np.float32)
    e[0, 3] = -np.inf  # one masked entry
    e[1, :] = -np.inf  # a fully masked row: NaN
    e[2, 7] = np.nan
    e[3, :5] = [1e30, -1e30, 3e38, -3e38, 0.0]
    e[4, :] = rs.randn(40).astype(np.float32) * 1e-39  # denormals
    e[5, :] = np.linspace(-110, 95, 40, dtype=np.float32)  # exp's cut-offs
    e[6, :] = 1e-45
    e[7, ::2] = np.inf
    d["row_edge"] = e
    for i, shape in enumerate(((3, 5, 7), (2, 9, 16), (4, 3, 20), (2, 6, 1), (3, 33, 17))):
        d[f"cube{i}"] = (rs.randn(*shape) * 2).astype(np.float32)
    for n in (1, 3, 8, 15, 17, 64, 100, 384, 1000, 1024, 4097):
        for dt, tag in ((np.float32, ""), (np.float64, "d")):
            d[f"ln{tag}{n}"] = (rs.randn(6, n) * 2 + 0.5).astype(dt)
            d[f"w{tag}{n}"] = rs.randn(n).astype(dt)
            d[f"b{tag}{n}"] = rs.randn(n).astype(dt)
    big = (rs.randn(3, 300) * 0.01 + 1000).astype(np.float32)  # large mean, small spread
    d["lnbig"], d["wbig"], d["bbig"] = big, rs.randn(300).astype(np.float32), rs.randn(300).astype(np.float32)
    return d


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-element distance in units in the last place (0 for equal bits, for two NaNs, and
    for +0/-0); shapes and dtypes must match."""
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    it = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = a.view(it).astype(np.int64)
    ib = b.view(it).astype(np.int64)
    mask = np.int64((1 << (8 * a.dtype.itemsize - 1)) - 1)
    # sign-magnitude to a monotone integer line (+0 and -0 both 0)
    ia = np.where(ia < 0, -(ia & mask), ia)
    ib = np.where(ib < 0, -(ib & mask), ib)
    dist = np.abs(ia - ib)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, dist)


def compare(ours: dict, ref: dict) -> dict:
    """{case: (elements differing, largest ulp distance)} for every case that differs."""
    assert set(ours) == set(ref), set(ours) ^ set(ref)
    bad = {}
    for k in sorted(ref):
        u = ulp_diff(ours[k], ref[k])
        if u.size and u.max() > 0:
            bad[k] = (int((u > 0).sum()), int(u.max()))
    return bad


def _run(python: str, inp: Path, out: Path) -> str:
    r = subprocess.run([python, "-c", PROGRAM, str(inp), str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agree")
    inp = tmp / "in.npz"
    np.savez(inp, **_inputs())
    ref_cap = _run((REPO / "build/ref-python").read_text().strip(), inp, tmp / "ref.npz")
    _run(str(REPO / ".venv/bin/python"), inp, tmp / "ours.npz")
    return dict(np.load(tmp / "ours.npz")), dict(np.load(tmp / "ref.npz")), ref_cap


def test_softmax_layer_norm_agree_bit_for_bit(results):
    ours, ref, cap = results
    if cap not in ("AVX2", "AVX512"):
        pytest.skip(f"upstream runs its {cap} kernels here; bit agreement is claimed for AVX2/AVX512")
    bad = compare(ours, ref)
    assert not bad, f"{len(bad)} of {len(ref)} outputs differ (elements, max ulp): {bad}"


def test_comparator_catches_a_one_ulp_fault(results):
    ours, ref, _ = results
    k = "row1000/softmax"
    faulty = dict(ours)
    y = faulty[k].copy()
    y.view(np.int32)[2, 500] += 1  # one element, one ulp
    faulty[k] = y
    bad = compare(faulty, ref)
    assert bad.get(k, (0, 0))[0] >= 1 and bad[k][1] >= 1
    # and a NaN where upstream has a number
    z = ours["row_edge/log_softmax"].copy()
    z[0, 0] = np.nan
    assert "row_edge/log_softmax" in compare({**ours, "row_edge/log_softmax": z}, ref)


def test_ulp_diff_units():
    one = np.float32(1.0)
    nxt = np.nextafter(one, np.float32(2.0))
    assert ulp_diff(np.array([one]), np.array([nxt]))[0] == 1
    assert ulp_diff(np.array([-0.0], np.float32), np.array([0.0], np.float32))[0] == 0
    assert ulp_diff(np.array([np.nan], np.float32), np.array([np.nan], np.float32))[0] == 0
    tiny = np.float32(1e-45)
    assert ulp_diff(np.array([tiny]), np.array([-tiny]))[0] == 2
    assert ulp_diff(np.array([1.0]), np.array([np.nextafter(1.0, 0.0)]))[0] == 1


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

#!/usr/bin/env python3
"""Generate bit-exact expected values for torchnative-rng from upstream torch 2.13.0.

Run with the reference interpreter (upstream torch 2.13.0, CPU):

    ~/.cache/torchnative/ref-2.13.0/bin/python core/rng/tests/gen_expected.py

It (re)writes core/rng/tests/expected/*.json.  Every value is stored as the
hex of the tensor's raw little-endian bytes in logical (row-major) order, so the
Rust tests compare bits, never approximate values.  After each operation the
generator position is recorded (`left`, `next`, the 40 tail bytes of
get_state() that hold the normal caches) plus a "probe" of two full-range
64-bit draws, so a wrong number of draws fails the test too.

Set RNG_GEN_LARGE_RANDPERM=1 to also record randperm(n) for an n above the
small-n threshold (u32::MAX / 20), which takes ~2 GB of memory and a while.
"""
import hashlib
import json
import os
import sys

import torch
import torch.nn.functional as F

OUT = os.environ.get("RNG_EXPECTED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected")
torch.set_num_threads(1)

DT = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8,
    "u8": torch.uint8, "bool": torch.bool, "u16": torch.uint16, "u32": torch.uint32,
    "u64": torch.uint64,
}


def hexbytes(t):
    t = t.detach().contiguous().cpu()
    return bytes(t.view(torch.uint8).numpy().tobytes()).hex() if t.numel() else ""


def pos():
    """Generator position right after an op, then a probe of two raw random64 draws."""
    st = bytes(torch.get_rng_state().numpy().tobytes())
    left = int.from_bytes(st[8:12], "little", signed=True)
    nxt = int.from_bytes(st[16:24], "little")
    tail = st[5016:5056].hex()
    probe = torch.empty(2, dtype=torch.int64).random_(-2**63, None)
    return {"left": left, "next": nxt, "tail": tail,
            "probe": [format(v & (2**64 - 1), "016x") for v in probe.tolist()]}


def case(**kw):
    return kw


def write(name, cases):
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__,
                   "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                   "cases": cases}, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {path}: {len(cases)} cases", file=sys.stderr)


SEEDS = [0, 1234, 2**40 + 7]


def gen_state():
    cases = []
    for seed in [0, 1, 42, 2**32 + 5, 2**64 - 1]:
        torch.manual_seed(seed)
        st = bytes(torch.get_rng_state().numpy().tobytes())
        cases.append(case(kind="fresh", seed=str(seed), state=st.hex()))
    # after draws: uniform f32 (random), randn small (double cache), randn f64 fill
    torch.manual_seed(42)
    torch.rand(5)
    torch.randn(3)            # scalar path, leaves a double normal cached
    cases.append(case(kind="after_draws", seed="42", ops="rand(5);randn(3)",
                      state=bytes(torch.get_rng_state().numpy().tobytes()).hex()))
    torch.manual_seed(7)
    torch.rand(700, dtype=torch.float64)   # crosses a twist (624 words)
    cases.append(case(kind="after_draws", seed="7", ops="rand(700,f64)",
                      state=bytes(torch.get_rng_state().numpy().tobytes()).hex()))
    # set_state round trip: a saved state with a valid double cache, then draws
    torch.manual_seed(9)
    torch.randn(3)
    saved = torch.get_rng_state()
    after = torch.randn(5, dtype=torch.float64)
    torch.set_rng_state(saved)
    cases.append(case(kind="load", saved=bytes(saved.numpy().tobytes()).hex(),
                      ops="randn(5,f64)", bytes=hexbytes(after)))
    # seed(): Generator.seed() returns the new initial seed (random), check layout only
    write("state", cases)


def gen_uniform():
    cases = []
    for dt in ["f32", "f64", "f16", "bf16"]:
        for seed in SEEDS[:2]:
            for n in [1, 7, 16, 33, 1000]:
                for (a, b) in [(0.0, 1.0), (2.0, 7.5), (-3.0, 3.0)]:
                    if n == 1000 and (a, b) != (2.0, 7.5):
                        continue
                    torch.manual_seed(seed)
                    t = torch.empty(n, dtype=DT[dt]).uniform_(a, b)
                    cases.append(case(seed=seed, dtype=dt, n=n, lo=a, hi=b, bytes=hexbytes(t), **pos()))
    # non-contiguous destinations (draw order = TensorIterator order)
    for dt in ["f32", "f64"]:
        torch.manual_seed(3)
        t = torch.empty(5, 8, dtype=DT[dt]).t()
        t.uniform_(2.0, 7.5)
        cases.append(case(seed=3, dtype=dt, sizes=[8, 5], strides=[1, 8], n=40, lo=2.0, hi=7.5,
                          bytes=hexbytes(t), **pos()))
        torch.manual_seed(4)
        t = torch.empty(6, 10, dtype=DT[dt])[:, ::3]
        t.uniform_(0.0, 1.0)
        cases.append(case(seed=4, dtype=dt, sizes=[6, 4], strides=[10, 3], n=24, lo=0.0, hi=1.0,
                          bytes=hexbytes(t), **pos()))
    write("uniform", cases)


def gen_normal():
    cases = []
    for dt in ["f32", "f64", "f16", "bf16"]:
        for seed in SEEDS:
            for n in [1, 5, 15, 16, 17, 31, 32, 33, 100, 1000]:
                for (m, s) in [(0.0, 1.0), (2.0, 0.5), (0.7, 1.3)]:
                    if seed == SEEDS[2] and (m, s) != (0.0, 1.0):
                        continue
                    if seed == SEEDS[1] and (m, s) == (0.7, 1.3):
                        continue
                    torch.manual_seed(seed)
                    t = torch.empty(n, dtype=DT[dt]).normal_(m, s)
                    cases.append(case(seed=seed, dtype=dt, n=n, mean=m, std=s, bytes=hexbytes(t), **pos()))
    # non-contiguous: scalar Box-Muller path even for >= 16 elements
    for dt in ["f32", "f64", "f16", "bf16"]:
        for (sizes, strides, mk) in [
            ([20], [2], lambda d: torch.empty(20, 2, dtype=d)[:, 0]),
            ([33], [3], lambda d: torch.empty(33, 3, dtype=d)[:, 1]),
            ([8, 5], [1, 8], lambda d: torch.empty(5, 8, dtype=d).t()),
            ([4, 3], [1, 4], lambda d: torch.empty(3, 4, dtype=d).t()),
        ]:
            torch.manual_seed(11)
            t = mk(DT[dt])
            t.normal_(0.5, 1.7)
            cases.append(case(seed=11, dtype=dt, sizes=sizes, strides=strides, n=t.numel(),
                              mean=0.5, std=1.7, bytes=hexbytes(t), **pos()))
    # sequences: the double cache survives between calls and is used by the scalar path only
    seqs = []
    torch.manual_seed(21)
    a = torch.randn(3)                      # scalar, caches
    b = torch.randn(20)                     # fill path, cache untouched
    c = torch.randn(5, dtype=torch.float16) # scalar, consumes cache first
    seqs.append(case(seed=21, steps=[["f32", 3, hexbytes(a)], ["f32", 20, hexbytes(b)],
                                     ["f16", 5, hexbytes(c)]], **pos()))
    torch.manual_seed(22)
    a = torch.randn(1, dtype=torch.float64)
    b = torch.randn(1, dtype=torch.float64)
    c = torch.randn(1, dtype=torch.float64)
    seqs.append(case(seed=22, steps=[["f64", 1, hexbytes(a)], ["f64", 1, hexbytes(b)],
                                     ["f64", 1, hexbytes(c)]], **pos()))
    write("normal", cases)
    write("normal_seq", seqs)


def gen_random():
    cases = []
    int_dts = ["i64", "i32", "i16", "i8", "u8", "bool", "f32", "f64", "f16", "bf16"]
    # randint / random_(from, to)
    ranges = {
        "i64": [(0, 10), (-5, 5), (0, 2**28 - 1), (0, 2**28), (-2**40, 2**40), (-2**62, 2**62)],
        "i32": [(0, 10), (-5, 5), (0, 2**28), (-2**31, 2**31 - 1)],
        "i16": [(0, 10), (-300, 300)],
        "i8": [(-128, 128), (0, 3)],
        "u8": [(0, 256), (3, 9)],
        "bool": [(0, 2)],
        "f32": [(0, 10), (-2**24, 2**24), (0, 2**30)],
        "f64": [(0, 10), (-2**40, 2**40)],
        "f16": [(0, 10), (-2048, 2048)],
        "bf16": [(0, 10), (-256, 256)],
        "u16": [(0, 1000)],
        "u32": [(0, 2**32 - 1), (5, 17)],
        "u64": [(0, 2**40)],
    }
    for dt, rs in ranges.items():
        for (a, b) in rs:
            for seed in SEEDS[:2]:
                torch.manual_seed(seed)
                t = torch.empty(37, dtype=DT[dt]).random_(a, b)
                cases.append(case(op="from_to", seed=seed, dtype=dt, n=37, lo=str(a), hi=str(b),
                                  bytes=hexbytes(t), **pos()))
    # random_(from) with to=None
    for dt, a in [("i64", -7), ("i32", 100), ("i8", -5), ("u8", 200), ("f32", -3), ("f16", 0),
                  ("bf16", 5), ("f64", 1), ("bool", 0)]:
        torch.manual_seed(5)
        t = torch.empty(29, dtype=DT[dt]).random_(a, None)
        cases.append(case(op="from_none", seed=5, dtype=dt, n=29, lo=str(a), bytes=hexbytes(t), **pos()))
    # random_() without arguments
    for dt in int_dts:
        for seed in SEEDS[:2]:
            torch.manual_seed(seed)
            t = torch.empty(41, dtype=DT[dt]).random_()
            cases.append(case(op="random", seed=seed, dtype=dt, n=41, bytes=hexbytes(t), **pos()))
    # full 64-bit range
    for dt in ["i64", "f64", "f32", "bf16"]:
        torch.manual_seed(6)
        t = torch.empty(23, dtype=DT[dt]).random_(-2**63, None)
        cases.append(case(op="full64", seed=6, dtype=dt, n=23, bytes=hexbytes(t), **pos()))
    write("random", cases)


def gen_bernoulli():
    cases = []
    for dt in ["f32", "f64", "f16", "bf16", "bool", "i64", "u8"]:
        for p in [0.0, 0.3, 0.5, 1.0]:
            for n in [7, 100]:
                torch.manual_seed(8)
                t = torch.empty(n, dtype=DT[dt]).bernoulli_(p)
                cases.append(case(op="scalar", seed=8, dtype=dt, n=n, p=p, bytes=hexbytes(t), **pos()))
    for pdt in ["f32", "f64", "f16", "bf16"]:
        for odt in ["f32", "f64", "bool"]:
            torch.manual_seed(12)
            probs = (torch.arange(50, dtype=torch.float64) / 49.0).to(DT[pdt])
            t = torch.bernoulli(probs) if odt == pdt else torch.empty(50, dtype=DT[odt]).bernoulli_(probs)
            cases.append(case(op="tensor", seed=12, dtype=odt, pdtype=pdt, n=50, p_bytes=hexbytes(probs),
                              bytes=hexbytes(t), **pos()))
    write("bernoulli", cases)


def gen_exponential():
    cases = []
    for dt in ["f32", "f64", "f16", "bf16"]:
        for lam in [1.0, 2.5, 1e-3]:
            for n in [9, 300]:
                torch.manual_seed(13)
                t = torch.empty(n, dtype=DT[dt]).exponential_(lam)
                cases.append(case(seed=13, dtype=dt, n=n, lam=lam, bytes=hexbytes(t), **pos()))
    write("exponential", cases)


def gen_randperm():
    cases = []
    for seed in SEEDS:
        for n in [0, 1, 2, 3, 10, 100, 1000, 5000]:
            torch.manual_seed(seed)
            t = torch.randperm(n)
            cases.append(case(seed=seed, n=n, bytes=hexbytes(t), **pos()))
    if os.environ.get("RNG_GEN_LARGE_RANDPERM"):
        n = (2**32 - 1) // 20  # first n on the random64 path
        torch.manual_seed(77)
        t = torch.randperm(n)
        raw = bytes(t.numpy().tobytes())
        cases.append(case(seed=77, n=n, sha256=hashlib.sha256(raw).hexdigest(),
                          head=hexbytes(t[:16]), tail_values=hexbytes(t[-16:]), **pos()))
        del t, raw
    write("randperm", cases)


def gen_multinomial():
    cases = []
    torch.manual_seed(99)
    p1 = torch.tensor([0.1, 0.2, 0.3, 0.4])
    p2 = torch.rand(3, 10) + 0.01
    pz = torch.tensor([0.0, 0.5, 0.0, 2.0, 1.0, 0.0, 0.25])
    for dt in ["f32", "f64", "bf16", "f16"]:
        for (pname, probs) in [("p1", p1), ("p2", p2), ("pz", pz)]:
            pt = probs.to(DT[dt])
            for (ns, repl) in [(1, True), (1, False), (3, False), (5, True), (100, True)]:
                if not repl and ns > 3:
                    continue
                for seed in SEEDS[:2]:
                    torch.manual_seed(seed)
                    try:
                        t = torch.multinomial(pt, ns, replacement=repl)
                    except RuntimeError as e:
                        print("skip", dt, pname, ns, repl, str(e)[:60], file=sys.stderr)
                        continue
                    cases.append(case(seed=seed, dtype=dt, probs=hexbytes(pt), shape=list(pt.shape),
                                      n_sample=ns, replacement=repl, bytes=hexbytes(t), **pos()))
    write("multinomial", cases)


def gen_dropout():
    cases = []
    for dt in ["f32", "f64", "f16", "bf16"]:
        for p in [0.1, 0.3, 0.5, 0.9]:
            for shape in [[1000], [7, 9]]:
                x = ((torch.arange(torch.Size(shape).numel()) % 13) + 1).to(DT[dt]).reshape(shape)
                torch.manual_seed(31)
                y = F.dropout(x, p, training=True)
                cases.append(case(seed=31, dtype=dt, p=p, shape=shape, x=hexbytes(x),
                                  bytes=hexbytes(y), **pos()))
    # transposed input: noise = empty_like(input) keeps strides, so draws go in memory order
    x = ((torch.arange(40) % 13) + 1).float().reshape(5, 8).t()
    torch.manual_seed(32)
    y = F.dropout(x, 0.25, training=True)
    cases.append(case(seed=32, dtype="f32", p=0.25, shape=[8, 5], sizes=[8, 5], strides=[1, 8], x=hexbytes(x),
                      bytes=hexbytes(y), **pos()))
    write("dropout", cases)


if __name__ == "__main__":
    assert torch.__version__.startswith("2.13.0"), torch.__version__
    os.makedirs(OUT, exist_ok=True)
    gen_state()
    gen_uniform()
    gen_normal()
    gen_random()
    gen_bernoulli()
    gen_exponential()
    gen_randperm()
    gen_multinomial()
    gen_dropout()

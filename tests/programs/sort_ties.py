"""sort, argsort, msort, topk and kthvalue on inputs full of equal values, run unchanged by the
reference interpreter and by ours (tests/test_sort_ties.py compares the two outputs).

    python tests/programs/sort_ties.py OUT.json [--dtypes a,b] [--fault swap|stable]

`--fault` (for the test's self-check) injects a fault on this side: `swap` exchanges two tied
indices (and their values) in one unstable-sort result, `stable` sorts stably where upstream's
unstable introsort runs (the behaviour before ours took libstdc++'s order).

Inputs come from a fixed description (Python's `random.Random(seed)`, not torch's
generator), so both sides sort the same numbers. Each result is recorded as its dtype, shape and
elements (`repr` of Python numbers, so -0.0 and 0.0 and NaN stay apart; rows over 40 elements as a
digest of them). The cases cover every dtype upstream's CPU sort takes here, rows shorter and
longer than libstdc++'s insertion-sort threshold (16) up to 5000 elements, NaN, +-inf, -0.0/0.0,
sort dims other than the last, transposed, strided and expanded (stride 0) inputs,
non-contiguous out= tensors, stable True/False/None, descending, fbgemm's radix-sort case (1-D
ascending integers, >= 32768 elements) and its boundary, and topk's partial_sort (k * 64 <= n)
and nth_element paths, sorted or not (k at that boundary and at the ends of the row). Not
covered: inputs that drive introsort to its depth limit (its heapsort fallback), which random
rows do not reach.
"""

import hashlib
import json
import random
import zlib

import torch

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int64", "int32", "int16", "int8", "uint8")
DTYPES = FLOATS + INTS + ("bool",)


def pool(dtype, rng):
    """A few distinct values, so that most elements tie with many others."""
    if dtype == "bool":
        return [False, True]
    if dtype in FLOATS:
        vals = [0.0, -0.0, 1.5, -2.0, float("nan"), float("inf"), float("-inf"), 3.0]
        return vals[: rng.choice((2, 3, 5, 8))]
    lo = 0 if dtype == "uint8" else -3
    return list(range(lo, lo + rng.choice((1, 2, 3, 7))))


def make(shape, dtype, what=""):
    rng = random.Random(zlib.crc32(f"{dtype}{shape}{what}".encode()))
    p = pool(dtype, rng)
    n = 1
    for s in shape:
        n *= s
    data = [rng.choice(p) for _ in range(n)]
    return torch.tensor(data, dtype=getattr(torch, dtype)).reshape(shape)


def layouts(x):
    """The input itself and non-contiguous views with the same logical values layout."""
    yield "contig", x
    if x.dim() >= 2:
        yield "transposed", x.transpose(0, 1).contiguous().transpose(0, 1)
    if x.dim() >= 1 and x.shape[-1] > 1:
        big = torch.cat([x, x], dim=-1)
        yield "strided", big[..., ::2]
    if x.dim() >= 1:
        yield "expanded", x.narrow(-1, 0, 1).expand(x.shape) if x.numel() else x


def rec(v):
    """A tensor as its dtype, shape and the digest of its elements' reprs (short rows in full)."""
    if isinstance(v, torch.Tensor):
        elems = [repr(e) for e in v.flatten().tolist()]
        body = ",".join(elems) if len(elems) <= 40 else hashlib.sha1(",".join(elems).encode()).hexdigest()
        return f"{str(v.dtype)[6:]}{list(v.shape)}:{body}"
    return v


def swap_a_tie(values, indices):
    """The first two adjacent equal values of a 1-D sort result, exchanged with their indices."""
    for j in range(values.numel() - 1):
        if values[j].item() == values[j + 1].item():
            perm = torch.arange(values.numel())
            perm[j], perm[j + 1] = j + 1, j
            return values[perm], indices[perm]
    return values, indices


def main(out_path, dtypes=DTYPES, fault=None):
    results = {}
    sort = torch.sort
    if fault == "stable":
        def sort(t, *a, stable=False, **kw):
            return torch.sort(t, *a, stable=True, **kw)

    def put(name, fn):
        try:
            r = fn()
            if fault == "swap" and name.startswith("sort.unstable/") and r[0].dim() == 1 and r[0].numel() > 16:
                r = swap_a_tie(*r)
            if isinstance(r, tuple):
                results[name] = [rec(t) for t in r]
            else:
                results[name] = rec(r)
        except Exception as e:  # the exception type is compared too
            results[name] = f"raised {type(e).__name__}"

    shapes = [(0,), (1,), (5,), (16,), (17,), (33,), (100,), (1000,), (5000,), (4, 40), (3, 17, 5), (64, 3)]
    for dtype in dtypes:
        for shape in shapes:
            x = make(shape, dtype)
            for lay, t in layouts(x):
                for dim in sorted({-1, 0, t.dim() // 2}):
                    for desc in (False, True):
                        tag = f"{dtype}/{shape}/{lay}/dim{dim}/desc{int(desc)}"
                        put(f"sort/{tag}", lambda: tuple(torch.sort(t, dim=dim, descending=desc)))
                        put(f"sort.unstable/{tag}", lambda: tuple(sort(t, stable=False, dim=dim, descending=desc)))
                        put(f"sort.stable/{tag}", lambda: tuple(torch.sort(t, stable=True, dim=dim, descending=desc)))
                        put(f"argsort/{tag}", lambda: torch.argsort(t, dim=dim, descending=desc))
                        put(f"argsort.stable/{tag}", lambda: torch.argsort(t, dim=dim, descending=desc, stable=True))
                    if dtype == "bool":
                        continue  # upstream's topk takes no bool
                    n = t.shape[dim] if t.dim() else 1
                    for k in sorted({0, 1, n // 64, n // 64 + 1, n // 3, n - 1, n} & set(range(n + 1))):
                        for largest in (True, False):
                            for srt in (True, False):
                                put(f"topk/{tag}/k{k}/l{int(largest)}/s{int(srt)}",
                                    lambda: tuple(torch.topk(t, k, dim=dim, largest=largest, sorted=srt)))
                    if n:
                        for k in sorted({1, n // 2 + 1, n}):
                            put(f"kthvalue/{tag}/k{k}", lambda: tuple(torch.kthvalue(t, k, dim=dim)))
                put(f"msort/{dtype}/{shape}/{lay}", lambda: torch.msort(t))
        # out= with non-contiguous outputs (upstream sorts inside them through strided accessors)
        x = make((6, 50), dtype, "out")
        for desc in (False, True):
            def sort_out():
                v = torch.empty(50, 6, dtype=x.dtype).t()
                i = torch.empty(50, 6, dtype=torch.int64).t()
                torch.sort(x, dim=1, descending=desc, out=(v, i))
                return v, i
            put(f"sort.out/{dtype}/desc{int(desc)}", sort_out)

            def sort_stable_out():
                v = torch.empty(6, 100, dtype=x.dtype)[:, ::2]
                i = torch.empty(6, 100, dtype=torch.int64)[:, ::2]
                torch.sort(x, stable=True, dim=1, descending=desc, out=(v, i))
                return v, i
            put(f"sort.stable_out/{dtype}/desc{int(desc)}", sort_stable_out)

            def argsort_out():
                i = torch.empty(50, 6, dtype=torch.int64).t()
                torch.argsort(x, dim=1, descending=desc, stable=False, out=i)
                return i
            put(f"argsort.out/{dtype}/desc{int(desc)}", argsort_out)
            if dtype != "bool":
                def topk_out():
                    v = torch.empty(40, 6, dtype=x.dtype).t()
                    i = torch.empty(40, 6, dtype=torch.int64).t()
                    torch.topk(x, 40, dim=1, largest=not desc, out=(v, i))
                    return v, i
                put(f"topk.out/{dtype}/desc{int(desc)}", topk_out)
    # fbgemm's radix sort (stable) for 1-D ascending integers of at least 32768 elements; one
    # element fewer, 2-D or descending take introsort
    for dtype in [d for d in INTS + ("bool", "float32") if d in dtypes]:
        for shape in ((32767,), (32768,), (1, 32768)):
            x = make(shape, dtype)
            for desc in (False, True):
                put(f"radix/{dtype}/{shape}/desc{int(desc)}",
                    lambda: sort(x, stable=False, descending=desc).indices)
    Path = __import__("pathlib").Path
    Path(out_path).write_text(json.dumps({"torch": torch.__version__, "results": results}))


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--fault", choices=("swap", "stable"))
    a = ap.parse_args()
    main(a.out, tuple(a.dtypes.split(",")), a.fault)

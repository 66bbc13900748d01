"""Multi-process programs run identically under upstream torch (gloo) and torchnative.

    python collective_programs.py PROGRAM RANK WORLD PORT OUT.json

Each rank writes one JSON file: case name -> result, where a tensor is recorded bit for bit
(dtype, shape, raw bytes in hex) and a refusal as its exception type. Data comes from Python's
`random` with a per-case seed so both torches get the same inputs without sharing an RNG.
Imports only torch and the standard library: the same file runs in both virtual environments."""

from __future__ import annotations

import json
import random
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]
OPS = ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG"]


def enc(value):
    if isinstance(value, torch.Tensor):
        t = value.detach().contiguous()
        raw = t.view(torch.uint8) if t.dtype != torch.bool else t.to(torch.uint8)
        return {"dtype": str(t.dtype), "shape": list(t.shape), "hex": bytes(raw.reshape(-1).tolist()).hex()}
    if isinstance(value, (list, tuple)):
        return [enc(v) for v in value]
    if isinstance(value, dict):
        return {k: enc(v) for k, v in value.items()}
    return value


def data(seed, n, dtype, scale=1.0):
    rnd = random.Random(seed)
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.tensor([rnd.random() < 0.5 for _ in range(n)], dtype=dt)
    if dtype in ("int8", "uint8"):
        lo = 0 if dtype == "uint8" else -8
        return torch.tensor([rnd.randint(lo, lo + 15) for _ in range(n)], dtype=dt)
    if dtype.startswith("int"):
        return torch.tensor([rnd.randint(-1000, 1000) for _ in range(n)], dtype=dt)
    # mixed magnitudes make every summation order give different bits
    vals = [rnd.uniform(-1, 1) * 10 ** rnd.randint(-3, 4) * scale for _ in range(n)]
    return torch.tensor(vals, dtype=torch.float64).to(dt)


def small_mul(rank, n, dtype):
    """Values near 1 for PRODUCT (no overflow, still rounding-sensitive)."""
    rnd = random.Random(1000 + rank)
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        return torch.tensor([1 + rnd.uniform(-0.1, 0.1) for _ in range(n)], dtype=torch.float64).to(getattr(torch, dtype))
    return data(1000 + rank, n, dtype)


def run_case(out, name, fn):
    try:
        out[name] = enc(fn())
    except Exception as exc:  # the exception type is part of the comparison
        out[name] = {"exc": type(exc).__name__, "runtime": isinstance(exc, RuntimeError), "msg": str(exc)[:500]}


def prog_collectives(rank, world):
    out = {}
    R = dist.ReduceOp
    for dtype in DTYPES:
        for op in OPS:
            def case(dtype=dtype, op=op):
                t = small_mul(rank, 37, dtype) if op == "PRODUCT" else data(rank * 100 + len(op), 37, dtype)
                dist.all_reduce(t, op=getattr(R, op))
                return t
            run_case(out, f"all_reduce/{dtype}/{op}", case)
    run_case(out, "all_reduce/premul_sum", lambda: dist.all_reduce(torch.ones(3), op=dist._make_nccl_premul_sum(2.0)))

    def big():  # 300k floats: several 1 MiB segments per rank in gloo's ring
        t = data(7 + rank, 300_001, "float32")
        dist.all_reduce(t)
        return t
    run_case(out, "all_reduce/float32/large", big)

    def noncontig():
        t = data(rank, 24, "float32").reshape(4, 6).t()
        dist.all_reduce(t)
        return t
    run_case(out, "all_reduce/noncontiguous", noncontig)

    for root in range(world):
        def bc(root=root):
            t = data(rank + 50, 10, "bfloat16")
            dist.broadcast(t, src=root)
            v = data(rank + 60, 12, "int64").reshape(3, 4).t()
            dist.broadcast(v, src=root)
            return [t, v]
        run_case(out, f"broadcast/root{root}", bc)

    def reduce_root():
        t = data(rank + 3, 33, "float32")
        dist.reduce(t, dst=world - 1)
        return t if rank == world - 1 else None
    run_case(out, "reduce/sum", reduce_root)

    def reduce_max():
        t = data(rank + 4, 33, "int32")
        dist.reduce(t, dst=0, op=R.MAX)
        return t if rank == 0 else None
    run_case(out, "reduce/max", reduce_max)

    def ag():
        outs = [torch.zeros(5, dtype=torch.float16) for _ in range(world)]
        dist.all_gather(outs, data(rank, 5, "float16"))
        return outs
    run_case(out, "all_gather", ag)

    def agt():
        o = torch.zeros(world * 6, dtype=torch.int8)
        dist.all_gather_into_tensor(o, data(rank, 6, "int8"))
        return o
    run_case(out, "all_gather_into_tensor", agt)

    def gather():
        outs = [torch.zeros(4) for _ in range(world)] if rank == 1 % world else None
        dist.gather(data(rank, 4, "float32"), outs, dst=1 % world)
        return outs
    run_case(out, "gather", gather)

    def scatter():
        o = torch.zeros(3, dtype=torch.int64)
        ins = [data(10 + r, 3, "int64") for r in range(world)] if rank == 0 else None
        dist.scatter(o, ins, src=0)
        return o
    run_case(out, "scatter", scatter)

    def rs():
        o = torch.zeros(7)
        dist.reduce_scatter(o, [data(rank * 10 + r, 7, "float32") for r in range(world)])
        return o
    run_case(out, "reduce_scatter", rs)

    def rst():
        o = torch.zeros(5, dtype=torch.int32)
        dist.reduce_scatter_tensor(o, data(rank, 5 * world, "int32"))
        return o
    run_case(out, "reduce_scatter_tensor/int", rst)

    def rstf():
        o = torch.zeros(5, dtype=torch.float64)
        dist.reduce_scatter_tensor(o, data(rank, 5 * world, "float64"))
        return o
    run_case(out, "reduce_scatter_tensor/float", rstf)

    def a2a():
        outs = [torch.zeros(2, dtype=torch.int64) for _ in range(world)]
        dist.all_to_all(outs, [torch.tensor([rank, r]) for r in range(world)])
        return outs
    run_case(out, "all_to_all", a2a)

    def a2a_uneven():
        # rank i sends (j + 1) rows of width 3 to rank j
        ins = torch.cat([torch.full((j + 1, 3), rank * 10 + j, dtype=torch.float32) for j in range(world)])
        o = torch.zeros(world * (rank + 1), 3)
        dist.all_to_all_single(o, ins, output_split_sizes=[rank + 1] * world,
                               input_split_sizes=[j + 1 for j in range(world)])
        return o
    run_case(out, "all_to_all_single/uneven", a2a_uneven)

    def a2a_even():
        o = torch.zeros(world * 2, dtype=torch.int32)
        dist.all_to_all_single(o, torch.arange(world * 2, dtype=torch.int32) + 100 * rank)
        return o
    run_case(out, "all_to_all_single/even", a2a_even)

    for op in ("PRODUCT", "MIN", "MAX"):
        def red_op(op=op):
            t = small_mul(rank, 11, "float32")
            dist.reduce(t, dst=0, op=getattr(R, op))
            o = torch.zeros(3, dtype=torch.float64)
            dist.reduce_scatter_tensor(o, small_mul(rank, 3 * world, "float64"), op=getattr(R, op))
            return [t if rank == 0 else None, o]
        run_case(out, f"reduce_and_reduce_scatter/{op}", red_op)

    def gather_bool():
        outs = [torch.zeros(6, dtype=torch.bool) for _ in range(world)]
        dist.all_gather(outs, data(rank, 6, "bool"))
        b = data(rank, 5, "int8")
        dist.broadcast(b, src=0)
        return outs + [b]
    run_case(out, "all_gather/bool+broadcast/int8", gather_bool)

    def barrier():
        dist.barrier()
        dist.monitored_barrier(timeout=timedelta(seconds=30))
        return True
    run_case(out, "barrier", barrier)

    def p2p():
        if world == 1:
            return None
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        got = torch.zeros(4, dtype=torch.bfloat16)
        if rank % 2 == 0:
            dist.send(data(rank, 4, "bfloat16"), dst=nxt)
            dist.recv(got, src=prv)
        else:
            dist.recv(got, src=prv)
            dist.send(data(rank, 4, "bfloat16"), dst=nxt)
        a = torch.zeros(3, dtype=torch.int16)
        reqs = [dist.isend(torch.full((3,), rank, dtype=torch.int16), dst=nxt, tag=5), dist.irecv(a, src=prv, tag=5)]
        for r in reqs:
            r.wait()
        b = torch.zeros(2)
        ops = [dist.P2POp(dist.isend, torch.full((2,), float(rank)), nxt),
               dist.P2POp(dist.irecv, b, prv)]
        for r in dist.batch_isend_irecv(ops):
            r.wait()
        return [got, a, b]
    run_case(out, "p2p", p2p)

    def async_ops():
        t = data(rank, 9, "float64")
        w = dist.all_reduce(t, async_op=True)
        w.wait()
        u = torch.ones(2) * rank
        fut = dist.all_reduce(u, async_op=True).get_future()
        v = fut.wait()
        return [t, w.is_completed(), u, v]
    run_case(out, "async", async_ops)

    def objects():
        objs = [None] * world
        dist.all_gather_object(objs, {"rank": rank, "s": "x" * rank})
        lst = [f"from{rank}", rank * 2] if rank == 0 else [None, None]
        dist.broadcast_object_list(lst, src=0)
        gathered = [None] * world if rank == 0 else None
        dist.gather_object(("g", rank), gathered, dst=0)
        recv = [None]
        dist.scatter_object_list(recv, [r * 3 for r in range(world)] if rank == 0 else None, src=0)
        return [objs, lst, gathered, recv]
    run_case(out, "objects", objects)

    def groups():
        res = []
        sub = dist.new_group([0, world - 1]) if world > 1 else dist.new_group([0])
        t = torch.full((3,), float(rank + 1))
        if rank in (0, world - 1):
            dist.all_reduce(t, group=sub)
        res.append(t)
        pairs, _ = dist.new_subgroups_by_enumeration([[r for r in range(world) if r % 2 == k] for k in range(min(2, world))])
        u = torch.full((2,), rank, dtype=torch.int64)
        dist.all_reduce(u, group=pairs)
        res.append(u)
        res.append(dist.get_rank(pairs))
        res.append(dist.get_world_size(pairs))
        return res
    run_case(out, "groups", groups)
    return out


def prog_mismatch(rank, world):
    """Rank 1 passes ones(6) where the others pass ones(4); then a dtype mismatch."""
    out = {}

    def shape():
        t = torch.ones(6 if rank == 1 else 4)
        dist.all_reduce(t)
        return t
    run_case(out, "shape", shape)

    def dtype():
        t = torch.ones(4, dtype=torch.float64 if rank == 0 else torch.float32)
        dist.all_reduce(t)
        return t
    run_case(out, "dtype", dtype)

    def after():  # the group still works after a refused collective
        t = torch.ones(2)
        dist.all_reduce(t)
        return t
    run_case(out, "after", after)
    return out


def prog_dead_rank(rank, world):
    """The last rank exits without calling the collective the others wait in."""
    out = {}
    dist.barrier()
    if rank == world - 1:
        import os

        os._exit(0)

    def waits():
        t = torch.ones(4)
        dist.all_reduce(t)
        return t
    run_case(out, "all_reduce_after_death", waits)
    return out


def prog_stalled_rank(rank, world):
    """The last rank stays alive but skips the collective: the others hit the group timeout."""
    out = {}
    dist.barrier()
    if rank == world - 1:
        import time

        time.sleep(float(sys.argv[6]) * 2 + 1)
        return out
    run_case(out, "all_reduce_stalled", lambda: dist.all_reduce(torch.ones(4)))
    return out


def prog_stress(rank, world):
    """STRESS_COUNT small collectives of mixed kinds, then one 100 MB all_reduce; every result is
    checked against its closed form (integers: exact) and a count of failures is returned."""
    import os

    count = int(os.environ.get("STRESS_COUNT", "10000"))
    bad = 0
    for i in range(count):
        kind = i % 4
        if kind == 0:
            t = torch.full((17,), rank + i, dtype=torch.int64)
            dist.all_reduce(t)
            bad += int(not bool((t == world * i + world * (world - 1) // 2).all()))
        elif kind == 1:
            t = torch.full((5,), rank * 1000 + i, dtype=torch.int32)
            dist.broadcast(t, src=i % world)
            bad += int(not bool((t == (i % world) * 1000 + i).all()))
        elif kind == 2:
            outs = [torch.zeros(3, dtype=torch.int64) for _ in range(world)]
            dist.all_gather(outs, torch.full((3,), rank * i, dtype=torch.int64))
            bad += sum(int(not bool((o == r * i).all())) for r, o in enumerate(outs))
        else:
            o = torch.zeros(2, dtype=torch.int64)
            dist.reduce_scatter_tensor(o, torch.arange(2 * world, dtype=torch.int64) + rank)
            want = torch.arange(2 * rank, 2 * rank + 2, dtype=torch.int64) * world + world * (world - 1) // 2
            bad += int(not bool((o == want).all()))
    big = torch.full((25_000_000,), float(rank + 1))  # 100 MB of float32
    dist.all_reduce(big)
    bad += int(not bool((big == world * (world + 1) / 2).all()))
    return {"count": count, "bad": bad}


def prog_vulkan(rank, world):
    """Ours only: the same collectives on vulkan tensors (staged through host memory by the process
    group) and on CPU tensors; the test compares the two bit for bit. Skips without a Vulkan adapter."""
    import time

    from torchnative_core.plugins import RECORDS

    rec = RECORDS.get("vulkan")
    if rec is None or rec.status != "ok":
        return {"skip": f"vulkan: {rec.status}: {rec.reason}" if rec else "vulkan: not installed"}
    out = {"cpu": {}, "vulkan": {}, "devices": []}
    for device in ("cpu", "vulkan"):
        res = out[device]
        for dtype in ("float32", "int64"):
            t = data(rank, 1000, dtype).to(device)
            dist.all_reduce(t)
            out["devices"].append(str(t.device))
            res[f"all_reduce_{dtype}"] = enc(t.cpu())
            t = data(rank, 64, dtype).to(device)
            dist.broadcast(t, src=world - 1)
            res[f"broadcast_{dtype}"] = enc(t.cpu())
        x = data(10 + rank, 48, "float32").to(device)
        gathered = [torch.empty(48, device=device) for _ in range(world)]
        dist.all_gather(gathered, x)
        res["all_gather"] = enc([g.cpu() for g in gathered])
        flat = torch.empty(48 * world, device=device)
        dist.all_gather_into_tensor(flat, x)
        res["all_gather_into_tensor"] = enc(flat.cpu())
        inp = data(20 + rank, 12 * world, "float32").to(device)
        part = torch.empty(12, device=device)
        dist.reduce_scatter_tensor(part, inp)
        res["reduce_scatter_tensor"] = enc(part.cpu())
        if world > 1:
            msg = torch.arange(16, dtype=torch.float32, device=device) * (rank + 1)
            if rank == 0:
                dist.send(msg, 1)
            elif rank == 1:
                dist.recv(msg, 0)
            res["send_recv"] = enc(msg.cpu())
        dist.barrier()
        # the staging cost, recorded for docs/distributed.md (not asserted: no timed tests)
        big = torch.ones(1 << 20, device=device)  # 4 MB
        dist.all_reduce(big)
        t0 = time.perf_counter()
        for _ in range(5):
            dist.all_reduce(big)
        out[f"all_reduce_4mb_ms_{device}"] = (time.perf_counter() - t0) / 5 * 1e3
    return out


PROGRAMS = {"collectives": prog_collectives, "vulkan": prog_vulkan, "mismatch": prog_mismatch, "dead_rank": prog_dead_rank,
            "stalled_rank": prog_stalled_rank, "stress": prog_stress}


def main():
    program, rank, world, port, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    timeout = timedelta(seconds=float(sys.argv[6]) if len(sys.argv) > 6 else 60)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=timeout)
    out = PROGRAMS[program](rank, world)
    with open(path, "w") as f:
        json.dump(out, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""DistributedDataParallel programs, run under upstream torch (gloo) and torchnative; each rank
prints one JSON object.

  python ddp_programs.py train PORT RANK WORLD    DDP variants trained on this rank's shard, and
                                                  (rank 0) the same model trained alone on the
                                                  combined batch
  python ddp_programs.py buckets                  _compute_bucket_assignment_by_size on assorted tensors
"""

import datetime
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from program_outcome import outcome

STEPS = 4
BATCH = 8  # per rank


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.a = nn.Linear(6, 16)
        self.b = nn.Linear(16, 16)
        self.c = nn.Linear(16, 3)
        self.unused = nn.Linear(4, 4) if unused else None

    def forward(self, x):
        return self.c(torch.tanh(self.b(torch.relu(self.a(x)))))


def data(world):
    g = torch.Generator().manual_seed(123)
    xs = [torch.randn(BATCH * world, 6, generator=g) for _ in range(STEPS)]
    ys = [torch.randn(BATCH * world, 3, generator=g) for _ in range(STEPS)]
    return xs, ys


def fresh(unused=False):
    torch.manual_seed(7)
    return Net(unused)


def flat_params(model):
    # the trained parameters: a layer no forward uses is left out
    return torch.cat([p.detach().reshape(-1) for n, p in model.named_parameters() if not n.startswith("unused")]).tolist()


def train(model, xs, ys, rank, world, accumulate=False):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lo, hi = rank * BATCH, (rank + 1) * BATCH
    for x, y in zip(xs, ys):
        opt.zero_grad()
        if accumulate:  # two half-batches, the first under no_sync
            half = BATCH // 2
            with model.no_sync():
                nn.functional.mse_loss(model(x[lo:lo + half]), y[lo:lo + half]).mul(0.5).backward()
            nn.functional.mse_loss(model(x[lo + half:hi]), y[lo + half:hi]).mul(0.5).backward()
        else:
            nn.functional.mse_loss(model(x[lo:hi]), y[lo:hi]).backward()
        opt.step()


def train_alone(xs, ys, world):
    model = fresh()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return flat_params(model)


def run_train(port, rank, world):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    xs, ys = data(world)
    out = {}
    variants = {
        "default": {},
        "small_buckets": {"bucket_cap_mb": 0.0005},
        "grad_as_bucket_view": {"gradient_as_bucket_view": True, "bucket_cap_mb": 0.001},
        "find_unused": {"find_unused_parameters": True},
        "allreduce_hook": {"hook": default_hooks.allreduce_hook},
        "fp16_hook": {"hook": default_hooks.fp16_compress_hook},
        "no_sync": {"accumulate": True},
        "static_graph": {"static_graph": True},
        "static_graph_unused": {"static_graph": True, "bucket_cap_mb": 0.0005},
    }
    for name, kw in variants.items():
        kw = dict(kw)
        hook = kw.pop("hook", None)
        accumulate = kw.pop("accumulate", False)
        model = DDP(fresh(unused=name in ("find_unused", "static_graph_unused")), **kw)
        if hook is not None:
            model.register_comm_hook(None, hook)
        train(model, xs, ys, rank, world, accumulate)
        out[name] = flat_params(model.module)
        if name == "small_buckets":
            logging = model._get_ddp_logging_data()
            out["small_buckets.logging"] = {k: logging.get(k) for k in ("world_size", "rank", "find_unused_parameters",
                                                                         "gradient_as_bucket_view", "num_parameter_tensors",
                                                                         "total_parameter_size_bytes", "has_rebuilt_buckets",
                                                                         "bucket_sizes", "rebuilt_bucket_sizes", "iteration",
                                                                         "bucket_cap_bytes", "module_name", "dtypes")}
        if name in ("find_unused", "static_graph_unused"):
            out[name + ".unused_grad_is_none"] = model.module.unused.weight.grad is None
    # buffers: BatchNorm's running statistics are broadcast from rank 0 before each forward
    torch.manual_seed(7)
    bn = DDP(nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Linear(8, 3)))
    train(bn, xs, ys, rank, world)
    out["batchnorm"] = flat_params(bn.module)
    out["batchnorm.buffers"] = [b.tolist() for b in bn.module[1].buffers()]
    # join(): this rank runs out of data one step early and shadows the others' all-reduces
    torch.manual_seed(7)
    uneven = DDP(Net())
    opt = torch.optim.SGD(uneven.parameters(), lr=0.1)
    with uneven.join():
        for step in range(STEPS - rank):
            opt.zero_grad()
            nn.functional.mse_loss(uneven(xs[step][rank * BATCH:(rank + 1) * BATCH]), ys[step][rank * BATCH:(rank + 1) * BATCH]).backward()
            opt.step()
    out["join_uneven"] = flat_params(uneven.module)
    # a module with parameters that get no gradient, without find_unused_parameters: upstream
    # raises at the next iteration's forward
    bad = DDP(fresh(unused=True))
    nn.functional.mse_loss(bad(xs[0][:BATCH]), ys[0][:BATCH]).backward()
    out["unused_without_find_unused"] = outcome(lambda: bad(xs[1][:BATCH]))
    # the broadcast at construction: rank 1's different initial weights are replaced by rank 0's
    torch.manual_seed(100 + rank)
    m = Net()
    DDP(m)
    out["synced_at_construction"] = flat_params(m)
    # parameter shapes that differ between ranks are refused at construction
    odd = nn.Linear(4 + rank, 2)
    out["mismatched_params"] = outcome(lambda: DDP(odd))
    if rank == 0:
        out["alone"] = train_alone(xs, ys, world)
    dist.destroy_process_group()
    print(json.dumps(out), flush=True)


def run_buckets():
    f, h, d = torch.float32, torch.float16, torch.float64
    cases = {
        "uniform": ([(100,)] * 6, [f] * 6, [400]),
        "mixed_dtypes": ([(100,), (50,), (100,), (30,), (10,)], [f, h, f, h, d], [300, 1000]),
        "limits_in_turn": ([(64,)] * 10, [f] * 10, [256, 512, 1024]),
        "big_and_small": ([(1000,), (3,), (2000,), (5, 5), (7,)], [f] * 5, [1024 * 1024]),
        "ddp_defaults": ([(16, 6), (16,), (16, 16), (16,), (3, 16), (3,)], [f] * 6, [1024 * 1024, 25 * 1024 * 1024]),
    }
    out = {}
    for name, (shapes, dtypes, limits) in cases.items():
        tensors = [torch.zeros(s, dtype=dt) for s, dt in zip(shapes, dtypes)]
        out[name] = [list(map(list, r)) if i == 0 else list(r) for i, r in
                     enumerate(dist._compute_bucket_assignment_by_size(tensors, limits))]
        order = list(reversed(range(len(tensors))))
        out[name + ".indices"] = [list(map(list, r)) if i == 0 else list(r) for i, r in enumerate(
            dist._compute_bucket_assignment_by_size([tensors[i] for i in order], limits, [False] * len(tensors), order))]
    out["sparse_expected"] = [list(map(list, r)) if i == 0 else list(r) for i, r in enumerate(
        dist._compute_bucket_assignment_by_size([torch.zeros(10)] * 3, [1000], [False, True, False]))]
    # DDP's buffer broadcast runs under this context: it restores the version counter
    t = torch.zeros(3)
    v = t.view(3)
    before = t._version
    with torch.autograd._unsafe_preserve_version_counter(t):
        t.add_(1)
        inside = t._version
    out["preserve_version"] = [inside > before, t._version == before, v._version == before, t.tolist()]
    print(json.dumps(out, sort_keys=True), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "train":
        run_train(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        run_buckets()
    sys.stdout.flush()
    os._exit(0)

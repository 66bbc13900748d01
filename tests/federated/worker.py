"""One process of a federated test run (coordinator or client), or the sequential recomputation.

    python worker.py CONFIG.json RANK      # a rank of the process group
    python worker.py CONFIG.json seq       # the same rounds recomputed in one process

Run by tests/federated/test_engine.py under either interpreter (ours or upstream's); writes
RANK.npz (final state) and RANK.json (history or error) into the config's outdir.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import sys
import time
import traceback

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)  # the same summation order in every process


def make_model(hidden: int = 16) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 3))


def make_data(rank: int, n: int, batch: int = 8):
    """A client's deterministic synthetic data: 3 classes from a fixed linear rule, skewed per rank."""
    rng = np.random.default_rng(100 + rank)
    w = np.random.default_rng(7).normal(size=(8, 3))
    x = rng.normal(loc=0.3 * rank, size=(n, 8)).astype(np.float32)
    y = np.argmax(x @ w, axis=1)
    ds = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    return torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False)


def sgd(params):
    return torch.optim.SGD(params, lr=0.1)


def state_np(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def engine_for(cfg, rank, model, data):
    from torchnative.nn import federated

    agg = {"fedavg": lambda: federated.FedAvg(), "fedprox": lambda: federated.FedProx(mu=cfg.get("mu", 0.1)),
           "fedadam": lambda: federated.FedAdam()}[cfg.get("aggregator", "fedavg")]()
    kwargs = dict(fraction=cfg.get("fraction", 1.0), min_clients=cfg.get("min_clients", 1), seed=cfg.get("seed", 0),
                  round_timeout=cfg.get("round_timeout"), join_timeout=cfg.get("join_timeout", 60),
                  client_timeout=cfg.get("client_timeout", 120), checkpoint_dir=cfg.get("checkpoint_dir"),
                  progress=False)
    if cfg.get("secagg"):
        kwargs["secure_aggregation"] = federated.SecureAggregation(**cfg["secagg"])
    if cfg.get("compression") == "float16":
        kwargs["compression"] = federated.Float16()
    return federated.Engine(model, rounds=cfg["rounds"], aggregator=agg, data=data, loss_fn=F.cross_entropy,
                            optimizer=sgd, local_epochs=cfg.get("local_epochs", 1), **kwargs)


def hooks(cfg, rank):
    """Scenario faults: a client that stalls forever (to be killed), a straggler, an early exit."""
    from torchnative.nn.federated import engine as eng

    orig = eng.Engine._local_train
    faults = {int(k): v for k, v in cfg.get("faults", {}).items()}
    if rank not in faults:
        return
    kind, at_round = faults[rank]

    def patched(self, weights, rnd):
        if rnd == at_round:
            if kind == "hang":  # the test kills this process once the marker exists
                open(os.path.join(cfg["outdir"], f"{rank}.training"), "w").close()
                time.sleep(3600)
            if kind == "slow":
                time.sleep(cfg["round_timeout"] + 3)  # replies after it was dropped
            if kind == "exit":
                os._exit(3)
        return orig(self, weights, rnd)

    eng.Engine._local_train = patched


def run_rank(cfg, rank):
    import torch.distributed as dist

    world = cfg["world"]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{cfg['port']}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=cfg.get("pg_timeout", 120)))
    model = make_model(cfg.get("hidden", {}).get(str(rank), 16))
    sizes = cfg.get("sizes", {})
    data = None if rank == 0 and not cfg.get("coordinator_data") else make_data(rank, sizes.get(str(rank), 24 + 8 * rank))
    if data is not None:  # first-step lazy initialisation (autograd, optim) outside the timed rounds
        warm = make_model()
        local_train_steps(warm, data)
    hooks(cfg, rank)
    out = {"rank": rank}
    try:
        history = engine_for(cfg, rank, model, data).participate()
        out["history"] = [h.__dict__ for h in history]
    except Exception as exc:  # the test checks every rank's error text
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()
    np.savez(os.path.join(cfg["outdir"], f"{rank}.npz"), **state_np(model))
    with open(os.path.join(cfg["outdir"], f"{rank}.json"), "w") as f:
        json.dump(out, f, default=str)
    # No destroy_process_group: with a dead peer it may wait on it; the process exit closes the pairs.
    os._exit(0)


def local_train_steps(model, data):
    opt = sgd(model.parameters())
    for x, y in data:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        break


def local_train(model, data, mu):
    """FedAvg's client step written out plainly (the engine's is tested against this)."""
    opt = sgd(model.parameters())
    anchors = [p.detach().clone() for p in model.parameters()]
    examples, loss_sum = 0, 0.0
    for epoch in range(CFG.get("local_epochs", 1)):
        for x, y in data:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            total = loss + (mu / 2) * sum(((p - a) ** 2).sum() for p, a in zip(model.parameters(), anchors)) if mu else loss
            total.backward()
            opt.step()
            if epoch == 0:
                examples += len(y)
                loss_sum += float(loss) * len(y)
    return examples, loss_sum / examples


def run_sequential(cfg):
    """The same rounds in one process: sample, train each client from the global weights, average."""
    global CFG
    CFG = cfg
    world, sizes = cfg["world"], cfg.get("sizes", {})
    clients = list(range(1, world))
    model = make_model()
    names = list(model.state_dict())
    glob = {k: v.clone() for k, v in model.state_dict().items()}
    gone = {int(c): r for c, r in cfg.get("expect_gone", {}).items()}  # client -> first round without it
    mu = cfg.get("mu", 0.1) if cfg.get("aggregator") == "fedprox" else 0.0
    frac_bits = cfg["secagg"].get("frac_bits", 24) if cfg.get("secagg") else None
    history = []
    for rnd in range(1, cfg["rounds"] + 1):
        alive = [c for c in clients if c not in gone or gone[c] >= rnd]
        k = min(max(int(len(alive) * cfg.get("fraction", 1.0)), cfg.get("min_clients", 1)), len(alive))
        sampled = sorted(random.Random(f"{cfg.get('seed', 0)}:{rnd}").sample(alive, k))
        part = [c for c in sampled if not (c in gone and gone[c] <= rnd)]
        results = []
        for c in part:
            local = make_model()
            local.load_state_dict(glob)
            n, loss = local_train(local, make_data(c, sizes.get(str(c), 24 + 8 * c)), mu)
            results.append((n, loss, {k: v.detach().clone() for k, v in local.state_dict().items()}))
        if frac_bits is None:
            total = sum(n for n, _, _ in results)
            new = {}
            for k in names:
                acc = torch.zeros(glob[k].shape, dtype=torch.float64)
                for n, _, st in results:
                    acc = acc + float(n) * st[k].double()
                new[k] = (acc / float(total)).to(glob[k].dtype)
        else:  # the plain sum of the fixed-point inputs secure aggregation must reproduce
            vecs = []
            for n, loss, st in results:
                flat = np.concatenate([st[k].double().numpy().reshape(-1) for k in names])
                q = np.rint(np.concatenate([n * flat, [n, n * loss]]) * 2.0 ** frac_bits).astype(np.int64)
                vecs.append(q)
            plain = np.sum(vecs, axis=0, dtype=np.int64).astype(np.float64) / 2.0 ** frac_bits
            mean = plain[:-2] / plain[-2]
            new, at = {}, 0
            for k in names:
                m = glob[k].numel()
                new[k] = torch.from_numpy(mean[at:at + m].reshape(glob[k].shape).copy()).to(glob[k].dtype)
                at += m
        glob = new
        history.append({"round": rnd, "sampled": sampled, "participants": part,
                        "examples": sum(n for n, _, _ in results)})
    model.load_state_dict(glob)
    np.savez(os.path.join(cfg["outdir"], "seq.npz"), **state_np(model))
    with open(os.path.join(cfg["outdir"], "seq.json"), "w") as f:
        json.dump({"history": history}, f)


if __name__ == "__main__":
    CFG = json.load(open(sys.argv[1]))
    if sys.argv[2] == "seq":
        run_sequential(CFG)
    else:
        run_rank(CFG, int(sys.argv[2]))

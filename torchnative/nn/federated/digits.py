"""The digits fleet: scikit-learn's 8x8 digits split non-IID over client processes.

`torchnative federated demo` runs it: one coordinator and N client processes on 127.0.0.1 (gloo
over loopback), each client holding a Dirichlet(alpha) share of the labels, FedAvg for some
rounds, test accuracy of the global model after each round next to centralised training on
the union of the clients' data for the same number of epochs. Options drop a share of the
clients mid-run (they die) and turn on secure aggregation; docs/federated.md shows the figures.

    python -m torchnative.nn.federated.digits --clients 5 --rounds 10        # the whole fleet
    python -m torchnative.nn.federated.digits --rank 3 --port P ...           # one process of it
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def split(clients: int, alpha: float, seed: int):
    """(parts, test): per-client index arrays of the training 80%, Dirichlet(alpha) over labels."""
    import numpy as np
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    parts = [[] for _ in range(clients)]
    for label in range(10):
        idx = train[y[train] == label]
        rng.shuffle(idx)
        props = rng.dirichlet(np.full(clients, alpha))
        bounds = (np.cumsum(props) * len(idx)).astype(int)[:-1]
        for c, chunk in enumerate(np.split(idx, bounds)):
            parts[c].extend(chunk.tolist())
    for c in range(clients):  # every client holds something (an empty loader is an error)
        if not parts[c]:
            donor = max(range(clients), key=lambda k: len(parts[k]))
            parts[c].append(parts[donor].pop())
    return x.astype("float32") / 16.0, y, [np.array(sorted(p)) for p in parts], test


def model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))


def loader(x, y, idx, batch=16):
    import torch

    ds = torch.utils.data.TensorDataset(torch.from_numpy(x[idx]), torch.from_numpy(y[idx]).long())
    return torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False)


def accuracy(net, x, y, idx) -> float:
    import torch

    with torch.no_grad():
        pred = net(torch.from_numpy(x[idx])).argmax(1).numpy()
    return float((pred == y[idx]).mean())


def centralised(args) -> list[float]:
    """The same model and optimiser on the union of the clients' data: accuracy after each of
    rounds * local_epochs epochs (one federated round's worth of local epochs per row)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    x, y, parts, test = split(args.clients, args.alpha, args.seed)
    union = np.concatenate(parts)
    union = union[np.random.default_rng(args.seed).permutation(len(union))]
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=args.lr)
    out = []
    for _ in range(args.rounds):
        for _ in range(args.local_epochs):
            for xb, yb in loader(x, y, union):
                opt.zero_grad()
                F.cross_entropy(net(xb), yb).backward()
                opt.step()
        out.append(accuracy(net, x, y, test))
    return out


def _codec(spec: str | None):
    from torchnative.nn import federated

    if not spec:
        return None
    if spec == "float16":
        return federated.Float16()
    if spec.startswith("topk:"):
        return federated.TopK(float(spec.split(":", 1)[1]))
    raise SystemExit(f"--compression: float16 or topk:RATIO, not {spec!r}")


def run_rank(args) -> int:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    from torchnative.nn import federated
    from torchnative.nn.federated import engine as _engine

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank,
                            world_size=args.clients + 1, timeout=datetime.timedelta(seconds=300))
    x, y, parts, test = split(args.clients, args.alpha, args.seed)
    data = None if args.rank == 0 else loader(x, y, parts[args.rank - 1])
    if args.rank in args.die:  # this client crashes in the middle of round args.die[rank]
        at, train = args.die[args.rank], _engine.Engine._local_train

        def crash(self, weights, rnd):
            if rnd == at:
                os._exit(9)
            return train(self, weights, rnd)

        _engine.Engine._local_train = crash
    engine = federated.Engine(
        model(), rounds=args.rounds, aggregator=federated.FedAvg(), data=data, loss_fn=F.cross_entropy,
        optimizer=lambda p: torch.optim.SGD(p, lr=args.lr), local_epochs=args.local_epochs,
        fraction=args.fraction, min_clients=1, seed=args.seed, round_timeout=args.round_timeout,
        secure_aggregation=federated.SecureAggregation() if args.secure else None,
        compression=_codec(args.compression),
        evaluate=(lambda net: {"accuracy": accuracy(net, x, y, test)}) if args.rank == 0 else None,
        progress=args.rank == 0 and not args.quiet)
    history = engine.participate()
    if args.rank == 0 and args.out:
        with open(args.out, "w") as f:
            json.dump([h.__dict__ for h in history], f, default=str)
    sys.stdout.flush()
    os._exit(0)


def fleet(args) -> int:
    """Start the coordinator and the clients, wait for them (bounded), always stop them."""
    import random

    from rich.console import Console

    console = Console(stderr=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rng = random.Random(args.seed)
    dying = rng.sample(range(1, args.clients + 1), round(args.dropout * args.clients))
    die = {c: rng.randint(2, max(2, args.rounds - 1)) for c in dying}
    out = args.out or os.path.join(tempfile.mkdtemp(prefix="torchnative-federated-"), "history.json")
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    common = ["--clients", str(args.clients), "--rounds", str(args.rounds), "--alpha", str(args.alpha),
              "--seed", str(args.seed), "--lr", str(args.lr), "--local-epochs", str(args.local_epochs),
              "--fraction", str(args.fraction), "--round-timeout", str(args.round_timeout), "--port", str(port),
              "--die", json.dumps(die), "--out", out] + (["--secure"] if args.secure else []) + \
             (["--compression", args.compression] if args.compression else []) + \
             (["--quiet"] if args.quiet else [])
    console.print(f"digits: {args.clients} client processes, Dirichlet({args.alpha}) label split, "
                  f"{args.rounds} rounds of FedAvg" + (", secure aggregation" if args.secure else "")
                  + (f"; clients {sorted(die)} will crash mid-run" if die else ""))
    procs = [subprocess.Popen([sys.executable, "-m", "torchnative.nn.federated.digits", "--rank", str(r), *common],
                              env=env, stdout=None if r == 0 else subprocess.DEVNULL,
                              stderr=None if r == 0 else subprocess.DEVNULL) for r in range(args.clients + 1)]
    end = time.monotonic() + args.timeout
    try:
        while procs[0].poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        code = procs[0].poll()
    finally:
        for p in procs[1:]:
            try:
                p.wait(timeout=max(1.0, min(15.0, end - time.monotonic())))
            except subprocess.TimeoutExpired:
                pass
        for p in procs:
            if p.poll() is None:
                p.kill()
    if code != 0 or not os.path.exists(out):
        console.print(f"[red]the coordinator did not finish (exit {code})[/]")
        return 1
    history = json.load(open(out))
    central = centralised(args)
    from rich.table import Table

    table = Table(title="test accuracy of the global model (digits, 20% held out)")
    for col in ("round", "clients", "federated", "centralised", "bytes"):
        table.add_column(col, justify="right")
    for h, c in zip(history, central):
        table.add_row(str(h["round"]), str(len(h["participants"])), f"{h['metrics']['accuracy']:.3f}", f"{c:.3f}",
                      str(h["bytes"]))
    console.print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"federated": history, "centralised": central, "died": die, "args": vars(args)}, f,
                      indent=1, default=str)
    return 0


def parser(prog: str = "python -m torchnative.nn.federated.digits") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--clients", type=int, default=5, help="client processes (default 5)")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--alpha", type=float, default=0.5, help="Dirichlet concentration of the label split (0.5)")
    p.add_argument("--local-epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--fraction", type=float, default=1.0, help="share of clients sampled per round")
    p.add_argument("--dropout", type=float, default=0.0, help="share of clients that crash mid-run (e.g. 0.3)")
    p.add_argument("--secure", action="store_true", help="secure aggregation (SecAgg+ style)")
    p.add_argument("--compression", help="update compression: float16 or topk:RATIO (e.g. topk:0.1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--round-timeout", type=float, default=60.0)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before the whole fleet is stopped")
    p.add_argument("--json", help="write the per-round figures (federated and centralised) here")
    p.add_argument("--quiet", action="store_true", help="no per-round display")
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--die", default="{}", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    args.die = {int(k): v for k, v in json.loads(args.die).items()}
    return run_rank(args) if args.rank is not None else fleet(args)


if __name__ == "__main__":
    sys.exit(main())

"""The model, a client's data and its local training: plain torch, so it runs on torchnative's
runtime and on upstream torch alike (the same split as `torchnative federated demo`)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from torchnative.nn.federated import digits


def model() -> torch.nn.Module:
    return digits.model()


def get_weights(net) -> list[np.ndarray]:
    return [v.detach().cpu().numpy().copy() for v in net.state_dict().values()]


def set_weights(net, weights) -> None:
    keys = list(net.state_dict())
    net.load_state_dict({k: torch.from_numpy(np.array(w, copy=True)) for k, w in zip(keys, weights)})


def partition(pid: int, parts: int, seed: int = 0):
    x, y, split, test = digits.split(parts, 0.5, seed)
    return digits.loader(x, y, split[pid]), (x, y, test)


def train(net, data, epochs: int, lr: float) -> tuple[int, float]:
    """FedAvg's client step: a fresh SGD, `epochs` passes over the loader in order."""
    torch.set_num_threads(1)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    n, total = 0, 0.0
    for epoch in range(epochs):
        for xb, yb in data:
            opt.zero_grad()
            loss = F.cross_entropy(net(xb), yb)
            loss.backward()
            opt.step()
            if epoch == 0:
                n += len(yb)
                total += float(loss) * len(yb)
    return n, total / max(n, 1)


def runtime() -> str:
    """Which torch._C this process trains on: torchnative's or upstream's."""
    import torch._C as C

    return "torchnative" if hasattr(C, "_TnPlan") else f"upstream-{torch.__version__}"

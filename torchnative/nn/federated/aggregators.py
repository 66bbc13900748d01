"""Server-side aggregation: FedAvg, FedProx and the adaptive server optimisers of Reddi et al.

Every aggregator sees the round the same way: the example-weighted mean of the clients' weights
(computed by `weighted_mean`, or by secure aggregation without any single client's weights
being seen) and the current global weights, both as flat float64 vectors (state.flatten). It
returns the next global weights. That split is what lets secure aggregation and differential
privacy sit under any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .state import Entry, FederatedError, flatten, floating_mask, spec_of, unflatten, describe_mismatch


@dataclass
class ClientUpdate:
    """One client's result for a round: its weights after local training and how many examples
    they were trained on (the FedAvg weight)."""

    rank: int
    num_examples: int
    state: dict
    loss: float = float("nan")
    metrics: dict = field(default_factory=dict)


def weighted_mean(weighted: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """sum_i w_i x_i / sum_i w_i in float64, summed in the order given."""
    if not weighted:
        raise FederatedError("aggregation got no updates: nothing to average (no client finished the round)")
    n = len(weighted[0][1])
    total = np.zeros(n, dtype=np.float64)
    weight = 0.0
    for w, x in weighted:
        if len(x) != n:
            raise FederatedError(f"aggregation got updates of {n} and {len(x)} values: incompatible state dicts")
        if not w > 0:
            raise FederatedError(f"aggregation got an update with weight {w}: weights must be positive")
        total += float(w) * x
        weight += float(w)
    return total / weight


class Aggregator:
    """Base class. Subclasses override `apply`; `mu` > 0 makes clients add FedProx's proximal term."""

    name = "aggregator"
    mu = 0.0

    def apply(self, global_vec: np.ndarray, mean_vec: np.ndarray, spec: list[Entry]) -> np.ndarray:
        raise NotImplementedError

    def aggregate(self, global_state: dict, updates: list[ClientUpdate]) -> dict:
        """The next global state dict from the current one and the clients' updates."""
        if not updates:
            raise FederatedError(f"{type(self).__name__}.aggregate got no updates: nothing to average")
        spec = spec_of(global_state)
        for u in updates:
            problem = describe_mismatch(spec_of(u.state), spec, who="the global model")
            if problem:
                raise FederatedError(f"update from rank {u.rank}: {problem}")
            if u.num_examples <= 0:
                raise FederatedError(f"update from rank {u.rank} reports {u.num_examples} examples")
        mean = weighted_mean([(u.num_examples, flatten(u.state, spec)) for u in updates])
        return unflatten(self.apply(flatten(global_state, spec), mean, spec), spec)

    def config(self) -> dict:
        """What clients need to know (sent to them at the handshake)."""
        return {"mu": float(self.mu)}

    def state_dict(self) -> dict:
        """Arrays carried across rounds (checkpointed by the engine)."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class FedAvg(Aggregator):
    """McMahan et al. 2017: the new global weights are the example-weighted mean of the clients'."""

    name = "FedAvg"

    def apply(self, global_vec, mean_vec, spec):
        return mean_vec


class FedProx(FedAvg):
    """Li et al. 2020: FedAvg aggregation; each client minimises loss + mu/2 * ||w - w_global||^2."""

    name = "FedProx"

    def __init__(self, mu: float = 0.01):
        if mu < 0:
            raise ValueError(f"FedProx mu must be >= 0, got {mu}")
        self.mu = float(mu)


class FedOpt(Aggregator):
    """Reddi et al. 2021, "Adaptive Federated Optimization", Algorithm 2.

    The pseudo-gradient is delta = mean of client weights - global weights;
    m = beta1 m + (1 - beta1) delta; v is updated by the subclass (Adagrad, Adam or Yogi rule);
    x = x + eta * m / (sqrt(v) + tau), with m_-1 = 0 and v_-1 = tau^2 as in the paper. Only
    floating-point entries are optimised; integer buffers take the mean directly.

    Defaults follow Flower's strategies of the same names. Two differences from Flower, both
    because the paper says otherwise: Flower starts v at 0 (the paper at >= tau^2) and its FedAdam
    multiplies eta by Adam's bias correction sqrt(1 - beta2^t) / (1 - beta1^t).
    `eta_l` is the clients' learning rate: used when the engine is given no optimizer factory.
    """

    name = "FedOpt"

    def __init__(self, eta: float, eta_l: float, beta1: float, beta2: float, tau: float):
        if eta <= 0 or eta_l <= 0 or tau <= 0:
            raise ValueError(f"{type(self).__name__}: eta, eta_l and tau must be > 0")
        if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
            raise ValueError(f"{type(self).__name__}: beta1 and beta2 must be in [0, 1)")
        self.eta, self.eta_l, self.beta1, self.beta2, self.tau = eta, eta_l, beta1, beta2, tau
        self.m = None
        self.v = None

    def _second_moment(self, v: np.ndarray, d2: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def apply(self, global_vec, mean_vec, spec):
        fl = floating_mask(spec)
        delta = (mean_vec - global_vec)[fl]
        if self.m is None or len(self.m) != len(delta):
            self.m = np.zeros_like(delta)
            self.v = np.full_like(delta, self.tau ** 2)
        self.m = self.beta1 * self.m + (1 - self.beta1) * delta
        self.v = self._second_moment(self.v, delta * delta)
        out = mean_vec.copy()
        out[fl] = global_vec[fl] + self.eta * self.m / (np.sqrt(self.v) + self.tau)
        return out

    def state_dict(self):
        return {} if self.m is None else {"m": self.m, "v": self.v}

    def load_state_dict(self, state):
        if "m" in state:
            self.m, self.v = np.asarray(state["m"], np.float64), np.asarray(state["v"], np.float64)


class FedAdagrad(FedOpt):
    """v = v + delta^2 (Flower's defaults: eta 0.1, eta_l 0.1, beta1 0, tau 1e-3)."""

    name = "FedAdagrad"

    def __init__(self, eta=1e-1, eta_l=1e-1, beta1=0.0, tau=1e-3):
        super().__init__(eta, eta_l, beta1, 0.0, tau)

    def _second_moment(self, v, d2):
        return v + d2


class FedAdam(FedOpt):
    """v = beta2 v + (1 - beta2) delta^2 (Flower's defaults: eta 0.1, eta_l 0.1, 0.9, 0.99, tau 1e-3)."""

    name = "FedAdam"

    def __init__(self, eta=1e-1, eta_l=1e-1, beta1=0.9, beta2=0.99, tau=1e-3):
        super().__init__(eta, eta_l, beta1, beta2, tau)

    def _second_moment(self, v, d2):
        return self.beta2 * v + (1 - self.beta2) * d2


class FedYogi(FedOpt):
    """v = v - (1 - beta2) delta^2 sign(v - delta^2) (Flower's defaults: eta 1e-2, eta_l 0.0316,
    0.9, 0.99, tau 1e-3)."""

    name = "FedYogi"

    def __init__(self, eta=1e-2, eta_l=0.0316, beta1=0.9, beta2=0.99, tau=1e-3):
        super().__init__(eta, eta_l, beta1, beta2, tau)

    def _second_moment(self, v, d2):
        return v - (1 - self.beta2) * d2 * np.sign(v - d2)

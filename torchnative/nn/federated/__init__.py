"""Federated learning on torch.distributed: `federated.Engine(...).participate()` on every rank.

    from torchnative.nn import federated
    engine = federated.Engine(model, rounds=10, aggregator=federated.FedAvg(), data=loader,
                              loss_fn=F.cross_entropy,
                              optimizer=lambda params: torch.optim.SGD(params, lr=0.1),
                              local_epochs=1)
    history = engine.participate()

Rank 0 coordinates (data=None); every other rank is a client. docs/federated.md says how a fleet
connects and when to use Flower instead. Only torch.distributed's public API is used, so this
runs on upstream torch with gloo as on torchnative's own process group.
"""

from .aggregators import (Aggregator, ClientUpdate, FedAdagrad, FedAdam, FedAvg, FedOpt, FedProx, FedYogi,
                          weighted_mean)
from .compression import Float16, TopK
from .engine import Engine, RoundRecord, SecureAggregation
from .privacy import DifferentialPrivacy
from .state import FederatedError

__all__ = ["Aggregator", "ClientUpdate", "DifferentialPrivacy", "Engine", "FedAdagrad", "FedAdam", "FedAvg",
           "FedOpt", "FedProx", "FedYogi", "FederatedError", "Float16", "RoundRecord", "SecureAggregation", "TopK",
           "weighted_mean"]

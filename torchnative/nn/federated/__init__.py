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

# Names are imported on first use (PEP 562), so that `torchnative federated demo`'s argument
# parser (digits.add_arguments) and `torchnative backends list` do not import torch.
_EXPORTS = {
    "Aggregator": "aggregators", "ClientUpdate": "aggregators", "FedAdagrad": "aggregators",
    "FedAdam": "aggregators", "FedAvg": "aggregators", "FedOpt": "aggregators", "FedProx": "aggregators",
    "FedYogi": "aggregators", "weighted_mean": "aggregators",
    "Float16": "compression", "TopK": "compression",
    "Engine": "engine", "RoundRecord": "engine", "SecureAggregation": "engine",
    "DifferentialPrivacy": "privacy",
    "FederatedError": "state",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))

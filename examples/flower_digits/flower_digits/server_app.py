"""Flower ServerApp: Flower's own FedAvg, optionally under its SecAgg+ workflow or its
server-side fixed-clipping DP wrapper; writes the final weights and per-round metrics to `out`."""

from __future__ import annotations

import json

import numpy as np
from flwr.common import Context, ndarrays_to_parameters, parameters_to_ndarrays
import flwr.compat.common.recorddict_compat as compat
from flwr.server import Grid, LegacyContext, ServerApp, ServerConfig
from flwr.server.strategy import DifferentialPrivacyServerSideFixedClipping, FedAvg
from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow

from . import task

app = ServerApp()


def _fit_metrics(results):
    """Example-weighted training loss, and which runtimes the clients trained on."""
    n = sum(k for k, _ in results)
    return {"train_loss": sum(k * m["train_loss"] for k, m in results) / max(n, 1),
            "runtime": ",".join(sorted({str(m["runtime"]) for _, m in results}))}


@app.main()
def main(grid: Grid, context: Context) -> None:
    cfg = context.run_config
    clients = int(cfg["min-clients"])
    strategy = FedAvg(fraction_fit=1.0, fraction_evaluate=0.0, min_fit_clients=clients,
                      min_available_clients=clients, min_evaluate_clients=0,
                      initial_parameters=ndarrays_to_parameters(task.get_weights(task.model())),
                      on_fit_config_fn=lambda rnd: {"local-epochs": cfg["local-epochs"], "lr": cfg["lr"]},
                      fit_metrics_aggregation_fn=_fit_metrics)
    if cfg["mode"] == "dp":
        strategy = DifferentialPrivacyServerSideFixedClipping(
            strategy, noise_multiplier=float(cfg["noise-multiplier"]), clipping_norm=float(cfg["clipping-norm"]),
            num_sampled_clients=clients)
    legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=int(cfg["num-server-rounds"])),
                           strategy=strategy)
    fit = SecAggPlusWorkflow(num_shares=clients, reconstruction_threshold=max(2, clients - 1)) \
        if cfg["mode"] == "secagg" else None
    DefaultWorkflow(fit_workflow=fit)(grid, legacy)
    if cfg["out"]:
        record = legacy.state.array_records["parameters"]  # where DefaultWorkflow keeps the global model
        weights = parameters_to_ndarrays(compat.arrayrecord_to_parameters(record, keep_input=True))
        _, x_y_test = task.partition(0, 2)
        net = task.model()
        task.set_weights(net, weights)
        from torchnative.nn.federated import digits

        acc = digits.accuracy(net, *x_y_test)
        np.savez(cfg["out"], *weights)
        hist = legacy.history
        with open(cfg["out"] + ".json", "w") as f:
            json.dump({"accuracy": acc, "metrics": {k: v for k, v in hist.metrics_distributed_fit.items()},
                       "runtime": task.runtime()}, f, default=str)

"""Flower ClientApp: local training on this device's torch (torchnative where it is installed)."""

from __future__ import annotations

from flwr.client import ClientApp, NumPyClient
from flwr.client.mod import secaggplus_mod
from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key

from . import task


class DigitsClient(NumPyClient):
    def __init__(self, pid: int, parts: int):
        self.data, _ = task.partition(pid, parts)
        self.net = task.model()

    def fit(self, parameters, config):
        task.set_weights(self.net, parameters)
        n, loss = task.train(self.net, self.data, int(config["local-epochs"]), float(config["lr"]))
        return task.get_weights(self.net), n, {"train_loss": loss, "runtime": task.runtime()}


def client_fn(context):
    cfg = context.node_config
    return DigitsClient(int(cfg["partition-id"]), int(cfg["num-partitions"])).to_client()


def secagg_when_asked(msg, ctxt, call_next):
    """Flower's secaggplus_mod for the SecAgg+ stages; plain training messages pass straight on."""
    records = msg.content.config_records
    if RECORD_KEY_CONFIGS in records and Key.STAGE in records[RECORD_KEY_CONFIGS]:
        return secaggplus_mod(msg, ctxt, call_next)
    return call_next(msg, ctxt)


app = ClientApp(client_fn=client_fn, mods=[secagg_when_asked])

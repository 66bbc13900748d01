"""The federated engine: rounds of local training and aggregation over torch.distributed.

Every rank of an initialised process group builds the same Engine and calls participate().
Group rank 0 coordinates (holds the global model, samples, aggregates, checkpoints); every
other rank is a client that trains on its own data. Messages go point to point (transport.py)
so a dead or slow client costs only itself.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import struct
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.distributed as dist

from . import compression as _compression
from .aggregators import Aggregator, weighted_mean
from .privacy import DifferentialPrivacy
from .state import (FederatedError, decode, describe_mismatch, encode, flatten, floating_mask, spec_from_json,
                    spec_of, spec_to_json, unflatten, wire_size)
from .transport import Deadline, Link, PeerLost, pack, unpack

OFFER, TRAIN, FINISH, ABORT, SA_KEYS, SA_SHARES, SA_MASKED, SA_UNMASK = range(1, 9)
META = 64  # bytes of status/num_examples/loss in front of every training reply
HANDSHAKE_REPLY = 4096
ACK = 8  # a client's acknowledgement of FINISH or ABORT
OK, FAILED = 0, 1


@dataclass
class RoundRecord:
    round: int
    sampled: list
    participants: list
    dropped: dict  # rank -> reason
    examples: int
    loss: float
    bytes: int
    seconds: float
    metrics: dict = field(default_factory=dict)
    epsilon: float | None = None


@dataclass
class SecureAggregation:
    """Turn on secure aggregation. threshold: shares needed to rebuild a secret (default 2/3 of a
    neighbourhood); num_shares: neighbours per client (None: all sampled clients, as SecAgg;
    a number: SecAgg+'s ring neighbourhoods); frac_bits: fixed-point precision."""

    threshold: int | None = None
    num_shares: int | None = None
    frac_bits: int = 24


class Engine:
    """Federated training of `model` for `rounds` rounds.

    model       the same architecture on every rank; rank 0's weights are the starting point
    aggregator  FedAvg(), FedProx(mu), FedAdam(), FedYogi(), FedAdagrad() (aggregators.py)
    data        a client's iterable of (inputs, targets) batches; None on the coordinator
    loss_fn     loss_fn(model(inputs), targets)
    optimizer   factory: params -> torch.optim.Optimizer, called afresh every round
                (default: SGD at the aggregator's eta_l, or 0.1)
    fraction, min_clients   clients sampled per round: max(int(fraction * alive), min_clients);
                a round with fewer than min_clients replies stops the run with FederatedError
    seed        client sampling (and DP noise) is a function of (seed, round)
    round_timeout   seconds a sampled client has to reply (straggler timeout); None: no limit
    pair_timeout    the timeout of each coordinator-client group (None: torch.distributed's default);
                    a client waits at most this long for its next command
    join_timeout    seconds for every client to check in at the start
    checkpoint_dir  the coordinator saves the global model after every round and resumes from it
    secure_aggregation  SecureAggregation(...) or True
    privacy     DifferentialPrivacy(noise_multiplier, clipping_norm, delta)
    compression Float16() or TopK(ratio) (compression.py)
    evaluate    on the coordinator, evaluate(model) -> dict of metrics after each round
    progress    a rich display per round on the coordinator (default: when stderr is a terminal)
    """

    def __init__(self, model: torch.nn.Module, rounds: int, aggregator: Aggregator, data=None, loss_fn=None,
                 optimizer=None, local_epochs: int = 1, *, fraction: float = 1.0, min_clients: int = 1,
                 seed: int = 0, round_timeout: float | None = None, join_timeout: float | None = 120.0,
                 client_timeout: float | None = None, checkpoint_dir: str | os.PathLike | None = None,
                 resume: bool = True, secure_aggregation: SecureAggregation | bool | None = None,
                 privacy: DifferentialPrivacy | None = None, compression=None, evaluate=None,
                 progress: bool | None = None, pair_timeout: float | None = None):
        if rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        if not 0 < fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], got {fraction}")
        if min_clients < 1:
            raise ValueError(f"min_clients must be >= 1, got {min_clients}")
        if local_epochs < 1:
            raise ValueError(f"local_epochs must be >= 1, got {local_epochs}")
        if secure_aggregation is True:
            secure_aggregation = SecureAggregation()
        if secure_aggregation and compression is not None:
            raise ValueError("secure aggregation needs dense updates: it cannot be combined with compression")
        self.model, self.rounds, self.aggregator = model, rounds, aggregator
        self.data, self.loss_fn, self.local_epochs = data, loss_fn, local_epochs
        self.optimizer = optimizer
        self.fraction, self.min_clients, self.seed = fraction, min_clients, seed
        self.round_timeout, self.join_timeout, self.client_timeout = round_timeout, join_timeout, client_timeout
        self.checkpoint_dir = None if checkpoint_dir is None else os.fspath(checkpoint_dir)
        self.resume = resume
        self.secagg = secure_aggregation or None
        self.privacy = privacy
        self.compression = compression
        self.evaluate = evaluate
        self.progress = progress
        self.pair_timeout = pair_timeout
        self.history: list[RoundRecord] = []

    # --- common -----------------------------------------------------------------------------
    def participate(self) -> list[RoundRecord]:
        """Run the whole federation from this rank; returns the per-round history (the same on
        every rank that reaches the end). Afterwards self.model holds the final global weights."""
        if not dist.is_available() or not dist.is_initialized():
            raise FederatedError("federated.Engine.participate() needs an initialised process group "
                                 "(torch.distributed.init_process_group)")
        rank = dist.get_rank()
        world = dist.get_world_size()
        if world < 2:
            raise FederatedError(f"a federation needs a coordinator and at least one client; the group has {world} rank")
        self._coordinator = coord = 0
        clients = list(range(1, world))
        # One two-rank group per client (transport.py says why). new_group is called by every
        # rank for every pair in the same order, as torch.distributed requires.
        kw = {} if self.pair_timeout is None else {"timeout": datetime.timedelta(seconds=self.pair_timeout)}
        pairs = {c: dist.new_group(sorted([coord, c]), **kw) for c in clients}
        groups = pairs if rank == 0 else {coord: pairs[dist.get_rank()]}
        self._link = Link(groups)
        if rank == 0:
            return self._coordinate(clients)
        return self._serve()

    def _config(self) -> dict:
        agg = self.aggregator
        return {"local_epochs": self.local_epochs, "mu": float(getattr(agg, "mu", 0.0)),
                "eta_l": getattr(agg, "eta_l", None),
                "compression": None if self.compression is None else self.compression.config(),
                "privacy": None if self.privacy is None else self.privacy.config(),
                "secagg": None if self.secagg is None else asdict(self.secagg)}

    # --- coordinator ------------------------------------------------------------------------
    def _coordinate(self, clients: list[int]) -> list[RoundRecord]:
        self._alive = []
        self._dead = set()
        try:
            if self.data is not None:
                raise FederatedError("rank 0 coordinates and trains on nothing: pass data=None there")
            if not isinstance(self.aggregator, Aggregator):
                raise FederatedError(f"aggregator must be a federated aggregator (FedAvg(), ...), got "
                                     f"{type(self.aggregator).__name__}")
            state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            self._spec = spec_of(state)
            start = self._load_checkpoint(state)
            self._global_vec = flatten(state, self._spec)
            self._global_state = state
            self._handshake(clients)
            show = self._display()
            for rnd in range(start, self.rounds + 1):
                rec = self._round(rnd)
                self.history.append(rec)
                self._save_checkpoint(rnd)
                if show:
                    show(rec)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, FederatedError) else f"{type(exc).__name__}: {exc}"
            self._broadcast_end(ABORT, reason.encode())
            if isinstance(exc, FederatedError):
                raise
            raise FederatedError(f"the coordinator failed: {reason}") from exc
        self.model.load_state_dict(self._global_state)
        self._broadcast_end(FINISH, pack(json.dumps([asdict(r) for r in self.history]).encode(),
                                         encode(self._global_state, self._spec)))
        return self.history

    def _handshake(self, clients: list[int]) -> None:
        offer = pack(json.dumps({"spec": spec_to_json(self._spec), "config": self._config()}).encode())
        deadline = Deadline(self.join_timeout)
        pending = {}
        for c in clients:
            try:
                works = self._link.post(c, OFFER, 0, offer, HANDSHAKE_REPLY)
                pending[c] = (works, self._link.expect(c, HANDSHAKE_REPLY))
            except Exception as exc:  # noqa: BLE001 -- a peer that is already gone
                self._dead.add(c)
                self._joined_error = f"rank {c}: {exc}"
        problems = []
        replies, lost = self._link.gather(pending, deadline.left)
        for c, exc in lost.items():
            self._dead.add(c)
            problems.append(f"rank {c} did not check in ({exc.reason})")
        for c in sorted(replies):
            reply = json.loads(unpack(replies[c], 1)[0])
            if reply.get("error"):
                self._dead.add(c)  # it raised already
                problems.append(f"rank {c}: {reply['error']}")
            else:
                self._alive.append(c)
                self._examples_at_join = getattr(self, "_examples_at_join", {})
                self._examples_at_join[c] = reply["num_examples"]
        if problems:
            raise FederatedError("the federation cannot start: " + "; ".join(problems))
        self._clients = list(clients)

    def _sample(self, rnd: int) -> list[int]:
        alive = sorted(self._alive)
        if len(alive) < self.min_clients:
            raise FederatedError(f"round {rnd}: {len(alive)} client(s) left, min_clients is {self.min_clients}")
        k = min(max(int(len(alive) * self.fraction), self.min_clients), len(alive))
        return sorted(random.Random(f"{self.seed}:{rnd}").sample(alive, k))

    def _drop(self, rec: RoundRecord, c: int, reason: str, dead: bool) -> None:
        rec.dropped[c] = reason
        if c in self._alive:
            self._alive.remove(c)
        if dead:
            self._dead.add(c)

    def _lost(self, rec: RoundRecord, exc: PeerLost) -> None:
        self._drop(rec, exc.rank, exc.reason, dead=not exc.reason.startswith("timed out"))

    def _exchange(self, rec: RoundRecord, targets: list[int], command: int, payloads: dict, reply_size: int,
                  deadline: Deadline) -> dict[int, bytes]:
        """Send each target its command, collect the replies by the deadline; drops the rest."""
        pending = {}
        for c in targets:
            try:
                works = self._link.post(c, command, rec.round, payloads[c], reply_size)
                pending[c] = (works, self._link.expect(c, reply_size))
            except Exception as exc:  # noqa: BLE001
                self._drop(rec, c, f"failed sending to it ({exc})", dead=True)
        replies, lost = self._link.gather(pending, deadline.left)
        for exc in lost.values():
            self._lost(rec, exc)
        return replies

    def _round(self, rnd: int) -> RoundRecord:
        t0 = time.perf_counter()
        moved0 = self._link.sent + self._link.received
        sampled = self._sample(rnd)
        rec = RoundRecord(rnd, sampled, [], {}, 0, float("nan"), 0, 0.0)
        deadline = Deadline(self.round_timeout)
        weights_bytes = encode(self._global_state, self._spec)
        n = len(self._global_vec)
        if self.secagg is None:
            if self.compression is not None:
                body = self.compression.nbytes(n)
            else:
                body = 8 * n if self.privacy is not None else wire_size(self._spec)
            replies = self._exchange(rec, sampled, TRAIN, {c: weights_bytes for c in sampled}, META + body, deadline)
            updates = []
            for c, examples, loss, payload in self._succeeded(rec, replies):
                if self.compression is not None:
                    vec = self._global_vec + self.compression.decode(payload, n)
                elif self.privacy is not None:
                    vec = np.frombuffer(payload[:8 * n], dtype=np.float64).copy()
                else:
                    vec = flatten(decode(payload[:wire_size(self._spec)], self._spec), self._spec)
                updates.append((c, examples, loss, vec))
            self._require(rec, [u[0] for u in updates])
            weight = (lambda ex: 1.0) if self.privacy is not None else (lambda ex: float(ex))
            mean = weighted_mean([(weight(ex), vec) for _, ex, _, vec in updates])
            rec.participants = [u[0] for u in updates]
            rec.examples = int(sum(u[1] for u in updates))
            rec.loss = float(sum(u[1] * u[2] for u in updates) / max(rec.examples, 1))
        else:
            mean, examples, loss_sum = self._secure_round(rec, deadline, weights_bytes)
            rec.examples = int(round(examples))
            rec.loss = float(loss_sum / max(examples, 1e-12))
        if self.privacy is not None:
            mean = self.privacy.noise(mean, floating_mask(self._spec), len(sampled), rnd)
            rec.epsilon = self.privacy.step(len(sampled) / max(len(self._clients), 1))
        self._global_vec = self.aggregator.apply(self._global_vec, mean, self._spec)
        self._global_state = unflatten(self._global_vec, self._spec)
        # cast round trip: the global vector is exactly what the state holds
        self._global_vec = flatten(self._global_state, self._spec)
        if self.evaluate is not None:
            self.model.load_state_dict(self._global_state)
            rec.metrics = dict(self.evaluate(self.model))
        rec.bytes = self._link.sent + self._link.received - moved0
        rec.seconds = time.perf_counter() - t0
        return rec

    def _require(self, rec: RoundRecord, participants: list[int]) -> None:
        if len(participants) < self.min_clients:
            why = "; ".join(f"rank {c}: {r}" for c, r in sorted(rec.dropped.items())) or "no client was sampled"
            raise FederatedError(f"round {rec.round}: {len(participants)} client(s) finished, min_clients is "
                                 f"{self.min_clients} ({why})")

    @staticmethod
    def _parse_meta(data: bytes):
        status, examples, loss = struct.unpack_from("<qqd", data, 0)
        return status, examples, loss, data[META:]

    def _succeeded(self, rec: RoundRecord, replies: dict):
        """(client, examples, loss, payload) of each reply in rank order; a client that reported
        a failure is dropped for good, with its message (the payload) as the reason."""
        for c in sorted(replies):
            status, examples, loss, payload = self._parse_meta(replies[c])
            if status != OK:
                self._drop(rec, c, f"failed: {payload[:500].rstrip(bytes(1)).decode(errors='replace')}", dead=True)
                continue
            yield c, examples, loss, payload

    def _secure_round(self, rec: RoundRecord, deadline: Deadline, weights_bytes: bytes):
        from .secagg import SecAggServer, dequantize

        cfg = self.secagg
        n = len(self._global_vec) + 2  # weighted weights, then the weight, then weight * loss
        server = SecAggServer(rec.round, rec.sampled, cfg.threshold, cfg.num_shares)
        cap = 1024 + 512 * len(rec.sampled)
        # 1: keys
        start = json.dumps({"sampled": rec.sampled}).encode()
        for c, data in self._exchange(rec, rec.sampled, SA_KEYS, {c: start for c in rec.sampled}, cap,
                                      deadline).items():
            server.add_keys(c, json.loads(unpack(data, 1)[0]))
        # 2: encrypted shares, routed through here
        got = sorted(server.pks)
        replies = self._exchange(rec, got, SA_SHARES,
                                 {c: json.dumps(server.keys_for(c)).encode() for c in got}, cap, deadline)
        for c in sorted(replies):
            msg = json.loads(unpack(replies[c], 1)[0])
            if msg.get("error"):
                self._drop(rec, c, msg["error"], dead=True)
                continue
            server.add_shares(c, msg["shares"])
        # 3: masked inputs (the clients train here)
        shared = sorted(server.shared)
        payloads = {c: pack(json.dumps({"shared": shared, "shares": server.shares_for(c)}).encode(), weights_bytes)
                    for c in shared}
        replies = self._exchange(rec, shared, SA_MASKED, payloads, META + 8 * n, deadline)
        total = np.zeros(n, dtype=np.uint64)
        survivors = []
        for c, _, _, payload in self._succeeded(rec, replies):
            total = total + np.frombuffer(payload[:8 * n], dtype=np.uint64)
            survivors.append(c)
        self._require(rec, survivors)
        # 4: unmasking
        ask = json.dumps({"survivors": survivors, "dropped": [c for c in shared if c not in survivors]}).encode()
        replies = self._exchange(rec, survivors, SA_UNMASK, {c: ask for c in survivors}, cap, deadline)
        revealed = {c: json.loads(unpack(d, 1)[0]) for c, d in replies.items()}
        try:
            plain = server.unmask(total, survivors, revealed)
        except RuntimeError as exc:
            raise FederatedError(f"round {rec.round}: {exc}") from None
        rec.participants = survivors
        vec = dequantize(plain, cfg.frac_bits)
        weight = vec[-2]
        if not weight > 0:
            raise FederatedError(f"round {rec.round}: secure aggregation produced total weight {weight}")
        return vec[:-2] / weight, weight, vec[-1]

    def _broadcast_end(self, command: int, payload: bytes) -> None:
        """FINISH or ABORT to every client not known dead, and wait (bounded) for each to
        acknowledge: backends differ in when a send completes (gloo waits for the receiver,
        others once the bytes are on the socket), and the coordinator must not exit before a
        dropped straggler that is still alive has its final weights."""
        link = getattr(self, "_link", None)
        if link is None:
            return
        targets = [c for c in getattr(self, "_clients", self._all_clients()) if c not in getattr(self, "_dead", set())]
        pending = {}
        for c in targets:
            try:
                pending[c] = (link.post(c, command, 0, payload, ACK), link.expect(c, ACK))
            except Exception:  # noqa: BLE001 -- it is gone; nothing to tell
                pass
        grace = Deadline(max(self.round_timeout or 0.0, 10.0))
        link.gather(pending, grace.left)

    def _all_clients(self) -> list[int]:
        return list(range(1, dist.get_world_size()))

    # --- checkpoints ------------------------------------------------------------------------
    def _checkpoint_path(self) -> str | None:
        return None if self.checkpoint_dir is None else os.path.join(self.checkpoint_dir, "federated.safetensors")

    def _save_checkpoint(self, rnd: int) -> None:
        path = self._checkpoint_path()
        if path is None:
            return
        from safetensors.torch import save_file

        os.makedirs(self.checkpoint_dir, exist_ok=True)
        tensors = {f"model/{k}": v.contiguous() for k, v in self._global_state.items()}
        for k, v in self.aggregator.state_dict().items():
            tensors[f"aggregator/{k}"] = torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64))
        meta = {"round": str(rnd), "rounds": str(self.rounds), "aggregator": type(self.aggregator).__name__,
                "history": json.dumps([asdict(r) for r in self.history]),
                "accountant": json.dumps(self.privacy.accountant_history() if self.privacy else [])}
        tmp = path + ".tmp"
        save_file(tensors, tmp, metadata=meta)
        os.replace(tmp, path)  # a crash mid-write leaves the previous round's checkpoint

    def _load_checkpoint(self, state: dict) -> int:
        path = self._checkpoint_path()
        if path is None or not self.resume or not os.path.exists(path):
            return 1
        from safetensors import safe_open

        with safe_open(path, framework="pt") as f:
            meta = f.metadata()
            saved = {k[len("model/"):]: f.get_tensor(k) for k in f.keys() if k.startswith("model/")}
            agg = {k[len("aggregator/"):]: f.get_tensor(k).numpy() for k in f.keys() if k.startswith("aggregator/")}
        if set(saved) == set(state):  # safetensors stores keys sorted
            saved = {k: saved[k] for k in state}
        problem = describe_mismatch(spec_of(state), spec_of(saved), who=f"the checkpoint {path}")
        if problem:
            raise FederatedError(problem)
        if meta.get("aggregator") != type(self.aggregator).__name__:
            raise FederatedError(f"the checkpoint {path} was written by {meta.get('aggregator')}, "
                                 f"this run uses {type(self.aggregator).__name__}")
        state.update(saved)
        self.aggregator.load_state_dict(agg)
        self.history = [RoundRecord(**{**r, "dropped": {int(k): v for k, v in r["dropped"].items()}})
                        for r in json.loads(meta["history"])]
        if self.privacy is not None:
            self.privacy.load_accountant_history(json.loads(meta.get("accountant", "[]")))
        return int(meta["round"]) + 1

    # --- progress ---------------------------------------------------------------------------
    def _display(self):
        on = self.progress if self.progress is not None else sys.stderr.isatty()
        if not on:
            return None
        from rich.console import Console
        from rich.table import Table

        console = Console(stderr=True)
        console.print(f"[bold]federated[/] {type(self.aggregator).__name__}: {len(self._alive)} clients, "
                      f"{self.rounds} rounds")

        def show(rec: RoundRecord) -> None:
            table = Table(show_header=rec.round == 1 or len(self.history) == 1, box=None, pad_edge=False)
            for col in ("round", "clients", "examples", "loss", "bytes", "s", "metrics", "dropped"):
                table.add_column(col, justify="right" if col not in ("metrics", "dropped") else "left",
                                 min_width=20 if col == "metrics" else 8, no_wrap=True)
            metrics = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.metrics.items())
            if rec.epsilon is not None:
                metrics += f" eps={rec.epsilon:.3g}"
            table.add_row(f"{rec.round}/{self.rounds}", str(len(rec.participants)), str(rec.examples),
                          f"{rec.loss:.4f}", _human(rec.bytes), f"{rec.seconds:.2f}", metrics,
                          ", ".join(f"{c}" for c in rec.dropped) or "-")
            console.print(table)

        return show

    # --- client -----------------------------------------------------------------------------
    def _serve(self) -> list[RoundRecord]:
        try:
            return self._serve_commands()
        except PeerLost as exc:
            raise FederatedError(f"rank {dist.get_rank()} lost the coordinator ({exc.reason})") from None

    def _serve_commands(self) -> list[RoundRecord]:
        link, coord = self._link, self._coordinator
        me = dist.get_rank()

        def receive():
            try:
                return link.receive_command(coord, self.client_timeout)
            except PeerLost as exc:
                raise FederatedError(f"rank {me} lost the coordinator ({exc.reason})") from None

        command, _, payload, reply = receive()
        if command == ABORT:
            link.reply(coord, b"", reply, self.client_timeout)
            raise FederatedError(payload.decode(errors="replace"))
        if command != OFFER:
            raise FederatedError(f"rank {me}: expected the coordinator's offer, got command {command}")
        offer = json.loads(unpack(payload, 1)[0])
        error = None
        try:
            self._spec = spec_of(self.model.state_dict())
            error = describe_mismatch(self._spec, spec_from_json(offer["spec"]))
            if error is None:
                self._examples = self._count_examples()
                if self._examples == 0:
                    error = "its data loader yields no examples"
            if error is None and self.loss_fn is None:
                error = "no loss_fn given"
        except Exception as exc:  # noqa: BLE001 -- reported to the coordinator, then raised here
            error = f"{type(exc).__name__}: {exc}"
        answer = {"error": error} if error else {"num_examples": self._examples}
        link.reply(coord, pack(json.dumps(answer).encode()), reply, self.client_timeout)
        if error:
            raise FederatedError(f"rank {me}: {error}")
        cfg = offer["config"]
        self._cfg = cfg
        self._codec = _compression.from_config(cfg["compression"])
        self._clip = None if cfg["privacy"] is None else DifferentialPrivacy(0.0, cfg["privacy"]["clipping_norm"])
        secagg = None
        while True:
            command, rnd, payload, reply = receive()
            if command == FINISH:
                hist, weights = unpack(payload, 2)
                self.model.load_state_dict(decode(weights, self._spec))
                self.history = [RoundRecord(**{**r, "dropped": {int(k): v for k, v in r["dropped"].items()}})
                                for r in json.loads(hist)]
                link.reply(coord, b"", reply, self.client_timeout)
                return self.history
            if command == ABORT:
                link.reply(coord, b"", reply, self.client_timeout)
                raise FederatedError(payload.decode(errors="replace"))
            if command == TRAIN:
                link.reply(coord, self._train_reply(payload, rnd), reply, self.client_timeout)
            elif command == SA_KEYS:
                from .secagg import SecAggClient

                sa = cfg["secagg"]
                secagg = SecAggClient(me, rnd, json.loads(payload)["sampled"], sa["threshold"],
                                      sa["num_shares"])
                link.reply(coord, pack(json.dumps(secagg.keys()).encode()), reply, self.client_timeout)
            elif command == SA_SHARES:
                try:
                    msg = {"shares": secagg.shares(json.loads(payload))}
                except Exception as exc:  # noqa: BLE001
                    msg = {"error": str(exc)}
                link.reply(coord, pack(json.dumps(msg).encode()), reply, self.client_timeout)
            elif command == SA_MASKED:
                info, weights = unpack(payload, 2)
                info = json.loads(info)
                link.reply(coord, self._masked_reply(secagg, info, weights, rnd), reply, self.client_timeout)
            elif command == SA_UNMASK:
                ask = json.loads(payload)
                msg = secagg.unmask(ask["survivors"], ask["dropped"])
                link.reply(coord, pack(json.dumps(msg).encode()), reply, self.client_timeout)
            else:
                raise FederatedError(f"rank {me}: unknown command {command} from the coordinator")

    def _count_examples(self) -> int:
        ds = getattr(self.data, "dataset", None)
        if ds is not None and hasattr(ds, "__len__"):
            return len(ds)
        if self.data is None:
            raise FederatedError("this rank is a client but was given data=None")
        return sum(_batch_size(b) for b in self.data)

    def _local_train(self, weights: bytes, rnd: int):
        """FedAvg's client step: start from the global weights, a fresh optimizer, local_epochs
        over the loader in its order. Returns (global flat, new flat, examples, mean loss)."""
        global_state = decode(weights, self._spec)
        self.model.load_state_dict(global_state)
        mu = self._cfg["mu"]
        anchors = [p.detach().clone() for p in self.model.parameters()] if mu else None
        if self.optimizer is not None:
            opt = self.optimizer(self.model.parameters())
        else:
            opt = torch.optim.SGD(self.model.parameters(), lr=self._cfg["eta_l"] or 0.1)
        self.model.train()
        examples, loss_sum = 0, 0.0
        for epoch in range(self._cfg["local_epochs"]):
            for batch in self.data:
                inputs, targets = batch[0], batch[1]
                opt.zero_grad()
                loss = self.loss_fn(self.model(inputs), targets)
                total = loss
                if mu:
                    prox = sum(((p - a) ** 2).sum() for p, a in zip(self.model.parameters(), anchors))
                    total = loss + (mu / 2) * prox
                total.backward()
                opt.step()
                if epoch == 0:
                    bs = _batch_size(batch)
                    examples += bs
                    loss_sum += float(loss.detach()) * bs
        if examples == 0:
            raise FederatedError("the data loader yielded no examples this round")
        new = {k: v.detach() for k, v in self.model.state_dict().items()}
        return global_state, new, examples, loss_sum / examples

    def _client_vector(self, global_state, new):
        """The flat update this client sends: clipped to the DP norm when privacy is on."""
        g = flatten(global_state, self._spec)
        x = flatten(new, self._spec)
        if self._clip is not None:
            x = g + self._clip.clip(x - g, floating_mask(self._spec))
        return g, x

    def _train_reply(self, weights: bytes, rnd: int) -> bytes:
        try:
            global_state, new, examples, loss = self._local_train(weights, rnd)
            if self._codec is not None:
                g, x = self._client_vector(global_state, new)
                body = self._codec.encode(x - g)
            elif self._clip is not None:
                body = self._client_vector(global_state, new)[1].astype(np.float64).tobytes()
            else:
                body = encode(new, self._spec)
            return struct.pack("<qqd", OK, examples, loss).ljust(META, b"\0") + body
        except Exception as exc:  # noqa: BLE001 -- the coordinator drops this client and says why
            return struct.pack("<qqd", FAILED, 0, 0.0).ljust(META, b"\0") + f"{type(exc).__name__}: {exc}".encode()[:4000]

    def _masked_reply(self, secagg, info, weights: bytes, rnd: int) -> bytes:
        from .secagg import quantize

        try:
            if secagg is None:
                raise RuntimeError("masked input requested before the key exchange")
            secagg.receive(info["shares"])
            global_state, new, examples, loss = self._local_train(weights, rnd)
            _, x = self._client_vector(global_state, new)
            w = 1.0 if self._clip is not None else float(examples)
            vec = np.concatenate([w * x, [w, w * loss]])
            masked = secagg.mask(quantize(vec, self._cfg["secagg"]["frac_bits"]), info["shared"])
            return struct.pack("<qqd", OK, 0, 0.0).ljust(META, b"\0") + masked.tobytes()
        except Exception as exc:  # noqa: BLE001
            return struct.pack("<qqd", FAILED, 0, 0.0).ljust(META, b"\0") + f"{type(exc).__name__}: {exc}".encode()[:4000]


def _batch_size(batch) -> int:
    target = batch[1] if isinstance(batch, (tuple, list)) and len(batch) > 1 else batch[0]
    return int(target.shape[0]) if hasattr(target, "shape") and len(target.shape) else 1


def _human(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


__all__ = ["Engine", "RoundRecord", "SecureAggregation"]

"""`wrap` and the adapted module it returns.

The caller's model is never modified: `wrap` adapts a copy whose frozen parameters share the
caller's storage (no second copy of the weights; `share_frozen=False` copies them too), while
the parameters the method trains and every buffer are the copy's own. The caller's model stays
usable as it was, and `adapted.base` is it.
"""

from __future__ import annotations

import copy
import json

import torch
from torch import nn

from .delta import EVENTS, FORMAT, Delta, Lifetime, Memory, difference, fingerprint
from .methods import Method

MARK = "_torchnative_adapted"


def _is_adapted(model: nn.Module) -> str | None:
    for name, m in model.named_modules():
        if isinstance(m, AdaptedModule) or getattr(m, MARK, None):
            return name or type(model).__name__
    return None


def _batch_size(args, kwargs) -> int:
    """Examples in one call: the first dimension of its first tensor argument (input_ids for an
    LM), 0 when there is none."""
    for v in (*args, *kwargs.values()):
        if isinstance(v, torch.Tensor) and v.dim() > 0:
            return int(v.shape[0])
    return 0


def wrap(model: nn.Module, method: Method, lifetime="persistent", destination=None,
         share_frozen: bool = True) -> "AdaptedModule":
    """An adapted copy of `model`: `method` (BNAdapt(), Tent(), EATA(), SAR(), LMEntropy())
    adapts it on each call while online(); `lifetime` ("persistent", "batch"/"episodic" or a
    Lifetime) and `destination` (Memory() by default, SafetensorsFile(path), StateDictUpdate())
    say what becomes of the delta (delta.Lifetime documents each event's effect)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"wrap expects a torch.nn.Module, not {type(model).__name__}")
    if isinstance(method, type) and issubclass(method, Method):
        raise TypeError(f"method must be an instance, e.g. adapt.{method.__name__}(), not the class")
    if not isinstance(method, Method):
        raise TypeError(f"method must be an adapt method (BNAdapt, Tent, EATA, SAR, LMEntropy), "
                        f"not {type(method).__name__}")
    inner = _is_adapted(model)
    if inner is not None:
        raise ValueError(f"{inner} is already adapted; wrap its .base (the original model) instead, "
                         f"or reset() the adapted one")
    return AdaptedModule(model, method, Lifetime.coerce(lifetime), destination or Memory(), share_frozen)


class AdaptedModule(nn.Module):
    """A model that adapts at test time. online() (the default): each call adapts on its input
    and returns the predictions (as the references' forward does); offline(): calls only
    predict, in eval mode, changing nothing; reset(): the weights, buffers, optimizer state and
    method state of wrap time, bit for bit; delta(): what changed; on_event(): the host's
    events (Lifetime's table)."""

    def __init__(self, model, method, lifetime, destination, share_frozen):
        super().__init__()
        method = copy.copy(method)
        method.reset_state()
        method.require_layers(model)
        trainable = method.trainable(model)
        keys = method.delta_keys(model)
        state = model.state_dict()
        base = {k: state[k].detach().clone() for k in keys}

        memo = {}
        if share_frozen:
            train_ids = {id(model.get_parameter(n)) for n in trainable}
            for p in model.parameters():
                if id(p) not in train_ids:
                    memo[id(p)] = nn.Parameter(p.detach(), requires_grad=False)
        adapted = copy.deepcopy(model, memo)
        setattr(adapted, MARK, method.name)
        method.configure(adapted)
        params = [adapted.get_parameter(n) for n in trainable]
        if method.partial_update and params and all(p.requires_grad for p in adapted.parameters()):
            raise ValueError(f"{method.name} should not update all parameters, only the affine ones of its "
                             f"norm layers, and {type(model).__name__} has no others")
        optimizer = method.make_optimizer(params) if params else None
        method.prepare(adapted, optimizer)

        self.model = adapted
        object.__setattr__(self, "_base", model)
        self.method, self.optimizer, self.lifetime, self.destination = method, optimizer, lifetime, destination
        self._trainable, self._keys, self._base_values = trainable, keys, base
        self._base_fingerprint = fingerprint(base)
        self._snapshot = {n: t.detach().clone() for n, t in self._mutable().items()}
        self._opt_snapshot = copy.deepcopy(optimizer.state_dict()) if optimizer is not None else None
        self._modes = {n: m.training for n, m in adapted.named_modules()}
        self._online = True
        self._calls = self._samples = 0
        self.events = []

    # -- what may change ------------------------------------------------------------------
    def _mutable(self) -> dict:
        """The tensors adaptation may write: trained parameters and every buffer."""
        out = {n: self.model.get_parameter(n) for n in self._trainable}
        for n, b in self.model.named_buffers():
            out[n] = b
        return out

    def _tensor(self, name):
        try:
            return self.model.get_parameter(name)
        except AttributeError:
            return self.model.get_buffer(name)

    def _restore(self):
        """Weights, buffers and optimizer state back to the snapshot, in place (the optimizer
        keeps referring to the same parameters)."""
        with torch.no_grad():
            current = self._mutable()
            for n, v in self._snapshot.items():
                current[n].copy_(v)
        for n in self._trainable:
            self.model.get_parameter(n).grad = None
        if self.optimizer is not None:
            self.optimizer.load_state_dict(copy.deepcopy(self._opt_snapshot))

    def _apply_modes(self):
        for n, m in self.model.named_modules():
            m.training = self._modes[n]

    # -- serving --------------------------------------------------------------------------
    @property
    def base(self) -> nn.Module:
        """The caller's model, untouched."""
        return self._base

    @property
    def is_online(self) -> bool:
        return self._online

    def online(self) -> "AdaptedModule":
        """Each call adapts on its input, then returns its predictions."""
        self._online = True
        return self

    def offline(self) -> "AdaptedModule":
        """Calls predict with the adapted weights in eval mode, without gradients or updates."""
        self._online = False
        return self

    def forward(self, *args, **kwargs):
        if not self._online:
            self.model.eval()
            try:
                with torch.no_grad():
                    return self.model(*args, **kwargs)
            finally:
                self._apply_modes()
        if self.lifetime.kind == "batch":
            self._restore()
            self.method.reset_state(episodic=True)
        self._apply_modes()
        out = self.method.adapt(self.model, self.optimizer, args, kwargs, self._restore)
        self._calls += 1
        self._samples += _batch_size(args, kwargs)
        return out

    def reset(self) -> "AdaptedModule":
        """Back to wrap time: weights, buffers and optimizer state bit for bit, method state
        cleared."""
        self._restore()
        self.method.reset_state(episodic=False)
        self._calls = self._samples = 0
        return self

    def stats(self) -> dict:
        return {"method": self.method.name, "online": self._online, "calls": self._calls, "samples": self._samples,
                "lifetime": str(self.lifetime), **self.method.stats()}

    # -- deltas ---------------------------------------------------------------------------
    def delta(self) -> Delta:
        """The difference of every tensor the method adapts from the caller's base model, as
        a state dict (keys as in the base's state_dict) with `nbytes` and `metadata`."""
        diffs, replaced = {}, []
        for k in self._keys:
            d, rep = difference(self._tensor(k), self._base_values[k])
            diffs[k] = d
            if rep:
                replaced.append(k)
        meta = {"format": FORMAT, "method": self.method.name, "lifetime": str(self.lifetime),
                "hyperparameters": json.dumps(self.method.describe(), default=str, sort_keys=True),
                "base_sha256": self._base_fingerprint, "replaced": json.dumps(replaced),
                "calls": str(self._calls), "samples": str(self._samples), "torch": torch.__version__}
        return Delta(diffs, meta)

    def adapted_state(self) -> dict:
        """{key: adapted value} of the delta's keys (what a consumer loads with strict=False)."""
        return {k: self._tensor(k).detach().clone() for k in self._keys}

    def load_delta(self, delta, check_base: bool = True) -> "AdaptedModule":
        """Applies a delta (a Delta or a safetensors path) of this method over the same base:
        the adapted tensors become base + delta, bit for bit. The optimizer state is not part of
        a delta and restarts from wrap time."""
        if not isinstance(delta, Delta):
            delta = Delta.load(delta)
        if delta.metadata.get("method") != self.method.name:
            raise ValueError(f"the delta is {delta.metadata.get('method')}'s, this model adapts with {self.method.name}")
        if check_base and delta.metadata.get("base_sha256") != self._base_fingerprint:
            raise ValueError("the delta was made over different base weights (base_sha256 differs); "
                             "pass check_base=False to apply it anyway")
        unknown = [k for k in delta if k not in self._base_values]
        if unknown:
            raise ValueError(f"the delta has keys this model does not adapt: {', '.join(unknown)}")
        self.reset()
        with torch.no_grad():
            for k, v in delta.apply(self._base_values).items():
                self._tensor(k).copy_(v)
        return self

    def flush(self):
        """Hands the current delta to the destination; returns what the destination made of it."""
        d = self.delta()
        return self.destination.put(d, d.apply(self._base_values))

    def on_event(self, event: str) -> dict:
        """The host's event ("backgrounded", "user_switch", "sync"): flushes and/or resets as
        the lifetime says (delta.Lifetime). Returns {"event", "flushed", "reset"}."""
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}; events are {', '.join(EVENTS)}")
        flush, reset = self.lifetime.effect(event)
        if flush:
            self.flush()
        if reset:
            self.reset()
        record = {"event": event, "flushed": flush, "reset": reset}
        self.events.append(record)
        return record

    def extra_repr(self) -> str:
        return (f"method={self.method.name}, lifetime={self.lifetime}, {'online' if self._online else 'offline'}, "
                f"adapted tensors={len(self._keys)}")

"""Deltas: what adaptation changed, as differences over the base weights, with a lifetime (how
long the difference lives) and a destination (where it goes when the host asks).

A `Delta` is a plain dict {state-dict key: difference} plus `metadata` (str -> str) and
`nbytes`. base + difference gives the adapted tensor bit for bit: a difference is kept in the
tensor's dtype where that round trip is exact, in float64 where only that is, and as the
adapted value itself (listed in metadata["replaced"]) where neither is (NaN, a sign change
across many binades). `Delta.save`/`Delta.load` use safetensors.
"""

from __future__ import annotations

import array
import hashlib
import json
import sys
from pathlib import Path

import torch

FORMAT = "torchnative.adapt.delta/1"
EVENTS = ("backgrounded", "user_switch", "sync")
_INT_OF = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.int8}
_ARRAY_CODE = {torch.int64: "q", torch.int32: "i", torch.int16: "h", torch.int8: "b", torch.uint8: "B"}


def fingerprint(tensors: dict) -> str:
    """sha256 over the tensors' names, dtypes, shapes and bits (little-endian): which base a
    delta belongs to. Needs neither safetensors nor NumPy, so wrap() needs neither."""
    h = hashlib.sha256()
    for k in sorted(tensors):
        t = tensors[k].detach().contiguous().reshape(-1)
        h.update(f"{k}|{t.dtype}|{tuple(tensors[k].shape)}|".encode())
        if t.dtype == torch.bool:
            t = t.to(torch.uint8)
        elif t.dtype.is_floating_point:
            t = t.view(_INT_OF[t.element_size()])
        if t.dtype not in _ARRAY_CODE:
            raise TypeError(f"cannot fingerprint a {t.dtype} tensor ({k})")
        values = array.array(_ARRAY_CODE[t.dtype], t.tolist())
        if sys.byteorder == "big":
            values.byteswap()
        h.update(values.tobytes())
    return h.hexdigest()


def bits_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same dtype, shape and bits (torch.equal calls -0.0 and 0.0 equal, and NaN unequal)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        a, b = a.contiguous().view(_INT_OF[a.element_size()]), b.contiguous().view(_INT_OF[b.element_size()])
    return torch.equal(a, b)


def difference(adapted: torch.Tensor, base: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """(d, replaced): d with base (+) d == adapted bit for bit, or adapted itself (replaced)."""
    adapted, base = adapted.detach(), base.detach()
    if adapted.dtype == torch.bool or adapted.dtype.is_complex:
        return adapted.clone(), True
    if not adapted.dtype.is_floating_point:
        d = adapted - base
        return d, False
    d = adapted - base
    if bits_equal(base + d, adapted):
        return d, False
    d64 = adapted.double() - base.double()
    if bits_equal((base.double() + d64).to(adapted.dtype), adapted):
        return d64, False
    return adapted.clone(), True


def apply_difference(base: torch.Tensor, d: torch.Tensor, replaced: bool) -> torch.Tensor:
    if replaced:
        return d.clone().to(base.dtype)
    if d.dtype == base.dtype:
        return base + d
    return (base.to(d.dtype) + d).to(base.dtype)


def _safetensors_torch():
    try:
        import safetensors.torch
    except ImportError as e:
        raise ImportError("saving and loading deltas needs the safetensors package (pip install safetensors)") from e
    return safetensors.torch


class Delta(dict):
    """{state-dict key: difference over the base}, with `metadata` and `nbytes`."""

    def __init__(self, tensors=None, metadata=None):
        super().__init__(tensors or {})
        self.metadata = dict(metadata or {})

    @property
    def nbytes(self) -> int:
        """Bytes of the differences (what a file or a network carries, less the header)."""
        return sum(t.numel() * t.element_size() for t in self.values())

    @property
    def replaced(self) -> set:
        return set(json.loads(self.metadata.get("replaced", "[]")))

    def state_dict(self) -> dict:
        """The differences, a plain state dict."""
        return dict(self)

    def apply(self, base: dict) -> dict:
        """{key: adapted value} from the base tensors (a state dict or a module's) and this delta."""
        if isinstance(base, torch.nn.Module):
            base = base.state_dict()
        missing = [k for k in self if k not in base]
        if missing:
            raise KeyError(f"the base has no {', '.join(missing)} (the delta's keys: {', '.join(self)})")
        rep = self.replaced
        return {k: apply_difference(base[k], d, k in rep) for k, d in self.items()}

    def save(self, path) -> Path:
        """Writes a safetensors file (metadata in its header) and returns its path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        _safetensors_torch().save_file({k: v.detach().contiguous() for k, v in self.items()}, str(path),
                  metadata={**self.metadata, "nbytes": str(self.nbytes)})
        return path

    @classmethod
    def load(cls, path) -> "Delta":
        st = _safetensors_torch()
        from safetensors import safe_open
        with safe_open(str(path), framework="pt") as f:
            meta = dict(f.metadata() or {})
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path} is not a torchnative.adapt delta (format {meta.get('format')!r})")
        meta.pop("nbytes", None)
        return cls(st.load_file(str(path)), meta)

    def __repr__(self):
        keys = ", ".join(list(self)[:4]) + (", ..." if len(self) > 4 else "")
        return (f"Delta({len(self)} tensors: {keys}; {self.nbytes} bytes; method={self.metadata.get('method')}, "
                f"lifetime={self.metadata.get('lifetime')})")


class Lifetime:
    """How long a delta lives, and what the host's events do to it.

    - `Lifetime.batch()` (the references' episodic=True): the weights go back to the base
      before every adapting call, so a delta describes one batch;
    - `Lifetime.until(*events)`: adaptation accumulates until one of `events` ends it;
    - `Lifetime.persistent()` (the references' default, episodic=False): it accumulates and no
      event ends it; only reset() does.

    Effects of `adapted.on_event(e)` (flush = hand the delta to the destination; reset = back
    to the base weights, buffers and optimizer state):

    ============== ========== ==================================== ==============
    event          batch      until(events)                        persistent
    ============== ========== ==================================== ==============
    "backgrounded" reset      flush; then reset if e in events     flush
    "user_switch"  reset      reset if e in events (no flush: one  nothing
                              user's adaptation never reaches the
                              next user's destination)
    "sync"         reset      flush; then reset if e in events     flush
    ============== ========== ==================================== ==============

    A batch delta is reset by every event: it belongs to the last batch only, so there is
    nothing to hand over."""

    def __init__(self, kind: str, until: tuple = ()):
        if kind not in ("batch", "until", "persistent"):
            raise ValueError(f"lifetime kind must be 'batch', 'until' or 'persistent', not {kind!r}")
        bad = [e for e in until if e not in EVENTS]
        if bad:
            raise ValueError(f"unknown event(s) {bad}; events are {', '.join(EVENTS)}")
        if kind == "until" and not until:
            raise ValueError("Lifetime.until needs at least one event")
        self.kind, self.events = kind, tuple(until)

    @classmethod
    def batch(cls):
        return cls("batch")

    @classmethod
    def until(cls, *events):
        return cls("until", events)

    @classmethod
    def persistent(cls):
        return cls("persistent")

    @classmethod
    def coerce(cls, value) -> "Lifetime":
        if isinstance(value, Lifetime):
            return value
        if value in ("batch", "episodic"):
            return cls.batch()
        if value == "persistent":
            return cls.persistent()
        raise TypeError(f"lifetime must be a Lifetime or 'batch'/'episodic'/'persistent', not {value!r}")

    def effect(self, event: str) -> tuple[bool, bool]:
        """(flush, reset) for `event`: the table above."""
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}; events are {', '.join(EVENTS)}")
        if self.kind == "batch":
            return False, True
        ends = self.kind == "until" and event in self.events
        flush = event in ("backgrounded", "sync")
        return flush, ends

    def __str__(self):
        return f"until({','.join(self.events)})" if self.kind == "until" else self.kind

    def __repr__(self):
        return f"Lifetime.{self.kind}({', '.join(map(repr, self.events))})"

    def __eq__(self, other):
        return isinstance(other, Lifetime) and (self.kind, self.events) == (other.kind, other.events)


class Destination:
    """Where a flushed delta goes. `put(delta, adapted_values)` receives the delta and the
    adapted tensors it describes; the last thing put is `last`."""

    last = None

    def put(self, delta: Delta, values: dict):
        raise NotImplementedError


class Memory(Destination):
    """Keeps the flushed deltas in memory (`last`, and all of them in `history`)."""

    def __init__(self):
        self.history = []

    def put(self, delta, values):
        self.history.append(delta)
        self.last = delta
        return delta


class SafetensorsFile(Destination):
    """Writes each flushed delta to a safetensors file. `path` may hold "{n}" (the flush count,
    from 0) to keep every flush; otherwise each flush overwrites the file."""

    def __init__(self, path):
        self.path, self.count = str(path), 0

    def put(self, delta, values):
        out = delta.save(self.path.format(n=self.count))
        self.count += 1
        self.last = out
        return out


class StateDictUpdate(Destination):
    """Hands a state-dict update to another component (a federated client, say): a plain dict
    {"state_dict": {key: adapted value}, "delta": {key: difference}, "metadata": {...},
    "nbytes": int, "num_examples": int (the samples adapted on)}, given to `consumer` when one
    is set. `model.load_state_dict(update["state_dict"], strict=False)` puts the adapted values
    into a model with the same keys; {**base.state_dict(), **update["state_dict"]} is the whole
    adapted state, as a federated round's client update carries it."""

    def __init__(self, consumer=None):
        self.consumer = consumer

    def put(self, delta, values):
        update = {"state_dict": values, "delta": delta.state_dict(), "metadata": dict(delta.metadata),
                  "nbytes": delta.nbytes, "num_examples": int(delta.metadata.get("samples", 0))}
        self.last = update
        if self.consumer is not None:
            self.consumer(update)
        return update

"""A model's state dict as one flat float64 vector and as wire bytes.

Everything the engine moves or averages goes through these helpers, so the arithmetic is the same
whichever backend carries the bytes: averaging happens in float64 over the flat vector (integer
buffers such as BatchNorm's num_batches_tracked round to the nearest integer), then each entry is
cast back to its own dtype.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import torch


class FederatedError(RuntimeError):
    """A federated run cannot go on; raised on every rank that learns of it, with the reason."""


@dataclass(frozen=True)
class Entry:
    name: str
    shape: tuple
    dtype: str  # torch dtype name without the "torch." prefix

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)

    @property
    def floating(self) -> bool:
        return self.torch_dtype.is_floating_point


def spec_of(state: dict) -> list[Entry]:
    """The names, shapes and dtypes of a state dict, in its order."""
    out = []
    for name, t in state.items():
        if not isinstance(t, torch.Tensor):
            raise FederatedError(f"state dict entry {name!r} is a {type(t).__name__}, not a tensor")
        out.append(Entry(name, tuple(t.shape), str(t.dtype).removeprefix("torch.")))
    return out


def spec_to_json(spec: list[Entry]) -> list:
    return [[e.name, list(e.shape), e.dtype] for e in spec]


def spec_from_json(data: list) -> list[Entry]:
    return [Entry(n, tuple(s), d) for n, s, d in data]


def spec_digest(spec: list[Entry]) -> str:
    return hashlib.sha256(json.dumps(spec_to_json(spec)).encode()).hexdigest()[:16]


def describe_mismatch(mine: list[Entry], theirs: list[Entry], who: str = "the coordinator") -> str | None:
    """None when the specs agree, else one sentence naming the first difference."""
    a = {e.name: e for e in mine}
    b = {e.name: e for e in theirs}
    missing = [n for n in b if n not in a]
    extra = [n for n in a if n not in b]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing key(s) {missing[:5]}")
        if extra:
            parts.append(f"unexpected key(s) {extra[:5]}")
        return f"state dict differs from {who}'s: " + ", ".join(parts)
    for name, e in a.items():
        o = b[name]
        if e.shape != o.shape:
            return f"state dict differs from {who}'s: {name!r} has shape {list(e.shape)} here, {list(o.shape)} there"
        if e.dtype != o.dtype:
            return f"state dict differs from {who}'s: {name!r} is {e.dtype} here, {o.dtype} there"
    if [e.name for e in mine] != [e.name for e in theirs]:
        return f"state dict differs from {who}'s: same keys in a different order"
    return None


def _np(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: carry its bits
        return t.view(torch.int16).numpy()
    return t.numpy()


def flatten(state: dict, spec: list[Entry]) -> np.ndarray:
    """All entries, in spec order, as one float64 vector."""
    parts = [_np(state[e.name]).astype(np.float64).reshape(-1) if e.dtype != "bfloat16"
             else state[e.name].detach().cpu().double().numpy().reshape(-1) for e in spec]
    return np.concatenate(parts) if parts else np.zeros(0)


def unflatten(vec: np.ndarray, spec: list[Entry]) -> dict:
    """The inverse of flatten: each slice cast to its entry's dtype (integers rounded)."""
    out, at = {}, 0
    for e in spec:
        piece = np.asarray(vec[at:at + e.numel], dtype=np.float64).reshape(e.shape)
        at += e.numel
        if e.floating:
            out[e.name] = torch.from_numpy(piece.copy()).to(e.torch_dtype)
        elif e.dtype == "bool":
            out[e.name] = torch.from_numpy(np.asarray(np.rint(piece) != 0).reshape(e.shape))
        else:
            out[e.name] = torch.from_numpy(np.asarray(np.rint(piece), dtype=np.int64).reshape(e.shape)).to(e.torch_dtype)
    if at != len(vec):
        raise FederatedError(f"a flat vector of {len(vec)} values does not fit a state of {at} values")
    return out


def floating_mask(spec: list[Entry]) -> np.ndarray:
    """True at the flat positions that belong to floating-point entries."""
    return np.concatenate([np.full(e.numel, e.floating) for e in spec]) if spec else np.zeros(0, bool)


def encode(state: dict, spec: list[Entry]) -> bytes:
    """Every entry's raw bytes in its own dtype, in spec order (the wire form of a state)."""
    return b"".join(_np(state[e.name]).tobytes() for e in spec)


def wire_size(spec: list[Entry]) -> int:
    return sum(e.numel * torch.empty(0, dtype=e.torch_dtype).element_size() for e in spec)


def decode(data: bytes, spec: list[Entry]) -> dict:
    out, at = {}, 0
    for e in spec:
        size = torch.empty(0, dtype=e.torch_dtype).element_size()
        chunk = data[at:at + e.numel * size]
        at += e.numel * size
        if e.dtype == "bfloat16":
            arr = np.frombuffer(chunk, dtype=np.int16).reshape(e.shape).copy()
            out[e.name] = torch.from_numpy(arr).view(torch.bfloat16)
        else:
            np_dtype = torch.empty(0, dtype=e.torch_dtype).numpy().dtype
            out[e.name] = torch.from_numpy(np.frombuffer(chunk, dtype=np_dtype).reshape(e.shape).copy())
    if at != len(data):
        raise FederatedError(f"{len(data)} bytes do not hold a state of {at} bytes")
    return out


def clone_state(model: torch.nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}

"""Update compression: what a client sends instead of its full weights.

Both codecs send the update delta = client weights - global weights (the flat float64 vector of
state.flatten); the coordinator adds the decoded delta back to the global weights it sent.
Sizes are fixed by the model, so the coordinator knows every reply's length in advance
(transport.py relies on that).
"""

from __future__ import annotations

import math

import numpy as np


class Compression:
    name = "none"

    def nbytes(self, n: int) -> int:
        raise NotImplementedError

    def encode(self, delta: np.ndarray) -> bytes:
        raise NotImplementedError

    def decode(self, data: bytes, n: int) -> np.ndarray:
        raise NotImplementedError

    def config(self) -> dict:
        return {"name": self.name}


class Float16(Compression):
    """The delta rounded to IEEE half precision: 2 bytes a value instead of 4 (float32 weights)."""

    name = "float16"

    def nbytes(self, n):
        return 2 * n

    def encode(self, delta):
        return delta.astype(np.float16).tobytes()

    def decode(self, data, n):
        return np.frombuffer(data[:2 * n], dtype=np.float16).astype(np.float64)


class TopK(Compression):
    """The `ratio` * n largest-magnitude entries of the delta (int32 index + float32 value each);
    the rest are sent as zero. Ties broken by position (stable), so the choice is deterministic."""

    name = "topk"

    def __init__(self, ratio: float = 0.1):
        if not 0 < ratio <= 1:
            raise ValueError(f"TopK ratio must be in (0, 1], got {ratio}")
        self.ratio = float(ratio)

    def k(self, n):
        return max(1, math.ceil(self.ratio * n))

    def nbytes(self, n):
        return 8 * self.k(n)

    def encode(self, delta):
        k = self.k(len(delta))
        idx = np.sort(np.argsort(-np.abs(delta), kind="stable")[:k]).astype(np.int32)
        return idx.tobytes() + delta[idx].astype(np.float32).tobytes()

    def decode(self, data, n):
        k = self.k(n)
        idx = np.frombuffer(data[:4 * k], dtype=np.int32)
        val = np.frombuffer(data[4 * k:8 * k], dtype=np.float32)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError("top-k update has an index outside the model")
        out = np.zeros(n, dtype=np.float64)
        out[idx] = val
        return out

    def config(self):
        return {"name": self.name, "ratio": self.ratio}


def from_config(cfg: dict | None) -> Compression | None:
    if not cfg:
        return None
    if cfg["name"] == "float16":
        return Float16()
    if cfg["name"] == "topk":
        return TopK(cfg["ratio"])
    raise ValueError(f"unknown compression {cfg['name']!r}")

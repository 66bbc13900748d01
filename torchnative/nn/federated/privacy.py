"""Differential privacy for federated rounds: per-client clipping, Gaussian noise, an accountant.

DP-FedAvg with fixed clipping (McMahan et al. 2018; Flower's
DifferentialPrivacyClientSideFixedClipping): each client clips its update delta to L2 norm
`clipping_norm` before it leaves the device; the coordinator averages the clipped deltas with
equal weights (so one client's influence is bounded by the norm, whatever its example count)
and adds N(0, (noise_multiplier * clipping_norm / sampled)^2) to every floating-point value of
the mean. The privacy spent is tracked by opacus's RDP accountant (sample rate = sampled /
clients, one step per round).
"""

from __future__ import annotations

import numpy as np


class DifferentialPrivacy:
    def __init__(self, noise_multiplier: float, clipping_norm: float, delta: float = 1e-5, seed: int | None = None):
        if noise_multiplier < 0 or clipping_norm <= 0:
            raise ValueError("noise_multiplier must be >= 0 and clipping_norm > 0")
        self.noise_multiplier = float(noise_multiplier)
        self.clipping_norm = float(clipping_norm)
        self.delta = float(delta)
        self.seed = seed
        self._accountant = None

    # --- client side ----------------------------------------------------------------------
    def clip(self, delta: np.ndarray, floating: np.ndarray) -> np.ndarray:
        """delta scaled so its floating-point part has L2 norm <= clipping_norm."""
        norm = float(np.linalg.norm(delta[floating]))
        out = delta.copy()
        if norm > self.clipping_norm:
            out[floating] *= self.clipping_norm / norm
        return out

    # --- coordinator side -----------------------------------------------------------------
    def noise(self, mean: np.ndarray, floating: np.ndarray, sampled: int, rnd: int) -> np.ndarray:
        """mean plus Gaussian noise on its floating-point values; seeded per round when seed is set."""
        rng = np.random.default_rng(None if self.seed is None else [self.seed, rnd])
        std = self.noise_multiplier * self.clipping_norm / max(sampled, 1)
        out = mean.copy()
        out[floating] += rng.normal(0.0, std, size=int(floating.sum()))
        return out

    def accountant(self):
        if self._accountant is None:
            from opacus.accountants import RDPAccountant  # imported on use: only the coordinator needs it

            self._accountant = RDPAccountant()
        return self._accountant

    def step(self, sample_rate: float) -> float:
        """Account one round; returns epsilon spent so far at this delta (inf without noise)."""
        if self.noise_multiplier == 0:
            return float("inf")
        acc = self.accountant()
        acc.step(noise_multiplier=self.noise_multiplier, sample_rate=sample_rate)
        return float(acc.get_epsilon(delta=self.delta))

    def accountant_history(self) -> list:
        return [] if self._accountant is None else [list(h) for h in self._accountant.history]

    def load_accountant_history(self, history: list) -> None:
        if history:
            self.accountant().history = [tuple(h) for h in history]

    def config(self) -> dict:
        return {"clipping_norm": self.clipping_norm}

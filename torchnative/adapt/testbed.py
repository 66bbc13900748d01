"""The digits test bed of docs/adapt.md, benchmarks/adapt.py and tests/adapt: scikit-learn's
digits (8x8, 10 classes), a batch-norm CNN trained on them, and synthetic shifts of the test
images (contrast, Gaussian noise, blur, rotation; severities 1-5).

The split and the shifts are NumPy with seeded generators, so upstream torch and torchnative
get the same bytes; only the model runs on torch.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

SHIFTS = ("contrast", "gaussian_noise", "blur", "rotation")
# Per severity 1..5. Contrast and noise follow ImageNet-C's scales (contrast factor c, noise
# sigma on [0, 1] images); blur is a Gaussian's sigma in pixels, rotation an angle in degrees.
SEVERITY = {
    "contrast": (0.4, 0.3, 0.2, 0.1, 0.05),
    "gaussian_noise": (0.08, 0.12, 0.18, 0.26, 0.38),
    "blur": (0.5, 0.75, 1.0, 1.25, 1.5),
    "rotation": (10.0, 20.0, 30.0, 45.0, 60.0),
}


def load_split(seed: int = 0, n_train: int = 1078):
    """(x_train, y_train, x_test, y_test) as float32 [0, 1] images (N, 1, 8, 8) and int64
    labels; 1,078 of the 1,797 images (60%) train, as in the research benchmark."""
    from torchnative.datasets import digits_path, read_digits
    xs, ys = read_digits(digits_path())
    x = (np.asarray(xs, dtype=np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = np.asarray(ys, dtype=np.int64)
    perm = np.random.default_rng(seed).permutation(len(y))
    x, y = x[perm], y[perm]
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def _blur(x, sigma):
    r = 2
    k = np.exp(-(np.arange(-r, r + 1) ** 2) / (2 * sigma * sigma))
    k = (k / k.sum()).astype(np.float32)
    pad = np.pad(x, ((0, 0), (0, 0), (r, r), (r, r)))
    rows = sum(k[i] * pad[:, :, i:i + 8, :] for i in range(2 * r + 1))
    return sum(k[j] * rows[:, :, :, j:j + 8] for j in range(2 * r + 1))


def _rotate(x, degrees, rng):
    """Bilinear rotation about the centre by +-degrees (sign drawn per image), zero outside."""
    n = x.shape[0]
    theta = np.deg2rad(degrees) * rng.choice([-1.0, 1.0], size=n)
    c, s = np.cos(theta)[:, None, None], np.sin(theta)[:, None, None]
    yy, xx = np.meshgrid(np.arange(8) - 3.5, np.arange(8) - 3.5, indexing="ij")
    src_x = c * xx[None] + s * yy[None] + 3.5
    src_y = -s * xx[None] + c * yy[None] + 3.5
    x0, y0 = np.floor(src_x).astype(int), np.floor(src_y).astype(int)
    fx, fy = src_x - x0, src_y - y0
    img = x[:, 0]
    out = np.zeros_like(img)
    idx = np.arange(n)[:, None, None]
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            xi, yi = x0 + dx, y0 + dy
            ok = (xi >= 0) & (xi < 8) & (yi >= 0) & (yi < 8)
            out += np.where(ok, img[idx, np.clip(yi, 0, 7), np.clip(xi, 0, 7)], 0.0) * wx * wy
    return out[:, None].astype(np.float32)


def shift(x: np.ndarray, kind: str, severity: int, seed: int = 0) -> np.ndarray:
    """`x` (N, 1, 8, 8) in [0, 1] under shift `kind` at `severity` (1-5), float32."""
    if kind not in SEVERITY:
        raise ValueError(f"unknown shift {kind!r}; shifts are {', '.join(SHIFTS)}")
    if not 1 <= severity <= 5:
        raise ValueError(f"severity must be 1..5, not {severity}")
    v = SEVERITY[kind][severity - 1]
    rng = np.random.default_rng([seed, SHIFTS.index(kind), severity])
    if kind == "contrast":
        mean = x.mean(axis=(1, 2, 3), keepdims=True)
        out = (x - mean) * v + mean
    elif kind == "gaussian_noise":
        out = np.clip(x + rng.normal(0.0, v, size=x.shape), 0.0, 1.0)
    elif kind == "blur":
        out = _blur(x, v)
    else:
        out = _rotate(x, v, rng)
    return np.ascontiguousarray(out, dtype=np.float32)


def cnn() -> nn.Module:
    """A small batch-norm CNN for 8x8 digits (two conv-BN-ReLU blocks, a linear head)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 10),
    )


def train(x: np.ndarray, y: np.ndarray, epochs: int = 15, batch: int = 64, lr: float = 1e-2, seed: int = 0):
    """The source model: `cnn()` trained with Adam on (x, y), returned in eval mode."""
    torch.manual_seed(seed)
    model = cnn()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    order = np.random.default_rng(seed)
    model.train()
    for _ in range(epochs):
        perm = torch.from_numpy(order.permutation(len(y)))
        for i in range(0, len(y) - batch + 1, batch):
            idx = perm[i:i + batch]
            loss = nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def error(predictions: torch.Tensor, y) -> float:
    """Top-1 error (fraction) of logits or labels against y."""
    y = torch.as_tensor(y)
    pred = predictions.argmax(1) if predictions.dim() > 1 else predictions
    return float((pred != y).float().mean())


def stream(x: np.ndarray, batch: int):
    """The test stream: consecutive batches (as torch tensors) of `x`."""
    for i in range(0, len(x), batch):
        yield torch.from_numpy(x[i:i + batch])


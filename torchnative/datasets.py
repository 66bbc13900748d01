"""Small real datasets for tests and examples, cached outside the repo.

`digits()` is scikit-learn's bundled copy of the UCI handwritten digits (1,797 8x8 images). It
ships inside the scikit-learn wheel, so it is taken from that wheel (downloaded once with
`pip download --no-deps`, no scikit-learn install) and kept in the torchnative cache.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SKLEARN = "scikit-learn==1.9.1"
MEMBER = "sklearn/datasets/data/digits.csv.gz"


def cache_dir() -> Path:
    return Path(os.environ.get("TORCHNATIVE_CACHE", Path.home() / ".cache" / "torchnative"))


def digits_path() -> Path:
    """The digits CSV (gzip), fetched from the scikit-learn wheel on first use."""
    out = cache_dir() / "data" / "digits.csv.gz"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, SKLEARN,
                        "--only-binary", ":all:"], check=True)
        wheel = next(Path(tmp).glob("scikit_learn-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            data = z.read(MEMBER)
    part = out.with_suffix(".part")
    part.write_bytes(data)
    part.replace(out)
    return out


def read_digits(path) -> tuple[list[list[float]], list[int]]:
    """(images as 64 floats in 0..16, labels) from the CSV: 64 pixel columns then the label."""
    xs, ys = [], []
    with gzip.open(path, "rt") as f:
        for line in f:
            vals = line.strip().split(",")
            if len(vals) != 65:
                continue
            xs.append([float(v) for v in vals[:64]])
            ys.append(int(float(vals[64])))
    return xs, ys

"""Shared by the case programs compared with a tolerance (complex_fft_cases.py,
linalg_special_cases.py, eig_ldl_cases.py): each case's outcome — the result's dtype and shape in the JSON
metadata with its values (a complex result as its real view) as a float64 or integer array, or
the exception's type and first message line — written to the .npz file named on the command line."""

import json
import warnings

import numpy as np
import torch


def ramp(*shape, scale=0.37, dtype=torch.float32, lo=-1.1):
    """Deterministic values in [lo, lo + 2.3): the case programs' inputs."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float64) * scale) % 2.3 + lo).view(*shape).to(dtype)


def write_npz_outcomes(cases, out):
    arrays, meta = {}, {}
    for name, fn in cases.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fn()
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            meta[name] = {"error": type(e).__name__, "message": str(e).split("\n")[0]}
            continue
        meta[name] = {"dtype": str(r.dtype), "shape": list(r.shape)}
        v = (torch.view_as_real(r.resolve_conj()) if r.is_complex() else r).detach()
        arrays[name] = v.to(torch.float64).numpy() if v.is_floating_point() else v.numpy()
    np.savez(out, __meta__=np.array(json.dumps(meta)), **arrays)

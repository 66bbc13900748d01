"""Shared by the case programs of this folder: each case's outcome as JSON — a result's dtype,
shape and values (a complex one as its real view), a list of those, another value, or the
exception's type and first message line — written to the file named on the command line."""

import json

import torch


def describe(r):
    if isinstance(r, torch.Tensor):
        r = r.resolve_conj()
        v = torch.view_as_real(r.to(torch.complex64)) if r.is_complex() else r
        return {"dtype": str(r.dtype), "shape": list(r.shape), "values": v.double().flatten().tolist()}
    if isinstance(r, (list, tuple)):
        return [describe(t) for t in r]
    return {"value": r}


def write_outcomes(cases, path):
    out = {}
    for name, case in cases.items():
        try:
            out[name] = describe(case())
        except Exception as e:  # noqa: BLE001  (the outcome is what is recorded)
            out[name] = {"error": type(e).__name__, "message": str(e).split("\n")[0]}
    with open(path, "w") as fh:
        json.dump(out, fh, sort_keys=True)

"""torch.vmap and torch.func (grad, grad_and_value, vjp, jacrev, functional_call) against upstream.

tests/programs/functorch_cases.py runs per-sample gradients of an MLP, a CNN, an embedding and a
layer norm, nested gradients, Jacobians, and vmap over the operator families that have batching
rules (and some that take the per-sample fallback), on ours and on the reference torch in its
own process; every array must agree (value within 1e-5 of its largest magnitude, shape, dtype,
requires_grad) and every error case must raise upstream's exception type and message start.
About 6 s."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from program_json import array_disagreements as disagreements

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "functorch_cases.py"


def _run(python, tmp, tag):
    arrays, errors = tmp / f"{tag}.npz", tmp / f"{tag}.json"
    p = subprocess.run([python, str(PROGRAM), str(arrays), str(errors)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return dict(np.load(arrays)), json.loads(errors.read_text())


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("functorch")
    ours = _run(str(REPO / ".venv/bin/python"), tmp, "ours")
    ref = _run((REPO / "build/ref-python").read_text().strip(), tmp, "ref")
    return ours, ref


def test_values_agree(sides):
    (ours, _), (ref, _) = sides
    assert len(ref) > 200
    assert disagreements(ours, ref) == []


def test_errors_agree(sides):
    (_, ours), (_, ref) = sides
    assert {k: ours.get(k) for k in ref} == ref


def test_comparator_rejects_a_small_change(sides):
    (ours, _), (ref, _) = sides
    hurt = dict(ours)
    key = "psg_mlp.0.weight"
    hurt[key] = hurt[key] * (1 + 1e-4)
    assert disagreements(hurt, ref) == [f"{key}: differs by {np.abs(hurt[key] - ref[key]).max():.3g}"]
    hurt = dict(ours)
    hurt["reductions.6"] = hurt["reductions.6"] + 1  # an argmax index
    assert disagreements(hurt, ref) == ["reductions.6: values differ"]
    hurt = dict(ours)
    hurt["views.0#rg"] = ~hurt["views.0#rg"]
    assert disagreements(hurt, ref) == ["views.0#rg: values differ"]


STATE = r"""
import torch
from torch.func import vmap
C = torch._C
seen = {}
def f(a):
    seen["batched"] = C._functorch.is_batchedtensor(a)
    seen["shape"] = tuple(a.shape)
    seen["level"] = C._functorch.maybe_get_level(a)
    seen["depth"] = C._functorch.get_dynamic_layer_stack_depth()
    try:  # a kernel never takes a batched tensor as data
        C._tn_launch("add.Tensor", (a, a, 1), (torch.empty(3),))
        seen["kernel"] = "ran"
    except RuntimeError as e:
        seen["kernel"] = str(e)[:14]
    return a * 2
vmap(f)(torch.ones(4, 3))
try:
    vmap(lambda a: a.sum().item())(torch.ones(4, 3))
except RuntimeError:
    pass
seen["depth_after"] = C._functorch.get_dynamic_layer_stack_depth()
x = torch.ones(2)
seen["plain_after"] = (C._functorch.is_batchedtensor(x + 1), (x + 1).tolist())
print(seen)
"""


def test_batched_tensor_state_and_cleanup():
    p = subprocess.run([str(REPO / ".venv/bin/python"), "-c", STATE], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    seen = eval(p.stdout.strip())  # noqa: S307 - our own program's dict literal
    assert seen == {"batched": True, "shape": (3,), "level": 1, "depth": 1, "kernel": "vmap: internal",
                    "depth_after": 0, "plain_after": (False, [2.0, 2.0])}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

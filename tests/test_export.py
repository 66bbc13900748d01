"""torch.export, torch.fx, FakeTensorMode, torch.onnx and torch.compile against upstream.

tests/programs/export_cases.py exports a Linear, an MLP, a CNN (eval and train: batch norm's
buffer updates), a module with buffers and keyword inputs, a BERT, a GPT-2, a T5 encoder, a
RoBERTa, a Llama prefill and a Llama decode step against a KV cache; decomposes some with
`run_decompositions()` (functionalization: in-place updates, through views too, become functional
operators); runs torch.func.functionalize under make_fx; exports some to ONNX with `torch.onnx.export(dynamo=True)` and runs them on ONNX
Runtime; saves and loads one; traces with torch.fx and make_fx on fake tensors, runs modules under
FakeTensorMode and torch.compile; on ours and on the reference torch in its own process. Each
exported graph (every node's op, target and output shape and dtype), signature and ONNX operator
list must equal upstream's, every array (ep.module()'s outputs, eager and ONNX Runtime outputs)
must agree within 1e-5 of its largest magnitude, and every refusal must be upstream's exception
type and message. About 50 s."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from program_json import array_disagreements as disagreements

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "export_cases.py"

# Where ours differs from upstream, and why (docs/export.md). Each entry is checked to be the
# only difference, so a new one fails the test.
KNOWN = {
    # dynamic shapes: torchnative's tensors have concrete sizes, so a dimension marked dynamic
    # is refused by name (upstream exports a graph with a symbolic batch size)
    "export_dynamic_shapes": "refused",
}


def _run(python, tmp, tag):
    report, arrays = tmp / f"{tag}.json", tmp / f"{tag}.npz"
    p = subprocess.run([python, str(PROGRAM), str(report), str(arrays)], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(report.read_text()), dict(np.load(arrays))


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    ours = _run(str(REPO / ".venv/bin/python"), tmp, "ours")
    ref = _run((REPO / "build/ref-python").read_text().strip(), tmp, "ref")
    return ours, ref


def _outcome(r):
    """What must agree: the result, or the exception's type and message (not where it was raised)."""
    return {k: v for k, v in r.items() if k != "where"} if isinstance(r, dict) and "error" in r else r


def case_differences(ours, ref):
    bad = {}
    for name, want in ref.items():
        got = ours.get(name)
        if _outcome(got) != _outcome(want):
            bad[name] = (got, want)
    return bad


def extra_nodes(got, want):
    """The targets of the nodes ours has beyond upstream's, if that is the whole difference."""
    g, w = list(got["graph"]), list(want["graph"])
    extra = []
    for node in g:
        if node in w:
            w.remove(node)
        else:
            extra.append(node[1])
    return extra if not w and {k: v for k, v in got.items() if k != "graph"} == \
        {k: v for k, v in want.items() if k != "graph"} else None


def test_graphs_signatures_and_refusals_agree(sides):
    (ours, _), (ref, _) = sides
    assert len(ref) >= 32
    bad = case_differences(ours, ref)
    for name, why in KNOWN.items():
        assert name in bad, f"{name} now agrees with upstream: drop it from KNOWN"
        got, want = bad.pop(name)
        if why == "refused":
            assert got.get("error") == "NotImplementedError" and "torchnative" in got["message"], got
        else:
            assert extra_nodes(got, want) and set(extra_nodes(got, want)) == {why}, (got, want)
    assert bad == {}


def test_values_agree(sides):
    (_, ours), (_, ref) = sides
    refused = tuple(f"{name}." for name, why in KNOWN.items() if why == "refused")
    ref = {k: v for k, v in ref.items() if not k.startswith(refused)}
    assert len(ref) > 15
    assert disagreements(ours, ref) == []


def test_exported_programs_match_eager_on_ours(sides):
    (_, arrays), _ = sides
    outs = [k for k in arrays if ".out" in k and k.replace(".out", ".eager") in arrays]
    assert len(outs) >= 8
    for k in outs:
        np.testing.assert_allclose(arrays[k], arrays[k.replace(".out", ".eager")], rtol=0, atol=1e-6, err_msg=k)


def test_comparators_can_fail(sides):
    (ours, arrays), (ref, ref_arrays) = sides
    hurt = json.loads(json.dumps(ours))
    hurt["mlp"]["graph"][-2][1] = "aten.gelu.default"  # another operator in one node
    assert "mlp" in case_differences(hurt, ref)
    hurt = json.loads(json.dumps(ours))
    hurt["export_data_dependent_refused"]["error"] = "RuntimeError"
    assert "export_data_dependent_refused" in case_differences(hurt, ref)
    assert extra_nodes({"graph": [["a", "x", 1], ["b", "y", 2]]}, {"graph": [["a", "x", 1]]}) == ["y"]
    assert extra_nodes({"graph": [["a", "x", 1]]}, {"graph": [["a", "z", 1]]}) is None
    hurt = dict(arrays)
    hurt["mlp.out.0" if "mlp.out.0" in hurt else "mlp.out"] = hurt.get("mlp.out", hurt.get("mlp.out.0")) * (1 + 1e-4)
    assert disagreements(hurt, ref_arrays)


COMPILE = r"""
import warnings, torch
m = torch.nn.Linear(3, 2)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    f = torch.compile(m)
    a = f(torch.ones(1, 3)); b = f(torch.ones(1, 3))
    g = torch.compile(lambda x: x.sin(), fullgraph=True, backend="aot_eager")
    g(torch.ones(2))
    torch._dynamo.reset()  # what tests and notebooks call between compiles
    h = torch.compile(m, mode="reduce-overhead", dynamic=True)
    assert (h(torch.ones(1, 3)) == a).all() and h._orig_mod is m
said = [str(x.message) for x in w if "torchnative runs this function eagerly" in str(x.message)]
print(len(said), "PEP 523" in said[0], bool((a == m(torch.ones(1, 3))).all()), torch.compiler.is_compiling(),
      torch._C._dynamo.eval_frame.get_eval_frame_callback() is None)
"""


def test_compile_runs_eagerly_with_one_warning():
    p = subprocess.run([str(REPO / ".venv/bin/python"), "-c", COMPILE], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["1", "True", "True", "False", "True"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

"""The npu backend (backends/npu): lazy capture into ONNX graphs run by ONNX Runtime.

Programs run in a fresh interpreter (backends are discovered at `import torch`). Small functions
of views, in-place operators, reductions and indexing run on npu and, under upstream torch 2.13.0
(the oracle's interpreter), on cpu: the results must be equal elementwise. What else the tests
hold: a pending graph is flushed exactly when memory must be right (a copy to the host, a copy
into a block the graph reads, a free), sessions are cached by structure, eager mode
(TORCHNATIVE_NPU_EAGER=1) equals lazy mode, an operator ONNX Runtime rejects runs on cpu (counted)
or is refused by name with TORCHNATIVE_NPU_NO_FALLBACK=1, and the results change when a fault is
injected into one kernel. Skips, saying why, where torchnative-npu is not installed."""

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from plugin_dists import run_python

pytestmark = pytest.mark.runtime
REPO = Path(__file__).resolve().parents[1]

PRELUDE = """
import json, sys, torch
from torchnative_core.plugins import RECORDS
rec = RECORDS.get("npu")
if rec is None or rec.status != "ok":
    print(json.dumps({"skip": f"npu: {rec.status}: {rec.reason}" if rec else "npu: not installed"}))
    sys.exit(0)
import torchnative, torchnative_npu as npu
"""

# The same functions on npu (ours) and on cpu under upstream torch 2.13.0 (the oracle's
# interpreter): results must be equal elementwise.
FUNCS = r"""
def views(dev):
    a = torch.zeros(4, 6, device=dev)
    a[1:3, ::2].add_(torch.ones(2, 3, device=dev))          # in place on a strided view
    a.t()[5].mul_(3.0)                                     # in place on a column (stride 6)
    a[0].copy_(torch.arange(6.0, device=dev))              # copy_ into a row
    a[3, 1:5] = torch.tensor([1.5, 2.5, 3.5, 4.5], device=dev)
    b = a.t().contiguous() * 2                             # a transposed read
    c = a[:, 1].unsqueeze(0).expand(3, 4) + 1              # an expanded read
    return [a, b, c]

def chain(dev):
    x = torch.arange(12.0, device=dev).reshape(3, 4)
    y = (x * 2 + 1).softmax(-1)
    z = torch.where(y > 0.2, y, torch.zeros_like(y))
    return [z, z.sum(0), x.t() @ x, x.max(1).values, x.amax(0)]

def indexing(dev):
    x = torch.arange(20.0, device=dev).reshape(4, 5)
    i = torch.tensor([2, 0, 3], device=dev)
    z = torch.arange(24.0, device=dev).reshape(2, 3, 4)
    got = [x[i], x[:, i], x[i, i], x[1:, [0, 4]], x[x > 7.0], z[:, [0, 2], [1, 3]], z[[1, 0], :, [2, 3]]]
    x[1:3, [0, 2]] = torch.tensor([[-1.0, -2.0], [-3.0, -4.0]], device=dev)   # index_put_
    x[x > 15] = 0.5
    y = torch.zeros(3, 4, device=dev)
    y.index_put_((torch.tensor([0, 0, 2], device=dev),), torch.ones(3, 4, device=dev), accumulate=True)
    return got + [x, y]

FUNCS = {"views": views, "chain": chain, "indexing": indexing}
"""

REFERENCE = "import json, sys, torch\n" + FUNCS + r"""
print(json.dumps({k: [t.tolist() for t in f("cpu")] for k, f in FUNCS.items()}))
"""

SEMANTICS = PRELUDE + FUNCS + r"""
out = {}
for name, f in FUNCS.items():
    got = f("npu")
    out[name] = {"devices": sorted({str(t.device) for t in got}), "npu": [t.cpu().tolist() for t in got]}

# flushes happen at the copy out, not before
npu.reset_stats()
x = torch.ones(3, device="npu")
y = (x + 1) * 3
before = npu.stats()["flushes"]
host = y.cpu()
out["flush"] = {"before": before, "after": npu.stats()["flushes"], "value": host.tolist(),
                "reasons": npu.stats()["flush_reasons"]}

# a block the graph reads from memory is freed before the flush; a block written by the graph is
# freed before the flush; a block the graph reads is overwritten from the host before the flush
a = torch.full((3,), 2.0).to("npu")
npu.flush()
b = a * 5           # reads a's memory at the flush
del a
t = torch.ones(3, device="npu") * 7   # symbolic
u = t - 1
del t
filler = [torch.full((3,), 9.0).to("npu") for _ in range(4)]   # reuse freed memory if it can
w = torch.full((3,), 1.0).to("npu")
npu.flush()
v = w + 1           # reads w's memory
w.copy_(torch.full((3,), 100.0))   # host -> w: the pending read must see 1.0
out["free"] = {"b": b.cpu().tolist(), "u": u.cpu().tolist(), "v": v.cpu().tolist(), "w": w.cpu().tolist()}

# the same computation twice: one session, then a cache hit
def step(x):
    return ((x @ x.t()).softmax(-1) * 3).sum(1)
npu.reset_stats()
r1 = step(torch.arange(16.0).reshape(4, 4).to("npu") / 16).cpu()
s1 = dict(npu.stats())
r2 = step(torch.arange(16.0).reshape(4, 4).to("npu") / 16).cpu()
s2 = npu.stats()
out["cache"] = {"created": [s1["sessions_created"], s2["sessions_created"]], "hits": s2["session_hits"],
                "same": r1.tolist() == r2.tolist()}
out["fallbacks"] = torchnative.fallback_report()
out["provider"] = npu.provider()
print(json.dumps(out))
"""

MODES = PRELUDE + r"""
torch.manual_seed(0)
x = torch.randn(5, 8)
w = torch.randn(8, 8)
xs = x.to("npu"); ws = w.to("npu")
h = torch.nn.functional.gelu(xs @ ws.t() + 0.5)
h = torch.nn.functional.layer_norm(h, (8,))
h[:, 2:4] = h[:, 2:4] * 2
r = (h.softmax(-1) + h.tanh()).mean(0)
print(json.dumps({"r": r.cpu().tolist(), "stats": npu.stats()}))
"""

REJECTED = PRELUDE + r"""
a = torch.tensor([7, -7, 9], device="npu")
b = torch.tensor([2, 2, -4], device="npu")
q = (a // b).cpu().tolist()
print(json.dumps({"q": q, "report": torchnative.fallback_report(), "stats": npu.stats()}))
"""


def _run(program, env=None):
    r = run_python(["-c", textwrap.dedent(program)], env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    return out


@pytest.fixture(scope="module")
def semantics():
    return _run(SEMANTICS)


@pytest.fixture(scope="module")
def reference():
    ref = (REPO / "build/ref-python").read_text().strip()
    r = subprocess.run([ref, "-c", REFERENCE], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["views", "chain", "indexing"])
def test_npu_agrees_with_upstream(semantics, reference, name):
    assert semantics[name]["devices"] == ["npu:0"]
    assert semantics[name]["npu"] == reference[name]


def test_in_place_on_views_writes_the_right_elements(semantics):
    a = semantics["views"]["npu"][0]
    assert a[0] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert a[1] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0] and a[3] == [0.0, 1.5, 2.5, 3.5, 4.5, 0.0]


def test_the_graph_runs_when_data_leaves_the_device(semantics):
    f = semantics["flush"]
    assert f["before"] == 0 and f["after"] == 1 and f["value"] == [6.0, 6.0, 6.0]
    assert f["reasons"] == {"copy to host": 1}


def test_free_and_host_copies_while_a_graph_is_pending(semantics):
    assert semantics["free"] == {"b": [10.0] * 3, "u": [6.0] * 3, "v": [2.0] * 3, "w": [100.0] * 3}


def test_sessions_are_cached_by_structure(semantics):
    c = semantics["cache"]
    assert c["created"][0] >= 1 and c["created"][1] == c["created"][0] and c["hits"] >= 1 and c["same"]


def test_nothing_fell_back(semantics):
    assert semantics["fallbacks"] == {}
    assert semantics["provider"].endswith("ExecutionProvider")


def test_eager_mode_equals_lazy_mode():
    lazy = _run(MODES)
    eager = _run(MODES, env={"TORCHNATIVE_NPU_EAGER": "1"})
    assert lazy["r"] == eager["r"]
    # eager runs one graph per kernel; lazy ran them all in one
    assert lazy["stats"]["flushes"] == 1 and eager["stats"]["flushes"] == eager["stats"]["kernels"] > 10


def test_an_operator_the_runtime_rejects_runs_on_cpu_and_is_counted():
    out = _run(REJECTED)
    assert out["q"] == [3, -4, -3]  # floor division, as upstream
    assert out["report"] == {"npu": {"aten.div.Tensor_mode": 1}}
    assert out["stats"]["rejected"] == {"div.Tensor_mode": 1}


def test_rejected_operator_is_refused_by_name_without_fallback():
    r = run_python(["-c", textwrap.dedent(REJECTED)], env={"TORCHNATIVE_NPU_NO_FALLBACK": "1"})
    if '"skip"' in r.stdout:
        pytest.skip(r.stdout)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: \"div.Tensor_mode\" not implemented for 'Long' on device 'npu'"), last


def test_comparison_fails_on_an_injected_fault(semantics):
    """The checks above can fail: with Add lowered as Sub, the views no longer agree and the
    flushed value is (1 - 1) * 3."""
    faulty = SEMANTICS.replace("import torchnative, torchnative_npu as npu", """import torchnative, torchnative_npu as npu
import torchnative_npu.kernels as K
_op = K.op
K.op = lambda g, name, inputs, code, **a: _op(g, "Sub" if name == "Add" else name, inputs, code, **a)""")
    out = _run(faulty)
    assert out["views"]["npu"] != semantics["views"]["npu"] and out["flush"]["value"] == [0.0] * 3


TRAIN = PRELUDE + r"""
import copy
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16), torch.nn.Linear(16, 3))
x, y = torch.randn(5, 8), torch.tensor([0, 2, 1, 0, 1])

def train(model, dev):
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item(), [p.detach().cpu() for p in model.parameters()]

lc, pc = train(copy.deepcopy(m), "cpu")
ln, pn = train(copy.deepcopy(m), "npu")
print(json.dumps({"loss": [lc, ln], "max_param_diff": max(float((a - b).abs().max()) for a, b in zip(pc, pn)),
                  "fallbacks": torchnative.fallback_report()}))
"""


def test_training_steps_on_npu_follow_cpu():
    """Backward formulas are operators like any other: three SGD steps of an MLP (linear, gelu,
    layer_norm, cross entropy) run captured on npu and land within 1e-6 of the cpu backend's."""
    out = _run(TRAIN)
    assert abs(out["loss"][0] - out["loss"][1]) <= 1e-6 and out["max_param_diff"] <= 1e-6, out
    assert out["fallbacks"] == {}

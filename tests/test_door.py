"""The single door, checked against upstream in separate processes: the operator sequence a
TorchDispatchMode observes, and refusal by name for an operator without a kernel."""

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = REPO / ".venv/bin/python"

MODE_PROGRAM = r"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
seen = []
class Log(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        seen.append(str(func)); return func(*args, **(kwargs or {}))
with Log():
    y = torch.nn.functional.linear(torch.ones(2, 3), torch.ones(4, 3), torch.ones(4))
    z = (y * 2 + 1).sum(0)
    w = y[0].softmax(-1)
    torch.cat([z, w]).view(2, 4).transpose(0, 1).contiguous()
print("\n".join(seen))
"""


def _ref_python():
    marker = REPO / "build/ref-python"
    return marker.read_text().strip()


def _run(python, program):
    r = subprocess.run([str(python), "-c", program], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


@pytest.mark.runtime
def test_dispatch_mode_sees_upstreams_operator_sequence():
    ours, ref = _run(OURS, MODE_PROGRAM), _run(_ref_python(), MODE_PROGRAM)
    assert ours == ref


def test_sequence_comparison_can_fail():
    # the comparison above is list equality: a composite reported instead of its parts differs
    assert ["aten.linear.default"] != ["aten.t.default", "aten.addmm.default"]


@pytest.mark.runtime
def test_missing_kernel_refuses_by_name():
    # an int4-quantised matmul: an operator no backend here implements (cholesky served until it got one)
    program = ("import torch\ntry:\n    torch.ops.aten._weight_int4pack_mm(torch.ones(2, 2), torch.ones(2, 2), 32, "
               "torch.ones(2, 2))\nexcept NotImplementedError as e:\n    print(e)\n")
    (line,) = _run(OURS, program)
    assert line.startswith("aten._weight_int4pack_mm.default has no kernel for device 'cpu'"), line
    assert "(installed backends: cpu" in line


DECOMP_PROGRAM = r"""
import torch
from torchnative_core.ops import IMPLS
before = "pdist" in IMPLS
y = torch.nn.functional.pdist(torch.arange(6.0).reshape(3, 2))
print(before, "pdist" in IMPLS, y.tolist())
try:
    torch.nn.functional.adaptive_max_pool3d(torch.ones(1, 1, 4, 4, 4), 3)  # the decomposition declines
except NotImplementedError as e:
    print(str(e).split(",")[0])
try:
    torch.nn.functional.pdist(torch.ones(3, 2, requires_grad=True))  # no derivative of ours
except NotImplementedError as e:
    print(str(e).split(";")[0])
"""


def test_upstream_decomposition_runs_where_the_core_has_no_implementation():
    # pdist: the core has no implementation; upstream's torch._decomp entry runs, and is kept
    first, declined, with_grad = _run(OURS, DECOMP_PROGRAM)
    assert first == "False True " + str([2.8284270763397217, 5.656854152679443, 2.8284270763397217])
    assert declined == "aten.adaptive_max_pool3d has no kernel for these arguments"
    assert with_grad == "aten.pdist has no kernel or derivative in torchnative"


@pytest.mark.runtime
def test_unknown_operator_is_not_an_attribute():
    program = "import torch\nprint(hasattr(torch.ops.aten, 'definitely_not_an_op'), hasattr(torch.ops.aten, 'add'))"
    assert _run(OURS, program) == ["False True"]

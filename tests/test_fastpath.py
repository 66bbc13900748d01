"""The speed paths of issue 8 change no result: native meta steps (core/src/fastpath.rs) and
binding plans (core/python/torchnative_core/binding/plans.py) against the full Python path.

One interpreter runs every case four ways (plans on/off x fast paths on/off) and describes each
result (values, dtype, shape, strides, storage offset, requires_grad, class, whether it is a view)
or the error it raised (type and message); all four descriptions must be equal. Each case runs
twice per setting, so the second call is served by a recorded plan."""

import functools
import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = REPO / ".venv/bin/python"

PROGRAM = r'''
import json, torch
import torch.nn.functional as F
from torchnative_core.binding import plans
torch.manual_seed(0)
x = torch.randn(3, 4); y = torch.randn(3, 4); row = torch.randn(4); col = torch.randn(3, 1)
i = torch.arange(12).view(3, 4); i32 = i.int(); h = torch.randn(3, 4).half(); b = torch.ones(3, 4).bool()
s0 = torch.tensor(2.5); w = torch.randn(5, 4); bias = torch.randn(5); x3 = torch.randn(2, 3, 4)
g = torch.randn(3, 4, requires_grad=True); e = torch.empty(0, 4); d = torch.randn(3, 4).double()
CASES = {
 "add": lambda: x + y, "add_alpha": lambda: torch.add(x, y, alpha=2), "sub": lambda: x - y, "mul": lambda: x * y,
 "div": lambda: x / y, "div_int": lambda: i / i, "add_int": lambda: i + i, "sub_bool": lambda: b - b,
 "add_bool": lambda: b + b, "bcast_row": lambda: x + row, "bcast_col": lambda: col * x, "bcast_bad": lambda: x + torch.ones(5),
 "scalar_int": lambda: x * 2, "scalar_float": lambda: x + 0.1, "rsub": lambda: 1 - x, "rdiv": lambda: 2 / x,
 "int_scalar": lambda: i * 3, "int_float_scalar": lambda: i * 1.5, "int32_scalar": lambda: i32 + 7,
 "int_div_scalar": lambda: i / 2, "half_scalar": lambda: h * 0.1, "half_half": lambda: h + h, "zero_dim": lambda: x * s0,
 "double": lambda: d - 1, "mixed_dtype": lambda: x + d, "empty": lambda: e + e, "grad": lambda: g * 2 + g,
 "bool_scalar": lambda: x * True, "big_int": lambda: i + 2**40, "huge_int": lambda: i + 2**70,
 "view": lambda: x.view(2, 6), "view_list": lambda: x.view([4, 3]), "view_infer": lambda: x.view(-1),
 "view_bad": lambda: x.t().view(12), "view_badsize": lambda: x.view(5), "view_two_infer": lambda: x.view(-1, -1),
 "view_of_view": lambda: x[1:].view(8), "view_dtype": lambda: x.view(torch.int32), "t": lambda: x.t(), "t1": lambda: row.t(),
 "t3": lambda: x3.t(), "transpose": lambda: x3.transpose(0, -1), "transpose_bad": lambda: x.transpose(0, 2),
 "select": lambda: x[1], "select_neg": lambda: x[-1], "select_oob": lambda: x[3], "select_dim": lambda: x.select(1, 2),
 "select_0d": lambda: s0.select(0, 0), "index_int_tensor": lambda: x[torch.tensor(1)],
 "mm": lambda: x @ w.t(), "mm_bad": lambda: x @ w, "mm_dtype": lambda: x @ d.t(), "matmul_1d": lambda: x @ row,
 "matmul_3d": lambda: x3 @ w.t(), "addmm": lambda: torch.addmm(bias, x, w.t()), "addmm_scale": lambda: torch.addmm(bias, x, w.t(), beta=0.5, alpha=2),
 "linear": lambda: F.linear(x, w), "linear_bias": lambda: F.linear(x, w, bias), "linear_3d": lambda: F.linear(x3, w, bias),
 "linear_3d_nc": lambda: F.linear(x3.transpose(0, 1), w, bias), "linear_1d": lambda: F.linear(row, w, bias),
 "linear_grad": lambda: F.linear(g, w, bias), "pow2": lambda: x.pow(2), "pow2f": lambda: x ** 2.0, "pow2_int": lambda: i ** 2,
 "pow3": lambda: x.pow(3), "pow2_half": lambda: h.pow(2),
 "sum_dim": lambda: x.sum(1, keepdim=True), "zeros_rg": lambda: torch.zeros(2, 3, requires_grad=True), "ones_dtype": lambda: torch.ones(2, dtype=torch.int64),
 "reshape": lambda: x.t().reshape(12), "reshape_view": lambda: x.reshape(2, -1), "reshape_bad": lambda: x.reshape(5, -1),
 "exp": lambda: x.exp(), "rsqrt": lambda: torch.rsqrt(x), "silu": lambda: F.silu(x), "neg": lambda: -x, "neg_bool": lambda: -b,
 "neg_int": lambda: -i, "exp_int": lambda: i.exp(), "relu_half": lambda: h.relu(), "tanh_t": lambda: x.t().tanh(),
 "sigmoid_empty": lambda: e.sigmoid(), "abs_double": lambda: d.abs(), "exp_grad": lambda: g.exp(), "expand": lambda: row.expand(3, 4), "cat": lambda: torch.cat([x, y], 1), "softmax": lambda: x.softmax(-1),
 "add_": lambda: x.clone().add_(y), "add_alpha_": lambda: x.clone().add_(y, alpha=2), "sub_row_": lambda: x.clone().sub_(row),
 "mul_scalar_": lambda: x.clone().mul_(2), "div_float_": lambda: x.clone().div_(0.5), "div_zero_dim_": lambda: x.clone().div_(s0),
 "div_int_": lambda: i.clone().div_(2), "mul_int_float_": lambda: i.clone().mul_(1.5), "add_int_": lambda: i.clone().add_(i),
 "sub_bool_": lambda: b.clone().sub_(b), "mul_half_": lambda: h.clone().mul_(h), "add_bcast_bad_": lambda: col.clone().add_(x),
 "add_mixed_": lambda: d.clone().add_(x), "add_empty_": lambda: e.clone().add_(e), "add_leaf_": lambda: g.add_(1),
 "add_self_": lambda: (lambda t: t.add_(t))(x.clone()), "version_": lambda: (lambda t: (t.mul_(3), t._version)[1])(x.clone()),
 "mean": lambda: x.mean(-1, keepdim=True), "pow2_bool": lambda: x.pow(True), "pow2_double": lambda: d ** 2,
 "pow2_grad": lambda: g.pow(2), "pow2_0d": lambda: s0 ** 2,
 "thr_bwd": lambda: torch.ops.aten.threshold_backward(y, x, 0), "thr_bwd_float": lambda: torch.ops.aten.threshold_backward(y, x, 0.25),
 "thr_bwd_bcast": lambda: torch.ops.aten.threshold_backward(row, x, 0), "thr_bwd_int": lambda: torch.ops.aten.threshold_backward(i, i, 3),
 "thr_bwd_mixed": lambda: torch.ops.aten.threshold_backward(x, d, 0), "thr_bwd_t": lambda: torch.ops.aten.threshold_backward(x.t(), y.t(), 0),
 "relu_grad": lambda: torch.autograd.grad(g.relu().sum(), g)[0],
 "silu_bwd": lambda: torch.ops.aten.silu_backward(y, x), "silu_bwd_bcast": lambda: torch.ops.aten.silu_backward(row, x),
 "silu_bwd_t": lambda: torch.ops.aten.silu_backward(x.t(), y.t()), "silu_bwd_double": lambda: torch.ops.aten.silu_backward(d, d),
 "silu_bwd_mixed": lambda: torch.ops.aten.silu_backward(x, d), "silu_bwd_half": lambda: torch.ops.aten.silu_backward(h, h),
 "silu_bwd_empty": lambda: torch.ops.aten.silu_backward(e, e), "silu_bwd_bad": lambda: torch.ops.aten.silu_backward(x, w),
 "silu_grad": lambda: torch.autograd.grad(F.silu(g).sum(), g)[0],
 "eq": lambda: x == y, "ne_scalar": lambda: x != 0, "lt_int": lambda: i < 3, "ge_int_float": lambda: i >= 2.5,
 "eq_bool": lambda: b == b, "eq_half": lambda: h == h, "gt_bcast": lambda: x > row, "ne_i32_big": lambda: i32 != 2**40,
 "eq_int_true": lambda: i == True, "lt_0d": lambda: s0 < 1, "ne_": lambda: x.clone().ne_(0), "lt_mixed": lambda: x < d,
 "gt_empty": lambda: e > 0, "le_t": lambda: x.t() <= y.t(), "eq_scalar_op": lambda: torch.ops.aten.eq.Scalar(x, 0.5),
 "gt_grad": lambda: g > 0, "ge_huge": lambda: i >= 2**70, "lt_double": lambda: d < 0.1, "eq_i32_i32": lambda: i32 == i32,
 "cmp_bad_shape": lambda: x < torch.ones(5), "ne_int_float_tensor": lambda: i != x,
 "cat0": lambda: torch.cat([x, y]), "cat_neg": lambda: torch.cat((x, y, x), -2), "cat_t": lambda: torch.cat([x.t(), y.t()], 1),
 "cat_mixed": lambda: torch.cat([x, d]), "cat_ranks": lambda: torch.cat([x, x3]), "cat_0d": lambda: torch.cat([s0, s0]),
 "cat_legacy_empty": lambda: torch.cat([x, torch.empty(0)]), "cat_empty": lambda: torch.cat([e, e]),
 "cat_sizes": lambda: torch.cat([x, w], 1), "cat_dim_oob": lambda: torch.cat([x, y], 2), "cat_one": lambda: torch.cat([x3], 2),
 "cat_int": lambda: torch.cat([i, i], 1), "cat_grad": lambda: torch.cat([g, x]), "cat_list_empty": lambda: torch.cat([]),
 "cat_1d_empty": lambda: torch.cat([row, torch.empty(0), row]),
 "linear_3d_nobias": lambda: F.linear(x3, w), "linear_4d": lambda: F.linear(x3.view(2, 3, 1, 4), w),
 "linear_3d_nc_nobias": lambda: F.linear(x3.transpose(0, 1), w), "linear_0d": lambda: F.linear(s0, w),
 "linear_bad": lambda: F.linear(x3, w.t()), "matmul_4d": lambda: x3.view(1, 2, 3, 4) @ w.t(),
 "matmul_3d_k0": lambda: torch.empty(2, 3, 0) @ torch.empty(0, 5), "matmul_3d_grad": lambda: g.view(1, 3, 4) @ w.t(),
 "mean_dims": lambda: x3.mean([0, 2]), "mean_all_list": lambda: x3.mean([]), "mean_neg": lambda: x3.mean((-1,), True),
 "mean_dup": lambda: x.mean([1, -1]), "mean_oob": lambda: x.mean(2), "mean_int": lambda: i.mean(0), "mean_half": lambda: h.mean(1),
 "mean_dtype": lambda: x.mean(0, dtype=torch.float64), "mean_empty": lambda: e.mean(1), "mean_0d": lambda: s0.mean(0),
 "mean_grad": lambda: g.mean(-1), "mean_double_t": lambda: d.t().mean(0, keepdim=True), "mean_none": lambda: x.mean(None),
 "getitem_slices": lambda: x3[..., 1:3], "getitem_neg": lambda: x3[:, -2:, ::2], "getitem_none": lambda: x3[None, 0, ..., 1:],
 "getitem_big": lambda: x[1:10**6], "getitem_step0": lambda: x[::0], "getitem_many": lambda: x[0, 0, 0],
 "getitem_bool_t": lambda: x[torch.ones(3, 4).bool()], "getitem_bool_t2": lambda: x3[torch.ones(2, 3).bool(), 1:],
 "getitem_u8": lambda: x[torch.ones(3, dtype=torch.uint8)], "getitem_bool_many": lambda: x[torch.ones(3, 4).bool(), 0],
 "slice_op": lambda: torch.ops.aten.slice.Tensor(x, 1, -3, None, 2), "slice_op_step0": lambda: torch.ops.aten.slice.Tensor(x, 1, 0, 2, 0),
 "slice_op_0d": lambda: torch.ops.aten.slice.Tensor(s0), "slice_op_hugestep": lambda: torch.ops.aten.slice.Tensor(x, 0, 0, 3, 2**62),
 "slice_op_dim": lambda: torch.ops.aten.slice.Tensor(x, 5), "slice_grad": lambda: g[1:, :2], "slice_empty": lambda: x[5:],
 "slice_view_of_view": lambda: x[1:][:, 1:3],
 "sum_dims": lambda: x3.sum([0, 2]), "sum_keep": lambda: x3.sum(-1, keepdim=True), "sum_none": lambda: x.sum(dim=None),
 "sum_empty_list": lambda: x3.sum([]), "sum_int": lambda: i.sum(1), "sum_bool": lambda: b.sum(0), "sum_half": lambda: h.sum(1),
 "sum_dtype": lambda: x.sum(1, dtype=torch.float64), "sum_empty": lambda: e.sum(1), "sum_dup": lambda: x.sum([0, -2]),
 "sum_oob": lambda: x.sum(3), "sum_grad": lambda: g.sum(0), "sum_t": lambda: x.t().sum(1), "sum_0d": lambda: s0.sum(0),
 "unsqueeze": lambda: x.unsqueeze(1), "unsqueeze_end": lambda: x.unsqueeze(-1), "unsqueeze_t": lambda: x.t().unsqueeze(0),
 "unsqueeze_0d": lambda: s0.unsqueeze(0), "unsqueeze_oob": lambda: x.unsqueeze(3), "unsqueeze_grad": lambda: g.unsqueeze(2),
 "unsqueeze_slice": lambda: x[:, 1:3].unsqueeze(1),
 "emb": lambda: F.embedding(torch.tensor([[0, 4], [2, 2]]), w), "emb_double": lambda: F.embedding(torch.tensor([1]), w.double()),
 "emb_i32": lambda: F.embedding(torch.tensor([1, 3], dtype=torch.int32), w), "emb_oob": lambda: F.embedding(torch.tensor([5]), w),
 "emb_neg": lambda: F.embedding(torch.tensor([-1]), w), "emb_0d": lambda: F.embedding(torch.tensor(3), w),
 "emb_empty": lambda: F.embedding(torch.empty(0, dtype=torch.long), w), "emb_t": lambda: F.embedding(torch.tensor([0, 1]), w.t()),
 "emb_int_w": lambda: F.embedding(torch.tensor([0, 1]), i), "emb_pad": lambda: F.embedding(torch.tensor([0, 1]), w, padding_idx=1),
 "emb_grad": lambda: F.embedding(torch.tensor([0, 0, 3]), w.clone().requires_grad_()),
 "index_add_": lambda: torch.zeros(5, 4).index_add_(0, torch.tensor([0, 3, 0]), x),
 "index_add_alpha_": lambda: torch.ones(4, 5).index_add_(1, torch.tensor([4, 1, 1]), x.t(), alpha=0.5),
 "index_add_nc_": lambda: torch.zeros(4, 5).t().index_add_(0, torch.tensor([4, 1, 1]), x),
 "index_add_oob_": lambda: torch.zeros(5, 4).index_add_(0, torch.tensor([0, 5, 1]), x),
 "index_add_neg_": lambda: torch.zeros(5, 4).index_add_(0, torch.tensor([0, -1, 1]), x),
 "index_add_1d_oob_": lambda: torch.zeros(5).index_add_(0, torch.tensor([0, 7, 1]), row[:3]),
 "index_add_self_src_": lambda: (lambda t: t.index_add_(0, torch.tensor([1, 0, 2]), t))(x.clone()),
 "index_add_i32_": lambda: torch.zeros(5, 4).index_add_(0, torch.tensor([0, 3, 0], dtype=torch.int32), x),
 "index_add_dtype_": lambda: torch.zeros(5, 4).index_add_(0, torch.tensor([0, 3, 0]), d),
 "index_add_grad_": lambda: torch.zeros(5, 4).index_add_(0, torch.tensor([0, 3, 0]), g),
 "emb_backward": lambda: (lambda p: torch.autograd.grad(F.embedding(torch.tensor([[0, 3], [3, 1]]), p).pow(2).sum(), p)[0])(
     w.clone().requires_grad_()),
}
def describe(f):
    try:
        r = f()
    except Exception as ex:
        return {"error": type(ex).__name__, "message": str(ex)}
    if isinstance(r, torch.Tensor):
        return {"values": r.detach().double().tolist() if r.dtype != torch.bool else r.tolist(), "dtype": str(r.dtype),
                "shape": list(r.shape), "stride": list(r.stride()), "offset": r.storage_offset(),
                "requires_grad": r.requires_grad, "class": type(r).__name__, "is_view": r._base is not None}
    return {"other": repr(r)}
out = {}
for fast in (True, False):
    torch._C._tn_fast_paths_enabled(fast)
    for plan in (True, False):
        plans.ENABLED[0] = plan
        out[f"fast={fast},plans={plan}"] = {n: [describe(f), describe(f)] for n, f in CASES.items()}
# which cases the native steps took: the Python meta steps they replace, counted
import torchnative_core.ops.elementwise.arithmetic as E, torchnative_core.ops.shape.views as V
steps = []
ob, ov, ou = E.binary, V._view, E.unary
E.binary = lambda *a, **k: (steps.append("binary"), ob(*a, **k))[1]
E.unary = lambda *a, **k: (steps.append("unary"), ou(*a, **k))[1]
V._view = lambda *a, **k: (steps.append("view"), ov(*a, **k))[1]
plans.ENABLED[0] = True
for fast in (True, False):
    torch._C._tn_fast_paths_enabled(fast)
    steps.clear()
    for n in ("add", "scalar_int", "bcast_row", "view", "select", "t", "linear_bias", "exp", "neg", "reshape_view"):
        CASES[n]()
    out[f"python_steps_fast={fast}"] = list(steps)
print(json.dumps(out))
'''


def differences(runs: dict) -> list:
    """(setting, case) pairs whose description differs from the full path's."""
    base = runs["fast=False,plans=False"]
    return [(setting, case) for setting, res in runs.items() if setting.startswith("fast=")
            for case in base if res[case] != base[case]]


@functools.lru_cache(maxsize=1)
def _run() -> dict:
    r = subprocess.run([str(OURS), "-c", PROGRAM], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_fast_paths_and_plans_change_nothing():
    runs = _run()
    assert len([k for k in runs if k.startswith("fast=")]) == 4
    assert differences(runs) == []
    # with the fast paths on, those cases ran no Python meta step; off, they did
    assert runs["python_steps_fast=True"] == []
    assert {"binary", "view", "unary"} <= set(runs["python_steps_fast=False"])
    # the cases reach the paths they are meant to: some succeed, some refuse
    base = runs["fast=False,plans=False"]
    assert sum("error" in v[0] for v in base.values()) >= 8
    assert sum("values" in v[0] for v in base.values()) >= 50


def test_comparison_catches_a_wrong_stride_or_value():
    runs = _run()
    for field, bad in (("stride", [99, 1]), ("values", [[0.0]])):
        faulty = json.loads(json.dumps(runs))
        faulty["fast=True,plans=True"]["view"][1][field] = bad
        assert differences(faulty) == [("fast=True,plans=True", "view")]

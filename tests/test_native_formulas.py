"""The native backward formulas (core/src/formulas.rs) against the Python formulas they stand in
for: the same gradients to the bit, the native path taken where it applies, and the Python one
(with its errors) wherever it does not — a saved tensor modified in place, saved-tensor hooks,
`create_graph`, a scale other than 1."""

from __future__ import annotations

import pytest
import torch

C = torch._C


def _ramp(*shape, scale=0.37):
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float32) * scale) % 2.3 - 1.1).view(*shape)


def _leaf(*shape, scale=0.37):
    return _ramp(*shape, scale=scale).requires_grad_()


def _programs():
    """name -> function of fresh leaves returning (loss, leaves). Each uses operators with a
    native formula in the forms a model records them."""

    def linear():
        x, w, b = _leaf(5, 4), _leaf(3, 4, scale=0.29), _leaf(3, scale=0.11)
        return torch.nn.functional.linear(x, w, b).relu().sum(), [x, w, b]

    def mm_column_major():
        a, b = _leaf(6, 5), _ramp(4, 5, scale=0.21).requires_grad_()
        return (a.t().t() @ b.t()).pow(2).sum(), [a, b]

    def mm_transposed_first():
        a, b = _ramp(5, 6).requires_grad_(), _leaf(5, 4, scale=0.23)
        return (a.t() @ b).mul(_ramp(6, 4, scale=0.5)).sum(), [a, b]

    def residual_arithmetic():
        x, y = _leaf(4, 8), _leaf(8, scale=0.17)
        h = (x * y - x.neg() + y) * x
        return (h - y).sum(), [x, y]

    def views_and_transposes():
        x = _leaf(2, 3, 4)
        h = x.view(6, 4).t().transpose(0, 1).reshape(2, 12)
        return (h * _ramp(2, 12)).sum(), [x]

    def slices_and_cat():
        x = _leaf(3, 10)
        rot = torch.cat([-x[:, 5:], x[:, :5]], -1)
        return (rot * x + x[:, 2:7].sum()).sum(), [x]

    def attention_shapes():
        q, k = _leaf(2, 4, 8), _leaf(2, 4, 8, scale=0.19)
        s = torch.matmul(q, k.transpose(1, 2)).view(2, 16)
        return (s * s).sum(), [q, k]

    def rms_norm_pieces():
        # LlamaRMSNorm's arithmetic: pow(2), mean over the last dim kept, rsqrt
        x, w = _leaf(2, 3, 8), _leaf(8, scale=0.13)
        var = x.pow(2).mean(-1, keepdim=True)
        return (w * (x * torch.rsqrt(var + 1e-6))).sum(), [x, w]

    def means_and_powers():
        x = _leaf(3, 4, 5)
        h = x.mean([0, 2]).pow(3).sum() + x.mean(1).pow(1.5).sum() + x.mean(-1).pow(-2).sum()
        return h + x.pow(0).sum() + x.mean([]).sum() + x.mean((2, 0), keepdim=True).sum(), [x]

    return {f.__name__: f for f in (linear, mm_column_major, mm_transposed_first, residual_arithmetic,
                                     views_and_transposes, slices_and_cat, attention_shapes, rms_norm_pieces,
                                     means_and_powers)}


def _grads(program, native):
    prev = C._tn_set_native_formulas(native)
    try:
        before = C._tn_native_formula_runs()
        loss, leaves = program()
        loss.backward()
        return [x.grad for x in leaves], C._tn_native_formula_runs() - before
    finally:
        C._tn_set_native_formulas(prev)


def _same_bits(a, b):
    return a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype and \
        bool((a.view(torch.int32) == b.view(torch.int32)).all())


@pytest.mark.parametrize("name", sorted(_programs()))
def test_native_formulas_agree_with_python_bit_for_bit(name):
    program = _programs()[name]
    native, runs = _grads(program, True)
    python, none = _grads(program, False)
    assert runs > 0 and none == 0
    for a, b in zip(native, python):
        assert _same_bits(a, b), (name, a, b)


def test_comparator_catches_one_ulp():
    a = _ramp(4)
    b = a.clone()
    b.view(torch.int32)[2] += 1
    assert _same_bits(a, a.clone()) and not _same_bits(a, b)
    assert not _same_bits(a, a.view(2, 2).t().reshape(4))  # same values, other order


def test_modified_saved_tensor_takes_the_python_formula_and_its_error():
    w = _leaf(3, 3)
    x = _ramp(3, 3)
    y = x @ w
    x.add_(1)  # x is saved for w's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensor_hooks_and_create_graph_use_the_python_formulas():
    calls = []
    x = _leaf(4, 4)

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()
    before = C._tn_native_formula_runs()
    (g,) = torch.autograd.grad(y, x)
    assert "unpack" in calls and torch.equal(g, 2 * x.detach())
    (g2,) = torch.autograd.grad((x * x).sum(), x, create_graph=True)
    assert g2.requires_grad
    # the sum node has no native formula; the mul nodes above went through Python
    assert C._tn_native_formula_runs() == before


def test_scaled_addmm_and_add_take_the_python_formula():
    b, m1, m2 = _leaf(3), _leaf(2, 4), _leaf(4, 3)
    out = torch.addmm(b, m1, m2, beta=0.5, alpha=2.0) + torch.add(b, b, alpha=3)
    out.sum().backward()
    ref = [t.detach().clone().requires_grad_() for t in (b, m1, m2)]
    prev = C._tn_set_native_formulas(False)
    try:
        o2 = torch.addmm(ref[0], ref[1], ref[2], beta=0.5, alpha=2.0) + torch.add(ref[0], ref[0], alpha=3)
        o2.sum().backward()
    finally:
        C._tn_set_native_formulas(prev)
    for a, r in zip((b, m1, m2), ref):
        assert _same_bits(a.grad, r.grad)

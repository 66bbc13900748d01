"""Forward-mode AD (`torch.autograd.forward_ad`, `torch.func.jvp`/`jacfwd`/`hessian`) by the
double-vjp identity instead of per-operator tangent formulas.

A dual tensor is its primal made a fresh input of the core's autograd graph; the tangent is kept
beside it. Operators run and record as usual. `unpack_dual(y)` then computes the tangent
J·t = d/du <J^T u, t> with a dummy cotangent u: one backward to get J^T u as a function of u
(create_graph), one backward of that against the tangents. Every derivative formula is linear
in its incoming gradient and composes through the door, so the second backward exists wherever
the first does: all differentiable operators get forward mode without a formula of their own.
The cost is about two backwards per unpack, where upstream's forward mode costs one forward
pass; upstream's tangent values agree to rounding.

Scopes: each dual level and each jvp transform is a scope; a dual made in the innermost scope
is unpacked against that scope's duals only (nested jvps see their own)."""

from __future__ import annotations

import threading

from ..ops import base as B
from ..ops import impl
from . import batched as BT
from . import grad as G
from . import levels as LV
from .batched import D

_local = threading.local()


class Scope:
    __slots__ = ("kind", "level", "duals")

    def __init__(self, kind, level):
        self.kind = kind  # "dual" (forward_ad.dual_level) or "jvp" (torch.func.jvp)
        self.level = level
        self.duals = []  # (dual tensor, tangent)


def _scopes():
    s = getattr(_local, "scopes", None)
    if s is None:
        s = _local.scopes = []
    return s


def _fwd_state():
    st = getattr(_local, "fwd", None)
    if st is None:
        st = _local.fwd = {"enabled": True, "dual_levels": 0}
    return st


def _load_jvp_decompositions():
    """upstream's forward_ad.make_dual first imports torch._decomp.decompositions_for_jvp, whose
    closing lines compile a few decompositions to TorchScript graphs for the C++ engine's forward
    mode. torchnative has no TorchScript, and its forward mode needs no decompositions, so the
    (unmodified) module is run up to those lines and entered in sys.modules as imported."""
    import importlib.util
    import sys

    name = "torch._decomp.decompositions_for_jvp"
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    src = spec.loader.get_source(name)
    cut = src.find("\n_register_jit_decomposition_for_jvp(")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(compile(src[:cut] if cut >= 0 else src, spec.origin, "exec"), module.__dict__)  # noqa: S102
    except BaseException:
        del sys.modules[name]
        raise


def enter_dual_level():
    _load_jvp_decompositions()
    st = _fwd_state()
    level = st["dual_levels"]
    st["dual_levels"] += 1
    _scopes().append(Scope("dual", level))
    return level


def exit_dual_level(level):
    st = _fwd_state()
    scopes = _scopes()
    if not scopes or scopes[-1].kind != "dual" or scopes[-1].level != level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    scopes.pop()
    st["dual_levels"] -= 1


def set_fwd_grad_enabled(enabled):
    _fwd_state()["enabled"] = bool(enabled)


def is_fwd_grad_enabled():
    return _fwd_state()["enabled"]


def jvp_increment_nesting():
    level = LV.push("jvp")
    _scopes().append(Scope("jvp", level))
    return level


def jvp_decrement_nesting():
    scopes = _scopes()
    if scopes and scopes[-1].kind == "jvp":
        scopes.pop()
    return LV.pop("jvp")


def _innermost_jvp():
    for e in reversed(LV.stack()):
        if e.kind == "jvp":
            return e
    return None


def _fresh_input(t):
    """`t` as a new input of the graph: a leaf, or a differentiable alias when it has history."""
    real, levels = BT.canonical(t)
    if real._tn_requires_grad and B.C.is_grad_enabled():
        w = D("alias", real)
    else:
        w = D("detach", real)
        w._tn_requires_grad = True
    return BT.rebuild(w, [(lv, i) for i, lv in enumerate(levels)])


@impl("_make_dual")
def make_dual(primal, tangent, level):
    if list(primal._tn_sizes) != list(tangent._tn_sizes):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(primal._tn_sizes)} while the given forward gradient is of size "
            f"{list(tangent._tn_sizes)}."
        )
    scopes = _scopes()
    if not scopes:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    dual = _fresh_input(primal)
    scopes[-1].duals.append((dual, tangent))
    entry = _innermost_jvp()
    if entry is not None:
        entry.inputs.add(id(BT.canonical(dual)[0]))
    return dual


def _zeros_cotangent(y):
    real, levels = BT.canonical(y)
    u = D("zeros_like", real, None, None, None, None, None)
    u._tn_requires_grad = True
    return BT.rebuild(u, [(lv, i) for i, lv in enumerate(levels)])


def tangent_of(y):
    """(J·t, the dummy cotangent) for `y` against the innermost scope's duals; (None, None) when
    `y` does not depend on them."""
    scopes = _scopes()
    if not scopes or not scopes[-1].duals or not BT.canonical(y)[0]._tn_requires_grad:
        return None, None
    import torch

    duals = scopes[-1].duals
    for d, t in duals:
        if d is y:
            return t, None
    u = _zeros_cotangent(y)
    was = B.C.is_grad_enabled()
    B.C._set_grad_enabled(True)
    try:
        inputs = [d for d, _ in duals]
        vjps = torch.autograd.grad([y], inputs, [u], retain_graph=True, create_graph=True, allow_unused=True)
        used = [(g, t) for g, (_, t) in zip(vjps, duals) if g is not None and BT.canonical(g)[0]._tn_requires_grad]
        if not used:
            return None, None
        (tangent,) = torch.autograd.grad([g for g, _ in used], [u], [t for _, t in used], retain_graph=True,
                                         create_graph=was, allow_unused=True)
    finally:
        B.C._set_grad_enabled(was)
    return tangent, u


def _own_inputs(u=None):
    """Forward mode's own graph inputs in the innermost scope: its duals and the cotangent."""
    scopes = _scopes()
    ours = {id(BT.canonical(d)[0]) for d, _ in (scopes[-1].duals if scopes else ())}
    if u is not None:
        ours.add(id(BT.canonical(u)[0]))
    return ours


@impl("_unpack_dual")
def unpack_dual(tensor, level):
    tangent, u = tangent_of(tensor)
    if tangent is None:
        return tensor, None
    ours = _own_inputs(u)
    entry = _innermost_jvp()
    if entry is not None:
        entry.inputs |= ours  # the transform's results are judged against them too
    tangent = G.detach_unless_outside(tangent, ours)
    tensor = G.detach_unless_outside(tensor, ours)  # upstream's primal is the dual's level-0 self
    return tensor, tangent

"""`torch.func.grad` and friends on the core's autograd, and autograd under vmap.

torchnative records one autograd graph, on physical tensors: the door's vmap step runs before
autograd (dispatch.py), so a batched tensor's history is its value's. A grad transform therefore
needs no tensor wrapper of its own: `_wrap_for_grad` makes each floating input a fresh graph
input (a leaf, or a differentiable alias when it already has history outside the transform) and
`_unwrap_for_grad` detaches results when nothing outside the transform was differentiable.

Inside vmap, per-sample gradients need each sample to own its inputs: an input not batched at
an enclosing vmap level is expanded along that level's batch (a stride-0 view), so the physical
graph's gradient for it is per sample, as upstream's grad-inside-vmap gives (the same idea as
opacus's expanded weights). `run_backward` translates batched outputs and inputs to the physical
tensors that hold their graph, and wraps the gradients back."""

from __future__ import annotations

from ..ops import base as B
from . import batched as BT
from . import levels as LV
from .batched import D


def increment_nesting() -> int:
    return LV.push("grad")


def decrement_nesting() -> int:
    return LV.pop("grad")


def _insert_levels(real, levels, new):
    """`real` (batch dimensions first, for `levels`) broadcast along each level in `new` too."""
    merged = sorted(levels + [e.level for e in new])
    sizes = {e.level: e.batch_size for e in new}
    for i, lv in enumerate(merged):
        if lv in sizes:
            real = D("unsqueeze", real, i)
            shape = list(real._tn_sizes)
            shape[i] = sizes[lv]
            real = D("expand", real, shape, False)
    return real, merged


def wrap_for_grad(t, level):
    if not isinstance(t, B.C.TensorBase):
        return t
    entry = LV.layer(level)
    if entry is not None and entry.kind == "jvp":
        return t  # forward mode's make_dual makes the graph input (forward.py)
    d = B.dtype_of(t)
    if not (d.is_floating_point or d.is_complex):
        return t
    real, levels = BT.canonical(t)
    missing = [e for e in LV.vmap_levels_below(level) if e.level not in levels]
    if missing:
        real, levels = _insert_levels(real, levels, missing)
    if real._tn_requires_grad and B.C.is_grad_enabled():
        w = D("alias", real)
    else:
        w = D("detach", real)
        w._tn_requires_grad = True
    out = BT.rebuild(w, [(lv, i) for i, lv in enumerate(levels)])
    if entry is not None:
        entry.inputs.add(id(w))
        out.__dict__[LAYER_KEY] = entry
        WRAPPED[0] = True
    return out


def reaches_outside(t, own, clean=None):
    """Whether `t`'s history reaches a leaf that requires grad other than the graph inputs a
    transform made (`own`, ids): upstream's unwrapped results require grad exactly then (their
    history at the enclosing level). `clean` (a set kept across calls) holds the nodes already
    searched without finding one."""
    fn = t.grad_fn
    if fn is None:
        return t._tn_requires_grad and id(t) not in own
    clean = set() if clean is None else clean
    seen, stack = set(), [fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or id(node) in clean:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            if id(var) not in own:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions)
    clean |= seen
    return False


def detach_unless_outside(t, own, clean=None):
    if not isinstance(t, B.C.TensorBase):
        return t
    real = BT.canonical(t)[0]
    if real._tn_requires_grad and not reaches_outside(real, own, clean):
        return D("detach", t)
    return t


# the grad layer that made a wrapped input (a vjp's closure runs after its layer has gone)
LAYER_KEY = "_tn_grad_layer"
WRAPPED = [False]


def detach_dead(inputs, grads):
    """Gradients taken after their grad transform returned (torch.func.vjp's vjp_fn) for inputs
    that had no history outside it carry none: upstream's dead GradTrackingTensors unwrap to
    plain tensors."""
    out = []
    for x, g in zip(inputs, grads):
        layer = getattr(x, "__dict__", {}).get(LAYER_KEY)
        if g is not None and layer is not None and not layer.alive:
            g = detach_unless_outside(g, layer.inputs)
        out.append(g)
    return tuple(out)


def unwrap_for_grad(t, level):
    entry = LV.layer(level)
    if entry is None:
        return t
    return detach_unless_outside(t, entry.inputs, entry.clean)


def _align(g, levels, entries):
    """A gradient for an output batched at `levels`: its value laid out as the output's
    physical tensor; levels only `g` has stay batched around it."""
    real, g_levels = BT.canonical(g)
    missing = [entries[lv] for lv in levels if lv not in g_levels]
    if missing:
        real, g_levels = _insert_levels(real, g_levels, missing)
    extra = [(lv, i) for i, lv in enumerate(g_levels) if lv not in levels]
    return BT.rebuild(real, extra) if extra else real


def involved(tensors, inputs) -> bool:
    return any(BT.info(t) is not None for t in tensors) or any(BT.info(t) is not None for t in inputs or ())


def run_backward(run, tensors, grad_tensors, inputs, **kw):
    """Runs the engine (`run`) on the physical tensors behind batched outputs and inputs."""
    entries = {e.level: e for e in LV.stack()}
    outs, out_grads = [], []
    for i, t in enumerate(tensors):
        if BT.info(t) is not None and not t._tn_requires_grad:
            # a batched tensor of a plain vmap has no autograd of its own upstream
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for t, g in zip(tensors, grad_tensors):
        real, levels = BT.canonical(t)
        outs.append(real)
        out_grads.append(None if g is None else _align(g, levels, entries))
    reals, placements = [], []
    for x in inputs or ():
        real, levels = BT.canonical(x)
        reals.append(real)
        placements.append(levels)
    grads = run(outs, out_grads, inputs=tuple(reals), **kw)
    if not inputs:
        return grads
    result = []
    for g, levels in zip(grads, placements):
        if g is None or not levels:
            result.append(g)
            continue
        g_real, g_levels = BT.canonical(g)
        k = len(g_levels)
        own = list(levels)
        for lv in [lv for lv in g_levels if lv in own]:
            # batched at a level both through the input and through the incoming gradients:
            # sample b of the input receives sample b's gradient only (the diagonal)
            i, j = g_levels.index(lv), k + own.index(lv)
            g_real = D("movedim.int", D("diagonal", g_real, 0, i, j), -1, i)
            own.remove(lv)
        placed = [(lv, i) for i, lv in enumerate(g_levels)] + [(lv, k + j) for j, lv in enumerate(own)]
        result.append(BT.rebuild(g_real, placed))
    return tuple(result)

"""The backward engine: `torch._C._ImperativeEngine`, which upstream's `torch.autograd` calls.

Same contract as upstream's engine (torch/csrc/autograd/engine.cpp), single-threaded:
dependencies are counted over the nodes reachable from the roots; a node runs once all its
gradients have arrived, the most recently created first among those ready (sequence numbers);
incoming gradients are checked against the forward output's metadata and reduced or cast as
upstream's `validate_outputs` does; saved values are freed after a node runs unless the graph
is retained; tensor, node and post-accumulate hooks run where upstream runs them. The loop over
the graph is native (core/src/engine.rs `_tn_execute`); this module holds the task, the entry
points and what the loop calls back: hooks, accumulation into a leaf, gradient reshaping.
"""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

import sys
import threading

from ..ops import base as B
from ..functorch import grad as _functorch_grad
from ..functorch import levels as _levels
from ..ops.reductions.reduce import sum_to_dims
from . import graph as G

_DTYPES = B.T.BY_CODE  # dtype code -> torch.dtype (B.dtype_of without the call)

C = None  # torch._C, set by install

_local = threading.local()
# anomaly mode (torch.autograd.set_detect_anomaly): NaN gradients stop the backward with the
# node's name; upstream's forward tracebacks are not recorded (docs/design/autograd.md)
ANOMALY = {"enabled": False, "check_nan": True}


def set_anomaly_enabled(enabled, check_nan=True):
    ANOMALY["enabled"], ANOMALY["check_nan"] = bool(enabled), bool(check_nan)


def _task_stack():
    st = getattr(_local, "tasks", None)
    if st is None:
        st = _local.tasks = []
    return st


class GraphTask:
    _ids = 0

    def __init__(self, keep_graph, create_graph):
        GraphTask._ids += 1
        self.id = GraphTask._ids
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.callbacks = []
        self.current_node = None


class ImperativeEngine:
    """`torch._C._ImperativeEngine`."""

    def run_backward(self, tensors, grad_tensors, keep_graph, create_graph, inputs=(), allow_unreachable=True,
                     accumulate_grad=True):
        if create_graph and _functorch_grad.WRAPPED[0] and any(e.kind == "grad" for e in _levels.stack()):
            # a nested grad transform's outer backward runs through this graph again: upstream
            # keeps one graph per transform level, torchnative one graph, so it is kept
            keep_graph = True
        if _levels.stack() and _functorch_grad.involved(tensors, inputs):
            # batched outputs: their graph is their physical values' (functorch/grad.py)
            def run(t, g, inputs):
                return self._run(t, g, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad)
            grads = _functorch_grad.run_backward(run, tensors, grad_tensors, inputs)
        else:
            grads = self._run(tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable,
                              accumulate_grad)
        if _functorch_grad.WRAPPED[0] and create_graph and inputs:
            grads = _functorch_grad.detach_dead(inputs, grads)
        return grads

    def _run(self, tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad):
        roots = []
        for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
            edge = _edge_of(t)
            if edge[0] is None:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
            roots.append((edge, g))
        targets = []
        for i, t in enumerate(inputs or ()):
            edge = _edge_of(t)
            if edge[0] is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.append(edge)
        task = GraphTask(keep_graph, create_graph)
        stack = _task_stack()
        stack.append(task)
        try:
            captured = _execute(task, roots, targets, accumulate_grad, inputs)
            for cb in task.callbacks:
                cb()
        finally:
            stack.pop()
        if accumulate_grad:
            return ()
        out = []
        for i, edge in enumerate(targets):
            g = captured.get(i)
            if g is None and not allow_unreachable:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            out.append(g)
        return tuple(out)

    def queue_callback(self, callback):
        stack = _task_stack()
        if not stack:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        stack[-1].callbacks.append(callback)

    def is_checkpoint_valid(self):
        return True


def _edge_of(t):
    from torch.autograd.graph import GradientEdge

    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    return G.gradient_edge(t)


def current_graph_task_id():
    st = _task_stack()
    return st[-1].id if st else -1


def current_node():
    st = _task_stack()
    return st[-1].current_node if st else None


def _execute(task, roots, targets, accumulate_grad, inputs):
    # the loop itself is native (core/src/engine.rs); it calls back into the helpers below
    captured = C._tn_execute(
        task, list(roots), list(targets), accumulate_grad, task.keep_graph, task.create_graph,
        ANOMALY["enabled"] and ANOMALY["check_nan"], _HELPERS,
    )
    if accumulate_grad and inputs:
        # backward(inputs=...) with a non-leaf input accumulates into its .grad too
        for i, t in enumerate(inputs):
            if isinstance(t, C.TensorBase) and G.grad_fn_of(t) is not None and captured.get(i) is not None:
                old = t.grad
                t.grad = captured[i].detach() if old is None else old + captured[i]
    return captured


def _tensor_pre_hooks(node, grads):
    if isinstance(node, G.AccumulateGrad):
        hooks = node.variable.__dict__.get("_tn_backward_hooks")
        if hooks:
            g = grads[0]
            for h in list(hooks.values()):
                r = h(g)
                if r is not None:
                    g = r
            grads = [g]
        return grads
    th = node.__dict__.get("_tn_tensor_hooks")
    if th:
        grads = list(grads)
        for nr, hooks in th:
            for h in list(hooks.values()):
                r = h(grads[nr])
                if r is not None:
                    grads[nr] = r
    rg = node.__dict__.get("_tn_retain_grad")
    if rg:
        for nr, ref in list(rg.items()):
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            old = t.__dict__.get("_tn_grad")
            t.__dict__["_tn_grad"] = g.clone() if old is None else old + g
    return grads


def _pre_hooks(node, grads):
    hooks = node.__dict__.get("_tn_pre_hooks")
    if not hooks:
        return grads
    g = tuple(grads)
    for h in list(hooks.values()):
        r = h(g)
        if r is not None:
            g = tuple(r)
    return list(g)


def _post_hooks(node, outs, grads):
    hooks = node.__dict__.get("_tn_post_hooks")
    if not hooks:
        return outs
    gi = tuple(outs)
    for h in list(hooks.values()):
        r = h(gi, tuple(grads))
        if r is not None:
            gi = tuple(r)
    return list(gi)


def _validate(node, outs):
    """upstream's validate_outputs, under anomaly mode (the native loop checks shapes and dtypes
    itself and calls `_validate_one` for a gradient that needs reshaping or casting): one
    gradient per edge, reduced to the input's shape when it was broadcast, cast to the input's
    dtype, and none with NaNs."""
    edges = node._tn_edges
    if len(outs) != len(edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients (expected {len(edges)}, got {len(outs)})")
    res = outs if isinstance(outs, list) else list(outs)
    check_nan = ANOMALY["enabled"] and ANOMALY["check_nan"]
    for i, (nxt, nr) in enumerate(edges):
        g = res[i]
        if g is None or nxt is None:
            continue
        if check_nan and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
        metas = nxt._tn_out_meta
        meta = metas[nr] if nr < len(metas) else None
        if meta is not None:
            res[i] = _validate_one(node, i, g, meta)
    return res


def _validate_one(node, i, g, meta):
    """Gradient `i` of `node` for an output whose metadata is `meta`: summed to its shape where it
    was broadcast, cast to its dtype; a shape it cannot come from raises upstream's message."""
    shape, code = meta[2:], meta[0]
    sizes = g._tn_sizes
    if len(sizes) != len(shape) or tuple(sizes) != shape:
        if not _expandable(shape, sizes):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got {list(sizes)} "
                f"but expected shape compatible with {list(shape)}"
            )
        g = _sum_to(g, shape, sizes)
    if g._tn_dtype_code != code:
        g = g.to(_DTYPES[code])
    return g


def _sum_to(g, shape, sizes):
    """at::sum_to, which upstream's validate_outputs calls: the leading dimensions and those
    `shape` keeps as 1 summed with keepdim, then a view without the leading ones (the door's
    sum and view directly, not sum_to_size's composite)."""
    dims = sum_to_dims(shape, sizes)
    if not dims:
        return g
    lead = len(sizes) - len(shape)
    if lead and len(dims) == lead:
        # only leading dimensions (a broadcast bias): one sum without keepdim, no view left
        # holding the sum's result (AccumulateGrad can keep the gradient without a copy)
        return C._aten_dispatch("sum.dim_IntList", g, dims, False, None)
    out = C._aten_dispatch("sum.dim_IntList", g, dims, True, None)
    return C._aten_dispatch("view", out, list(shape)) if lead else out


def _expandable(shape, to):
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(list(to))):
        if a != b and a != 1:
            return False
    return True


# References to a gradient nobody else holds, as seen inside _accumulate_into_leaf: the native
# loop's argument tuple (the gradient is moved into it), this function's argument, getrefcount's
# own argument.
_STEALABLE_REFS = 3


def _accumulate_into_leaf(acc, g, create_graph):
    var = acc.variable
    if g is None:
        return
    old = var.__dict__.get("_tn_grad")
    if old is None:
        if create_graph:
            new = g
        else:
            # nothing else can see this buffer and it has the variable's layout: steal it, as
            # upstream does; else a copy in the variable's layout (utils::clone_obey_contract)
            new = None
            if sys.getrefcount(g) <= _STEALABLE_REFS and G.grad_fn_of(g) is None:
                new = g._tn_steal_as_grad_of(var)
            if new is None:
                if var._tn_non_overlapping_and_dense:
                    new = C._aten_dispatch("empty_strided", var._tn_sizes, var._tn_strides, g.dtype, None, g.device, None)
                    new.copy_(g)
                else:
                    new = C._aten_dispatch("clone", g, CONTIGUOUS_FORMAT)
        if not create_graph and G.grad_fn_of(new) is not None:
            new = new.detach()
        var.__dict__["_tn_grad"] = new
    elif create_graph or C.is_grad_enabled():
        var.__dict__["_tn_grad"] = old + g
    else:
        old.add_(g)
    hooks = var.__dict__.get("_tn_post_acc_hooks")
    if hooks:
        for h in list(hooks.values()):
            h(var)


# engine.rs `_tn_execute`'s calls back into Python
_HELPERS = (G.AccumulateGrad, _tensor_pre_hooks, _pre_hooks, _post_hooks, _accumulate_into_leaf, _validate_one, _validate)

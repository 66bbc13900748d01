"""The autograd step of the door: runs an operator and records its node in the graph.

The native door calls `handle(op, args, kwargs)` only when grad mode is on and some tensor
argument requires grad. Like upstream's Autograd dispatch key:

* CompositeImplicitAutograd operators and operators without a formula run with grad mode on, so
  the operators they are made of record themselves. If that leaves a differentiable output
  without history, the operator gets a NotImplemented node: forward works, backward refuses by
  name (upstream does the same for operators without a derivatives.yaml entry).
* Operators with a formula run below autograd (grad mode off) and get one node whose class is
  named as upstream names it.
* In-place operators rebase the history of `self`; a leaf that requires grad refuses, with
  upstream's message.
"""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

import json
from importlib import resources

from ..binding.schema import all_schemas
from ..ops import base as B
from . import graph as G
from .formula import FORMULAS, REGISTERED

C = None  # torch._C, set by install
_DTYPES = B.T.BY_CODE  # dtype code -> torch.dtype (B.dtype_of without the call)
_TABLE = None
_DONT_REQUIRE = frozenset()
# Not differentiable, handled by hand upstream (VariableTypeManual.cpp).
_MANUAL_NONDIFF = frozenset({"detach", "detach_"})


def _table():
    global _TABLE, _DONT_REQUIRE
    if _TABLE is None:
        data = json.loads(resources.files("torchnative_core.generated").joinpath("autograd.json").read_text())
        _TABLE = data["ops"]
        _DONT_REQUIRE = frozenset(data["dont_require"])
    return _TABLE


def _schema(op):
    return all_schemas().get(op)


def _is_diff_dtype(t):
    d = B.dtype_of(t)
    return d.is_floating_point or d.is_complex


def _flat_outputs(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def handle(op, args, kwargs=None):
    f = FORMULAS.get(op)
    if f is None:
        return _untracked(op, args, kwargs)
    return _record(f, op, args, kwargs)


# overload -> (is an out= variant, mutates an argument, not differentiable upstream)
_UNTRACKED: dict = {}


def _untracked_kind(op):
    kind = _UNTRACKED.get(op)
    if kind is None:
        schema = _schema(op)
        entry = _table().get(op)
        base = op.split(".")[0]
        kind = _UNTRACKED[op] = (
            schema is not None and schema.is_out,
            schema is not None and schema.is_mutable,
            (entry is not None and entry["node"] is None) or base in _DONT_REQUIRE or base in _MANUAL_NONDIFF,
        )
    return kind


# Operators without a formula that the door now runs itself (door.rs, `record_plans`): positional
# calls of them skip this module unless their parts recorded nothing (then `composed_rest`).
_COMPOSED: set = set()


def _untracked(op, args, kwargs):
    is_out, mutable, nondiff = _untracked_kind(op)
    if not is_out and (nondiff or not mutable) and op not in _COMPOSED:
        _COMPOSED.add(op)
        C._tn_set_record_plan(op, 2 if nondiff else 1)
    if is_out:
        _refuse_out(op, args)
    mutated = mutable and args and isinstance(args[0], C.TensorBase)
    before = G.grad_fn_of(args[0]) if mutated else None
    recorded = C._tn_nodes_recorded()
    out = C._tn_below_autograd(op, *args, **(kwargs or {}))
    if nondiff or (not mutated and args and out is args[0]):
        return out  # not differentiable upstream either, or the input itself (to() of its dtype)
    composed = C._tn_nodes_recorded() != recorded  # its parts recorded themselves
    if composed and not (mutated and G.grad_fn_of(args[0]) is before and _is_diff_dtype(args[0])):
        # Made of operators that recorded themselves: an output without history came only from
        # inputs that need no gradient.
        return out
    return _stale_history(op, args, out, mutated, before)


def composed_rest(op, args, out):
    """The rest of `_untracked` for a call the door ran (neither mutating nor out=) whose parts
    recorded no node."""
    return _stale_history(op, args, out, False, None)


def _stale_history(op, args, out, mutated, before):
    """A NotImplemented node for each differentiable output left without history."""
    inputs = [a for a in args if isinstance(a, C.TensorBase)]
    inputs += [x for a in args if isinstance(a, (list, tuple)) for x in a if isinstance(x, C.TensorBase)]
    outs = _flat_outputs(out)
    stale = []
    for i, t in enumerate(outs):
        if not isinstance(t, C.TensorBase) or not _is_diff_dtype(t):
            continue
        if mutated and t is args[0]:
            if G.grad_fn_of(t) is before:
                stale.append(i)  # mutated in place, and nothing recorded it
        elif G.grad_fn_of(t) is None and not any(t is x for x in inputs):
            stale.append(i)
    if stale:
        node = G.NotImplementedNode(op)
        edges = [G.gradient_edge(t) for t in _tensor_args(args)]
        node._tn_init(edges, tuple(G.tensor_meta(t) if isinstance(t, C.TensorBase) else None for t in outs))
        node._tn_saved = {}
        for i in stale:
            G.set_history(outs[i], node, i)
        if mutated and 0 in stale and args[0]._base is not None:
            G.rebase_view_history(args[0], node)
    return out


def _tensor_args(args):
    for a in args:
        if isinstance(a, C.TensorBase):
            if a._tn_requires_grad:
                yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, C.TensorBase) and x._tn_requires_grad:
                    yield x


def _refuse_out(op, args):
    name = op.split(".")[0]
    raise RuntimeError(
        f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of the "
        "arguments requires grad."
    )


class _Plan:
    """What recording needs to know about one operator overload, worked out on its first call:
    its argument names, differentiable inputs, what the formula saves, and its node class."""

    __slots__ = ("formula", "names", "inputs", "input_index", "self_index", "inplace", "is_out", "diff", "node_cls", "save",
                 "result_keys", "native")

    def __init__(self, f, op):
        self.formula = f
        schema = _schema(op)
        entry = _table().get(op)
        self.names = tuple(a.name for a in schema.args)
        self.inputs = tuple(f.inputs if f.inputs is not None else (entry["inputs"] if entry else ()))
        # each differentiable input's position among the arguments (None: not a schema argument)
        self.input_index = tuple(self.names.index(n) if n in self.names else None for n in self.inputs)
        self.self_index = self.names.index("self") if "self" in self.names else None
        self.is_out = schema.is_out
        # in place when it writes `self`; an operator writing only another argument (rrelu_with_noise's
        # noise) records as a function of its inputs
        self.inplace = schema.is_mutable and not self.is_out and (
            self.self_index is None or schema.args[self.self_index].is_write)
        self.diff = entry["output_differentiability"] if entry else None
        self.node_cls = G.node_class(f.node or (entry["node"] if entry else _node_name(op)), _functions_module())
        self.save = frozenset(f.save)
        self.result_keys = {}  # number of outputs -> the saved name of each ("result", "result0", ...)
        # the same, for the native recorder (core/src/graph.rs `_tn_record`)
        self.native = C._TnRecordPlan(
            f, self.node_cls, list(self.names), list(self.input_index), [n in self.save for n in self.names],
            None if self.diff is None else [bool(d) for d in self.diff],
            [(0, "result")] if "result" in self.save else [],
            [(i, k) for i in range(64) if (k := f"result{i}") in self.save],
        )

    def keys(self, n):
        k = self.result_keys.get(n)
        if k is None:
            k = self.result_keys[n] = ("result",) if n == 1 else tuple(f"result{i}" for i in range(n))
        return k


_PLANS: dict = {}


def _forget(op):
    if _PLANS.pop(op, None) is not None or op in _COMPOSED:
        _COMPOSED.discard(op)
        C._tn_set_record_plan(op)


REGISTERED.append(_forget)


def _record(f, op, args, kwargs):
    plan = _PLANS.get(op)
    if plan is None or plan.formula is not f:  # a formula registered later replaces the plan
        plan = _PLANS[op] = _Plan(f, op)
        if not plan.is_out and not plan.inplace:  # later positional calls go to the native recorder directly
            C._tn_set_record_plan(op, plan.native)
    if plan.is_out:
        _refuse_out(op, args)
    if not kwargs and not plan.inplace:  # the usual call, recorded natively
        return C._tn_record(plan.native, op, args)
    names = plan.names
    if kwargs:
        bound = dict(zip(names, args))
        bound.update(kwargs)
        values = [bound.get(n) for n in names]
        items = bound.items()
    else:  # the usual call: positional arguments only, no dict
        values = args
        items = zip(names, args)
    n_values = len(values)
    inplace = plan.inplace
    TensorBase = C.TensorBase
    si = plan.self_index
    self_t = values[si] if inplace and si is not None and si < n_values else None
    if inplace and isinstance(self_t, TensorBase):
        _check_inplace(self_t)

    # edges, one per differentiable input tensor (list arguments flattened)
    edges = []
    any_edge = False
    for i in plan.input_index:
        v = values[i] if i is not None and i < n_values else None
        if isinstance(v, TensorBase):
            e = G.gradient_edge(v)
            any_edge = any_edge or e[0] is not None
            edges.append(e)
        elif isinstance(v, (list, tuple)):
            for x in v:
                e = G.gradient_edge(x) if isinstance(x, TensorBase) else _NO_EDGE
                any_edge = any_edge or e[0] is not None
                edges.append(e)
        else:
            edges.append(_NO_EDGE)
    # metadata of every tensor argument; saved: the tensors the formula reads and every
    # non-tensor argument
    save = plan.save
    saved = {}
    argmeta = {}
    for name, v in items:
        if isinstance(v, TensorBase):
            argmeta[name] = G.tensor_meta(v)
            if name in save:
                if inplace and v is self_t:
                    v = C._aten_dispatch("clone", v, CONTIGUOUS_FORMAT)  # upstream saves original_self
                saved[name] = G.SavedTensor(v)
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], TensorBase):
            argmeta[name] = [G.tensor_meta(x) if isinstance(x, TensorBase) else None for x in v]
            if name in save:
                saved[name] = [G.SavedTensor(x) for x in v]
        else:
            saved[name] = v

    out = C._tn_below_autograd_no_grad(op, *args, **(kwargs or {}))

    if not any_edge:
        return out
    if not inplace:
        out = _distinct_from_inputs(out, args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    diff = plan.diff
    out_meta = tuple(
        G.tensor_meta(t)
        if isinstance(t, TensorBase) and _is_diff_dtype(t) and (diff is None or i >= len(diff) or diff[i])
        else None
        for i, t in enumerate(outs)
    )
    node = plan.node_cls(f)
    node._tn_init(edges, out_meta)
    node._tn_argmeta = argmeta
    for i, m in enumerate(out_meta):
        if m is not None:
            G.set_history(outs[i], node, i)
    if inplace and isinstance(self_t, TensorBase) and self_t._base is not None and G.grad_fn_of(self_t) is node:
        if not plan.inputs or plan.inputs[0] != "self":
            raise NotImplementedError(f"torchnative: in-place {op} on a view that requires grad is not supported yet")
        G.rebase_view_history(self_t, node)
    for i, key in enumerate(plan.keys(len(outs))):
        if key in save:
            t = outs[i]
            if isinstance(t, TensorBase):
                saved[key] = G.SavedTensor(t, is_output=True, output_nr=i)
    node._tn_saved = saved
    return out


_NO_EDGE = (None, 0)


def _distinct_from_inputs(out, args):
    """An implementation may hand back an input unchanged (a no-op view); the result must still
    be a tensor of its own, or recording its history would rewrite the input's."""
    if isinstance(out, C.TensorBase):
        for a in args:
            if a is out:
                return out._tn_alias()
        return out
    ids = {id(a) for a in args if isinstance(a, C.TensorBase)}
    if isinstance(out, (tuple, list)) and any(id(t) in ids for t in out if isinstance(t, C.TensorBase)):
        fresh = [t._tn_alias() if isinstance(t, C.TensorBase) and id(t) in ids else t for t in out]
        return type(out)(fresh) if isinstance(out, list) else tuple(fresh)
    return out


def _check_inplace(t):
    """upstream's check_inplace: a view that requires grad of a base without history (a leaf,
    whether or not it requires grad itself), or a leaf that requires grad, refuses."""
    base = t._base
    if base is not None and t._tn_requires_grad and G.grad_fn_of(base) is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if G.grad_fn_of(t) is None and t._tn_requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _node_name(op):
    base = op.split(".")[0].rstrip("_")
    return "".join(p.capitalize() for p in base.split("_")) + "Backward0"


_FUNCTIONS = None


def _functions_module():
    global _FUNCTIONS
    if _FUNCTIONS is None:
        _FUNCTIONS = C._functions
    return _FUNCTIONS

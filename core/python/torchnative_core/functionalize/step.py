"""The door's functionalize step (upstream's Functionalize dispatch key, between autograd and
the Python key): every call with a functional wrapper among its arguments comes here.

By the operator's schema:
- a *view* (a return aliasing an input without writing it: `view`, `select.int`, `split.Tensor`)
  runs on the input's value and gives a wrapper sharing the input's storage, with the view
  recorded (`ViewMeta`) so that it can be replayed on the base and inverted into it;
- a *mutation* (an argument written, `add_.Tensor`, `add.out`, `_native_batch_norm_legit`) runs
  its functional variant (`add.Tensor`, `_native_batch_norm_legit_functional`) and replaces the
  mutated wrappers' values with the results;
- an *in-place view* (`transpose_`) replays the view on the wrapper's own value;
- anything else runs on the inputs' values and wraps its results as new bases.
Every operator call on values goes below this step (modes, then the implementation), so a
tracing mode underneath sees the functional program, as it does upstream.
"""

from __future__ import annotations

import re

from ..ops import base as B
from . import tensor as F

_ALIAS = re.compile(r"\((\w)")


def redispatch(op, *args):
    """`op` on plain values, below functionalization (even where it is on for the thread)."""
    C = B.C
    old = C._tn_set_functionalize_tls(False)
    try:
        return C._tn_below_autograd(op, *args)
    finally:
        if old:
            C._tn_set_functionalize_tls(True)


# --- views -------------------------------------------------------------------------------------

class ViewMeta:
    """One view of a wrapper's chain: `op(base, *args)` (its `out_index`-th result for a view
    with several results), and how to put a new value of it back into its base."""

    __slots__ = ("op", "args", "out_index", "multi", "reapply")
    has_symbolic_inputs = False

    def __init__(self, op, args, out_index=0, multi=False, reapply=None):
        self.op, self.args, self.out_index, self.multi = op, list(args), out_index, multi
        # upstream's reapply_views: views replayed as views, or (torch.func.functionalize with
        # remove="mutations_and_views") as their *_copy variants, inverses never views
        self.reapply = reapply_views() if reapply is None else reapply

    def forward(self, base):
        out = redispatch(self.op if self.reapply else copy_variant(self.op), base, *self.args)
        return out[self.out_index] if self.multi else out

    def inverse(self, base, mutated):
        fn = _INVERSES.get(self.op)
        if fn is None:
            raise NotImplementedError(f"functionalization: writing through a view made by aten::{self.op} is not "
                                      "implemented by torchnative yet")
        return fn(self, base, mutated)

    def view(self, op, *args):
        """An inverse that is a view: the view itself, or its *_copy variant (NeverView)."""
        return redispatch(op if self.reapply else copy_variant(op), *args)


_REAPPLY = {"on": True}


def reapply_views() -> bool:
    return _REAPPLY["on"]


def copy_variant(op):
    """`view` -> `view_copy`, `select.int` -> `select_copy.int`: the non-aliasing variant."""
    name, dot, overload = op.partition(".")
    return f"{name}_copy{dot}{overload}"


def _squeeze_inverse(m, base, mutated):
    sizes = list(base.shape)
    if m.op == "squeeze":
        dims = [i for i, s in enumerate(sizes) if s == 1]
    else:
        given = m.args[0] if isinstance(m.args[0], (list, tuple)) else [m.args[0]]
        dims = sorted({d % max(len(sizes), 1) for d in given if sizes and sizes[d % len(sizes)] == 1})
    for d in dims:
        mutated = m.view("unsqueeze", mutated, d)
    return mutated


def _split_inverse(m, base, mutated):
    dim = m.args[1]
    if m.op == "split.Tensor":
        start = m.out_index * m.args[0]
    else:
        start = sum(m.args[0][:m.out_index])
    return redispatch("slice_scatter", base, mutated, dim, start, start + mutated.shape[dim], 1)


def _permute_inverse(m, base, mutated):
    dims = [d % len(m.args[0]) for d in m.args[0]] if m.args[0] else []
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return m.view("permute", mutated, inv)


# upstream's FunctionalInverses with InverseReturnMode::ViewOrScatterInverse (the mode its
# Python functionalization uses): a view where the inverse is one, else a scatter
_INVERSES = {
    "view": lambda m, base, v: m.view("view", v, list(base.shape)),
    "_unsafe_view": lambda m, base, v: m.view("view", v, list(base.shape)),
    "_reshape_alias": lambda m, base, v: m.view("view", v, list(base.shape)),
    "view.dtype": lambda m, base, v: m.view("view.dtype", v, base.dtype),
    "alias": lambda m, base, v: m.view("alias", v),
    "detach": lambda m, base, v: m.view("alias", v),
    "t": lambda m, base, v: m.view("t", v),
    "transpose.int": lambda m, base, v: m.view("transpose.int", v, *m.args),
    "permute": _permute_inverse,
    "unsqueeze": lambda m, base, v: m.view("squeeze.dim", v, m.args[0]),
    "squeeze": _squeeze_inverse,
    "squeeze.dim": _squeeze_inverse,
    "squeeze.dims": _squeeze_inverse,
    "select.int": lambda m, base, v: redispatch("select_scatter", base, v, *m.args),
    "slice.Tensor": lambda m, base, v: redispatch("slice_scatter", base, v, *m.args),
    "diagonal": lambda m, base, v: redispatch("diagonal_scatter", base, v, *m.args),
    "as_strided": lambda m, base, v: redispatch("as_strided_scatter", base, v, *m.args),
    "unbind.int": lambda m, base, v: redispatch("select_scatter", base, v, m.args[0], m.out_index),
    "split.Tensor": _split_inverse,
    "split_with_sizes": _split_inverse,
}


# --- operator kinds, from the schema ------------------------------------------------------------

_KINDS: dict = {}


def _kind(op):
    k = _KINDS.get(op)
    if k is None:
        k = _KINDS[op] = _classify(op)
    return k


def _classify(op):
    from ..binding.schema import all_schemas

    schema = all_schemas().get(op)
    if schema is None:
        return ("functional", None)
    if "inplace_view" in schema.tags:
        return ("inplace_view", schema)
    writes = [i for i, a in enumerate(schema.args) if a.is_write]
    if writes:
        return ("mutation", schema, writes, _functional_variant(schema))
    if schema.is_view:
        multi = len(schema.returns) > 1 or schema.returns[0].type.endswith("[]")
        return ("view", schema, multi)
    return ("functional", schema)


def _functional_variant(schema):
    """The overload computing what a mutating one writes, as new results: the in-place name
    without its `_`, the out= overload's sibling, or the `_functional` one; its arguments are
    the mutating overload's less the out= ones (upstream's codegen pairs them the same way)."""
    from ..binding.schema import all_schemas, overloads_by_name

    want = [(a.name, a.base_type) for a in schema.args if not (a.is_write and a.kwarg_only)]
    name = schema.name
    names = [name + "_functional", name]
    if name.endswith("_") and not name.endswith("__"):
        names = [name[:-1], name[:-1] + "_functional"] + names
    S = all_schemas()
    for n in names:
        for ov in overloads_by_name().get(n, []):
            f = S[n + ("." + ov if ov else "")]
            if not f.is_mutable and [(a.name, a.base_type) for a in f.args] == want:
                return f.qualified
    return None


# --- the step -----------------------------------------------------------------------------------

def _bound(schema, args, kwargs):
    args = list(args)
    if kwargs and schema is not None:
        names = [a.name for a in schema.args]
        for k, v in kwargs.items():
            i = names.index(k)
            args.extend([None] * (i + 1 - len(args)))
            args[i] = v
    return args


def _values(args):
    """The arguments with every functional wrapper synced and replaced by its value."""
    def one(a):
        if F.is_functional(a):
            F.sync(a)
            return F.unwrap(a)
        if isinstance(a, (list, tuple)) and any(F.is_functional(x) for x in a):
            return type(a)(one(x) for x in a)
        return a

    return [one(a) for a in args]


def _wrap(out):
    if isinstance(out, B.C.TensorBase):
        return F.make(out)
    if isinstance(out, list):
        return [_wrap(x) for x in out]
    if isinstance(out, tuple):
        items = [_wrap(x) for x in out]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    return out


def handle(op, args, kwargs=None):
    name = str(op)
    kind = _kind(name)
    args = _bound(kind[1], args, kwargs)
    if kind[0] == "view":
        return _view(name, args, kind[2])
    if kind[0] == "mutation":
        return _mutation(name, args, *kind[1:])
    if kind[0] == "inplace_view":
        return _inplace_view(kind[1], args)
    # upstream's hand-written Functionalize kernels (FunctionalizeFallbackKernel.cpp)
    if name in ("lift_fresh", "lift"):
        if F.is_functional(args[0]):
            return _view("alias", args, False)  # self.view_as(self)
        return _wrap(redispatch(name, *args))
    if name == "lift_fresh_copy":
        if F.is_functional(args[0]):
            return _wrap(redispatch("clone", *_values(args), None))  # self.clone()
        return _wrap(redispatch(name, *args))
    # upstream's functionalizeFallback: results are wrapped when an input was, or when there is
    # no tensor input at all (a factory); plain inputs give plain results
    tensors = [a for a in _leaves(args) if isinstance(a, B.C.TensorBase)]
    out = redispatch(name, *_values(args))
    return _wrap(out) if not tensors or any(F.is_functional(t) for t in tensors) else out


def _leaves(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def _view(op, args, multi):
    self = args[0]
    if not F.is_functional(self):
        return redispatch(op, *args)
    # not synced first, as upstream's generated view kernels: the view is taken of the value as
    # it stands and, stale at birth, regenerated from the base at its first use
    w = F.state(self)
    out = redispatch(op if reapply_views() else copy_variant(op), w.value, *args[1:])
    if multi:
        return [F.make(o, w.storage, w.metas + [ViewMeta(op, args[1:], i, True)]) for i, o in enumerate(out)]
    return F.make(out, w.storage, w.metas + [ViewMeta(op, args[1:])])


def _inplace_view(schema, args):
    self = args[0]
    if not F.is_functional(self):
        return redispatch(schema.qualified, *args)
    view_op = schema.name[:-1] + ("." + schema.overload if schema.overload else "")
    F.sync(self)
    w = F.state(self)
    value = redispatch(view_op, *_values(args))
    w.metas.append(ViewMeta(view_op, args[1:]))
    F.set_value(self, value)
    w.metadata_mutated = True
    return self


def _mutation(op, args, schema, writes, functional):
    if functional is None and any(F.is_functional(args[i]) for i in writes):
        raise NotImplementedError(f"functionalization: aten::{op} has no functional variant that torchnative "
                                  "knows of (it mutates its inputs)")
    targets = [args[i] for i in writes]
    if not any(F.is_functional(t) for t in targets) and not any(F.is_functional(a) for a in _leaves(args)):
        return redispatch(op, *args)  # nothing functional: the mutation itself, as upstream
    if any(t is not None and not F.is_functional(t) for t in targets):
        raise RuntimeError("mutating a non-functional tensor with a functional tensor is not allowed. Please "
                           "ensure that all of your inputs are wrapped inside of a functionalize() call.")
    keep = [i for i, a in enumerate(schema.args) if not (a.is_write and a.kwarg_only)]
    values = _values(args)
    out = redispatch(functional, *[values[i] for i in keep])
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    fresh = [r for r in schema.returns if "!" not in r.type]
    if len(out) != len(fresh) + len(writes):
        raise RuntimeError(f"functionalization: aten::{functional} returned {len(out)} results where aten::{op} "
                           f"needs {len(fresh) + len(writes)}")
    for t, new in zip(targets, out[len(fresh):]):
        if t is not None:
            F.replace(t, new)
            F.commit_update(t)
            F.sync(t)
    by_alias = {_ALIAS.search(schema.args[i].type).group(1): args[i] for i in writes}
    results, k = [], 0
    for r in schema.returns:
        if "!" in r.type:
            results.append(by_alias[_ALIAS.search(r.type).group(1)])
        else:
            results.append(_wrap(out[k]))
            k += 1
    return results[0] if len(results) == 1 else tuple(results)

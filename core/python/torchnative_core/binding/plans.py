"""Per-overload binding plans: the result of upstream's overload resolution, remembered.

Resolving a Python call (`x.view(2, 3)`, `torch.add(a, b)`, `F.linear(x, w)`) tries each signature
of the name in order (`signature.parse`) and then reorders the bound values into the chosen
schema's argument order (`functions._dispatch_bound`). Which signature wins, and where each schema
argument comes from, depends only on the *types* of the arguments for most calls — the
exceptions are checks that read a value (a tensor passed where a Scalar or an int is allowed, a
list whose first element decides). So the first call with a given key (the argument types, the
keyword names, and for lists the element type) records its resolution in a `Plan`, provided every
check it made was decided by type alone (`determined`); later calls with the same key run the
plan: one pass over the schema's arguments, picking each value from its recorded place and
converting it only where the conversion is not the identity. Calls whose key cannot be formed
(mixed lists, numpy scalars, ...), or that pass `out=`, or bind deprecated signatures, keep the
full path.

docs/PERF.md records what this saved.
"""

from __future__ import annotations

from functools import partial

_TB = None  # torch._C.TensorBase, set by install()
_PLAIN: set = set()  # exact types whose every signature check depends on the type alone

# Parameter types whose check reads a tensor's value (dtype, dim, requires_grad, numel).
_VALUE_CHECKED = {"Scalar", "double", "int64_t", "SymInt", "DeviceIndex", "IntArrayRef", "SymIntArrayRef",
                  "Storage", "Stream"}
_LIST_FIRST_CHECKED = {"IntArrayRef", "SymIntArrayRef", "ArrayRef<double>"}

MAX_PLANS = 32  # per Python name; a name called with more type combinations keeps the full path
ENABLED = [True]  # ENABLED[0] = False: every call takes the full path (tests compare both ways)

POS, KW, CONST, SELF, VARARGS = range(5)


MISS = None  # what torch._C._tn_call_planned answers when a call has no key or no plan yet


def install(C) -> None:
    global _TB, Plan, MISS
    from ..surface import types as T

    _TB = C.TensorBase
    _PLAIN.update({int, float, bool, complex, str, type(None), T.dtype, T.device, T.layout, T.memory_format})
    Plan = C._TnPlan
    MISS = C._tn_install_plans(frozenset(_PLAIN))


def key(args, kwargs):
    """The plan key of a call, or None when one of its values has no type-only key."""
    parts = []
    for x in args:
        k = _TYPE_KEYS.get(type(x)) or _elem(x)
        if k is None:
            return None
        parts.append(k)
    if kwargs:
        for name, x in kwargs.items():
            k = _TYPE_KEYS.get(type(x)) or _elem(x)
            if k is None:
                return None
            parts.append(name)
            parts.append(k)
    return tuple(parts)


_TYPE_KEYS: dict = {}  # type -> its key, for the types whose key is the type itself


def _elem(x):
    t = type(x)
    if t is list or t is tuple:
        if not x:
            return (t,)
        t0 = type(x[0])
        if t0 is not int and not issubclass(t0, _TB):
            return None
        for e in x:
            if type(e) is not t0:
                return None
        return (t, t0)
    if t in _PLAIN or issubclass(t, _TB):
        _TYPE_KEYS[t] = t
        return t
    return None


def determined(ptype: str, x) -> bool:
    """Whether `signature.check` of a parameter of type `ptype` against `x` depends only on the
    plan key of `x` (its type; for lists, the type of their elements)."""
    t = type(x)
    if t in _PLAIN:
        return True
    if isinstance(x, _TB):
        return ptype not in _VALUE_CHECKED
    if t is list or t is tuple:
        if not x or type(x[0]) is int:
            return True
        return ptype not in _LIST_FIRST_CHECKED
    return False


# The recorded resolution: torch._C._TnPlan (core/src/plans.rs), made by `build` from
# `(op, slots, rg, door)`; slots are `(kind, where, conv, ptype)` per schema argument and `rg` is
# where a `requires_grad` argument comes from. It runs natively, from `functions._call` and from
# `torch._C._tn_call_planned`, which forms the key below natively too.
Plan = None


def _identity(ptype: str, x) -> bool:
    """Whether `functions.convert` returns values of x's key unchanged for this parameter type."""
    t = type(x)
    if isinstance(x, _TB):
        return ptype == "Tensor"
    if t is int:
        return ptype in ("int64_t", "SymInt", "DeviceIndex", "Scalar")
    if t is float:
        return ptype in ("Scalar", "double")
    if t is bool:
        return ptype in ("bool", "Scalar")
    if ptype in ("ScalarType", "Device", "Layout", "MemoryFormat") and t not in (str, int):
        return True
    return ptype == "c10::string_view" and t is str


def build(sig, sources, self_, schema, convert, schema_default, door):
    """A Plan for `sig` given where each of its parameters was bound from (`sources`, recorded by
    `signature.parse`), or None when the call is one the plan does not cover."""
    entry = sig.entry
    if entry.get("deprecated_args"):
        return None
    by_name = {}
    rg = None
    for p, (kind, where, x) in zip(sig.params, sources):
        if p.name == "out" and x is not None:
            return None
        if kind == CONST:
            v = convert(p, where)
            if isinstance(v, _TB):
                return None  # a tensor made per call (a number default of a Tensor parameter)
            slot = (CONST, v, None, p.type)
        else:
            conv = None if x is None or _identity(p.type, x) else partial(convert, p)
            if kind == VARARGS:
                conv = partial(convert, p)
            slot = (kind, where, conv, p.type)
        if p.name == "requires_grad" and kind in (POS, KW):
            rg = (kind, where)
        by_name[p.name] = slot
    if self_ is not None:
        by_name["self"] = (SELF, None, None, "Tensor")
    elif "input" in by_name and not any(a.name == "input" for a in schema.args):
        by_name["self"] = by_name.pop("input")
    slots = []
    for a in schema.args:
        if a.name in by_name:
            slot = by_name[a.name]
            if a.name == "dtype" and a.default not in (None, "None"):  # `ScalarType? dtype=long`
                if slot[0] != CONST:
                    return None  # None or a dtype per call: the full path maps None to the default
                if slot[1] is None:
                    slot = (CONST, schema_default(a), None, a.type)
            slots.append(slot)
        elif a.has_default and a.name != "out":
            slots.append((CONST, schema_default(a), None, a.type))
        else:
            slots.append((CONST, None, None, a.type))
    return Plan(entry["op"], tuple(slots), rg, door)


def direct_binary(plan):
    """For a binary dunder's plan keyed on a tensor `other`: (overload, constant trailing
    arguments) when the plan is exactly `op(self, other, *constants)` with no conversion, else
    None."""
    if plan is None or plan.rg is not None or len(plan.slots) < 2:
        return None
    (k0, _, c0, _), (k1, w1, c1, _), *rest = plan.slots
    if k0 != SELF or k1 != POS or w1 != 0 or c1 is not None:
        return None
    if any(k != CONST or isinstance(v, list) for k, v, _, _ in rest):
        return None
    return plan.op, tuple(v for _, v, _, _ in rest)

"""The Python spellings of ATen operators: `torch.*` (`_C._VariableFunctions`), `Tensor.*`
methods, and `torch._C._nn` / `_linalg` / `_special` / `_fft` / `_nested` / `_sparse`.

Each spelling is built from upstream's generated signature table: parse the call with
`signature.parse` (upstream's overload rules), convert the bound values into the operator's
schema order, and enter the single door with the chosen overload.
"""

from __future__ import annotations

import types as _pytypes

from ..surface import torch_function as _TF
from . import plans as _plans
from . import signature as S
from .schema import all_schemas, ops_table

_PLANS_ON = _plans.ENABLED

_door = None  # torch._C._aten_dispatch, set by install()
_planned = None  # torch._C._tn_call_planned
_MISS = None  # what it answers for a call without a recorded plan (plans.MISS)
_C = None
_wrap_number = None  # torch._C._tn_wrapped_number when the core has it (core/src/fastpath.rs)
_TB = None  # torch._C.TensorBase


# --- converting bound Python values into door arguments ----------------------------------------

def _to_dtype(x):
    from ..surface.types import BY_NAME, dtype

    if x is None or isinstance(x, dtype):
        return x
    if x == "torch.int64":
        return BY_NAME["int64"]
    return {float: BY_NAME["float64"], int: BY_NAME["int64"], bool: BY_NAME["bool"], complex: BY_NAME["complex128"]}[x]


def _python_type_as_dtype(x):
    """`x` itself, or the dtype a Python scalar type names (`int` -> int64, as upstream's argument
    parser reads `dtype=int`); compared by identity, so a tensor's __eq__ is never called."""
    return _to_dtype(x) if any(x is t for t in (float, int, bool, complex)) else x


def _to_device(x):
    from ..surface.types import device

    if x is None or isinstance(x, device):
        return x
    if isinstance(x, str):
        return device(x)
    return device("cpu", int(x)) if int(x) == 0 else device("cuda", int(x))


def _to_intlist(x, size):
    if x is None:
        return None
    if not isinstance(x, (tuple, list)):
        return [_to_int(x)] * max(size, 1)
    return [_to_int(e) for e in x]


def _to_int(x):
    if isinstance(x, int):
        return x
    if S._is_tensor(x):
        return int(x.item())
    if type(x).__name__ == "SymInt":
        return x
    return x.__index__()


def _to_scalar(x):
    if S._is_tensor(x):
        return x.item()
    if S._is_np_scalar(x):
        return x.item()
    return x


def convert(p: S.Param, x):
    if x is None:
        return None
    t = p.type
    if t == "Tensor":
        if S._is_tensor(x):
            return x
        w = _wrap_number(x) if _wrap_number is not None else None  # native for bool/int/float
        return w if w is not None else _C._tn_scalar_to_tensor(x)
    if t in ("Scalar",):
        return _to_scalar(x)
    if t == "double":
        return float(_to_scalar(x)) if not isinstance(x, complex) else x
    if t in ("int64_t", "SymInt", "DeviceIndex"):
        return _to_int(x)
    if t in ("IntArrayRef", "SymIntArrayRef"):
        return _to_intlist(x, p.size)
    if t == "ScalarType":
        return _to_dtype(x)
    if t == "Device":
        return _to_device(x)
    if t == "Layout" and x == "torch.strided":
        from ..surface.types import LAYOUTS

        return LAYOUTS["strided"]
    if t == "MemoryFormat" and x == "contiguous_format":
        from ..surface.types import MEMORY_FORMATS

        return MEMORY_FORMATS["contiguous_format"]
    if t in ("TensorList", "c10::List<::std::optional<Tensor>>", "ArrayRef<double>", "ScalarList"):
        return list(x)
    return x


# --- building door calls ------------------------------------------------------------------------

class _Overloads:
    """The parsed signatures of one Python name, built on first call (keeps import fast)."""

    __slots__ = ("entries", "sigs", "method", "plans")

    def __init__(self, entries, method):
        self.entries = entries
        self.sigs = None
        self.method = method
        self.plans = {}  # plan key -> binding/plans.Plan (None: the key's calls take the full path)

    def get(self):
        if self.sigs is None:
            sigs = [S.Signature(e["signature"], e) for e in self.entries]
            # Deprecated signatures are tried last (stable), as upstream does.
            self.sigs = [s for s in sigs if not s.deprecated] + [s for s in sigs if s.deprecated]
        return self.sigs


def _call(ov: _Overloads, name: str, self_, args, kwargs):
    key = _plans.key(args, kwargs) if _PLANS_ON[0] else None
    if key is not None:
        plan = ov.plans.get(key, False)
        if plan:
            return plan(self_, args, kwargs)
        if plan is None or len(ov.plans) >= _plans.MAX_PLANS:
            key = None
    sigs = ov.get()
    bound = None
    checks = [] if key is not None else None
    for sig in sigs:
        trace = (checks, []) if key is not None else None
        bound = S.parse(sig, args, kwargs, len(sigs) == 1, trace)
        if bound is not None:
            break
    if bound is None:
        S.no_match(name, sigs, args, kwargs)
    if key is not None:
        plan = None
        if all(_plans.determined(t, x) for t, x in checks):
            op = sig.entry["op"]
            plan = _plans.build(sig, trace[1], self_, all_schemas()[op], convert, _schema_default, _door)
        ov.plans[key] = plan
    return _dispatch_bound(sig, bound, self_)


def _dispatch_bound(sig: S.Signature, bound: dict, self_):
    entry = sig.entry
    out = bound.get("out")
    op = entry["out_op"] if out is not None and entry.get("out_op") else entry["op"]
    schema = all_schemas()[op]
    values = {p.name: convert(p, bound.get(p.name)) for p in sig.params}
    if self_ is not None:
        values["self"] = self_
    elif "input" in values and not any(a.name == "input" for a in schema.args):
        values["self"] = values.pop("input")  # Python spells the schema's `self` as `input`
    dep = entry.get("deprecated_args")
    argv = []
    if dep:
        for expr in dep:
            if expr in values:
                argv.append(values[expr])
            elif expr == "input" or expr == "self":
                argv.append(values.get("self"))
            else:
                argv.append(_literal(expr))
    else:
        for a in schema.args:
            if a.name in values:
                v = values[a.name]
                if v is None and a.name == "dtype" and a.default not in (None, "None"):
                    v = _schema_default(a)  # `ScalarType? dtype=long`: Python's None is the schema's default
            elif a.name == "out" and out is not None:
                v = out
            elif a.has_default:
                v = _schema_default(a)
            else:
                v = None
            argv.append(v)
    if isinstance(out, (list, tuple)) and schema.is_out and len(schema.returns) > 1:
        # Multi-output out= overloads take each output as its own argument.
        names = [a.name for a in schema.args if a.is_write]
        argv = [v for a, v in zip(schema.args, argv) if not a.is_write] + list(out)
        del names
    result = _door(op, *argv)
    if type(result) is list:
        result = tuple(result)  # Python spellings return `Tensor[]` as a tuple (torch.split, ...)
    rg = bound.get("requires_grad")
    if rg:
        result.requires_grad_(True)
    return result


def _literal(expr):
    try:
        return int(expr)
    except ValueError:
        return float(expr)


_DEFAULT_CACHE: dict = {}


def _schema_default(a):
    key = (a.type, a.default)
    if key in _DEFAULT_CACHE:
        return _DEFAULT_CACHE[key]
    d = a.default
    t = a.base_type.rstrip("?")
    if d == "None":
        v = None
    elif d in ("True", "False"):
        v = d == "True"
    elif t.startswith("int[") or t.startswith("SymInt["):
        if d.startswith("["):
            inner = d[1:-1].strip()
            v = [int(x) for x in inner.split(",")] if inner else []
        else:
            size = int(t[t.index("[") + 1 : t.index("]")] or 1)
            v = [int(d)] * size
    elif t == "int" and d in ("Mean", "Sum"):  # at::Reduction, written bare in the loss schemas
        v = {"Mean": 1, "Sum": 2}[d]
    elif t in ("int", "SymInt") and not d.startswith("at::"):
        v = int(d)
    elif t == "float":
        v = float(d)
    elif t == "str":
        v = d.strip("\"'")
    elif t == "Scalar":
        v = _literal(d)
    elif t == "ScalarType":
        v = _to_dtype("torch.int64") if d == "long" else d
    elif d.startswith("at::Reduction::"):
        v = {"None": 0, "Mean": 1, "Sum": 2}[d.rsplit("::", 1)[1]]
    elif t == "MemoryFormat":
        from ..surface.types import MEMORY_FORMATS

        v = MEMORY_FORMATS["contiguous_format"]
    else:
        v = d
    _DEFAULT_CACHE[key] = v
    return v


def _to_modes(public, args, kwargs):
    """The call, handed to the active TorchFunctionMode(s) (see torch_function.with_modes)."""
    from torch.overrides import handle_torch_function

    return handle_torch_function(public, _TF._relevant_args(args, kwargs), *args, **kwargs)


def _to_foreign(public, args, kwargs):
    """A call no signature binds because an argument is not a tensor but overrides
    `__torch_function__` (torch.fx's Proxy, tensor-likes): handed to that override, as upstream's
    argument parser does; any other binding error propagates."""
    relevant = _TF.torch_function_args(args, kwargs)
    if not any(not isinstance(a, _TB) for a in relevant):
        raise
    from torch.overrides import handle_torch_function

    return handle_torch_function(public, relevant, *args, **kwargs)


# The mode check is inlined (not a with_modes wrapper): one native call, no extra frame.
def _make_function(name: str, ov: _Overloads):
    plans = ov.plans

    def fn(*args, **kwargs):
        if _TF.mode_active():
            return _to_modes(fn, args, kwargs)
        if _PLANS_ON[0]:  # a recorded plan, found and run natively (core/src/plans.rs)
            r = _planned(plans, None, args, kwargs)
            if r is not _MISS:
                return r
        try:
            return _call(ov, name, None, args, kwargs)
        except TypeError:
            return _to_foreign(fn, args, kwargs)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _make_method(name: str, ov: _Overloads):
    plans = ov.plans

    def method(self, *args, **kwargs):
        if _TF.mode_active():
            return _to_modes(method, (self, *args), kwargs)
        if _PLANS_ON[0]:
            r = _planned(plans, self, args, kwargs)
            if r is not _MISS:
                return r
        try:
            return _call(ov, name, self, args, kwargs)
        except TypeError:
            return _to_foreign(method, (self, *args), kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _make_binary_dunder(target: str, ov: _Overloads):
    """Arithmetic dunders return NotImplemented on a type mismatch (upstream's
    TypeError_to_NotImplemented_), so Python can try the reflected operation.

    With a tensor on the right, every call binds the same way (a Tensor parameter accepts any
    tensor by type), so once the first such call has recorded its plan, the dunder enters the
    door directly with the plan's overload and constant trailing arguments (`direct`)."""
    direct = []
    plans = ov.plans

    def dunder(self, other):
        if _TF.mode_active():
            return _to_modes(dunder, (self, other), {})
        try:
            if _PLANS_ON[0]:
                if direct and isinstance(other, _TB):
                    return _door(direct[0], self, other, *direct[1])
                r = _planned(plans, self, (other,), None)  # a Python number: its plan, natively
                if r is not _MISS:
                    return r
            result = _call(ov, target, self, (other,), {})
        except TypeError:
            return NotImplemented
        if not direct and isinstance(other, _TB):
            form = _plans.direct_binary(ov.plans.get((type(other),)))
            if form is not None:
                direct[:] = form
        return result

    dunder.__name__ = target
    return dunder


# Dunders upstream's python_variable_methods.cpp maps onto ATen methods.
MANUAL_METHODS = {"to", "size", "stride", "type", "item", "tolist", "numpy", "is_contiguous", "cpu", "numel",
                  "is_floating_point", "is_complex", "is_signed", "requires_grad_", "dim_order", "copy_",
                  "contiguous", "nonzero", "set_", "is_conj", "is_neg", "_is_zerotensor", "is_inference", "new_tensor"}

BINARY_DUNDERS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__div__": "div",
    "__idiv__": "div_", "__mod__": "remainder", "__imod__": "remainder_", "__eq__": "eq", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__matmul__": "matmul",
    "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
}


def install(C) -> None:
    global _door, _C, _planned
    _C = C
    _planned = C._tn_call_planned
    global _wrap_number, _TB
    _door = C._aten_dispatch
    S._TensorBase = _TB = C.TensorBase
    _wrap_number = getattr(C, "_tn_wrapped_number", None)
    _plans.install(C)
    global _MISS
    _MISS = _plans.MISS
    bindings = ops_table()["bindings"]

    ns = {}
    for name, entries in bindings["torch"].items():
        ns[name] = staticmethod(_make_function(name, _Overloads(entries, False)))
    VF = type("_VariableFunctionsClass", (), ns)
    VF.__module__ = "torch._C"
    C._VariableFunctionsClass = VF
    C._VariableFunctions = VF()
    from . import torch_functions

    torch_functions.install(C, C._VariableFunctions)
    from .. import functionalize

    functionalize.install(C, C._VariableFunctions)

    for mod_name in ("_nn", "_linalg", "_special", "_fft", "_nested", "_sparse"):
        mod = getattr(C, mod_name, None)
        if mod is None:
            mod = _pytypes.ModuleType(f"torch._C.{mod_name}")
            setattr(C, mod_name, mod)
        for name, entries in bindings[mod_name].items():
            fn = _make_function(name, _Overloads(entries, False))
            fn.__module__ = f"torch._C.{mod_name}"  # torch.fx writes generated code with it
            setattr(mod, name, fn)
    C._nn._parse_to = torch_functions._parse_to

    TB = C.TensorBase
    methods = bindings["Tensor"]
    for name, entries in methods.items():
        if name in TB.__dict__ or name in MANUAL_METHODS:
            continue  # native or hand-bound member (dim, data_ptr, to, ...) wins
        setattr(TB, name, _make_method(name, _Overloads(entries, True)))
    for dunder, target in BINARY_DUNDERS.items():
        if target in methods:
            setattr(TB, dunder, _make_binary_dunder(target, _Overloads(methods[target], True)))
    TB.__hash__ = object.__hash__
    from . import indexing, tensor_methods

    tensor_methods.install(C)
    indexing.install(C)

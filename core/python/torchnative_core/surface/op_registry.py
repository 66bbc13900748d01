"""`torch.ops` support: operator lookup (`_jit_get_operation`, `_get_operation_overload`),
`FunctionSchema` objects, and `torch.library` registrations (`_dispatch_library`).

ATen operators resolve to the single door. Operators defined through `torch.library` are kept
with their schema and their Python implementations per dispatch key; calling one runs its
CompositeImplicitAutograd / CompositeExplicitAutograd / backend implementation if it has one
and refuses by name otherwise."""

from __future__ import annotations


from ..binding.schema import Arg, all_schemas, overloads_by_name
from ..binding.schema import parse_schema as parse_schema_text
from . import dispatch_keys as DK
from .jit_arguments import Mismatch, converter, jit_type_name

C = None


# --- FunctionSchema ---------------------------------------------------------------------------

class AliasInfo:
    def __init__(self, text):
        inner = text[text.index("(") + 1 : text.index(")")]
        self.is_write = "!" in inner
        before = inner.replace("!", "").split(" -> ")[0]
        self.before_set = set(before.split("|"))
        self.after_set = set(inner.replace("!", "").split(" -> ")[-1].split("|"))


_JIT_TYPES: dict = {}
# Schema types that Python sees as another type (upstream's JIT maps them the same way).
_ANNOTATION = {"SymInt": "int", "ScalarType": "int", "Layout": "int", "MemoryFormat": "int", "Scalar": "number",
               "SymFloat": "float", "SymBool": "bool", "Dimname": "str"}


class JitTypeLike:
    """Enough of a JIT type for the Python that inspects schemas (str, kind, isSubtypeOf). One
    object per type text, as upstream's types are singletons: FakeTensorMode tests
    `arg.type is torch._C.TensorType.get()`."""

    def __new__(cls, text):
        hit = _JIT_TYPES.get(text)
        if hit is None:
            hit = _JIT_TYPES[text] = super().__new__(cls)
            hit._text = text
        return hit

    def __str__(self):
        return self._text

    __repr__ = __str__

    @property
    def annotation_str(self):
        """The type as upstream's JIT prints it for Python (`int?` -> `Optional[int]`,
        `SymInt[]` -> `List[int]`): torch.fx evaluates it to build operator signatures."""
        t = self._text
        if t.endswith("?"):
            return f"Optional[{JitTypeLike(t[:-1]).annotation_str}]"
        if t.endswith("]"):
            return f"List[{JitTypeLike(t[: t.rindex('[')]).annotation_str}]"
        return _ANNOTATION.get(t, t)

    def kind(self):
        t = self._text.rstrip("?")
        if t.endswith("]"):
            return "ListType"
        if self._text.endswith("?"):
            return "OptionalType"
        return {"Tensor": "TensorType", "int": "IntType", "float": "FloatType", "bool": "BoolType",
                "str": "StringType", "Scalar": "NumberType"}.get(t, "AnyType")

    def isSubtypeOf(self, other):
        o = str(other)
        return o == self._text or o == "Any" or (o.endswith("?") and o[:-1] == self._text)

    def containedTypes(self):
        t = self._text
        if t.endswith("?"):
            return [JitTypeLike(t[:-1])]
        if t.endswith("]"):
            return [JitTypeLike(t[: t.rindex("[")])]
        return []

    def getElementType(self):
        return self.containedTypes()[0]

    def __eq__(self, other):
        return str(other) == self._text

    def __hash__(self):
        return hash(self._text)


class Argument:
    def __init__(self, a: Arg):
        self.name = a.name
        t = a.base_type
        self.type = JitTypeLike(t)
        self.real_type = self.type
        self.kwarg_only = a.kwarg_only
        self.alias_info = AliasInfo(a.type) if "(" in a.type else None
        self.is_out = a.kwarg_only and a.is_write
        self._default = a.default
        self.N = None
        if "[" in t and t[t.index("[") + 1] != "]":
            self.N = int(t[t.index("[") + 1 : t.index("]")])

    @property
    def default_value(self):
        from ..binding.functions import _schema_default

        d = self._default
        if d is None:
            return None
        return _schema_default(Arg(self.name, str(self.type), d, self.kwarg_only))

    def has_default_value(self):
        return self._default is not None

    def __str__(self):
        s = f"{self.type} {self.name}"
        return s + (f"={self._default}" if self._default is not None else "")


class FunctionSchema:
    def __init__(self, schema, namespace="aten"):
        self._s = schema
        self.name = f"{namespace}::{schema.name}"
        self.overload_name = schema.overload
        self.arguments = [Argument(a) for a in schema.args]
        self.returns = [Argument(r) for r in schema.returns]
        self.is_vararg = False
        self.is_varret = False

    @property
    def is_mutable(self):
        return self._s.is_mutable

    def _is_view_op(self):
        return any(a.alias_info is not None and not a.alias_info.is_write for a in self.arguments)

    def __str__(self):
        text = self._s.text
        return f"{self.name.split('::')[0]}::{text}"

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class _SchemaInfo:
    """Mutation and aliasing questions about one schema (upstream's c10::utils::SchemaInfo),
    answered from its alias annotations: `Tensor(a!)` is written, `(a)` on an input and an
    output says they may alias. Argument values (add_argument_value) are recorded; upstream uses
    them to refine a few training-dependent cases (batch_norm's running stats), which this
    answers conservatively: mutable whenever the annotation says so."""

    def __init__(self, schema):
        self._schema = schema
        self._values = {}

    def _arg(self, which):
        if isinstance(which, str):
            for a in self._schema.arguments:
                if a.name == which:
                    return a
            raise RuntimeError(f"Schema has no argument named {which}")
        seq = self._schema.arguments if which.type.name == "input" else self._schema.returns
        return seq[which.index]

    def is_mutable(self, which=None):
        if which is None:
            return any(a.alias_info is not None and a.alias_info.is_write for a in self._schema.arguments)
        a = self._arg(which)
        return a.alias_info is not None and a.alias_info.is_write

    def has_argument(self, name):
        return any(a.name == name for a in self._schema.arguments)

    def may_alias(self, lhs, rhs):
        a, b = self._arg(lhs), self._arg(rhs)
        if a is b:
            return True
        return a.alias_info is not None and b.alias_info is not None and bool(
            (a.alias_info.before_set | a.alias_info.after_set) & (b.alias_info.before_set | b.alias_info.after_set))

    def may_contain_alias(self, lhs, rhs, bidirectional=True):
        return self.may_alias(lhs, rhs)

    def add_argument_value(self, name, value):
        self._values[name] = value

    def add_argument_values(self, values):
        self._values.update(values)


class _SchemaArgument:
    def __init__(self, type, idx):
        self.type, self.index = type, idx


# --- calling through the door -----------------------------------------------------------------

_BINDERS: dict = {}


def _binder(schema):
    """What binding a call needs from a schema, computed once per schema: the names for error
    messages, the positional count, and per argument its name, flags and converter."""
    b = _BINDERS.get(schema.qualified)
    if b is None:
        full = schema.qualified if "::" in schema.qualified else f"aten::{schema.qualified}"
        tail = schema.text[len(schema.qualified):]
        per_arg = [(a, a.name, a.kwarg_only, a.has_default, a.base_type == "Tensor", conv)
                   for a, conv in zip(schema.args, _converters(schema))]
        b = _BINDERS[schema.qualified] = (full, full.split(".")[0], f"Declaration: {full}{tail}", tail,
                                          sum(not a.kwarg_only for a in schema.args), per_arg)
    return b


def bind_schema(schema, args, kwargs):
    """Binds Python args/kwargs to a schema (JIT rules, simplified): positional first, then by
    name, then defaults. Returns the values in schema order or raises upstream's RuntimeError
    (the JIT's schema matching raises RuntimeError, with these messages)."""
    from ..binding.functions import _schema_default

    full, name, decl, tail, positional, per_arg = _binder(schema)
    if len(args) > len(per_arg):
        raise RuntimeError(f"{name}() expected at most {len(per_arg)} argument(s) but received {len(args)} argument(s). {decl}")
    if len(args) > positional:
        raise RuntimeError(f"{name}() takes {positional} positional argument(s) but {len(args)} was/were given.  {decl}")
    values = list(args)
    used = 0
    for a, aname, kwarg_only, has_default, _, _ in per_arg[len(args):]:
        if aname in kwargs:
            values.append(kwargs[aname])
            used += 1
        elif has_default:
            values.append(_schema_default(a))
        else:
            raise RuntimeError(f"{name}() is missing value for argument '{aname}'. {decl}")
    if used != len(kwargs):
        unknown = [k for k in kwargs if k not in {p[1] for p in per_arg}]
        raise RuntimeError(f"Unknown keyword argument '{unknown[0]}' for operator '{name}'. Schema: {full}{tail}")
    numbers_ok = None
    for i, (v, (a, aname, _, _, is_tensor, convert)) in enumerate(zip(values, per_arg)):
        if is_tensor and isinstance(v, (bool, int, float, complex)):
            # A number for a Tensor argument becomes a wrapped-number tensor for the operators
            # upstream's IValue conversion allows (mul.Tensor(x, 2), as a mode calls it back).
            if numbers_ok is None:
                from .dispatch_modes import _should_allow_numbers_as_tensors

                numbers_ok = _should_allow_numbers_as_tensors(name.split("::")[-1])
            if numbers_ok:
                from ..ops.factories.tensors import wrapped_number

                values[i] = wrapped_number(v)
                continue
        if v is None and is_tensor:
            raise RuntimeError(f"Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument "
                               f"#{i} '{aname}'")
        if convert is None:
            continue
        try:
            values[i] = convert(v)
        except Mismatch:
            raise RuntimeError(f"{name}() Expected a value of type '{jit_type_name(a.base_type)}' for argument "
                               f"'{aname}' but instead found type '{type(v).__name__}'.\nPosition: {i}\n"
                               f"Value: {v!r}\n{decl}") from None
    return values


_CONVERTERS: dict = {}


def _converters(schema):
    """Per argument, upstream's check and conversion of a Python value for its type (computed once
    per schema)."""
    convs = _CONVERTERS.get(schema.qualified)
    if convs is None:
        convs = _CONVERTERS[schema.qualified] = [converter(a.base_type) for a in schema.args]
    return convs


def _returns_scalar_type(schema):
    """The JIT hands a ScalarType result to Python as its enum value (torch.ops.aten.promote_types
    gives 6, not torch.float32); torch.promote_types and torch.result_type give dtypes."""
    return [r.type for r in schema.returns] == ["ScalarType"]


def _plain_results(schema):
    """How the JIT hands an operator's several results to Python: a plain tuple (an
    implementation may give the torch.return_types structseq the public function returns), a
    Tensor[] result as a list. None for a schema with a single result."""
    if len(schema.returns) < 2:
        return None
    lists = tuple(r.type.startswith("Tensor") and r.type.endswith("[]") for r in schema.returns)

    def plain(out):
        if type(out) is tuple and not any(lists):
            return out
        return tuple(list(x) if is_list else x for x, is_list in zip(out, lists))

    return plain


def _aten_overload_fn(schema):
    qual = schema.qualified
    plain = _plain_results(schema)
    if _returns_scalar_type(schema):
        def op(*args, **kwargs):
            return C._aten_dispatch(qual, *bind_schema(schema, args, kwargs))._tn_code

    elif plain is not None:
        def op(*args, **kwargs):
            return plain(C._aten_dispatch(qual, *bind_schema(schema, args, kwargs)))

    else:
        def op(*args, **kwargs):
            return C._aten_dispatch(qual, *bind_schema(schema, args, kwargs))

    op.__name__ = qual
    return op


def _aten_op_dk(schema, fn):
    """`OpOverload._op_dk(key, ...)`: the call from one dispatch key down. Functionalize is the
    key upstream's Python calls it with (FunctionalTensorMode): the door's functionalize step,
    autograd above it skipped. CompositeImplicitAutograd (export's decomposition overrides call
    it) runs the core's composite itself. Other keys take the whole door."""
    composite = schema.extra.get("composite_implicit")

    def op_dk(dk, *args, **kwargs):
        if dk == C.DispatchKey.Functionalize:
            from ..functionalize import step

            return step.handle(schema.qualified, bind_schema(schema, args, kwargs))
        if composite and dk == C.DispatchKey.CompositeImplicitAutograd:
            return C._tn_call_impl(schema.qualified, *bind_schema(schema, args, kwargs))
        return fn(*args, **kwargs)

    return op_dk


def _required_keywords(schema):
    """The keyword-only arguments without a default (an out= overload's `out`): a call that names
    none of them cannot bind to the schema."""
    return tuple(a.name for a in schema.args if a.kwarg_only and not a.has_default)


def _aten_packet_fn(name):
    # per overload, in the order they are tried: (schema, required keyword names, argument
    # types for _types_plausible, whether it returns a ScalarType), computed at the first call
    overloads = []

    def op(*args, **kwargs):
        if not overloads:
            for ov in overloads_by_name()[name]:
                schema = all_schemas()[name + ("." + ov if ov else "")]
                types = tuple(a.base_type.rstrip("?") for a in schema.args)
                overloads.append((schema, _required_keywords(schema), types, _returns_scalar_type(schema),
                                  _plain_results(schema)))
        errors = []
        for schema, required, types, scalar_type, plain in overloads:
            try:
                if any(k not in kwargs for k in required):
                    # it fails to bind: skip the message unless every overload fails (an
                    # exception with upstream's message per overload costs microseconds)
                    errors.append(schema)
                    continue
                values = bind_schema(schema, args, kwargs)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            if not _types_plausible(types, values):
                continue
            out = C._aten_dispatch(schema.qualified, *values)
            if plain is not None:
                return plain(out)
            return out._tn_code if scalar_type else out
        # upstream's message: every overload's reason, one after another
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + "\n\n".join([_bind_error(e, args, kwargs) for e in errors]
                                           or [f"aten::{name}: no overload matches"]))

    op.__name__ = name
    return op


def _bind_error(error, args, kwargs):
    """A skipped overload's binding error (its message), or the message already recorded."""
    if isinstance(error, str):
        return error
    try:
        bind_schema(error, args, kwargs)
    except RuntimeError as e:
        return str(e)
    return f"{error.qualified}: a required keyword argument is missing"


def _types_plausible(types, values):
    """Whether no value is a tensor where the schema wants a number, or the reverse."""
    for t, v in zip(types, values):
        if v is None:
            continue
        if t == "Tensor" and not isinstance(v, C.TensorBase):
            return False
        if t in ("Scalar", "int", "float") and isinstance(v, C.TensorBase):
            return False
    return True


# --- torch.library ----------------------------------------------------------------------------

LIB_SCHEMAS: dict = {}  # "ns::name.overload" -> Schema
LIB_IMPLS: dict = {}  # ("ns::name.overload", dispatch key) -> callable


class _DispatchModule:
    """The object `torch._C._dispatch_library` returns (upstream: torch::Library)."""

    def __init__(self, kind, ns, dispatch_key="", *rest):
        self.kind, self.ns, self.dispatch_key = kind, ns, dispatch_key

    def define(self, schema, alias_analysis="", tags=()):
        text = schema
        s = parse_schema_text(text)
        key = f"{self.ns}::{s.qualified}"
        LIB_SCHEMAS[key] = s
        return s.name

    def impl(self, name, dispatch_key, fn, *args, **kwargs):
        qual = name if "::" in name else f"{self.ns}::{name}"
        if "." not in qual.split("::")[1]:
            qual = qual
        LIB_IMPLS[(qual, dispatch_key or self.dispatch_key)] = fn

    def fallback(self, *args, **kwargs):
        return None

    def reset(self):
        return None

    def _register_fake(self, *args, **kwargs):
        return None


# Operators upstream registers from C++ outside aten (torch/csrc/autograd/record_function_ops.cpp).
# The profiler is not implemented: entering returns an inert handle, exiting does nothing.
BUILTIN_LIBRARY = {
    "profiler::_record_function_enter(str name, str? args=None) -> Tensor": lambda name, args=None: C._tn_empty([], 4),
    "profiler::_record_function_enter_new(str name, str? args=None) -> Tensor": lambda name, args=None: C._tn_empty([], 4),
    "profiler::_record_function_exit(Tensor(a!) handle) -> ()": lambda handle: None,
    "profiler::_record_function_exit._RecordFunction(Tensor(a!) handle) -> ()": lambda handle: None,
    # torch/csrc/inductor/inductor_ops.cpp: what compiled autograd uses to accumulate .grad
    "inductor::accumulate_grad_(Tensor variable, Tensor new_grad) -> ()": lambda variable, new_grad: _accumulate_grad(variable, new_grad),
}


def _accumulate_grad(variable, new_grad):
    if variable.grad is None:
        variable.grad = new_grad.detach().clone()
    else:
        variable.grad.add_(new_grad)


def _load_cpp_schemas():
    """Schemas upstream registers from C++ outside aten (data/cpp_schemas.txt). They resolve
    under torch.ops with their real schema and refuse by name when called."""
    from importlib import resources

    text = resources.files("torchnative_core.data").joinpath("cpp_schemas.txt").read_text()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        ns, _, body = line.partition("::")
        if ns == "cuda":  # registered only by CUDA builds
            continue
        s = parse_schema_text(body)
        LIB_SCHEMAS.setdefault(f"{ns}::{s.qualified}", s)


def install(C_) -> None:
    global C
    C = C_
    _load_cpp_schemas()
    for text, fn in BUILTIN_LIBRARY.items():
        ns, _, body = text.partition("::")
        s = parse_schema_text(body)
        LIB_SCHEMAS[f"{ns}::{s.qualified}"] = s
        LIB_IMPLS[(f"{ns}::{s.qualified}", "CompositeExplicitAutograd")] = fn

    def _jit_get_operation(qualname):
        ns, _, name = qualname.partition("::")
        if ns == "aten" and name in overloads_by_name():
            return _aten_packet_fn(name), list(overloads_by_name()[name])
        ovs = [k.split("::")[1].partition(".")[2] for k in LIB_SCHEMAS if k.split(".")[0] == qualname]
        if ovs:
            return _library_packet(qualname), ovs
        raise RuntimeError(f"No such operator {qualname}")

    def _get_operation_overload(qualname, overload):
        ns, _, name = qualname.partition("::")
        key = name + ("." + overload if overload else "")
        if ns == "aten" and key in all_schemas():
            s = all_schemas()[key]
            fn = _aten_overload_fn(s)
            return fn, _aten_op_dk(s, fn), [getattr(C.Tag, t) for t in s.tags if hasattr(C.Tag, t)]
        full = f"{ns}::{key}"
        if full not in LIB_SCHEMAS:
            raise RuntimeError(f"Couldn't find {qualname}.{overload}")
        fn = _library_overload(full)
        return fn, (lambda dk, *a, **k: fn(*a, **k)), []

    def _get_schema(qualname, overload):
        ns, _, name = qualname.partition("::")
        key = name + ("." + overload if overload else "")
        if ns == "aten" and key in all_schemas():
            return FunctionSchema(all_schemas()[key], "aten")
        full = f"{ns}::{key}"
        if full not in LIB_SCHEMAS:
            raise RuntimeError(f"Schema for {qualname}.{overload} not found")
        return FunctionSchema(LIB_SCHEMAS[full], ns)

    def _dispatch_library(kind, ns, dispatch_key="", *args):
        return _DispatchModule(kind, ns, dispatch_key)

    def _dispatch_has_kernel_for_dispatch_key(name, key):
        """Answers for the keys upstream's Python asks about (FakeTensorMode: Meta; decompose():
        CompositeImplicitAutograd) from the door's table: an aten overload with an implementation
        has a meta step (its shape logic runs on meta tensors); a composite decomposes."""
        key = getattr(key, "name", key)
        ns, _, op = name.partition("::")
        if ns != "aten":
            return False
        schema = all_schemas().get(op)
        if schema is None:
            return False
        if key == "CompositeImplicitAutograd":
            return bool(schema.extra.get("composite_implicit"))
        if key in ("Meta", "CPU", "CompositeExplicitAutograd"):
            from ..ops import IMPLS

            return op in IMPLS
        return False

    def _dispatch_has_kernel(name):
        return name.startswith("aten::") or name in LIB_SCHEMAS

    def _dispatch_find_dangling_impls():
        return []

    def _dispatch_kernel_for_dispatch_key_is_fallthrough(name, key):
        return False

    def _dispatch_has_backend_fallback(key):
        return False

    def _dispatch_is_alias_key(key):
        return key.name in ("Autograd", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                            "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutogradNestedTensor")

    def _dispatch_get_backend_keyset_from_autograd(key):
        return C.DispatchKeySet()

    def _dispatch_has_kernel_for_any_dispatch_key(name, ks):
        return False

    def _dispatch_check_invariants(name):
        return None

    def _dispatch_dump(name):
        return ""

    def _maybe_call_torch_function_for_op_packet(op, *args, **kwargs):
        return False, None

    def _check_schema_allow_fake_script_object(schema, *args, **kwargs):
        """Whether the arguments match the schema (upstream's matchSchema: names, arity, and types
        without Python-number-to-Tensor conversion); RuntimeError when they do not (torch.onnx
        picks an operator's overload by trying each)."""
        ns, _, name = schema.name.partition("::")
        key = name + ("." + schema.overload_name if schema.overload_name else "")
        ours = all_schemas().get(key) if ns == "aten" else LIB_SCHEMAS.get(f"{schema.name}" + (
            "." + schema.overload_name if schema.overload_name else ""))
        if ours is None:
            return True
        bound = bind_schema(ours, args, kwargs)
        given = dict(zip([a.name for a in ours.args], list(args) + [None] * len(ours.args)))
        given.update(kwargs)
        for a in ours.args:
            v = given.get(a.name)
            t = a.base_type
            if v is None:
                continue
            tensor = isinstance(v, C.TensorBase)
            if (t.rstrip("?") == "Tensor" and not tensor) or (t.rstrip("?") in ("Scalar", "int", "float", "bool")
                                                              and tensor):
                raise RuntimeError(f"{schema.name}() Expected a value of type '{t}' for argument '{a.name}' but "
                                   f"instead found type '{type(v).__name__}'.")
        del bound
        return True

    def _to_functionality_key(key):
        return key

    def _dispatch_pystub(name, overload):
        return None

    def _dispatch_get_computed_kernel_for_dispatch_key(name, dispatch_key):
        # torch.library.get_kernel: one door serves every key, so the kernel is the operator.
        ns, _, rest = name.partition("::")
        qual, _, overload = rest.partition(".")
        fn = _get_operation_overload(f"{ns}::{qual}", overload)[0]

        class _SafeKernelFunction:
            def call_boxed(self, keyset, *args, **kwargs):
                return fn(*args, **kwargs)

            __call__ = staticmethod(fn)

            def __repr__(self):
                return f"SafeKernelFunction({name}, {dispatch_key})"

        return _SafeKernelFunction()

    def parse_schema(text, allow_typevars=True):
        ns, sep, body = text.partition("::")
        if not sep:
            ns, body = "", text
        fs = FunctionSchema(parse_schema_text(body), ns)
        if not sep:
            fs.name = fs._s.name
        return fs

    def _any_output_is_alias_to_input_or_output(args, kwargs, outputs):
        """torch.library's custom-op aliasing check (upstream's python_dispatch.cpp): whether an
        output shares a storage with a tensor argument (or one in a list argument) or with an
        earlier output. Tensors without a storage are skipped, as upstream skips them."""
        import torch

        def storages(values):
            for v in values:
                items = v if isinstance(v, (list, tuple)) else (v,)
                for t in items:
                    if isinstance(t, torch.Tensor):
                        try:
                            yield t._tn_storage_id
                        except (RuntimeError, AttributeError):
                            continue

        seen = set(storages(list(args) + list((kwargs or {}).values())))
        for key in storages(outputs):
            if key in seen:
                return True
            seen.add(key)
        return False

    def _dispatch_get_registrations_for_dispatch_key(dispatch_key=""):
        """Operators with a kernel for the key ("" for every registered operator), as
        "ns::name.overload": aten's from the door's schema table, the rest from torch.library."""
        key = getattr(dispatch_key, "name", dispatch_key)
        names = []
        for op, schema in all_schemas().items():
            if not key or _dispatch_has_kernel_for_dispatch_key(f"aten::{op}", key):
                names.append(f"aten::{op}")
        if not key:
            names.extend(LIB_SCHEMAS)
        else:
            names.extend(full for (full, k) in LIB_IMPLS if k == key)
        return sorted(set(names))

    def _dispatch_has_computed_kernel_for_dispatch_key(name, key):
        return _dispatch_has_kernel_for_dispatch_key(name, key)
    for fn in (_dispatch_get_registrations_for_dispatch_key, _dispatch_has_computed_kernel_for_dispatch_key, _jit_get_operation, _get_operation_overload, _get_schema, _dispatch_library,
               _any_output_is_alias_to_input_or_output,
               _dispatch_has_kernel_for_dispatch_key, _dispatch_has_kernel, _dispatch_find_dangling_impls,
               _dispatch_kernel_for_dispatch_key_is_fallthrough, _dispatch_has_backend_fallback,
               _dispatch_is_alias_key, _dispatch_get_backend_keyset_from_autograd,
               _dispatch_has_kernel_for_any_dispatch_key, _dispatch_check_invariants, _dispatch_dump,
               _maybe_call_torch_function_for_op_packet, _check_schema_allow_fake_script_object,
               _to_functionality_key, _dispatch_pystub, parse_schema,
               _dispatch_get_computed_kernel_for_dispatch_key):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
    # JIT type singletons the Python front end builds schemas from (IntType.get(), ...).
    for tname, text in (("IntType", "int"), ("FloatType", "float"), ("StringType", "str"), ("BoolType", "bool"),
                        ("TensorType", "Tensor"), ("NoneType", "NoneType"), ("NumberType", "Scalar"),
                        ("ComplexType", "complex"), ("DeviceObjType", "Device"), ("AnyType", "Any"),
                        ("SymIntType", "SymInt"), ("SymBoolType", "SymBool")):
        cls = type(tname, (JitTypeLike,), {"__module__": "torch._C"})
        _JIT_TYPES.pop(text, None)
        single = cls(text)  # the named class's instance becomes the one object for its text
        cls.get = staticmethod(lambda single=single: single)
        setattr(C, tname, cls)
    import enum

    C._SchemaArgType = enum.Enum("_SchemaArgType", ["input", "output"], start=0, module="torch._C")
    for cls in (FunctionSchema, Argument, _SchemaInfo, _SchemaArgument):
        cls.__module__ = "torch._C"
    C._SchemaInfo = _SchemaInfo
    C._SchemaArgument = _SchemaArgument
    C.FunctionSchema = FunctionSchema
    C.Argument = Argument
    C._DispatchModule = _DispatchModule


_IMPL_ORDER = ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Meta")
# meta operands (and FakeTensorMode's kernel invocations, Meta in the include set) take the meta
# kernel first, as upstream's dispatcher picks the Meta key for them
_META_ORDER = ("Meta", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "CPU")


def _wants_meta(args, kwargs) -> bool:
    from .dispatch_modes import _meta_in_tls_dispatch_include

    def meta(a):
        if isinstance(a, (list, tuple)):
            return any(meta(x) for x in a)
        return getattr(a, "_tn_device_key", None) == "meta"

    return _meta_in_tls_dispatch_include() or any(meta(a) for a in (*args, *kwargs.values()))


_PLAIN_VALUES = frozenset({str, int, float, bool, type(None)})


def _plain_call(args, kwargs) -> bool:
    """Whether only the kernel can take this call: no TorchDispatchMode, nothing in the thread's
    local dispatch key sets, and arguments that are Python values or plain non-meta tensors.
    (The profiler's record_function ops run twice in every optimizer step and zero_grad.)"""
    if C._len_torch_dispatch_stack():
        return False
    d = DK._tls.__dict__
    if d and (d.get("include", DK._EMPTY)._keys or d.get("exclude", DK._EMPTY)._keys):
        return False
    base = C._tn_tensor_class_ref[0]
    for a in (*args, *kwargs.values()) if kwargs else args:
        t = type(a)
        if t not in _PLAIN_VALUES and not (t is base and a._tn_device_key != "meta"):
            return False
    return True


def _library_overload(full):
    schema = LIB_SCHEMAS[full]
    short = full.split(".")[0] if schema.overload else full

    def op(*args, **kwargs):
        if _plain_call(args, kwargs):
            order = _IMPL_ORDER
        else:
            from ..ops.door import modes

            # a torch.library operator meets modes and subclasses as an aten one does at the door
            out = modes.handle_library(full, args, kwargs)
            if out is not NotImplemented:
                return out
            order = _META_ORDER if _wants_meta(args, kwargs) else _IMPL_ORDER
        for key in order:
            fn = LIB_IMPLS.get((full, key)) or LIB_IMPLS.get((short, key))
            if fn is not None:
                return fn(*args, **kwargs)
        raise NotImplementedError(f"{full.replace('::', '.')} has no kernel for device 'cpu' (no implementation registered)")

    op.__name__ = full
    return op


def _library_packet(qualname):
    found = {}  # len(LIB_SCHEMAS) when resolved -> the overload (re-resolved when a library registers more)

    def op(*args, **kwargs):
        fn = found.get(len(LIB_SCHEMAS))
        if fn is None:
            for k in LIB_SCHEMAS:
                if k.split(".")[0] == qualname:
                    found.clear()
                    fn = found[len(LIB_SCHEMAS)] = _library_overload(k)
                    break
            else:
                raise RuntimeError(f"No such operator {qualname}")
        return fn(*args, **kwargs)

    return op

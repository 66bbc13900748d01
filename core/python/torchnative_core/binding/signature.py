"""A port of upstream's PythonArgParser (torch/csrc/utils/python_arg_parser.cpp) semantics.

Signature strings come from upstream's own generator (see tools/gen_tables.py), e.g.
``add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)``. Matching follows the
C++ rules: signatures are tried in order (deprecated ones last), the first that accepts the
arguments wins; ``bool`` does not satisfy ``int``; a number satisfies ``Tensor`` only for the
arithmetic functions upstream allows; a single positional int-list parameter accepts varargs.
"""

from __future__ import annotations

import re

from .plans import CONST, KW, POS, VARARGS

# Functions whose Tensor parameters accept Python numbers (upstream's allow-list).
NUMBERS_AS_TENSORS = {
    f"{base}{sfx}"
    for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide", "floor_divide")
    for sfx in ("", "_", "_out")
} | {"to", "_to_copy", "copy_"}

NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}

_TYPE_NAMES = {
    "Tensor": "Tensor", "Scalar": "Number", "int64_t": "int", "SymInt": "int", "double": "float",
    "TensorList": "tuple of Tensors", "IntArrayRef": "tuple of ints", "SymIntArrayRef": "tuple of ints",
    "ArrayRef<double>": "tuple of floats", "Generator": "torch.Generator", "bool": "bool",
    "ScalarType": "torch.dtype", "Layout": "torch.layout", "MemoryFormat": "torch.memory_format",
    "Device": "torch.device", "c10::string_view": "str", "ScalarList": "tuple of Scalars",
    "c10::List<::std::optional<Tensor>>": "tuple of Tensors", "Stream": "Stream", "DeviceIndex": "int",
    "Storage": "torch.Storage", "QScheme": "torch.qscheme", "DispatchKeySet": "DispatchKeySet",
}


class Param:
    __slots__ = ("name", "type", "size", "allow_none", "optional", "default", "keyword_only", "numbers_as_tensors")

    def __init__(self, text: str, keyword_only: bool, fn_name: str):
        default = None
        has_default = False
        if "=" in text:
            text, default = text.split("=", 1)
            has_default = True
        typ, _, name = text.rpartition(" ")
        self.allow_none = typ.endswith("?")
        typ = typ.rstrip("?")
        m = re.match(r"^(.*)\[(\d+)\]$", typ)
        self.size = int(m.group(2)) if m else 0
        self.type = m.group(1) if m else typ
        self.name = name
        self.optional = has_default
        self.keyword_only = keyword_only
        self.numbers_as_tensors = fn_name in NUMBERS_AS_TENSORS
        if default == "None":
            self.allow_none = True
        self.default = _parse_default(self, default) if has_default else None

    def type_name(self) -> str:
        return _TYPE_NAMES.get(self.type, self.type)


def _parse_default(p: Param, text: str):
    if text == "None":
        return None
    if text.startswith("at::Reduction::"):
        return {"None": 0, "Mean": 1, "Sum": 2}[text.rsplit("::", 1)[1]]
    t = p.type
    if t == "bool":
        return text in ("True", "true")
    if t in ("int64_t", "SymInt", "DeviceIndex"):
        return int(text)
    if t == "double":
        return float(text)
    if t == "Scalar":
        try:
            return int(text, 0)
        except ValueError:
            return float(text)
    if t in ("IntArrayRef", "SymIntArrayRef"):
        if text.startswith("{"):
            inner = text[1:-1]
            return [int(x) for x in inner.split(",")] if inner else []
        return [int(text)] * p.size
    if t == "c10::string_view":
        return _unquote(text)
    if t == "ScalarType":
        return "torch.int64"
    if t == "Layout":
        return "torch.strided"
    if text.startswith("at::Reduction::"):
        return {"None": 0, "Mean": 1, "Sum": 2}[text.rsplit("::", 1)[1]]
    if text.startswith("c10::MemoryFormat::"):
        return "contiguous_format"
    return text


def _unquote(s: str) -> str:
    body = s[1:-1]
    return bytes(body, "utf-8").decode("unicode_escape")


class Signature:
    __slots__ = ("name", "params", "max_pos", "deprecated", "hidden", "entry", "text")

    def __init__(self, text: str, entry: dict):
        self.text = text
        flags = text.split("|")[1:]
        body = text.split("|")[0]
        self.deprecated = "deprecated" in flags
        self.hidden = "hidden" in flags
        self.name = body[: body.index("(")]
        inner = body[body.index("(") + 1 : body.rindex(")")]
        self.params = []
        kw = False
        for piece in _split(inner):
            if piece == "*":
                kw = True
                continue
            self.params.append(Param(piece, kw, self.name))
        self.max_pos = sum(1 for p in self.params if not p.keyword_only)
        self.entry = entry

    def __repr__(self):
        return f"Signature({self.text})"


def _split(s: str):
    out, depth, cur = [], 0, ""
    for c in s:
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


# --- per-type checks (FunctionParameter::check) ---------------------------------------------

_TensorBase = None  # set by install(): torch._C.TensorBase


def _is_tensor(x):
    return isinstance(x, _TensorBase)


def _is_long(x):
    return (isinstance(x, int) and not isinstance(x, bool)) or _is_np_int(x)


def _is_np_int(x):
    t = type(x)
    return t.__module__ == "numpy" and hasattr(x, "dtype") and x.dtype.kind in "iu"


def _is_np_scalar(x):
    t = type(x)
    return t.__module__ == "numpy" and hasattr(x, "dtype") and x.ndim == 0 if hasattr(x, "ndim") else False


def _is_scalar(x):
    return isinstance(x, (int, float, complex)) or _is_np_scalar(x) or _is_symnum(x)


def _is_symnum(x):
    return type(x).__name__ in ("SymInt", "SymFloat", "SymBool")


def _is_index(x):
    if isinstance(x, bool):
        return False  # upstream's THPUtils_checkIndex refuses bools: std(False) is unbiased=False
    if isinstance(x, int):
        return True
    if _is_tensor(x):
        return False
    return hasattr(type(x), "__index__")


def _is_int_or_symint(x):
    if type(x).__name__ == "SymInt":
        return True
    if _is_tensor(x):
        return x.numel() == 1 and not x.dtype.is_floating_point and not x.dtype.is_complex
    return _is_index(x)


def _is_int_list(x, size):
    if isinstance(x, (tuple, list)):
        return len(x) == 0 or _is_int_or_symint(x[0])
    return size > 0 and _is_int_or_symint(x)


def check(p: Param, x) -> bool:
    t = p.type
    if t == "Tensor":
        return _is_tensor(x) or (p.numbers_as_tensors and _is_scalar(x))
    if t in ("Scalar", "double"):
        if t == "Scalar" and _is_scalar(x):
            return True
        if isinstance(x, (float, int)) or _is_symnum(x) or (_is_np_scalar(x)):
            return True
        if _is_tensor(x):
            return not x.requires_grad and x.dim() == 0
        return False
    if t == "int64_t":
        if _is_long(x) or type(x).__name__ == "SymInt":
            return True
        if _is_tensor(x):
            return (not x.dtype.is_floating_point and not x.dtype.is_complex and x.dtype._tn_name != "bool"
                    and not x.requires_grad and x.dim() == 0)
        return False
    if t in ("SymInt", "DeviceIndex"):
        return _is_int_or_symint(x)
    if t in ("IntArrayRef", "SymIntArrayRef"):
        return _is_int_list(x, p.size)
    if t == "bool":
        return isinstance(x, bool) or (type(x).__name__ == "bool_" and type(x).__module__ == "numpy")
    if t == "TensorList":
        return isinstance(x, (tuple, list)) and all(_is_tensor(e) for e in x)
    if t == "c10::List<::std::optional<Tensor>>":
        return isinstance(x, (tuple, list)) and all(e is None or _is_tensor(e) for e in x)
    if t == "ScalarType":
        from ..surface.types import dtype

        return isinstance(x, dtype) or x in (float, int, bool, complex)
    if t == "Layout":
        from ..surface.types import layout

        return isinstance(x, layout)
    if t == "MemoryFormat":
        from ..surface.types import memory_format

        return isinstance(x, memory_format)
    if t == "Device":
        from ..surface.types import device

        return _is_long(x) or isinstance(x, (str, device))
    if t == "c10::string_view":
        return isinstance(x, str)
    if t == "ArrayRef<double>":
        return isinstance(x, (tuple, list)) and (len(x) == 0 or isinstance(x[0], (float, int, complex)))
    if t == "ScalarList":
        return isinstance(x, (tuple, list)) and all(_is_scalar(e) for e in x)
    if t == "Generator":
        return type(x).__name__ == "Generator"
    if t == "Stream":
        return type(x).__name__ == "Stream" or hasattr(x, "stream_id")
    if t == "Storage":
        return hasattr(x, "_tn_storage") or type(x).__name__.endswith("Storage")
    return True


def parse(sig: Signature, args: tuple, kwargs: dict, raise_exception: bool, trace=None):
    """Binds args/kwargs to `sig`. Returns {param name: python value or None} or None.

    With `trace` (a pair of lists: checks, sources), records each (parameter type, value) pair
    that `check` examined, and where each parameter's value came from (binding/plans.py)."""
    nargs = len(args)
    remaining = len(kwargs)
    allow_varargs = sig.max_pos == 1 and sig.params and sig.params[0].type in ("IntArrayRef", "SymIntArrayRef")
    if nargs > sig.max_pos and not allow_varargs:
        if raise_exception:
            _extra_args(sig, nargs)
        return None
    out = {}
    pos = 0
    for i, p in enumerate(sig.params):
        is_kwd = False
        present = True
        if pos < nargs:
            if p.keyword_only:
                if raise_exception:
                    _extra_args(sig, nargs)
                return None
            x = args[pos]
        else:
            is_kwd = True
            kw_name = p.name
            if p.name in kwargs:
                x = kwargs[p.name]
            else:
                present = False
                x = None
                for alt in NUMPY_NAMES.get(p.name, ()):
                    if alt in kwargs:
                        x, present, kw_name = kwargs[alt], True, alt
                        break
        varargs_ok = allow_varargs and pos == 0 and not is_kwd
        if (not present and p.optional) or (present and x is None and p.allow_none):
            out[p.name] = p.default if not present else None
            if trace is not None:
                trace[1].append((CONST, out[p.name], None))
        elif not present:
            if raise_exception:
                raise TypeError(f'{sig.name}() missing {1} required positional argument: "{p.name}"')
            return None
        elif check(p, x):
            out[p.name] = x
            if trace is not None:
                trace[0].append((p.type, x))
                trace[1].append((KW, kw_name, x) if is_kwd else (POS, pos, x))
        elif varargs_ok and _is_int_list(tuple(args), p.size):
            out[p.name] = tuple(args)
            if trace is not None:
                trace[0].append((p.type, x))
                trace[0].append((p.type, tuple(args)))
                trace[1].append((VARARGS, None, tuple(args)))
            pos = nargs
            continue
        else:
            if trace is not None:
                trace[0].append((p.type, x))
                if varargs_ok:
                    trace[0].append((p.type, tuple(args)))
            if raise_exception:
                if is_kwd:
                    raise TypeError(f"{sig.name}(): argument '{p.name}' must be {p.type_name()}, not {type(x).__name__}")
                raise TypeError(
                    f"{sig.name}(): argument '{p.name}' (position {pos + 1}) must be {p.type_name()}, not {type(x).__name__}"
                )
            return None
        if not is_kwd:
            pos += 1
        elif present:
            remaining -= 1
    if remaining > 0:
        if raise_exception:
            names = {p.name for p in sig.params}
            for k in kwargs:
                if k not in names:
                    raise TypeError(f"{sig.name}() got an unexpected keyword argument '{k}'")
            raise TypeError(f"{sig.name}() got multiple values for argument")
        return None
    return out


def _extra_args(sig, nargs):
    raise TypeError(f"{sig.name}() takes {sig.max_pos} positional argument{'s' if sig.max_pos != 1 else ''} but {nargs} were given")


def describe_call(args, kwargs) -> str:
    parts = [_arg_desc(a) for a in args] + [f"{k}={_arg_desc(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _arg_desc(a):
    if _is_tensor(a):
        return "Tensor"
    if isinstance(a, (tuple, list)):
        return f"{type(a).__name__} of [{', '.join(sorted({_arg_desc(x) for x in a}))}]" if a else type(a).__name__
    return type(a).__name__


def no_match(name: str, sigs, args, kwargs):
    visible = [s for s in sigs if not s.hidden]
    plausible = [s for s in visible if len(args) + len(kwargs) <= len(s.params)]
    if len(plausible) == 1:
        parse(plausible[0], args, kwargs, True)
    lines = "\n".join(" * " + s.text.split("|")[0][len(s.name):] for s in visible)
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got {describe_call(args, kwargs)}, but expected one of:\n{lines}\n"
    )

"""TorchDispatchMode support at the door: the innermost mode sees every operator as an
`OpOverload` (`torch.ops.aten.add.Tensor`), with itself popped while it runs, as upstream does."""

from __future__ import annotations

from .. import base as B


def overload_packet(op: str):
    import torch

    name, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, name)
    return getattr(packet, overload or "default")


_NUMBER_FORMATS = {"int64": "<q", "float64": "<d", "bool": "?"}


def _number(t):
    """A wrapped number's value, read from its bytes (not through the door: this runs inside
    the door's mode steps)."""
    import struct

    from ...surface import types as T

    return struct.unpack(_NUMBER_FORMATS[T.BY_CODE[t._tn_dtype_code]._tn_name], B.C._tn_to_bytes(t))[0]


def _split(op, args):
    """Door arguments are in schema order; a mode sees positional arguments positionally and
    keyword-only ones as kwargs, leaving out those still at their default, as upstream does."""
    from ...binding.schema import all_schemas

    schema = all_schemas().get(op)
    if schema is None:
        return tuple(args), {}
    pos, kw = [], {}
    # A Python number bound to a Tensor argument reaches a mode as the number (upstream converts
    # wrapped-number tensors back when it calls into Python) for the operators whose Tensor
    # arguments take numbers when called back (add, mul, ...); elsewhere it stays a tensor.
    from ...surface.dispatch_modes import _should_allow_numbers_as_tensors

    if _should_allow_numbers_as_tensors(op.split(".")[0]):
        args = [_number(v) if getattr(v, "_tn_wrapped_number", False) else v for v in args]
    for a, v in zip(schema.args, args):
        if a.kwarg_only:
            if not _is_default(a, v) and v is not None:
                kw[a.name] = v
        else:
            pos.append(v)
    # trailing positional arguments equal to their defaults are left out, as upstream's
    # parseIValuesToPyArgsKwargs does (export graphs show `embedding(w, ids)`, not its defaults)
    positional = [a for a in schema.args if not a.kwarg_only]
    while pos and _is_default(positional[len(pos) - 1], pos[-1]):
        pos.pop()
    if "device" not in kw and _is_factory(schema):
        # upstream's binding fills a factory's device with the default device (cpu; a
        # set_default_device mode passes its own) before the call reaches a mode
        from ...surface import types as T

        kw = {**kw, "device": T.device("cpu")}
        order = [a.name for a in schema.args if a.kwarg_only]
        kw = {k: kw[k] for k in order if k in kw}
    return tuple(pos), kw


def _is_factory(schema) -> bool:
    names = {a.name for a in schema.args}
    return {"dtype", "layout", "device", "pin_memory"} <= names and not any(
        a.base_type.startswith("Tensor") for a in schema.args)


def _is_default(a, v) -> bool:
    from ...binding.functions import _schema_default

    if not a.has_default:
        return False
    d = _schema_default(a)
    if v is None or d is None:
        return v is None and d is None
    if isinstance(v, B.C.TensorBase) or isinstance(d, B.C.TensorBase):
        return False
    if isinstance(v, bool) != isinstance(d, bool) or (isinstance(d, (int, float)) and type(v) is not type(d)):
        return False  # as upstream's IValue comparison: 1.0 is not the default 1 (bloom's beta=1.0)
    if isinstance(v, (list, tuple)) or isinstance(d, (list, tuple)):
        return isinstance(v, (list, tuple)) and isinstance(d, (list, tuple)) and list(v) == list(d)
    try:
        return bool(v == d)
    except Exception:
        return False


def _python_key_excluded() -> bool:
    # torch._C._DisableTorchDispatch (FakeTensorMode's kernel invocations, subclasses unwrapping
    # themselves) excludes the Python key: modes and subclasses are skipped while it is on.
    from ...surface.dispatch_keys import excluded

    return excluded(B.C.DispatchKey.Python)


def _overloaded(args, kwargs):
    """Subclass types that override `__torch_dispatch__`, in argument order, each once, a
    subclass before its bases (upstream's python_arg_parser order)."""
    from ...surface.torch_function import overrides_torch_dispatch

    C = B.C
    found = []

    def visit(a):
        if isinstance(a, C.TensorBase):
            t = type(a)
            if t is not C._tn_tensor_class_ref[0] and t not in found and overrides_torch_dispatch(t):
                at = next((i for i, s in enumerate(found) if issubclass(t, s)), None)
                found.insert(at, t) if at is not None else found.append(t)
        elif isinstance(a, (list, tuple)):
            for x in a:
                visit(x)

    for a in args:
        visit(a)
    for a in (kwargs or {}).values():
        visit(a)
    return found


def _fake_parts(out, args):
    """A composite implemented here as a kernel (not as door calls, as upstream's are) computes
    plain meta results from fake operands: they become fake tensors of the operands' mode and
    device, as FakeTensorMode makes its kernels' meta results."""
    import sys

    import torch

    ft = sys.modules.get("torch._subclasses.fake_tensor")  # no fake tensor exists before its import
    fake = next((a for a in args if isinstance(a, ft.FakeTensor)), None) if ft is not None else None
    if fake is None:
        return out
    FakeTensor = ft.FakeTensor

    def wrap(t):
        if type(t) is torch.Tensor and t.device.type == "meta":
            return FakeTensor(fake.fake_mode, t, fake.fake_device)
        return t

    return tuple(wrap(t) for t in out) if isinstance(out, tuple) else wrap(out)


def handle_library(full, args, kwargs):
    """The Python-key step for a torch.library operator ("ns::name.overload"), which does not
    pass the door: the innermost mode, else subclass overrides; NotImplemented when neither."""
    C = B.C
    if _python_key_excluded():
        return NotImplemented
    overloaded = _overloaded(args, kwargs)
    if not overloaded and not C._len_torch_dispatch_stack():
        return NotImplemented
    import torch

    ns, _, rest = full.partition("::")
    name, _, overload = rest.partition(".")
    func = getattr(getattr(getattr(torch.ops, ns), name), overload or "default")
    return _to_python(func, overloaded, tuple(args), dict(kwargs), full)


def _to_python(func, overloaded, pos, kw, name):
    """The innermost mode (popped while it runs), then, if it declines (NotImplemented), each
    overriding subclass in turn, as upstream's handle_torch_function does."""
    C = B.C
    if C._len_torch_dispatch_stack():
        mode = C._pop_torch_dispatch_stack()
        try:
            out = mode.__torch_dispatch__(func, tuple(overloaded), pos, kw)
        finally:
            C._push_on_torch_dispatch_stack(mode)
        if out is not NotImplemented:
            return out
    for t in overloaded:
        out = t.__torch_dispatch__(func, tuple(overloaded), pos, kw)
        if out is not NotImplemented:
            return out
    names = "".join(f"\n  - tensor subclass {t}" for t in overloaded)
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_dispatch__ handlers returned "
                    f"NotImplemented:\n{names}\n\nFor more information, try re-running with "
                    "TORCH_LOGS=not_implemented")


def pre_dispatch(op, args, kwargs=None):
    """The door's first step while PreDispatch is included: upstream's own PreDispatch handler
    (torch._ops `_get_dispatch`), which hands the call to the innermost pre-dispatch mode with it
    popped (export's ProxyTorchDispatchMode, seeing `linear` before it decomposes)."""
    from torch._C import DispatchKey
    from torch._ops import _len_torch_dispatch_stack_pre_dispatch

    if not _len_torch_dispatch_stack_pre_dispatch() or _python_key_excluded():
        return NotImplemented
    func = overload_packet(op)
    handler = func._get_dispatch(DispatchKey.PreDispatch)
    if not callable(handler) or isinstance(handler, DispatchKey):
        return NotImplemented
    pos, kw = _split(op, args)
    kw.update(kwargs or {})
    return handler(*pos, **kw)


def _python_cia_kernel(op):
    """While upstream's Python dispatcher is on, a Python kernel registered for an operator's
    CompositeImplicitAutograd key replaces its decomposition (export's run_decompositions
    registers the decomposition table's entries there: dropout becomes clone)."""
    from ...surface.dispatch_keys import included

    if not included(B.C.DispatchKey.PythonDispatcher):
        return None
    kernel = overload_packet(op).py_kernels.get(B.C.DispatchKey.CompositeImplicitAutograd)
    return kernel if callable(kernel) and not isinstance(kernel, B.C.DispatchKey) else None


def handle(op, args, kwargs=None):
    """The door's Python-key step: the innermost TorchDispatchMode, else the `__torch_dispatch__`
    of tensor subclasses among the arguments, else the implementation."""
    C = B.C
    if _python_key_excluded() or op == "detach_":
        # upstream's detach_ is done at the autograd key and never redispatches, so modes below
        # it do not see it (only pre-dispatch tracing records it)
        return C._tn_call_impl(op, *args, **(kwargs or {}))
    from ...binding.schema import all_schemas

    schema = all_schemas().get(op)
    overloaded = _overloaded(args, kwargs)
    if schema is not None and schema.extra.get("composite_implicit"):
        # CompositeImplicitAutograd operators decompose before the Python key upstream, so a
        # mode sees their parts (t + addmm for linear), never the composite itself.
        override = _python_cia_kernel(op)
        if override is None:
            out = C._tn_call_impl(op, *args, **(kwargs or {}))
            return _fake_parts(out, args) if overloaded else out
        pos, kw = _split(op, args)
        kw.update(kwargs or {})
        out = override(*pos, **kw)
        if out is not NotImplemented:
            return out
        # the override preserves the operator (export's _special_op_to_preserve_cia): the
        # modes see it whole, as upstream's dispatcher passes it on below the composite
        if not overloaded and not C._len_torch_dispatch_stack():
            return C._tn_call_impl(op, *args, **(kwargs or {}))
        return _to_python(overload_packet(op), overloaded, pos, kw, f"aten::{op}")
    if not overloaded and not C._len_torch_dispatch_stack():
        return C._tn_call_impl(op, *args, **(kwargs or {}))
    pos, kw = _split(op, args)
    kw.update(kwargs or {})
    out = _to_python(overload_packet(op), overloaded, pos, kw, f"aten::{op}")
    if schema is not None and isinstance(args[0] if args else None, C.TensorBase) and schema.is_view:
        _mark_views(out, args[0])
    return out


def _mark_views(out, base):
    """A view operator's results are views of its input whoever computed them, as upstream's
    ADInplaceOrView key (above the Python key) makes them."""
    if isinstance(out, B.C.TensorBase):
        if out is not base:
            out._tn_mark_view_of(base)
    elif isinstance(out, (list, tuple)):
        for t in out:
            _mark_views(t, base)

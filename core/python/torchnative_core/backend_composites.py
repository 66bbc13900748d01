"""A backend's own kernel for a composite operator runs before the core's decomposition of it.

Upstream's dispatcher prefers a kernel registered for a backend's dispatch key to the
CompositeImplicitAutograd kernel of the same overload, so an accelerator can supply `linear`,
`layer_norm` or `scaled_dot_product_attention` as one fused kernel. Here the core's
implementations of those overloads are compositions through the door; when a plugin registers a
kernel for one of them, `refresh` puts a router in front of the core's implementation in the
door's table:

* operands on a device whose backend has the kernel: the output metadata comes from running the
  core's composite on meta tensors (shapes, dtypes and strides exactly as the decomposition would
  give them, no data touched), the outputs are allocated on the device, and the backend's kernel
  fills them (`fn(args, outs)`, every schema argument in order, defaults filled in);
* any other device, or a call the router does not cover: the core's composite, unchanged.

Autograd: none of these overloads has a derivative formula of its own (upstream has none either:
their gradients come from the decomposition). When grad mode is on and an input requires grad,
the decomposition runs, so its parts record the graph and backward works on every backend.
Upstream in that case runs the backend's kernel and refuses at backward ("derivative ... not
implemented") unless the backend also registers an Autograd kernel; decomposing gives the same
values and a working backward, so we chose it (docs/plugins.md, "Kernels for composite operators").

Covered: functional overloads (no mutated argument, no aliased return) whose results are tensors
or tuples of tensors, and whose composite runs on meta tensors (where it does not, the
decomposition runs and a RuntimeWarning says so once). A kernel that raises NotImplementedError
(a dtype it does not cover) declines the call, and the decomposition runs. Routers are only
installed for overloads some backend registered, so every other call pays nothing.
"""

from __future__ import annotations

import warnings

from .binding.schema import all_schemas

_ORIGINAL: dict = {}  # overload -> the core's composite, while a router stands in front of it
_COMPOSITES: frozenset | None = None
_NO_META: set = set()  # overloads already warned about (no meta step: their decomposition runs)


def composites() -> frozenset:
    """Overloads a backend may supply as one kernel: CompositeImplicitAutograd upstream,
    functional, returning fresh tensors."""
    global _COMPOSITES
    if _COMPOSITES is None:
        out = set()
        for name, s in all_schemas().items():
            if not s.extra.get("composite_implicit") or s.is_mutable or not s.returns:
                continue
            if all(r.type == "Tensor" for r in s.returns):
                out.add(name)
        _COMPOSITES = frozenset(out)
    return _COMPOSITES


def _plain(op: str) -> str:
    return op[6:] if op.startswith("aten::") else op


def is_composite(op: str) -> bool:
    return _plain(op) in composites()


def overridden() -> dict:
    """{overload: sorted device keys} of the composites a backend supplies now."""
    from . import ops

    return {op: sorted(getattr(ops.IMPLS[op], "_tn_devices", ())) for op in _ORIGINAL}


def refresh(C) -> None:
    """Puts a router in front of every composite some plugin registered a kernel for, and takes
    away the routers of those no plugin supplies any more (a plugin that failed half way)."""
    from . import ops

    wanted: dict = {}
    for per_device in C._tn_registered_kernels().values():
        for device, names in per_device.items():
            for name in names:
                op = _plain(name)
                if op in composites() and op in ops.IMPLS and op not in ops.OWN_KERNEL:
                    wanted.setdefault(op, set()).add(device)
    for op in list(_ORIGINAL):
        if op not in wanted:
            ops.IMPLS[op] = _ORIGINAL.pop(op)
    for op, devices in wanted.items():
        composite = _ORIGINAL.setdefault(op, ops.IMPLS[op])
        ops.IMPLS[op] = _router(C, op, composite, frozenset(devices))


def _tensors(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from (x for x in a if hasattr(x, "_tn_device_key"))
        elif hasattr(a, "_tn_device_key"):
            yield a


def _router(C, op, composite, devices):
    from .autograd.formula import FORMULAS
    from .binding.functions import _schema_default

    import torch

    schema = all_schemas()[op]
    has_formula = op in FORMULAS

    def bind(args, kwargs):
        full = list(args)
        for a in schema.args[len(args):]:
            if kwargs and a.name in kwargs:
                full.append(kwargs[a.name])
            elif a.has_default:
                full.append(_schema_default(a))
            else:
                raise TypeError(f"{op}() missing required argument '{a.name}'")
        return full

    def route(*args, **kwargs):
        first = next(_tensors(args), None)
        if first is None or first._tn_device_key not in devices:
            return composite(*args, **kwargs)
        if not has_formula and C.is_grad_enabled() and any(t._tn_requires_grad for t in _tensors(args)):
            return composite(*args, **kwargs)  # the parts record the graph (module docstring)
        full = bind(args, kwargs)
        meta = _on_meta(C, op, composite, full)
        if meta is None:
            return composite(*args, **kwargs)
        results = meta if isinstance(meta, tuple) else (meta,)
        outs = [torch.empty_strided(tuple(m.shape), m.stride(), dtype=m.dtype, device=first.device) for m in results]
        try:
            C._tn_launch(op, tuple(full), tuple(outs))
        except NotImplementedError:
            return composite(*args, **kwargs)  # the kernel declined these operands (a dtype it lacks)
        if not isinstance(meta, tuple):
            return outs[0]
        return type(meta)(outs) if type(meta) is not tuple else tuple(outs)

    route._tn_devices = devices
    route._tn_composite = composite
    route.__name__ = getattr(composite, "__name__", op)
    route.__doc__ = f"{op}: the backend's own kernel on {', '.join(sorted(devices))}; the core's composite elsewhere."
    return route


def _on_meta(C, op, composite, full):
    """The composite's result on meta twins of the arguments: the output metadata the backend's
    kernel must fill. None when the result is not a tensor or a tuple of tensors. Dispatch modes
    are set aside meanwhile: the meta run is bookkeeping, not an operator the user called."""
    import torch

    def twin(a):
        if hasattr(a, "_tn_device_key"):
            return torch.empty_strided(tuple(a.shape), a.stride(), dtype=a.dtype, device="meta")
        if isinstance(a, (list, tuple)) and any(hasattr(x, "_tn_device_key") for x in a):
            return type(a)(twin(x) for x in a)
        return a

    modes = [C._pop_torch_dispatch_stack() for _ in range(C._len_torch_dispatch_stack())]
    try:
        with torch.no_grad():
            meta = composite(*[twin(a) for a in full])
    except (NotImplementedError, RuntimeError) as e:
        # A composite whose parts read values on the host has no meta step: the decomposition
        # runs, and the backend author is told why.
        if op not in _NO_META:
            _NO_META.add(op)
            warnings.warn(f"torchnative: the kernel registered for aten.{op} is not used: the core cannot compute "
                          f"its output shapes without data ({type(e).__name__}: {str(e).splitlines()[0]}); "
                          "its decomposition runs instead", RuntimeWarning, stacklevel=3)
        return None
    finally:
        for m in reversed(modes):
            C._push_on_torch_dispatch_stack(m)
    results = meta if isinstance(meta, tuple) else (meta,)
    if not all(hasattr(r, "_tn_device_key") for r in results):
        return None
    return meta

"""The last step of the door's lookup: an aten overload the core has no implementation of runs
upstream's own Python decomposition (torch._decomp's table: reference implementations written
with other aten operators, which then enter the door themselves), when upstream has one.
Without one the door refuses by name, as before; so it does when an input requires grad, since
upstream differentiates these operators with derivative formulas the decomposition's parts need
not reproduce.

Looked up on the first call of such an overload (importing torch._decomp costs about 1.5 s, paid
only by a program that needs it); the door then keeps the result in its table.
"""

from __future__ import annotations




_MISSES: set[str] = set()


_ACTIVE: set[str] = set()


def _requires_grad(value) -> bool:
    import torch

    items = value if isinstance(value, (list, tuple)) else (value,)
    return any(isinstance(t, torch.Tensor) and t.requires_grad for t in items)


def _misfits(fn, op) -> bool:
    """A decomposition registered for an operator's every overload that cannot take this one's
    arguments: the `out_dtype` overloads of mm/bmm/addmm/baddbmm (upstream has CUDA kernels only
    for them, so CPU calls refuse) would bind out_dtype to `beta`."""
    import inspect

    names = [a.name for a in op._schema.arguments]
    if "out_dtype" not in names:
        return False
    try:
        return "out_dtype" not in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def lookup(name: str):
    """A callable running upstream's decomposition of `aten::<name>` with the door's arguments
    (every argument positional, in schema order), or None."""
    if name in _MISSES:
        return None
    base, _, overload = name.partition(".")
    try:
        import torch
        from torch._decomp import decomposition_table

        op = getattr(getattr(torch.ops.aten, base), overload or "default")
        fn = decomposition_table.get(op)
    except (AttributeError, ImportError, RuntimeError):
        fn = None
    if fn is not None and _misfits(fn, op):
        fn = None
    if fn is None:
        _MISSES.add(name)
        return None
    # the door passes kwarg-only arguments positionally; the decompositions take them by name
    kwarg_only = [a.kwarg_only for a in op._schema.arguments]
    # an in-place pointwise operator: upstream's TensorIterator never resizes self, where the
    # reference's out= wrapper would (with a warning)
    first = op._schema.arguments[0] if op._schema.arguments else None
    inplace_pointwise = (base.endswith("_") and first is not None and first.alias_info is not None
                         and first.alias_info.is_write and torch.Tag.pointwise in op.tags)

    def decomposed(*args, **kwargs):
        if name in _ACTIVE:  # a decomposition that calls its own operator: refuse, not recurse
            raise NotImplementedError(f"aten.{name}: upstream's decomposition calls the operator itself and the "
                                      "core has no kernel for it")
        if torch.is_grad_enabled() and any(_requires_grad(a) for a in (*args, *kwargs.values())):
            # upstream differentiates these operators with their own derivative formulas; through
            # the decomposition's parts the gradient can differ (pdist's at coincident rows is NaN)
            raise NotImplementedError(f"aten.{name} has no kernel or derivative in torchnative; upstream's "
                                      "decomposition runs only for inputs that do not require grad")
        if inplace_pointwise and isinstance(args[0], torch.Tensor):
            shape = torch.broadcast_shapes(*[a.shape for a in args if isinstance(a, torch.Tensor)])
            if list(shape) != list(args[0].shape):
                raise RuntimeError(f"output with shape {list(args[0].shape)} doesn't match the broadcast shape "
                                   f"{list(shape)}")
        pos = [a for a, kw in zip(args, kwarg_only) if not kw]
        kw = {spec.name: a for spec, a in zip(op._schema.arguments, args) if spec.kwarg_only}
        _ACTIVE.add(name)
        try:
            out = fn(*pos, **kw, **kwargs)
        finally:
            _ACTIVE.discard(name)
        if out is NotImplemented:  # upstream's decomposition declines these arguments
            raise NotImplementedError(f"aten.{name} has no kernel for these arguments, and upstream's decomposition "
                                      "does not cover them")
        if isinstance(out, tuple) and type(out) is not tuple:
            # the reference wrappers return their own namedtuples; the operator returns
            # torch.return_types' when its schema names the results, a plain tuple otherwise
            import torch.return_types as rt

            named = getattr(rt, base, None)
            out = named(tuple(out)) if named is not None and type(out).__name__.endswith(base) else tuple(out)
        return out

    decomposed.__name__ = f"upstream_decomposition_{base}"
    return decomposed

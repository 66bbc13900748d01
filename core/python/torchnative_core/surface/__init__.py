"""Builds the Python-visible surface of `torch._C` around the native module.

`install(C)` runs once, from the native module's init, with `C` the `torch._C` module object.
Order matters: real implementations first, then placeholders for whatever upstream's stubs
declare and we do not implement (placeholders never overwrite a real name).
"""

from __future__ import annotations


def install(C) -> None:
    from . import (dispatch_keys, dispatch_modes, distributed, dynamo, enums, export, fake, flags, fx, profiler, functorch, generator, jit, op_registry, placeholders, return_types, runtime,
               torch_function, types)

    types.install(C)
    flags.install(C)
    runtime.install(C)
    torch_function.install(C)
    generator.install(C)
    return_types.install(C)
    jit.install(C)
    functorch.install(C)
    surface = placeholders.load_surface()
    from ..binding import functions as binding_functions

    binding_functions.install(C)
    enums.install(C, surface)
    dispatch_keys.install(C)
    dispatch_modes.install(C)
    distributed.install(C)
    dynamo.install(C)
    export.install(C)
    fake.install(C)
    profiler.install(C)
    fx.install(C)
    op_registry.install(C)
    from .. import autograd, ops

    ops.install(C, autograd.install(C))
    from . import serialization, storage

    storage.install(C)
    serialization.install(C)
    placeholders.install(C, surface, skip_modules=("torch._C._VariableFunctions",))
    flags.check_complete(surface)
    # PyO3 writes an __all__ listing only native members; upstream's _C has none, and
    # `from torch._C import *` must see every public name.
    if hasattr(C, "__all__"):
        del C.__all__

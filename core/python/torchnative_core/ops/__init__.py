"""Operator implementations behind the single door, keyed by overload name (`add.Tensor`).

An implementation does the device-independent part of an operator — argument checks, type
promotion, broadcasting, output shape and dtype (the meta step), allocation — and then launches
the kernel the device's backend registered (`torch._C._tn_launch`). Composite operators are
written as compositions of other operators through the door.
"""

from __future__ import annotations

IMPLS: dict = {}
# Overloads upstream composes (CompositeImplicitAutograd) that the core implements as a meta step
# and a launch of their own kernel: the core's implementation already calls a backend's kernel for
# them, so backend_composites leaves them alone.
OWN_KERNEL: set = set()


def impl(*names):
    def deco(fn):
        for n in names:
            IMPLS[n] = fn
        return fn

    return deco


def install(C, autograd_handler=None) -> None:
    from . import base

    base.C = C
    from . import activations, elementwise, factories, composites, linalg, losses, math_extra, nn_ops, normalization, random_ops, reductions, rnn, shape_index, views  # noqa: F401  (registration by import)
    from . import aliases, foreach, histogram, inplace, modes, moe, out_variants  # noqa: F401  (registration by import)
    from . import einsum, nn_extra, resample  # noqa: F401  (model sweep, issue 5 item 7: registration by import)
    from . import composites_extra, dropout_extra, elementwise_extra, linalg_composite, linalg_decomp, scatter_reduce, select, special  # noqa: F401  (registration by import)
    from . import losses_extra, opinfo_extra, tensor_metadata, windows  # noqa: F401  (registration by import)

    from . import complex_views, complex_math, fft, opmath  # noqa: F401  (registration by import)
    from ..functorch import forward, legacy  # noqa: F401  (_make_dual, _unpack_dual, _add_batch_dim: registration by import)

    opmath.install()  # before the derived forms, so addcmul_ and out= compute in float32 too
    aliases.install()
    inplace.install()
    out_variants.install()
    foreach.install()

    C._tn_install_door(IMPLS, modes.handle, autograd_handler)
    if hasattr(C, "_tn_set_fast_paths"):  # native meta steps standing in for these implementations (core/src/fastpath.rs)
        C._tn_set_fast_paths(IMPLS)

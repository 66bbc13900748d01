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
    # registration by import: each module's @impl decorators fill IMPLS
    from . import asserts, door, elementwise, factories, forms, indexing, linalg, nn, random, reductions, shape, special  # noqa: F401
    from . import complex, spectral  # noqa: F401  (complex wraps the real implementations registered above)
    from . import opmath
    from .forms import aliases, foreach, inplace, out_variants
    from .door import modes
    from .shape import metadata
    from ..functorch import forward, legacy  # noqa: F401  (_make_dual, _unpack_dual, _add_batch_dim: registration by import)

    opmath.install()  # before the derived forms, so addcmul_ and out= compute in float32 too
    aliases.install()
    inplace.install()
    out_variants.install()
    foreach.install()

    from ..binding.schema import all_schemas

    metadata.refuse_pinned_factories(IMPLS, all_schemas())
    C._tn_install_door(IMPLS, modes.handle, autograd_handler)
    if hasattr(C, "_tn_set_fast_paths"):  # native meta steps standing in for these implementations (core/src/fastpath.rs)
        C._tn_set_fast_paths(IMPLS)
    if hasattr(C, "_tn_set_written_arguments"):  # upstream's internal-overlap check (core/src/overlap.rs)
        C._tn_set_written_arguments(written_arguments())


# In-place operators that write no elements (geometry, storage, flags), and the idempotent fills
# upstream runs without the overlap check (every element written gets the same value, so an
# expanded tensor ends up right): left out of the check. Others upstream leaves unchecked
# (tril_, triu_, baddbmm_) compute an order-dependent result into an expanded tensor; ours refuses.
_NO_OVERLAP_CHECK = frozenset({
    "resize_", "resize_as_", "resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_", "_resize_output_",
    "set_", "as_strided_", "squeeze_", "unsqueeze_", "transpose_", "t_", "swapaxes_", "swapdims_", "detach_",
    "requires_grad_", "rename_", "_coalesced_", "share_memory_", "fill_diagonal_",
    "fill_", "zero_", "index_put_", "_index_put_impl_", "masked_fill_", "index_fill_",
})


def written_arguments() -> dict:
    """{in-place overload: positions of the tensors it writes}. out= overloads are checked where
    they copy into `out` (ops/forms/out_variants.write_out's copy_, after upstream's resize)."""
    from ..binding.schema import all_schemas

    table = {}
    for op, schema in all_schemas().items():
        base = op.partition(".")[0]
        if not base.endswith("_") or base in _NO_OVERLAP_CHECK or schema.is_out:
            continue
        written = [i for i, a in enumerate(schema.args) if a.is_write and a.base_type in ("Tensor", "Tensor?")]
        if written:
            table[op] = written
    return table

"""Python kernels that allocate their own outputs (data-dependent shapes: `index.Tensor`,
`nonzero`), registered with `registrar.register_allocating_kernel(op, key, fn)`.

A Python kernel registered the ordinary way receives outputs the core allocated; operators whose
output shape depends on the data reach the kernel with those outputs left unallocated (None), and
only a native kernel could allocate them (`ctx.alloc_output`). An allocating Python kernel is
called instead as `fn(args) -> [(output index, tensor)]`, the tensors allocated on its device
(ops/base.launch consults this table only when the first output is unallocated).
"""

from __future__ import annotations

# (operator overload as registered, e.g. "index.Tensor"; device key) -> fn(args)
KERNELS: dict = {}
OWNERS: dict = {}  # the same keys -> the plugin that registered it


def register(plugin: str, op: str, key: str, fn) -> None:
    KERNELS[op.removeprefix("aten::"), key] = fn
    OWNERS[op.removeprefix("aten::"), key] = plugin


def unregister(plugin: str) -> None:
    """Drops a plugin's allocating kernels (its registration failed). One it had overridden does
    not come back (unlike ordinary kernels)."""
    for k in [k for k, p in OWNERS.items() if p == plugin]:
        del KERNELS[k], OWNERS[k]


def find(op: str, args):
    """The allocating kernel for `op` on the device of the first device tensor in `args`, or None."""
    if not KERNELS:
        return None
    for a in args:
        for x in a if isinstance(a, (list, tuple)) else (a,):
            key = getattr(x, "_tn_device_key", None)
            if key is not None:
                return KERNELS.get((op.removeprefix("aten::"), key))
    return None

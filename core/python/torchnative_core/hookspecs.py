"""The backend plugin hooks: the reference documentation of the plugin contract.

They live in the core, which discovers backends with them; ``torchnative.hookspecs`` re-exports
this module for plugins written against the library.

A torchnative backend is a Python object (usually a module or an instance) named by an entry
point in the ``torchnative.backends`` group::

    [project.entry-points."torchnative.backends"]
    mydev = "mydev_backend:plugin"

At ``import torch`` the core reads every entry point with :mod:`importlib.metadata`, registers
each object with a :class:`pluggy.PluginManager` (project name ``"torchnative"``) under its
entry-point name, and calls the two required hooks below, one plugin at a time so that one broken
plugin never stops another (a third, :func:`torchnative_set_num_threads`, is optional):

1. :func:`torchnative_describe` on every plugin: cheap, it must not allocate device memory or
   register anything. Plugins whose descriptor cannot be read, whose ABI major differs from the
   core's, that report themselves unavailable, or that are blocked by the environment are
   recorded (``torchnative backends list`` shows why) and skipped.
2. :func:`torchnative_register` on the remaining plugins, in increasing ``priority`` order, so
   that when two plugins register the same operator for the same device key the one with the
   higher priority wins.

A method counts as a hook implementation when it is marked with :data:`hookimpl` or when its
name starts with ``torchnative_`` (so a backend need not import pluggy or torchnative); such a
name that is not one of the hooks below (a typo) makes the plugin an ``error``, as does a plugin
without both hooks.

Device keys are plain names (``"cpu"``, ``"vulkan"``, ``"mydev"``): once a plugin that declares a
key is discovered (even one that then reports itself unavailable, as upstream accepts ``"cuda"``
without a GPU; not one that is blocked or fails), ``torch.device("mydev")`` is valid, and
factories such as ``torch.empty(3, device="mydev")`` allocate through the allocator registered
for it. Several plugins may declare several keys; nothing is limited to upstream's single
``privateuse1`` slot.

Environment variables (comma-separated plugin names):

``TORCHNATIVE_BACKENDS``
    an allow-list: only these plugins load, and each must be installed and load, or
    ``import torch`` fails with the root cause.
``TORCHNATIVE_BLOCK``
    plugins never to load (recorded as ``blocked``).
``TORCHNATIVE_STRICT=1``
    any plugin that fails (error or unavailable) makes ``import torch`` fail with the root cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pluggy

PROJECT = "torchnative"
GROUP = "torchnative.backends"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class Descriptor:
    """What a backend says about itself before it registers anything.

    ``name``
        the plugin's name; it must equal its entry-point name.
    ``device_keys``
        the device keys it provides (``("mydev",)``); a key is any lowercase identifier.
    ``abi_version``
        the backend ABI it was built for, ``major << 16 | minor`` (``torch._C._tn_abi_version()``
        is the core's; a Python-only backend passes the core's own value). A different major is
        refused with a recorded reason, never loaded.
    ``priority``
        higher wins when two plugins register the same operator for the same device key.
    ``available`` / ``reason``
        False with a human-readable reason when the backend cannot work here (no driver, no
        device); the plugin is then recorded as ``unavailable`` and not registered.
    """

    name: str
    device_keys: tuple[str, ...]
    abi_version: int | None
    priority: int = 0
    available: bool = True
    reason: str = ""
    extra: dict = field(default_factory=dict)


@hookspec(firstresult=True)
def torchnative_describe() -> Descriptor:
    """Return the plugin's :class:`Descriptor` (or any object with the same attributes).

    Called once per plugin at ``import torch``, before anything is registered. Keep it cheap:
    importing the backend's native module to read its ABI version and probing whether a device
    exists are fine; allocating memory, compiling kernels or registering them are not.
    """


@hookspec(firstresult=True)
def torchnative_register(registrar) -> int | None:
    """Register the plugin's allocators and kernels; return how many kernels (or None).

    ``registrar`` is the core's registrar for this plugin (``torchnative_core.plugins.Registrar``):

    ``registrar.capsule``
        a PyCapsule named ``"torchnative.registrar"`` holding the C ``TnRegistrar``
        (``core/abi/include/torchnative_abi.h``): native backends hand it to their extension
        module, which checks ``abi_version``/``struct_size`` and calls ``register_allocator`` and
        ``register_kernel`` with ``extern "C"`` functions.
    ``registrar.register_allocator(device_key, allocator)``
        a Python allocator: an object with ``alloc(nbytes, align) -> int`` (an address aligned
        to ``align``), ``free(address, nbytes)``, ``copy_from_host(dst, src, nbytes)`` and
        ``copy_to_host(dst, src, nbytes)`` (addresses as ints; host memory is the CPU's).
    ``registrar.register_kernel(op, device_key, fn)`` / ``@registrar.kernel(op, device_key)``
        a Python kernel for one operator overload (``"add.Tensor"``, ``"aten::fill_.Scalar"``):
        called as ``fn(args, outs)`` with the schema-ordered arguments (tensors, numbers, lists)
        and the outputs the core already allocated on ``device_key``, which it must fill.
    ``registrar.register_cpu_fallback(device_key)``
        operators with no kernel for ``device_key`` run on the cpu backend, operands copied to
        the host and results back (slow, but complete; for prototypes and printing).
    ``registrar.run_on_cpu(op, device_key, args, outs)``
        for a kernel that declines a call it cannot compute on the device (a dtype, a case the
        device lacks): runs ``op`` on the cpu backend now, ``device_key``'s operands copied to the
        host and the outputs back, counted in ``torchnative.fallback_report()``; returns the
        ``[(output index, tensor)]`` of outputs the cpu kernel allocated (moved to the device),
        as an allocating kernel returns them. Keep the registrar to call it from kernels.
    ``registrar.abi_version``, ``registrar.name``
        the core's ABI version and this plugin's name.

    Only the device keys declared in the descriptor may be registered (ValueError otherwise).
    An exception here records the plugin as ``error`` (and is raised under strict mode).
    """


@hookspec
def torchnative_set_num_threads(n: int) -> None:
    """Optional: ``torch.set_num_threads(n)`` was called (``n >= 1``, already checked).

    Called on every registered plugin that implements it, after the core has recorded ``n``;
    a backend with its own thread pool should split intra-op work into at most ``n`` parts, as
    upstream's kernels follow ``at::get_num_threads()``. An exception here is reported as a
    warning naming the plugin; the setting stays recorded.
    """

"""Backend discovery at `import torch`: the `torchnative.backends` entry-point group, via pluggy.

The contract (hook names, the descriptor, the registrar, the environment variables) is
documented in `torchnative_core.hookspecs`. Here: read the entry points with importlib.metadata,
register each plugin object with a pluggy PluginManager under its entry-point name, call
`torchnative_describe` on each, then `torchnative_register` on the usable ones in increasing
priority order. Each failure is recorded in RECORDS (what `torchnative backends list` shows) and
skipped, unless strict mode or the allow-list asks for it by name: then ImportError, chained to
the root cause.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from importlib import metadata

import pluggy

from . import allocating, backend_composites, cpu_fallback, hookspecs

GROUP = hookspecs.GROUP


@dataclass
class PluginRecord:
    name: str
    distribution: str | None = None
    version: str | None = None
    device_keys: tuple = ()
    priority: int = 0
    abi_version: int | None = None
    status: str = "not loaded"  # ok | unavailable | error | blocked
    reason: str | None = None
    kernels: int = 0
    extra: dict = field(default_factory=dict)


RECORDS: dict[str, PluginRecord] = {}
_LOADED = []  # (record, plugin, manager) of the plugins that registered
_LOADING = True  # until load_backends has registered every plugin (composite routers are set up once, at its end)


def set_num_threads(n: int) -> None:
    """Passes ``torch.set_num_threads(n)`` to every registered plugin implementing the optional
    ``torchnative_set_num_threads`` hook; a failing plugin is warned about, never raised."""
    import warnings

    for rec, plugin, pm in _LOADED:
        if not _implements(pm, "torchnative_set_num_threads", plugin):
            continue
        try:
            _call(pm, "torchnative_set_num_threads", plugin, n=n)
        except Exception as e:  # noqa: BLE001 - one backend's failure must not stop the others
            warnings.warn(f"torchnative backend '{rec.name}' failed to take set_num_threads({n}): "
                          f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=3)


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, also accepting unmarked methods named like a hook (as pytest does), so a
    backend needs neither pluggy nor torchnative to be importable."""

    def __init__(self):
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)

    def parse_hookimpl_opts(self, plugin, name):
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith("torchnative_") and inspect.isroutine(getattr(plugin, name, None)):
            opts = {}
        return opts


class Registrar:
    """What `torchnative_register` receives: one per plugin, bound to its declared device keys."""

    def __init__(self, C, name: str, device_keys):
        self._C = C
        self.name = name
        self.device_keys = tuple(device_keys)
        self.abi_version = C._tn_abi_version()
        self._capsule = None

    @property
    def capsule(self):
        """The C `TnRegistrar` in a PyCapsule named "torchnative.registrar" (native backends); it
        refuses registrations for undeclared device keys with return code 3."""
        if self._capsule is None:
            self._capsule = self._C._tn_make_registrar(self.name, device_keys=list(self.device_keys))
        return self._capsule

    def _check_key(self, device_key):
        if device_key not in self.device_keys:
            raise ValueError(
                f"plugin '{self.name}' registered for device key '{device_key}', which its descriptor does not "
                f"declare (declared: {', '.join(self.device_keys)})"
            )

    def register_allocator(self, device_key: str, allocator, index: int = 0) -> None:
        """`allocator` serves device `device_key:index`; register one per index for a device
        with several memories (`mydev:0`, `mydev:1`). An index without one does not exist."""
        self._check_key(device_key)
        for method in ("alloc", "free", "copy_from_host", "copy_to_host"):
            if not callable(getattr(allocator, method, None)):
                raise TypeError(f"allocator for '{device_key}' has no method {method}()")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise ValueError(f"device index must be a non-negative int, got {index!r}")
        self._C._tn_register_python_allocator(self.name, device_key, allocator, index)

    def register_kernel(self, op: str, device_key: str, fn) -> None:
        self._check_key(device_key)
        if not callable(fn):
            raise TypeError(f"kernel for {op} on '{device_key}' is not callable")
        self._C._tn_register_python_kernel(self.name, op, device_key, fn)
        if not _LOADING and backend_composites.is_composite(op):  # registered after import torch
            backend_composites.refresh(self._C)

    def register_allocating_kernel(self, op: str, device_key: str, fn) -> None:
        """A Python kernel for an operator whose output shape depends on the data (`index.Tensor`,
        `nonzero`): called as `fn(args)`, it allocates its outputs on the device and returns
        `[(output index, tensor)]` (torchnative_core.allocating)."""
        self._check_key(device_key)
        if not callable(fn):
            raise TypeError(f"kernel for {op} on '{device_key}' is not callable")
        allocating.register(self.name, op, device_key, fn)

    def register_cpu_fallback(self, device_key: str) -> None:
        """Operators with no kernel for `device_key` run on the cpu backend, operands copied to
        the host and results back (`torchnative_core.cpu_fallback`)."""
        self._check_key(device_key)
        cpu_fallback.DEVICES.add(device_key)

    def run_on_cpu(self, op: str, device_key: str, args, outs):
        """Runs `op` on the cpu backend now, for a kernel of `device_key` that declines a call: the
        device's operands copied to the host and the outputs back, counted and warned about as
        the CPU fallback is; returns `[(output index, tensor)]` of the outputs the cpu kernel
        allocated, moved to the device (`torchnative_core.cpu_fallback.run_on_cpu`)."""
        self._check_key(device_key)
        return cpu_fallback.run_on_cpu(self._C, op, args, outs, device_key)

    def kernel(self, op: str, device_key: str):
        """Decorator form of register_kernel."""

        def deco(fn):
            self.register_kernel(op, device_key, fn)
            return fn

        return deco


def _env_list(name):
    v = os.environ.get(name, "")
    return {x.strip() for x in v.split(",") if x.strip()}


def _abi_text(v):
    return f"{v >> 16}.{v & 0xFFFF}"


def _implements(pm, hook_name, plugin) -> bool:
    return any(impl.plugin is plugin for impl in getattr(pm.hook, hook_name).get_hookimpls())


def _call(pm, hook_name, plugin, **kwargs):
    """Calls one plugin's implementation of a hook; TypeError when it has none."""
    if not _implements(pm, hook_name, plugin):
        raise TypeError(f"the plugin implements no {hook_name} hook")
    others = [p for p in pm.get_plugins() if p is not plugin]
    return pm.subset_hook_caller(hook_name, others)(**kwargs)


def _register_with(pm, plugin, name):
    """pluggy's registration plus validation: a method named like a hook that is not one (a typo)
    is an error, not silently ignored."""
    pm.register(plugin, name=name)
    try:
        pm.check_pending()
    except Exception:
        pm.unregister(plugin)
        raise


def _describe(pm, plugin, rec, core_abi):
    """Fills `rec` from the plugin's descriptor; raises on a missing or incompatible one."""
    d = _call(pm, "torchnative_describe", plugin)
    if d is None:
        raise TypeError("torchnative_describe returned None")
    if d.name != rec.name:
        raise ValueError(f"descriptor name '{d.name}' differs from the entry-point name '{rec.name}'")
    rec.device_keys = tuple(d.device_keys)
    if not rec.device_keys or not all(isinstance(k, str) and k.isidentifier() for k in rec.device_keys):
        raise ValueError(f"device_keys must be a non-empty sequence of identifiers, got {d.device_keys!r}")
    rec.priority = int(getattr(d, "priority", 0))
    rec.extra = dict(getattr(d, "extra", {}) or {})
    if not getattr(d, "available", True):
        # An unavailable backend may not know its ABI version (its native module did not load).
        rec.status, rec.reason = "unavailable", str(getattr(d, "reason", "") or "reported unavailable")
        return
    rec.abi_version = int(d.abi_version)
    if rec.abi_version >> 16 != core_abi >> 16:
        raise ImportError(f"built for torchnative ABI {_abi_text(rec.abi_version)}, core speaks {_abi_text(core_abi)}")


def _fail(rec, e, loud):
    rec.status, rec.reason = "error", f"{type(e).__name__}: {e}"
    if loud:
        raise ImportError(f"torchnative backend '{rec.name}' failed to load: {rec.reason}") from e


def load_backends(C) -> None:
    """Discovers, describes and registers every backend plugin (called once by torch._C init)."""
    from .binding.schema import all_schemas
    from .surface import types as T

    C._tn_set_known_ops([f"aten::{name}" for name in all_schemas()])  # kernels for anything else are refused
    strict = os.environ.get("TORCHNATIVE_STRICT", "") not in ("", "0")
    allow = _env_list("TORCHNATIVE_BACKENDS")
    block = _env_list("TORCHNATIVE_BLOCK")
    core_abi = C._tn_abi_version()
    pm = PluginManager()
    described = []
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in RECORDS:  # the same distribution seen twice on sys.path
            continue
        dist = getattr(ep, "dist", None)
        rec = PluginRecord(name=ep.name, distribution=dist.name if dist else None, version=dist.version if dist else None)
        RECORDS[ep.name] = rec
        loud = strict or ep.name in allow
        if ep.name in block or (allow and ep.name not in allow):
            rec.status = "blocked"
            rec.reason = "blocked by TORCHNATIVE_BLOCK" if ep.name in block else "not in TORCHNATIVE_BACKENDS"
            continue
        try:
            plugin = ep.load()
            _register_with(pm, plugin, ep.name)
            _describe(pm, plugin, rec, core_abi)
        except Exception as e:  # noqa: BLE001 - a broken plugin must not break import torch
            _fail(rec, e, loud)
            continue
        # A declared key is a valid torch.device type even when its plugin is unavailable, as
        # upstream accepts "cuda" without a GPU; using it then names the missing allocator.
        T.device._known_types.update(rec.device_keys)
        if rec.status == "unavailable":
            if loud:
                raise ImportError(f"torchnative backend '{rec.name}' is unavailable: {rec.reason}")
            continue
        described.append((rec, plugin))
    for rec, plugin in sorted(described, key=lambda x: (x[0].priority, x[0].name)):
        try:
            n = _call(pm, "torchnative_register", plugin, registrar=Registrar(C, rec.name, rec.device_keys))
            rec.kernels = int(n or 0)
            rec.status = "ok"
            _LOADED.append((rec, plugin, pm))
        except Exception as e:  # noqa: BLE001
            C._tn_unregister_plugin(rec.name)  # skipped means skipped: nothing half-registered stays
            cpu_fallback.DEVICES.difference_update(rec.device_keys)
            allocating.unregister(rec.name)
            _fail(rec, e, strict or rec.name in allow)
    global _LOADING
    _LOADING = False
    backend_composites.refresh(C)  # backends' own kernels for composite operators go first
    missing = sorted(allow - RECORDS.keys())
    if missing:
        raise ImportError(f"TORCHNATIVE_BACKENDS asks for {', '.join(map(repr, missing))}, which no installed "
                          f"distribution provides{_install_hint(missing)}")


def _install_hint(names):
    """`pip install torchnative[extra]` for the first-party plugins among `names`: the extra whose
    requirement names the distribution `torchnative-<name>`, read from the installed `torchnative`
    distribution's metadata (its extras follow torchnative/plugins.toml), not from the library's
    modules, which the core does not import."""
    import re

    try:
        requires = metadata.requires("torchnative") or []
    except metadata.PackageNotFoundError:
        return ""
    extras = {}
    for req in requires:
        m = re.match(r"torchnative-(\w+)\b.*\bextra\s*==\s*['\"](\w+)['\"]", req)
        if m:
            extras.setdefault(m.group(1), m.group(2))
    hints = [f"pip install torchnative[{extras[n]}]" for n in names if n in extras]
    return f" ({'; '.join(dict.fromkeys(hints))})" if hints else ""

"""Names upstream's `torch/_C/*.pyi` declare that torchnative does not implement yet.

Each becomes an honest placeholder: a function that raises `NotImplementedError` naming itself
when called, or a class whose methods do. Placeholders never answer a question with a made-up
value: `__bool__` is not defined on them, and the names that upstream code probes with
`hasattr` to detect a capability (CUDA, XPU, MPS, MTIA, NCCL, GDS, and the distributed init
hooks until they are real) are left absent, so the probe reads "not available" as it does on a
CPU-only upstream build.
"""

from __future__ import annotations

import json
import re
import sys
import types
from importlib import resources

# Capability probes: upstream code tests these with hasattr/getattr, so a placeholder would lie.
ABSENT = re.compile(
    r"^_?(cuda|CUDA|Cuda|xpu|XPU|Xpu|nccl|gds|cudnn|miopen|cufft|cusparselt|rocm|ROCm|hip)"
    r"|^_(rpc_init|dist_autograd_init|faulty_agent_init)$"
    r"|^_mps_(?!is_available$|is_on_macos)"
    r"|^_(MemPool|CUDAGraph|CUDAGreenContext|StaticCudaLauncher|StaticXpuLauncher|XPUGraph|XPUMemPool)$"
)


def _refusing_function(qualname: str):
    def placeholder(*args, **kwargs):
        raise NotImplementedError(f"{qualname} is not implemented by torchnative yet")

    placeholder.__name__ = qualname.rsplit(".", 1)[-1]
    placeholder.__qualname__ = placeholder.__name__
    placeholder._tn_placeholder = True
    return placeholder


def _refusing_member(qualname: str, kind: str):
    """A refusing method, staticmethod, classmethod or property, as the stub declares it."""
    fn = _refusing_function(qualname)
    wrap = {"staticmethod": staticmethod, "classmethod": classmethod, "property": property}.get(kind)
    return wrap(fn) if wrap else fn


class CClassMeta(type):
    """Metaclass of placeholder classes: like pybind11's, distinct from `type`, so upstream code
    that combines metaclasses (`class M(type(_C._Await), type(Generic))`) works."""


def _opaque_meta():
    """Upstream's distributed classes (ProcessGroup, Placement, ...) are created with
    torch._opaque_base.OpaqueBaseMeta so torch.compile can treat them as opaque objects; their
    Python subclasses are registered with register_opaque_type, which checks for it."""
    from torch._opaque_base import OpaqueBaseMeta

    return type("CClassOpaqueMeta", (CClassMeta, OpaqueBaseMeta), {})


def _refusing_class(modname: str, name: str, spec: dict, mod=None):
    qual = f"{modname}.{name}"

    # Instances may be created (upstream builds some at import, e.g. the autograd engine);
    # every method of theirs refuses by name.
    def __init__(self, *args, **kwargs):
        pass

    ns = {"__init__": __init__, "__module__": modname, "_tn_placeholder": True}
    for meth, kind in spec.get("methods", []):
        if meth.startswith("__") and meth.endswith("__"):
            continue  # dunders keep object's defaults: never stub comparison or truth
        ns[meth] = _refusing_member(f"{qual}.{meth}", kind)
    for nested_name, nested_spec in spec.get("nested", {}).items():
        ns[nested_name] = _nested(f"{modname}.{name}", nested_name, nested_spec)
    # Upstream subclasses these two with metaclasses derived from `type` (VariableMeta,
    # FunctionMeta), so they must be plain classes.
    meta = type if name in ("_LegacyVariableBase", "_FunctionBase") else CClassMeta
    if modname.startswith(("torch._C._distributed", "torch._C._distributed_c10d")):
        meta = _opaque_meta()
    bases = tuple(getattr(mod, b) for b in spec.get("bases", []) if mod is not None and isinstance(getattr(mod, b, None), type))
    if bases:
        meta = type(bases[0])
    return meta(name, bases or (object,), ns)


def _nested(owner: str, name: str, spec: dict):
    from .enums import _is_enum_spec, make_enum

    if _is_enum_spec(name, spec):
        return make_enum(name, spec, owner)
    return _refusing_class(owner, name, spec)


def load_surface() -> dict:
    text = resources.files("torchnative_core.generated").joinpath("surface.json").read_text()
    return json.loads(text)


def module_for(C, modname: str):
    """The `torch._C` submodule `modname`, created (and put in sys.modules) if missing."""
    if modname == "torch._C":
        return C
    obj = C
    parts = modname.split(".")[2:]
    for i, part in enumerate(parts):
        child = getattr(obj, part, None)
        if child is None:
            child = types.ModuleType(".".join(["torch._C", *parts[: i + 1]]))
            setattr(obj, part, child)
            sys.modules[child.__name__] = child
        obj = child
    return obj


def install(C, surface: dict, skip_modules=()) -> int:
    """Adds a placeholder for every stub name not already defined. Returns how many."""
    count = 0
    VF = type(C._VariableFunctions)
    for name in surface.get("torch._C._VariableFunctions", {}).get("functions", []):
        if not hasattr(VF, name):
            real = getattr(C, name, None)  # e.g. is_grad_enabled lives on _C and on torch.*
            if real is not None and not getattr(real, "_tn_placeholder", False):
                setattr(VF, name, staticmethod(real))
                continue
            setattr(VF, name, staticmethod(_refusing_function(f"torch.{name}")))
            count += 1
    for modname, spec in surface.items():
        if modname in skip_modules:
            continue
        mod = module_for(C, modname)
        for name in spec["functions"]:
            if ABSENT.search(name) or hasattr(mod, name):
                continue
            setattr(mod, name, _refusing_function(f"{modname}.{name}"))
            count += 1
        for name, cls_spec in spec["classes"].items():
            existing = getattr(mod, name, None)
            if existing is not None and not getattr(existing, "_tn_placeholder", False):
                count += _fill_members(existing, f"{modname}.{name}", cls_spec)
                continue
            if ABSENT.search(name) or hasattr(mod, name) or name in getattr(mod, "_tn_absent", ()):
                continue
            setattr(mod, name, _refusing_class(modname, name, cls_spec, mod))
            count += 1
    return count


def _fill_members(cls, qual: str, spec: dict) -> int:
    """Refusing members for what a real class (TensorBase, Generator, ...) does not implement."""
    count = 0
    for meth, kind in spec.get("methods", []):
        if (meth.startswith("__") and meth.endswith("__")) or hasattr(cls, meth):
            continue
        try:
            setattr(cls, meth, _refusing_member(f"{qual}.{meth}", kind))
            count += 1
        except (TypeError, AttributeError):
            pass
    return count

"""Enums of `torch._C` (pybind11 enums upstream): built from the stub classes whose body is only
members (`CPU: DispatchKey = ...` or `core = 0`). Member order (declaration order, kept by
gen_tables as `order`) and explicit values come from the stubs; implicit values are positional."""

from __future__ import annotations

import enum


def _is_enum_spec(name: str, spec: dict) -> bool:
    """A stub class is an enum when it has members (`A = ...`, `A = 0`, `A: Self` or `A: int`,
    the last for dynamo's slot-id classes) and no methods of its own."""
    values = spec["attrs"].values()
    bases_ok = all(b.split(".")[-1] in ("Enum", "IntEnum") for b in spec.get("bases", []))
    return bool(spec["attrs"]) and not spec["methods"] and bases_ok and all(
        v in ("...", "int") or v.lstrip("-").isdigit() or v == name for v in values
    )


def make_enum(name: str, spec: dict, module: str):
    members = {}
    nxt = 0
    for attr in spec.get("order", spec["attrs"]):
        value = spec["attrs"][attr]
        if value.lstrip("-").isdigit():
            nxt = int(value)
        members[attr] = nxt
        nxt += 1
    cls = enum.IntEnum(name, members)
    cls.__module__ = module
    return cls


def install(C, surface: dict) -> None:
    from .placeholders import module_for

    for modname, mod_spec in surface.items():
        mod = module_for(C, modname)
        for name, spec in mod_spec["classes"].items():
            if not hasattr(mod, name) and _is_enum_spec(name, spec):
                setattr(mod, name, make_enum(name, spec, modname))

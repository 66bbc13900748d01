"""ATen operator schemas, parsed from the generated table (upstream's native_functions.yaml).

A schema string looks like ``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.
`Schema` keeps what the door and `torch.ops` need: the overload name, arguments (name, type,
default, keyword-only, mutability) and returns.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Arg:
    name: str
    type: str  # as written in the schema, e.g. "Tensor(a!)", "int[1]?", "Scalar"
    default: str | None  # schema text of the default, None when required
    kwarg_only: bool

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @property
    def is_write(self) -> bool:
        return "!" in self.type

    @property
    def base_type(self) -> str:
        """The type without alias annotation, e.g. ``Tensor?`` for ``Tensor(a!)?``."""
        return re.sub(r"\([^)]*\)", "", self.type)


@dataclass
class Schema:
    text: str
    name: str  # "add"
    overload: str  # "Tensor" or ""
    args: list[Arg]
    returns: list[Arg]
    tags: tuple = ()
    python_module: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def qualified(self) -> str:
        return self.name + ("." + self.overload if self.overload else "")

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.args)

    @property
    def is_out(self) -> bool:
        return any(a.is_write and a.kwarg_only for a in self.args)

    @property
    def is_view(self) -> bool:
        """A return aliases an input without writing it (`Tensor(a)`): a view operator."""
        return any("(" in r.type and "!" not in r.type for r in self.returns)


def _split_top(s: str) -> list[str]:
    """Splits on ', ' outside brackets."""
    out, depth, cur = [], 0, []
    i = 0
    while i < len(s):
        c = s[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_arg(text: str, kwarg_only: bool) -> Arg:
    default = None
    if "=" in text:
        text, default = text.split("=", 1)
    typ, _, name = text.strip().rpartition(" ")
    return Arg(name=name, type=typ, default=default, kwarg_only=kwarg_only)


def parse_schema(text: str, tags=(), python_module=None) -> Schema:
    # The argument list ends at the parenthesis matching the first "(" (alias annotations
    # such as "Tensor(a -> *)" contain " -> " too).
    name_part, rest = text.split("(", 1)
    depth = 1
    for i, c in enumerate(rest):
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            break
    args_part, ret = rest[:i], rest[i + 1 :].partition(" -> ")[2]
    name, _, overload = name_part.partition(".")
    args = []
    kwarg_only = False
    for piece in _split_top(args_part):
        if piece == "*":
            kwarg_only = True
            continue
        args.append(_parse_arg(piece, kwarg_only))
    ret = ret.strip()
    if ret.startswith("("):
        ret = ret[1:-1]
    returns = []
    for piece in _split_top(ret):
        if not piece:
            continue
        typ, _, rname = piece.rpartition(" ")
        if not typ:
            typ, rname = rname, ""
        returns.append(Arg(name=rname, type=typ, default=None, kwarg_only=False))
    return Schema(text=text, name=name, overload=overload, args=args, returns=returns,
                  tags=tuple(tags), python_module=python_module)


@lru_cache(maxsize=1)
def ops_table() -> dict:
    return json.loads(resources.files("torchnative_core.generated").joinpath("ops.json").read_text())


@lru_cache(maxsize=1)
def all_schemas() -> dict[str, Schema]:
    """Overload name (``add.Tensor``, ``mm``) -> Schema, for every aten operator."""
    out = {}
    for entry in ops_table()["schemas"]:
        s = parse_schema(entry["schema"], entry["tags"], entry["python_module"])
        s.extra["composite_implicit"] = entry.get("composite_implicit", False)
        s.extra["structured"] = entry.get("structured")
        out[s.qualified] = s
    return out


@lru_cache(maxsize=1)
def overloads_by_name() -> dict[str, list[str]]:
    """Base name -> overload names (``""`` for the default one), in yaml order."""
    out: dict[str, list[str]] = {}
    for s in all_schemas().values():
        out.setdefault(s.name, []).append(s.overload)
    return out

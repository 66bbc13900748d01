"""`torch._C._return_types`: the structseq types of operators with named multiple returns
(`torch.return_types.max(values=..., indices=...)`), derived from the schemas."""

from __future__ import annotations

import types as _pytypes


def make_structseq(name: str, fields: tuple):
    def __new__(cls, seq=None, *args, **kwargs):
        if len(args) == 1 and isinstance(args[0], dict) and isinstance(seq, (tuple, list)) and not kwargs:
            args = ()  # structseq(sequence, dict): how upstream's pickles rebuild it
        if args or kwargs or not isinstance(seq, (tuple, list)):
            seq = (seq, *args) if not kwargs else tuple(kwargs[f] for f in fields)
        seq = tuple(seq)
        if len(seq) != len(fields):
            raise TypeError(f"torch.return_types.{name}() takes a {len(fields)}-sequence ({len(seq)}-sequence given)")
        return tuple.__new__(cls, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self), {}))  # upstream's (CPython structseq's) form

    ns = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__, "__slots__": (),
          "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0,
          "_fields": fields, "__module__": "torch.return_types"}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    return type(name, (tuple,), ns)


def install(C) -> None:
    from ..binding.schema import all_schemas

    mod = _pytypes.ModuleType("torch._C._return_types")
    for s in all_schemas().values():
        names = tuple(r.name for r in s.returns)
        if len(names) > 1 and all(names) and not s.is_out:
            if not hasattr(mod, s.name):
                setattr(mod, s.name, make_structseq(s.name, names))
    C._return_types = mod
    import sys

    sys.modules["torch._C._return_types"] = mod

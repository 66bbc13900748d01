"""Case registry.  Importable without torch: the pytest process imports the case modules to
learn ids and options, while only the runner subprocess ever calls a case.

A case is a zero-argument function returning its result (tensor, number, str, torch.Size,
dtype, or a tuple/list/dict of those).  Register with ``@case`` (id = module suffix + name)::

    @case                       # default comparison: per-dtype tolerance for floats
    def arange_float():
        return torch.arange(0, 1, 0.25)

    @case(exact=True)           # floats must be bit-identical (RNG, copies, indexing)
    def rand():
        return torch.rand(3)

or programmatically with ``add(id, fn, **opts)`` for generated families.
"""
import importlib
import pathlib

CASES = {}  # id -> Case, in registration order
OPTIONS = {"exact", "atol", "rtol", "timeout"}


class Case:
    def __init__(self, id, fn, opts):
        unknown = set(opts) - OPTIONS
        if unknown:
            raise TypeError(f"case {id}: unknown options {sorted(unknown)}")
        if id in CASES:
            raise ValueError(f"duplicate case id {id}")
        self.id, self.fn, self.opts = id, fn, opts


def _prefix(fn):
    mod = fn.__module__.rsplit(".", 1)[-1]
    return mod[len("cases_"):] if mod.startswith("cases_") else mod


def add(id, fn, **opts):
    CASES[id] = Case(id, fn, opts)
    return fn


def case(fn=None, **opts):
    """Decorator: ``@case`` or ``@case(exact=True, atol=..., rtol=...)``."""
    def deco(f):
        add(f"{_prefix(f)}.{f.__name__}", f, **opts)
        return f
    return deco(fn) if fn is not None else deco


class _Lazy:
    """Stand-in for a module, imported on first attribute access (i.e. only in the runner)."""
    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)

    def __setattr__(self, attr, value):
        setattr(importlib.import_module(self._name), attr, value)


torch = _Lazy("torch")
nn = _Lazy("torch.nn")
F = _Lazy("torch.nn.functional")
np = _Lazy("numpy")



def case_modules():
    """Every cases_*.py beside this file, sorted: adding a file adds its cases."""
    here = pathlib.Path(__file__).parent
    return sorted(p.stem for p in here.glob("cases_*.py"))


def load_all(modules=None):
    for m in case_modules() if modules is None else modules:
        importlib.import_module(f"{__package__}.{m}")
    return CASES

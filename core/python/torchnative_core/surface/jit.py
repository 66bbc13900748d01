"""The few TorchScript front-end objects upstream's Python touches while importing: source
ranges for `@torch.jit._overload` bookkeeping and `ErrorReport.call_stack`. TorchScript itself
(scripting, tracing, the JIT) is not provided; those entry points stay refusing placeholders."""

from __future__ import annotations


class ErrorReport:
    def __init__(self, *args, **kwargs):
        self.args = args

    @staticmethod
    def call_stack():
        return ""

    def what(self):
        return ""


class SourceRange:
    # read-only properties, as the stub declares them (the placeholder pass must not replace them)
    def __init__(self, source, start, end):
        self._tn_range = (source, start, end)

    source = property(lambda self: self._tn_range[0])
    start = property(lambda self: self._tn_range[1])
    end = property(lambda self: self._tn_range[2])

    def highlight(self):
        return ""

    def __str__(self):
        return f"<SourceRange {self.start}:{self.end}>"


class SourceRangeFactory:
    def __init__(self, source, filename, file_lineno, leading_whitespace_len):
        self._tn_source = (source, filename, file_lineno, leading_whitespace_len)

    def make_range(self, line, start_col, end_col):
        return SourceRange(self, start_col, end_col)

    def make_raw_range(self, start, end):
        return SourceRange(self, start, end)

    @property
    def source(self):
        return self._tn_source[0]


def _jit_init():
    # The JIT bindings exist as refusing placeholders; upstream's init only reports success.
    return True


def _tracer_warn_use_python():
    return None


def _get_tracing_state():
    # No tracer: upstream returns None when not tracing.
    return None


def _is_tracing():
    return False


class TreeView:
    """A TorchScript syntax-tree node (torch._C._jit_tree_views): the front end builds these from
    a function's source when a `@torch.jit.script_method` is defined (torch.utils.mkldnn does at
    import, which torch.compile's default backend imports). They hold their parts and report
    their source range; compiling them is TorchScript, which is not provided."""

    def __init__(self, *parts):
        self._tn_parts = parts

    def range(self):
        ranges = [p if isinstance(p, SourceRange) else p.range() for p in self._tn_parts
                  if isinstance(p, (SourceRange, TreeView))]
        if not ranges:
            return SourceRange(None, 0, 0)
        return SourceRange(ranges[0].source, min(r.start for r in ranges), max(r.end for r in ranges))


class Ident(TreeView):
    @property
    def name(self):
        return self._tn_parts[1]


class Def(TreeView):
    def name(self):
        return self._tn_parts[0]

    def decl(self):
        return self._tn_parts[1]


_TREE_KINDS = ("Apply", "Assert", "Assign", "Attribute", "AugAssign", "BinOp", "Break", "ClassDef", "Const",
               "Continue", "Decl", "Delete", "DictComp", "DictLiteral", "Dots", "EmptyTypeAnnotation", "Expr",
               "ExprStmt", "For", "If", "ListComp", "ListLiteral", "Param", "Pass", "Property", "Raise", "Return",
               "Select", "SliceExpr", "Starred", "Stmt", "StringLiteral", "Subscript", "TernaryIf", "TupleLiteral",
               "UnaryOp", "Var", "While", "With", "WithItem")


def install(C) -> None:
    for fn in (_jit_init, _tracer_warn_use_python, _get_tracing_state, _is_tracing):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
    from .placeholders import module_for

    trees = module_for(C, "torch._C._jit_tree_views")
    for cls in (ErrorReport, SourceRange, SourceRangeFactory):
        cls.__module__ = "torch._C"
        setattr(C, cls.__name__, cls)
        setattr(trees, cls.__name__, cls)
    kinds = {"TreeView": TreeView, "Ident": Ident, "Def": Def}
    for name in _TREE_KINDS:
        kinds[name] = type(name, (TreeView,), {})
    for name, cls in kinds.items():
        cls.__module__ = "torch._C._jit_tree_views"
        setattr(trees, name, cls)
    for name in ("TrueLiteral", "FalseLiteral", "NoneLiteral"):
        fn = (lambda name: lambda r: kinds["Const"](r, name))(name)
        fn.__name__ = name
        setattr(trees, name, fn)

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
    def __init__(self, source, start, end):
        self.source, self.start, self.end = source, start, end

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

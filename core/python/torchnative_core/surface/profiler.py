"""`torch._C._profiler`'s traceback capture, which torch.utils._traceback (structured logging,
FakeTensorMode's debug traces, torch.export) calls. Only Python frames exist here: TorchScript
and C++ frames are never asked for by the Python that uses it unless requested, and then none
are recorded."""

from __future__ import annotations

import sys


class _Traceback:
    """An opaque captured stack: code objects and line numbers, innermost first (cheap to take;
    file names are read when symbolized)."""

    __slots__ = ("frames",)

    def __init__(self, frames):
        self.frames = frames


def gather_traceback(python=True, script=False, cpp=False):
    frames = []
    if python:
        f = sys._getframe(1)  # the caller's frame first, as upstream's capture starts there
        while f is not None:
            frames.append((f.f_code, f.f_lineno))
            f = f.f_back
    return _Traceback(frames)


def symbolize_tracebacks(tracebacks):
    return [[{"filename": code.co_filename, "line": line, "name": code.co_name} for code, line in tb.frames]
            for tb in tracebacks]


def install(C) -> None:
    from .placeholders import module_for

    mod = module_for(C, "torch._C._profiler")
    for fn in (gather_traceback, symbolize_tracebacks):
        fn.__module__ = "torch._C._profiler"
        setattr(mod, fn.__name__, fn)

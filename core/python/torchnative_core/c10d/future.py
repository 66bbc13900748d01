"""torch._C.Future (torch/csrc/jit/python/pybind_utils.h's PythonFutureWrapper): the value
behind torch.futures.Future, Work.get_future() and DDP's communication hooks.

A thread-safe one-shot cell: callbacks run once the value (or an exception) is set, in the
thread that sets it (or at once when added to a completed future), as upstream does."""

from __future__ import annotations

import threading


class Future:
    def __init__(self, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._exc = None
        self._callbacks = []
        self._unwrap = None

    def done(self) -> bool:
        return self._done

    def _complete(self, value, exc):
        with self._cond:
            if self._done:
                raise RuntimeError("Error: Future can only be marked completed once")
            self._value, self._exc, self._done = value, exc, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result) -> None:
        self._complete(result, None)

    def set_exception(self, result) -> None:
        if not isinstance(result, BaseException):
            raise TypeError("set_exception expects an exception")
        self._complete(None, result)

    def wait(self):
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._exc is not None:
            raise self._exc
        return self._unwrap(self._value) if self._unwrap is not None else self._value

    def value(self):
        if not self._done:
            raise RuntimeError("value() called on a Future that is not completed")
        if self._exc is not None:
            raise self._exc
        return self._value

    def add_done_callback(self, callback) -> None:
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        child = type(self)()

        def run(parent):
            try:
                child.set_result(callback(parent))
            except BaseException as exc:  # the child carries the callback's failure
                child.set_exception(exc)

        self.add_done_callback(run)
        return child

    def _set_unwrap_func(self, fn) -> None:
        self._unwrap = fn


Future.__module__ = "torch._C"
C_EXPORTS = {"Future": Future}


def completed(value) -> "Future":
    """A torch.futures.Future already holding `value` (what Work.get_future returns)."""
    import torch.futures

    fut = torch.futures.Future()
    fut.set_result(value)
    return fut

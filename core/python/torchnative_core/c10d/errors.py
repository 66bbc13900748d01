"""The torch.distributed exception classes (torch/csrc/distributed/c10d/exception.h): upstream
creates them in torch._C and torch.distributed re-exports them as DistError, DistStoreError...
DistBackendError, DistStoreError and DistNetworkError derive from DistError, a RuntimeError;
QueueEmptyError derives from DistStoreError."""

from __future__ import annotations


class _DistError(RuntimeError):
    pass


class _DistBackendError(_DistError):
    pass


class _DistStoreError(_DistError):
    pass


class _DistNetworkError(_DistError):
    pass


class _DistQueueEmptyError(_DistStoreError):
    pass


# upstream's names as Python shows them (torch.distributed.DistStoreError in tracebacks)
for _cls, _public in ((_DistError, "DistError"), (_DistBackendError, "DistBackendError"),
                      (_DistStoreError, "DistStoreError"), (_DistNetworkError, "DistNetworkError"),
                      (_DistQueueEmptyError, "QueueEmptyError")):
    _cls.__module__ = "torch.distributed"
    _cls.__name__ = _cls.__qualname__ = _public

C_EXPORTS = {"_DistError": _DistError, "_DistBackendError": _DistBackendError,
             "_DistStoreError": _DistStoreError, "_DistNetworkError": _DistNetworkError,
             "_DistQueueEmptyError": _DistQueueEmptyError}

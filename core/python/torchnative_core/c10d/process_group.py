"""ProcessGroup, Backend, Work, the collective options and process-group registration
(torch/csrc/distributed/c10d/ProcessGroup.hpp, Backend.hpp, Work.hpp, Types.hpp, init.cpp).

A ProcessGroup is a dispatcher: upstream's distributed_c10d.py registers one Backend per device
type on it and calls `pg.allreduce([t], opts)`; the group forwards to the backend of the tensors'
device, as c10d's dispatcher ops do. Backends written in Python (third parties through
`Backend.register_backend`) subclass `Backend` and override the collectives they support."""

from __future__ import annotations

import datetime
import enum
import os
import threading

from ..surface.placeholders import _opaque_meta
from .future import completed

_META = _opaque_meta()
# kUnsetTimeout (c10d/Types.hpp): "use the backend's default"
UNSET_TIMEOUT = datetime.timedelta(milliseconds=-1)


class DebugLevel(enum.IntEnum):
    OFF = 0
    INFO = 1
    DETAIL = 2


_debug_level = [DebugLevel.OFF]


def get_debug_level():
    return _debug_level[0]


def set_debug_level(level):
    _debug_level[0] = DebugLevel(level)


def set_debug_level_from_env():
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError(
            f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, but got {value}")
    _debug_level[0] = DebugLevel[value]


def _make_nccl_premul_sum(factor):
    from torch._C._distributed_c10d import ReduceOp

    op = ReduceOp(ReduceOp.PREMUL_SUM)
    op._factor = factor
    return op


def red_op_type(op) -> int:
    """The RedOpType value of a ReduceOp, a RedOpType or an int."""
    return int(getattr(op, "op", op))


# --- the options objects -----------------------------------------------------------------
def _options(name, **fields):
    def __init__(self):
        for key, value in fields.items():
            setattr(self, key, value() if callable(value) else value)

    return _META(name, (), {"__init__": __init__, "__module__": "torch._C._distributed_c10d"})


def _sum():
    import sys

    reduce_op = sys.modules["torch._C._distributed_c10d"].ReduceOp  # an import statement per call costs 15 us
    return reduce_op(reduce_op.SUM)


BroadcastOptions = _options("BroadcastOptions", rootRank=0, rootTensor=0, timeout=UNSET_TIMEOUT, asyncOp=True)
AllreduceOptions = _options("AllreduceOptions", reduceOp=_sum, timeout=UNSET_TIMEOUT, asyncOp=True, sparseIndices=None)
AllreduceCoalescedOptions = _META("AllreduceCoalescedOptions", (AllreduceOptions,), {"__module__": "torch._C._distributed_c10d"})
ReduceOptions = _options("ReduceOptions", reduceOp=_sum, rootRank=0, rootTensor=0, timeout=UNSET_TIMEOUT, asyncOp=True)
AllgatherOptions = _options("AllgatherOptions", timeout=UNSET_TIMEOUT, asyncOp=True)
GatherOptions = _options("GatherOptions", rootRank=0, timeout=UNSET_TIMEOUT, asyncOp=True)
ScatterOptions = _options("ScatterOptions", rootRank=0, timeout=UNSET_TIMEOUT, asyncOp=True)
ReduceScatterOptions = _options("ReduceScatterOptions", reduceOp=_sum, timeout=UNSET_TIMEOUT, asyncOp=True)
BarrierOptions = _options("BarrierOptions", device_ids=list, device=None, timeout=UNSET_TIMEOUT, asyncOp=True)
AllToAllOptions = _options("AllToAllOptions", timeout=UNSET_TIMEOUT, asyncOp=True)
_DistributedBackendOptions = _options("_DistributedBackendOptions", store=None, group_rank=-1, group_size=-1,
                                      timeout=UNSET_TIMEOUT, group_id="", global_ranks_in_group=list)


# --- Work ----------------------------------------------------------------------------------
class Work(metaclass=_META):
    """A collective's handle. Our backend runs collectives in the calling thread, so most Works
    are complete when returned; a receive completes in `wait` (its data is already queued by
    the transport's reader thread). A failure is kept and raised by `wait`, as upstream's."""

    def __init__(self, result=None, exception=None, finish=None, poll=None, source_rank=-1):
        self._result = [] if result is None else result
        self._exception = exception
        self._finish = finish  # callable(timeout_s or None) completing the work
        self._poll = poll
        self._src = source_rank
        self._lock = threading.Lock()

    def _run(self, timeout=None):
        with self._lock:
            finish, self._finish = self._finish, None
            if finish is not None:
                try:
                    finish(timeout)
                except BaseException as exc:  # kept for wait()/exception(), as upstream's Work
                    self._exception = exc

    def wait(self, timeout=datetime.timedelta(0)):
        seconds = timeout.total_seconds() if timeout else None
        self._run(seconds if seconds else None)
        if self._exception is not None:
            raise self._exception
        return True

    def is_completed(self):
        if self._finish is not None and self._poll is not None and self._poll():
            self._run()
        return self._finish is None

    def is_success(self):
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def source_rank(self):
        return self._src

    _source_rank = source_rank

    def result(self):
        return self._result

    def synchronize(self):
        self.wait()

    def block_current_stream(self):
        self.wait()

    def get_future(self):
        try:
            self.wait()
        except BaseException as exc:
            from torch.futures import Future

            fut = Future()
            fut.set_exception(exc)
            return fut
        return completed(self._result)

    def boxed(self):
        return self

    @staticmethod
    def unbox(obj):
        return obj


def run_work(fn, result):
    """Runs `fn` now; a Work holding `result`, or the failure for wait() to raise."""
    try:
        fn()
    except BaseException as exc:  # raised from wait(), as upstream's Work
        return Work(result, exception=exc)
    return Work(result)


# --- Backend -------------------------------------------------------------------------------
class _BackendOptions(metaclass=_META):
    def __init__(self, backend="", timeout=datetime.timedelta(seconds=1800)):
        self._backend = backend
        self._timeout = timeout
        self.global_ranks_in_group = []
        self.group_name = ""
        self.use_pg_for_symm_mem_rendezvous = False

    @property
    def backend(self):
        return self._backend


class Backend(metaclass=_META):
    Options = _BackendOptions

    def __init__(self, rank, size):
        self._rank, self._size = rank, size
        self._seq = 0
        self._options = _BackendOptions("", datetime.timedelta(seconds=1800))

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return "undefined"

    @property
    def options(self):
        return self._options

    supports_splitting = property(lambda self: False)
    supports_coalescing = property(lambda self: False)
    supports_time_estimate = property(lambda self: False)

    def set_timeout(self, timeout):
        self._options._timeout = timeout

    def _set_default_timeout(self, timeout):
        self._options._timeout = timeout

    def _set_sequence_number_for_group(self):
        pass

    def _get_sequence_number_for_group(self):
        return self._seq

    def abort(self):
        self.shutdown()

    def shutdown(self):
        pass

    def eager_connect_single_device(self, device=None):
        pass

    def supports_tensor_alloc(self, device):
        return False


# --- ProcessGroup --------------------------------------------------------------------------
class BackendType(enum.IntEnum):
    UNDEFINED = 0
    GLOO = 1
    NCCL = 2
    UCC = 3
    MPI = 4
    XCCL = 5
    CUSTOM = 6


BackendType.__qualname__ = "ProcessGroup.BackendType"
BackendType.__module__ = "torch._C._distributed_c10d"
_BACKEND_NAMES = {BackendType.GLOO: "gloo", BackendType.NCCL: "nccl", BackendType.UCC: "ucc",
                  BackendType.MPI: "mpi", BackendType.XCCL: "xccl", BackendType.CUSTOM: "custom",
                  BackendType.UNDEFINED: "undefined"}

# c10d's dispatched ops and the argument that carries their tensors (to pick the device).
_FORWARDED = ("broadcast", "allreduce", "allreduce_coalesced", "reduce", "allgather", "_allgather_base",
              "allgather_coalesced", "allgather_into_tensor_coalesced", "gather", "scatter", "reduce_scatter",
              "_reduce_scatter_base", "reduce_scatter_tensor_coalesced", "alltoall_base", "alltoall",
              "send", "recv", "recv_anysource")


def _first_tensor(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for item in obj:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


class ProcessGroup(metaclass=_META):
    BackendType = BackendType

    def __init__(self, store=None, rank=-1, size=-1, *args):
        self._store, self._rank, self._size = store, rank, size
        self._backends = {}  # device type -> (BackendType, Backend)
        self._default_type = BackendType.UNDEFINED
        self._group_name = ""
        self._group_desc = ""
        self._bound_device_id = None
        self._symm_mem_via_pg = False

    bound_device_id = property(lambda self: self._bound_device_id,
                               lambda self, v: setattr(self, "_bound_device_id", v))
    use_pg_for_symm_mem_rendezvous = property(lambda self: self._symm_mem_via_pg,
                                              lambda self, v: setattr(self, "_symm_mem_via_pg", bool(v)))

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def get_group_store(self):
        return self._store

    def name(self):
        return self._get_backend_name()

    def _get_backend_name(self):
        if self._backends:
            backend = next(iter(self._backends.values()))[1]
            return backend.name()
        return _BACKEND_NAMES[self._default_type]

    def _set_default_backend(self, backend_type):
        self._default_type = BackendType(int(getattr(backend_type, "value", backend_type)))

    def _register_backend(self, device, backend_type, backend):
        self._backends[device.type] = (backend_type, backend)
        if device.type == "cpu" and getattr(backend, "stages_through_host", False):
            # Our gloo stages other devices' tensors through host memory, as upstream's gloo does
            # for CUDA (which upstream's device map names for "gloo"); the devices of installed
            # torchnative backends (vulkan, npu, ...) get the same backend unless one is given.
            for key in _torchnative_device_keys():
                self._backends.setdefault(key, (backend_type, backend))

    def _get_backend(self, device):
        import torch

        dtype = torch.device(device).type if not hasattr(device, "type") else device.type
        if dtype not in self._backends:
            raise RuntimeError(f"No backend type associated with device type {dtype}")
        return self._backends[dtype][1]

    def _backend_id(self, backend_type):
        for btype, backend in self._backends.values():
            if btype == backend_type:
                return id(backend)
        raise RuntimeError(f"No backend of type {backend_type} registered")

    @property
    def _device_types(self):
        import torch

        return [torch.device(d) for d in self._backends]

    def _set_group_name(self, name):
        self._group_name = name

    def _set_group_desc(self, desc):
        self._group_desc = desc

    @property
    def group_name(self):
        return self._group_name

    @property
    def group_desc(self):
        return self._group_desc

    def _has_hooks(self):
        return False

    def _wait_for_pending_works(self):
        pass

    def _set_sequence_number_for_group(self):
        for _, backend in self._backends.values():
            backend._set_sequence_number_for_group()

    def _start_coalescing(self, device):
        raise RuntimeError("Backend does not support coalescing")

    def _end_coalescing(self, device):
        raise RuntimeError("Backend does not support coalescing")

    def set_timeout(self, timeout):
        for _, backend in self._backends.values():
            backend._set_default_timeout(timeout)

    def abort(self):
        self.shutdown()

    def shutdown(self):
        for _, backend in self._backends.values():
            backend.shutdown()

    def _backend_for(self, args):
        tensor = _first_tensor(args)
        if tensor is not None:
            return self._get_backend(tensor.device)
        if len(self._backends) == 1:
            return next(iter(self._backends.values()))[1]
        return self._get_backend(self.bound_device_id or "cpu")

    def barrier(self, opts=None, timeout=None):
        if opts is None:
            opts = BarrierOptions()
        if timeout is not None:
            opts.timeout = timeout
        device = getattr(opts, "device", None)
        backend = self._get_backend(device) if device is not None else self._backend_for(())
        return backend.barrier(opts)

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        return self._backend_for(()).monitored_barrier(timeout, wait_all_ranks=wait_all_ranks)

    def boxed(self):
        return self

    @staticmethod
    def unbox(obj):
        return obj


def _forwarder(name):
    def forward(self, *args, **kwargs):
        return getattr(self._backend_for(args), name)(*args, **kwargs)

    forward.__name__ = name
    return forward


for _name in _FORWARDED:
    setattr(ProcessGroup, _name, _forwarder(_name))
# upstream's alternative spellings
ProcessGroup.all_to_all_single = ProcessGroup.alltoall_base
ProcessGroup.all_gather_single = ProcessGroup._allgather_base
ProcessGroup.reduce_scatter_single = ProcessGroup._reduce_scatter_base


def _torchnative_device_keys():
    from ..plugins import RECORDS

    return [key for rec in RECORDS.values() if rec.status == "ok" for key in rec.device_keys if key != "cpu"]


# --- registration by group name ------------------------------------------------------------
_groups: dict = {}
_current: list = []
_global_rank = [0]


def _register_process_group(group_name, group):
    if group_name in _groups:
        raise RuntimeError(f"Process group name {group_name} is already registered")
    _groups[group_name] = group


def _resolve_process_group(group_name):
    if group_name not in _groups:
        raise RuntimeError(f"Could not resolve the process group registered under the name {group_name}")
    return _groups[group_name]


def _unregister_process_group(group_name):
    _groups.pop(group_name, None)


def _unregister_all_process_groups():
    _groups.clear()


def _set_process_group(group):
    _current[:] = [group]


def _current_process_group():
    if not _current:
        raise RuntimeError("No process group is set as current")
    return _current[0]


def _set_global_rank(rank):
    _global_rank[0] = rank


def _hash_tensors(tensors):
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    for t in tensors:
        h.update(bytes(t.detach().cpu().contiguous().view(-1).view(__import__("torch").uint8).tolist()))
    return int.from_bytes(h.digest(), "little", signed=True)


EXPORTS = {
    "DebugLevel": DebugLevel, "get_debug_level": get_debug_level, "set_debug_level": set_debug_level,
    "set_debug_level_from_env": set_debug_level_from_env, "_make_nccl_premul_sum": _make_nccl_premul_sum,
    "BroadcastOptions": BroadcastOptions, "AllreduceOptions": AllreduceOptions,
    "AllreduceCoalescedOptions": AllreduceCoalescedOptions, "ReduceOptions": ReduceOptions,
    "AllgatherOptions": AllgatherOptions, "GatherOptions": GatherOptions, "ScatterOptions": ScatterOptions,
    "ReduceScatterOptions": ReduceScatterOptions, "BarrierOptions": BarrierOptions,
    "AllToAllOptions": AllToAllOptions, "_DistributedBackendOptions": _DistributedBackendOptions,
    "Work": Work, "Backend": Backend, "ProcessGroup": ProcessGroup,
    "_register_process_group": _register_process_group, "_resolve_process_group": _resolve_process_group,
    "_unregister_process_group": _unregister_process_group,
    "_unregister_all_process_groups": _unregister_all_process_groups,
    "_set_process_group": _set_process_group, "_current_process_group": _current_process_group,
    "_set_global_rank": _set_global_rank, "_hash_tensors": _hash_tensors,
}
for _cls in (Work, Backend, ProcessGroup, _BackendOptions):
    _cls.__module__ = "torch._C._distributed_c10d"
_BackendOptions.__name__ = "Options"
_BackendOptions.__qualname__ = "Backend.Options"

"""`torch._C._distributed_c10d` scaffolding so that `torch.distributed` imports with
`is_available()` True (torch._dynamo imports torch.distributed.fsdp unconditionally).

The constants are upstream's values (read from torch 2.13.0). The classes come from the stubs as
placeholders: creating a process group or store refuses by name until the federated issue adds
torchnative's own backend. Gloo, NCCL, MPI and UCC process groups stay absent, so upstream's
own availability probes answer False."""

from __future__ import annotations

import datetime
import enum

C10D_CONSTANTS = {
    "_DEFAULT_FIRST_BUCKET_BYTES": 1048576,
    "_DEFAULT_NO_TIMEOUT": datetime.timedelta(0),
    "_DEFAULT_PG_TIMEOUT": datetime.timedelta(seconds=1800),
    "_DEFAULT_PG_NCCL_TIMEOUT": datetime.timedelta(seconds=600),
}
# ProcessGroupGloo and _ProcessGroupWrapper are torchnative's own backend (c10d/gloo.py).
ABSENT_BACKENDS = ("ProcessGroupNCCL", "ProcessGroupMPI", "ProcessGroupUCC", "ProcessGroupXCCL")


class _RedOpType(enum.IntEnum):
    # c10d::ReduceOp::RedOpType (torch/csrc/distributed/c10d/Types.hpp)
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """c10d's ReduceOp: wraps a RedOpType; compares equal to its RedOpType."""

    RedOpType = _RedOpType

    def __init__(self, op=_RedOpType.SUM):
        self.op = _RedOpType(op.op if isinstance(op, ReduceOp) else op)

    def __eq__(self, other):
        if isinstance(other, ReduceOp):
            return self.op == other.op
        return self.op == other

    def __hash__(self):
        return hash(self.op)

    def __int__(self):
        return int(self.op)

    def __repr__(self):
        return f"<RedOpType.{self.op.name}: {int(self.op)}>"

    @property
    def factor(self):
        # set by _make_nccl_premul_sum (c10d/process_group.py)
        if self.op != _RedOpType.PREMUL_SUM:
            raise RuntimeError("factor is only defined for PREMUL_SUM")
        return self._factor


for _m in _RedOpType:
    setattr(ReduceOp, _m.name, _m)
_RedOpType.__qualname__ = "ReduceOp.RedOpType"


def _get_accelerator():
    """The current accelerator, CPU when there is none (as a CPU-only upstream build answers)."""
    import torch

    return torch.device("cpu")


class _WaitCounterTracker:
    """torch._C._monitor's wait-counter guard (c10d_logger wraps every collective in one):
    upstream feeds its counters to a metrics backend; torchnative has none, so it only nests."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class _WaitCounter:
    def __init__(self, key):
        self.key = key

    def guard(self):
        return _WaitCounterTracker()


for _cls in (_WaitCounter, _WaitCounterTracker):
    _cls.__module__ = "torch._C._monitor"


def _placements(meta):
    """torch/csrc/distributed/python_placement.cpp: small value classes DTensor builds on."""

    class Placement(metaclass=meta):
        def is_shard(self, dim=None):
            return False

        def is_replicate(self):
            return False

        def is_partial(self, reduce_op=None):
            return False

    class Shard(Placement):
        def __init__(self, dim):
            self._dim = dim

        dim = property(lambda self: self._dim, lambda self, v: setattr(self, "_dim", v))

        def is_shard(self, dim=None):
            return dim is None or dim == self._dim

        def __eq__(self, other):
            return type(other) is type(self) and other._dim == self._dim

        def __hash__(self):
            return hash((type(self), self._dim))

    class StridedShard(Placement):
        def __init__(self, dim, *, split_factor):
            self._dim, self._split_factor = dim, split_factor

        dim = property(lambda self: self._dim, lambda self, v: setattr(self, "_dim", v))
        split_factor = property(lambda self: self._split_factor, lambda self, v: setattr(self, "_split_factor", v))

        def is_shard(self, dim=None):
            return dim is None or dim == self._dim

    class Replicate(Placement):
        def is_replicate(self):
            return True

        def __eq__(self, other):
            return type(other) is type(self)

        def __hash__(self):
            return hash(type(self))

    class Partial(Placement):
        def __init__(self, reduce_op=None):
            self._reduce_op = "sum" if reduce_op is None else reduce_op

        reduce_op = property(lambda self: self._reduce_op, lambda self, v: setattr(self, "_reduce_op", v))

        def is_partial(self, reduce_op=None):
            return reduce_op is None or reduce_op == self._reduce_op

    classes = (Placement, Shard, StridedShard, Replicate, Partial)
    for cls in classes:
        cls.__module__ = "torch._C._distributed"
    return classes


def install(C) -> None:
    from .placeholders import module_for

    mod = module_for(C, "torch._C._distributed_c10d")
    for name, value in C10D_CONSTANTS.items():
        setattr(mod, name, value)
    mod._tn_absent = ABSENT_BACKENDS
    ReduceOp.__module__ = _RedOpType.__module__ = "torch._C._distributed_c10d"
    mod.ReduceOp = ReduceOp
    mod.set_debug_level_from_env = lambda: None  # TORCH_DISTRIBUTED_DEBUG: no C++ logging to configure
    from .. import c10d

    c10d.install(mod, C)  # the real c10d objects (stores, process groups, DDP's reducer)
    if getattr(getattr(C, "_get_accelerator", None), "_tn_placeholder", True):
        C._get_accelerator = _get_accelerator  # barrier() asks which device to synchronise
    monitor = module_for(C, "torch._C._monitor")
    monitor._WaitCounter, monitor._WaitCounterTracker = _WaitCounter, _WaitCounterTracker
    from .placeholders import _opaque_meta

    dist = module_for(C, "torch._C._distributed")
    for cls in _placements(_opaque_meta()):
        setattr(dist, cls.__name__, cls)

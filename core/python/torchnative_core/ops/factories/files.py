"""`torch.from_file`: a tensor over a file's bytes, memory-mapped as upstream's MapAllocator maps
them (at::from_file): writes reach the file when `shared`, stay private (copy-on-write)
otherwise. Upstream's checks in its order: pinning, then nothing opened for zero bytes, then the
file opened (read-write when shared), then the mapping's size."""

from __future__ import annotations

import errno
import os

from .. import base as B
from .. import impl


def _open_error(filename, shared, err):
    mode = "read-write" if shared else "read-only"
    return RuntimeError(f"unable to open file <{filename}> in {mode} mode: {os.strerror(err)} ({err})")


@impl("from_file")
def from_file(filename, shared=None, size=0, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    if pin_memory:
        raise RuntimeError("tensors constructed from a file cannot be pinned")
    dtype = dtype or B.default_dtype()
    shared, size = bool(shared), int(size or 0)
    nbytes = size * dtype.itemsize
    out = B.empty([0], dtype, device)
    if nbytes == 0:
        return out
    try:
        fd = os.open(filename, os.O_RDWR if shared else os.O_RDONLY)
    except OSError as e:
        raise _open_error(filename, shared, e.errno or errno.EIO) from None
    try:
        have = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: {os.strerror(errno.ENOMEM)} ({errno.ENOMEM})")
    if have < nbytes:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required mapping size <{nbytes}>")
    storage = torch.UntypedStorage.from_file(filename, shared, nbytes)
    return out.set_(storage, 0, [size], [1])


@impl("from_file.out")
def from_file_out(filename, shared=None, size=0, out=None):
    result = from_file(filename, shared, size, dtype=out.dtype, device=out.device)
    B.door("resize_", out, list(result._tn_sizes))
    return B.door("copy_", out, result)

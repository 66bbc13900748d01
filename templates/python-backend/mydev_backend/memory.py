"""Device memory for mydev: aligned blocks of host RAM, and numpy views of tensors in them.

A real backend would allocate on its device here; the four allocator methods are the whole
contract (addresses are ints, `src`/`dst` on the host side are CPU memory).
"""

from __future__ import annotations

import ctypes

import numpy as np


class HostAllocator:
    def __init__(self):
        self.blocks: dict[int, ctypes.Array] = {}  # aligned address -> the buffer that owns it
        self.allocated = 0  # how many blocks were ever handed out (tests read it)

    def alloc(self, nbytes: int, align: int) -> int:
        buf = ctypes.create_string_buffer(nbytes + align)
        address = -(-ctypes.addressof(buf) // align) * align
        self.blocks[address] = buf
        self.allocated += 1
        return address

    def free(self, address: int, nbytes: int) -> None:
        del self.blocks[address]

    def copy_from_host(self, dst: int, src: int, nbytes: int) -> None:
        ctypes.memmove(dst, src, nbytes)

    def copy_to_host(self, dst: int, src: int, nbytes: int) -> None:
        ctypes.memmove(dst, src, nbytes)


_NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64,
          "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def as_numpy(t) -> np.ndarray:
    """A writable numpy view of tensor `t` (its sizes and strides) in mydev memory."""
    dtype = np.dtype(_NUMPY[str(t.dtype).removeprefix("torch.")])
    shape, strides = tuple(t.shape), tuple(t.stride())
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    raw = (ctypes.c_char * max(span * dtype.itemsize, 1)).from_address(t.data_ptr())
    flat = np.frombuffer(raw, dtype=dtype, count=span)
    return np.lib.stride_tricks.as_strided(flat, shape, tuple(s * dtype.itemsize for s in strides))

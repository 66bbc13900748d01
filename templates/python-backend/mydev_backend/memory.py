"""Device memory for mydev: aligned blocks of host RAM, and numpy views of tensors in them.

A real backend would allocate on its device here; the four allocator methods are the whole
contract (addresses are ints, `src`/`dst` on the host side are CPU memory).
"""

from __future__ import annotations

import ctypes
import sys

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
# Upstream's names for dtypes numpy has no type for (bfloat16, complex, ...), as its messages spell them.
_UPSTREAM_NAMES = {"bfloat16": "BFloat16", "complex32": "ComplexHalf", "complex64": "ComplexFloat",
                   "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                   "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                   "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz"}


def as_numpy(t, op: str | None = None) -> np.ndarray:
    """A writable numpy view of tensor `t` (its sizes and strides) in mydev memory.

    A dtype without a numpy type here (bfloat16, complex) is refused by name, in the form
    `torchnative conformance` counts as a refusal: `"add" not implemented for 'BFloat16' on device
    'mydev'`. `op` names the operator (the calling function's name when not given)."""
    name = str(t.dtype).removeprefix("torch.")
    if name not in _NUMPY:
        op = op or sys._getframe(1).f_code.co_name
        raise NotImplementedError(f'"{op}" not implemented for '
                                  f"'{_UPSTREAM_NAMES.get(name, name)}' on device '{t.device.type}'")
    dtype = np.dtype(_NUMPY[name])
    shape, strides = tuple(t.shape), tuple(t.stride())
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    raw = (ctypes.c_char * max(span * dtype.itemsize, 1)).from_address(t.data_ptr())
    flat = np.frombuffer(raw, dtype=dtype, count=span)
    return np.lib.stride_tricks.as_strided(flat, shape, tuple(s * dtype.itemsize for s in strides))

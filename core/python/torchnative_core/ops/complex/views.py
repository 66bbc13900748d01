"""Complex tensors as pairs of reals: `view_as_real`, `view_as_complex`, `real`, `imag`.

All four are views over the same bytes (a complex64 element is two float32s), so they need no
kernel; with them complex tensors load from checkpoints, print and convert. Arithmetic on
complex dtypes still refuses by name (no backend kernel). Checks and messages follow upstream's
aten/src/ATen/native/ComplexHelper.h."""

from __future__ import annotations

from .. import base as B
from .. import impl


_REAL = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}


_COMPLEX = {v: k for k, v in _REAL.items()}


@impl("view_as_real")
def view_as_real(self):
    dt = B.dtype_of(self)
    if not dt.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    sizes = list(self._tn_sizes) + [2]
    strides = [s * 2 for s in self._tn_strides] + [1]
    real = B.T.BY_NAME[_REAL[dt._tn_name]]
    return self._tn_reinterpret(real._tn_code, sizes, strides, self.storage_offset() * 2)


@impl("view_as_complex")
def view_as_complex(self):
    dt = B.dtype_of(self)
    if dt._tn_name not in _COMPLEX:
        name = B.scalar_type_name(dt)
        raise RuntimeError(
            f"view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {name}")
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    if not sizes:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if sizes[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    cplx = B.T.BY_NAME[_COMPLEX[dt._tn_name]]
    return self._tn_reinterpret(cplx._tn_code, sizes[:-1], [s // 2 for s in strides[:-1]], self.storage_offset() // 2)


@impl("real")
def real(self):
    # through the door, so autograd records upstream's ViewAsRealBackward0 and SelectBackward0
    return B.door("select.int", B.door("view_as_real", self), -1, 0) if B.dtype_of(self).is_complex else self


@impl("imag")
def imag(self):
    if not B.dtype_of(self).is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return B.door("select.int", B.door("view_as_real", self), -1, 1)

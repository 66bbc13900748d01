"""_grouped_mm, which mixture-of-experts layers use (transformers' grouped_mm experts path; its
histc is in histogram.py), composed through the door as upstream's CPU kernel computes it."""

from __future__ import annotations


from . import base as B
from . import impl

D = B.door
_GROUPED_MM_DTYPES = ("float32", "bfloat16", "float16")


def _check_strides(mat):
    """upstream's check_valid_strides_and_return_transposed (GroupedMMUtils.h)."""
    sizes, strides = mat._tn_sizes, mat._tn_strides
    alignment = 16 // B.dtype_of(mat).itemsize
    if strides[-2] == 1 and strides[-1] >= max(1, sizes[-2]):
        lead = strides[-1]
    elif strides[-1] == 1 and strides[-2] >= max(1, sizes[-1]):
        lead = strides[-2]
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(strides)} for strides and {list(sizes)} for sizes")
    if lead % alignment:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _check_grouped_mm(a, b, offs, bias, out_dtype):
    for name, m in (("mat_a", a), ("mat_b", b)):
        if B.dtype_of(m)._tn_name not in _GROUPED_MM_DTYPES:
            from .elementwise import _type_name

            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{_type_name(B.dtype_of(m))}")
    for name, m in (("mat_a", a), ("mat_b", b)):
        if len(m._tn_sizes) not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    a2, b2 = len(a._tn_sizes) == 2, len(b._tn_sizes) == 2
    if (a2 or b2) != (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if a._tn_sizes[-1] != b._tn_sizes[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _check_strides(a)
    _check_strides(b)
    if offs is not None and B.dtype_of(offs)._tn_name != "int32":
        raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not B.dtype_of(a):
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if a2 and not b2 and offs._tn_sizes[0] != b._tn_sizes[0]:
        raise RuntimeError("matrix batch sizes have to match")
    if not a2 and not b2 and a._tn_sizes[0] != b._tn_sizes[0]:
        raise RuntimeError("matrix batch sizes have to match")


@impl("_grouped_mm")
def _grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None):
    """upstream's CPU _grouped_mm_fallback: for 2d x 3d, rows offs[g-1]:offs[g] of mat_a times
    mat_b[g] (rows past the last offset are left as allocated); 3d x 3d is a batched product."""
    _check_grouped_mm(self, mat2, offs, bias, out_dtype)
    if len(self._tn_sizes) == 3:
        return D("bmm", self, mat2)
    if len(mat2._tn_sizes) == 2:
        raise NotImplementedError("_grouped_mm with a 2d mat_b (offsets over its columns) is not implemented")
    out = B.empty([self._tn_sizes[0], mat2._tn_sizes[-1]], B.dtype_of(self), B.device_of(self))
    start = 0
    for g, end in enumerate(offs.tolist()):
        if end > start:
            rows = D("slice.Tensor", out, 0, start, end, 1)
            D("copy_", rows, D("mm", D("slice.Tensor", self, 0, start, end, 1), D("select.int", mat2, 0, g)), False)
        start = end
    return out

"""Matrix products: mm, bmm, addmm kernels; matmul, linear, dot composites as upstream composes
them (aten/src/ATen/native/LinearAlgebra.cpp), so a dispatch mode sees the same operators."""

from __future__ import annotations

from . import base as B
from . import impl


_door = B.door


def _same_dtype(a, b, name):
    da, db = B.dtype_of(a), B.dtype_of(b)
    if da is not db:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_n(da)} != {_n(db)}")


def _n(d):
    from .elementwise import _type_name

    return _type_name(d).lower() if d._tn_name not in ("float32", "float64", "int64") else {"float32": "float", "float64": "double", "int64": "long int"}[d._tn_name]


@impl("mm")
def mm(self, mat2):
    if len(self._tn_sizes) != 2:
        raise RuntimeError("self must be a matrix")
    if len(mat2._tn_sizes) != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = self._tn_sizes, mat2._tn_sizes
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    _same_dtype(self, mat2, "mm")
    out = B.empty([n, m], B.dtype_of(self), B.device_of(self))
    B.launch("mm", (self, mat2), (out,))
    return out


@impl("bmm")
def bmm(self, mat2):
    if len(self._tn_sizes) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(mat2._tn_sizes) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), (b2, k2, m) = self._tn_sizes, mat2._tn_sizes
    if b != b2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{b2}, {k2}].")
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{b2}, {k2}].")
    _same_dtype(self, mat2, "bmm")
    out = B.empty([b, n, m], B.dtype_of(self), B.device_of(self))
    B.launch("bmm", (self, mat2), (out,))
    return out


@impl("addmm")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    if len(mat1._tn_sizes) != 2 or len(mat2._tn_sizes) != 2:
        raise RuntimeError("mat1 must be a matrix, got %d-D tensor" % len(mat1._tn_sizes))
    (n, k), (k2, m) = mat1._tn_sizes, mat2._tn_sizes
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    _same_dtype(mat1, mat2, "addmm")
    bias = B.expand_to(self, [n, m])
    out = B.empty([n, m], B.dtype_of(mat1), B.device_of(mat1))
    B.launch("addmm", (bias, mat1, mat2, beta, alpha), (out,))
    return out


@impl("dot")
def dot(self, tensor):
    if len(self._tn_sizes) != 1 or len(tensor._tn_sizes) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(self._tn_sizes)}D and {len(tensor._tn_sizes)}D tensors")
    if self._tn_sizes[0] != tensor._tn_sizes[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self._tn_sizes[0]}] and src [{tensor._tn_sizes[0]}] to have the same number of elements, but got {self._tn_sizes[0]} and {tensor._tn_sizes[0]} elements respectively"
        )
    r = mm(_door("unsqueeze", self, 0), _door("unsqueeze", tensor, 1))
    return _door("view", r, [])


@impl("mv")
def mv(self, vec):
    return _door("view", mm(self, _door("unsqueeze", vec, 1)), [self._tn_sizes[0]])


@impl("matmul")
def matmul(self, other):
    """at::native::matmul's case analysis."""
    da, db = len(self._tn_sizes), len(other._tn_sizes)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return _door("dot", self, other)
    if da == 2 and db == 1:
        return _door("mv", self, other)
    if da == 1 and db == 2:
        return _door("squeeze.dim", _door("mm", _door("unsqueeze", self, 0), other), 0)
    if da == 2 and db == 2:
        return _door("mm", self, other)
    if da >= 3 and db in (1, 2):
        # fold the batch into the rows: (..., n, k) @ (k, m)
        t2 = other if db == 2 else _door("unsqueeze", other, 1)
        sizes = list(self._tn_sizes)
        # the row count spelled out, as upstream's folded_dim1: with k == 0 a -1 is ambiguous
        folded = _door("reshape", self, [B.numel(sizes[:-1]), sizes[-1]])
        out = _door("mm", folded, t2)
        shape = sizes[:-1] + ([t2._tn_sizes[1]] if db == 2 else [])
        return _door("_unsafe_view", out, shape)
    # general batched case: broadcast batch dims, then bmm
    a = self if da > 1 else _door("unsqueeze", self, 0)
    b = other if db > 1 else _door("unsqueeze", other, 1)
    n, k = a._tn_sizes[-2:]
    k2, m = b._tn_sizes[-2:]
    batch = B.broadcast_shapes(list(a._tn_sizes[:-2]), list(b._tn_sizes[:-2]))
    nb = B.numel(batch)
    a3 = _door("reshape", _door("expand", a, batch + [n, k], False), [nb, n, k])
    b3 = _door("reshape", _door("expand", b, batch + [k2, m], False), [nb, k2, m])
    out = _door("bmm", a3, b3)
    shape = batch + ([n] if da > 1 else []) + ([m] if db > 1 else [])
    return _door("_unsafe_view", out, shape)


@impl("linear")
def linear(input, weight, bias=None):
    nd = len(input._tn_sizes)
    if nd == 2 and bias is not None:
        return _door("addmm", bias, input, _door("t", weight), 1, 1)
    if bias is not None and nd == 3 and input._tn_is_contiguous():
        sizes = list(input._tn_sizes)
        out = _door("addmm", bias, _door("view", input, [sizes[0] * sizes[1], sizes[-1]]), _door("t", weight), 1, 1)
        return _door("view", out, sizes[:-1] + [weight._tn_sizes[0]])
    out = _door("matmul", input, _door("t", weight))
    if bias is not None:
        out = _door("add.Tensor", out, bias, 1)
    return out

"""Matrix products: mm, bmm, addmm kernels; matmul, linear, dot, mv, outer, inner, kron, addmv,
addr, addbmm, baddbmm, vdot and _grouped_mm composed as upstream composes them
(aten/src/ATen/native/LinearAlgebra.cpp), so a dispatch mode sees the same operators.
"""

from __future__ import annotations

from .. import base as B
from .. import impl
from ..elementwise.math import _num



def _same_dtype(a, b, name):
    da, db = B.dtype_of(a), B.dtype_of(b)
    if da is not db:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_n(da)} != {_n(db)}")


def _n(d):
    from ..elementwise.arithmetic import _type_name

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
    r = mm(D("unsqueeze", self, 0), D("unsqueeze", tensor, 1))
    return D("view", r, [])


@impl("mv")
def mv(self, vec):
    return D("view", mm(self, D("unsqueeze", vec, 1)), [self._tn_sizes[0]])


@impl("matmul")
def matmul(self, other):
    """at::native::matmul's case analysis."""
    da, db = len(self._tn_sizes), len(other._tn_sizes)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return D("dot", self, other)
    if da == 2 and db == 1:
        return D("mv", self, other)
    if da == 1 and db == 2:
        return D("squeeze.dim", D("mm", D("unsqueeze", self, 0), other), 0)
    if da == 2 and db == 2:
        return D("mm", self, other)
    if da >= 3 and db in (1, 2):
        # fold the batch into the rows: (..., n, k) @ (k, m)
        t2 = other if db == 2 else D("unsqueeze", other, 1)
        sizes = list(self._tn_sizes)
        # the row count spelled out, as upstream's folded_dim1: with k == 0 a -1 is ambiguous
        folded = D("reshape", self, [B.numel(sizes[:-1]), sizes[-1]])
        out = D("mm", folded, t2)
        shape = sizes[:-1] + ([t2._tn_sizes[1]] if db == 2 else [])
        return D("_unsafe_view", out, shape)
    # general batched case: broadcast batch dims, then bmm
    a = self if da > 1 else D("unsqueeze", self, 0)
    b = other if db > 1 else D("unsqueeze", other, 1)
    n, k = a._tn_sizes[-2:]
    k2, m = b._tn_sizes[-2:]
    batch = B.broadcast_shapes(list(a._tn_sizes[:-2]), list(b._tn_sizes[:-2]))
    nb = B.numel(batch)
    a3 = D("reshape", D("expand", a, batch + [n, k], False), [nb, n, k])
    b3 = D("reshape", D("expand", b, batch + [k2, m], False), [nb, k2, m])
    out = D("bmm", a3, b3)
    shape = batch + ([n] if da > 1 else []) + ([m] if db > 1 else [])
    return D("_unsafe_view", out, shape)


@impl("linear")
def linear(input, weight, bias=None):
    nd = len(input._tn_sizes)
    if nd == 2 and bias is not None:
        return D("addmm", bias, input, D("t", weight), 1, 1)
    if bias is not None and nd == 3 and input._tn_is_contiguous():
        sizes = list(input._tn_sizes)
        out = D("addmm", bias, D("view", input, [sizes[0] * sizes[1], sizes[-1]]), D("t", weight), 1, 1)
        return D("view", out, sizes[:-1] + [weight._tn_sizes[0]])
    out = D("matmul", input, D("t", weight))
    if bias is not None:
        out = D("add.Tensor", out, bias, 1)
    return out


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
            from ..elementwise.arithmetic import _type_name

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


@impl("outer", "ger")
def outer(self, vec2):
    for name, t in (("self", self), ("vec2", vec2)):
        if len(t._tn_sizes) != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {len(t._tn_sizes)}-D")
    return D("mul.Tensor", D("unsqueeze", self, 1), vec2)


@impl("baddbmm")
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    _bmm_sizes(batch1, batch2)
    prod = D("bmm", batch1, batch2)
    d = B.dtype_of(prod)
    if not (d.is_floating_point or d.is_complex):
        beta, alpha = int(beta), int(alpha)  # upstream converts the scalars to the integer type
    if alpha != 1:
        prod = D("mul.Tensor", prod, _num(alpha))
    if beta == 0:
        return prod
    base = self if beta == 1 else D("mul.Tensor", self, _num(beta))
    return D("add.Tensor", prod, base, 1)


@impl("vdot")
def vdot(self, other):
    return D("dot", self, other)


def _scalars_for(t, beta, alpha):
    if not (t.is_floating_point() or t.is_complex()):
        return int(beta), int(alpha)  # upstream converts the scalars to the integer type
    return beta, alpha


@impl("addmv")
def addmv(self, mat, vec, beta=1, alpha=1):
    if not (mat.dim() == 2 and vec.dim() == 1 and self.dim() <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}")
    prod = mat.mv(vec)
    beta, alpha = _scalars_for(prod, beta, alpha)
    prod = prod * alpha if alpha != 1 else prod
    return prod if beta == 0 else prod + (self * beta if beta != 1 else self)


@impl("addr")
def addr(self, vec1, vec2, beta=1, alpha=1):
    import torch

    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1
                           else f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    outer = torch.outer(vec1, vec2)
    if outer.dtype == torch.bool:
        return (self & bool(beta)) | (outer & bool(alpha)) if beta else outer & bool(alpha)
    beta, alpha = _scalars_for(outer, beta, alpha)
    outer = outer * alpha if alpha != 1 else outer
    return outer if beta == 0 else outer + (self * beta if beta != 1 else self)


def _bmm_sizes(batch1, batch2):
    """upstream expands self to (batch1.size(1), batch2.size(2)) before checking the ranks, so a
    batch of too few dims is first an IndexError"""
    B.wrap_dim(1, max(len(batch1._tn_sizes), 1))
    B.wrap_dim(2, max(len(batch2._tn_sizes), 1))


@impl("addbmm")
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    _bmm_sizes(batch1, batch2)
    prod = batch1.bmm(batch2).sum(0)
    beta, alpha = _scalars_for(prod, beta, alpha)
    prod = prod * alpha if alpha != 1 else prod
    return prod if beta == 0 else prod + (self * beta if beta != 1 else self)


@impl("inner")
def inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self.shape)} and {list(other.shape)}")
    n = self.shape[-1]
    out = self.reshape(-1, n).matmul(other.reshape(-1, n).t())
    return out.reshape(list(self.shape[:-1]) + list(other.shape[:-1]))


@impl("kron")
def kron(self, other):
    nd = max(self.dim(), other.dim())
    a = self.reshape([1] * (nd - self.dim()) + list(self.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    inter_a, inter_b = [], []
    for i in range(nd):
        inter_a += [a.shape[i], 1]
        inter_b += [1, b.shape[i]]
    out = a.reshape(inter_a) * b.reshape(inter_b)
    return out.reshape([a.shape[i] * b.shape[i] for i in range(nd)])


# Products with a sparse result: the core has no sparse layout, and upstream's dense CPU kernel
# for these refuses every strided input with this check, which ours repeats.
@impl("sspaddmm", "sspaddmm.out")
def sspaddmm(self, mat1, mat2, beta=1, alpha=1, out=None):
    raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


@impl("smm")
def smm(self, mat2):
    return sspaddmm(self, self, mat2)

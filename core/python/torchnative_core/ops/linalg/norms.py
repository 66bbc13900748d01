"""Norms and distances: linalg_vector_norm, norm, renorm, dist, cdist, pairwise_distance,
cosine_similarity, composed as upstream composes them (LinearAlgebra.cpp, Distance.cpp).
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl


D = B.door


@impl("linalg__powsum")
def linalg_powsum(self, ord=2, dim=None, keepdim=False, dtype=None):
    """sum(|x| ** ord) over dim, without vector_norm's root (upstream's powsum kernel)."""
    import torch

    B.floating_kernel_only(self, "powsum_cpu", complex_ok=True)
    if dtype is not None:
        B.floating_kernel_only(dtype, "powsum_cpu", complex_ok=True)
    x = self if dtype is None else self.to(dtype)
    return torch.sum(x.abs().pow(ord), dim=list(dim) if dim else None, keepdim=keepdim)


@impl("linalg_vector_norm")
def vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    if not (B.dtype_of(self).is_floating_point or B.dtype_of(self).is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{B.scalar_type_name(B.dtype_of(self))}")
    o = float(ord)
    if not B.numel(list(self._tn_sizes)) and (o < 0 or o == math.inf):  # upstream's meta function
        if not dim:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {o:g} norm on an empty tensor because the "
                               "operation does not have an identity")
        for dn in dim:
            if self._tn_sizes[B.wrap_dim(dn, len(self._tn_sizes))] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {o:g} norm on the dimension {dn}because "
                                   "this dimension is empty and the operation does not have an identity")
    if dtype is not None:  # (upstream's meta checks the dtype before it wraps the dims)
        d = B.dtype_of(self)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{B.scalar_type_name(dtype)}")
        if d.is_complex != dtype.is_complex:
            raise RuntimeError(f"linalg.vector_norm: dtype should be {'complex' if d.is_complex else 'real'} for "
                               f"{'complex' if d.is_complex else 'real'} inputs, but got {B.scalar_type_name(dtype)}")
        if B.promote_types(d, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({B.scalar_type_name(d)}) should be "
                               f"convertible without narrowing to the specified dtype ({B.scalar_type_name(dtype)})")
    sizes = list(self._tn_sizes)
    reduced = [B.wrap_dim(d, len(sizes)) for d in dim] if dim else list(range(len(sizes)))
    if all(d >= len(sizes) or sizes[d] == 1 for d in reduced):  # (a 0-dim tensor: one element)
        # upstream's is_reduce_over_1D_vector: a single element's norm is its abs (or ne(0) for ord 0),
        # with no power taken, so no overflow or underflow (a float32 1e20 stays 1e20)
        x = self if dtype is None else B.call("_to_copy", self, dtype)
        if not keepdim and sizes:
            x = D("squeeze.dims", x, reduced)
        if o != 0:
            return D("abs", x)
        a = D("abs", x)  # the result's (real) dtype
        return B.call("_to_copy", D("ne.Scalar", x, 0), B.dtype_of(a))
    x = D("abs", self if dtype is None else B.call("_to_copy", self, dtype))
    dims = None if dim is None else list(dim)
    if ord == float("inf"):
        return D("amax", x, dims or [], keepdim)
    if ord == float("-inf"):
        return D("amin", x, dims or [], keepdim)
    if ord == 0:
        return D("sum.dim_IntList", B.call("_to_copy", D("ne.Scalar", x, 0), B.dtype_of(x)), dims, keepdim, None)
    if ord == 1:
        return D("sum.dim_IntList", x, dims, keepdim, None)
    if ord == 2:
        return D("sqrt", D("sum.dim_IntList", D("mul.Tensor", x, x), dims, keepdim, None))
    return D("pow.Tensor_Scalar", D("sum.dim_IntList", D("pow.Tensor_Scalar", x, ord), dims, keepdim, None), 1.0 / ord)


@impl("norm.Scalar")
def norm_scalar(self, p=2):
    return B.call("linalg_vector_norm", self, p)


@impl("norm.ScalarOpt_dim")
def norm_dim(self, p, dim, keepdim=False):
    return D("linalg_vector_norm", self, 2 if p is None else p, dim, keepdim, None)


@impl("norm.ScalarOpt_dim_dtype")
def norm_dim_dtype(self, p, dim, keepdim=False, dtype=None):
    # upstream's meta: the output dtype refused first, then the dims, then linalg.vector_norm's checks
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("norm(): the desired output dtype should be either floating point or complex. Got "
                           f"{B.scalar_type_name(dtype)} instead.")
    for d in dim:  # its resize_reduction wraps the dims before linalg.vector_norm checks the dtype
        B.wrap_dim(d, len(self._tn_sizes))
    return D("linalg_vector_norm", self, 2 if p is None else p, dim, keepdim, dtype)


@impl("norm.ScalarOpt_dtype")
def norm_dtype(self, p, dtype):
    return norm_dim_dtype(self, p, [], False, dtype)


@impl("dist")
def dist(self, other, p=2):
    return D("norm.Scalar", self - other, p)


# --- distances and index helpers ---------------------------------------------------------------

@impl("_euclidean_dist")
def _euclidean_dist(x1, x2):
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1).sqrt()


@impl("cdist", "_cdist_forward")
def cdist(x1, x2, p=2.0, compute_mode=None):
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{B.scalar_type_name(B.dtype_of(t))}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1}.get(compute_mode, 2)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if not mm and x1.numel() and x2.numel() and B.dtype_of(x1)._tn_name in ("float16", "bfloat16"):
        # upstream's direct kernel dispatches on float32/float64 only (its matrix-product path
        # computes the reduced types)
        raise NotImplementedError(f"\"cdist\" not implemented for '{B.scalar_type_name(B.dtype_of(x1))}'")
    d = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (d != 0).to(x1.dtype).sum(-1)
    if p == float("inf"):
        return d.amax(-1)
    if p == 1:
        return d.sum(-1)
    if p == 2:
        return d.pow(2).sum(-1).sqrt()
    return d.pow(p).sum(-1).pow(1.0 / p)


@impl("pairwise_distance")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    import torch

    nd = max(x1.dim(), x2.dim())
    return torch.linalg.vector_norm(x1 - x2 + eps, p, nd - 1 if nd else 0, keepdim) if nd else (x1 - x2 + eps).abs()


@impl("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Distance.cpp: each side divided by its norm clamped to eps, then the product summed
    (upstream clamps in place under a NoGradGuard; out of place here, the same values)."""
    import torch

    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {eps}")

    common = torch.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{B.scalar_type_name(common)}")
    # integer (and bool) sides take the common dtype, as upstream's; vector_norm takes floats only
    x1 = x1 if x1.is_floating_point() else x1.to(common)
    x2 = x2 if x2.is_floating_point() else x2.to(common)
    x1, x2 = torch.broadcast_tensors(x1, x2)
    n1 = torch.linalg.vector_norm(x1, 2, dim, True).clamp_min(eps)
    n2 = torch.linalg.vector_norm(x2, 2, dim, True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@impl("renorm")
def renorm(self, p, dim, maxnorm):
    import torch

    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    nd = self.dim()
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    d = B.wrap_dim(dim, nd)
    reduce_dims = [i for i in range(nd) if i != d]
    acc = torch.float32 if self.dtype in (torch.bfloat16, torch.float16) else self.dtype
    norm = torch.linalg.vector_norm(self, p, reduce_dims, keepdim=True, dtype=acc)
    # renorm_scale_factor: computed in the accumulate type, stored in the input's
    factor = torch.where(norm > maxnorm, maxnorm / (norm + 1e-7), torch.ones((), dtype=acc)).to(self.dtype)
    return self * factor

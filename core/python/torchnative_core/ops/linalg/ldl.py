"""The symmetric (or Hermitian) indefinite factorization A = L D L^T (L D L^H) with Bunch-Kaufman
diagonal pivoting, in LAPACK's compact form, and the solve with it: linalg.ldl_factor(_ex) and
linalg.ldl_solve.

Upstream calls LAPACK's sytrf/hetrf and sytrs/hetrs. The factor is written here as the unblocked
algorithm those routines run for matrices narrower than their block size (sytf2/hetf2: alpha =
(1 + sqrt(17)) / 8, 1x1 and 2x2 pivots, interchanges applied to the trailing matrix only, 1-based
pivots negative for a 2x2 block), so the pivots and the compact layout are LAPACK's, not those of
faer's LBL^T (whose full-permutation form would have to be re-expressed step by step). It runs in
double (complex double) precision one matrix at a time in Python and rounds once to the input's
dtype; upstream's values come from MKL in the input's precision, so float32 agrees to rounding.
Neither operator has a derivative upstream; here too a gradient refuses by name."""

from __future__ import annotations

import math

from .. import impl
from .decompositions import _check_matrix, _empty_fortran, _tname

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _torch():
    import torch

    return torch


def _cabs1(z):
    return abs(z.real) + abs(z.imag) if isinstance(z, complex) else abs(z)


def _argmax(vals):
    best, at = -1.0, 0
    for i, v in enumerate(vals):
        if v > best:  # the first of equal maxima, as i?amax
            best, at = v, i
    return at, best


def _factor(a, n, herm, cplx):
    """sytf2/hetf2 (lower) on the n x n list-of-lists `a` in place; returns (pivots, info)."""
    conj = (lambda z: z.conjugate()) if (herm and cplx) else (lambda z: z)
    mag = _cabs1 if cplx else abs
    ipiv, info, k = [0] * n, 0, 0
    while k < n:
        kstep = 1
        absakk = abs(a[k][k].real) if herm and cplx else mag(a[k][k])
        if k < n - 1:
            off, colmax = _argmax([mag(a[i][k]) for i in range(k + 1, n)])
            imax = k + 1 + off
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm and cplx:
                a[k][k] = complex(a[k][k].real, 0.0)
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                _, rowmax = _argmax([mag(a[imax][j]) for j in range(k, imax)])
                if imax < n - 1:
                    rowmax = max(rowmax, _argmax([mag(a[i][imax]) for i in range(imax + 1, n)])[1])
                diag = abs(a[imax][imax].real) if herm and cplx else mag(a[imax][imax])
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                for i in range(kp + 1, n):
                    a[i][kk], a[i][kp] = a[i][kp], a[i][kk]
                for j in range(kk + 1, kp):
                    a[j][kk], a[kp][j] = conj(a[kp][j]), conj(a[j][kk])
                if herm and cplx:
                    a[kp][kk] = a[kp][kk].conjugate()
                    a[kk][kk], a[kp][kp] = complex(a[kp][kp].real, 0.0), complex(a[kk][kk].real, 0.0)
                else:
                    a[kk][kk], a[kp][kp] = a[kp][kp], a[kk][kk]
                if kstep == 2:
                    if herm and cplx:
                        a[k][k] = complex(a[k][k].real, 0.0)
                    a[k + 1][k], a[kp][k] = a[kp][k], a[k + 1][k]
            elif herm and cplx:
                a[k][k] = complex(a[k][k].real, 0.0)
                if kstep == 2:
                    a[k + 1][k + 1] = complex(a[k + 1][k + 1].real, 0.0)
            if kstep == 1:
                if k < n - 1:
                    d11 = 1.0 / (a[k][k].real if herm and cplx else a[k][k])
                    x = [a[i][k] for i in range(k + 1, n)]
                    for jj in range(len(x)):  # the rank-1 update syr/her of the trailing lower triangle
                        t = -d11 * conj(x[jj])
                        for ii in range(jj, len(x)):
                            a[k + 1 + ii][k + 1 + jj] += x[ii] * t
                        if herm and cplx:
                            j = k + 1 + jj
                            a[j][j] = complex(a[j][j].real, 0.0)
                    for ii in range(len(x)):
                        a[k + 1 + ii][k] = d11 * x[ii]
            elif k < n - 2:
                if herm and cplx:
                    d = abs(a[k + 1][k])
                    d11 = a[k + 1][k + 1].real / d
                    d22 = a[k][k].real / d
                    tt = 1.0 / (d11 * d22 - 1.0)
                    d21 = a[k + 1][k] / d
                    d = tt / d
                    for j in range(k + 2, n):
                        wk = d * (d11 * a[j][k] - d21 * a[j][k + 1])
                        wkp1 = d * (d22 * a[j][k + 1] - d21.conjugate() * a[j][k])
                        for i in range(j, n):
                            a[i][j] -= a[i][k] * wk.conjugate() + a[i][k + 1] * wkp1.conjugate()
                        a[j][k], a[j][k + 1] = wk, wkp1
                        a[j][j] = complex(a[j][j].real, 0.0)
                else:
                    d21 = a[k + 1][k]
                    d11 = a[k + 1][k + 1] / d21
                    d22 = a[k][k] / d21
                    t = 1.0 / (d11 * d22 - 1.0)
                    d21 = t / d21
                    for j in range(k + 2, n):
                        wk = d21 * (d11 * a[j][k] - a[j][k + 1])
                        wkp1 = d21 * (d22 * a[j][k + 1] - a[j][k])
                        for i in range(j, n):
                            a[i][j] -= a[i][k] * wk + a[i][k + 1] * wkp1
                        a[j][k], a[j][k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _ldl_factor(A, hermitian, name):
    torch = _torch()
    _check_matrix(A, name, square=True)
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_tname(A.dtype)}")
    if A.dtype in (torch.float16, torch.bfloat16, torch.complex32) and A.numel():
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for '{_tname(A.dtype)}'")
    n, batch = A.shape[-1], list(A.shape[:-2])
    cplx = A.is_complex()
    wide = torch.complex128 if cplx else torch.float64
    nb = math.prod(batch)
    if nb == 0 or n == 0:  # nothing to factor (a reshape to [-1, 0, 0] would be ambiguous)
        i32 = torch.int32
        return torch.zeros(batch + [n, n], dtype=A.dtype), torch.zeros(batch + [n], dtype=i32), torch.zeros(batch, dtype=i32)
    mats = A.detach().resolve_conj().to(wide).reshape(nb, n, n).tolist()
    LD, piv, info = [], [], []
    for m in mats:
        a = [[m[i][j] if j <= i else (0j if cplx else 0.0) for j in range(n)] for i in range(n)]
        p, inf = _factor(a, n, hermitian, cplx)
        LD.append(a)
        piv.append(p)
        info.append(inf)
    LD = torch.tensor(LD, dtype=wide).reshape(batch + [n, n]).to(A.dtype)
    LD = _empty_fortran(LD.shape, LD.dtype, LD.device).copy_(LD)  # LAPACK's column-major layout, as upstream
    piv = torch.tensor(piv, dtype=torch.int32).reshape(batch + [n])
    info = torch.tensor(info, dtype=torch.int32).reshape(batch)
    return LD, piv, info


def _check_errors(info, name, is_matrix):
    """upstream's _linalg_check_errors for sytrf's info > 0 (a zero 1x1 pivot), which it does not
    name: its internal assert."""
    flat = info.reshape(-1).tolist()
    for i, v in enumerate(flat):
        if v != 0:
            where = "" if is_matrix else f": (Batch element {i})"
            raise RuntimeError("false INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/native/"
                               "BatchLinearAlgebra.cpp\":1642, please report a bug to PyTorch. "
                               f"{name}{where}: Unknown error code: {v}.")


def _no_grad(name, *ts):
    torch = _torch()
    if torch.is_grad_enabled() and any(t.requires_grad for t in ts):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")


@impl("linalg_ldl_factor_ex")
def linalg_ldl_factor_ex(self, hermitian=False, check_errors=False):
    _no_grad("linalg_ldl_factor_ex", self)
    LD, piv, info = _ldl_factor(self, hermitian, "torch.linalg.ldl_factor_ex")
    from torch.return_types import linalg_ldl_factor_ex as ret

    if check_errors:
        _check_errors(info, "torch.linalg.ldl_factor_ex", self.dim() == 2)
    return ret((LD, piv, info))


@impl("linalg_ldl_factor")
def linalg_ldl_factor(self, hermitian=False):
    _no_grad("linalg_ldl_factor_ex", self)
    LD, piv, info = _ldl_factor(self, hermitian, "torch.linalg.ldl_factor_ex")
    from torch.return_types import linalg_ldl_factor as ret

    _check_errors(info, "torch.linalg.ldl_factor", self.dim() == 2)
    return ret((LD, piv))


def _solve(a, ipiv, b, n, nrhs, herm):
    """sytrs/hetrs (lower): b <- A^-1 b with the compact factor `a` and LAPACK pivots."""
    conj = (lambda z: z.conjugate()) if herm else (lambda z: z)
    k = 0
    while k < n:
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[k], b[kp] = b[kp], b[k]
            for i in range(k + 1, n):
                for j in range(nrhs):
                    b[i][j] -= a[i][k] * b[k][j]
            d = 1.0 / (a[k][k].real if herm else a[k][k])
            b[k] = [d * v for v in b[k]]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[k + 1], b[kp] = b[kp], b[k + 1]
            for i in range(k + 2, n):
                for j in range(nrhs):
                    b[i][j] -= a[i][k] * b[k][j]
                    b[i][j] -= a[i][k + 1] * b[k + 1][j]
            akm1k = a[k + 1][k]
            akm1 = a[k][k] / conj(akm1k)
            ak = a[k + 1][k + 1] / akm1k
            denom = akm1 * ak - 1.0
            for j in range(nrhs):
                bkm1 = b[k][j] / conj(akm1k)
                bk = b[k + 1][j] / akm1k
                b[k][j] = (ak * bkm1 - bk) / denom
                b[k + 1][j] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:
        if ipiv[k] > 0:
            for j in range(nrhs):
                b[k][j] -= sum(conj(a[i][k]) * b[i][j] for i in range(k + 1, n))
            kp = ipiv[k] - 1
            if kp != k:
                b[k], b[kp] = b[kp], b[k]
            k -= 1
        else:
            for j in range(nrhs):
                b[k][j] -= sum(conj(a[i][k]) * b[i][j] for i in range(k + 1, n))
                b[k - 1][j] -= sum(conj(a[i][k - 1]) * b[i][j] for i in range(k + 1, n))
            kp = -ipiv[k] - 1
            if kp != k:
                b[k], b[kp] = b[kp], b[k]
            k -= 2
    return b


@impl("linalg_ldl_solve")
def linalg_ldl_solve(LD, pivots, B, hermitian=False):
    torch = _torch()
    name = "torch.linalg.ldl_solve"
    _check_matrix(LD, name, square=True)
    if not (LD.is_floating_point() or LD.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_tname(LD.dtype)}")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_tname(B.dtype)} and A of "
                           f"type {_tname(LD.dtype)} instead.")
    if B.size(-2) != LD.size(-1):
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {LD.size(-1)} by {LD.size(-1)} "
                           f"but each b matrix is {B.size(-2)} by {B.size(-1)}")
    if B.dim() < 2:
        raise RuntimeError(f"{name}: Expected B to have at least 2 dimensions, but it has {B.dim()} dimensions instead")
    if list(pivots.shape) != list(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
                           f"{list(pivots.shape)} instead")
    if pivots.is_floating_point() or pivots.is_complex() or pivots.dtype == torch.bool:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_tname(pivots.dtype)}")
    if LD.dtype in (torch.float16, torch.bfloat16, torch.complex32):
        raise NotImplementedError(f"\"ldl_solve_cpu\" not implemented for '{_tname(LD.dtype)}'")
    _no_grad("linalg_ldl_solve", LD, B)
    from ..base import broadcast_shapes

    batch = broadcast_shapes(list(LD.shape[:-2]), list(B.shape[:-2]))
    n, nrhs = LD.size(-1), B.size(-1)
    cplx = LD.is_complex()
    wide = torch.complex128 if cplx else torch.float64
    nb = math.prod(batch)
    if nb == 0 or n == 0 or nrhs == 0:
        return torch.zeros(batch + [n, nrhs], dtype=LD.dtype)
    lds = LD.detach().resolve_conj().to(wide).expand(batch + [n, n]).reshape(nb, n, n).tolist()
    pvs = pivots.to(torch.int64).expand(batch + [n]).reshape(nb, n).tolist()
    bs = B.detach().resolve_conj().to(wide).expand(batch + [n, nrhs]).reshape(nb, n, nrhs).tolist()
    out = [_solve(a, p, b, n, nrhs, hermitian and cplx) for a, p, b in zip(lds, pvs, bs)]
    return torch.tensor(out, dtype=wide).reshape(batch + [n, nrhs]).to(LD.dtype)

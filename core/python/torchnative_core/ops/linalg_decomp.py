"""Linear-algebra decompositions and solvers (issue 4): the operators upstream computes with
LAPACK, here computed in float64 by ops/dense.py one matrix at a time and rounded once to the
input's dtype. The CompositeImplicitAutograd ones (linalg_svd, linalg_solve, det, ...) are
composed as upstream composes them (aten/src/ATen/native/BatchLinearAlgebra.cpp,
LinearAlgebra.cpp) so their parts record autograd nodes and a dispatch mode sees the same calls.
"""

from __future__ import annotations

import math

from . import base as B
from . import dense as Dn
from . import impl

D = B.door


def _torch():
    import torch

    return torch


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _check_float(A, name):
    torch = _torch()
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_tname(A.dtype)}")
    if A.is_complex():
        raise NotImplementedError(f"torchnative: {name} on complex tensors is not supported yet")
    if A.dtype in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_tname(A.dtype)}")


def _tname(d):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool", "float16": "Half",
            "bfloat16": "BFloat16", "uint8": "Byte", "int8": "Char", "int16": "Short"}.get(str(d).replace("torch.", ""), str(d))


def _check_matrix(A, name, square=False):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")


def mats(A):
    """(batch shape, m, n, [matrix as list of rows, in float64] per batch element)."""
    torch = _torch()
    batch = list(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    nb = _prod(batch)
    if nb == 0:
        return batch, m, n, []
    if m == 0 or n == 0:
        return batch, m, n, [[[] for _ in range(m)] for _ in range(nb)]
    flat = A.detach().to(torch.float64).reshape(nb, m, n).tolist()
    return batch, m, n, flat


def tensor(values, shape, dtype):
    """A tensor of `shape` holding `values` (nested lists in row-major order, per batch element)."""
    torch = _torch()
    if _prod(shape) == 0:
        return torch.zeros(shape, dtype=dtype)
    return torch.tensor(values, dtype=torch.float64).reshape(shape).to(dtype)


def itensor(values, shape, dtype):
    torch = _torch()
    if _prod(shape) == 0:
        return torch.zeros(shape, dtype=dtype)
    return torch.tensor(values, dtype=dtype).reshape(shape)


# --- QR -------------------------------------------------------------------------------------------

@impl("linalg_qr")
def linalg_qr(A, mode="reduced"):
    from torch.return_types import linalg_qr as ret

    _check_float(A, "linalg.qr")
    _check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")
    batch, m, n, ms = mats(A)
    k = min(m, n)
    qs, rs = [], []
    for a in ms:
        q, r = Dn.qr(a, m, n, mode)
        qs.append(q)
        rs.append(r)
    rrows = m if mode == "complete" else k
    R = tensor(rs, batch + [rrows, n], A.dtype)
    if mode == "r":
        Q = _torch().empty([0], dtype=A.dtype)
    else:
        Q = tensor(qs, batch + [m, m if mode == "complete" else k], A.dtype)
    return ret((Q, R))


@impl("qr")
def qr(self, some=True):
    from torch.return_types import qr as ret

    Q, R = D("linalg_qr", self, "reduced" if some else "complete")
    return ret((Q, R))


@impl("geqrf")
def geqrf(self):
    from torch.return_types import geqrf as ret

    _check_float(self, "geqrf")
    _check_matrix(self, "geqrf")
    batch, m, n, ms = mats(self)
    hs, ts = [], []
    for a in ms:
        h, t = Dn.geqrf(a, m, n)
        hs.append(h)
        ts.append(t)
    return ret((tensor(hs, batch + [m, n], self.dtype), tensor(ts, batch + [min(m, n)], self.dtype)))


@impl("linalg_householder_product")
def householder_product(input, tau):
    _check_float(input, "torch.linalg.householder_product")
    if input.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    batch, _, _, ms = mats(input)
    taus = tau.detach().to(_torch().float64).reshape(_prod(batch), tau.shape[-1]).tolist() if ms else []
    qs = [Dn.householder_product(a, t, m, n) for a, t in zip(ms, taus)]
    return tensor(qs, batch + [m, n], input.dtype)


@impl("orgqr")
def orgqr(self, input2):
    return D("linalg_householder_product", self, input2)


# --- SVD ------------------------------------------------------------------------------------------

@impl("_linalg_svd")
def _linalg_svd(A, full_matrices=False, compute_uv=True, driver=None):
    from torch.return_types import _linalg_svd as ret

    _check_float(A, "linalg.svd")
    _check_matrix(A, "linalg.svd")
    batch, m, n, ms = mats(A)
    k = min(m, n)
    us, ss, vs = [], [], []
    for a in ms:
        if k == 0:
            U, S, Vh = Dn.eye(m), [], Dn.eye(n)
        elif compute_uv:
            U, S, Vh = Dn.svd(a, m, n, full_matrices, True)
        else:
            U, S, Vh = None, Dn.svd(a, m, n, False, False), None
        us.append(U)
        ss.append(S)
        vs.append(Vh)
    S = tensor(ss, batch + [k], A.dtype)
    if not compute_uv:
        e = _torch().empty([0], dtype=A.dtype)
        return ret((e, S, e.clone()))
    ucols, vrows = (m, n) if full_matrices else (k, k)
    if k == 0:
        us = [[row[:ucols] for row in U] for U in us]
        vs = [Vh[:vrows] for Vh in vs]
    U = tensor(us, batch + [m, ucols], A.dtype)
    Vh = tensor(vs, batch + [vrows, n], A.dtype)
    return ret((U, S, Vh))


@impl("linalg_svd")
def linalg_svd(A, full_matrices=True, driver=None):
    from torch.return_types import linalg_svd as ret

    return ret(tuple(D("_linalg_svd", A, full_matrices, True, driver)))


def _may_require_grad(A):
    torch = _torch()
    return torch.is_grad_enabled() and A.requires_grad


@impl("linalg_svdvals")
def linalg_svdvals(A, driver=None):
    return D("_linalg_svd", A, False, _may_require_grad(A), driver)[1]


@impl("svd")
def svd(self, some=True, compute_uv=True):
    from torch.return_types import svd as ret

    torch = _torch()
    _check_float(self, "svd")
    _check_matrix(self, "svd")
    if compute_uv:
        U, S, Vh = D("linalg_svd", self, not some, None)
        return ret((U, S, Vh.mH))
    S = D("linalg_svdvals", self, None)
    m, n = self.shape[-2], self.shape[-1]
    U = torch.zeros(list(self.shape[:-2]) + [m, m], dtype=self.dtype)
    V = torch.zeros(list(self.shape[:-2]) + [n, n], dtype=self.dtype)
    return ret((U, S, V))


# --- symmetric eigenproblem -----------------------------------------------------------------------

@impl("_linalg_eigh")
def _linalg_eigh(A, UPLO="L", compute_v=True):
    from torch.return_types import _linalg_eigh as ret

    _check_float(A, "linalg.eigh")
    _check_matrix(A, "linalg.eigh", square=True)
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    lower = UPLO in ("L", "l")
    batch, n, _, ms = mats(A)
    ws, vs = [], []
    for a in ms:
        sym = [[(a[i][j] if (i >= j) == lower else a[j][i]) for j in range(n)] for i in range(n)]
        w, v = Dn.eigh(sym, n, compute_v)
        ws.append(w)
        vs.append(v)
    W = tensor(ws, batch + [n], A.dtype)
    V = tensor(vs, batch + [n, n], A.dtype) if compute_v else _torch().empty([0], dtype=A.dtype)
    return ret((W, V))


@impl("linalg_eigh")
def linalg_eigh(A, UPLO="L"):
    from torch.return_types import linalg_eigh as ret

    return ret(tuple(D("_linalg_eigh", A, UPLO, True)))


@impl("linalg_eigvalsh")
def linalg_eigvalsh(A, UPLO="L"):
    return D("_linalg_eigh", A, UPLO, _may_require_grad(A))[0]


# --- Cholesky -------------------------------------------------------------------------------------

def _cholesky_factors(A, upper):
    batch, n, _, ms = mats(A)
    ls, infos = [], []
    for a in ms:
        src = a if not upper else [[a[j][i] for j in range(n)] for i in range(n)]  # upper reads the upper triangle
        L, info = Dn.cholesky(src, n)
        if upper:
            L = [[L[j][i] for j in range(n)] for i in range(n)]
        ls.append(L)
        infos.append(info)
    return batch, n, ls, infos


@impl("linalg_cholesky_ex")
def linalg_cholesky_ex(self, upper=False, check_errors=False):
    from torch.return_types import linalg_cholesky_ex as ret

    torch = _torch()
    _check_float(self, "linalg.cholesky")
    _check_matrix(self, "linalg.cholesky", square=True)
    batch, n, ls, infos = _cholesky_factors(self, upper)
    L = tensor(ls, batch + [n, n], self.dtype)
    info = itensor(infos, batch, torch.int32)
    if check_errors:
        _raise_cholesky(infos, "linalg.cholesky")
    return ret((L, info))


def _raise_cholesky(infos, name):
    torch = _torch()
    for b, i in enumerate(infos):
        if i > 0:
            where = f"For batch {b}: " if len(infos) > 1 else ""
            raise torch.linalg.LinAlgError(
                f"{name}: {where}The factorization could not be completed because the input is not positive-definite "
                f"(the leading minor of order {i} is not positive-definite).")


@impl("linalg_cholesky")
def linalg_cholesky(self, upper=False):
    L, info = D("linalg_cholesky_ex", self, upper, False)
    _raise_cholesky(info.reshape(-1).tolist(), "linalg.cholesky")
    return L


@impl("cholesky")
def cholesky(self, upper=False):
    _check_float(self, "cholesky")
    _check_matrix(self, "cholesky", square=True)
    batch, n, ls, infos = _cholesky_factors(self, upper)
    _raise_cholesky(infos, "cholesky")
    return tensor(ls, batch + [n, n], self.dtype)


def _batch_broadcast(a, b):
    """Broadcast the batch dimensions of two matrices (or stacks)."""
    batch = B.broadcast_shapes(list(a.shape[:-2]), list(b.shape[:-2]))
    return a.expand(batch + list(a.shape[-2:])), b.expand(batch + list(b.shape[-2:])), batch


@impl("cholesky_solve")
def cholesky_solve(self, input2, upper=False):
    _check_float(self, "cholesky_solve")
    if self.dim() < 2 or input2.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {self.dim()} dimensions instead")
    b, L, batch = _batch_broadcast(self, input2)
    _, n, k, bs = mats(b)
    _, _, _, ls = mats(L)
    out = [_cholesky_apply(factor, bb, upper) for bb, factor in zip(bs, ls)]
    return tensor(out, batch + [n, k], self.dtype)


def _cholesky_apply(factor, b, upper):
    """(L L^T)^-1 b (or (U^T U)^-1 b) from the Cholesky factor."""
    ft = Dn.transpose(factor, len(factor))
    lower, up = (ft, factor) if upper else (factor, ft)
    return Dn.solve_upper(up, Dn.solve_lower(lower, b))


@impl("cholesky_inverse")
def cholesky_inverse(self, upper=False):
    _check_float(self, "cholesky_inverse")
    _check_matrix(self, "cholesky_inverse", square=True)
    batch, n, _, ls = mats(self)
    out = [_cholesky_apply(factor, Dn.eye(n), upper) for factor in ls]
    return tensor(out, batch + [n, n], self.dtype)


# --- LU, solve, inverse, determinants -------------------------------------------------------------

def _lu_all(A):
    batch, m, n, ms = mats(A)
    lus, pivs, infos = [], [], []
    for a in ms:
        lu_, piv, info = Dn.lu(a, m, n)
        lus.append(lu_)
        pivs.append(piv)
        infos.append(info)
    return batch, m, n, lus, pivs, infos


@impl("linalg_lu_factor_ex")
def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    from torch.return_types import linalg_lu_factor_ex as ret

    torch = _torch()
    _check_float(A, "torch.lu_factor")
    if A.dim() < 2:
        raise RuntimeError("torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    batch, m, n, lus, pivs, infos = _lu_all(A)
    k = min(m, n)
    out = ret((tensor(lus, batch + [m, n], A.dtype), itensor(pivs, batch + [k], torch.int32), itensor(infos, batch, torch.int32)))
    if check_errors:
        _raise_singular(infos, "torch.linalg.lu_factor_ex")
    return out


@impl("linalg_lu_factor")
def linalg_lu_factor(A, pivot=True):
    from torch.return_types import linalg_lu_factor as ret

    LU, piv, info = D("linalg_lu_factor_ex", A, pivot, False)
    return ret((LU, piv))


@impl("_lu_with_info")
def _lu_with_info(self, pivot=True, check_errors=True):
    from torch.return_types import _lu_with_info as ret

    return ret(tuple(D("linalg_lu_factor_ex", self, pivot, False)))


def _raise_singular(infos, name):
    torch = _torch()
    for b, i in enumerate(infos):
        if i > 0:
            where = f"(Batch element {b}): " if len(infos) > 1 else ""
            raise torch.linalg.LinAlgError(
                f"{name}: {where}The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular.")


def _unpack(lus, pivs, m, n):
    """P, L, U per matrix from LAPACK-style LU and 1-based pivots."""
    k = min(m, n)
    Ps, Ls, Us = [], [], []
    for lu_, piv in zip(lus, pivs):
        perm = list(range(m))
        for i, p in enumerate(piv):
            perm[i], perm[p - 1] = perm[p - 1], perm[i]
        P = Dn.zeros(m, m)
        for i, p in enumerate(perm):
            P[p][i] = 1.0
        Ls.append([[(1.0 if i == j else (lu_[i][j] if j < i else 0.0)) for j in range(k)] for i in range(m)])
        Us.append([[(lu_[i][j] if j >= i else 0.0) for j in range(n)] for i in range(k)])
        Ps.append(P)
    return Ps, Ls, Us


@impl("linalg_lu")
def linalg_lu(A, pivot=True):
    from torch.return_types import linalg_lu as ret

    _check_float(A, "linalg.lu")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    batch, m, n, lus, pivs, _ = _lu_all(A)
    k = min(m, n)
    Ps, Ls, Us = _unpack(lus, pivs, m, n)
    return ret((tensor(Ps, batch + [m, m], A.dtype), tensor(Ls, batch + [m, k], A.dtype), tensor(Us, batch + [k, n], A.dtype)))


@impl("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    from torch.return_types import lu_unpack as ret

    torch = _torch()
    batch, m, n, lus = mats(LU_data)
    k = min(m, n)
    nb = _prod(batch)
    pivs = LU_pivots.reshape(nb, LU_pivots.shape[-1]).tolist() if nb and k else [[] for _ in range(nb)]
    Ps, Ls, Us = _unpack(lus, pivs, m, n)
    empty = torch.empty([0], dtype=LU_data.dtype)
    L = tensor(Ls, batch + [m, k], LU_data.dtype) if unpack_data else empty
    U = tensor(Us, batch + [k, n], LU_data.dtype) if unpack_data else empty.clone()
    P = tensor(Ps, batch + [m, m], LU_data.dtype) if unpack_pivots else empty.clone()
    return ret((P, L, U))


def _is_vector_rhs(A, Bt):
    return Bt.dim() == 1 or (A.dim() - 1 == Bt.dim() and list(Bt.shape) == list(A.shape[:-1]))


@impl("_linalg_solve_ex")
def _linalg_solve_ex(A, Bm, left=True, check_errors=False):
    from torch.return_types import _linalg_solve_ex as ret

    torch = _torch()
    _check_float(A, "linalg.solve")
    _check_matrix(A, "linalg.solve", square=True)
    if A.dtype != Bm.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type {_tname(A.dtype)} and B of type {_tname(Bm.dtype)} instead")
    vector = _is_vector_rhs(A, Bm)
    Bmat = Bm.unsqueeze(-1) if vector else Bm
    if not left:
        Bmat = Bmat.mT
    A_, B_, batch = _batch_broadcast(A, Bmat)
    if not left:
        A_ = A_.mT
    _, n, _, As = mats(A_)
    _, _, k, Bs = mats(B_)
    xs, lus, pivs, infos = [], [], [], []
    for a, b in zip(As, Bs):
        lu_, piv, info = Dn.lu(a, n, n)
        lus.append(lu_)
        pivs.append(piv)
        infos.append(info)
        xs.append(Dn.lu_solve(lu_, piv, b) if info == 0 else [[math.nan] * k for _ in range(n)])
    X = tensor(xs, batch + [n, k], A.dtype)
    if not left:
        X = X.mT
    if vector:
        X = X.squeeze(-1)
    if check_errors:
        _raise_singular(infos, "torch.linalg.solve_ex")
    return ret((X.contiguous(), tensor(lus, batch + [n, n], A.dtype), itensor(pivs, batch + [n], torch.int32),
                itensor(infos, batch, torch.int32)))


@impl("linalg_solve_ex")
def linalg_solve_ex(A, Bm, left=True, check_errors=False):
    from torch.return_types import linalg_solve_ex as ret

    r = D("_linalg_solve_ex", A, Bm, left, check_errors)
    return ret((r[0], r[3]))


@impl("linalg_solve")
def linalg_solve(A, Bm, left=True):
    r = D("_linalg_solve_ex", A, Bm, left, False)
    _raise_singular(r[3].reshape(-1).tolist(), "torch.linalg.solve")
    return r[0]


@impl("linalg_inv_ex")
def linalg_inv_ex(A, check_errors=False):
    from torch.return_types import linalg_inv_ex as ret

    torch = _torch()
    _check_float(A, "linalg.inv")
    _check_matrix(A, "linalg.inv", square=True)
    batch, n, _, As = mats(A)
    out, infos = [], []
    for a in As:
        lu_, piv, info = Dn.lu(a, n, n)
        infos.append(info)
        out.append(Dn.lu_solve(lu_, piv, Dn.eye(n)) if info == 0 else [[math.nan] * n for _ in range(n)])
    if check_errors:
        _raise_singular(infos, "linalg.inv")
    return ret((tensor(out, batch + [n, n], A.dtype), itensor(infos, batch, torch.int32)))


@impl("linalg_inv")
def linalg_inv(A):
    inv, info = D("linalg_inv_ex", A, False)
    _raise_singular(info.reshape(-1).tolist(), "linalg.inv")
    return inv


@impl("inverse")
def inverse(self):
    return D("linalg_inv", self)


def _det_of(lu_, piv):
    d = 1.0
    for i in range(len(lu_)):
        d *= lu_[i][i]
        if piv[i] != i + 1:
            d = -d
    return d


@impl("_linalg_det")
def _linalg_det(A):
    from torch.return_types import _linalg_det as ret

    batch, lus, pivs, LU, P = _square_lu(A, "linalg.det")
    return ret((tensor([_det_of(lu_, piv) for lu_, piv in zip(lus, pivs)], batch, A.dtype), LU, P))


def _square_lu(A, name):
    """(batch, LU lists, pivot lists, LU tensor, pivots tensor) of a stack of square matrices."""
    _check_float(A, name)
    _check_matrix(A, name, square=True)
    batch, n, _, lus, pivs, _ = _lu_all(A)
    return batch, lus, pivs, tensor(lus, batch + [n, n], A.dtype), itensor(pivs, batch + [n], _torch().int32)


@impl("linalg_det")
def linalg_det(A):
    return D("_linalg_det", A)[0]


@impl("det")
def det(self):
    return D("linalg_det", self)


@impl("_linalg_slogdet")
def _linalg_slogdet(A):
    from torch.return_types import _linalg_slogdet as ret

    batch, lus, pivs, LU, P = _square_lu(A, "linalg.slogdet")
    signs, logs = [], []
    for lu_, piv in zip(lus, pivs):
        s, la = 1.0, 0.0
        for i in range(len(lu_)):
            d = lu_[i][i]
            if d == 0.0:
                s, la = 0.0, -math.inf
                break
            la += math.log(abs(d))
            if d < 0:
                s = -s
            if piv[i] != i + 1:
                s = -s
        signs.append(s)
        logs.append(la)
    return ret((tensor(signs, batch, A.dtype), tensor(logs, batch, A.dtype), LU, P))


@impl("linalg_slogdet")
def linalg_slogdet(A):
    from torch.return_types import linalg_slogdet as ret

    r = D("_linalg_slogdet", A)
    return ret((r[0], r[1]))


@impl("slogdet")
def slogdet(self):
    from torch.return_types import slogdet as ret

    r = D("_linalg_slogdet", self)
    return ret((r[0], r[1]))


@impl("logdet")
def logdet(self):
    torch = _torch()
    _check_matrix(self, "logdet", square=True)
    sign, logabsdet = D("linalg_slogdet", self)
    return torch.where(sign == -1.0, torch.full((), math.nan, dtype=logabsdet.dtype), logabsdet)


# --- triangular solves ----------------------------------------------------------------------------

def _tri_solve(A_, B_, upper, unit, batch):
    _, n, _, As = mats(A_)
    _, _, k, Bs = mats(B_)
    out = []
    for a, b in zip(As, Bs):
        out.append(Dn.solve_upper(a, b, unit) if upper else Dn.solve_lower(a, b, unit))
    return out, n, k


@impl("linalg_solve_triangular")
def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    _check_float(self, "linalg.solve_triangular")
    A = self
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        X = linalg_solve_triangular(A.mT, B.mT, not upper, True, unitriangular)
        return X.mT.contiguous()
    A_, B_, batch = _batch_broadcast(A, B)
    out, n, k = _tri_solve(A_, B_, upper, unitriangular, batch)
    return tensor(out, batch + [n, k], self.dtype)


@impl("triangular_solve")
def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    from torch.return_types import triangular_solve as ret

    _check_float(self, "triangular_solve")
    if self.dim() < 2 or A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {self.dim()} dimensions instead")
    B_, A_, batch = _batch_broadcast(self, A)
    Ause = A_.mT if transpose else A_
    out, n, k = _tri_solve(Ause, B_, upper != transpose, unitriangular, batch)
    return ret((tensor(out, batch + [n, k], self.dtype), A_.clone()))


@impl("linalg_lu_solve")
def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    _check_float(LU, "linalg.lu_solve")
    # A = P L U; solve with the unpacked factors
    # composed of operators that record themselves: the gradient flows through lu_unpack's
    # triangles as upstream's LinalgLuSolveBackward0 treats LU
    P, L, U = D("lu_unpack", LU, pivots, True, True)
    tri = lambda A, Bm, upper, unit: D("linalg_solve_triangular", A, Bm, upper, True, unit)  # noqa: E731
    if left:
        if not adjoint:
            return tri(U, tri(L, D("matmul", D("transpose.int", P, -2, -1), B), False, True), True, False)
        Z = tri(D("transpose.int", L, -2, -1), tri(D("transpose.int", U, -2, -1), B, False, False), True, True)
        return D("matmul", P, Z)
    # X A = B  <=>  A^T X^T = B^T (adjoint: A X^T ... )
    return linalg_lu_solve(LU, pivots, B.mT, True, not adjoint).mT.contiguous()


@impl("lu_solve")
def lu_solve(self, LU_data, LU_pivots):
    return D("linalg_lu_solve", LU_data, LU_pivots, self, True, False)


@impl("diag_embed")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    torch = _torch()
    nd = self.dim() + 1
    d1, d2 = B.wrap_dim(dim1, nd), B.wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self.shape[-1] + abs(offset) if self.dim() else 1 + abs(offset)
    rest = list(self.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(n if i in (d1, d2) else rest.pop(0))
    out = torch.zeros(shape, dtype=self.dtype)
    out.diagonal(offset, d1, d2).copy_(self)
    return out

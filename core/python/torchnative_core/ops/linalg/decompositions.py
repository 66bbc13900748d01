"""Linear-algebra decompositions and solvers: the operators upstream computes with LAPACK.

Cholesky, LU, the LU and triangular solves, eigh, SVD, QR and LAPACK's packed Householder form
(geqrf, householder_product) are device kernels (the cpu backend's decomp.rs); here are their meta
steps (checks, output shapes, allocation) and the operators composed from them (solve, inverse,
determinants, lu_unpack, cholesky_solve, ormqr). The CompositeImplicitAutograd ones (linalg_svd,
linalg_solve, det, ...) are composed as upstream composes them (aten/src/ATen/native/BatchLinearAlgebra.cpp,
LinearAlgebra.cpp) so their parts record autograd nodes and a dispatch mode sees the same calls.
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl


D = B.door


def _torch():
    import torch

    return torch


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _check_float(A, name, low_precision=False):
    """Upstream's checkFloatingOrComplex (LinearAlgebraUtils.h), a meta-step check: a RuntimeError
    naming the operator; with `low_precision` float16/bfloat16 pass on to the kernel, whose dtype
    dispatch refuses them (`_lapack_dtype`)."""
    torch = _torch()
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_tname(A.dtype)}")
    if A.is_complex():
        raise NotImplementedError(f"torchnative: {name} on complex tensors is not supported yet")
    if not low_precision and A.dtype in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_tname(A.dtype)}")


def _lapack_dtype(A, kernel):
    """The dtype refusal of upstream's LAPACK kernels (AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES):
    NotImplementedError naming the kernel, raised only where the kernel runs, after the meta
    step's checks; most of them return before it on an empty input, so callers check there."""
    if A.is_complex():
        raise NotImplementedError(f"torchnative: {kernel} on complex tensors is not supported yet")
    if B.dtype_of(A)._tn_name not in ("float32", "float64"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(A.dtype)}'")


def _tname(d):
    return B.scalar_type_name(d)


def _check_matrix(A, name, square=False, arg="A"):
    """Upstream's checkIsMatrix / squareCheckInputs."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")


def _check_solver(A, Bm, left, name):
    """Upstream's checkInputsSolver: A square, B a matrix, their shapes compatible."""
    _check_matrix(A, name, square=True)
    _check_matrix(Bm, name, arg="B")
    if (A.shape[-2] != Bm.shape[-2]) if left else (A.shape[-1] != Bm.shape[-1]):
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x{Bm.shape[-1]})")


def _linear_solve_check(b, A, name):
    """Upstream's linearSolveCheckInputs (the legacy solvers' b-before-A argument order)."""
    if b.device != A.device:
        raise RuntimeError(f"Expected b and A to be on the same device, but found b on {b.device} and A on {A.device} instead.")
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_tname(b.dtype)} and A of type "
                           f"{_tname(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by {A.shape[-1]} but "
                           f"each b matrix is {b.shape[-2]} by {b.shape[-1]}")


# --- QR -------------------------------------------------------------------------------------------

@impl("linalg_qr")
def linalg_qr(A, mode="reduced"):
    from torch.return_types import linalg_qr as ret

    _check_matrix(A, "linalg.qr")
    _check_float(A, "linalg.qr", low_precision=True)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")
    _lapack_dtype(A, "geqrf_cpu")  # (empty inputs too)
    batch, (m, n) = list(A.shape[:-2]), A.shape[-2:]
    k = min(m, n)
    dt, dev = A.dtype, B.device_of(A)
    R = _empty_fortran(batch + [m if mode == "complete" else k, n], dt, dev)
    Q = B.empty([0], dt, dev) if mode == "r" else _empty_fortran(batch + [m, m if mode == "complete" else k], dt, dev)
    B.launch("linalg_qr", (A, mode), (Q, R))
    return ret((Q, R))


@impl("qr")
def qr(self, some=True):
    from torch.return_types import qr as ret

    Q, R = D("linalg_qr", self, "reduced" if some else "complete")
    return ret((Q, R))


@impl("geqrf")
def geqrf(self):
    from torch.return_types import geqrf as ret

    if self.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _lapack_dtype(self, "geqrf_cpu")
    batch, (m, n) = list(self.shape[:-2]), self.shape[-2:]
    dev = B.device_of(self)
    h, tau = _empty_fortran(batch + [m, n], self.dtype, dev), B.empty(batch + [min(m, n)], self.dtype, dev)
    B.launch("geqrf", (self,), (h, tau))
    return ret((h, tau))


@impl("linalg_householder_product")
def householder_product(input, tau):
    name = "torch.linalg.householder_product"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {input.dim()}")
    if list(tau.shape[:-1]) != list(input.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{name}: tau dtype {_tname(tau.dtype)} does not match input dtype {_tname(input.dtype)}")
    _lapack_dtype(input, "orgqr_cpu")
    out = _empty_fortran(list(input.shape), input.dtype, B.device_of(input))
    B.launch("linalg_householder_product", (input, tau), (out,))
    return out


@impl("orgqr")
def orgqr(self, input2):
    return D("linalg_householder_product", self, input2)


def _ormqr_checks(A, tau, other, left):
    """Upstream's ormqr checks after the ranks, in its order and words (measured on upstream)."""
    c = -2 if left else -1
    if other.shape[c] != A.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{c}] must be equal to input.shape[-2]")
    if tau.dim() == 0 or min(other.shape[c], A.shape[-1]) != tau.shape[-1]:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{c}], input.shape[-1])")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError("torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    if A.dim() != other.dim():
        raise RuntimeError("torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim "
                           f"equal to {other.dim()} and input.ndim is equal to {A.dim()}")
    batch = list(A.shape[:-2])
    for what, t, k in (("tau", tau, 1), ("other", other, 2)):
        if list(t.shape[:-k]) != batch:
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {what} to be equal to input.shape[:-2], but got "
                               f"{list(t.shape[:-k])}")
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype != A.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {what} to have the same dtype, but input has dtype"
                               f"{_tname(A.dtype)} and {what} has dtype {_tname(t.dtype)}")


@impl("ormqr")
def ormqr(self, input2, input3, left=True, transpose=False):
    """Q (m x m, the product of the reflectors in `self` and `input2`) times `input3`, composed:
    Q from householder_product on the reflectors padded to m columns."""
    torch = _torch()
    if self.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if input3.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    _ormqr_checks(self, input2, input3, left)
    _lapack_dtype(self, "ormqr_cpu")
    m = self.shape[-2]
    k = input2.shape[-1]
    refl = self.narrow(-1, 0, min(self.shape[-1], m))
    if refl.shape[-1] < m:
        pad = torch.zeros(list(self.shape[:-1]) + [m - refl.shape[-1]], dtype=self.dtype, device=self.device)
        refl = torch.cat([refl, pad], -1)
    tau = input2
    if k < m:
        tau = torch.cat([input2, torch.zeros(list(input2.shape[:-1]) + [m - k], dtype=input2.dtype, device=input2.device)], -1)
    Q = D("linalg_householder_product", refl, tau)
    if transpose:
        Q = Q.mT
    X = torch.matmul(Q, input3) if left else torch.matmul(input3, Q)
    return D("copy_", _empty_fortran(X._tn_sizes, X.dtype, X.device), X)  # upstream's LAPACK layout


# --- SVD ------------------------------------------------------------------------------------------

@impl("_linalg_svd")
def _linalg_svd(A, full_matrices=False, compute_uv=True, driver=None):
    from torch.return_types import _linalg_svd as ret

    _check_matrix(A, "linalg.svd")
    _check_float(A, "linalg.svd", low_precision=True)
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                           "backend.")
    batch, (m, n) = list(A.shape[:-2]), A.shape[-2:]
    k = min(m, n)
    dt, dev = A.dtype, B.device_of(A)
    S = B.empty(batch + [k], dt, dev)
    if compute_uv:
        ucols, vrows = (m, n) if full_matrices else (k, k)
        U, Vh = _empty_fortran(batch + [m, ucols], dt, dev), _empty_fortran(batch + [vrows, n], dt, dev)
    else:
        U, Vh = B.empty([0], dt, dev), B.empty([0], dt, dev)
    if A.numel() == 0:  # upstream returns before the kernel (and its dtype dispatch): U, Vh identities
        for M in (U, Vh) if compute_uv else ():
            if M.numel():
                D("fill_.Scalar", D("zero_", M).diagonal(0, -2, -1), 1)
        return ret((U, S, Vh))
    _lapack_dtype(A, "linalg_svd_cpu")
    B.launch("_linalg_svd", (A, full_matrices, compute_uv, driver), (U, S, Vh))
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
    if self.dim() < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {self.dim()} dimensions instead")
    _check_float(self, "linalg.svd", low_precision=True)
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

    _check_matrix(A, "linalg.eigh", square=True)
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    batch, n = list(A.shape[:-2]), A.shape[-1]
    dt, dev = A.dtype, B.device_of(A)
    W = B.empty(batch + [n], dt, dev)
    V = _empty_fortran(batch + [n, n], dt, dev) if compute_v else B.empty([0], dt, dev)
    if A.numel():  # (upstream returns before the kernel on an empty input)
        _lapack_dtype(A, "linalg_eigh_cpu")
        B.launch("_linalg_eigh", (A, UPLO.upper(), compute_v), (W, V))
    return ret((W, V))


@impl("linalg_eigh")
def linalg_eigh(A, UPLO="L"):
    from torch.return_types import linalg_eigh as ret

    return ret(tuple(D("_linalg_eigh", A, UPLO, True)))


@impl("linalg_eigvalsh")
def linalg_eigvalsh(A, UPLO="L"):
    return D("_linalg_eigh", A, UPLO, _may_require_grad(A))[0]


def _check_errors(info, name, is_matrix):
    """Upstream's _linalg_check_errors (BatchLinearAlgebra.cpp): the first nonzero LAPACK info,
    its message chosen by what the API's name contains, in upstream's order; a LinAlgError except
    for lu_factor's zero pivot (a plain TORCH_CHECK there)."""
    torch = _torch()
    for b, i in enumerate(info.reshape(-1).tolist()):
        if i <= 0:
            continue
        where = "" if is_matrix else f": (Batch element {b})"
        if "inv" in name:
            msg = f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular."
        elif "solve" in name:
            msg = "The solver failed because the input matrix is singular."
        elif "cholesky" in name:
            msg = ("The factorization could not be completed because the input is not positive-definite "
                   f"(the leading minor of order {i} is not positive-definite).")
        else:
            raise RuntimeError(
                f"{name}{where}: U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. "
                "If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                "linalg.lu_factor_ex(A, pivot)")
        raise torch.linalg.LinAlgError(f"{name}{where}: {msg}")


# --- Cholesky -------------------------------------------------------------------------------------

def _cholesky(A, upper):
    batch, n = list(A.shape[:-2]), A.shape[-1]
    dev = B.device_of(A)
    L, info = _empty_fortran(batch + [n, n], A.dtype, dev), B.empty(batch, _torch().int32, dev)
    if A.numel() == 0:  # upstream returns before the kernel
        return L, D("zero_", info)
    _lapack_dtype(A, "cholesky_cpu")
    B.launch("linalg_cholesky_ex", (A, upper, False), (L, info))
    return L, info


@impl("linalg_cholesky_ex")
def linalg_cholesky_ex(self, upper=False, check_errors=False):
    from torch.return_types import linalg_cholesky_ex as ret

    _check_matrix(self, "linalg.cholesky", square=True)
    _check_float(self, "linalg.cholesky", low_precision=True)
    L, info = _cholesky(self, upper)
    if check_errors:
        _check_errors(info, "linalg.cholesky_ex", self.dim() == 2)
    return ret((L, info))


@impl("linalg_cholesky")
def linalg_cholesky(self, upper=False):
    L, info = D("linalg_cholesky_ex", self, upper, False)
    _check_errors(info, "linalg.cholesky", self.dim() == 2)
    return L


@impl("cholesky")
def cholesky(self, upper=False):
    if self.numel() == 0:  # upstream returns before its checks
        return D("empty_like", self)
    _check_matrix(self, "cholesky", square=True)
    L, info = _cholesky(self, upper)
    _check_errors(info, "cholesky", self.dim() == 2)
    return L


def _batch_broadcast(a, b):
    """Broadcast the batch dimensions of two matrices (or stacks)."""
    batch = B.broadcast_shapes(list(a.shape[:-2]), list(b.shape[:-2]))
    return a.expand(batch + list(a.shape[-2:])), b.expand(batch + list(b.shape[-2:])), batch


@impl("cholesky_solve")
def cholesky_solve(self, input2, upper=False):
    if self.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {self.dim()} dimensions instead")
    if input2.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.dim()} dimensions instead")
    _linear_solve_check(self, input2, "cholesky_solve")
    b, L, batch = _batch_broadcast(self, input2)
    _lapack_dtype(b, "cholesky_solve_cpu")
    return _cholesky_apply(L, b, upper, batch)


def _cholesky_apply(factor, b, upper, batch):
    """(L L^T)^-1 b, or (U^T U)^-1 b: two triangular solves with the factor."""
    lower, up = (factor.mT, factor) if upper else (factor, factor.mT)
    return _tri_solve(up, _tri_solve(lower, b, False, False, batch), True, False, batch)


@impl("cholesky_inverse")
def cholesky_inverse(self, upper=False):
    _check_matrix(self, "cholesky_inverse", square=True)
    _lapack_dtype(self, "cholesky_inverse_out_cpu")
    n = self.shape[-1]
    eye = _torch().eye(n, dtype=self.dtype, device=self.device).expand(list(self.shape))
    return _cholesky_apply(self, eye, upper, list(self.shape[:-2]))


# --- LU, solve, inverse, determinants -------------------------------------------------------------

def _empty_fortran(shape, dtype, device):
    """An uninitialised result in upstream's LAPACK layout (`batched_matrix_contiguous_strides`
    with f_contig): batches of column-major matrices, the last two strides (1, rows) — what its
    LU, solves and inverses return (their `.stride()`, `.is_contiguous()` False)."""
    shape = list(shape)
    out = B.empty(shape, dtype, device)
    if len(shape) >= 2:
        strides = list(out._tn_strides)
        strides[-1], strides[-2] = max(shape[-2], 1), 1
        out._tn_set_geometry(shape, strides, 0)
    return out


def _lu_factor(A):
    """(LU, pivots, info) tensors of a stack of matrices: the device's LU kernel."""
    torch = _torch()
    batch, (m, n) = list(A.shape[:-2]), A.shape[-2:]
    dev = B.device_of(A)
    LU = _empty_fortran(batch + [m, n], A.dtype, dev)
    piv, info = B.empty(batch + [min(m, n)], torch.int32, dev), B.empty(batch, torch.int32, dev)
    if A.numel() == 0:  # upstream returns before the kernel (pivots are empty too)
        return LU, piv, D("zero_", info)
    _lapack_dtype(A, "lu_cpu")
    B.launch("linalg_lu_factor_ex", (A, True, False), (LU, piv, info))
    return LU, piv, info


@impl("linalg_lu_factor_ex")
def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    from torch.return_types import linalg_lu_factor_ex as ret

    if A.dim() < 2:
        raise RuntimeError("torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not pivot:  # (upstream's kernel refuses the dtype first)
        if A.numel():
            _lapack_dtype(A, "lu_cpu")
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = _lu_factor(A)
    if check_errors:
        _check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2)
    return ret((LU, piv, info))


@impl("linalg_lu_factor")
def linalg_lu_factor(A, pivot=True):
    from torch.return_types import linalg_lu_factor as ret

    LU, piv, info = D("linalg_lu_factor_ex", A, pivot, False)
    _check_errors(info, "torch.linalg.lu_factor", A.dim() == 2)
    return ret((LU, piv))


@impl("_lu_with_info")
def _lu_with_info(self, pivot=True, check_errors=True):
    from torch.return_types import _lu_with_info as ret

    return ret(tuple(D("linalg_lu_factor_ex", self, pivot, False)))


def _unpack(LU, piv, unpack_data=True, unpack_pivots=True):
    """(P, L, U) tensors from LAPACK-style packed LU factors and 1-based pivots (upstream's
    lu_unpack: L unit lower m x k, U upper k x n, P the row permutation with A = P L U)."""
    torch = _torch()
    batch, (m, n) = list(LU.shape[:-2]), LU.shape[-2:]
    k = min(m, n)
    dt, dev = LU.dtype, LU.device
    empty = torch.empty([0], dtype=dt, device=dev)
    if unpack_data:
        L = LU.narrow(-1, 0, k).tril(-1) + torch.eye(m, k, dtype=dt, device=dev)
        U = LU.narrow(-2, 0, k).triu()
    else:
        L, U = empty, empty.clone()
    if not unpack_pivots:
        return empty.clone(), L, U
    nb = _prod(batch)
    perms = []
    for row in (piv.reshape(nb, piv.shape[-1]).tolist() if nb and k else [[] for _ in range(nb)]):
        perm = list(range(m))
        for i, p in enumerate(row):  # the interchanges in order, as getrs applies them
            perm[i], perm[p - 1] = perm[p - 1], perm[i]
        perms.append(perm)
    P = torch.zeros([nb, m, m], dtype=dt, device=dev)
    if nb and m:
        index = torch.tensor(perms, dtype=torch.int64, device=dev).unsqueeze(-2)  # P[perm[i], i] = 1
        P.scatter_(-2, index, 1.0)
    return P.reshape(batch + [m, m]), L, U


@impl("linalg_lu")
def linalg_lu(A, pivot=True):
    from torch.return_types import linalg_lu as ret

    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if not pivot:  # (upstream's kernel refuses the dtype first)
        if A.numel():
            _lapack_dtype(A, "lu_cpu")
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, _ = _lu_factor(A)
    return ret(_unpack(LU, piv))


@impl("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    from torch.return_types import lu_unpack as ret

    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU_data.shape)} instead")
    if unpack_pivots and (B.dtype_of(LU_pivots)._tn_name != "int32" or not LU_pivots.is_contiguous()):
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")

    return ret(_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots))


def _is_vector_rhs(A, Bt):
    return Bt.dim() == 1 or (A.dim() - 1 == Bt.dim() and list(Bt.shape) == list(A.shape[:-1]))


def _lu_solve_kernel(LU, piv, Bm, X=None):
    """X with A X = B from A's LU factors (batch shapes equal): the device's kernel, into `X`
    (a column-major result unless given)."""
    if X is None:
        X = _empty_fortran(Bm._tn_sizes, B.dtype_of(LU), B.device_of(LU))
    if B.numel(X._tn_sizes):
        B.launch("linalg_lu_solve", (LU, piv, Bm, True, False), (X,))
    return X


def _lu_solve_left(LU, piv, Bm, info, X=None):
    """X with A X = B from A's LU factors (batch shapes equal); NaN where A is singular."""
    torch = _torch()
    X = _lu_solve_kernel(LU, piv, Bm, X)
    if info.numel() and bool((info != 0).any()):
        X = torch.where((info != 0)[..., None, None], torch.full((), math.nan, dtype=X.dtype, device=X.device), X)
    return X


@impl("_linalg_solve_ex")
def _linalg_solve_ex(A, Bm, left=True, check_errors=False):
    from torch.return_types import _linalg_solve_ex as ret

    _check_float(A, "linalg.solve", low_precision=True)
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
    LU, piv, info = _lu_factor(A_)
    # upstream's layout: the result column-major for its own shape (a vector result too), so
    # `left=False` (solved transposed) gives a row-major one
    if vector and left:
        out = _empty_fortran(B_._tn_sizes[:-1], B.dtype_of(LU), B.device_of(LU))
        into = D("unsqueeze", out, -1)
        X = _lu_solve_left(LU, piv, B_, info, into)
        X = out if X is into else X.squeeze(-1)  # (a singular A's NaN result is a new tensor)
    else:
        X = _lu_solve_left(LU, piv, B_, info)
        if not left:
            X = X.mT
        if vector:
            X = X.squeeze(-1)
    if check_errors:
        _check_errors(info, "torch.linalg.solve_ex", A.dim() == 2)
    return ret((X, LU, piv, info))


@impl("linalg_solve_ex")
def linalg_solve_ex(A, Bm, left=True, check_errors=False):
    from torch.return_types import linalg_solve_ex as ret

    r = D("_linalg_solve_ex", A, Bm, left, check_errors)
    return ret((r[0], r[3]))


@impl("linalg_solve")
def linalg_solve(A, Bm, left=True):
    r = D("_linalg_solve_ex", A, Bm, left, False)
    _check_errors(r[3], "torch.linalg.solve", A.dim() == 2)
    return r[0]


@impl("linalg_inv_ex")
def linalg_inv_ex(A, check_errors=False):
    from torch.return_types import linalg_inv_ex as ret

    torch = _torch()
    _check_matrix(A, "linalg.inv", square=True)
    _check_float(A, "linalg.inv")
    n = A.shape[-1]
    LU, piv, info = _lu_factor(A)
    eye = torch.eye(n, dtype=A.dtype, device=A.device).expand(list(A.shape))
    inv = _lu_solve_left(LU, piv, eye, info)
    if check_errors:
        _check_errors(info, "linalg.inv_ex", A.dim() == 2)
    return ret((inv, info))


@impl("linalg_inv")
def linalg_inv(A):
    inv, info = D("linalg_inv_ex", A, False)
    _check_errors(info, "linalg.inv", A.dim() == 2)
    return inv


@impl("inverse")
def inverse(self):
    return D("linalg_inv", self)


def _pivot_sign(piv, dtype):
    """(-1) ** (number of row interchanges) per matrix (upstream's lu_det_P)."""
    torch = _torch()
    n = piv.shape[-1]
    swaps = (piv != torch.arange(1, n + 1, dtype=piv.dtype, device=piv.device)).sum(-1)
    return (1 - 2 * (swaps % 2)).to(dtype)


@impl("_linalg_det")
def _linalg_det(A):
    from torch.return_types import _linalg_det as ret

    LU, piv = _square_lu(A, "linalg.det", low_precision=True)
    det = LU.diagonal(0, -2, -1).prod(-1) * _pivot_sign(piv, A.dtype)
    return ret((det, LU, piv))


def _square_lu(A, name, low_precision=False):
    """(LU, pivots) tensors of a stack of square matrices."""
    _check_matrix(A, name, square=True)
    _check_float(A, name, low_precision)
    LU, piv, _ = _lu_factor(A)
    return LU, piv


@impl("linalg_det")
def linalg_det(A):
    return D("_linalg_det", A)[0]


@impl("det")
def det(self):
    return D("linalg_det", self)


@impl("_linalg_slogdet")
def _linalg_slogdet(A):
    from torch.return_types import _linalg_slogdet as ret

    # upstream's composition (BatchLinearAlgebra.cpp): sign from the diagonal's signs and the
    # pivots, log|det| as the sum of the diagonal's log magnitudes
    LU, piv = _square_lu(A, "linalg.slogdet")
    diag = LU.diagonal(0, -2, -1)
    sign = diag.sgn().prod(-1) * _pivot_sign(piv, A.dtype)
    return ret((sign, diag.abs().log().sum(-1), LU, piv))


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
    _check_float(self, "logdet")
    sign, logabsdet = D("linalg_slogdet", self)
    return torch.where(sign == -1.0, torch.full((), math.nan, dtype=logabsdet.dtype), logabsdet)


# --- triangular solves ----------------------------------------------------------------------------

def _tri_solve(A_, B_, upper, unit, batch):
    """X with A X = B, A triangular (batch shapes equal): the device's kernel."""
    X = _empty_fortran(batch + list(B_.shape[-2:]), B_.dtype, B.device_of(B_))
    B.launch("linalg_solve_triangular", (A_, B_, upper, True, unit), (X,))
    return X


@impl("linalg_solve_triangular")
def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    _check_solver(self, B, left, "linalg.solve_triangular")
    _lapack_dtype(self, "triangular_solve_cpu")
    A = self
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        X = linalg_solve_triangular(A.mT, B.mT, not upper, True, unitriangular)
        return X.mT.contiguous()
    A_, B_, batch = _batch_broadcast(A, B)
    return _tri_solve(A_, B_, upper, unitriangular, batch)


_TRIANGULAR_SOLVE_WARNED = []


@impl("triangular_solve")
def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    from torch.return_types import triangular_solve as ret

    if not _TRIANGULAR_SOLVE_WARNED:  # upstream's TORCH_WARN_ONCE, word for word
        _TRIANGULAR_SOLVE_WARNED.append(True)
        B.warn(
            "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
            "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
            "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
            "X = torch.linalg.solve_triangular(A, B). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)")
    if self.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {self.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {A.dim()} dimensions instead")
    _linear_solve_check(self, A, "triangular_solve")
    _lapack_dtype(self, "triangular_solve_cpu")
    B_, A_, batch = _batch_broadcast(self, A)
    Ause = A_.mT if transpose else A_
    return ret((_tri_solve(Ause, B_, upper != transpose, unitriangular, batch), A_.clone()))


def _lu_solve_direct(LU, pivots, Bm):
    """Whether `linalg_lu_solve(LU, pivots, B)` (left, no adjoint) can go straight to the device's
    kernel: nothing to record (the composite below records its parts for autograd), one batch
    shape already (no broadcast), square float factors, int32 pivots of their shape, one dtype
    and device; anything else takes the composite, which raises upstream's errors."""
    C = B.C
    if C.is_grad_enabled() and (LU.requires_grad or Bm.requires_grad):
        return False
    ls, bs, ps = LU._tn_sizes, Bm._tn_sizes, pivots._tn_sizes
    return (len(ls) >= 2 and ls[-1] == ls[-2] and len(bs) == len(ls) and bs[:-1] == ls[:-1]
            and list(ps) == list(ls[:-1]) and B.dtype_of(pivots)._tn_name == "int32"
            and B.dtype_of(LU) is B.dtype_of(Bm) and B.dtype_of(LU)._tn_name in ("float32", "float64")
            and B.device_of(LU) == B.device_of(Bm) == B.device_of(pivots)
            and C._tn_has_kernel("linalg_lu_solve", B.device_of(LU).type))


def _lu_solve_meta(LU, pivots, Bm, left):
    """Upstream's meta function of linalg_lu_solve, in its order."""
    _check_float(LU, "torch.linalg.lu_solve", low_precision=True)
    if LU.dtype != Bm.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type {_tname(LU.dtype)} "
                           f"and B of type {_tname(Bm.dtype)} instead")
    if B.dtype_of(pivots)._tn_name != "int32":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    _check_matrix(LU, "torch.linalg.lu_solve", square=True)
    _check_solver(LU, Bm, left, "linalg.lu_solve")
    if pivots.dim() == 0 or LU.shape[-1] != pivots.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if list(LU.shape[:-1]) != list(pivots.shape):
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(pivots.shape)} instead")
    B.broadcast_shapes(list(Bm.shape[:-2]), list(LU.shape[:-2]))


B_ = B  # (linalg_lu_solve's argument B, upstream's name, hides the module)


@impl("linalg_lu_solve")
def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    _lu_solve_meta(LU, pivots, B, left)
    if LU.numel() == 0 or B.numel() == 0:  # upstream returns before the kernel
        batch = B_.broadcast_shapes(list(B.shape[:-2]), list(LU.shape[:-2]))
        shape, dev = batch + list(B.shape[-2:]), B_.device_of(B)
        return _empty_fortran(shape, B.dtype, dev) if left else B_.empty(shape, B.dtype, dev)
    _lapack_dtype(LU, "linalg.lu_solve_cpu")
    if left and not adjoint and _lu_solve_direct(LU, pivots, B):
        return _lu_solve_kernel(LU, pivots, B)
    # A = P L U; solve with the unpacked factors
    # composed of operators that record themselves: the gradient flows through lu_unpack's
    # triangles as upstream's LinalgLuSolveBackward0 treats LU
    P, L, U = D("lu_unpack", LU, pivots, True, True)
    tri = lambda A, Bm, upper, unit: D("linalg_solve_triangular", A, Bm, upper, True, unit)  # noqa: E731
    if left:
        if not adjoint:
            X = tri(U, tri(L, D("matmul", D("transpose.int", P, -2, -1), B), False, True), True, False)
        else:
            Z = tri(D("transpose.int", L, -2, -1), tri(D("transpose.int", U, -2, -1), B, False, False), True, True)
            X = D("matmul", P, Z)
        out = _empty_fortran(X._tn_sizes, X.dtype, X.device)  # upstream's LAPACK layout
        return X if tuple(X._tn_strides) == tuple(out._tn_strides) else D("copy_", out, X)
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

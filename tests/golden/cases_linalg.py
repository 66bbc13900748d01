"""matmul / mm / bmm / addmm / mv / dot / outer / einsum."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


def _a(*shape, scale=8.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) % 7 - 3).view(*shape) / scale


@exact
def mm_small_exact():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    return a @ a, torch.mm(a, torch.eye(2))


@case
def mm():
    return torch.mm(_a(3, 5), _a(5, 4)), _a(4, 6) @ _a(6, 2)


@case
def mm_random():
    return torch.randn(16, 32) @ torch.randn(32, 8)


@exact
def mm_int():
    a = torch.arange(6).view(2, 3)
    return a @ a.T, torch.mm(a.T, a)


@case
def mm_transposed_inputs():
    a = _a(5, 3)
    return a.t() @ a, a @ a.t(), a.T.contiguous() @ a


@case
def matmul_broadcast_batch():
    return _a(2, 3, 4) @ _a(4, 5), _a(3, 4) @ _a(2, 4, 2), _a(2, 1, 3, 4) @ _a(3, 4, 2)


@case
def matmul_vector_cases():
    v = _a(4)
    return v @ v, _a(3, 4) @ v, v @ _a(4, 2), torch.matmul(_a(2, 3, 4), v)


@case
def bmm():
    return torch.bmm(_a(2, 3, 4), _a(2, 4, 5))


@case
def addmm():
    return (torch.addmm(_a(3, 2), _a(3, 4), _a(4, 2)),
            torch.addmm(_a(2), _a(3, 4), _a(4, 2), beta=0.5, alpha=2))


@case
def addmm_beta_zero_ignores_nan():
    bias = torch.full((2, 2), float("nan"))
    return torch.addmm(bias, _a(2, 3), _a(3, 2), beta=0)


@case
def mv_dot_outer():
    return (torch.mv(_a(3, 4), _a(4)), torch.dot(_a(5), _a(5)), torch.outer(_a(3), _a(2)),
            torch.vdot(_a(3), _a(3)))


@case
def einsum():
    return (torch.einsum("ij,jk->ik", _a(2, 3), _a(3, 2)), torch.einsum("bij->bji", _a(2, 3, 4)),
            torch.einsum("i,i->", _a(4), _a(4)))


@case
def matmul_float64_float16():
    return _a(3, 4).double() @ _a(4, 2).double(), _a(3, 4).half() @ _a(4, 2).half()


@case
def matmul_bfloat16():
    return _a(4, 8).bfloat16() @ _a(8, 3).bfloat16()


@case
def matmul_empty_inner():
    return torch.zeros(2, 0) @ torch.zeros(0, 3)


@case
def baddbmm_tensordot():
    return (torch.baddbmm(_a(2, 3, 2), _a(2, 3, 4), _a(2, 4, 2)),
            torch.tensordot(_a(2, 3, 4), _a(3, 4, 2), dims=2))


@case
def matmul_empty_inner_dim():
    # a batch folded into rows with k == 0 (upstream spells the row count out; a -1 is ambiguous)
    return (torch.ones(2, 3, 0) @ torch.ones(0, 4), torch.ones(2, 0, 3) @ torch.ones(3, 4),
            torch.nn.functional.linear(torch.ones(2, 3, 0), torch.ones(4, 0), torch.arange(4.0)))


@case
def eigvals_without_vectors():
    # no gradient asked: linalg.eigvals takes the values-only kernel (_linalg_eigvals)
    a = torch.tensor([[4.0, 1.0, 0.5], [2.0, 3.0, 0.0], [0.5, 0.0, 1.0]], dtype=torch.float64)
    # (as real pairs: the golden encoding has no complex numbers)
    return (torch.view_as_real(torch.linalg.eigvals(a)),
            torch.view_as_real(torch.linalg.eigvals(torch.triu(_a(4, 4).double()))))


def _spd_and_rhs():
    a = torch.tensor([[4.0, 1.0, 0.5, 0.0], [1.0, 3.0, 0.25, 0.5], [0.5, 0.25, 5.0, 1.0], [0.0, 0.5, 1.0, 2.0]],
                     dtype=torch.float64)
    return torch.stack([a, a.mT + torch.eye(4, dtype=torch.float64)]), (torch.arange(16, dtype=torch.float64) % 5).view(2, 4, 2)


@case
def lapack_results_are_column_major():
    """Upstream's LU, solves and inverses come back as batches of column-major matrices (LAPACK's
    layout: the last two strides (1, rows), not contiguous); a right-hand solve transposed back
    is row-major, a vector result column-major for its own shape."""
    A, B = _spd_and_rhs()
    LU, piv = torch.linalg.lu_factor(A)
    results = {
        "lu_factor": LU, "lu_factor_2d": torch.linalg.lu_factor(A[0])[0],
        "lu_factor_wide": torch.linalg.lu_factor(A[:, :3])[0], "lu_factor_ex": torch.linalg.lu_factor_ex(A).LU,
        "solve": torch.linalg.solve(A, B), "solve_2d": torch.linalg.solve(A[0], B[0]),
        "solve_vector": torch.linalg.solve(A[0], B[0, :, 0]), "solve_batch_vector": torch.linalg.solve(A, B[:, :, 0]),
        "solve_right": torch.linalg.solve(A, B.mT, left=False), "solve_broadcast": torch.linalg.solve(A, B[0]),
        "solve_ex": torch.linalg.solve_ex(A, B).result, "lu_solve": torch.linalg.lu_solve(LU, piv, B),
        "lu_solve_adjoint": torch.linalg.lu_solve(LU, piv, B, adjoint=True),
        "lu_solve_right": torch.linalg.lu_solve(LU, piv, B.mT, left=False),
        "lu_solve_broadcast": torch.linalg.lu_solve(LU, piv, B[0]), "inv": torch.linalg.inv(A),
        "inv_ex": torch.linalg.inv_ex(A).inverse,
    }
    return [[k, list(t.stride()), t.is_contiguous(), t] for k, t in results.items()]


@case
def decomposition_results_are_column_major():
    """The same for QR, SVD, eigh, Cholesky and the solves built on them, and lstsq's solution
    (the first n rows of LAPACK's max(m, n)-row buffer, in its strides)."""
    A, B = _spd_and_rhs()
    W = A[:, :, :3]
    L = torch.linalg.cholesky(A)
    h, tau = torch.geqrf(W)
    results = {
        "qr_Q": torch.linalg.qr(W).Q, "qr_R": torch.linalg.qr(W).R, "qr_complete_Q": torch.linalg.qr(W, "complete").Q,
        "qr_r": torch.linalg.qr(W, "r").R, "geqrf": h, "householder": torch.linalg.householder_product(h, tau),
        "ormqr": torch.ormqr(h, tau, B), "svd_U": torch.linalg.svd(W, full_matrices=False).U,
        "svd_Vh": torch.linalg.svd(W).Vh, "eigh_V": torch.linalg.eigh(A).eigenvectors, "cholesky": L,
        "cholesky_upper": torch.linalg.cholesky(A, upper=True), "cholesky_solve": torch.cholesky_solve(B, L),
        "cholesky_inverse": torch.cholesky_inverse(L), "solve_triangular": torch.linalg.solve_triangular(L, B, upper=False),
        "lstsq": torch.linalg.lstsq(A, B).solution, "lstsq_tall": torch.linalg.lstsq(torch.cat([A, A], -2), torch.cat([B, B], -2)).solution,
        "lstsq_tall_vector": torch.linalg.lstsq(torch.cat([A, A], -2), torch.cat([B, B], -2)[..., 0]).solution,
        "ldl_factor": torch.linalg.ldl_factor(A).LD,
    }
    free_signs = ("svd_U", "svd_Vh", "eigh_V")  # LAPACK fixes no sign of a singular or eigenvector
    return [[k, list(t.stride()), t.is_contiguous(), t.abs() if k in free_signs else t] for k, t in results.items()]


@case
def structseq_results():
    """torch.return_types for ldl_factor(_ex) and histogramdd (the comparison checks the type)."""
    A, _ = _spd_and_rhs()
    torch.manual_seed(0)
    return (torch.linalg.ldl_factor(A[0]), torch.linalg.ldl_factor_ex(A[0]),
            torch.histogramdd(torch.tensor([[0.0, 1.0], [0.5, 0.25], [1.0, 0.0]]), bins=2),
            torch.histogramdd(torch.tensor([[0.0, 1.0], [0.5, 0.25]]), bins=[torch.tensor([0.0, 0.5, 1.0])] * 2))

"""Backward formulas of the decompositions and solvers in ops/linalg/decompositions.py: upstream's
derivatives.yaml entries (the formulas of torch/csrc/autograd/FunctionsManual.cpp: svd_backward,
linalg_qr_backward, linalg_eig_backward, cholesky_backward, ...), real dtypes, as torch
compositions so double backward records itself."""

from __future__ import annotations

import torch

from ..formula import COMPLEX_READY, formula


def _sum_to(g, shape):
    return g if g is None or list(g.shape) == list(shape) else g.sum_to_size(list(shape))


def _eye_fill(E):
    E = E.clone()
    E.diagonal(0, -2, -1).fill_(1.0)
    return E


def _skew(X):
    return X - X.mT


def svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if gU is None and gS is None and gVh is None:
        return None
    if full_matrices and m != n:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = gU.narrow(-1, 0, k) if gU is not None else None
        gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
    if gU is None and gVh is None:
        return U @ (gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)) @ Vh
    S2 = S * S
    E = _eye_fill(S2.unsqueeze(-2) - S2.unsqueeze(-1))
    if gU is not None and gVh is not None:
        gA = (_skew(U.mT @ gU) * S.unsqueeze(-2) + S.unsqueeze(-1) * _skew(Vh @ gVh.mT)) / E
    elif gU is not None:
        gA = (_skew(U.mT @ gU) / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (_skew(Vh @ gVh.mT) / E)
    if gS is not None:
        gA = gA + torch.diag_embed(gS)
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mT @ gUSinv)
        return gA @ Vh
    if m < n and gVh is not None:
        gA = gA @ Vh
        gVhSinv = gVh / S.unsqueeze(-1)
        gA = gA + gVhSinv - (gVhSinv @ Vh.mT) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh


@formula("_linalg_svd", save=("result0", "result1", "result2"), multi=True)
def _(s, grads):
    gU, gS, gVh = grads
    if not s.compute_uv:
        # upstream: svdvals' derivative needs the vectors; they are computed when A requires grad
        raise RuntimeError("linalg.svd: the derivative needs compute_uv=True")
    return svd_backward(gU, gS, gVh, s.result0, s.result1, s.result2, s.full_matrices)


@formula("_linalg_eigh", save=("result0", "result1"), multi=True)
def _(s, grads):
    gL, gV = grads
    L, V = s.result0, s.result1
    if gV is None:
        if gL is None:
            return None
        return V @ (gL.unsqueeze(-1) * V.mT)
    VhgV = V.mT @ gV
    VhgV = 0.5 * (VhgV - VhgV.mT)
    E = _eye_fill(L.unsqueeze(-2) - L.unsqueeze(-1))
    inner = VhgV / E
    if gL is not None:
        inner = inner + torch.diag_embed(gL)
    return V @ inner @ V.mT


def _copyltu(M):
    return M.tril(-1) + M.tril(-1).mT + torch.diag_embed(M.diagonal(0, -2, -1))


def _qr_backward_tall(gQ, gR, Q, R):
    M = torch.zeros_like(R) if gR is None else R @ gR.mT
    if gQ is not None:
        M = M - gQ.mT @ Q
    b = Q @ _copyltu(M)
    if gQ is not None:
        b = b + gQ
    return torch.linalg.solve_triangular(R.mT, b, upper=False, left=False)  # b R^{-T}


@formula("linalg_qr", save=("result0", "result1"), multi=True)
def _(s, grads):
    gQ, gR = grads
    if gQ is None and gR is None:
        return None
    Q, R = s.result0, s.result1
    if s.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if s.mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return _qr_backward_tall(gQ, gR, Q, R)
    # A = Q [X | Y] with X square: the Y block only moves R's right part
    X_R, Y_R = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    Y = Q @ Y_R
    gY_R = gR.narrow(-1, m, n - m) if gR is not None else None
    gX_R = gR.narrow(-1, 0, m) if gR is not None else None
    gQ2 = gQ
    if gY_R is not None:
        gQ2 = (gQ if gQ is not None else torch.zeros_like(Q)) + Y @ gY_R.mT
    gX = _qr_backward_tall(gQ2, gX_R, Q, X_R)
    gY = Q @ gY_R if gY_R is not None else torch.zeros_like(Y)
    return torch.cat([gX, gY], -1)


def cholesky_backward(gL, upper, L):
    if gL is None:
        return None
    L_ = L.mT if upper else L
    gL_ = gL.mT if upper else gL
    gA = (L_.mT @ gL_).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = torch.linalg.solve_triangular(L_.mT, gA, upper=True, left=True)
    return torch.linalg.solve_triangular(L_, gA, upper=False, left=False)


@formula("linalg_cholesky_ex", save=("result0",), multi=True)
def _(s, grads):
    return cholesky_backward(grads[0], s.upper, s.result0)


@formula("cholesky", save=("result",))
def _(s, g):
    return cholesky_backward(g, s.upper, s.result)


@formula("_linalg_solve_ex", save=("A", "result0"), multi=True)
def _(s, grads):
    gX = grads[0]
    if gX is None:
        return None, None
    A, X = s.A, s.result0
    B_shape = s.B_sizes
    vector = len(B_shape) == 1 or (len(s.A_sizes) - 1 == len(B_shape) and list(B_shape) == list(s.A_sizes[:-1]))
    if vector:
        gX, X = gX.unsqueeze(-1), X.unsqueeze(-1)
    if s.left:
        gB = torch.linalg.solve(A.mT, gX)
        gA = -gB @ X.mT if s.needs(0) else None
    else:
        gB = torch.linalg.solve(A.mT, gX, left=False)
        gA = -X.mT @ gB if s.needs(0) else None
    if vector:
        gB = gB.squeeze(-1)
    return (_sum_to(gA, s.A_sizes) if gA is not None else None), (_sum_to(gB, B_shape) if s.needs(1) else None)


@formula("linalg_inv_ex", save=("result0",), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    inv = s.result0
    return -(inv.mT @ g @ inv.mT)


@formula("_linalg_det", save=("A", "result0"), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    A, det = s.A, s.result0
    return (g * det).unsqueeze(-1).unsqueeze(-1) * torch.linalg.inv(A).mT


@formula("_linalg_slogdet", save=("A",), multi=True)
def _(s, grads):
    g = grads[1]
    if g is None:
        return None
    return g.unsqueeze(-1).unsqueeze(-1) * torch.linalg.inv(s.A).mT


def _tri_project(gA, upper, unitriangular):
    return gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))


@formula("triangular_solve", save=("A", "result0"), multi=True)
def _(s, grads):
    gX, gM = grads
    A, X = s.A, s.result0
    gB = gA = None
    if gX is not None:
        gB = torch.triangular_solve(gX, A, upper=s.upper, transpose=not s.transpose, unitriangular=s.unitriangular)[0]
        if s.needs(1):
            gA = -X @ gB.mT if s.transpose else -gB @ X.mT
            gA = _tri_project(gA, s.upper, s.unitriangular)
    if s.needs(1) and gM is not None:
        gA = gM if gA is None else gA + gM
    return (_sum_to(gB, s.self_sizes) if s.needs(0) else None), (_sum_to(gA, s.A_sizes) if s.needs(1) else None)


@formula("linalg_solve_triangular", save=("self", "result"))
def _(s, g):
    A, X = s.self, s.result
    gB = torch.linalg.solve_triangular(A.mT, g, upper=not s.upper, left=s.left, unitriangular=s.unitriangular)
    gA = None
    if s.needs(0):
        gA = -gB @ X.mT if s.left else -X.mT @ gB
        gA = _sum_to(_tri_project(gA, s.upper, s.unitriangular), s.self_sizes)
    return gA, (_sum_to(gB, s.B_sizes) if s.needs(1) else None)


@formula("cholesky_solve", save=("input2", "result"))
def _(s, g):
    L, X = s.input2, s.result
    gB = torch.cholesky_solve(g, L, upper=s.upper)
    gL = None
    if s.needs(1):
        common = gB @ X.mT
        common = common + common.mT
        gL = _sum_to(-(L @ common) if s.upper else -(common @ L), s.input2_sizes)
    return (_sum_to(gB, s.self_sizes) if s.needs(0) else None), gL


@formula("cholesky_inverse", save=("self", "result"))
def _(s, g):
    L, inv = s.self, s.result
    common = inv @ (g + g.mT) @ inv
    return -(L @ common) if s.upper else -(common @ L)


def _lu_backward_square(gL, gU, P, L, U):
    """gA for A = P L U (square): P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}."""
    phi = torch.zeros_like(L)
    if gL is not None:
        phi = phi + (L.mT @ gL).tril(-1)
    if gU is not None:
        phi = phi + (gU @ U.mT).triu()
    x = torch.linalg.solve_triangular(L.mT, phi, upper=True, unitriangular=True)
    x = torch.linalg.solve_triangular(U.mT, x, upper=False, left=False)
    return P @ x


def _lu_backward(gL, gU, P, L, U):
    """gA for A = P L U of any shape. Tall (m > n): L = [L1; L2], L2 = Y U^-1 with Y the rows
    below; wide (m < n): U = [U1 U2], U2 = L^-1 Y with Y the columns to the right. Both reduce to
    the square formula on (L1, U) or (L, U1) with the extra terms those relations give."""
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        return _lu_backward_square(gL, gU, P, L, U)
    if m > n:
        L1, L2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
        gL1 = gL.narrow(-2, 0, n) if gL is not None else None
        gL2 = gL.narrow(-2, n, m - n) if gL is not None else torch.zeros_like(L2)
        gY = torch.linalg.solve_triangular(U.mT, gL2, upper=False, left=False)  # gL2 U^-T
        gU_tot = -(L2.mT @ gY) + (gU if gU is not None else 0.0)
        gX = _lu_backward_square(gL1, gU_tot, torch.eye(n, dtype=L.dtype).expand_as(L1), L1, U)
        return P @ torch.cat([gX, gY], -2)
    U1, U2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
    gU1 = gU.narrow(-1, 0, m) if gU is not None else None
    gU2 = gU.narrow(-1, m, n - m) if gU is not None else torch.zeros_like(U2)
    gY = torch.linalg.solve_triangular(L.mT, gU2, upper=True, unitriangular=True)  # L^-T gU2
    gL_tot = -(gY @ U2.mT) + (gL if gL is not None else 0.0)
    gX = _lu_backward_square(gL_tot, gU1, torch.eye(m, dtype=L.dtype).expand_as(L), L, U1)
    return P @ torch.cat([gX, gY], -1)


@formula("linalg_lu_factor_ex", save=("result0", "result1"), multi=True)
def _(s, grads):
    g = grads[0]
    if g is None:
        return None
    LU, piv = s.result0, s.result1
    P, L, U = torch.lu_unpack(LU, piv)
    k = min(LU.shape[-2], LU.shape[-1])
    return _lu_backward(g.narrow(-1, 0, k).tril(-1), g.narrow(-2, 0, k).triu(), P, L, U)


@formula("linalg_lu", save=("result0", "result1", "result2"), multi=True)
def _(s, grads):
    _, gL, gU = grads
    if gL is None and gU is None:
        return None
    return _lu_backward(gL, gU, s.result0, s.result1, s.result2)


@formula("lu_unpack", multi=True)
def _(s, grads):
    _, gL, gU = grads
    m, n = s.LU_data_sizes[-2], s.LU_data_sizes[-1]
    k = min(m, n)
    out = None
    if gL is not None:
        gl = gL.tril(-1)
        out = torch.nn.functional.pad(gl, (0, n - k)) if n > k else gl
    if gU is not None:
        gu = gU.triu()
        gu = torch.nn.functional.pad(gu, (0, 0, 0, m - k)) if m > k else gu
        out = gu if out is None else out + gu
    return out


@formula("diag_embed")
def _(s, g):
    return g.diagonal(s.offset, s.dim1, s.dim2)


def pinv_backward(g, pinvA, A):
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gh = pinvA.mT, g.mT
    if m <= n:
        K = gh @ pinvA
        KpinvAh = K @ pinvAh
        return -(pinvA @ K).mT + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gh - K @ A)
    K = pinvA @ gh
    pinvAhK = pinvAh @ K
    return -(K @ pinvA).mT + (gh - A @ K) @ pinvA @ pinvAh + pinvAhK - pinvAhK @ pinvA @ A


@formula("linalg_pinv.atol_rtol_tensor", save=("self", "result"))
def _(s, g):
    return pinv_backward(g, s.result, s.self)


@formula("linalg_lstsq", save=("self", "b", "result0"), multi=True)
def _(s, grads):
    gX, gR = grads[0], grads[1]
    if gX is None and gR is None:
        return None, None
    A, Bt, X = s.self, s.b, s.result0
    vector = Bt.dim() == A.dim() - 1
    if vector:
        Bt, X = Bt.unsqueeze(-1), X.unsqueeze(-1)
        gX = gX.unsqueeze(-1) if gX is not None else None
    gA = gB = None
    if gX is not None:
        pinvA = torch.linalg.pinv(A)
        gA = pinv_backward(gX @ Bt.mT, pinvA, A) if s.needs(0) else None
        gB = pinvA.mT @ gX if s.needs(1) else None
    if gR is not None and gR.numel():
        # residuals r_j = |A x_j - b_j|^2 at the least-squares optimum: dr = 2 (A x - b) . (dA x - db)
        wR = 2.0 * (A @ X - Bt) * gR.unsqueeze(-2)
        if s.needs(0):
            gA = wR @ X.mT if gA is None else gA + wR @ X.mT
        if s.needs(1):
            gB = -wR if gB is None else gB - wR
    if gB is not None and vector:
        gB = gB.squeeze(-1)
    return (_sum_to(gA, s.self_sizes) if gA is not None else None), (_sum_to(gB, s.b_sizes) if gB is not None else None)


@formula("linalg_matrix_exp", save=("self",))
def _(s, g):
    # upstream's linalg_matrix_exp_differential: the top-right block of exp([[A^T, G], [0, A^T]])
    A = s.self
    n = A.shape[-1]
    At = A.mT
    top = torch.cat([At, g], -1)
    bottom = torch.cat([torch.zeros_like(At), At], -1)
    big = torch.linalg.matrix_exp(torch.cat([top, bottom], -2))
    return big.narrow(-2, 0, n).narrow(-1, n, n)


def _complex_solve(M, Bm):
    """X with M X = B for complex M and B, through the real system [[Re, -Im], [Im, Re]] (the
    core's solver takes real matrices)."""
    re, im = M.real, M.imag
    big = torch.cat([torch.cat([re, -im], -1), torch.cat([im, re], -1)], -2)
    rhs = torch.cat([Bm.real, Bm.imag], -2)
    X = torch.linalg.solve(big, rhs)
    n = M.shape[-1]
    return torch.complex(X[..., :n, :], X[..., n:, :])


@formula("linalg_eig", save=("self", "result0", "result1"), multi=True)
def _(s, grads):
    """upstream's linalg_eig_backward (FunctionsManual.cpp) for a general matrix:
    gA = V^-H G V^H, G = (V^H gV - V^H V Re(diag(V^H gV))) / E off the diagonal and gL on it,
    E_ij = conj(L_j - L_i); a real input takes the real part."""
    gL, gV = grads
    L, V = s.result0, s.result1
    Vh = V.mH
    if gV is not None:
        VhgV = Vh @ gV
        diag = VhgV.diagonal(0, -2, -1)
        if bool((diag.imag.abs() > 1e-2).any()):  # upstream's allclose(imag, 0, 1e-2, 1e-2)
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
                "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")
        VhgV = VhgV - Vh @ (V * diag.real.unsqueeze(-2))
        Lc = L.conj()
        gA = VhgV / _eye_fill(Lc.unsqueeze(-2) - Lc.unsqueeze(-1))
        if gL is not None:  # the diagonal is gL's
            gA = gA - torch.diag_embed(gA.diagonal(0, -2, -1)) + torch.diag_embed(gL)
    else:
        gA = torch.diag_embed(gL)
    gA = _complex_solve(Vh, gA @ Vh)
    return gA if s.self.is_complex() else gA.real


# written for complex gradients (upstream's convention: the conjugate Wirtinger derivative)
COMPLEX_READY.add("linalg_eig")

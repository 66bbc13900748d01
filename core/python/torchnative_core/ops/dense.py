"""Dense linear algebra on Python floats (float64), one matrix at a time: the numerical core of
ops/linalg_decomp.py.

Written from the algorithms' textbook/LAPACK-documentation descriptions (Golub & Van Loan;
LAPACK's documented dlarfg/dgeqr2/dorg2r conventions), not from LAPACK's source. Where the
result is unique (Cholesky, LU with partial pivoting, solves, inverses, determinants, QR with
LAPACK's Householder sign convention) it agrees with upstream's LAPACK results up to rounding;
eigenvectors and singular vectors are unique only up to sign and get the normalisation documented
at `_fix_signs`.

Matrices are lists of rows. These loops are O(n^3) Python: fine for the small matrices of tests
and model initialisation, slow for large ones (documented in docs/STATUS.md).
"""

from __future__ import annotations

import math


def zeros(m, n):
    return [[0.0] * n for _ in range(m)]


def eye(n, m=None):
    m = n if m is None else m
    return [[1.0 if i == j else 0.0 for j in range(m)] for i in range(n)]


def transpose(a, n_cols=None):
    if not a:
        return [[] for _ in range(n_cols or 0)]
    return [list(r) for r in zip(*a)]


def matmul(a, b):
    bt = transpose(b, len(b[0]) if b else 0)
    return [[sum(x * y for x, y in zip(row, col)) for col in bt] for row in a]


# --- Householder QR (LAPACK geqr2 + org2r conventions) -------------------------------------------

def _larfg(alpha, x):
    """LAPACK dlarfg: H = I - tau [1 v][1 v]^T with H [alpha x] = [beta 0], beta = -sign(alpha)
    * norm([alpha x]); tau = 0 (H = I) when x is zero."""
    xnorm = math.sqrt(sum(t * t for t in x))
    if xnorm == 0.0:
        return alpha, 0.0, [0.0] * len(x)
    beta = -math.copysign(math.hypot(alpha, xnorm), alpha)
    tau = (beta - alpha) / beta
    scale = 1.0 / (alpha - beta)
    return beta, tau, [t * scale for t in x]


def geqrf(a, m, n):
    """Returns (QR, tau): R on and above the diagonal, the Householder vectors below it."""
    a = [list(r) for r in a]
    k = min(m, n)
    tau = [0.0] * k
    for i in range(k):
        beta, t, v = _larfg(a[i][i], [a[r][i] for r in range(i + 1, m)])
        tau[i] = t
        a[i][i] = beta
        for r in range(i + 1, m):
            a[r][i] = v[r - i - 1]
        if t != 0.0:
            vv = [1.0] + v
            for j in range(i + 1, n):
                s = sum(vv[r - i] * a[r][j] for r in range(i, m))
                if s != 0.0:
                    s *= t
                    for r in range(i, m):
                        a[r][j] -= s * vv[r - i]
    return a, tau


def householder_product(qr, tau, m, ncols):
    """Q = H_1 ... H_k applied to the first `ncols` columns of the m x m identity (orgqr)."""
    q = eye(m, ncols)
    for i in reversed(range(len(tau))):
        t = tau[i]
        if t == 0.0:
            continue
        v = [0.0] * m
        v[i] = 1.0
        for r in range(i + 1, m):
            v[r] = qr[r][i]
        for j in range(ncols):
            s = sum(v[r] * q[r][j] for r in range(i, m))
            if s != 0.0:
                s *= t
                for r in range(i, m):
                    q[r][j] -= s * v[r]
    return q


def qr(a, m, n, mode):
    """linalg.qr: (Q, R) for mode reduced/complete, (None, R) for mode r."""
    h, tau = geqrf(a, m, n)
    k = min(m, n)
    rrows = m if mode == "complete" else k
    r = [[h[i][j] if j >= i else 0.0 for j in range(n)] for i in range(rrows)]
    if mode == "r":
        return None, r
    return householder_product(h, tau, m, m if mode == "complete" else k), r


# --- Cholesky, LU, triangular solves -------------------------------------------------------------

def cholesky(a, n):
    """Lower L with A = L L^T (reading the lower triangle); info > 0 (1-based) when the leading
    minor of that order is not positive definite."""
    L = zeros(n, n)
    for j in range(n):
        d = a[j][j] - sum(L[j][k] * L[j][k] for k in range(j))
        if not d > 0.0:
            return L, j + 1
        L[j][j] = math.sqrt(d)
        for i in range(j + 1, n):
            L[i][j] = (a[i][j] - sum(L[i][k] * L[j][k] for k in range(j))) / L[j][j]
    return L, 0


def lu(a, m, n):
    """Partial pivoting (the first row of largest magnitude, as idamax): (LU, pivots 1-based,
    info); info is the first zero pivot (1-based), the factorisation continues past it."""
    a = [list(r) for r in a]
    k = min(m, n)
    piv, info = [], 0
    for j in range(k):
        p, best = j, abs(a[j][j])
        for i in range(j + 1, m):
            if abs(a[i][j]) > best:
                p, best = i, abs(a[i][j])
        piv.append(p + 1)
        if a[p][j] != 0.0:
            if p != j:
                a[p], a[j] = a[j], a[p]
            inv = 1.0 / a[j][j]
            for i in range(j + 1, m):
                a[i][j] *= inv
        elif info == 0:
            info = j + 1
        for i in range(j + 1, m):
            f = a[i][j]
            if f != 0.0:
                ri, rj = a[i], a[j]
                for c in range(j + 1, n):
                    ri[c] -= f * rj[c]
    return a, piv, info


def permute_rows(b, piv):
    b = [list(r) for r in b]
    for i, p in enumerate(piv):
        if p - 1 != i:
            b[i], b[p - 1] = b[p - 1], b[i]
    return b


def solve_lower(L, b, unit=False):
    n = len(L)
    x = [list(r) for r in b]
    ncol = len(b[0]) if b else 0
    for i in range(n):
        row = L[i]
        for c in range(ncol):
            s = x[i][c] - sum(row[k] * x[k][c] for k in range(i))
            x[i][c] = s if unit else s / row[i]
    return x


def solve_upper(U, b, unit=False):
    n = len(U)
    x = [list(r) for r in b]
    ncol = len(b[0]) if b else 0
    for i in reversed(range(n)):
        row = U[i]
        for c in range(ncol):
            s = x[i][c] - sum(row[k] * x[k][c] for k in range(i + 1, n))
            x[i][c] = s if unit else s / row[i]
    return x


def lu_solve(LU, piv, b):
    y = solve_lower(LU, permute_rows(b, piv), unit=True)
    return solve_upper(LU, y)


# --- symmetric eigenproblem and SVD by Jacobi rotations ------------------------------------------

def eigh(a, n, want_vectors=True):
    """Cyclic Jacobi on a symmetric matrix (given in full): ascending eigenvalues, eigenvectors as
    columns, signs normalised by `_fix_signs`."""
    a = [list(r) for r in a]
    v = eye(n)
    for _sweep in range(100):
        off = sum(a[i][j] * a[i][j] for i in range(n) for j in range(i + 1, n))
        diag = sum(a[i][i] * a[i][i] for i in range(n))
        if off <= 1e-34 * diag or off == 0.0:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p][q]
                if apq == 0.0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2.0 * apq)
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                _rotate_cols(a, p, q, c, s)
                _rotate_rows(a, p, q, c, s)
                _rotate_cols(v, p, q, c, s)
    w = [a[i][i] for i in range(n)]
    order = sorted(range(n), key=lambda i: w[i])
    w = [w[i] for i in order]
    if not want_vectors:
        return w, None
    vecs = [[v[r][i] for i in order] for r in range(n)]
    return w, _fix_signs(vecs, n)


def _rotate_cols(a, p, q, c, s):
    for row in a:
        x, y = row[p], row[q]
        row[p], row[q] = c * x - s * y, s * x + c * y


def _rotate_rows(a, p, q, c, s):
    rp, rq = a[p], a[q]
    for k in range(len(rp)):
        x, y = rp[k], rq[k]
        rp[k], rq[k] = c * x - s * y, s * x + c * y


def _fix_signs(cols, ncols):
    """Sign normalisation of singular/eigen vectors (columns): the entry of largest magnitude
    (the first such) is made positive. LAPACK fixes no convention; this one is ours."""
    for j in range(ncols):
        best, sgn = -1.0, 1.0
        for r in range(len(cols)):
            x = cols[r][j]
            if abs(x) > best:
                best, sgn = abs(x), (-1.0 if x < 0 else 1.0)
        if sgn < 0:
            for r in range(len(cols)):
                cols[r][j] = -cols[r][j]
    return cols


def svd(a, m, n, full_matrices, compute_uv):
    """One-sided Jacobi (Hestenes): returns (U m x (m|k), S descending, Vh (n|k) x n)."""
    if m < n:
        r = svd(transpose(a, n), n, m, full_matrices, compute_uv)
        if not compute_uv:
            return r
        U, S, Vh = r
        return transpose(Vh, len(U[0]) if U else 0) if Vh else [[] for _ in range(m)], S, transpose(U, len(U[0]) if U else 0)
    k = n
    w = [list(r) for r in a]  # m x n, columns orthogonalised in place
    v = eye(n)
    for _sweep in range(100):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                alpha = sum(w[i][p] * w[i][p] for i in range(m))
                beta = sum(w[i][q] * w[i][q] for i in range(m))
                gamma = sum(w[i][p] * w[i][q] for i in range(m))
                if gamma == 0.0 or abs(gamma) <= 1e-16 * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                _rotate_cols(w, p, q, c, s)
                _rotate_cols(v, p, q, c, s)
        if not rotated:
            break
    sv = [math.sqrt(sum(w[i][j] * w[i][j] for i in range(m))) for j in range(n)]
    order = sorted(range(n), key=lambda j: -sv[j])
    S = [sv[j] for j in order]
    if not compute_uv:
        return S
    V = [[v[i][j] for j in order] for i in range(n)]
    tiny = (S[0] if S else 0.0) * max(m, n) * 2.2e-16
    U = [[0.0] * k for _ in range(m)]
    good = []
    for c, j in enumerate(order):
        if sv[j] > tiny and sv[j] > 0.0:
            good.append(c)
            for i in range(m):
                U[i][c] = w[i][j] / sv[j]
    # signs: U's columns normalised, V follows
    for c in good:
        best, sgn = -1.0, 1.0
        for i in range(m):
            if abs(U[i][c]) > best:
                best, sgn = abs(U[i][c]), (-1.0 if U[i][c] < 0 else 1.0)
        if sgn < 0:
            for i in range(m):
                U[i][c] = -U[i][c]
            for i in range(n):
                V[i][c] = -V[i][c]
    ncols = m if full_matrices else k
    if len(good) < ncols:
        U = _complete(U, good, m, ncols)
    Vh = transpose(V, n)
    return U, S, Vh


def _complete(U, good, m, ncols):
    """Columns `good` of U are orthonormal; returns m x ncols with the others (and any beyond U's
    width) filled by an orthonormal completion (Householder QR of the good columns)."""
    g = len(good)
    basis = [[U[i][c] for c in good] for i in range(m)]
    if g:
        h, tau = geqrf(basis, m, g)
        Q = householder_product(h, tau, m, m)
        # the first g columns of Q are +-the good columns; the rest complete them
        extra = [[Q[i][j] for j in range(g, m)] for i in range(m)]
    else:
        extra = eye(m)
    out = [[0.0] * ncols for _ in range(m)]
    width = len(U[0]) if U else 0
    for c in good:
        for i in range(m):
            out[i][c] = U[i][c]
    e = 0
    for c in range(ncols):
        if c < width and c in good:
            continue
        for i in range(m):
            out[i][c] = extra[i][e]
        e += 1
    return out

"""Linear-algebra operators upstream composes of others (aten/src/ATen/native/LinearAlgebra.cpp,
BatchLinearAlgebra.cpp): matrix norms, rank, pseudo-inverse, least squares, condition number,
matrix powers, multi_dot. Composed in the same order as upstream, so rounding and the operator
sequence a dispatch mode sees agree."""

from __future__ import annotations

import math
from .. import base as B
from .. import impl
from .decompositions import _check_float, _check_matrix, _tname


D = B.door


def _torch():
    import torch

    return torch


_EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16}


def _eps(dtype):
    """Upstream's _get_epsilon: the machine epsilon of float32/float64 (of a complex type's real
    type), a RuntimeError for any other dtype."""
    name = {"complex64": "float32", "complex128": "float64"}.get(dtype._tn_name, dtype._tn_name)
    if name not in _EPS:
        raise RuntimeError("This function doesn't handle types other than float and double")
    return _EPS[name]


def _backshift(d0, d1, ndim):
    return [i for i in range(ndim) if i not in (d0, d1)] + [d0, d1]


def _reverse(perm):
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return out


def _matrix_norm_checks(A, dim, dtype, low_precision):
    torch = _torch()
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d = [B.wrap_dim(x, A.dim()) for x in dim]
    if d[0] == d[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d[0]}, {d[1]})")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {_tname(A.dtype)}")
    if not low_precision and A.dtype in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {_tname(A.dtype)}")
    return d


def _empty_matrix_norm(A, d, dtype, keepdim):
    """Upstream's matrix norms of an empty input for a positive order (and 'nuc'): zeros of the
    reduced shape, where an amax over the empty dim would have no identity."""
    torch = _torch()
    shape = [n for i, n in enumerate(A.shape) if i not in d] if not keepdim else \
        [1 if i in d else n for i, n in enumerate(A.shape)]
    real = dtype or (A.dtype.to_real() if A.is_complex() else A.dtype)
    return torch.zeros(shape, dtype=real, device=A.device)


def _svd_reduce(A, d, dtype, keepdim, reduce):
    A_ = A if dtype is None else A.to(dtype)
    perm = _backshift(d[0], d[1], A_.dim())
    result = reduce(D("linalg_svdvals", A_.permute(perm), None))
    if keepdim:
        result = result.unsqueeze(-1).permute(_reverse(perm))
    return result


@impl("linalg_matrix_norm")
def linalg_matrix_norm(A, ord, dim=(-2, -1), keepdim=False, dtype=None):
    o = float(ord)
    if abs(o) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    d = _matrix_norm_checks(A, list(dim), dtype, abs(o) != 2.0)
    if A.numel() == 0 and o > 0:  # a max of non-negative values: zero is its identity
        return _empty_matrix_norm(A, d, dtype, keepdim)

    def max_min(t, dm):
        return t.amax(dm, keepdim) if o > 0 else t.amin(dm, keepdim)

    if abs(o) == 2.0:
        return _svd_reduce(A, d, dtype, keepdim, lambda s: max_min(s, -1))
    if abs(o) == math.inf:
        d = [d[1], d[0]]
    if not keepdim and d[0] < d[1]:
        d[1] -= 1
    return max_min(D("linalg_vector_norm", A, 1.0, [d[0]], keepdim, dtype), d[1])


def _fmt(x):
    return str(x)


@impl("linalg_matrix_norm.str_ord")
def linalg_matrix_norm_str(A, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d = _matrix_norm_checks(A, list(dim), dtype, ord != "nuc")
    if ord == "fro":
        return D("linalg_vector_norm", A, 2, list(dim), keepdim, dtype)
    if A.numel() == 0:
        return _empty_matrix_norm(A, d, dtype, keepdim)
    return _svd_reduce(A, d, dtype, keepdim, lambda s: s.sum(-1, keepdim))


@impl("linalg_norm")
def linalg_norm(A, ord=None, dim=None, keepdim=False, dtype=None):
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")
    if ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2)):
        return D("linalg_matrix_norm", A, ord, list(dim) if dim is not None else [0, 1], keepdim, dtype)
    return D("linalg_vector_norm", A, 2.0 if ord is None else ord, None if dim is None else list(dim), keepdim, dtype)


@impl("linalg_norm.ord_str")
def linalg_norm_str(A, ord, dim=None, keepdim=False, dtype=None):
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")
    return D("linalg_matrix_norm.str_ord", A, ord, list(dim) if dim is not None else [0, 1], keepdim, dtype)


@impl("nuclear_norm")
def nuclear_norm(self, keepdim=False):
    _check_float(self, "linalg.matrix_norm")
    return D("linalg_matrix_norm.str_ord", self, "nuc", [-2, -1], keepdim, None)


@impl("nuclear_norm.dim")
def nuclear_norm_dim(self, dim, keepdim=False):
    _check_float(self, "linalg.matrix_norm")
    return D("linalg_matrix_norm.str_ord", self, "nuc", list(dim), keepdim, None)


# --- tolerances (get_atol_rtol) -------------------------------------------------------------------

def _check_rank_input(A):
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")


def _atol_rtol_tensors(A, atol, rtol):
    _check_rank_input(A)
    torch = _torch()
    # on A's device, as upstream's at::scalar_tensor(..., A.options()) (a CPU 0-dim tensor stops
    # being 0-dim once unsqueezed)
    dev = A.device
    atol_t = atol if atol is not None else torch.zeros((), dtype=torch.float64, device=dev)
    if rtol is not None:
        rtol_t = rtol
    else:
        default = torch.full((), _eps(A.dtype) * max(A.shape[-1], A.shape[-2]), dtype=torch.float64, device=dev)
        rtol_t = (torch.where(atol > 0, torch.zeros((), dtype=torch.float64, device=dev), default)
                  if atol is not None else default)
    return atol_t, rtol_t


def _atol_rtol_floats(A, atol, rtol):
    _check_rank_input(A)
    a = 0.0 if atol is None else atol
    if rtol is not None:
        r = rtol
    else:
        r = 0.0 if a > 0.0 else _eps(A.dtype) * max(A.shape[-1], A.shape[-2])
    return a, r


def _max_singular(A, hermitian):
    if not hermitian:
        S = D("linalg_svdvals", A, None)
        return S, S.narrow(-1, 0, 1)
    S = D("linalg_eigvalsh", A, "L").abs()
    return S, S.amax(-1, True)


def _rank(A, atol, rtol, hermitian, floats):
    torch = _torch()
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.numel() == 0:
        return torch.zeros(list(A.shape[:-2]), dtype=torch.int64)
    S, max_S = _max_singular(A, hermitian)
    if floats:
        tol = torch.clamp_min(rtol * max_S, atol)
    else:
        tol = torch.max(atol.unsqueeze(-1), rtol.unsqueeze(-1) * max_S)
    return torch.sum(S > tol, -1)


@impl("linalg_matrix_rank.atol_rtol_tensor")
def matrix_rank_tensor(input, atol=None, rtol=None, hermitian=False):
    a, r = _atol_rtol_tensors(input, atol, rtol)
    return _rank(input, a, r, hermitian, False)


@impl("linalg_matrix_rank.atol_rtol_float")
def matrix_rank_float(self, atol=None, rtol=None, hermitian=False):
    a, r = _atol_rtol_floats(self, atol, rtol)
    return _rank(self, a, r, hermitian, True)


@impl("linalg_matrix_rank.tol_tensor")
def matrix_rank_tol_tensor(input, tol, hermitian=False):
    torch = _torch()
    _check_rank_input(input)
    return _rank(input, tol, torch.zeros((), dtype=torch.float64), hermitian, False)


@impl("linalg_matrix_rank")
def matrix_rank_tol_float(self, tol, hermitian=False):
    _check_rank_input(self)
    return _rank(self, tol, 0.0, hermitian, True)


# --- pseudo-inverse ---------------------------------------------------------------------------------

@impl("linalg_pinv.atol_rtol_tensor")
def linalg_pinv(self, atol=None, rtol=None, hermitian=False):
    torch = _torch()
    if self.dtype not in (torch.float32, torch.float64) or self.dim() < 2:
        raise RuntimeError(f"linalg.pinv({_pinv_type(self.dtype)}{{{list(self.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    a, r = _atol_rtol_tensors(self, atol, rtol)
    if self.numel() == 0 or not hermitian:
        U, S, V = D("svd", self, True, True)
        if self.numel() == 0:
            return torch.matmul(V * S.reciprocal().unsqueeze(-2), U.mT)
        max_val = S.narrow(-1, 0, 1)
        tol = torch.max(a.unsqueeze(-1), r.unsqueeze(-1) * max_val)
        Sinv = torch.where(S > tol, S.reciprocal(), torch.zeros((), dtype=S.dtype, device=S.device)).to(self.dtype)
        return torch.matmul(V * Sinv.unsqueeze(-2), U.mT)
    S, U = D("linalg_eigh", self, "L")
    S_abs = S.abs()
    max_val = S_abs.amax(-1, True)
    tol = torch.max(a.unsqueeze(-1), r.unsqueeze(-1) * max_val)
    Sinv = torch.where(S_abs > tol, S.reciprocal(), torch.zeros((), dtype=S.dtype, device=S.device)).to(self.dtype)
    return torch.matmul(U * Sinv.unsqueeze(-2), U.mT)


def _pinv_type(d):
    return {"float32": "Float", "float64": "Double"}.get(str(d).replace("torch.", ""), _tname(d))


@impl("linalg_pinv.atol_rtol_float")
def linalg_pinv_float(self, atol=None, rtol=None, hermitian=False):
    torch = _torch()
    B.size_dim(-2, len(self._tn_sizes))  # upstream reads input.size(-2) first: its IndexError
    a, r = _atol_rtol_floats(self, atol, rtol)
    return D("linalg_pinv.atol_rtol_tensor", self, torch.full((), a, dtype=torch.float64, device=self.device),
             torch.full((), r, dtype=torch.float64, device=self.device), hermitian)


@impl("linalg_pinv")
def linalg_pinv_rcond(self, rcond, hermitian=False):
    torch = _torch()
    return D("linalg_pinv.atol_rtol_tensor", self, torch.zeros((), dtype=torch.float64, device=self.device),
             torch.full((), float(rcond), dtype=torch.float64, device=self.device), hermitian)


@impl("linalg_pinv.rcond_tensor")
def linalg_pinv_rcond_tensor(self, rcond, hermitian=False):
    torch = _torch()
    return D("linalg_pinv.atol_rtol_tensor", self, torch.zeros((), dtype=rcond.dtype, device=rcond.device), rcond, hermitian)


@impl("pinverse")
def pinverse(self, rcond=1e-15):
    return D("linalg_pinv", self, rcond, False)


# --- least squares ------------------------------------------------------------------------------------

def _full_rank_qr_solve(A, Bm, rcond):
    """The least-squares solution from the QR of [A | B] (mode "r": no Q formed; the columns of
    B come out as Q^T B, reflected as gels applies the reflectors to B) when R's diagonal shows
    full column rank as in `_full_rank_qr`, else None. Nothing recorded: mode "r" has no
    derivative, so inputs that need one take `_full_rank_qr`."""
    torch = _torch()
    n = A.shape[-1]
    R = D("linalg_qr", torch.cat([A, Bm], -1), "r")[1]
    R_A = R[..., :n, :n]
    d = R_A.diagonal(0, -2, -1).abs()
    if d.numel() and bool((d.amin(-1) > d.amax(-1) * (100 * rcond)).all()):
        return D("linalg_solve_triangular", R_A, R[..., :n, n:], True, True, False)
    return None


def _full_rank_qr(A, rcond):
    """(Q, R) of A when its unpivoted R's diagonal shows full column rank with a wide margin
    (every |R_ii| above 100 * rcond * max |R_jj|, in every batch element), else None: near the
    rank cut the SVD decides, as gelsy's pivoted QR would."""
    Q, R = D("linalg_qr", A, "reduced")
    d = R.diagonal(0, -2, -1).abs()
    if d.numel() and bool((d.amin(-1) > d.amax(-1) * (100 * rcond)).all()):
        return Q, R
    return None


def _lstsq_layout(X, batch, rows, vector):
    """The solution in upstream's layout: LAPACK overwrites a column-major [..., max(m, n), k]
    copy of B, and the solution is its first n rows (in that buffer's strides, not a view)."""
    from .decompositions import _empty_fortran

    n, k = X.shape[-2], X.shape[-1]
    buf = _empty_fortran(batch + [rows, k], X.dtype, X.device)
    strides = list(buf._tn_strides)
    if vector:
        buf._tn_set_geometry(batch + [n], strides[:-1], 0)
        return buf.copy_(X.squeeze(-1))
    buf._tn_set_geometry(batch + [n, k], strides, 0)
    return buf.copy_(X)


@impl("linalg_lstsq")
def linalg_lstsq(self, b, rcond=None, driver=None):
    """Upstream's CPU default driver is gelsy (QR with column pivoting): full-rank problems have
    one solution (tall: least squares; wide: minimum norm), computed here from the SVD, which
    also gives the rank. singular_values are returned only by the gelsd/gelss drivers."""
    from torch.return_types import linalg_lstsq as ret

    torch = _torch()
    _check_float(self, "torch.linalg.lstsq")
    if self.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    drv = driver or "gelsy"
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not (self.dim() >= b.dim() and self.dim() - b.dim() <= 1):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1")
    vector = b.dim() == self.dim() - 1
    Bm = b.unsqueeze(-1) if vector else b
    if self.shape[-2] != Bm.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    batch = B.broadcast_shapes(list(self.shape[:-2]), list(Bm.shape[:-2]))
    A_ = self.expand(batch + list(self.shape[-2:]))
    B_ = Bm.expand(batch + list(Bm.shape[-2:]))
    m, n, k = A_.shape[-2], A_.shape[-1], B_.shape[-1]
    r = _eps(self.dtype) * max(m, n) if rcond is None or rcond < 0 else rcond
    if min(m, n) == 0:
        X = torch.zeros(batch + [n, k], dtype=self.dtype)
        ranks, S, full = torch.zeros(batch, dtype=torch.int64), torch.empty(batch + [0], dtype=self.dtype), False
    elif (m >= n and drv in ("gels", "gelsy") and not (torch.is_grad_enabled() and (A_.requires_grad or B_.requires_grad))
          and (X := _full_rank_qr_solve(A_, B_, r)) is not None):
        ranks, S, full = torch.full(batch, n, dtype=torch.int64), None, True
    elif m >= n and drv in ("gels", "gelsy") and (qr := _full_rank_qr(A_, r)) is not None:
        # full column rank, clearly: least squares from the QR factors, as gels/gelsy solve it
        Q, R = qr
        X = D("linalg_solve_triangular", R, torch.matmul(Q.mT, B_), True, True, False)
        ranks, S, full = torch.full(batch, n, dtype=torch.int64), None, True
    else:
        # X = V diag(1/s) U^T B over the singular values above rcond * s_max (the device's SVD kernel)
        U, S, Vh = D("_linalg_svd", A_, False, True, None)
        keep = S > S.narrow(-1, 0, 1) * r
        ranks = keep.sum(-1)
        inv = torch.where(keep, 1.0 / S, torch.zeros((), dtype=S.dtype))
        X = torch.matmul(Vh.mT, torch.matmul(U.mT, B_) * inv.unsqueeze(-1))
        full = bool((ranks == min(m, n)).all())
    X = _lstsq_layout(X, batch, max(m, n), vector)
    rank_t = ranks.reshape(batch) if drv != "gels" else torch.empty([0], dtype=torch.int64)
    sv = S if drv in ("gelsd", "gelss") else torch.empty([0], dtype=self.dtype)
    if m > n and full and drv != "gelsy":
        R = torch.matmul(A_, X.unsqueeze(-1) if vector else X) - B_
        residuals = (R * R).sum(-2)
    else:
        residuals = torch.empty([0], dtype=self.dtype)
    return ret((X, residuals, rank_t, sv))


# --- condition number, powers, chains ---------------------------------------------------------------

@impl("linalg_cond")
def linalg_cond(self, p=None):
    torch = _torch()
    _check_matrix(self, "linalg.cond")
    ord = 2 if p is None else p
    if self.numel() == 0:
        return torch.zeros(list(self.shape[:-2]), dtype=self.dtype)
    if abs(float(ord)) == 2.0:
        S = D("linalg_svdvals", self, None)
        s_max, s_min = S.narrow(-1, 0, 1), S.narrow(-1, -1, 1)
        res = s_min / s_max if float(ord) == -2.0 else s_max / s_min
        return res.squeeze(-1)
    if float(ord) not in (1.0, -1.0, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {ord}")
    _check_matrix(self, f"linalg.cond(ord={ord})", square=True)
    return _cond_helper(self, ord, "linalg_matrix_norm")


def _cond_helper(self, ord, norm_op):
    inv, info = D("linalg_inv_ex", self, False)
    info = info.unsqueeze(-1).unsqueeze(-1)
    inv = inv.masked_fill(info > 0, math.inf)
    return D(norm_op, self, ord, [-2, -1], False, None) * D(norm_op, inv, ord, [-2, -1], False, None)


@impl("linalg_cond.p_str")
def linalg_cond_str(self, p):
    torch = _torch()
    _check_matrix(self, "linalg.cond")
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if self.numel() == 0:
        return torch.zeros(list(self.shape[:-2]), dtype=self.dtype)
    _check_matrix(self, f"linalg.cond(ord={p})", square=True)
    return _cond_helper(self, p, "linalg_matrix_norm.str_ord")


@impl("linalg_matrix_power", "matrix_power")
def linalg_matrix_power(self, n):
    torch = _torch()
    if self.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if self.shape[-1] != self.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {self.shape[-2]} by {self.shape[-1]} matrices")
    if n == 0:
        return self.clone(memory_format=torch.contiguous_format).copy_(torch.eye(self.shape[-2], dtype=self.dtype).expand(list(self.shape)))
    a = self
    if n < 0:
        a = D("linalg_inv", self)
        n = -n
    if n == 1:
        return a.clone()
    if n == 2:
        return torch.matmul(a, a)
    if n == 3:
        return torch.matmul(torch.matmul(a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else torch.matmul(z, z)
        if bit == 1:
            result = z if result is None else torch.matmul(result, z)
    return result


_CHAIN_WARNED = []


@impl("chain_matmul")
def chain_matmul(matrices):
    """Deprecated upstream (LinearAlgebra.cpp): every matrix 2-d, then linalg.multi_dot."""
    if not _CHAIN_WARNED:  # TORCH_WARN_ONCE
        import warnings

        _CHAIN_WARNED.append(True)
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                      "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                      "multiple parameters.", UserWarning, stacklevel=3)
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return D("clone", matrices[0], None)
    return linalg_multi_dot(matrices)


@impl("vander")
def vander(x, N=None, increasing=False):
    """upstream's vander (LinearAlgebra.cpp): ones, the input in columns 1.., a cumulative product
    along the rows in the promoted type (at least int64), flipped unless increasing."""
    import torch

    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = torch.promote_types(x.dtype, torch.int64)
    result = B.call("ones", [x.numel(), n], dtype, device=x.device)
    if n > 1:
        D("copy_", D("slice.Tensor", result, 1, 1, None, 1), D("unsqueeze", x, 1), False)
        result = D("cumprod", result, 1, None)
    return result if increasing else D("flip", result, [1])


@impl("linalg_multi_dot")
def linalg_multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = tensors[0].dim() == 1, tensors[-1].dim() == 1
    ts = list(tensors)
    if first_1d:
        ts[0] = ts[0].unsqueeze(0)
    if last_1d:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(1, n):
        if ts[i - 1].shape[1] != ts[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} and "
                               f"{list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        out = ts[0].mm(ts[1])
    elif n == 3:
        a, b, c, d = ts[0].shape[0], ts[1].shape[0], ts[2].shape[0], ts[2].shape[1]
        cost_1 = (a * c) * (b + d)
        cost_2 = (b * d) * (a + c)
        out = ts[0].mm(ts[1].mm(ts[2])) if cost_1 > cost_2 else ts[0].mm(ts[1]).mm(ts[2])
    else:
        out = _chain(ts, _chain_order(ts), 0, n - 1)
    if first_1d and last_1d:
        return out.squeeze(0).squeeze(0)
    if first_1d:
        return out.squeeze(0)
    if last_1d:
        return out.squeeze(-1)
    return out


def _chain_order(ts):
    n = len(ts)
    p = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    m = [[0] * n for _ in range(n)]
    s = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            m[i][j] = None
            for k in range(i, j):
                q = m[i][k] + m[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if m[i][j] is None or q < m[i][j]:
                    m[i][j], s[i][j] = q, k
    return s


def _chain(ts, s, i, j):
    if i == j:
        return ts[i]
    return _chain(ts, s, i, s[i][j]).mm(_chain(ts, s, s[i][j] + 1, j))


@impl("linalg_tensorinv")
def linalg_tensorinv(self, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    end, start = list(self.shape[ind:]), list(self.shape[:ind])
    p_end, p_start = B.numel(end), B.numel(start)
    if p_end != p_start:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {p_end} != {p_start}")
    inv, info = D("linalg_inv_ex", self.reshape(p_start, p_end), False)
    from .decompositions import _check_errors

    _check_errors(info, "linalg.inv", True)
    return inv.reshape(end + start)


@impl("linalg_tensorsolve")
def linalg_tensorsolve(self, other, dims=None):
    torch = _torch()
    nd = self.dim()
    s = self
    if dims is not None:
        s = torch.movedim(s, list(dims), list(range(nd - len(dims), nd)))
    result_shape = list(s.shape[other.dim():])
    rp, op = B.numel(result_shape), B.numel(other.shape)
    if rp != op:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {rp} != {op}")
    return D("linalg_solve", s.reshape(rp, rp), other.flatten(), True).reshape(result_shape)


@impl("linalg_vecdot")
def linalg_vecdot(x, y, dim=-1):
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got {_tname(x.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {_tname(x.dtype)} "
                           f"and y of type {_tname(y.dtype)} instead")
    return (x * y).sum(dim)


@impl("linalg_vander")
def linalg_vander(x, N=None):
    torch = _torch()
    if x.is_complex() or x.dtype in (torch.float16, torch.bfloat16, torch.bool):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got {_tname(x.dtype)}")
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = torch.cumprod(x_.unsqueeze(-1).expand(shape + [n - 1]), -1)
    ones = result.new_ones(shape + [1])
    return torch.cat([ones, result], -1)


@impl("linalg_diagonal")
def linalg_diagonal(A, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


@impl("matrix_exp")
def matrix_exp_alias(self):
    return D("linalg_matrix_exp", self)


@impl("linalg_matrix_exp")
def matrix_exp(self):
    """float32 and float64: upstream's own algorithm and rounding (`matrix_exp.py`); other dtypes
    by scaling and squaring of a degree-18 Taylor polynomial in float64, rounded once."""
    _check_matrix(self, "linalg.matrix_exp", square=True)
    # float16/bfloat16 refused: upstream computes them, but its degree-18 polynomial overflows in
    # those types (inf/NaN for a 2x2 of norm 4, or a 5x5 of norm 1), so we raise instead
    _check_float(self, "linalg.matrix_exp")
    if self.numel() == 0:
        return D("clone", self)
    n = self._tn_sizes[-1]
    if n >= 2 and str(self.dtype) in ("torch.float32", "torch.float64"):
        from .matrix_exp import mexp

        return mexp(self)
    return _expm(self)


def _expm(A):
    """Scaling and squaring of a degree-18 Taylor polynomial, in float64, rounded once (the
    dtypes and sizes upstream's own algorithm does not cover)."""
    torch = _torch()
    n = A.shape[-1]
    x = A.to(torch.float64)
    norm = x.abs().sum(-1).amax(-1) if x.numel() else torch.zeros(list(A.shape[:-2]), dtype=torch.float64)
    eye = torch.eye(n, dtype=torch.float64, device=A.device).expand(list(A.shape))
    out = []
    for a, nrm, e in zip(x.reshape(-1, n, n), norm.reshape(-1).tolist(), eye.reshape(-1, n, n)):
        if not math.isfinite(nrm):
            out.append(torch.full((n, n), math.nan, dtype=torch.float64, device=A.device))
            continue
        s = max(0, int(math.ceil(math.log2(nrm))) + 1) if nrm > 0.5 else 0
        a = a * 2.0 ** -s
        result, term = e.clone(), e.clone()
        for k in range(1, 19):
            term = torch.matmul(term, a) / k
            result = result + term
        for _ in range(s):
            result = torch.matmul(result, result)
        out.append(result)
    res = torch.stack(out) if out else torch.empty([0, n, n], dtype=torch.float64, device=A.device)
    return res.reshape(list(A.shape)).to(A.dtype)


@impl("frobenius_norm.dim")
def frobenius_norm(self, dim, keepdim=False):
    # upstream (LinearAlgebra.cpp): a deprecated spelling of the 2-norm over at most two dims,
    # composite, so every device that has norm's parts has it
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    return D("norm.ScalarOpt_dim", self, 2.0, list(dim), keepdim)


@impl("cross")
def cross(self, other, dim=None):
    import torch

    if dim is None:  # upstream's deprecated default: the first dimension of size 3
        dim = next((i for i, s in enumerate(torch.broadcast_shapes(self.shape, other.shape)) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return torch.linalg.cross(self, other, dim=dim)


@impl("linalg_cross")
def linalg_cross(self, other, dim=-1):
    import torch

    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    a, b = torch.broadcast_tensors(self, other)
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {self.shape[dim]} and {other.shape[dim]}")
    if self.dtype == other.dtype == _torch().bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if self.dtype != other.dtype:  # the kernel's TensorIterator takes one dtype, no promotion
        raise RuntimeError(f"expected scalar type {B.scalar_type_name(B.dtype_of(self))} but found "
                           f"{B.scalar_type_name(B.dtype_of(other))}")
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return torch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)

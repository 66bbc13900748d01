"""linalg.eig/eigvals and linalg.ldl_factor(_ex)/ldl_solve: a fixed set of programs, each run on
whichever torch runs this file (upstream's in the reference environment, ours in .venv), writing
what each produced: dtype, shape and values (a tuple's tensors as one flat complex or real tensor)
or the exception type and message. Eigenvalues and eigenvectors are compared as they come, in
upstream's order and with its normalisation (LAPACK geev's), not up to permutation or phase.

    python tests/programs/eig_ldl_cases.py OUT.npz

tests/test_linalg_eig_ldl.py runs it on both sides and compares.
"""

import sys

import torch
from npz_outcomes import ramp as float32_ramp
from npz_outcomes import write_npz_outcomes



def ramp(*shape, dtype=torch.float64, **kw):  # this program's inputs are float64 unless said
    return float32_ramp(*shape, dtype=dtype, **kw)


def mat(*shape, dtype=torch.float64, seed=0):
    """A reproducible, well-conditioned test matrix (the same on both sides: no RNG)."""
    g = ramp(*shape, scale=0.7131 + 0.01 * seed, lo=-1.0)
    g = g + torch.sin(torch.arange(g.numel(), dtype=torch.float64) * (1.3 + seed)).view(*shape)
    if dtype.is_complex:
        return torch.complex(g, torch.cos(g * 2.1 + seed)).to(dtype)
    return g.to(dtype)


def flat(*ts):
    ts = [t.reshape(-1) for t in ts]
    if any(t.is_complex() for t in ts):
        dt = torch.complex128 if any(t.dtype in (torch.complex128, torch.float64) for t in ts) else torch.complex64
        return torch.cat([t.to(dt) for t in ts])
    return torch.cat([t.to(ts[0].dtype) for t in ts])


def eig(A):
    return lambda: flat(*torch.linalg.eig(A))


def signed(V):
    """Each column times the sign of the real part of its component of largest magnitude: for the
    cases whose real eigenvectors' signs are not reproduced (see tests/test_linalg_eig_ldl.py)."""
    k = V.abs().argmax(-2, keepdim=True)
    return V * torch.sign(V.gather(-2, k).real)


def eig_up_to_sign(A):
    def run():
        w, v = torch.linalg.eig(A)
        return flat(w, signed(v))
    return run


def eig_out(A, wdt, vdt):
    def run():
        w, v = torch.empty(0, dtype=wdt), torch.empty(0, dtype=vdt)
        r = torch.linalg.eig(A, out=(w, v))
        assert r[0] is w and r[1] is v and (w.dtype, v.dtype) == (wdt, vdt)
        # compared at the precision it was computed in (a float32 input's, widened into w)
        return flat(w, signed(v)).to(torch.promote_types(A.dtype, torch.complex64))
    return run


def eigvals_out(A, dt):
    def run():
        out = torch.empty(0, dtype=dt)
        assert torch.linalg.eigvals(A, out=out) is out
        return out
    return run


def sym(n, dt=torch.float64, b=(), seed=0):
    A = mat(*b, n, n, dtype=dt, seed=seed)
    return A + A.mT


def herm(n, b=(), seed=0):
    A = mat(*b, n, n, dtype=torch.complex128, seed=seed)
    return A + A.mH


def ldl_solve(A, Bm, hermitian=False):
    return lambda: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(A, hermitian=hermitian), Bm, hermitian=hermitian)


def eig_grad(A, loss):
    """The gradient of a loss that does not depend on the eigenvectors' phases."""
    def run():
        X = A.clone().requires_grad_()
        L, V = torch.linalg.eig(X)
        loss(L, V).backward()
        return X.grad
    return run


def eigvals_grad(A):
    def run():
        X = A.clone().requires_grad_()
        torch.linalg.eigvals(X).abs().sum().backward()
        return X.grad
    return run


ROWS = torch.arange(4, dtype=torch.float64)[:, None]
PERM = torch.tensor([[0., 1, 2], [1, 0, 3], [2, 3, 0]])
INDEF = torch.tensor([[1e-3, 5, 1, 2], [5, 1e-4, 3, 1], [1, 3, 2e-3, 7], [2, 1, 7, 1e-3]], dtype=torch.float64)
UPPER = torch.tensor([[1., 5, 3], [0, 2, 7], [0, 0, 3]], dtype=torch.float64)
NAN = float("nan")

CASES = {
    # eigenvalues and eigenvectors, in upstream's order and normalisation
    "eig_2x2": eig(torch.tensor([[1., 2], [3, 4]], dtype=torch.float64)),
    "eig_rotation": eig(torch.tensor([[0., -1], [1, 0]], dtype=torch.float64)),
    "eig_upper_triangular": eig(UPPER),
    "eig_lower_triangular": eig(UPPER.mT.contiguous()),
    "eig_f64_4": eig(mat(4, 4)),
    "eig_f64_6": eig(mat(6, 6, seed=1)),
    "eig_f64_batch": eig(mat(3, 5, 5, seed=2)),
    "eig_f64_transposed": eig(mat(5, 5, seed=3).mT),
    "eig_f32_4": eig_up_to_sign(mat(4, 4, dtype=torch.float32, seed=4)),
    "eig_c128_5": eig(mat(5, 5, dtype=torch.complex128, seed=5)),
    "eig_c64_batch": eig(mat(2, 4, 4, dtype=torch.complex64, seed=6)),
    "eig_symmetric": eig(sym(5, seed=7)),
    "eig_block_structure": eig(torch.block_diag(mat(3, 3, seed=8), UPPER)),
    "eig_scaled": eig_up_to_sign(mat(4, 4, seed=9) * torch.tensor([1e-3, 1.0, 1e3, 1.0], dtype=torch.float64)),
    "eig_f32_complex_pairs": eig_up_to_sign(mat(5, 5, dtype=torch.float32, seed=16)),
    "eig_1x1": eig(torch.tensor([[2.5]])),
    "eig_empty": eig(torch.ones(0, 0)),
    "eig_empty_batch": eig(torch.ones(2, 0, 0, dtype=torch.float64)),
    "eigvals_f64": lambda: torch.linalg.eigvals(mat(6, 6, seed=10)),
    "eigvals_c128": lambda: torch.linalg.eigvals(mat(2, 5, 5, dtype=torch.complex128, seed=11)),
    "eigvals_f32": lambda: torch.linalg.eigvals(mat(5, 5, dtype=torch.float32, seed=12)),
    "eigvals_lower": lambda: torch.linalg.eigvals(UPPER.mT),
    "aten_eigvals": lambda: torch.ops.aten._linalg_eigvals(mat(4, 4, seed=13)),
    "eig_out": eig_out(mat(4, 4, dtype=torch.float32, seed=14), torch.complex64, torch.complex64),
    "eig_out_wider": eig_out(mat(4, 4, dtype=torch.float32, seed=14), torch.complex128, torch.complex64),
    "eig_out_real": eig_out(torch.ones(3, 3), torch.float32, torch.complex64),
    "eig_out_real_vectors": eig_out(torch.ones(3, 3), torch.complex64, torch.float32),
    "eigvals_out": eigvals_out(mat(4, 4, seed=15), torch.complex128),
    "eigvals_out_real": eigvals_out(mat(4, 4, seed=15), torch.float64),
    "eig_not_square": eig(torch.ones(2, 3)),
    "eig_vector": eig(torch.ones(3)),
    "eig_int": eig(torch.ones(3, 3, dtype=torch.int64)),
    "eig_half": eig(torch.ones(3, 3, dtype=torch.float16)),
    "eig_nan": eig(torch.full((3, 3), NAN)),
    "eig_inf": eig(torch.eye(3) * float("inf")),
    "eigvals_not_square": lambda: torch.linalg.eigvals(torch.ones(2, 3)),
    "eigvals_int": lambda: torch.linalg.eigvals(torch.ones(3, 3, dtype=torch.int32)),
    "eig_grad_vectors": eig_grad(mat(4, 4, seed=17), lambda L, V: (V.abs() ** 2 * ROWS).sum()),
    "eig_grad_values": eig_grad(mat(4, 4, seed=18), lambda L, V: L.real.sum() + L.imag.pow(2).sum()),
    "eig_grad_both_complex": eig_grad(mat(4, 4, dtype=torch.complex128, seed=19),
                                      lambda L, V: L.abs().sum() + (V.abs() ** 2 * ROWS).sum()),
    "eig_grad_phase_dependent": eig_grad(mat(3, 3, seed=20), lambda L, V: V.real.sum()),
    "eigvals_grad": eigvals_grad(mat(2, 3, 3, seed=21)),
    # ldl
    "ldl_sym4": lambda: flat(*torch.linalg.ldl_factor_ex(sym(4))),
    "ldl_sym6_batch": lambda: flat(*torch.linalg.ldl_factor_ex(sym(6, b=(3,), seed=1))),
    "ldl_f32": lambda: flat(*torch.linalg.ldl_factor_ex(sym(5, torch.float32, seed=2))),
    "ldl_perm": lambda: flat(*torch.linalg.ldl_factor_ex(PERM)),
    "ldl_indefinite": lambda: flat(*torch.linalg.ldl_factor_ex(INDEF)),
    "ldl_herm": lambda: flat(*torch.linalg.ldl_factor_ex(herm(5, seed=3), hermitian=True)),
    "ldl_complex_sym": lambda: flat(*torch.linalg.ldl_factor_ex(herm(5, seed=3))),
    "ldl_singular": lambda: flat(*torch.linalg.ldl_factor_ex(torch.zeros(2, 2))),
    "ldl_singular_error": lambda: flat(*torch.linalg.ldl_factor(torch.zeros(2, 2))),
    "ldl_factor": lambda: flat(*torch.linalg.ldl_factor(sym(4, seed=4))),
    "ldl_empty_batch": lambda: flat(*torch.linalg.ldl_factor_ex(torch.ones(2, 0, 0))),
    "ldl_not_square": lambda: flat(*torch.linalg.ldl_factor(torch.ones(2, 3))),
    "ldl_int": lambda: flat(*torch.linalg.ldl_factor(torch.ones(2, 2, dtype=torch.int64))),
    "ldl_solve": ldl_solve(sym(6, seed=5), mat(6, 3, seed=6)),
    "ldl_solve_batch": ldl_solve(sym(6, b=(3,), seed=7), mat(3, 6, 2, seed=8)),
    "ldl_solve_herm": ldl_solve(herm(5, seed=9), mat(5, 2, dtype=torch.complex128, seed=10), hermitian=True),
    "ldl_solve_complex_sym": ldl_solve(herm(5, seed=9), mat(5, 2, dtype=torch.complex128, seed=10)),
    "ldl_solve_perm": ldl_solve(PERM, torch.tensor([[1.], [2], [3]])),
    "ldl_solve_dtype": ldl_solve(sym(3), torch.ones(3, 1, dtype=torch.float32)),
    "ldl_solve_shape": ldl_solve(sym(3), torch.ones(4, 1, dtype=torch.float64)),
}


if __name__ == "__main__":
    write_npz_outcomes(CASES, sys.argv[1])

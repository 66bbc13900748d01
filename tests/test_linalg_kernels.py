"""The cpu backend's matrix decompositions (backends/cpu/src/decomp.rs, on faer) against upstream's
LAPACK, side by side: Cholesky, LU (pivots exactly), solve, inverse, det/slogdet, triangular
solves, eigh, SVD, QR (and LAPACK's packed form: geqrf, householder_product, ormqr) and lstsq,
batched, float32 and float64, contiguous and transposed inputs, and upstream's errors for
singular and non-positive-definite inputs.

Eigen and singular vectors are compared up to the sign of each column (LAPACK fixes none), the
rest directly, at a tolerance scaled by the dtype's epsilon and the matrix size."""

import numpy as np
import pytest

from program_json import run_npz_side_by_side

pytestmark = pytest.mark.runtime

PROGRAM = r"""
import sys, numpy as np, torch
inp = dict(np.load(sys.argv[1]))
out = {}
for key, a in inp.items():
    if not key.startswith("A_"):
        continue
    tag = key[2:]
    A = torch.from_numpy(a)
    if "_t" in tag:
        A = A.mT  # a transposed (non-contiguous) view
    spd = A @ A.mT + A.shape[-1] * torch.eye(A.shape[-1], dtype=A.dtype)
    rhs = torch.from_numpy(inp["B_" + tag])
    out[f"{tag}/chol"] = torch.linalg.cholesky(spd).numpy()
    out[f"{tag}/chol_upper"] = torch.linalg.cholesky(spd, upper=True).numpy()
    out[f"{tag}/chol_info"] = torch.linalg.cholesky_ex(-spd).info.numpy()
    LU, piv = torch.linalg.lu_factor(A)
    out[f"{tag}/lu"], out[f"{tag}/piv"] = LU.numpy(), piv.numpy()
    out[f"{tag}/lu_solve"] = torch.linalg.lu_solve(LU, piv, rhs).numpy()
    out[f"{tag}/lu_solve_adjoint"] = torch.linalg.lu_solve(LU, piv, rhs, adjoint=True).numpy()
    out[f"{tag}/lu_solve_t"] = torch.linalg.lu_solve(LU.mT.contiguous().mT, piv, rhs.mT.contiguous().mT).numpy()
    out[f"{tag}/solve"] = torch.linalg.solve(A, rhs).numpy()
    out[f"{tag}/solve_right"] = torch.linalg.solve(A, rhs.mT, left=False).numpy()
    out[f"{tag}/inv"] = torch.linalg.inv(A).numpy()
    out[f"{tag}/det"] = torch.linalg.det(A).numpy()
    s, l = torch.linalg.slogdet(A)
    out[f"{tag}/slogdet"] = np.stack([s.numpy(), l.numpy()])
    out[f"{tag}/tri"] = torch.linalg.solve_triangular(torch.linalg.cholesky(spd), rhs, upper=False).numpy()
    w, V = torch.linalg.eigh(spd)
    out[f"{tag}/eigvals"], out[f"{tag}/eigvecs"] = w.numpy(), V.numpy()
    out[f"{tag}/eigvalsh_U"] = torch.linalg.eigvalsh(spd, UPLO="U").numpy()
    U, S, Vh = torch.linalg.svd(A, full_matrices=False)
    out[f"{tag}/svd_U"], out[f"{tag}/svd_S"], out[f"{tag}/svd_Vh"] = U.numpy(), S.numpy(), Vh.numpy()
    out[f"{tag}/svdvals_wide"] = torch.linalg.svdvals(A[..., :-1, :]).numpy()
    Q, R = torch.linalg.qr(A)
    out[f"{tag}/qr_Q"], out[f"{tag}/qr_R"] = Q.numpy(), R.numpy()
    Qc, Rc = torch.linalg.qr(A[..., :, :-1], mode="complete")
    out[f"{tag}/qrc_Q"], out[f"{tag}/qrc_R"] = Qc.numpy(), Rc.numpy()
    h, tau = torch.geqrf(A)
    out[f"{tag}/geqrf_h"], out[f"{tag}/geqrf_tau"] = h.numpy(), tau.numpy()
    out[f"{tag}/householder"] = torch.linalg.householder_product(h, tau).numpy()
    out[f"{tag}/ormqr"] = torch.ormqr(h, tau, rhs, left=True, transpose=True).numpy()
    tall = torch.cat([A, A.flip(-1)], -2)
    out[f"{tag}/lstsq"] = torch.linalg.lstsq(tall, torch.cat([rhs, rhs], -2)).solution.numpy()
errors = {}
for name, fn in {
    "singular_solve": lambda: torch.linalg.solve(torch.zeros(2, 2), torch.ones(2, 1)),
    "not_pd": lambda: torch.linalg.cholesky(-torch.eye(3)),
    "singular_inv": lambda: torch.linalg.inv(torch.ones(3, 3, dtype=torch.float64)),
}.items():
    try:
        fn()
        errors[name] = "no error"
    except Exception as e:
        errors[name] = f"{type(e).__name__}: {e}"
out["errors"] = np.array([f"{k}={v}" for k, v in sorted(errors.items())])
np.savez(sys.argv[2], **out)
"""

VECTORS_UP_TO_SIGN = ("eigvecs", "svd_U", "svd_Vh")


def _inputs():
    rng = np.random.default_rng(7)
    inputs = {}
    for n in (1, 5, 33, 70):
        for dt in (np.float64, np.float32):
            for layout in ("", "_t"):
                tag = f"{n}_{np.dtype(dt).name}{layout}"
                inputs["A_" + tag] = rng.standard_normal((3, n, n)).astype(dt)
                inputs["B_" + tag] = rng.standard_normal((3, n, 4)).astype(dt)
    return inputs


def _tolerance(name, ref):
    eps = np.finfo(ref.dtype).eps if ref.dtype.kind == "f" else 0.0
    n = max(ref.shape[-1] if ref.ndim else 1, 1)
    # LAPACK's backward-error bounds grow with n; solves and inverses also with the condition
    # number, and eigen/singular vectors with the inverse gap between neighbouring values, which
    # for these random matrices stay under 1e4
    scale = 1e4 if name in ("solve", "solve_right", "lu_solve", "lu_solve_adjoint", "lu_solve_t", "inv", "lstsq",
                            "lu") + VECTORS_UP_TO_SIGN else 50
    return eps * n * scale


def _close(name, ours, ref):
    if ref.dtype.kind in "iub":
        return ours.shape == ref.shape and np.array_equal(ours, ref)
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False
    if name in VECTORS_UP_TO_SIGN:
        axis = -1 if name == "svd_Vh" else -2  # Vh's rows, the others' columns carry the sign
        dots = np.sum(ours.astype(np.float64) * ref, axis=axis, keepdims=True)
        ours = ours * np.where(dots < 0, -1, 1).astype(ours.dtype)
    same = (ours == ref) | (np.isnan(ours) & np.isnan(ref))  # infinities (a float32 det overflows) and NaN
    finite = np.isfinite(ref)
    mag = max(float(np.max(np.abs(ref[finite]))) if finite.any() else 0.0, 1.0)
    with np.errstate(invalid="ignore"):
        near = np.abs(ours.astype(np.float64) - ref) <= _tolerance(name, ref) * mag
    return bool(np.all(same | near))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_npz_side_by_side(PROGRAM, _inputs(), tmp_path_factory.mktemp("linalg"))


def test_decompositions_agree_with_upstream(results):
    ours, ref = results
    assert ours.keys() == ref.keys()
    bad = [k for k in ref if k != "errors" and not _close(k.split("/")[1], ours[k], ref[k])]
    assert not bad, bad


def test_errors_are_upstreams(results):
    ours, ref = results
    assert list(ours["errors"]) == list(ref["errors"])
    assert all("LinAlgError" in e for e in ref["errors"])


def test_the_comparison_can_fail(results):
    _, ref = results
    lu = ref["33_float64/lu"]
    assert _close("lu", lu, lu)
    assert not _close("lu", lu * (1 + 1e-6), lu)  # well above LU's float64 tolerance
    assert not _close("piv", ref["33_float64/piv"][..., ::-1], ref["33_float64/piv"])
    v = ref["33_float64/eigvecs"]
    assert _close("eigvecs", -v, v)  # a column's sign is free
    assert not _close("eigvecs", v[..., ::-1], v)  # its direction is not

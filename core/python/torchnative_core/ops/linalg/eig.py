"""The general (non-symmetric) eigenproblem: linalg.eig and linalg.eigvals with their out= forms.

The kernel (the cpu backend's eig.rs) is LAPACK's geev on faer; here are upstream's checks
(BatchLinearAlgebra.cpp's linalg_eig_out and linalg_eigvals_out), the complex output dtypes and
the out= rules, which demand only that the complex result can be cast to each out tensor."""

from __future__ import annotations

from .. import base as B
from .. import impl
from .decompositions import _empty_fortran, _tname
from ..forms.out_variants import write_out


def _torch():
    import torch

    return torch


def _complex_of(dtype):
    torch = _torch()
    return {torch.float32: torch.complex64, torch.float64: torch.complex128,
            torch.complex64: torch.complex64, torch.complex128: torch.complex128}.get(dtype)


def _check(A, name):
    torch = _torch()
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if not (A.is_floating_point() or A.is_complex()):
        # upstream asks toComplexType for the integer type first
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(A.dtype)}")
    if A.dtype in (torch.float16, torch.bfloat16, torch.complex32):
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{_tname(A.dtype)}'")
    if A.numel() and not bool(torch.isfinite(A).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    return _complex_of(A.dtype)


def _eig(A, vectors, name):
    cdt = _check(A, name)
    batch, n = list(A.shape[:-2]), A.shape[-1]
    dev = B.device_of(A)
    W = B.empty(batch + [n], cdt, dev)
    if not vectors:
        B.launch("_linalg_eigvals", (A.detach(),), (W,))
        return W
    V = _empty_fortran(batch + [n, n], cdt, dev)  # LAPACK's column-major layout, as upstream
    B.launch("linalg_eig", (A.detach(),), (W, V))
    return W, V


@impl("linalg_eig")
def linalg_eig(self):
    from torch.return_types import linalg_eig as ret

    return ret(_eig(self, True, "linalg.eig"))


@impl("_linalg_eigvals")
def _linalg_eigvals(self):
    return _eig(self, False, "linalg.eigvals")


@impl("linalg_eigvals")
def linalg_eigvals(self):
    torch = _torch()
    # upstream computes the vectors too when a gradient may be asked for (they enter the backward)
    if torch.is_grad_enabled() and self.requires_grad:
        return B.door("linalg_eig", self)[0]
    return B.door("_linalg_eigvals", self)


def _castable(result, out, what, name):
    torch = _torch()
    if not torch.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{name}: Expected {what} to be safely castable from {_tname(result.dtype)} dtype, but got "
                           f"{what} with dtype {_tname(out.dtype)}")


@impl("linalg_eig.out")
def linalg_eig_out(self, eigenvalues, eigenvectors):
    from torch.return_types import linalg_eig as ret

    cdt = _check(self, "linalg.eig")
    probe = B.empty([0], cdt, B.device_of(self))
    _castable(probe, eigenvalues, "eigenvalues", "torch.linalg.eig")
    _castable(probe, eigenvectors, "eigenvectors", "torch.linalg.eig")
    W, V = B.door("linalg_eig", self)
    write_out(eigenvalues, W)
    write_out(eigenvectors, V)
    return ret((eigenvalues, eigenvectors))


@impl("linalg_eigvals.out")
def linalg_eigvals_out(self, out):
    cdt = _check(self, "linalg.eigvals")
    _castable(B.empty([0], cdt, B.device_of(self)), out, "eigenvalues", "torch.linalg.eigvals")
    return write_out(out, B.door("_linalg_eigvals", self))

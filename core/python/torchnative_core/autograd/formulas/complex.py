"""Complex tensors: the views between complex and real, conjugation, polar form and the FFT
primitives (derivatives.yaml and FunctionsManual.cpp: angle_backward, polar_backward,
fft_r2c_backward, fft_c2r_backward). Gradients follow upstream's convention for a real loss:
the conjugate Wirtinger derivative, so a holomorphic f gives grad * conj(f'(z))."""

from __future__ import annotations

import torch

from ..formula import COMPLEX_READY, formula


def _aten(name):
    return getattr(torch.ops.aten, name).default


@formula("angle", save=("self",))
def _(s, g):
    x = s.self
    if not x.is_complex():
        return torch.zeros_like(x)
    return torch.where(x == 0, torch.zeros((), dtype=x.dtype), g * x / x.abs().pow(2) * 1j)


@formula("view_as_real")
def _(s, g):
    return torch.view_as_complex(g.contiguous())


@formula("view_as_complex")
def _(s, g):
    return torch.view_as_real(g.contiguous())


@formula("_conj", "_conj_physical")  # conj and conj_physical compose them
def _(s, g):
    return g.conj()


@formula("polar", save=("result",))
def _(s, g):
    r, gc = s.result, g.conj()
    return (gc * r.sgn()).real if s.needs(0) else None, (gc * (r * 1j)).real if s.needs(1) else None


@formula("complex")
def _(s, g):
    return (g.real if s.needs(0) else None), (g.imag if s.needs(1) else None)


@formula("_fft_c2c")
def _(s, g):
    return _aten("_fft_c2c")(g, list(s.dim), s.normalization, not s.forward)


@formula("_fft_r2c")
def _(s, g):
    dims = list(s.dim)
    if not s.onesided:
        return _aten("_fft_c2c")(g, dims, s.normalization, False).real
    # the one-sided half, padded with zeros to the signal's length, transformed back
    last = dims[-1] % g.dim()
    full = s.self_sizes[last]
    if full > g.shape[last]:
        padded = g.new_zeros([full if d == last else n for d, n in enumerate(g.shape)])
        padded.narrow(last, 0, g.shape[last]).copy_(g)
        g = padded
    return _aten("_fft_c2c")(g, dims, s.normalization, False).real


@formula("_fft_c2r")
def _(s, g):
    dims = list(s.dim)
    gi = _aten("_fft_r2c")(g, dims, s.normalization, True)
    last = dims[-1] % g.dim()
    double = g.shape[last] - gi.shape[last]  # the frequencies whose mirror image the half omits
    if double > 0:
        gi.narrow(last, 1, double).mul_(2)
    return gi


COMPLEX_READY.update({"angle", "view_as_real", "view_as_complex", "_conj",
                      "_conj_physical", "polar", "complex", "_fft_c2c", "_fft_r2c", "_fft_c2r"})

"""Complex tensors and torch.fft: a fixed set of programs, each run on whichever torch runs this
file (upstream's in the reference environment, ours in .venv), writing what each produced:
the dtype, shape and values (a complex result as its real view) or the exception type and message.

    python tests/programs/complex_fft_cases.py OUT.npz

tests/test_complex_fft.py runs it on both sides and compares.
"""

import sys

import torch
from npz_outcomes import ramp, write_npz_outcomes




def cramp(*shape, dtype=torch.complex64):
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(ramp(*shape, dtype=real), ramp(*shape, scale=0.53, dtype=real))


def seeded(fn):
    def run():
        torch.manual_seed(7)
        return fn()
    return run


z = lambda: cramp(3, 4)  # noqa: E731
w = lambda: cramp(3, 4) * 0.5 - 0.25j  # noqa: E731

def _grads(f):
    """The gradients of the loss `f(z, w)` with respect to two complex leaves, concatenated."""
    z, w = cramp(12).requires_grad_(), (cramp(12, dtype=torch.complex64) * 0.7 + 0.4j).detach().requires_grad_()
    f(z, w).backward()
    return torch.cat([t.grad if t.grad is not None else torch.zeros(12, dtype=torch.complex64) for t in (z, w)])


CASES = {
    # construction and conversion
    "tensor_literal": lambda: torch.tensor([1 + 2j, -3.5 + 0.25j, 0j]),
    "tensor_literal_c128": lambda: torch.tensor([[1 + 2j], [3 - 1j]], dtype=torch.complex128),
    "tensor_real_values_as_complex": lambda: torch.tensor([1.0, 2.0], dtype=torch.complex64),
    "complex_fn": lambda: torch.complex(ramp(5), ramp(5, scale=0.2)),
    "polar": lambda: torch.polar(ramp(6).abs(), ramp(6, scale=0.9)),
    "view_as_real": lambda: torch.view_as_real(z()),
    "view_as_complex": lambda: torch.view_as_complex(ramp(3, 2)),
    "real_imag": lambda: torch.stack([z().real, z().imag]),
    "zeros_ones_full": lambda: torch.stack([torch.zeros(2, dtype=torch.complex64), torch.ones(2, dtype=torch.complex64),
                                            torch.full((2,), 1.5 - 2j)]),
    "to_complex": lambda: ramp(4).to(torch.complex128),
    "complex_to_float": lambda: z().to(torch.float32),
    "complex_to_bool": lambda: torch.tensor([0j, 1j, 2 + 0j]).to(torch.bool),
    "complex_widen": lambda: z().to(torch.complex128),
    "randn_complex": seeded(lambda: torch.randn(3, 5, dtype=torch.complex64)),
    "rand_complex": seeded(lambda: torch.rand(4, dtype=torch.complex128)),
    "item": lambda: torch.tensor([complex(z()[1, 2].item())], dtype=torch.complex128),
    # arithmetic and promotion
    "add": lambda: z() + w(),
    "sub_alpha": lambda: torch.sub(z(), w(), alpha=2),
    "add_complex_alpha": lambda: torch.add(z(), w(), alpha=1j),
    "mul": lambda: z() * w(),
    "div": lambda: z() / w(),
    "div_by_zero": lambda: torch.tensor([1 + 1j, 0j, 1 + 0j]) / torch.tensor([0j, 0j, 1e-30 + 0j]),
    "div_large": lambda: torch.tensor([1e30 + 1e30j, 3 + 4j]) / torch.tensor([1e30 - 1e29j, 1e-20 + 2e-20j]),
    "broadcast_mul": lambda: z() * cramp(4),
    "python_complex_scalar": lambda: ramp(3) * (2 - 1j),
    "real_plus_complex": lambda: ramp(3, 4, dtype=torch.float64) + z(),
    "int_plus_complex": lambda: torch.arange(4) + 1j,
    "rsub_scalar": lambda: 1 - z(),
    "inplace_mul": lambda: z().mul_(w()),
    "inplace_add": lambda: z().add_(w(), alpha=3),
    "neg": lambda: -z(),
    "conj": lambda: z().conj(),
    "conj_physical": lambda: torch.conj_physical(z()),
    "abs": lambda: z().abs(),
    "angle": lambda: z().angle(),
    "sgn": lambda: torch.sgn(torch.tensor([3 + 4j, 0j, -2j])),
    "exp": lambda: z().exp(),
    "log": lambda: z().log(),
    "sqrt": lambda: torch.tensor([4 + 0j, -4 + 0j, -4 - 0j, 3 + 4j, -1e-3j]).sqrt(),
    "reciprocal": lambda: z().reciprocal(),
    "sin_cos": lambda: torch.stack([z().sin(), z().cos()]),
    "tanh_sigmoid": lambda: torch.stack([z().tanh(), z().sigmoid()]),
    "pow_2": lambda: z() ** 2,
    "eq_ne": lambda: torch.stack([z() == z(), z() != w()]),
    "isnan_isfinite": lambda: torch.stack([torch.tensor([complex("nan"), 1j, complex("inf")]).isnan(),
                                           torch.tensor([complex("nan"), 1j, complex("inf")]).isfinite()]),
    "where": lambda: torch.where(ramp(3, 4) > 0, z(), w()),
    "sum_dim": lambda: z().sum(0),
    "sum_all": lambda: z().sum(),
    "mean": lambda: z().mean(-1),
    "matmul": lambda: z() @ cramp(4, 2),
    "bmm": lambda: torch.bmm(cramp(2, 3, 4), cramp(2, 4, 5)),
    "outer": lambda: torch.outer(cramp(3), cramp(2)),
    "cat_index": lambda: torch.cat([z(), w()])[1:4, ::2],
    "allclose": lambda: torch.tensor([torch.allclose(z(), z() + 1e-9)]),
    "rope": lambda: torch.view_as_real(
        torch.view_as_complex(ramp(2, 5, 8).reshape(2, 5, 4, 2)) * torch.polar(torch.ones(5, 4), ramp(5, 4))
    ).flatten(2),
    # torch.fft
    "fft_real": lambda: torch.fft.fft(ramp(8)),
    "fft_complex": lambda: torch.fft.fft(cramp(3, 7)),
    "fft_n_pad": lambda: torch.fft.fft(ramp(5), n=8),
    "fft_n_trim": lambda: torch.fft.fft(cramp(9), n=4),
    "fft_dim0": lambda: torch.fft.fft(cramp(6, 3), dim=0),
    "fft_ortho": lambda: torch.fft.fft(ramp(10), norm="ortho"),
    "fft_forward": lambda: torch.fft.fft(cramp(6), norm="forward"),
    "ifft_real": lambda: torch.fft.ifft(ramp(6)),
    "ifft_complex": lambda: torch.fft.ifft(cramp(2, 5)),
    "fft_roundtrip": lambda: torch.fft.ifft(torch.fft.fft(cramp(12))),
    "rfft_even": lambda: torch.fft.rfft(ramp(3, 8)),
    "rfft_odd": lambda: torch.fft.rfft(ramp(9)),
    "rfft_f64": lambda: torch.fft.rfft(ramp(16, dtype=torch.float64)),
    "rfft_int": lambda: torch.fft.rfft(torch.arange(6)),
    "rfft_transposed": lambda: torch.fft.rfft(ramp(5, 6).t(), dim=0),
    "irfft_even": lambda: torch.fft.irfft(torch.fft.rfft(ramp(8))),
    "irfft_n_odd": lambda: torch.fft.irfft(cramp(5), n=9),
    "irfft_default": lambda: torch.fft.irfft(cramp(2, 5)),
    "hfft": lambda: torch.fft.hfft(cramp(5)),
    "hfft_n": lambda: torch.fft.hfft(cramp(4), n=7),
    "ihfft": lambda: torch.fft.ihfft(ramp(7)),
    "fft2": lambda: torch.fft.fft2(cramp(2, 4, 6)),
    "ifft2_s": lambda: torch.fft.ifft2(cramp(4, 6), s=(3, 8)),
    "fftn_all": lambda: torch.fft.fftn(ramp(3, 4, 5)),
    "fftn_dims": lambda: torch.fft.fftn(cramp(3, 4, 5), dim=(0, 2), norm="ortho"),
    "fftn_s_minus1": lambda: torch.fft.fftn(cramp(3, 4), s=(-1, 6)),
    "rfft2": lambda: torch.fft.rfft2(ramp(2, 6, 8)),
    "rfftn": lambda: torch.fft.rfftn(ramp(4, 5, 6), dim=(1, 2)),
    "irfft2": lambda: torch.fft.irfft2(torch.fft.rfft2(ramp(6, 8))),
    "irfftn_s": lambda: torch.fft.irfftn(cramp(4, 5), s=(4, 9)),
    "hfft2": lambda: torch.fft.hfft2(cramp(3, 4)),
    "ihfft2": lambda: torch.fft.ihfft2(ramp(4, 6)),
    "ihfftn": lambda: torch.fft.ihfftn(ramp(3, 4, 5)),
    "fft_large_prime": lambda: torch.fft.fft(ramp(97, dtype=torch.float64)),
    "fft_large": lambda: torch.fft.rfft(ramp(4, 1000)),
    "fftfreq": lambda: torch.fft.fftfreq(7, d=0.1),
    "fftfreq_even": lambda: torch.fft.fftfreq(8, dtype=torch.float64),
    "rfftfreq": lambda: torch.fft.rfftfreq(9, d=2.0),
    "fftshift": lambda: torch.fft.fftshift(torch.fft.fftfreq(6)),
    "fnet_mixing": lambda: torch.fft.fft(torch.fft.fft(ramp(2, 5, 8), dim=-1), dim=-2).real,
    # gradients: upstream's conjugate convention (grad * conj(f'(z))) through each formula
    **{"grad_" + k: (lambda f=f: _grads(f)) for k, f in {
        "mul_abs": lambda z, w: (z * w).abs().sum(),
        "add_real_imag": lambda z, w: (z + w).real.sum() + (z - 2 * w).imag.sum(),
        "div_angle": lambda z, w: (z / w).angle().sum(),
        "view_as_real": lambda z, w: (torch.view_as_real(z * w) ** 2).sum(),
        "exp_log": lambda z, w: (z.exp() + (w + 3).log()).abs().sum(),
        "sqrt_reciprocal": lambda z, w: (z.sqrt() + w.reciprocal()).abs().sum(),
        "trig": lambda z, w: (z.sin() * w.cos() + (0.3 * z).tanh() - w.sigmoid()).abs().sum(),
        "pow": lambda z, w: (z ** 3 + w ** 2).abs().sum(),
        "conj": lambda z, w: (z.conj() * w + torch.conj_physical(w)).real.sum(),
        "matmul": lambda z, w: (z.view(3, 4) @ w.view(4, 3)).abs().sum(),
        "bmm": lambda z, w: torch.bmm(z.view(1, 3, 4), w.view(1, 4, 3)).abs().sum(),
        "sum_mean": lambda z, w: (z.sum() * w.mean()).abs(),
        "polar_complex": lambda z, w: torch.view_as_real(torch.polar(z.abs(), w.angle()) + torch.complex(z.real, w.imag)).sum(),
        "real_to_complex": lambda z, w: (z.real * w).abs().sum(),
        "fft": lambda z, w: (torch.fft.fft(z) * w).abs().sum(),
        "fft2_ortho": lambda z, w: torch.fft.fft2(z.view(3, 4) * w.view(3, 4), norm="ortho").abs().sum(),
        "rfft": lambda z, w: torch.fft.rfft(z.real * w.imag).abs().sum(),
        "irfft": lambda z, w: (torch.fft.irfft(z * w) ** 2).sum(),
        "hfft_ihfft": lambda z, w: torch.fft.hfft(z).pow(2).sum() + torch.fft.ihfft(w.real).abs().sum(),
        "rfftn_irfftn": lambda z, w: torch.fft.irfftn(torch.fft.rfftn(z.real.view(3, 4)) * w.view(3, 4)[:, :3]).pow(2).sum(),
    }.items()},
    # errors, as upstream's
    "err_rfft_complex": lambda: torch.fft.rfft(cramp(4)),
    "err_n_zero": lambda: torch.fft.fft(ramp(4), n=0),
    "err_norm": lambda: torch.fft.fft(ramp(4), norm="sideways"),
    "err_dim": lambda: torch.fft.fft(ramp(4), dim=1),
    "err_dup_dims": lambda: torch.fft.fftn(ramp(4, 4), dim=(0, 0)),
    "err_half": lambda: torch.fft.fft(ramp(4, dtype=torch.float16)),
    "err_view_as_complex": lambda: torch.view_as_complex(ramp(3, 3)),
    "err_irfftn_no_axes": lambda: torch.fft.irfftn(cramp(4), dim=()),
}


if __name__ == "__main__":
    write_npz_outcomes(CASES, sys.argv[1])

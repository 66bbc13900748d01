"""igamma/igammac, torch.gradient, histogram/histogramdd and stft/istft: a fixed set of programs,
each run on whichever torch runs this file (upstream's in the reference environment, ours in
.venv), writing what each produced: the dtype, shape and values (a complex result as its real
view; a tuple or list of tensors concatenated flat) or the exception type and message.

    python tests/programs/linalg_special_cases.py OUT.npz

tests/test_linalg_special_ops.py runs it on both sides and compares.
"""

import sys

import torch
from npz_outcomes import ramp, write_npz_outcomes




INF, NAN = float("inf"), float("nan")
GRID_A = torch.tensor([0.0, 1e-3, 0.1, 0.5, 1.0, 1.5, 3.0, 7.5, 25.0, 30.0, 150.0, 250.0, 1000.0, -1.0, INF, NAN],
                      dtype=torch.float64)
GRID_X = torch.tensor([0.0, 1e-4, 0.3, 0.5, 0.7, 1.0, 1.05, 2.0, 6.0, 24.0, 31.0, 140.0, 260.0, 1010.0, -0.5, INF,
                       NAN], dtype=torch.float64)


def grid(op, dtype):
    return op(GRID_A.to(dtype).unsqueeze(1), GRID_X.to(dtype))


def grad_other(op, dtype=torch.float64):
    a = ramp(3, 4, dtype=dtype, lo=0.2) * 3
    x = (ramp(4, dtype=dtype, scale=0.71, lo=0.1) * 2).requires_grad_()
    op(a, x).sum().backward()
    return x.grad


def grad_self(op):
    a = torch.tensor([1.5, 2.0], requires_grad=True)
    op(a, torch.tensor([0.5, 3.0])).sum().backward()
    return a.grad


def out_form(op):
    out = torch.empty(0)
    r = op(torch.tensor([1.5, 4.0]), torch.tensor([2.0, 3.0]), out=out)
    assert r is out
    return out


def gradients(*args, **kw):
    def run():
        return torch.cat([g.reshape(-1) for g in torch.gradient(*args, **kw)])
    return run


def grad_through_gradient():
    x = ramp(4, 5, dtype=torch.float64).requires_grad_()
    gs = torch.gradient(x, spacing=[torch.tensor([0.0, 0.5, 1.5, 1.7], dtype=torch.float64),
                                    torch.arange(5, dtype=torch.float64) * 2], edge_order=2)
    (gs[0] * gs[1].cos()).sum().backward()
    return x.grad


def hist(*args, **kw):
    def run():
        h, e = torch.histogram(*args, **kw)
        return torch.cat([h.reshape(-1), e.to(h.dtype)])
    return run


def histdd(*args, **kw):
    def run():
        h, es = torch.histogramdd(*args, **kw)
        return torch.cat([h.reshape(-1)] + [e.to(h.dtype) for e in es])
    return run


SIG = ramp(40, scale=0.77)
SIG2 = ramp(2, 33, scale=0.41, dtype=torch.float64)
HANN = torch.hann_window(8)


def stft_grad():
    x = ramp(24, scale=0.3, dtype=torch.float64).requires_grad_()
    s = torch.stft(x, 8, hop_length=3, window=torch.hann_window(8, dtype=torch.float64), return_complex=True)
    s.abs().pow(2).sum().backward()
    return x.grad


def istft_roundtrip(**kw):
    def run():
        s = torch.stft(SIG, 8, hop_length=2, window=HANN, return_complex=True, **kw)
        return torch.istft(s, 8, hop_length=2, window=HANN, length=40, **kw)
    return run


CASES = {
    # igamma / igammac: every branch of the algorithm, reduced dtypes, promotion, aliases, forms
    "igamma_grid_f64": lambda: grid(torch.igamma, torch.float64),
    "igammac_grid_f64": lambda: grid(torch.igammac, torch.float64),
    "igamma_grid_f32": lambda: grid(torch.igamma, torch.float32),
    "igammac_grid_f32": lambda: grid(torch.igammac, torch.float32),
    "igamma_grid_f16": lambda: grid(torch.igamma, torch.float16),
    "igammac_grid_bf16": lambda: grid(torch.igammac, torch.bfloat16),
    "igamma_mixed_promotion": lambda: torch.igamma(torch.tensor([1.5, 2.0]), torch.tensor([0.5, 3.0], dtype=torch.float64)),
    "igamma_int_float": lambda: torch.igamma(torch.tensor([1, 2]), torch.tensor([0.5, 3.0])),
    "igamma_0dim": lambda: torch.igammac(torch.tensor(2.0, dtype=torch.float64), torch.tensor([0.5, 3.0])),
    "igamma_long": lambda: torch.igamma(torch.tensor([1, 2]), torch.tensor([1, 2])),
    "igammac_bool": lambda: torch.igammac(torch.tensor([True]), torch.tensor([True])),
    "igamma_complex": lambda: torch.igamma(torch.tensor([1 + 1j]), torch.tensor([1.0])),
    "igamma_shapes": lambda: torch.igamma(torch.ones(2, 3), torch.ones(4)),
    "gammainc": lambda: torch.special.gammainc(ramp(5, lo=0.1) * 4, ramp(5, scale=0.9, lo=0.05) * 6),
    "gammaincc": lambda: torch.special.gammaincc(ramp(5, lo=0.1) * 4, ramp(5, scale=0.9, lo=0.05) * 6),
    "igamma_out": lambda: out_form(torch.igamma),
    "gammaincc_out": lambda: out_form(torch.special.gammaincc),
    "igamma_inplace": lambda: torch.tensor([1.5, 4.0]).igamma_(torch.tensor([2.0, 3.0])),
    "igammac_inplace_broadcast_refused": lambda: torch.ones(3).igammac_(torch.ones(2, 3)),
    "igamma_grad_other": lambda: grad_other(torch.igamma),
    "igammac_grad_other": lambda: grad_other(torch.igammac),
    "igammac_grad_other_f32": lambda: grad_other(torch.igammac, torch.float32),
    "igamma_grad_self": lambda: grad_self(torch.igamma),
    "igammac_grad_self": lambda: grad_self(torch.igammac),
    # torch.gradient: every overload, both edge orders, errors
    "gradient_default": gradients(ramp(4, 5)),
    "gradient_edge2": gradients(ramp(4, 5, dtype=torch.float64), edge_order=2),
    "gradient_scalar_dim": gradients(ramp(4, 5), spacing=0.5, dim=1),
    "gradient_scalar_dims": gradients(ramp(3, 4, 5), spacing=2, dim=[0, -1], edge_order=2),
    "gradient_dims": gradients(ramp(3, 4, 5), dim=[2, 0]),
    "gradient_list": gradients(ramp(3, 4), spacing=[1.5, 0.25]),
    "gradient_list_dims": gradients(ramp(3, 4), spacing=[3.0], dim=[1]),
    "gradient_coords": gradients(ramp(4, 5, dtype=torch.float64), spacing=[torch.tensor([0.0, 1.0, 1.5, 3.5], dtype=torch.float64),
                                                                              torch.tensor([0.0, 0.1, 0.3, 0.6, 1.0], dtype=torch.float64)]),
    "gradient_coords_edge2": gradients(ramp(5, dtype=torch.float64), spacing=(torch.tensor([0.0, 1.0, 1.5, 3.5, 4.0], dtype=torch.float64),),
                                       edge_order=2),
    "gradient_coords_dim": gradients(ramp(4, 5), spacing=[torch.tensor([0.0, 1.0, 1.5, 3.5])], dim=0),
    "gradient_int": gradients(torch.tensor([1, 4, 9, 16, 25])),
    "gradient_int_spacing": gradients(torch.tensor([[1, 4, 9], [2, 3, 7]]), spacing=2),
    "gradient_complex": gradients(torch.tensor([1 + 1j, 2 - 1j, 4 + 0.5j])),
    "gradient_grad": grad_through_gradient,
    "gradient_uint8": gradients(torch.tensor([1, 2, 3], dtype=torch.uint8)),
    "gradient_edge3": gradients(ramp(5), edge_order=3),
    "gradient_too_short": gradients(ramp(2, 5), edge_order=2),
    "gradient_spacing_len": gradients(ramp(3, 4), spacing=[1.0, 2.0, 3.0]),
    "gradient_spacing_dims_len": gradients(ramp(3, 4), spacing=[1.0, 2.0], dim=[0]),
    "gradient_dup_dims": gradients(ramp(3, 4), dim=[0, 0]),
    "gradient_bad_dim": gradients(ramp(3, 4), dim=2),
    "gradient_coords_2d": gradients(ramp(4), spacing=[torch.ones(2, 2)]),
    # histogram / histogramdd
    "hist_bins": hist(ramp(50, scale=0.61), bins=7),
    "hist_f64_range": hist(ramp(50, scale=0.61, dtype=torch.float64), bins=5, range=(-0.5, 0.75)),
    "hist_weight_density": hist(ramp(6, 5), bins=4, weight=ramp(6, 5, scale=0.13, lo=0.0), density=True),
    "hist_tensor_bins": hist(ramp(40), torch.tensor([-1.0, -0.2, 0.0, 0.4, 1.2])),
    "hist_tensor_bins_density": hist(ramp(40), torch.tensor([-1.0, -0.2, 0.0, 0.4, 1.2]), density=True),
    "hist_edges_inclusive": hist(torch.tensor([0.0, 0.5, 1.0, 1.0, NAN, 2.0, -1.0]), bins=2, range=(0.0, 1.0)),
    "hist_constant": hist(torch.full((5,), 3.0), bins=4),
    "hist_empty": hist(torch.empty(0), bins=3),
    "hist_int": hist(torch.arange(5), bins=3),
    "hist_half": hist(ramp(5, dtype=torch.float16), bins=3),
    "hist_half_range": hist(ramp(5, dtype=torch.float16), bins=3, range=(-1.0, 1.0)),
    "hist_zero_bins": hist(ramp(5), bins=0),
    "hist_bad_range": hist(ramp(5), bins=3, range=(1.0, 0.0)),
    "hist_inf_range": hist(ramp(5), bins=3, range=(0.0, INF)),
    "hist_nan_data": hist(torch.tensor([1.0, NAN]), bins=3),
    "hist_dtype_mismatch": hist(ramp(5), torch.tensor([0.0, 1.0], dtype=torch.float64)),
    "hist_weight_shape": hist(ramp(5), bins=3, weight=torch.ones(4)),
    "hist_weight_dtype": hist(ramp(5), bins=3, weight=torch.ones(5, dtype=torch.float64)),
    "histdd_ints": histdd(ramp(30, 2, scale=0.29), bins=[3, 4]),
    "histdd_int": histdd(ramp(10, 3, 3, scale=0.29, dtype=torch.float64), bins=2, density=True),
    "histdd_range_weight": histdd(ramp(20, 2, scale=0.47), bins=[2, 3], range=[-1.0, 1.0, 0.0, 1.0],
                                  weight=ramp(20, scale=0.3, lo=0.0)),
    "histdd_tensors": histdd(ramp(25, 2, scale=0.47), bins=[torch.tensor([-1.0, 0.0, 1.0]), torch.tensor([-2.0, -0.5, 0.5, 2.0])]),
    "histdd_tensors_density": histdd(ramp(25, 2, scale=0.47), bins=[torch.tensor([-1.0, 0.0, 1.0]), torch.tensor([-2.0, 2.0])],
                                     density=True),
    "histdd_bins_len": histdd(ramp(10, 2), bins=[3]),
    "histdd_1d": histdd(ramp(10), bins=[3]),
    "histdd_range_len": histdd(ramp(10, 2), bins=[3, 3], range=[0.0, 1.0]),
    "histdd_bin_edges_op": lambda: torch.cat(torch.ops.aten._histogramdd_bin_edges(ramp(10, 2), [2, 3])),
    # stft / istft
    "stft_default": lambda: torch.stft(SIG, 8, return_complex=True),
    "stft_window_hop": lambda: torch.stft(SIG, 8, hop_length=3, window=HANN, return_complex=True),
    "stft_short_window": lambda: torch.stft(SIG2, 10, hop_length=4, win_length=6, window=torch.hann_window(6, dtype=torch.float64),
                                            return_complex=True),
    "stft_short_no_window": lambda: torch.stft(SIG, 10, win_length=7, return_complex=True),
    "stft_no_center": lambda: torch.stft(SIG, 8, center=False, normalized=True, return_complex=True),
    "stft_constant_pad": lambda: torch.stft(SIG2, 8, pad_mode="constant", onesided=False, return_complex=True),
    "stft_real_view": lambda: torch.stft(SIG, 8, hop_length=4, return_complex=False),
    "stft_complex_input": lambda: torch.stft(SIG.to(torch.complex64) * (1 - 0.5j), 8, return_complex=True),
    "stft_align": lambda: torch.stft(SIG, 8, win_length=4, center=False, align_to_window=True, return_complex=True),
    "stft_grad": stft_grad,
    "stft_need_return_complex": lambda: torch.stft(SIG, 8),
    "stft_nfft_too_big": lambda: torch.stft(SIG, 80, center=False, return_complex=True),
    "stft_hop_zero": lambda: torch.stft(SIG, 8, hop_length=0, return_complex=True),
    "stft_win_too_long": lambda: torch.stft(SIG, 8, win_length=9, return_complex=True),
    "stft_window_size": lambda: torch.stft(SIG, 8, window=torch.ones(5), return_complex=True),
    "stft_int": lambda: torch.stft(torch.arange(20), 8, return_complex=True),
    "stft_3d": lambda: torch.stft(torch.ones(2, 2, 20), 8, return_complex=True),
    "stft_onesided_complex": lambda: torch.stft(SIG + 0j, 8, onesided=True, return_complex=True),
    "stft_align_center": lambda: torch.stft(SIG, 8, align_to_window=True, return_complex=True),
    "istft_roundtrip": istft_roundtrip(),
    "istft_roundtrip_normalized": istft_roundtrip(normalized=True),
    "istft_default": lambda: torch.istft(torch.stft(SIG2, 8, return_complex=True), 8),
    "istft_two_sided_complex": lambda: torch.istft(torch.stft(SIG.to(torch.complex64), 8, return_complex=True), 8,
                                                   return_complex=True),
    "istft_no_center_length": lambda: torch.istft(torch.stft(SIG, 8, center=False, return_complex=True), 8, center=False,
                                                  length=44),
    "istft_real_input": lambda: torch.istft(torch.ones(5, 3, 2), 8),
    "istft_bad_freq": lambda: torch.istft(torch.ones(4, 3, dtype=torch.complex64), 8),
    "istft_bad_hop": lambda: torch.istft(torch.ones(5, 3, dtype=torch.complex64), 8, hop_length=9),
    "istft_zero_window": lambda: torch.istft(torch.ones(5, 3, dtype=torch.complex64), 8, window=torch.zeros(8)),
    "istft_empty": lambda: torch.istft(torch.ones(5, 0, dtype=torch.complex64), 8),
    "istft_onesided_complex": lambda: torch.istft(torch.ones(5, 3, dtype=torch.complex64), 8, return_complex=True),
}


if __name__ == "__main__":
    write_npz_outcomes(CASES, sys.argv[1])

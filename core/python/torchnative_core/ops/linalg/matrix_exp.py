"""`linalg.matrix_exp` as upstream computes it (aten/src/ATen/native/LinearAlgebra.cpp, `mexp`):
Bader, Blanes and Casas' optimised Taylor polynomials of degree 1, 2, 4, 8, 12 or 18 chosen by
the 1-norm (a batch of more than one matrix always takes degree 18), scaling by 2^-s and s
squarings, all in the input's own dtype with upstream's coefficients rounded to it.

The rounding follows upstream step for step, so that float32 results agree (upstream's float32
result is as far from the float64 one as torch.testing's float32 tolerance allows, so a more
accurate result disagrees): the linear combinations (`_compute_linear_combination`) add
`coefficient * term` to a zero accumulator in order, without FMA; matrix products of
`n^3 < 400` multiply-adds run upstream's naive `baddbmm_cpu_kernel`, which accumulates over k in
order in the dtype without FMA; larger ones go to MKL, whose order follows the CPU: at 8x8 (the
only size between the naive kernel and ours that MKL does not match ours) it accumulates in k
order with FMA on Intel CPUs and without it on others (`cpu_capability.mkl_fuses_small_products`:
probed on an Intel Xeon and an AMD EPYC, float32 and float64). Products below 400, and 8x8 where
MKL does not fuse, are spelled out here; the others use our matmul (bit-identical to upstream's
MKL for the 8x8-12x12 cases of tests/test_matrix_exp.py on the Intel Xeon, and for 12x12 on the
AMD EPYC; within tolerance in general). The
1-norm is summed down the columns in order as upstream's reduction does."""

from __future__ import annotations

import math
import struct
from torchnative_core import cpu_capability


def _torch():
    import torch

    return torch


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


# upstream's thetas (mexp), as the dtype holds them
_THETAS = {
    "float32": [_f32(t) for t in (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                  5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00)],
    "float64": [2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00],
}


_B12 = [
    [9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740],
    [5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989],
    [0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230],
    [-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359],
]


_B18 = [
    [0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.],
    [0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
     -6.37898194594723280150e-04],
    [-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
     -6.98210122488052056106e-03, 3.34975017086070470649e-05],
    [-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
     2.95552570429315521194e-02, -1.39180257516060693404e-05],
    [0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05],
]


def _t8_coefficients(rnd):
    """compute_T8's constexpr scalar_t constants: each rounded to the dtype where upstream
    declares it, the expressions evaluated in double from the rounded values."""
    sqrt_177 = rnd(0.1330413469565007072504e+2)
    x3 = rnd(2.0 / 3.0)
    x1 = rnd(x3 * ((1.0 + sqrt_177) / 88.0))
    x2 = rnd(x3 * ((1.0 + sqrt_177) / 352.0))
    x4 = rnd((-271.0 + 29.0 * sqrt_177) / (315.0 * x3))
    x5 = rnd((-11.0 + 11.0 * sqrt_177) / (1260.0 * x3))
    x6 = rnd((-99.0 + 11.0 * sqrt_177) / (5040.0 * x3))
    x7 = rnd((89.0 - sqrt_177) / (5040.0 * x3))
    y2 = rnd((857.0 - 58.0 * sqrt_177) / 630.0)
    return x1, x2, x3, x4, x5, x6, x7, y2


class _Mexp:
    def __init__(self, dtype):
        name = str(dtype).replace("torch.", "")
        self.rnd = _f32 if name == "float32" else float
        self.thetas = _THETAS[name]
        self.mkl_fuses = cpu_capability.mkl_fuses_small_products()

    def mm(self, a, b):
        n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
        if n * k * m >= 400 and (n * k * m > 512 or self.mkl_fuses):
            return a @ b
        acc = a.new_zeros(a.shape[:-1] + (m,))
        for j in range(k):
            acc = acc + a[..., :, j:j + 1] * b[..., j:j + 1, :]
        return acc

    def lincomb(self, terms, coeffs):
        acc = terms[0].new_zeros(terms[0].shape)
        for t, c in zip(terms, coeffs):
            acc = acc + t * self.rnd(c)
        return acc

    def powers(self, a, count):
        """_fill_matrix_powers: the first `count` of I, A, A^2, A^3, A^6."""
        torch = _torch()
        eye = torch.eye(a.shape[-1], dtype=a.dtype).expand(a.shape)
        out = [eye, a]
        if count > 2:
            out.append(self.mm(a, a))
        if count > 3:
            out.append(self.mm(a, out[2]))
        if count > 4:
            out.append(self.mm(out[3], out[3]))
        return out[:count]

    def t1(self, a):
        i, a1 = self.powers(a, 2)
        return (a.new_zeros(a.shape) + i) + a1

    def t2(self, a):
        i, a1, a2 = self.powers(a, 3)
        return ((a.new_zeros(a.shape) + i) + a1) + a2 / 2.0

    def t4(self, a):
        i, a1, a2 = self.powers(a, 3)
        a4 = self.mm(a2, self.lincomb([i, a1, a2], [1 / 2.0, 1 / 6.0, 1 / 24.0]))
        return self.lincomb([i, a1, a2, a4], [1.0, 1.0, 0.0, 1.0])

    def t8(self, a):
        x1, x2, x3, x4, x5, x6, x7, y2 = _t8_coefficients(self.rnd)
        i, a1, a2 = self.powers(a, 3)
        a4 = self.mm(a2, self.lincomb([a1, a2], [x1, x2]))
        a8 = self.mm(self.lincomb([a2, a4], [x3, 1.0]), self.lincomb([i, a1, a2, a4], [x4, x5, x6, x7]))
        return self.lincomb([i, a1, a2, a4, a8], [1.0, 1.0, y2, 0.0, 1.0])

    def t12(self, a):
        As = self.powers(a, 4)
        b0, b1, b2, b3 = (self.lincomb(As, row) for row in _B12)
        b2 = b2 + self.mm(b3, b3)
        b1 = b1 + b2
        return b0 + self.mm(b1, b2)

    def t18(self, a):
        As = self.powers(a, 5)
        b0, b1, b2, b3, b4 = (self.lincomb(As, row) for row in _B18)
        b3 = b3 + self.mm(b0, b4)  # A9
        b2 = b2 + b3
        return b1 + self.mm(b2, b3)

    def t18_scale_square(self, a, norm):
        torch = _torch()
        s = torch.ceil(torch.log2(norm / self.rnd(self.thetas[5]))).clamp(min=0)
        scaled = a * torch.pow(2.0, -s).view(-1, 1, 1)
        m = self.t18(scaled)
        out = []
        for i, si in enumerate(s.tolist()):
            x = m[i:i + 1]
            # upstream converts s to int64 for the number of squarings
            for _ in range(int(si) if math.isfinite(si) else 0):
                x = self.mm(x, x)
            out.append(x)
        return torch.cat(out, 0)


def _one_norm(a):
    """operator_1_norm: abs, summed down each column in order, the largest column."""
    col = a.new_zeros(a.shape[:-2] + a.shape[-1:])
    absa = a.abs()
    for r in range(a.shape[-2]):
        col = col + absa[..., r, :]
    return col.max(-1).values


def mexp(a):
    """upstream's `mexp` on a float32 or float64 tensor of square matrices (n >= 2)."""
    torch = _torch()
    n = a.shape[-1]
    a3 = a.reshape(-1, n, n)
    e = _Mexp(a.dtype)
    norm = _one_norm(a3)
    if a3.shape[0] > 1:
        return e.t18_scale_square(a3, norm).reshape(a.shape)
    nv = norm.item()
    th = [e.rnd(t) for t in e.thetas]
    res = torch.full_like(a3, math.nan)
    for lower, upper, f in zip([-1.0] + th[:4], th[:5], (e.t1, e.t2, e.t4, e.t8, e.t12)):
        if lower < nv <= upper:
            res = f(a3)
    if nv >= th[4]:
        res = e.t18_scale_square(a3, norm)
    return res.reshape(a.shape)

"""Elementwise arithmetic, integer division semantics, comparisons, math functions."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


def _x():
    return torch.tensor([-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.2, 7.9])


def _ints():
    return torch.tensor([-7, -6, -1, 0, 1, 5, 7]), torch.tensor([2, -2, 3, 3, -3, 2, -4])


@case
def add_sub_mul_div():
    a, b = _x(), torch.linspace(-1, 2, 8)
    return a + b, a - b, a * b, a / (b + 3)


@case
def add_alpha_sub_alpha():
    a, b = _x(), torch.ones(8)
    return torch.add(a, b, alpha=2), torch.sub(a, b, alpha=0.5), a.add(3, alpha=2)


@case
def broadcast_add():
    return (torch.arange(3.0).view(3, 1) + torch.arange(4.0),
            torch.ones(2, 1, 3) * torch.arange(2.0).view(2, 1))


@exact
def int_arith():
    a, b = _ints()
    return a + b, a - b, a * b


@exact
def int_floordiv_negative():
    a, b = _ints()
    return a // b, torch.floor_divide(a, b), a // 2, -7 // torch.tensor(2)


@exact
def int_remainder_negative():
    a, b = _ints()
    return a % b, torch.remainder(a, b), torch.fmod(a, b), a % 3


@exact
def int_div_rounding_modes():
    a, b = _ints()
    return (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
            torch.div(a, b))


@case
def float_floordiv_remainder():
    a = torch.tensor([-7.5, -1.0, 0.5, 5.25, 7.0])
    b = torch.tensor([2.0, -2.0, 3.0, -1.5, -4.0])
    return a // b, a % b, torch.fmod(a, b), torch.div(a, b, rounding_mode="trunc")


@exact
def int_div_by_zero_float_result():
    return torch.tensor([1, -1, 0]) / 0


@case
def float_div_by_zero():
    return torch.tensor([1.0, -1.0, 0.0]) / 0.0


@exact
def int_floordiv_by_zero_raises():
    return torch.tensor([1, 2]) // 0


@exact
def comparisons():
    a = torch.tensor([1, 2, 3, 4])
    b = torch.tensor([4, 2, 1, 4])
    return a == b, a != b, a < b, a <= b, a > b, a >= b, a > 2, 3 == a


@exact
def comparisons_mixed_dtype():
    return torch.tensor([1, 2]) < torch.tensor([1.5, 1.5]), torch.tensor([0.1]) == 0.1


@exact
def comparisons_nan():
    n = torch.tensor([float("nan"), 1.0])
    return n == n, n != n, n < 2, torch.isnan(n), torch.eq(n, 1.0)


@exact
def eq_equal_allclose():
    a = torch.tensor([1.0, 2.0])
    return (torch.equal(a, a.clone()), torch.equal(a, a + 1e-6), torch.allclose(a, a + 1e-9),
            torch.isclose(a, torch.tensor([1.0, 2.1])))


@exact
def logical_and_bitwise():
    a = torch.tensor([True, True, False, False])
    b = torch.tensor([True, False, True, False])
    i = torch.tensor([12, -3, 5])
    return (a & b, a | b, a ^ b, ~a, torch.logical_and(a, b), torch.logical_not(i),
            i & 6, i | 1, i ^ 5, ~i, i << 2, i >> 1)


@exact
def bitwise_scalar_and_reflected():
    # the .Scalar overloads (bitwise_and.Scalar reached a kernel named bitwise_bitwise_and) and
    # the reflected dunders (__ror__ was missing)
    a = torch.tensor([True, False])
    i = torch.tensor([12, -3, 5])
    return (torch.bitwise_and(i, 6), torch.bitwise_or(i, 1), torch.bitwise_xor(i, 5), 6 & i, 1 | i, 5 ^ i,
            True | a, False & a, True ^ a, i.__ror__(3))


@exact
def maximum_minimum():
    a, b = torch.tensor([1.0, float("nan"), 3.0]), torch.tensor([2.0, 0.0, -1.0])
    return torch.maximum(a, b), torch.minimum(a, b), torch.fmax(a, b), torch.fmin(a, b)


@case
def exp_log():
    x = _x()
    return (torch.exp(x), torch.log(x.abs() + 0.1), torch.log2(x.abs() + 1),
            torch.log10(x.abs() + 1), torch.log1p(x.abs()), torch.expm1(x))


@case
def log_of_negative_and_zero():
    return torch.log(torch.tensor([-1.0, 0.0, 1.0])), torch.sqrt(torch.tensor([-4.0, 4.0]))


@case
def sqrt_rsqrt():
    x = _x().abs()
    return torch.sqrt(x), torch.rsqrt(x + 0.5), x.sqrt()


@case
def trig():
    x = _x()
    return (torch.sin(x), torch.cos(x), torch.tan(x), torch.atan(x), torch.asin(x / 8),
            torch.atan2(x, x.flip(0)))


@case
def hyperbolic_and_activations():
    x = _x()
    return torch.tanh(x), torch.sigmoid(x), torch.sinh(x), torch.cosh(x), torch.erf(x)


@case
def sigmoid_extremes():
    return (torch.sigmoid(torch.tensor([-100.0, -20.0, 0.0, 20.0, 100.0])),
            torch.tanh(torch.tensor([-50.0, 50.0])))


@exact
def abs_neg_sign():
    x = _x()
    i = torch.tensor([-3, 0, 4])
    return torch.abs(x), -x, torch.neg(i), torch.sign(x), i.abs(), torch.sgn(x)


@case
def pow_float():
    x = _x().abs()
    return torch.pow(x, 2), x ** 0.5, x ** -1.5, torch.pow(2.0, x), x.pow(torch.arange(8.0) / 4)


@exact
def pow_int():
    i = torch.tensor([-3, -1, 0, 2, 5])
    return i ** 2, torch.pow(i, 3), 2 ** torch.tensor([0, 1, 10])


@exact
def pow_int_negative_exponent_raises():
    return torch.tensor([2, 3]) ** -1


@exact
def square_reciprocal():
    x = torch.tensor([0.5, -2.0, 4.0])
    return x.square(), x.reciprocal(), torch.tensor([3]).square()


@exact
def clamp():
    x = _x()
    return (torch.clamp(x, -1, 1), x.clamp(min=0), x.clamp(max=0.5),
            torch.clamp(torch.arange(6), 1, 4),
            x.clamp(torch.zeros(8), torch.full((8,), 2.0)))


@exact
def clamp_min_gt_max():
    return torch.clamp(torch.arange(5.0), 3, 1)


@exact
def floor_ceil_trunc_round():
    x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7])
    return torch.floor(x), torch.ceil(x), torch.trunc(x), torch.round(x), torch.frac(x)


@case
def round_decimals():
    return torch.round(torch.tensor([1.2345, -2.5551, 1234.5]), decimals=2)


@case
def lerp_addcmul_addcdiv():
    a, b = torch.zeros(3), torch.tensor([1.0, 2.0, 4.0])
    return (torch.lerp(a, b, 0.25), torch.addcmul(a, b, b, value=0.5),
            torch.addcdiv(a, b, b + 1, value=2))


@case
def nan_to_num_isfinite():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    return (torch.nan_to_num(x), torch.isfinite(x), torch.isinf(x), torch.isposinf(x),
            torch.nan_to_num(x, nan=0.5, posinf=9.0))


@case
def float16_math():
    x = _x().half()
    return x + 1, x * x, torch.exp(x), torch.sigmoid(x), x.sum()


@case
def bfloat16_math():
    x = _x().bfloat16()
    return x + 1, x * x, torch.tanh(x), x / 3


@case
def float64_math():
    x = _x().double()
    return torch.exp(x), torch.sin(x), x / 7, torch.sqrt(x.abs())


@exact
def int_math_promotes_to_float():
    i = torch.tensor([1, 4, 9])
    return torch.sqrt(i).dtype, torch.exp(i).dtype, torch.sigmoid(torch.tensor([True])).dtype


@case(exact=True)
def shifts_gcd_lcm_every_integer_dtype():
    g = torch.Generator().manual_seed(11)
    out = []
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(dt)
        a = torch.randint(info.min, info.max, (40,), generator=g, dtype=torch.int64).to(dt)
        b = torch.randint(-3 if info.min < 0 else 0, 70, (40,), generator=g, dtype=torch.int64).to(dt)
        out += [a << b, a >> b, torch.bitwise_left_shift(a, 3), torch.bitwise_right_shift(a, 100), torch.gcd(a, b),
                torch.lcm(a, b)]
    x = torch.tensor([12, 18])
    x <<= 2
    return out, x, 2 << torch.tensor([1, 2]), torch.clamp_min(torch.tensor([True, False]), torch.tensor([False, True]))


@case
def shift_of_float_tensor():
    return torch.ones(2) << 1


@case
def modified_bessel_of_infinities():
    # upstream's calc_i0/calc_i1 divide an infinite exp(x) by an infinite sqrt(x): NaN
    x = torch.tensor([float("inf"), float("-inf"), 50.0, -3.0], dtype=torch.float64)
    return torch.i0(x), torch.special.i1(x), torch.i0(x.float()), torch.special.i1(x.float())


@case(exact=True)
def bessel_families_bitwise():
    # upstream's Cephes series in the compute type, with its capability build's fused
    # multiply-adds (the K0/K1 logs included: k0's log is double); every branch (|x| <= 8 / > 8,
    # x <= 2 / > 2, J/Y at 5), zero, negatives, infinities, NaN. Float16/bfloat16 in whole vectors of 32
    # elements: upstream's scalar tail of i0e computes in the 16-bit type itself
    x = torch.cat([torch.linspace(-30, 30, 1201, dtype=torch.float64),
                   torch.tensor([0.0, -0.0, 1e-300, 2.0, 8.0, 7.9999999, 8.0000001, 1.99999999, 0.4999, 0.5, 700.0,
                                 713.0, float("inf"), float("-inf"), float("nan")], dtype=torch.float64)])
    fns = (torch.i0, torch.special.i0e, torch.special.i1, torch.special.i1e, torch.special.modified_bessel_i0,
           torch.special.modified_bessel_i1, torch.special.modified_bessel_k0, torch.special.modified_bessel_k1,
           torch.special.scaled_modified_bessel_k0, torch.special.scaled_modified_bessel_k1,
           torch.special.spherical_bessel_j0, torch.special.bessel_j0, torch.special.bessel_j1,
           torch.special.bessel_y0, torch.special.bessel_y1, torch.special.airy_ai)
    out = [f(x.to(dt)) for f in fns for dt in (torch.float32, torch.float64)]
    out += [f(x[:1184].to(dt)) for f in fns[:4] for dt in (torch.float16, torch.bfloat16)]
    return out + [torch.special.i1e(x[::3].float()), torch.i0(torch.arange(-5, 5))]


@case
def erfcx_and_log_ndtr_at_their_edges():
    # 2 exp(x^2) overflows to inf from x = -26.64 on, before erfcx's own cut at -26.7; log_ndtr
    # of -inf is log(0) - inf (both raised a Python math error here)
    x = torch.tensor([-26.69, -26.65, -26.6, -26.0, float("-inf"), -40.0, 30.0], dtype=torch.float64)
    return torch.special.erfcx(x), torch.special.log_ndtr(x), torch.special.log_ndtr(x.float())


@case(exact=True)
def ldexp_dtypes_and_exact_scaling():
    # a floating input with an integer exponent is std::ldexp in the input's dtype (rounded once,
    # exponent taken as a C int); other pairs multiply by pow(2, exponent)
    e = torch.tensor([1200, -1200, 2**31 + 5, -1075, 3])
    x64 = torch.tensor([2.0**-600, 2.0**600, 1.0, 3.0, -1.5], dtype=torch.float64)
    out = [torch.ldexp(x64, e), torch.ldexp(x64.float(), torch.tensor([200, -200, 3, -140, 130])),
           torch.ldexp(torch.tensor([3.0, 2.0], dtype=torch.bfloat16), torch.tensor([-130, 200], dtype=torch.int8).long())]
    for a, b in ((torch.bfloat16, torch.int8), (torch.float16, torch.bfloat16), (torch.int32, torch.int64),
                 (torch.uint8, torch.float16), (torch.float64, torch.float16), (torch.int64, torch.bool)):
        out.append(torch.ldexp(torch.tensor([3, 1], dtype=a), torch.tensor([2, 1], dtype=b)))
    return out


@case(exact=True)
def logit_eps_nan_negative_and_above_half():
    x = torch.tensor([0.0, 1.0, 0.5, 0.2, 0.9, 1.2, -0.3])
    return [torch.logit(v, eps) for v in (x, x.double(), x.bool()) for eps in (float("nan"), 0.7, -0.1, 0.0, 1.5)]


@case(exact=True)
def airy_ai_cephes_branches():
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), 200.0, 103.8, 50.0, 8.3, 2.09, 2.0899, 1.0, 0.0,
                      -2.0899, -2.1, -30.0, -1e10, -1e300], dtype=torch.float64)
    return torch.special.airy_ai(x), torch.special.airy_ai(torch.linspace(-40, 40, 801, dtype=torch.float64))


@case(exact=True)
def where_with_a_uint8_condition_and_addcmul_of_integers():
    # a uint8 condition is cast to bool (upstream warns); an integer addcmul truncates its value
    a = torch.tensor([3, 4])
    return (torch.where(torch.tensor([1, 0], dtype=torch.uint8), a, a * 2), torch.addcmul(a, a, a, value=0.5),
            torch.addcmul(a, a, a, value=2.7), a.clone().addcmul_(a, a, value=0.5),
            torch.any(torch.tensor([[True, False]]), 1, out=torch.empty(1, dtype=torch.uint8)),
            torch.cumsum(torch.ones(3), 0, out=torch.empty(3, dtype=torch.float64)))


@case(exact=True)
def frexp_and_ldexp_through_subnormals():
    v = torch.tensor([0.0, -0.0, 1.0, 3.0, 1e-310, -5e-324, 2.0**-1022, 1.7976931348623157e308, float("inf"),
                      float("nan"), -0.1], dtype=torch.float64)
    out = [torch.frexp(v.to(d)) for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16)]
    x = torch.tensor([1.5, 3.0, 5e-324, 1e-310, 1.5], dtype=torch.float64)
    return out, torch.ldexp(x, torch.tensor([-1075, -1076, 1074, -5, -1074]))


@case(exact=True)
def inplace_forms_with_their_own_argument_order():
    # float_power_ (a float64 base), polygamma_ (self first), floor_divide_ by a wrapped number
    # (cast unchecked), copysign by a number beyond float32
    A = torch.ops.aten
    return (A.float_power_.Scalar(torch.tensor([2.0, 0.5], dtype=torch.float64), float("inf")),
            A.polygamma_.default(torch.tensor([[0.5], [1.5]]), 2),
            A.floor_divide_.Scalar(torch.tensor([3, -4], dtype=torch.int16), 2147483647),
            A.copysign.Scalar(torch.tensor([1.0, -2.0]), 1e308),
            torch.ops.aten._adaptive_avg_pool2d(torch.ones(2, 4, 3, dtype=torch.float64), [0, 1]))


@case(exact=True)
def threshold_of_integers_compares_in_their_dtype():
    x = torch.tensor([-2, -1, 0, 1], dtype=torch.int16)
    return torch.threshold(x, -1.34, 2), torch.threshold(x.half(), 70000.0, 2), torch.threshold(x.float(), -1.34, 2)


@case(exact=True)
def chebyshev_families_every_branch():
    # T, U, V, W and the shifted ones in float32 and float64, bit for bit: the recurrences (fused
    # multiply-adds, float32 overflow to NaN), the trigonometric forms of a large degree (the
    # degree rounded to float, glibc's acosf/cosf/sinf), +-1 and int64 wrap-around
    torch.manual_seed(1)
    S = torch.special
    fns = (S.chebyshev_polynomial_t, S.chebyshev_polynomial_u, S.chebyshev_polynomial_v,
           S.chebyshev_polynomial_w, S.shifted_chebyshev_polynomial_t, S.shifted_chebyshev_polynomial_u,
           S.shifted_chebyshev_polynomial_v, S.shifted_chebyshev_polynomial_w)
    out = []
    for dt in (torch.float32, torch.float64):
        x = torch.rand(24, dtype=dt) * 2.2 - 1.1
        x[:4] = torch.tensor([0.0, 1.0, -1.0, 0.5])
        for f in fns:
            out += [f(x, n) for n in (3, 7, 9, 50, 1001, 2**31 - 1, 2**40 + 7, 2**62)]
            out.append(f(torch.tensor([True, False]), 2147483647))
    return out

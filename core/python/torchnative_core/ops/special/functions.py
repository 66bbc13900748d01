"""Special functions: modified Bessel I0/I1 and their scaled forms, erfcx, ndtri, log_ndtr, entr,
xlogy/xlog1py, the orthogonal polynomials, and the meta steps of the gamma family (lgamma,
digamma, polygamma, Hurwitz zeta), whose values the device computes (the cpu backend's
special.rs); mvlgamma is composed.
"""

from __future__ import annotations

from .. import impl
import math
from .. import base as B
from ..elementwise import arithmetic as E
# --- Bessel functions of the first and second kind, modified K, Airy Ai ----------------------------
# J0, J1, Y0, Y1: upstream's Cephes approximations in its evaluation order (bessel_cephes.py). K by
# the trapezoidal rule on K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt, which converges
# geometrically for this analytic, doubly-exponentially decaying integrand.

from .bessel import j0 as bessel_j0, j1 as bessel_j1, y0 as bessel_y0, y1 as bessel_y1  # noqa: E402


def x_times_log(self, other, log1p=False):
    """upstream's xlogy and xlog1py kernels: NaN where y is NaN, 0 where x == 0, else x * log(y)
    (log1p(y)), all in the operands' common dtype (integers compute in the default float dtype),
    so a wrapped number is rounded to that dtype first, as TensorIterator casts it."""
    import torch

    dt = torch.result_type(self, other)
    if not (dt.is_floating_point or dt.is_complex):
        dt = torch.get_default_dtype()
    x, y = self.to(dt), other.to(dt)
    out = torch.where(x == 0, torch.zeros((), dtype=dt), x * (y.log1p() if log1p else y.log()))
    return out.masked_fill(y.isnan(), float("nan"))


@impl("xlogy.Tensor")
def xlogy(self, other):
    return x_times_log(self, other)


@impl("xlogy.Scalar_Other")
def xlogy_scalar_other(self, other):
    return xlogy(self, B.C._tn_scalar_to_tensor(other))  # a wrapped number: promotes as a scalar


@impl("xlogy.Scalar_Self")
def xlogy_scalar_self(self, other):
    return xlogy(B.C._tn_scalar_to_tensor(self), other)


D = B.door


_NAN, _INF = math.nan, math.inf


def _torch():
    import torch

    return torch


def _float_dtype(x):
    torch = _torch()
    return x.dtype if (x.is_floating_point() or x.is_complex()) else torch.get_default_dtype()


def _map(fn, *xs, dtype=None):
    """fn applied elementwise (Python floats) to broadcast tensors; result in `dtype`."""
    torch = _torch()
    ts = torch.broadcast_tensors(*xs) if len(xs) > 1 else xs
    shape = list(ts[0].shape)
    if B.numel(shape) == 0:
        return torch.empty(shape, dtype=dtype)
    flats = [t.detach().reshape(-1).to(torch.float64).tolist() for t in ts]
    vals = [fn(*v) for v in zip(*flats)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


# upstream dispatches these on float32 and float64 only (AT_DISPATCH_FLOATING_TYPES); i0 and
# i0e/i1/i1e take float16 and bfloat16 too
_REDUCED_OK = frozenset({"i0", "special_i0e", "special_i1", "special_i1e"})


def _refuse_reduced(name, dtype):
    torch = _torch()
    if dtype in (torch.float16, torch.bfloat16) and name not in _REDUCED_OK:
        kernel = name[len("special_"):] if name.startswith("special_") else name
        type_name = "Half" if dtype == torch.float16 else "BFloat16"
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{type_name}'")


def _unary(name, fn):
    def run(self):
        if self.is_complex():
            raise NotImplementedError(f"torchnative: {name} on complex tensors is not supported yet")
        _refuse_reduced(name, self.dtype)
        if self.dtype == _torch().bool and name in _NO_BOOL:
            raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Bool'")
        return _map(fn, self, dtype=_float_dtype(self))

    return run


_NO_BOOL = set()


def _f32(v, _pack=__import__("struct").Struct("f")):
    """`v` rounded to float32 (an overflow gives the signed infinity)."""
    try:
        return _pack.unpack(_pack.pack(v))[0]
    except OverflowError:
        return math.copysign(_INF, v)


# --- modified Bessel functions ----------------------------------------------------------------------

def _bessel_i_series(nu, x):
    """I_nu(x) for nu in {0, 1}: sum (x/2)^(2k+nu) / (k! (k+nu)!)."""
    if x == 0:
        return 1.0 if nu == 0 else 0.0
    h = x / 2.0
    term = h ** nu / math.factorial(nu)
    s, k, h2 = term, 0, h * h
    while True:
        k += 1
        term *= h2 / (k * (k + nu))
        s += term
        if term <= 1e-17 * s:
            return s


def _bessel_i_asym_scaled(nu, x):
    """exp(-x) I_nu(x) for large x > 0: (2 pi x)^-1/2 sum_k (-1)^k a_k(nu) / x^k."""
    mu = 4.0 * nu * nu
    term, s, k = 1.0, 1.0, 0
    while k < 200:
        k += 1
        nxt = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if abs(nxt) > abs(term):
            break
        term = nxt
        s += term
        if abs(term) < 1e-17 * abs(s):
            break
    return s / math.sqrt(2 * math.pi * x)


def i0e(x):
    if math.isnan(x):
        return x
    a = abs(x)
    if a == _INF:
        return 0.0
    if a > 40:
        return _bessel_i_asym_scaled(0, a)
    return _bessel_i_series(0, a) * math.exp(-a)


def i0(x):
    if math.isnan(x):
        return x
    a = abs(x)
    if a == _INF:
        return math.nan  # upstream's calc_i0 for |x| > 8, exp(x) * chbevl(...) / sqrt(x): inf / inf
    if a > 700:
        return _INF
    if a > 40:
        return _bessel_i_asym_scaled(0, a) * math.exp(a)
    return _bessel_i_series(0, a)


def i1e(x):
    if math.isnan(x):
        return x
    a = abs(x)
    if a == _INF:
        return math.copysign(0.0, x)
    v = _bessel_i_asym_scaled(1, a) if a > 40 else _bessel_i_series(1, a) * math.exp(-a)
    return math.copysign(v, x) if a else x


def i1(x):
    if math.isnan(x):
        return x
    a = abs(x)
    if a == _INF:
        return math.nan  # as i0: upstream's calc_i1 gives inf / inf
    if a > 700:
        return math.copysign(_INF, x)
    v = _bessel_i_asym_scaled(1, a) * math.exp(a) if a > 40 else _bessel_i_series(1, a)
    return math.copysign(v, x) if a else x


# --- error-function family ------------------------------------------------------------------------------

def erfcx(x):
    if math.isnan(x):
        return x
    if x < 0:
        if x < -26.7:
            return _INF
        return 2.0 * math.exp(x * x) - erfcx(-x)
    if x < 25.0:
        return math.erfc(x) * math.exp(x * x)
    if x == _INF:
        return 0.0
    # asymptotic: 1/(x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2x^2)^k
    t, s, k, z = 1.0, 1.0, 0, 1.0 / (2.0 * x * x)
    while k < 50:
        k += 1
        nt = -t * (2 * k - 1) * z
        if abs(nt) > abs(t):
            break
        t = nt
        s += t
        if abs(t) < 1e-17:
            break
    return s / (x * math.sqrt(math.pi))


def log_ndtr(x):
    if math.isnan(x):
        return x
    t = x * (1.0 / math.sqrt(2.0))
    if x < -1.0:
        return math.log(erfcx(-t) / 2) - t * t
    return math.log1p(-math.erfc(t) / 2)


def ndtr(x):
    if math.isnan(x):
        return x
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def ndtri(p):
    if math.isnan(p) or p < 0 or p > 1:
        return _NAN
    if p == 0:
        return -_INF
    if p == 1:
        return _INF
    if p > 0.5:
        return -ndtri(1.0 - p)
    # Abramowitz & Stegun 26.2.23 start, then Newton on Phi(x) = p (Phi accurate for x < 0 via erfc)
    t = math.sqrt(-2.0 * math.log(p))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3))
    for _ in range(50):
        f = ndtr(x) - p
        d = math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        if d == 0:
            break
        step = f / d
        # Halley correction
        step = step / (1 + 0.5 * x * step)
        x -= step
        if abs(step) <= 1e-16 * max(1.0, abs(x)):
            break
    return x


def entr(x):
    if math.isnan(x):
        return x
    if x > 0:
        return -x * math.log(x)
    if x == 0:
        return 0.0
    return -_INF


# --- registrations -------------------------------------------------------------------------------------

def _gamma_kernel(name):
    """lgamma/digamma: the device's kernel (the cpu backend's special.rs), float results."""

    def run(self):
        if self.is_complex():
            raise NotImplementedError(f"torchnative: {name} on complex tensors is not supported yet")
        return E.unary(name, self, float_only=True)

    return run


for _name in ("lgamma", "digamma"):
    impl(_name)(_gamma_kernel(_name))


for _name, _fn in (("i0", i0), ("special_i0e", i0e), ("special_i1", i1),
                   ("special_i1e", i1e), ("special_erfcx", erfcx), ("special_ndtri", ndtri),
                   ("special_log_ndtr", log_ndtr)):
    impl(_name)(_unary(_name, _fn))


@impl("special_entr")
def special_entr(self):
    torch = _torch()
    x = self if self.is_floating_point() else self.to(torch.get_default_dtype())
    out = torch.where(x > 0, -x * x.log(), torch.where(x == 0, torch.zeros((), dtype=x.dtype), torch.full((), -math.inf, dtype=x.dtype)))
    return torch.where(x.isnan(), x, out)


@impl("polygamma")
def polygamma_op(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if self.is_complex():
        raise NotImplementedError("torchnative: polygamma on complex tensors is not supported yet")
    return E.unary("polygamma", self, float_only=True, lead=(n,))


@impl("special_polygamma")
def special_polygamma(n, self):
    return D("polygamma", n, self)


@impl("special_ndtr")
def special_ndtr(self):
    x_sqrt_2 = self * (1.0 / math.sqrt(2.0))
    return (1 + _torch().erf(x_sqrt_2)) * 0.5


@impl("mvlgamma")
def mvlgamma(self, p):
    torch = _torch()
    if self.dtype == torch.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dtype = _float_dtype(self)
    args = torch.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dtype)
    args = args.add(self.unsqueeze(-1))
    return D("lgamma", args).sum(-1).add(p * (p - 1) * math.log(math.pi) * 0.25)


def _zeta_dtype(x, q):
    torch = _torch()
    from ..base import result_type

    d = result_type(x, q)
    return d if d.is_floating_point else torch.get_default_dtype()


@impl("special_zeta")
def special_zeta(self, other):
    dtype = _zeta_dtype(self, other)
    _refuse_reduced("special_zeta", dtype)
    shape = B.broadcast_shapes(self._tn_sizes, other._tn_sizes)
    x, q = (B.expand_to(E.cast(t, dtype), shape) for t in (self, other))
    out = B.empty(shape, dtype, B.device_of(self if self._tn_sizes or not other._tn_sizes else other))
    if B.numel(shape):
        B.launch("special_zeta", (x, q), (out,))
    return out


def _igamma(name):
    """igamma/igammac: the device's kernel (the cpu backend's igamma.rs) on the promoted floating
    dtype; integral, bool and complex promotions refuse as upstream's CPU dispatch does (no
    integer-to-float promotion here, unlike zeta)."""

    def run(self, other):
        from ..base import result_type
        from ..elementwise.arithmetic import _type_name

        dtype = result_type(self, other)
        if not dtype.is_floating_point:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(dtype)}'")
        shape = B.broadcast_shapes(self._tn_sizes, other._tn_sizes)
        a, x = (B.expand_to(E.cast(t, dtype), shape) for t in (self, other))
        out = B.empty(shape, dtype, B.device_of(self if self._tn_sizes or not other._tn_sizes else other))
        if B.numel(shape):
            B.launch(name, (a, x), (out,))
        return out

    return run


for _name in ("igamma", "igammac"):
    impl(_name)(_igamma(_name))


@impl("special_zeta.self_scalar")
def special_zeta_self_scalar(self, other):
    return special_zeta(B.C._tn_scalar_to_tensor(self), other)


@impl("special_zeta.other_scalar")
def special_zeta_other_scalar(self, other):
    return special_zeta(self, B.C._tn_scalar_to_tensor(other))


@impl("special_xlog1py")
def special_xlog1py(self, other):
    return D("xlog1py.Tensor", self, other)


@impl("special_xlog1py.self_scalar")
def special_xlog1py_self_scalar(self, other):
    return D("xlog1py.Tensor", B.C._tn_scalar_to_tensor(self), other)


@impl("special_xlog1py.other_scalar")
def special_xlog1py_other_scalar(self, other):
    return D("xlog1py.Tensor", self, B.C._tn_scalar_to_tensor(other))


# torch.special spellings upstream composes as the operator they name (CompositeImplicitAutograd)
def _forward_to(target):
    def run(*args):
        return D(target, *args)

    return run


for _name, _target in (("special_digamma", "digamma"), ("special_psi", "digamma"), ("special_gammaln", "lgamma"),
                       ("special_i0", "i0"), ("special_multigammaln", "mvlgamma"), ("special_erf", "erf"),
                       ("special_erfc", "erfc"), ("special_erfinv", "erfinv"), ("special_expit", "sigmoid"),
                       ("special_exp2", "exp2"), ("special_expm1", "expm1"), ("special_log1p", "log1p"),
                       ("special_logit", "logit"), ("special_round", "round.decimals"), ("special_sinc", "sinc"),
                       ("special_xlogy", "xlogy.Tensor"), ("special_xlogy.self_scalar", "xlogy.Scalar_Self"),
                       ("special_xlogy.other_scalar", "xlogy.Scalar_Other"), ("special_logsumexp", "logsumexp"),
                       ("special_softmax", "softmax.int"), ("special_log_softmax", "log_softmax.int")):
    impl(_name)(_forward_to(_target))


# --- orthogonal polynomials (recurrences; trigonometric forms for large n inside [-1, 1], as
# upstream evaluates them) ---------------------------------------------------------------------------

def _recur(p, q, n, step):
    # upstream's loops stop once q is NaN (`k <= n && !std::isnan(q)`), so a huge n with an
    # overflowing x returns NaN at once instead of running n steps
    r = q
    for k in range(2, n + 1):
        if q != q:
            break
        r = step(k, p, q)
        p, q = q, r
    return r


def cheb_t(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return 1.0 if (x > 0 or n % 2 == 0) else -1.0
    if n > 6 and abs(x) < 1.0:
        return math.cos(n * math.acos(x))
    if n == 0:
        return 1.0
    return x if n == 1 else _recur(1.0, x, n, lambda k, p, q: (x + x) * q - p)


def cheb_u(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return float(n + 1) if (x > 0 or n % 2 == 0) else -float(n + 1)
    if n > 8 and abs(x) < 1.0:
        a = math.acos(x)
        if math.sin(a) != 0.0:
            return math.sin((n + 1) * a) / math.sin(a)
        return (n + 1) * math.cos((n + 1) * a) / x
    if n == 0:
        return 1.0
    return x + x if n == 1 else _recur(1.0, x + x, n, lambda k, p, q: (x + x) * q - p)


def cheb_v(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        if x > 0:
            return 1.0
        return float(n + n + 1) if n % 2 == 0 else -float(n + n + 1)
    if n > 8 and abs(x) < 1.0:
        a = math.acos(x)
        if math.sin(a / 2.0) != 1.0:
            return math.cos((n + 0.5) * a) / math.cos(a / 2.0)
        return float(n + n + 1) if n % 2 == 0 else -float(n + n + 1)
    if n == 0:
        return 1.0
    return x + x - 1.0 if n == 1 else _recur(1.0, x + x - 1.0, n, lambda k, p, q: (x + x) * q - p)


def cheb_w(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        if x > 0:
            return float(n + n + 1)
        return 1.0 if n % 2 == 0 else -1.0
    if n > 8 and abs(x) < 1.0:
        a = math.acos(x)
        if math.cos(a / 2.0) != 1.0:
            return math.sin((n + 0.5) * a) / math.sin(a / 2.0)
        if x > 0:
            return float(n + n + 1)
        return 1.0 if n % 2 == 0 else -1.0
    if n == 0:
        return 1.0
    return x + x + 1.0 if n == 1 else _recur(1.0, x + x + 1.0, n, lambda k, p, q: (x + x) * q - p)


def _shifted(fn, x, n, at1, at0):
    """The shifted polynomials are the plain ones at 2x - 1, with upstream's exact values at
    x = 1 and x = 0."""
    if n < 0:
        return 0.0
    if x == 1.0:
        return at1(n)
    if x == 0.0:
        return at0(n)
    return fn(x + x - 1.0, n)


def shifted_t(x, n):
    return _shifted(cheb_t, x, n, lambda n: 1.0, lambda n: 1.0 if n % 2 == 0 else -1.0)


def shifted_u(x, n):
    return _shifted(cheb_u, x, n, lambda n: float(n + 1), lambda n: float(n + 1) if n % 2 == 0 else -float(n + 1))


def shifted_v(x, n):
    return _shifted(cheb_v, x, n, lambda n: 1.0, lambda n: float(n + n + 1) if n % 2 == 0 else -float(n + n + 1))


def shifted_w(x, n):
    return _shifted(cheb_w, x, n, lambda n: float(n + n + 1), lambda n: 1.0 if n % 2 == 0 else -1.0)


def hermite_h(x, n):
    if n < 0:
        return 0.0
    if n == 0:
        return 1.0
    if n == 1:
        return x + x
    p, q, r = 1.0, x + x, 0.0
    for k in range(2, n + n, 2):
        if q != q:
            break
        r = (x + x) * q - k * p
        p, q = q, r
    return r


def hermite_he(x, n):
    if n < 0:
        return 0.0
    if n == 0:
        return 1.0
    if n == 1:
        return x
    p, q, r = 1.0, x, 0.0
    for k in range(1, n):
        if q != q:
            break
        r = x * q - k * p
        p, q = q, r
    return r


def hermite_he_f32(x, n):
    """hermite_he as upstream's float32 kernel computes it: float32 steps, with the compiler's
    fused multiply-add in `x * q - k * p` (one rounding for x * q - (k * p)) — the recurrence
    cancels, so float32 results follow that arithmetic (checked against upstream's values)."""
    r = _f32
    if n < 0:
        return 0.0
    if n == 0:
        return 1.0
    if n == 1:
        return x
    p, q, res = 1.0, x, 0.0
    for k in range(1, n):
        if q != q:
            break
        res = r(x * q - r(k * p))
        p, q = q, res
    return res


def laguerre_l(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 0.0 or n == 0:
        return 1.0
    if n == 1:
        return 1.0 - x
    p, q, r = 1.0, 1.0 - x, 0.0
    for k in range(1, n):
        if q != q:
            break
        r = (((k + k) + (1.0 - x)) * q - k * p) / (k + 1)
        p, q = q, r
    return r


def legendre_p(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return 1.0 if (x > 0 or n == 0 or n % 2 == 0) else -1.0
    if n == 0:
        return 1.0
    if n == 1:
        return x
    p, q, r = 1.0, x, 0.0
    for k in range(1, n):
        if q != q:
            break
        r = ((k + k + 1) * x * q - k * p) / (k + 1)
        p, q = q, r
    return r


def _poly(fn):
    def f(x, n):
        # upstream's static_cast<int64_t>(n): NaN, the infinities and values out of range give
        # INT64_MIN on x86 (so 0, as for every negative degree), where a Python int would loop
        # for ever
        k = -(2**63) if math.isnan(n) or math.isinf(n) else int(n)
        if not -(2**63) <= k < 2**63:
            k = -(2**63)
        if math.isnan(x) and k > 0:
            return _NAN  # a recurrence of degree >= 1 is NaN at NaN
        return fn(x, k)
    return f


def _register_poly(name, fn, fn_f32=None):
    f = _poly(fn)
    f32 = _poly(fn_f32) if fn_f32 else f

    def both(x, n):
        dtype = _zeta_dtype(x, n)
        _refuse_reduced(name, dtype)
        return _map(f32 if dtype == _torch().float32 else f, x, n, dtype=dtype)

    impl(name)(both)
    impl(name + ".x_scalar")(lambda x, n: both(B.C._tn_scalar_to_tensor(x), n))
    impl(name + ".n_scalar")(lambda x, n: both(x, B.C._tn_scalar_to_tensor(n)))


for _name, _fn in (("special_chebyshev_polynomial_t", cheb_t), ("special_chebyshev_polynomial_u", cheb_u),
                   ("special_chebyshev_polynomial_v", cheb_v), ("special_chebyshev_polynomial_w", cheb_w),
                   ("special_shifted_chebyshev_polynomial_t", shifted_t),
                   ("special_shifted_chebyshev_polynomial_u", shifted_u),
                   ("special_shifted_chebyshev_polynomial_v", shifted_v),
                   ("special_shifted_chebyshev_polynomial_w", shifted_w),
                   ("special_hermite_polynomial_h", hermite_h),
                   ("special_laguerre_polynomial_l", laguerre_l), ("special_legendre_polynomial_p", legendre_p)):
    _register_poly(_name, _fn)


_register_poly("special_hermite_polynomial_he", hermite_he, hermite_he_f32)


def _k_scaled(nu, x):
    """exp(x) K_nu(x) for x > 0 by the trapezoidal rule (step 1/32)."""
    h = 1.0 / 32
    total = 0.5
    t = 0.0
    while True:
        t += h
        sh = math.sinh(t / 2.0)
        e = -2.0 * x * sh * sh
        if e < -745:
            break
        f = math.exp(e) * (math.cosh(nu * t) if nu else 1.0)
        total += f
        if f < 1e-18 * total and t > 1:
            break
    return total * h


def modified_bessel_k0(x):
    if math.isnan(x) or x < 0:
        return _NAN
    if x == 0:
        return _INF
    if x == _INF:
        return 0.0
    return _k_scaled(0, x) * math.exp(-x)


def modified_bessel_k1(x):
    if math.isnan(x) or x < 0:
        return _NAN
    if x == 0:
        return _INF
    if x == _INF:
        return 0.0
    return _k_scaled(1, x) * math.exp(-x)


def scaled_modified_bessel_k0(x):
    if math.isnan(x) or x < 0:
        return _NAN
    if x == 0:
        return _INF
    if x == _INF:
        return 0.0
    return _k_scaled(0, x)


def scaled_modified_bessel_k1(x):
    if math.isnan(x) or x < 0:
        return _NAN
    if x == 0:
        return _INF
    if x == _INF:
        return 0.0
    return _k_scaled(1, x)


def spherical_bessel_j0(x):
    if math.isnan(x):
        return x
    if math.isinf(x):
        return 0.0
    if abs(x) < 0.5:
        x2 = x * x
        return 1.0 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (1.0 / 362880 + x2 * (-1.0 / 39916800 + x2 * (1.0 / 6227020800))))))
    return math.sin(x) / x


_AI0 = 1.0 / (3 ** (2.0 / 3) * math.gamma(2.0 / 3))


_AIP0 = 1.0 / (3 ** (1.0 / 3) * math.gamma(1.0 / 3))


def _airy_u(k_max, zeta):
    """The coefficients u_k / zeta^k of the Airy asymptotic series, up to the smallest term."""
    out, u, last = [1.0], 1.0, math.inf
    for k in range(1, k_max):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216.0 * k)
        t = u / zeta ** k
        if t >= last:
            break
        last = t
        out.append(t)
    return out


def airy_ai(x):
    if math.isnan(x):
        return x
    if x == _INF:
        return 0.0
    if x == -_INF:
        return 0.0
    if x >= 5.0:
        zeta = 2.0 / 3 * x ** 1.5
        s = sum(((-1) ** k) * t for k, t in enumerate(_airy_u(60, zeta)))
        return math.exp(-zeta) / (2 * math.sqrt(math.pi) * x ** 0.25) * s
    if x <= -6.0:
        a = -x
        zeta = 2.0 / 3 * a ** 1.5
        us = _airy_u(60, zeta)
        P = sum(((-1) ** (k // 2)) * t for k, t in enumerate(us) if k % 2 == 0)
        Q = sum(((-1) ** (k // 2)) * t for k, t in enumerate(us) if k % 2 == 1)
        th = zeta + math.pi / 4
        return (math.sin(th) * P - math.cos(th) * Q) / (math.sqrt(math.pi) * a ** 0.25)
    # Maclaurin series: Ai = Ai(0) f - |Ai'(0)| g
    x3 = x * x * x
    f = tf = 1.0
    g = tg = x
    k = 0
    while True:
        k += 1
        tf *= x3 / ((3 * k - 1) * (3 * k))
        tg *= x3 / ((3 * k) * (3 * k + 1))
        f += tf
        g += tg
        if abs(tf) + abs(tg) < 1e-18 * (abs(f) + abs(g)) and k > 2:
            break
    return _AI0 * f - _AIP0 * g


for _name, _fn in (("special_bessel_j0", bessel_j0), ("special_bessel_j1", bessel_j1), ("special_bessel_y0", bessel_y0),
                   ("special_bessel_y1", bessel_y1), ("special_modified_bessel_i0", i0),
                   ("special_modified_bessel_i1", i1), ("special_modified_bessel_k0", modified_bessel_k0),
                   ("special_modified_bessel_k1", modified_bessel_k1),
                   ("special_scaled_modified_bessel_k0", scaled_modified_bessel_k0),
                   ("special_scaled_modified_bessel_k1", scaled_modified_bessel_k1),
                   ("special_spherical_bessel_j0", spherical_bessel_j0), ("special_airy_ai", airy_ai)):
    impl(_name)(_unary(_name, _fn))


@impl("xlog1py.Tensor")
def xlog1py(self, other):
    return x_times_log(self, other, log1p=True)

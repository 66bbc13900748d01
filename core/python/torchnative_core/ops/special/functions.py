"""Special functions: erfcx, ndtri, log_ndtr, entr, xlogy/xlog1py and the orthogonal
polynomials; the meta steps of the gamma family (lgamma, digamma, polygamma, Hurwitz zeta) and of
the Bessel and Airy functions (i0, i0e, i1, i1e, modified_bessel_*, the scaled K0/K1, J0, J1, Y0,
Y1, spherical J0, Airy Ai), whose values the device computes (the cpu backend's special.rs and
bessel.rs); mvlgamma is composed.
"""

from __future__ import annotations

from .. import impl
import math
from fractions import Fraction
from .. import base as B
from ..elementwise import arithmetic as E


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
    if any(x.device.type == "meta" for x in xs):
        # shapes and dtypes only, as upstream's meta kernels; a meta operand beside a cpu one that
        # is not a 0-dim scalar refuses, named from the first operand's device
        devs = {x.device.type for x in xs if x.dim() or x.device.type == "meta"}
        if len(devs) > 1:
            first = xs[0].device.type
            raise RuntimeError(f"Tensor on device {'cpu' if first == 'meta' else 'meta'} is not on the expected "
                               f"device {first}!")
        return torch.empty(shape, dtype=dtype, device="meta")
    if B.numel(shape) == 0:
        return torch.empty(shape, dtype=dtype)
    flats = [t.detach().reshape(-1).to(torch.float64).tolist() for t in ts]
    vals = [fn(*v) for v in zip(*flats)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


# upstream dispatches these on float32 and float64 only (AT_DISPATCH_FLOATING_TYPES); i0 and
# i0e/i1/i1e, lgamma and digamma take float16 and bfloat16 too
_REDUCED_OK = frozenset({"i0", "special_i0e", "special_i1", "special_i1e", "lgamma", "digamma"})


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


def _fma_exact(a, b, c):
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    try:
        r = float(Fraction(a) * Fraction(b) + Fraction(c))  # int division: correctly rounded
    except OverflowError:
        return a * b + c
    return r if r != 0.0 else a * b + c  # an exact zero keeps the sign IEEE gives it


# a * b + c rounded once: upstream's kernels are compiled with floating-point contraction, so
# `a * b + c` and `a * b - c * d` in its C++ are fused multiply-adds (fma(a, b, -(c * d)))
_fma = getattr(math, "fma", _fma_exact)


# --- error-function family ------------------------------------------------------------------------------

def erfcx(x):
    if math.isnan(x):
        return x
    if x < 0:
        if x < -26.7:
            return _INF
        if x * x > 709.78:  # upstream's 2 exp(x^2) overflows to inf from -26.64 on, as C's exp does
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
        e = erfcx(-t) / 2
        return (math.log(e) if e else -_INF) - t * t  # log(0) is -inf in C (x = -inf)
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



for _name, _fn in (("special_erfcx", erfcx), ("special_ndtri", ndtri), ("special_log_ndtr", log_ndtr)):
    impl(_name)(_unary(_name, _fn))


def _special_kernel(name):
    """A special function of the device's kernels (the cpu backend's bessel.rs: upstream's
    Cephes series, bit for bit), float results; complex and the reduced types refused as
    upstream refuses them."""

    def run(self):
        if self.is_complex():
            raise NotImplementedError(f"torchnative: {name} on complex tensors is not supported yet")
        _refuse_reduced(name, self.dtype)
        return E.unary(name, self, float_only=True)

    return run


for _name in ("lgamma", "digamma", "i0", "special_i0e", "special_i1", "special_i1e", "special_modified_bessel_i0",
              "special_modified_bessel_i1", "special_modified_bessel_k0", "special_modified_bessel_k1",
              "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
              "special_spherical_bessel_j0", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0",
              "special_bessel_y1", "special_airy_ai"):
    impl(_name)(_special_kernel(_name))


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


@impl("polygamma_")
def polygamma_(self, n):  # the in-place form takes self first, the functional n first
    from ..forms.inplace import copy_into_self

    return copy_into_self(self, D("polygamma", n, self))


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
        shape = B.broadcast_shapes(self._tn_sizes, other._tn_sizes)  # the iterator's shapes come first
        if not dtype.is_floating_point:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(dtype)}'")
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


def _same(v):
    return v


def _i64(v):
    """`v` wrapped as int64 arithmetic wraps (upstream's `n + n + 1` for a huge degree)."""
    return (v + 2**63) % 2**64 - 2**63


class _F64:
    """upstream's `T` = double: Python's float arithmetic and libm (math calls glibc's acos, ...)."""
    r = staticmethod(_same)
    acos, cos, sin = math.acos, math.cos, math.sin

    @staticmethod
    def fma(a, b, c):  # upstream's `(x + x) * q - p`, contracted by its compiler
        return _fma(a, b, c)


class _F32:
    """upstream's `T` = float: every step rounded to float32, and glibc's float functions (acosf,
    cosf, sinf: not always the double result rounded) called as upstream's kernels call them;
    libm is opened on the first use (one instance, `_F32_OPS`), not at import."""
    r = staticmethod(_f32)

    @staticmethod
    def fma(a, b, c):  # float operands: the product is exact in double, one rounding after
        return _f32(a * b + c)

    def __getattr__(self, name):
        if name not in ("acos", "cos", "sin"):
            raise AttributeError(name)
        import ctypes
        import ctypes.util

        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        for fname in ("acos", "cos", "sin"):
            fn = getattr(libm, fname + "f")
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
            setattr(self, fname, fn)
        return getattr(self, name)


_F32_OPS = _F32()


# The trigonometric forms and recurrences take `m`, upstream's `T`: with float32 each step is
# rounded (`n * std::acos(x)` converts n to float and multiplies in float) and the recurrence
# overflows where float does; for a huge n the product's rounding decides the result entirely.
def cheb_t(x, n, m=_F64):
    r = m.r
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return 1.0 if (x > 0 or n % 2 == 0) else -1.0
    if n > 6 and abs(x) < 1.0:
        return m.cos(r(r(n) * m.acos(x)))
    if n == 0:
        return 1.0
    return x if n == 1 else _recur(1.0, x, n, lambda k, p, q: m.fma(x + x, q, -p))


def cheb_u(x, n, m=_F64, trig_above=8):
    r = m.r
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return float(_i64(n + 1)) if (x > 0 or n % 2 == 0) else -float(_i64(n + 1))
    if n > trig_above and abs(x) < 1.0:
        a = m.acos(x)
        sa = m.sin(a)
        if sa != 0.0:
            return r(m.sin(r(r(n + 1) * a)) / sa)
        return r(r(r(n + 1) * m.cos(r(r(n + 1) * a))) / x)
    if n == 0:
        return 1.0
    return x + x if n == 1 else _recur(1.0, x + x, n, lambda k, p, q: m.fma(x + x, q, -p))


def cheb_v(x, n, m=_F64, trig_above=8):
    r = m.r
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        if x > 0:
            return 1.0
        return float(_i64(n + n + 1)) if n % 2 == 0 else -float(_i64(n + n + 1))
    if n > trig_above and abs(x) < 1.0:
        a = m.acos(x)
        if m.sin(a / 2.0) != 1.0:
            return r(m.cos(r(r(r(n) + 0.5) * a)) / m.cos(a / 2.0))
        return float(_i64(n + n + 1)) if n % 2 == 0 else -float(_i64(n + n + 1))
    if n == 0:
        return 1.0
    return r(x + x - 1.0) if n == 1 else _recur(1.0, r(x + x - 1.0), n, lambda k, p, q: m.fma(x + x, q, -p))


def cheb_w(x, n, m=_F64, trig_above=8):
    r = m.r
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        if x > 0:
            return float(_i64(n + n + 1))
        return 1.0 if n % 2 == 0 else -1.0
    if n > trig_above and abs(x) < 1.0:
        a = m.acos(x)
        if m.cos(a / 2.0) != 1.0:
            return r(m.sin(r(r(r(n) + 0.5) * a)) / m.sin(a / 2.0))
        if x > 0:
            return float(_i64(n + n + 1))
        return 1.0 if n % 2 == 0 else -1.0
    if n == 0:
        return 1.0
    return r(x + x + 1.0) if n == 1 else _recur(1.0, r(x + x + 1.0), n, lambda k, p, q: m.fma(x + x, q, -p))


def _shifted(fn, x, n, at1, at0, m):
    """The shifted polynomials are the plain ones at 2x - 1 (computed in T), with upstream's
    exact values at x = 1 and x = 0."""
    if n < 0:
        return 0.0
    if x == 1.0:
        return at1(n)
    if x == 0.0:
        return at0(n)
    # (upstream's shifted U, V, W take the trigonometric form from degree 7, as T does)
    return fn(m.r(x + x - 1.0), n, m) if fn is cheb_t else fn(m.r(x + x - 1.0), n, m, 6)


def shifted_t(x, n, m=_F64):
    return _shifted(cheb_t, x, n, lambda n: 1.0, lambda n: 1.0 if n % 2 == 0 else -1.0, m)


def shifted_u(x, n, m=_F64):
    return _shifted(cheb_u, x, n, lambda n: float(_i64(n + 1)), lambda n: float(_i64(n + 1)) if n % 2 == 0 else -float(_i64(n + 1)), m)


def shifted_v(x, n, m=_F64):
    return _shifted(cheb_v, x, n, lambda n: 1.0, lambda n: float(_i64(n + n + 1)) if n % 2 == 0 else -float(_i64(n + n + 1)), m)


def shifted_w(x, n, m=_F64):
    return _shifted(cheb_w, x, n, lambda n: float(_i64(n + n + 1)), lambda n: 1.0 if n % 2 == 0 else -1.0, m)


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


def _poly(fn, m=None):
    def f(x, n):
        # upstream's kernel takes n as T (float32 rounds a large degree) and then
        # static_cast<int64_t>(n): NaN, the infinities and values out of range give INT64_MIN on
        # x86 (so 0, as for every negative degree), where a Python int would loop for ever
        if m is not None:
            x, n = m.r(x), m.r(n)
        k = -(2**63) if math.isnan(n) or math.isinf(n) else int(n)
        if not -(2**63) <= k < 2**63:
            k = -(2**63)
        if math.isnan(x) and k > 0:
            return _NAN  # a recurrence of degree >= 1 is NaN at NaN
        return fn(x, k) if m is None else fn(x, k, m)
    return f


def _register_poly(name, fn, fn_f32=None):
    """`fn(x, n)` in float64; in float32 `fn_f32(x, n)` where given, else `fn(x, n, _f32)` for
    the polynomials whose trigonometric forms take the rounding."""
    f = _poly(fn)
    f32 = _poly(fn_f32) if fn_f32 else (_poly(fn, _F32_OPS) if fn in _ROUNDED else f)

    def both(x, n):
        dtype = _zeta_dtype(x, n)
        B.broadcast_shapes(x._tn_sizes, n._tn_sizes)  # the iterator's shapes, before the dtype dispatch
        _refuse_reduced(name, dtype)
        return _map(f32 if dtype == _torch().float32 else f, x, n, dtype=dtype)

    impl(name)(both)
    impl(name + ".x_scalar")(lambda x, n: both(B.C._tn_scalar_to_tensor(x), n))
    impl(name + ".n_scalar")(lambda x, n: both(x, B.C._tn_scalar_to_tensor(n)))


_ROUNDED = (cheb_t, cheb_u, cheb_v, cheb_w, shifted_t, shifted_u, shifted_v, shifted_w)
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


@impl("xlog1py.Tensor")
def xlog1py(self, other):
    return x_times_log(self, other, log1p=True)

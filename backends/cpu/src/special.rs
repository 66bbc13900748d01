//! The gamma family: `lgamma`, `digamma`, `polygamma` and the Hurwitz zeta function, over whole
//! tensors (they were Python loops over elements in the core).
//!
//! The algorithms are the ones upstream's scalar CPU kernels run (aten/src/ATen/native/Math.h,
//! from Cephes), evaluated in the compute type (float32 for float32, float64 for float64), so
//! the results agree with upstream's to its rounding: `lgamma` is libm's (the fdlibm code that
//! glibc's `lgamma` also descends from); `digamma` pushes x past 10 with psi(x) = psi(x+1) - 1/x,
//! then sums the asymptotic series in 1/x^2 whose coefficients are B_2k / 2k (reflection for
//! x < 0); `trigamma` pushes x by six steps, then its own asymptotic series; `zeta` sums
//! Euler-Maclaurin with the coefficients (2k)! / B_2k; `polygamma(n >= 2)` is
//! (-1)^(n+1) n! zeta(n+1, x).

use crate::dispatch_float;
use crate::dtype::{Elem, FloatElem, Real};
use crate::kernel::{Call, KResult};
use crate::kernels;
use crate::strided::{map1, map2};
use crate::unary::{float_unary, FloatFn};

kernels! {
    k_lgamma = "aten::lgamma" => |c| float_unary::<Lgamma>(c);
    k_digamma = "aten::digamma" => |c| float_unary::<Digamma>(c);
    k_polygamma = "aten::polygamma" => |c| polygamma(c);
    k_zeta = "aten::special_zeta" => |c| zeta_kernel(c);
}

struct Lgamma;
impl FloatFn for Lgamma {
    const NAME: &'static str = "lgamma_vml_cpu";
    fn f<A: Real>(x: A) -> A {
        x.lgamma()
    }
}

struct Digamma;
impl FloatFn for Digamma {
    const NAME: &'static str = "digamma";
    fn f<A: Real>(x: A) -> A {
        digamma(x)
    }
}

/// psi(10) = H_9 - Euler's gamma: the value the recurrence lands on for integer arguments.
const PSI_10: f64 = 2.251_752_589_066_721;

/// B_2k / 2k for k = 7 down to 1 (Horner order): the asymptotic series of digamma.
const DIGAMMA_SERIES: [f64; 7] = [
    1.0 / 12.0,
    -691.0 / 32760.0,
    1.0 / 132.0,
    -1.0 / 240.0,
    1.0 / 252.0,
    -1.0 / 120.0,
    1.0 / 12.0,
];

pub fn digamma<A: Real>(x: A) -> A {
    let c = A::c;
    if x == A::ZERO {
        // +-0 gives -+inf, as the C standard's gamma functions and SciPy
        return A::INF.copysign(-x);
    }
    if x < A::ZERO {
        if x == x.trunc() {
            return A::NAN;
        }
        // tan(pi * frac(x)) is more accurate than tan(pi * x) for |x| > 1; the term is computed
        // in double for float32 too, as upstream's calc_digamma(float)
        let r = x.to_f64() - x.to_f64().trunc();
        let pi = std::f64::consts::PI;
        return digamma(A::ONE - x) - c(pi / (pi * r).tan());
    }
    let mut x = x;
    let mut result = A::ZERO;
    while x < c(10.0) {
        result = result - A::ONE / x;
        x = x + A::ONE;
    }
    if x == c(10.0) {
        return result + c(PSI_10);
    }
    let mut y = A::ZERO;
    if x < c(1.0e17) {
        let z = A::ONE / (x * x);
        let mut p = c(DIGAMMA_SERIES[0]);
        for &a in &DIGAMMA_SERIES[1..] {
            p = p * z + c(a);
        }
        y = z * p;
    }
    result + x.ln() - c(0.5) / x - y
}

pub fn trigamma<A: Real>(x: A) -> A {
    let c = A::c;
    let pi = c(std::f64::consts::PI);
    let (mut sign, mut result, mut x) = (A::ONE, A::ZERO, x);
    if x < c(0.5) {
        sign = -A::ONE;
        let s = (pi * x).sin();
        result = result - (pi * pi) / (s * s);
        x = A::ONE - x;
    }
    for _ in 0..6 {
        result = result + A::ONE / (x * x);
        x = x + A::ONE;
    }
    let ixx = A::ONE / (x * x);
    let tail = c(1.0 / 6.0) - ixx * (c(1.0 / 30.0) - ixx * c(1.0 / 42.0));
    result = result + (A::ONE + A::ONE / (c(2.0) * x) + ixx * tail) / x;
    sign * result
}

/// (2k)! / B_2k, k = 1..12: the Euler-Maclaurin remainder's coefficients.
const ZETA_A: [f64; 12] = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1_892_437_580.318_379_2,
    7.47242496e10,
    -2_950_130_727_918.164,
    116_467_828_143_500.67,
    -4.597_978_722_407_473e15,
    1.815_210_540_194_354_6e17,
    -7.166_165_256_175_667e18,
];

/// Hurwitz zeta(x, q) = sum_k (k + q)^-x, as Cephes's `zeta`; in double for every dtype (upstream's
/// accumulate type on the CPU), rounded by the caller.
pub fn zeta(x: f64, q: f64) -> f64 {
    const MACHEP: f64 = 1.110_223_024_625_156_5e-16;
    if x == 1.0 {
        return f64::INFINITY;
    }
    if x < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if x != x.floor() {
            return f64::NAN; // q^-x would not be real
        }
    }
    // the first terms directly, until k + q > 9 (and at least nine of them)
    let (mut s, mut a, mut b, mut i) = (q.powf(-x), q, 0.0, 0);
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-x);
        s += b;
        if -MACHEP * s < b && b < MACHEP * s {
            return s;
        }
    }
    // Euler-Maclaurin for the rest: the integral, half the last term, then the Bernoulli terms
    let w = a;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    let (mut a, mut k) = (1.0, 0.0);
    for coef in ZETA_A {
        a *= x + k;
        b /= w;
        let t = a * b / coef;
        s += t;
        if (t / s).abs() < MACHEP {
            return s;
        }
        // the next term's two new factors of x(x+1)...(x+2j), and w^2 more in the denominator
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    s
}

/// `polygamma(int n, Tensor self)`; the core rejects n < 0 and casts `self` to the output dtype.
fn polygamma(c: &mut Call) -> KResult {
    let n = c.int(0)?;
    let (out, a) = (c.out(0)?, c.tensor(1)?);
    // SAFETY: as `unary`.
    unsafe {
        dispatch_float!(out.dtype, "polygamma", T, A => map1(&out, &a, |x: T| {
            let x: A = x.to_acc();
            T::from_acc(match n {
                0 => digamma(x),
                1 => trigamma(x),
                _ => {
                    let sign = if n % 2 == 1 { A::ONE } else { -A::ONE };
                    let nf = A::c(n as f64);
                    sign * (nf + A::ONE).lgamma().exp() * A::c(zeta((n + 1) as f64, x.to_f64()))
                }
            })
        }))
    }
}

/// `special_zeta(Tensor self, Tensor other)`: operands broadcast and cast to the output dtype.
fn zeta_kernel(c: &mut Call) -> KResult {
    let (out, x, q) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?);
    // SAFETY: the core broadcast both operands to `out`'s shape and cast them to its dtype.
    unsafe {
        dispatch_float!(out.dtype, "zeta", T, A => map2(&out, &x, &q, |x: T, q: T| {
            let (x, q): (A, A) = (x.to_acc(), q.to_acc());
            T::from_acc(A::c(zeta(x.to_f64(), q.to_f64())))
        }))
    }
}

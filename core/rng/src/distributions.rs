//! The rejection samplers behind `torch.distributions`: `poisson`, `binomial`, `_standard_gamma`
//! and the gamma draws of `_sample_dirichlet` (with the gamma draw's reparameterised gradient,
//! `_standard_gamma_grad`, which lives beside its sampler upstream too), as upstream's CPU kernels run them
//! (aten/src/ATen/native/Distributions.{h,cpp}: one element at a time, in the input's order,
//! each drawing standard uniforms from `random64()` and standard normals through the generator's
//! cached Box-Muller pair until it accepts).
//!
//! Bit identity needs the arithmetic upstream's templates do: where `scalar_t` is float, some
//! steps round in float (the `Real` methods below), others in double (`accscalar_t`), and float
//! literals such as `0.0331f` enter double expressions as the float's value. The base-ISA
//! translation unit these live in is compiled without FMA, so nothing here is fused.
//!
//! Where upstream's loop never ends (a NaN or too-negative gamma concentration, a NaN binomial
//! count), these return an error instead of hanging.

use crate::boxmuller::{normal_double_sample, uniform_f64};
use crate::{CpuGenerator, RngError};

/// float or double: the arithmetic an upstream template does in `scalar_t`.
pub trait Real: Copy + PartialOrd + std::fmt::Debug {
    fn f64(self) -> f64;
    /// `static_cast<scalar_t>(x)`
    fn of(x: f64) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn one() -> Self;
    fn sqrt(self) -> Self;
    fn floor(self) -> Self;
    /// `std::log1p(scalar_t)`: log1pf for float
    fn log1p(self) -> Self;
    /// `std::numeric_limits<scalar_t>::min()`
    fn min_positive() -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            fn f64(self) -> f64 {
                self as f64
            }
            fn of(x: f64) -> Self {
                x as $t
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
            fn one() -> Self {
                1.0
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn log1p(self) -> Self {
                self.ln_1p()
            }
            fn min_positive() -> Self {
                <$t>::MIN_POSITIVE
            }
        }
    };
}
real!(f32);
real!(f64);

/// glibc's `lgamma` (upstream calls `std::lgamma(double)`).
fn lgamma(x: f64) -> f64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn lgamma_r(x: f64, sign: *mut i32) -> f64;
        }
        let mut sign = 0i32;
        // SAFETY: lgamma_r only writes the sign through the pointer.
        unsafe { lgamma_r(x, &mut sign) }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        extern "C" {
            fn lgamma(x: f64) -> f64;
        }
        // SAFETY: a pure libm function.
        unsafe { lgamma(x) }
    }
}

/// `static_cast<int64_t>(double)` as x86-64 computes it (cvttsd2si): NaN and values outside
/// int64's range give INT64_MIN, where Rust's `as` would saturate.
fn to_i64(x: f64) -> i64 {
    const TWO_63: f64 = (1u64 << 63) as f64;
    if x.is_nan() || !(-TWO_63..TWO_63).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// One Poisson draw of rate `lambda` (upstream's `sample_poisson`): Hörmann's transformed
/// rejection (PTRS) from rate 10, the product of uniforms below it.
pub fn poisson(g: &mut CpuGenerator, lambda: f64) -> Result<i64, RngError> {
    if !(lambda >= 0.0) {
        return Err(RngError::new(
            "invalid Poisson rate, expected rate to be non-negative",
        ));
    }
    if lambda >= 10.0 {
        let slam = lambda.sqrt();
        let loglam = lambda.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = uniform_f64(g) - 0.5;
            let v = uniform_f64(g);
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lambda + 0.43).floor();
            if us >= 0.07 && v <= vr {
                return Ok(to_i64(k));
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
                <= -lambda + k * loglam - lgamma(k + 1.0)
            {
                return Ok(to_i64(k));
            }
        }
    } else if lambda == 0.0 {
        Ok(0)
    } else {
        let enlam = (-lambda).exp();
        let mut x = 0i64;
        let mut prod = 1.0f64;
        loop {
            prod *= uniform_f64(g);
            if prod > enlam {
                x += 1;
            } else {
                return Ok(x);
            }
        }
    }
}

/// The Stirling-series tail of log(k!) (upstream's `stirling_approx_tail`, in double).
fn stirling_tail(k: f64) -> f64 {
    const TAIL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ];
    if k <= 9.0 {
        return TAIL[k as usize];
    }
    let kp1sq = (k + 1.0) * (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)
}

/// Counts geometric waiting times until they pass `count` (the small-mean binomial).
fn binomial_inversion<T: Real>(g: &mut CpuGenerator, count: T, prob: T) -> T {
    let mut geom_sum = 0.0f64;
    let mut num_geom = T::of(0.0);
    let logprob = T::of(-prob.f64()).log1p().f64();
    loop {
        let geom = (uniform_f64(g).ln() / logprob).ceil();
        geom_sum += geom;
        if geom_sum > count.f64() {
            return num_geom;
        }
        num_geom = num_geom.add(T::one());
    }
}

/// Hörmann's BTRS (transformed rejection with squeeze), for count * prob >= 10, prob <= 0.5.
fn btrs<T: Real>(g: &mut CpuGenerator, count: T, prob: T) -> T {
    let one = T::one();
    let stddev = count.mul(prob).mul(one.sub(prob)).sqrt().f64();
    let b = 1.15 + 2.53 * stddev;
    let a = -0.0873 + 0.0248 * b + 0.01 * prob.f64();
    let c = count.mul(prob).f64() + 0.5;
    let v_r = 0.92 - 4.2 / b;
    let r = prob.div(one.sub(prob)).f64();
    let alpha = (2.83 + 5.1 / b) * stddev;
    let m = count.add(one).mul(prob).floor().f64();
    let n = count.f64();
    loop {
        let u = uniform_f64(g) - 0.5;
        let v = uniform_f64(g);
        let us = 0.5 - u.abs();
        let k = T::of(((2.0 * a / us + b) * u + c).floor());
        if k < T::of(0.0) || k > count {
            continue;
        }
        if us >= 0.07 && v <= v_r {
            return k;
        }
        let v = (v * alpha / (a / (us * us) + b)).ln();
        let kf = k.f64();
        let upper = (m + 0.5) * ((m + 1.0) / (r * (n - m + 1.0))).ln()
            + count.add(one).f64() * ((n - m + 1.0) / count.sub(k).add(one).f64()).ln()
            + (kf + 0.5) * (r * count.sub(k).add(one).f64() / k.add(one).f64()).ln()
            + stirling_tail(m)
            + stirling_tail(n - m)
            - stirling_tail(kf)
            - stirling_tail(count.sub(k).f64());
        if v <= upper {
            return k;
        }
    }
}

/// One binomial draw (upstream's `sample_binomial`): 0 for a non-positive count or probability,
/// `count` for probability 1, BTRS where the mean of the smaller tail is at least 10, inversion
/// below, NaN for a NaN probability; an error for a NaN count (upstream never returns).
pub fn binomial<T: Real>(g: &mut CpuGenerator, count: T, prob: T) -> Result<T, RngError> {
    let (cf, pf) = (count.f64(), prob.f64());
    if cf <= 0.0 || pf <= 0.0 {
        return Ok(T::of(0.0));
    }
    if pf >= 1.0 {
        return Ok(count);
    }
    if cf.is_nan() && (pf <= 0.5 || pf > 0.5) {
        // upstream's inversion loop compares against NaN forever
        return Err(RngError::new(
            "binomial: count is NaN (upstream's sampler never returns for it)",
        ));
    }
    if pf <= 0.5 {
        Ok(if count.mul(prob).f64() >= 10.0 {
            btrs(g, count, prob)
        } else {
            binomial_inversion(g, count, prob)
        })
    } else if pf > 0.5 {
        let q = T::of(1.0 - pf);
        Ok(count.sub(if count.mul(q).f64() >= 10.0 {
            btrs(g, count, q)
        } else {
            binomial_inversion(g, count, q)
        }))
    } else {
        Ok(T::of(f64::NAN))
    }
}

/// Marsaglia and Tsang's loop for d = alpha - 1/3 (alpha boosted above 1), times `scale`.
fn marsaglia_tsang(g: &mut CpuGenerator, scale: f64, d: f64) -> Result<f64, RngError> {
    if d.is_nan() || d < 0.0 {
        // c would be NaN: upstream's loop never accepts
        return Err(RngError::new(
            "gamma: the concentration must be at least -2/3 (upstream's sampler never returns below it)",
        ));
    }
    let c = 1.0 / (9.0 * d).sqrt();
    let k = 0.0331f32 as f64;
    loop {
        let (mut x, mut y);
        loop {
            x = normal_double_sample(g, 0.0, 1.0);
            y = 1.0 + c * x;
            if !(y <= 0.0) {
                break;
            }
        }
        let v = y * y * y;
        let u = 1.0 - uniform_f64(g);
        let xx = x * x;
        if u < 1.0 - k * xx * xx || u.ln() < 0.5 * xx + d * (1.0 - v + v.ln()) {
            return Ok(scale * d * v);
        }
    }
}

/// One standard gamma draw of concentration `alpha` in float (upstream's `sample_gamma<float,
/// double>`, then `max(FLT_MIN, sample)` as `_s_gamma_cpu` returns it).
pub fn standard_gamma_f32(g: &mut CpuGenerator, alpha: f32) -> Result<f32, RngError> {
    let mut alpha = alpha;
    let mut scale = 1.0f64;
    let sample = if alpha == 0.0 {
        0.0f32
    } else {
        if alpha < 1.0 {
            scale *= (1.0 - uniform_f64(g)).powf((1.0f32 / alpha) as f64);
            alpha += 1.0;
        }
        marsaglia_tsang(g, scale, (alpha - 1.0f32 / 3.0f32) as f64)? as f32
    };
    Ok(upstream_max(f32::MIN_POSITIVE, sample))
}

/// The same in double (`sample_gamma<double, double>`); also `_sample_dirichlet`'s draws.
pub fn standard_gamma_f64(g: &mut CpuGenerator, alpha: f64) -> Result<f64, RngError> {
    let mut alpha = alpha;
    let mut scale = 1.0f64;
    let sample = if alpha == 0.0 {
        0.0
    } else {
        if alpha < 1.0 {
            scale *= (1.0 - uniform_f64(g)).powf(1.0 / alpha);
            alpha += 1.0;
        }
        // `alpha - 1.0f / 3.0f`: the third is float's
        marsaglia_tsang(g, scale, alpha - (1.0f32 / 3.0f32) as f64)?
    };
    Ok(upstream_max(f64::MIN_POSITIVE, sample))
}

/// `std::max(a, b)`: `a < b ? b : a` (NaN in `b` gives `a`).
pub fn upstream_max<T: PartialOrd>(a: T, b: T) -> T {
    if a < b {
        b
    } else {
        a
    }
}

#[allow(clippy::excessive_precision)] // the constants as upstream writes them
/// Cephes' digamma in double as upstream's `digamma_one<double, double>` computes it (the
/// recurrence up to 10, then the asymptotic series; no FMA).
fn digamma_one(x: f64) -> f64 {
    const PSI_10: f64 = 2.251_752_589_066_721_107_64;
    const A: [f64; 7] = [
        8.333_333_333_333_333_333_33E-2,
        -2.109_279_609_279_609_279_61E-2,
        7.575_757_575_757_575_757_58E-3,
        -4.166_666_666_666_666_666_67E-3,
        3.968_253_968_253_968_253_97E-3,
        -8.333_333_333_333_333_333_33E-3,
        8.333_333_333_333_333_333_33E-2,
    ];
    let mut x = x;
    if x == 0.0 {
        return f64::INFINITY;
    }
    let mut additional = 0.0;
    if x < 0.0 {
        if x == x.floor() {
            return f64::INFINITY;
        }
        additional = -std::f64::consts::PI / (std::f64::consts::PI * x).tan();
        x = 1.0 - x;
    }
    let mut result = 0.0;
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    if x == 10.0 {
        return result + PSI_10 + additional;
    }
    let mut y = 0.0;
    if x < 1.0e17f32 as f64 {
        let z = 1.0 / (x * x);
        y = z * A.iter().fold(0.0, |acc, &c| acc * z + c);
    }
    result + x.ln() - (0.5 / x) - y + additional
}

/// The reparameterised gradient of a standard gamma draw `x` with respect to its concentration
/// `alpha`, -(d/dalpha cdf(x; alpha)) / pdf(x; alpha), as upstream's `standard_gamma_grad_one<T,
/// double>` (the backward of `_standard_gamma`): a Taylor series for x < 0.8, Rice's saddle point
/// expansion for alpha > 8, a bivariate rational approximation otherwise; all in double.
pub fn standard_gamma_grad(alpha: f64, x: f64) -> f64 {
    let f = |v: f32| v as f64; // float literals of upstream's double expressions
    if x < f(0.8) {
        let mut numer = 1.0;
        let mut denom = alpha;
        let mut series1 = numer / denom;
        let mut series2 = numer / (denom * denom);
        for i in 1..=5 {
            numer *= -x / i as f64;
            denom += 1.0;
            series1 += numer / denom;
            series2 += numer / (denom * denom);
        }
        let pow_x_alpha = x.powf(alpha);
        let gamma_pdf = x.powf(alpha - 1.0) * (-x).exp();
        let gamma_cdf = pow_x_alpha * series1;
        let gamma_cdf_alpha = (x.ln() - digamma_one(alpha)) * gamma_cdf - pow_x_alpha * series2;
        let result = -gamma_cdf_alpha / gamma_pdf;
        return if result.is_nan() { 0.0 } else { result };
    }
    if alpha > 8.0 {
        if f(0.9) * alpha <= x && x <= f(1.1) * alpha {
            let numer_1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha);
            let numer_2 = 1440.0 * (alpha * alpha) + 6.0 * x * (53.0 - 120.0 * x)
                - 65.0 * x * x / alpha
                + alpha * (107.0 + 3600.0 * x);
            let denom = 1244160.0 * (alpha * alpha) * (alpha * alpha);
            return numer_1 * numer_2 / denom;
        }
        let denom = (8.0 * alpha).sqrt();
        let term2 = denom / (alpha - x);
        let term3 = (x - alpha - alpha * (x / alpha).ln()).powf(-1.5);
        let term23 = if x < alpha {
            term2 - term3
        } else {
            term2 + term3
        };
        let term1 = (x / alpha).ln() * term23
            - (2.0 / alpha).sqrt() * (alpha + x) / ((alpha - x) * (alpha - x));
        let stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha));
        let numer = x * term1;
        return -stirling * numer / denom;
    }
    const COEF_UV: [[f64; 8]; 3] = [
        [
            0.16009398,
            -0.094634809,
            0.025146376,
            -0.0030648343,
            1.0,
            0.32668115,
            0.10406089,
            0.0014179084,
        ],
        [
            0.53487893,
            0.1298071,
            0.065735949,
            -0.0015649758,
            0.16639465,
            0.020070113,
            -0.0035938915,
            -0.00058392623,
        ],
        [
            0.040121004,
            -0.0065914022,
            -0.0026286047,
            -0.0013441777,
            0.017050642,
            -0.0021309326,
            0.00085092367,
            -1.5247877e-07,
        ],
    ];
    let u = (x / alpha).ln();
    let v = alpha.ln();
    let c: Vec<f64> = (0..8)
        .map(|i| COEF_UV[0][i] + u * (COEF_UV[1][i] + u * COEF_UV[2][i]))
        .collect();
    let p = c[0] + v * (c[1] + v * (c[2] + v * c[3]));
    let q = c[4] + v * (c[5] + v * (c[6] + v * c[7]));
    (p / q).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_refuses_negative_and_nan_rates() {
        let mut g = CpuGenerator::new(0);
        assert!(poisson(&mut g, -1.0).is_err());
        assert!(poisson(&mut g, f64::NAN).is_err());
        assert_eq!(poisson(&mut g, 0.0), Ok(0));
    }

    #[test]
    fn draws_have_their_distributions_means() {
        let mut g = CpuGenerator::new(42);
        let n = 20_000;
        for &lam in &[0.5, 4.0, 30.0] {
            let mean: f64 = (0..n)
                .map(|_| poisson(&mut g, lam).unwrap() as f64)
                .sum::<f64>()
                / n as f64;
            assert!(
                (mean - lam).abs() < 0.05 * lam.max(1.0),
                "poisson {lam}: {mean}"
            );
        }
        for &(cnt, p) in &[(20.0f64, 0.3f64), (100.0, 0.8), (7.0, 0.1)] {
            let mean: f64 = (0..n)
                .map(|_| binomial(&mut g, cnt, p).unwrap())
                .sum::<f64>()
                / n as f64;
            assert!(
                (mean - cnt * p).abs() < 0.05 * (cnt * p).max(1.0),
                "binomial {cnt} {p}: {mean}"
            );
        }
        for &a in &[0.3f64, 1.0, 7.5] {
            let mean: f64 = (0..n)
                .map(|_| standard_gamma_f64(&mut g, a).unwrap())
                .sum::<f64>()
                / n as f64;
            assert!((mean - a).abs() < 0.05 * a.max(1.0), "gamma {a}: {mean}");
        }
    }

    #[test]
    fn endless_upstream_loops_are_errors() {
        let mut g = CpuGenerator::new(1);
        assert!(standard_gamma_f64(&mut g, f64::NAN).is_err());
        assert!(standard_gamma_f32(&mut g, -0.9).is_err());
        assert!(binomial(&mut g, f64::NAN, 0.3).is_err());
        assert!(binomial(&mut g, 5.0f32, f32::NAN).unwrap().is_nan());
    }

    #[test]
    fn x86_conversion_of_out_of_range_doubles() {
        assert_eq!(to_i64(f64::INFINITY), i64::MIN);
        assert_eq!(to_i64(f64::NAN), i64::MIN);
        assert_eq!(to_i64(-3.0), -3);
    }
}

//! Box–Muller transforms exactly as upstream's compiled CPU kernels compute them.
//!
//! * `normal_fill_16_f32`: the float block transform of `normal_fill` on AVX2
//!   builds (`NormalFill16<float>` in `aten/src/ATen/native/cpu/DistributionTemplates.h`),
//!   which uses the Cephes-style `log256_ps` / `sincos256_ps` from
//!   `aten/src/ATen/native/cpu/avx_mathfun.h`. GCC contracted several
//!   multiply/add pairs of those intrinsics into FMAs; the sequence below was
//!   transcribed per lane from the disassembly of libtorch_cpu.so 2.13.0
//!   (`NormalFill16<float,true>::operator() [clone .constprop.0]`, AVX2 kernel),
//!   so every rounding step matches. Lanes are independent, so a scalar loop
//!   over the 8 lanes is bit-identical to the vector code.
//! * `normal_fill_16_f64`: the generic `NormalFill16<double>` (glibc `log`,
//!   `sincos`, `sqrt`, and `fma` for the final scaling).
//! * `normal_double_sample`: `at::normal_distribution<double>` with the cached
//!   second sample (glibc `log1p` and `sincos`; scaling contracted to an FMA).
//!
//! The glibc calls are made through the same libm the upstream process uses on
//! this machine, so they agree bit for bit on the same machine.

use crate::CpuGenerator;

// Constants of avx_mathfun.h as stored in the binary (float bit patterns).
const MIN_NORM_POS: u32 = 0x0080_0000;
const INV_MANT_MASK: u32 = 0x807f_ffff;
const HALF_BITS: u32 = 0x3f00_0000; // 0.5f
const SQRTHF: u32 = 0x3f35_04f3;
const LOG_P: [u32; 9] = [
    0x3d90_21bb, // p0  7.0376836292E-2
    0xbdeb_d1b8, // p1 -1.1514610310E-1
    0x3def_251a, // p2  1.1676998740E-1
    0xbdfe_5d4f, // p3 -1.2420140846E-1
    0x3e11_e9bf, // p4  1.4249322787E-1
    0xbe2a_ae50, // p5 -1.6668057665E-1
    0x3e4c_ceac, // p6  2.0000714765E-1
    0xbe7f_fffc, // p7 -2.4999993993E-1
    0x3eaa_aaaa, // p8  3.3333331174E-1
];
const LOG_Q1: u32 = 0xb95e_8083; // -2.12194440e-4
const LOG_Q2: u32 = 0x3f31_8000; // 0.693359375
const FOPI: u32 = 0x3fa2_f983; // 4/pi
const MINUS_DP1: u32 = 0xbf49_0000;
const MINUS_DP2: u32 = 0xb97d_a000;
const MINUS_DP3: u32 = 0xb322_2169;
const COSCOF: [u32; 3] = [0x37cc_f5ce, 0xbab6_061a, 0x3d2a_aaa5];
const SINCOF: [u32; 3] = [0xb94c_a1f9, 0x3c08_839e, 0xbe2a_aaa3];
/// `_mm256_set1_ps(2.0f * c10::pi<double>)`
const TWO_PI_F32: u32 = 0x40c9_0fdb;

#[inline(always)]
fn f(b: u32) -> f32 {
    f32::from_bits(b)
}

/// One lane of `NormalFill16<float>` (AVX2): `d0` is `data[j]`, `d8` is
/// `data[j + 8]`; returns the new `(data[j], data[j + 8])`.
#[inline]
pub fn normal_fill_lane_f32(d0: f32, d8: f32, mean: f32, std: f32) -> (f32, f32) {
    // ---- radius = sqrt(-2 * log256_ps(1 - d0)) ----
    let u1 = 1.0f32 - d0;
    let invalid = u1 <= 0.0;
    let mut x = if u1 > f(MIN_NORM_POS) {
        u1
    } else {
        f(MIN_NORM_POS)
    }; // vmaxps
    let imm0 = (x.to_bits() >> 23) as i32;
    x = f((x.to_bits() & INV_MANT_MASK) | HALF_BITS);
    let mut e = (imm0.wrapping_sub(0x7f)) as f32;
    e += 1.0;
    let lt = x < f(SQRTHF);
    let tmp = if lt { x } else { 0.0 };
    e -= if lt { 1.0 } else { 0.0 };
    x = (x + -1.0) + tmp;
    let z = x * x;
    let mut y = f(LOG_P[0]).mul_add(x, f(LOG_P[1]));
    for p in &LOG_P[2..] {
        y = y.mul_add(x, f(*p));
    }
    y = (x * y).mul_add(z, e * f(LOG_Q1));
    y = (-z).mul_add(0.5, y); // vfnmadd: y - z*0.5, single rounding
    let mut lg = e.mul_add(f(LOG_Q2), x + y);
    if invalid {
        lg = f(lg.to_bits() | 0xffff_ffff); // OR with the all-ones mask -> NaN
    }
    let radius = (lg * -2.0f32).sqrt();

    // ---- sincos256_ps(2*pi * d8) ----
    let theta = f(TWO_PI_F32) * d8;
    let mut sign_sin = theta.to_bits() & 0x8000_0000;
    let mut xs = f(theta.to_bits() & 0x7fff_ffff);
    let yv = xs * f(FOPI);
    let mut j = yv as i32; // vcvttps2dq (truncation); yv is small and finite here
    j = j.wrapping_add(1) & !1;
    let yf = j as f32;
    let swap_sign_sin = ((j & 4) as u32) << 29;
    let poly_mask = (j & 2) == 0;
    sign_sin ^= swap_sign_sin;
    xs = yf.mul_add(f(MINUS_DP1), xs);
    xs = f(MINUS_DP2).mul_add(yf, xs);
    xs = yf.mul_add(f(MINUS_DP3), xs);
    let sign_cos = ((!(j.wrapping_sub(2)) & 4) as u32) << 29;
    let z = xs * xs;
    let tmp = z * 0.5;
    let mut yc = f(COSCOF[0]).mul_add(z, f(COSCOF[1]));
    yc = yc.mul_add(z, f(COSCOF[2]));
    yc = z * yc;
    yc = z.mul_add(yc, -tmp); // vfmsub231ps: z*yc - tmp
    yc += 1.0;
    let mut ys = f(SINCOF[0]).mul_add(z, f(SINCOF[1]));
    ys = ys.mul_add(z, f(SINCOF[2]));
    ys = z * ys;
    ys = xs.mul_add(ys, xs);
    let ysin2 = if poly_mask { ys } else { 0.0 };
    let ysin1 = if poly_mask { 0.0 } else { yc };
    let ys_rest = ys - ysin2;
    let yc_rest = yc - ysin1;
    let s = ysin2 + ysin1;
    let c = ys_rest + yc_rest;
    let sin = f(s.to_bits() ^ sign_sin);
    let cos = f(c.to_bits() ^ sign_cos);

    let n1 = radius * cos;
    let n2 = radius * sin;
    (n1.mul_add(std, mean), n2.mul_add(std, mean))
}

/// `NormalFill16<float>` on 16 uniforms in place (AVX2 build).
#[inline]
pub fn normal_fill_16_f32(data: &mut [f32], mean: f32, std: f32) {
    for j in 0..8 {
        let (a, b) = normal_fill_lane_f32(data[j], data[j + 8], mean, std);
        data[j] = a;
        data[j + 8] = b;
    }
}

/// `NormalFill16<double>` (generic template, compiled in the AVX2 kernel with FMA).
#[inline]
pub fn normal_fill_16_f64(data: &mut [f64], mean: f64, std: f64) {
    for j in 0..8 {
        let u1 = 1.0 - data[j];
        let u2 = data[j + 8];
        let radius = (-2.0 * u1.ln()).sqrt();
        let theta = TWO_PI_F64 * u2;
        let (s, c) = sincos(theta);
        data[j] = (radius * c).mul_add(std, mean);
        data[j + 8] = (radius * s).mul_add(std, mean);
    }
}

/// `2.0 * c10::pi<double>` (exact doubling of pi).
pub const TWO_PI_F64: f64 = 2.0 * std::f64::consts::PI;

/// glibc `sincos` (upstream's GCC merged sin/cos into one `sincos` call).
#[inline]
pub fn sincos(x: f64) -> (f64, f64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn sincos(x: f64, s: *mut f64, c: *mut f64);
        }
        let (mut s, mut c) = (0.0f64, 0.0f64);
        // SAFETY: glibc libm sincos writes both outputs and nothing else.
        unsafe { sincos(x, &mut s, &mut c) };
        (s, c)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        (x.sin(), x.cos())
    }
}

/// Standard uniform double in [0, 1): 53 low bits of one `random64()`.
#[inline]
pub fn uniform_f64(gen: &mut CpuGenerator) -> f64 {
    ((gen.random64() & ((1u64 << 53) - 1)) as f64) * (1.0 / (1u64 << 53) as f64)
}

/// Standard uniform float in [0, 1): 24 low bits of one `random()`.
#[inline]
pub fn uniform_f32(gen: &mut CpuGenerator) -> f32 {
    ((gen.random() & ((1u32 << 24) - 1)) as f32) * (1.0 / (1u32 << 24) as f32)
}

/// `at::normal_distribution<double>(mean, std)(gen)`: uses and refills the
/// generator's cached double sample.
#[inline]
pub fn normal_double_sample(gen: &mut CpuGenerator, mean: f64, std: f64) -> f64 {
    if let Some(cached) = gen.next_double_normal_sample() {
        gen.set_next_double_normal_sample(None);
        return cached.mul_add(std, mean);
    }
    let u1 = uniform_f64(gen);
    let u2 = uniform_f64(gen);
    let r = (-2.0 * (-u2).ln_1p()).sqrt();
    let theta = TWO_PI_F64 * u1;
    let (s, c) = sincos(theta);
    gen.set_next_double_normal_sample(Some(r * s));
    (r * c).mul_add(std, mean)
}

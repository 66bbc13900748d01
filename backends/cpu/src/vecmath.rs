//! Float kernels computed the way upstream's vectorised CPU kernels compute them, so values agree
//! bit for bit on x86-64 with AVX2 and FMA (checked against torch 2.13.0 by
//! `tests/test_kernel_agreement.py`):
//!
//! - the lane structure of `at::vec::Vectorized<float>`: 8 lanes under upstream's AVX2 capability,
//!   16 under AVX512 for the kernels registered with `ALSO_REGISTER_AVX512_DISPATCH` (softmax);
//!   kernels registered with `REGISTER_DISPATCH` alone (layer norm) run their AVX2 build on an
//!   AVX512 machine. Lanes are plain arrays here; the compiler maps them onto whatever vectors
//!   the machine has, so only the arithmetic order is upstream's, not the instruction set.
//! - `vec::reduce_all` (aten/src/ATen/cpu/vec/functional_base.h): a running vector over full
//!   vectors, the tail merged into the first lanes, then the halving shuffle tree
//!   (lane `i` with `i ^ W/2`, ..., `i ^ 1`); rows shorter than one vector fold sequentially.
//! - `Vectorized<float>::exp` is Sleef's `Sleef_expf8_u10` / `Sleef_expf16_u10` and `log` is
//!   `Sleef_logf*_u10`: [`sleef_expf`] and [`sleef_logf_u1`] follow Sleef's algorithms
//!   (sleefsimdsp.c `xexpf` and `xlogf_u1`, src/common/df.h for the double-float steps, with the
//!   fused multiply-adds its AVX2/AVX512 helpers use); constants are Sleef's.
//!
//! Upstream picks its capability once (`ATEN_CPU_CAPABILITY` overrides the CPU's); so does
//! [`capability`]. Without AVX2+FMA (or off x86-64) the callers keep their scalar paths.

// Sleef's and glibc's constants are written as their sources publish them (some with more digits
// than an f32 holds, one equal to LOG2_E): the literal is the reference, the rounding is the
// compiler's, as in C.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

use std::sync::OnceLock;

/// Upstream's CPU capability, as `torch.backends.cpu.get_cpu_capability()` reports it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cap {
    Default,
    Avx2,
    Avx512,
}

/// The capability upstream would select on this machine: `ATEN_CPU_CAPABILITY` when it is
/// `default`/`avx2`/`avx512` (upstream's override, compared exactly as upstream compares it)
/// and this machine can run it, else AVX512 with avx512f/vl/bw/dq and FMA, AVX2 with avx2 and
/// FMA, else the default build. The core applies the same rule
/// (torchnative_core/cpu_capability.py) to report it; `_native.cpu_capability()` exposes this
/// one so the tests can check that the two agree.
pub fn capability() -> Cap {
    static CAP: OnceLock<Cap> = OnceLock::new();
    *CAP.get_or_init(|| {
        let hw = detect();
        match std::env::var("ATEN_CPU_CAPABILITY").as_deref() {
            Ok("default") => Cap::Default,
            Ok("avx2") if hw != Cap::Default => Cap::Avx2,
            Ok("avx512") if hw == Cap::Avx512 => Cap::Avx512,
            _ => hw,
        }
    })
}

/// The capability's name as `torch.backends.cpu.get_cpu_capability()` spells it.
pub fn capability_name() -> &'static str {
    match capability() {
        Cap::Default => "DEFAULT",
        Cap::Avx2 => "AVX2",
        Cap::Avx512 => "AVX512",
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn detect() -> Cap {
    let fma = std::arch::is_x86_feature_detected!("fma");
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    if !(fma && avx2) {
        return Cap::Default;
    }
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
    {
        Cap::Avx512
    } else {
        Cap::Avx2
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn detect() -> Cap {
    Cap::Default
}

/// Float lanes of a kernel upstream registers for AVX512 too (softmax): `None` where the
/// scalar paths run.
pub fn lanes_avx512_kernel() -> Option<usize> {
    match capability() {
        Cap::Avx512 => Some(16),
        Cap::Avx2 => Some(8),
        Cap::Default => None,
    }
}

/// Float lanes of a kernel upstream registers with `REGISTER_DISPATCH` only (layer norm: the
/// AVX2 build runs on AVX512 machines).
pub fn lanes_avx2_kernel() -> Option<usize> {
    match capability() {
        Cap::Avx512 | Cap::Avx2 => Some(8),
        Cap::Default => None,
    }
}

// ----------------------------------------------------------------------------------------------
// Sleef's expf and logf (u10), scalar; the row loops below vectorise them.

/// Sleef `xexpf` (sleefsimdsp.c; the u10 variant behind `Vectorized<float>::exp`):
/// `q = rint(d / ln2)`, `s = d - q ln2` in two parts (Cody-Waite), a degree-6 polynomial by
/// fused multiply-adds, `2^q` applied in two halves; below -104 gives 0, above 100 infinity.
#[inline(always)]
pub fn sleef_expf(d: f32) -> f32 {
    const R_LN2F: f32 = 1.442_695_04;
    // q = rint(d / ln2) by the 1.5 * 2^23 shift: exact round-to-nearest-even for
    // |d / ln2| < 2^22, which covers every argument whose result is not replaced below; q is read
    // from the shifted value's bits (`round_ties_even` and a saturating float-to-int cast kept
    // the loop scalar: 3x slower). NaN stays NaN through `s`.
    const SHIFT: f32 = 12_582_912.0;
    let t = d * R_LN2F + SHIFT;
    let qf = t - SHIFT;
    let q = (t.to_bits() as i32).wrapping_sub(0x4B40_0000);
    sleef_expf_from_q(d, qf, q)
}

/// The rest of [`sleef_expf`] once `q = rint(d / ln2)` is known (as a float `qf` and an
/// integer `q`): `s = d - q ln2` in two parts, the polynomial, `2^q` in two halves, the cut-offs.
#[inline(always)]
fn sleef_expf_from_q(d: f32, qf: f32, q: i32) -> f32 {
    const L2UF: f32 = 0.693_145_751_953_125;
    const L2LF: f32 = 1.428_606_765_330_187_045e-6;
    let s = qf.mul_add(-L2UF, d);
    let s = qf.mul_add(-L2LF, s);
    let mut u = 0.000_198_527_617_612_853_646_278_381_f32;
    u = u.mul_add(s, 0.001_393_043_552_525_341_510_772_71);
    u = u.mul_add(s, 0.008_333_360_776_305_198_669_433_59);
    u = u.mul_add(s, 0.041_666_485_369_205_474_853_515_6);
    u = u.mul_add(s, 0.166_666_671_633_720_397_949_219);
    u = u.mul_add(s, 0.5);
    u = 1.0 + (s * s).mul_add(u, s);
    let h = q >> 1;
    u = u * pow2i(h) * pow2i(q.wrapping_sub(h));
    if d < -104.0 {
        u = 0.0;
    }
    if d > 100.0 {
        u = f32::INFINITY;
    }
    u
}

#[inline(always)]
fn pow2i(q: i32) -> f32 {
    f32::from_bits((q.wrapping_add(0x7f) as u32) << 23)
}

/// A double-float (Sleef's `vfloat2`): `x + y`, `|y| <= ulp(x) / 2`.
#[derive(Clone, Copy)]
struct F2(f32, f32);

#[inline(always)]
fn df_add2_ff(x: f32, y: f32) -> F2 {
    let s = x + y;
    let v = s - x;
    F2(s, (x - (s - v)) + (y - v))
}

#[inline(always)]
fn df_mul_f2f(x: F2, y: f32) -> F2 {
    let s = x.0 * y;
    F2(s, x.1.mul_add(y, x.0.mul_add(y, -s)))
}

#[inline(always)]
fn df_div(n: F2, d: F2) -> F2 {
    let t = 1.0 / d.0;
    let s = n.0 * t;
    let u = t.mul_add(n.0, -s);
    let v = (-d.1).mul_add(t, (-d.0).mul_add(t, 1.0));
    F2(s, s.mul_add(v, n.1.mul_add(t, u)))
}

#[inline(always)]
fn df_add_f2f2(x: F2, y: F2) -> F2 {
    let s = x.0 + y.0;
    F2(s, (((x.0 - s) + y.0) + x.1) + y.1)
}

#[inline(always)]
fn df_add_f2f(x: F2, y: f32) -> F2 {
    let s = x.0 + y;
    F2(s, ((x.0 - s) + y) + x.1)
}

/// Sleef `xlogf_u1` (the `Sleef_logf*_u10` behind `Vectorized<float>::log`), AVX512 form:
/// `e = getexp(d / 0.75)`, `m = getmant(d)` in [0.75, 1.5), `x = (m - 1) / (m + 1)` in
/// double-float, `log = e ln2 + 2x + x^3 P(x^2)`. Zero, negative, infinite and NaN arguments
/// take IEEE's special values.
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN must take the special path too
pub fn sleef_logf_u1(d: f32) -> f32 {
    if !(d > 0.0) || d == f32::INFINITY || d < f32::MIN_POSITIVE {
        return sleef_logf_special(d);
    }
    // getexp(d * (1/0.75)) for a normal product: its unbiased exponent.
    let p = d * 1.333_333_4;
    let e = (((p.to_bits() >> 23) & 0xff) as i32 - 127) as f32;
    // getmant(d, [0.75, 1.5)): the significand in [1, 2), halved when it is >= 1.5.
    let mut m = f32::from_bits((d.to_bits() & 0x007f_ffff) | 0x3f80_0000);
    if m >= 1.5 {
        m *= 0.5;
    }
    let s = df_mul_f2f(
        F2(0.693_147_182_464_599_609_38, -1.904_654_323_148_236_017e-9),
        e,
    );
    let x = df_div(df_add2_ff(-1.0, m), df_add2_ff(1.0, m));
    let x2 = x.0 * x.0;
    let mut t = 0.302_729_487_4_f32;
    t = t.mul_add(x2, 0.399_610_817_4);
    t = t.mul_add(x2, 0.666_669_488_0);
    let s = df_add_f2f2(s, F2(x.0 * 2.0, x.1 * 2.0));
    let s = df_add_f2f(s, x2 * x.0 * t);
    s.0 + s.1
}

#[cold]
fn sleef_logf_special(d: f32) -> f32 {
    if d == 0.0 {
        f32::NEG_INFINITY
    } else if d.is_nan() || d < 0.0 {
        f32::NAN
    } else if d == f32::INFINITY {
        f32::INFINITY
    } else {
        // positive subnormal: not reached by the callers (softmax sums are >= 1); libm
        d.ln()
    }
}

// ----------------------------------------------------------------------------------------------
// reductions in Vectorized's order

/// NaN-propagating maximum as `vec::maximum` (`_mm*_max_ps` or'ed with the unordered mask):
/// NaN if either is NaN, else the larger, `b` when equal.
#[inline(always)]
pub fn vmax(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a > b {
        a
    } else {
        b
    }
}

/// `vec::reduce_all<float>(f, x, n)` with `W` lanes (AVX2/AVX512 builds: the shuffle tree).
/// Whole vectors are read as `[f32; W]` chunks, so the lane loop has no bounds checks and
/// compiles to vector instructions (indexing `x[d + l]` kept it scalar: 16 `vaddss` a vector).
#[inline(always)]
pub fn reduce_all<const W: usize>(f: impl Fn(f32, f32) -> f32, x: &[f32]) -> f32 {
    let n = x.len();
    if n < W {
        // vec_reduce_all(f, loadu(x, n), n): lane 0 folds the others in order
        let mut a = x[0];
        for &v in &x[1..] {
            a = f(a, v);
        }
        return a;
    }
    let (first, rest) = x.split_at(W);
    let mut acc: [f32; W] = first.try_into().expect("W lanes");
    let mut chunks = rest.chunks_exact(W);
    for c in &mut chunks {
        let c: &[f32; W] = c.try_into().expect("W lanes");
        for l in 0..W {
            acc[l] = f(acc[l], c[l]);
        }
    }
    for (l, &v) in chunks.remainder().iter().enumerate() {
        acc[l] = f(acc[l], v);
    }
    reduce_lanes::<W>(f, acc)
}

/// `vec_reduce_all(f, v)` on one vector of `W` lanes: the halving shuffle tree (lane `i` with
/// `i ^ W/2`, ..., `i ^ 1`), lane 0's result.
#[inline(always)]
pub fn reduce_lanes<const W: usize>(f: impl Fn(f32, f32) -> f32, mut acc: [f32; W]) -> f32 {
    let mut h = W / 2;
    while h >= 1 {
        let prev = acc;
        for l in 0..W {
            acc[l] = f(prev[l], prev[l ^ h]);
        }
        h /= 2;
    }
    acc[0]
}

/// The NaN-propagating maximum of `xs`: what `vec::maximum` folds give in any order, up to the
/// sign of a zero maximum, which neither `x - max` nor `max + log(sum)` can see. Each lane keeps
/// its maximum and whether it saw a NaN apart (a compare-and-select and an or of integer flags:
/// `bool` flags kept the loop scalar), so the loop vectorises; one NaN anywhere makes the
/// result NaN.
#[inline(always)]
pub fn max_nan<const W: usize>(xs: &[f32]) -> f32 {
    let (mut vm, mut nan) = ([f32::NEG_INFINITY; W], [0u32; W]);
    let mut chunks = xs.chunks_exact(W);
    for c in &mut chunks {
        for l in 0..W {
            vm[l] = if c[l] > vm[l] { c[l] } else { vm[l] };
            nan[l] |= c[l].is_nan() as u32;
        }
    }
    for (l, &x) in chunks.remainder().iter().enumerate() {
        vm[l] = if x > vm[l] { x } else { vm[l] };
        nan[l] |= x.is_nan() as u32;
    }
    if nan.iter().any(|&n| n != 0) {
        return f32::NAN;
    }
    reduce_lanes::<W>(|a, b| if b > a { b } else { a }, vm)
}

// ----------------------------------------------------------------------------------------------
// softmax rows (SoftMaxKernel.cpp)

/// `_vec_softmax_lastdim` / `_vec_log_softmax_lastdim` on one contiguous float row:
/// `max = reduce_all(maximum)`; softmax: `e = exp(x - max)`, `sum = reduce_all(+, e)`,
/// `y = e * (1 / sum)`; log-softmax: `y = x - max - log(reduce_all(+, exp(x - max)))`.
/// `y` may not alias `x`; `n >= 1`.
#[inline(always)]
fn softmax_row_impl<const W: usize>(x: &[f32], y: &mut [f32], log: bool) {
    // reduce_all(maximum) in any order: the same maximum (see max_nan), in vector instructions
    let max = max_nan::<W>(x);
    for (o, &v) in y.iter_mut().zip(x) {
        *o = sleef_expf(v - max);
    }
    let sum = reduce_all::<W>(|a, b| a + b, y);
    if log {
        let ls = sleef_logf_u1(sum);
        for (o, &v) in y.iter_mut().zip(x) {
            *o = v - max - ls;
        }
    } else {
        let inv = 1.0 / sum;
        for o in y.iter_mut() {
            *o *= inv;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_row_w8(x: &[f32], y: &mut [f32], log: bool) {
    softmax_row_impl::<8>(x, y, log)
}

#[cfg(target_arch = "x86_64")]
// 16 lanes run only under the AVX512 capability (detected avx512f/vl/bw/dq), so the
// 512-bit instructions are enabled: per-lane arithmetic is the same, only faster.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn softmax_row_w16(x: &[f32], y: &mut [f32], log: bool) {
    softmax_row_impl::<16>(x, y, log)
}

/// One last-dim softmax row with `lanes` (8 or 16) lanes; `false` where the machine has no
/// AVX2+FMA path (the caller computes it another way).
pub fn softmax_row(x: &[f32], y: &mut [f32], log: bool, lanes: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if capability() == Cap::Default || x.is_empty() {
            return false;
        }
        // SAFETY: capability() reports AVX2/AVX512 only where avx2 and fma were detected.
        unsafe {
            match lanes {
                16 if capability() == Cap::Avx512 => softmax_row_w16(x, y, log),
                _ => softmax_row_w8(x, y, log),
            }
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, y, log, lanes);
        false
    }
}

/// `_vec_softmax` / `_vec_logsoftmax` (softmax over a dim that is not the last) for one outer
/// index: `x`/`y` are `[dim, inner]` contiguous. Columns in blocks of `W` take the vector path
/// (Sleef exp and log, NaN-propagating max for softmax, `x > max` for log-softmax), the last
/// `inner % W` columns the scalar one (`std::max`, libm `exp`; log-softmax still takes the
/// vector `log`), as upstream's single-threaded loop does.
#[inline(always)]
fn softmax_cols_impl<const W: usize>(
    x: &[f32],
    y: &mut [f32],
    dim: usize,
    inner: usize,
    log: bool,
) {
    let vec_cols = inner - inner % W;
    let at = |d: usize, c: usize| d * inner + c;
    // one vector of W columns at row d, as an array: no bounds checks in the lane loops, so
    // they compile to vector instructions
    let lanes = |v: &[f32], d: usize, c0: usize| -> [f32; W] {
        v[at(d, c0)..at(d, c0) + W].try_into().expect("W lanes")
    };
    if !log {
        let mut c0 = 0;
        while c0 < vec_cols {
            let mut mx = lanes(x, 0, c0);
            for d in 1..dim {
                let xv = lanes(x, d, c0);
                for l in 0..W {
                    mx[l] = vmax(mx[l], xv[l]);
                }
            }
            let mut sum = [0f32; W];
            for d in 0..dim {
                let xv = lanes(x, d, c0);
                let yv: &mut [f32; W] = (&mut y[at(d, c0)..at(d, c0) + W])
                    .try_into()
                    .expect("W lanes");
                for l in 0..W {
                    let e = sleef_expf(xv[l] - mx[l]);
                    yv[l] = e;
                    sum[l] += e;
                }
            }
            for d in 0..dim {
                let yv: &mut [f32; W] = (&mut y[at(d, c0)..at(d, c0) + W])
                    .try_into()
                    .expect("W lanes");
                for l in 0..W {
                    yv[l] /= sum[l];
                }
            }
            c0 += W;
        }
        for c in vec_cols..inner {
            let mut m = x[at(0, c)];
            for d in 1..dim {
                let v = x[at(d, c)];
                m = if m < v { v } else { m };
            }
            let mut s = 0f32;
            for d in 0..dim {
                let e = (x[at(d, c)] - m).exp();
                y[at(d, c)] = e;
                s += e;
            }
            for d in 0..dim {
                y[at(d, c)] /= s;
            }
        }
    } else {
        let mut mx = vec![f32::NEG_INFINITY; inner];
        let mut sum = vec![0f32; inner];
        let row = |d: usize| &x[at(d, 0)..at(d, 0) + inner];
        for d in 0..dim {
            for (m, &v) in mx.iter_mut().zip(row(d)) {
                *m = if v > *m { v } else { *m };
            }
        }
        for d in 0..dim {
            let xr = row(d);
            for ((s, &v), &m) in sum[..vec_cols]
                .iter_mut()
                .zip(&xr[..vec_cols])
                .zip(&mx[..vec_cols])
            {
                *s += sleef_expf(v - m);
            }
            for c in vec_cols..inner {
                sum[c] += (xr[c] - mx[c]).exp();
            }
        }
        for s in sum.iter_mut() {
            *s = sleef_logf_u1(*s);
        }
        for d in 0..dim {
            let yr = &mut y[at(d, 0)..at(d, 0) + inner];
            for (((o, &v), &m), &s) in yr.iter_mut().zip(row(d)).zip(&mx).zip(&sum) {
                *o = v - m - s;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_cols_w8(x: &[f32], y: &mut [f32], dim: usize, inner: usize, log: bool) {
    softmax_cols_impl::<8>(x, y, dim, inner, log)
}

#[cfg(target_arch = "x86_64")]
// 16 lanes run only under the AVX512 capability (detected avx512f/vl/bw/dq), so the
// 512-bit instructions are enabled: per-lane arithmetic is the same, only faster.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn softmax_cols_w16(x: &[f32], y: &mut [f32], dim: usize, inner: usize, log: bool) {
    softmax_cols_impl::<16>(x, y, dim, inner, log)
}

/// See [`softmax_cols_impl`]; `false` where there is no AVX2+FMA path.
pub fn softmax_cols(
    x: &[f32],
    y: &mut [f32],
    dim: usize,
    inner: usize,
    log: bool,
    lanes: usize,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if capability() == Cap::Default {
            return false;
        }
        // SAFETY: as in softmax_row.
        unsafe {
            match lanes {
                16 if capability() == Cap::Avx512 => softmax_cols_w16(x, y, dim, inner, log),
                _ => softmax_cols_w8(x, y, dim, inner, log),
            }
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, y, dim, inner, log, lanes);
        false
    }
}

// ----------------------------------------------------------------------------------------------
// layer norm rows (layer_norm_kernel.cpp, moments_utils.h)

/// The float types the moment and layer-norm rows run on.
pub trait Flt:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::AddAssign
{
    const ZERO: Self;
    const ONE: Self;
    fn from_i64(v: i64) -> Self;
    fn fma(self, b: Self, c: Self) -> Self;
    fn sqrt(self) -> Self;
}

impl Flt for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn from_i64(v: i64) -> f32 {
        v as f32
    }
    #[inline(always)]
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
}

impl Flt for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn from_i64(v: i64) -> f64 {
        v as f64
    }
    #[inline(always)]
    fn fma(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}

const K_CHUNK: usize = 16;

/// `AddMomentsVec`: merges `(m0_add, m1_add, m2_add)` into `(m0, m1, m2)`:
/// `m1 = m1 + c delta`, `m2 = fma(delta m0, c delta, m2 + m2_add)`, `c = m0_add / (m0 + m0_add)`.
#[inline(always)]
fn add_moments_vec<T: Flt, const W: usize>(
    m0_add: i64,
    m1_add: &[T; W],
    m2_add: &[T; W],
    m0: &mut i64,
    m1: &mut [T; W],
    m2: &mut [T; W],
) {
    let n = *m0 + m0_add;
    let c = if n == 0 {
        T::ZERO
    } else {
        T::from_i64(m0_add) / T::from_i64(n)
    };
    let m0t = T::from_i64(*m0);
    for l in 0..W {
        let delta = m1_add[l] - m1[l];
        let m2_tmp = m2[l] + m2_add[l];
        let cd = c * delta;
        let m0d = delta * m0t;
        m1[l] += cd;
        m2[l] = m0d.fma(cd, m2_tmp);
    }
    *m0 = n;
}

/// `RowwiseMoments(X, N)` (ddof 0): Welford per lane over chunks of 16 vectors with fused
/// updates, chunks merged in a binary cascade, the tail (`N % W` elements) by scalar Welford,
/// then the lanes merged in order by `AddMoments`. Returns `(mean, biased variance)`.
#[inline(always)]
pub fn rowwise_moments_impl<T: Flt, const W: usize>(x: &[T]) -> (T, T) {
    let m = (x.len() / W).div_ceil(K_CHUNK);
    let depth = if m <= 2 {
        1
    } else {
        (usize::BITS - (m - 1).leading_zeros()) as usize
    };
    // the cascade's stack sized for the row: zeroing 64 levels cost more than a short row's
    // arithmetic (upstream zeroes the `depth` levels it uses)
    if depth <= 8 {
        rowwise_moments_stack::<T, W, 8>(x, m, depth)
    } else {
        rowwise_moments_stack::<T, W, 64>(x, m, depth)
    }
}

#[inline(always)]
fn rowwise_moments_stack<T: Flt, const W: usize, const D: usize>(
    x: &[T],
    m: usize,
    depth: usize,
) -> (T, T) {
    let nn = x.len();
    let n = nn / W;
    let z = [T::ZERO; W];
    let mut m0s = [0i64; D];
    let mut m1s = [z; D];
    let mut m2s = [z; D];
    let mut c_vecs = [T::ZERO; K_CHUNK];
    for (i, c) in c_vecs.iter_mut().enumerate() {
        *c = T::ONE / T::from_i64(i as i64 + 1);
    }
    for i in 0..m {
        let base = i * K_CHUNK * W;
        let cnt = K_CHUNK.min(n - i * K_CHUNK);
        let mut m1v = z;
        let mut m2v = z;
        for j in 0..cnt {
            let xs = &x[base + j * W..base + (j + 1) * W];
            for l in 0..W {
                let delta = xs[l] - m1v[l];
                m1v[l] = c_vecs[j].fma(delta, m1v[l]);
                m2v[l] = delta.fma(xs[l] - m1v[l], m2v[l]);
            }
        }
        add_moments_vec(
            cnt as i64,
            &m1v,
            &m2v,
            &mut m0s[0],
            &mut m1s[0],
            &mut m2s[0],
        );
        let mut mask = i + 1;
        let mut j = 1;
        while j < depth && mask & 1 == 0 {
            let (a0, a1, a2) = (m0s[j - 1], m1s[j - 1], m2s[j - 1]);
            add_moments_vec(a0, &a1, &a2, &mut m0s[j], &mut m1s[j], &mut m2s[j]);
            m0s[j - 1] = 0;
            m1s[j - 1] = z;
            m2s[j - 1] = z;
            mask >>= 1;
            j += 1;
        }
    }
    for i in 1..depth {
        let (a0, a1, a2) = (m0s[i], m1s[i], m2s[i]);
        add_moments_vec(a0, &a1, &a2, &mut m0s[0], &mut m1s[0], &mut m2s[0]);
    }
    let (mut m0, mut m1, mut m2) = (0i64, T::ZERO, T::ZERO);
    for &v in &x[n * W..] {
        let delta = v - m1;
        m0 += 1;
        m1 += delta / T::from_i64(m0);
        m2 += delta * (v - m1);
    }
    for l in 0..W {
        // AddMoments: upstream's build contracts `m1 += c * delta` and the last product of
        // `m2 += m2_add + delta * delta * c * m0` into fused multiply-adds (measured: the
        // unfused form differs in the last place on some rows; the tail loop above is not fused)
        let (m1a, m2a) = (m1s[0][l], m2s[0][l]);
        let nt = m0 + n as i64;
        let c = if nt == 0 {
            T::ZERO
        } else {
            T::from_i64(n as i64) / T::from_i64(nt)
        };
        let delta = m1a - m1;
        m1 = c.fma(delta, m1);
        m2 += (delta * delta * c).fma(T::from_i64(m0), m2a);
        m0 = nt;
    }
    (m1, m2 / T::from_i64(nn as i64))
}

/// `LayerNormKernelImplInternal` for one row: moments, `rstd = 1 / sqrt(var + eps)`, then
/// `y = fma((x - mean) * rstd, gamma, beta)` with both parameters (vec::map3, fused),
/// `fma(x - mean, rstd, beta)` with a bias only, else `(x - mean) * rstd * gamma` (or without
/// gamma). Returns `(mean, rstd)`.
#[inline(always)]
fn layer_norm_row_impl<T: Flt, const W: usize>(
    x: &[T],
    g: Option<&[T]>,
    b: Option<&[T]>,
    eps: T,
    y: &mut [T],
) -> (T, T) {
    let (mean, var) = rowwise_moments_impl::<T, W>(x);
    let rstd = T::ONE / (var + eps).sqrt();
    let bias = -mean;
    // zipped iterators, not indices: without bounds checks the loops compile to vector code
    let xs = y.iter_mut().zip(x);
    match (g, b) {
        (Some(g), Some(b)) => {
            for ((o, &v), (&gv, &bv)) in xs.zip(g.iter().zip(b)) {
                *o = ((v + bias) * rstd).fma(gv, bv);
            }
        }
        (None, Some(b)) => {
            // upstream's scalar loop with gamma 1: its build folds `* 1` and fuses the rest
            // (measured: `fma(x - mean, rstd, beta)` agrees bit for bit, the unfused form not)
            for ((o, &v), &bv) in xs.zip(b) {
                *o = (v + bias).fma(rstd, bv);
            }
        }
        (Some(g), None) => {
            for ((o, &v), &gv) in xs.zip(g) {
                *o = (v + bias) * rstd * gv + T::ZERO;
            }
        }
        (None, None) => {
            for (o, &v) in xs {
                *o = (v + bias) * rstd * T::ONE + T::ZERO;
            }
        }
    }
    (mean, rstd)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn layer_norm_row_f32_w8(
    x: &[f32],
    g: Option<&[f32]>,
    b: Option<&[f32]>,
    eps: f32,
    y: &mut [f32],
) -> (f32, f32) {
    layer_norm_row_impl::<f32, 8>(x, g, b, eps, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn layer_norm_row_f64_w4(
    x: &[f64],
    g: Option<&[f64]>,
    b: Option<&[f64]>,
    eps: f64,
    y: &mut [f64],
) -> (f64, f64) {
    layer_norm_row_impl::<f64, 4>(x, g, b, eps, y)
}

/// Float types with an upstream-order layer-norm row.
pub trait LayerNormRow: Flt {
    /// One row (see [`layer_norm_row_impl`]); `None` where there is no AVX2+FMA path.
    fn layer_norm_row(
        x: &[Self],
        g: Option<&[Self]>,
        b: Option<&[Self]>,
        eps: Self,
        y: &mut [Self],
    ) -> Option<(Self, Self)>;
}

impl LayerNormRow for f32 {
    fn layer_norm_row(
        x: &[f32],
        g: Option<&[f32]>,
        b: Option<&[f32]>,
        eps: f32,
        y: &mut [f32],
    ) -> Option<(f32, f32)> {
        lanes_avx2_kernel()?;
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: lanes_avx2_kernel() is Some only where avx2 and fma were detected.
            Some(unsafe { layer_norm_row_f32_w8(x, g, b, eps, y) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, g, b, eps, y);
            None
        }
    }
}

impl LayerNormRow for f64 {
    fn layer_norm_row(
        x: &[f64],
        g: Option<&[f64]>,
        b: Option<&[f64]>,
        eps: f64,
        y: &mut [f64],
    ) -> Option<(f64, f64)> {
        lanes_avx2_kernel()?;
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: as for f32.
            Some(unsafe { layer_norm_row_f64_w4(x, g, b, eps, y) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, g, b, eps, y);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleef_exp_is_within_one_ulp_of_libm() {
        let mut worst = 0i64;
        for i in 0..400_000 {
            let x = -103.0 + i as f32 * (191.0 / 400_000.0);
            let (a, b) = (sleef_expf(x), x.exp());
            worst = worst.max((a.to_bits() as i64 - b.to_bits() as i64).abs());
        }
        assert!(worst <= 1, "{worst} ulp");
        assert_eq!(sleef_expf(-200.0), 0.0);
        assert_eq!(sleef_expf(f32::NEG_INFINITY), 0.0);
        assert_eq!(sleef_expf(200.0), f32::INFINITY);
        assert!(sleef_expf(f32::NAN).is_nan());
    }

    #[test]
    fn sleef_exp_shift_rounding_equals_rint() {
        // the reference form: q = rint(d / ln2) with a float-to-int conversion
        // (the steps after q are shared: only how q is found differs)
        fn reference(d: f32) -> f32 {
            let qf = (d * 1.442_695_04_f32).round_ties_even();
            sleef_expf_from_q(d, qf, qf as i32)
        }
        for i in 0..3_000_000u64 {
            let u = (i.wrapping_mul(2_654_435_761) % 0x8000_0000) as u32;
            for x in [f32::from_bits(u), -f32::from_bits(u)] {
                let (a, b) = (sleef_expf(x), reference(x));
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{x}: {a} {b}"
                );
            }
        }
    }

    #[test]
    fn sleef_log_is_within_one_ulp_of_libm() {
        let mut worst = 0i64;
        for i in 1..400_000 {
            let x = i as f32 * 0.731;
            let (a, b) = (sleef_logf_u1(x), x.ln());
            worst = worst.max((a.to_bits() as i64 - b.to_bits() as i64).abs());
        }
        assert!(worst <= 1, "{worst} ulp");
        assert_eq!(sleef_logf_u1(0.0), f32::NEG_INFINITY);
        assert!(sleef_logf_u1(-1.0).is_nan());
    }

    #[test]
    fn reduce_all_shape() {
        // 17 elements, 16 lanes: lane 0 takes x0 + x16, then the tree.
        let x: Vec<f32> = (0..17).map(|i| i as f32).collect();
        assert_eq!(reduce_all::<16>(|a, b| a + b, &x), 136.0);
        assert_eq!(reduce_all::<16>(vmax, &x), 16.0);
        assert!(reduce_all::<8>(vmax, &[1.0, f32::NAN, 2.0]).is_nan());
    }
}

// ----------------------------------------------------------------------------------------------
// elementwise exp (float32): glibc's expf, vectorised

/// `2^(i/32)` as binary64 bits minus `i << 47` (the exp2f table of glibc / ARM's optimized
/// routines, `EXP2F_TABLE_BITS = 5`).
const EXP2F_TAB: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];

/// glibc's `expf` (sysdeps/ieee754/flt-32/e_expf.c, from ARM's optimized routines): in double,
/// `x N / ln2 = k + r` (N = 32, round by the 1.5 * 2^52 shift), `2^(k/N)` from the table,
/// `2^(r/N)` by a cubic, one rounding to float. Bit-identical to libm's `expf` here (checked on
/// 2e7 arguments; our scalar path and upstream's non-vector loops call it), and branch-free so
/// slices vectorise.
#[inline(always)]
pub fn glibc_expf(x: f32) -> f32 {
    const INV_LN2_N: f64 = f64::from_bits(0x3FF7_1547_652B_82FE) * 32.0; // 0x1.71547652b82fep+0 N
    const SHIFT: f64 = f64::from_bits(0x4338_0000_0000_0000); // 0x1.8p+52
    const C0: f64 = f64::from_bits(0x3FAC_6AF8_4B91_2394) / 32768.0; // 0x1.c6af84b912394p-5 / N^3
    const C1: f64 = f64::from_bits(0x3FCE_BFCE_50FA_C4F3) / 1024.0; // 0x1.ebfce50fac4f3p-3 / N^2
    const C2: f64 = f64::from_bits(0x3FE6_2E42_FF0C_52D6) / 32.0; // 0x1.62e42ff0c52d6p-1 / N
    const OFLOW: f32 = f32::from_bits(0x42B1_7217); // 0x1.62e42ep6: log(2^128)
    const UFLOW: f32 = f32::from_bits(0xC2CF_F1B4); // -0x1.9fe368p6: log(2^-150)
    let xd = x as f64;
    let z = INV_LN2_N * xd;
    let kd = z + SHIFT;
    let ki = kd.to_bits();
    let kd = kd - SHIFT;
    let r = z - kd;
    let t = EXP2F_TAB[(ki & 31) as usize].wrapping_add(ki << 47);
    let s = f64::from_bits(t);
    let zz = C0 * r + C1;
    let r2 = r * r;
    let y = C2 * r + 1.0;
    let y = zz * r2 + y;
    let v = (y * s) as f32;
    // glibc's special cases: x > log(2^128) overflows, x < log(2^-150) underflows to 0,
    // NaN stays NaN, -inf gives 0
    if x > OFLOW {
        f32::INFINITY
    } else if x < UFLOW {
        0.0
    } else if x.is_nan() {
        x + x
    } else {
        v
    }
}

#[inline(always)]
unsafe fn expf_block(src: *const f32, dst: *mut f32, n: usize) {
    let mut buf = [0f32; 64];
    let mut i = 0;
    while i < n {
        let m = (n - i).min(64);
        std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), m);
        for v in buf[..m].iter_mut() {
            *v = glibc_expf(*v);
        }
        std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), m);
        i += m;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn expf_block_avx2(src: *const f32, dst: *mut f32, n: usize) {
    expf_block(src, dst, n)
}

// The same arithmetic in 512-bit vectors (8 doubles, the table read by one gather), where the
// machine has AVX512; results are libm's either way.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn expf_block_avx512(src: *const f32, dst: *mut f32, n: usize) {
    expf_block(src, dst, n)
}

/// `dst[i] = expf(src[i])` for `n` contiguous floats (`src == dst` allowed), as libm computes
/// it; vectorised where AVX2 is present, split across the threads for long inputs.
///
/// # Safety
/// `src` and `dst` must be valid for `n` floats.
pub unsafe fn expf_contiguous(src: *const f32, dst: *mut f32, n: usize) {
    // the machine's instructions, not upstream's capability: the values do not depend on them
    let hw = detect();
    let run = move |s: usize, d: usize, len: usize| {
        #[cfg(target_arch = "x86_64")]
        match hw {
            Cap::Avx512 => return expf_block_avx512(s as *const f32, d as *mut f32, len),
            Cap::Avx2 => return expf_block_avx2(s as *const f32, d as *mut f32, len),
            Cap::Default => {}
        }
        expf_block(s as *const f32, d as *mut f32, len)
    };
    const CHUNK: usize = 1 << 15;
    if n >= 2 * CHUNK && crate::threads::threads() > 1 {
        let (s0, d0) = (src as usize, dst as usize);
        crate::threads::parallel_for(
            n.div_ceil(CHUNK),
            || (),
            |_, ci| {
                let off = ci * CHUNK;
                let len = CHUNK.min(n - off);
                run(s0 + off * 4, d0 + off * 4, len);
            },
        );
    } else {
        run(src as usize, dst as usize, n);
    }
}

#[cfg(test)]
mod exp_tests {
    #[test]
    fn glibc_expf_matches_libm() {
        let mut bad = 0;
        for i in 0..2_000_000u64 {
            let u = (i.wrapping_mul(2_654_435_761) % 0x8000_0000) as u32;
            for x in [f32::from_bits(u), -f32::from_bits(u)] {
                let (a, b) = (super::glibc_expf(x), x.exp());
                if a.to_bits() != b.to_bits() && !(a.is_nan() && b.is_nan()) {
                    bad += 1;
                }
            }
        }
        assert_eq!(bad, 0);
        for x in [
            f32::INFINITY,
            f32::NEG_INFINITY,
            88.72,
            88.73,
            -103.9,
            -104.0,
            0.0,
            -0.0,
            1e-45,
        ] {
            assert_eq!(super::glibc_expf(x).to_bits(), x.exp().to_bits(), "{x}");
        }
    }
}

// ----------------------------------------------------------------------------------------------
// attention rows

/// One float32 attention row of scores, in place: entries from `from` on are masked (causal),
/// then, when the row's maximum `m` is finite and no entry is NaN, `row = exp(row - m)` (Sleef's
/// exp; masked entries give 0) and `Some((m, sum))` with the sum in 16 lanes, as upstream's
/// `_exp_reduce_sum_fusion_kernel` sums in vectors. `None` (row masked only) where the caller's
/// general loop must run: an infinite or NaN maximum, or no AVX2+FMA.
pub fn attention_row_f32(row: &mut [f32], from: usize) -> Option<(f32, f32)> {
    #[cfg(target_arch = "x86_64")]
    {
        if capability() == Cap::Default || row.is_empty() {
            return None;
        }
        // SAFETY: capability() reports AVX2/AVX512 only where avx2 and fma were detected.
        unsafe { attention_row_avx2(row, from) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (row, from);
        None
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn attention_row_avx2(row: &mut [f32], from: usize) -> Option<(f32, f32)> {
    let n = row.len();
    for v in row[from.min(n)..].iter_mut() {
        *v = f32::NEG_INFINITY;
    }
    let mut mx = [f32::NEG_INFINITY; 16];
    let mut nan = [false; 16];
    let mut chunks = row.chunks_exact(16);
    for c in &mut chunks {
        for l in 0..16 {
            mx[l] = if c[l] > mx[l] { c[l] } else { mx[l] };
            nan[l] |= c[l].is_nan();
        }
    }
    for (l, &v) in chunks.remainder().iter().enumerate() {
        mx[l] = if v > mx[l] { v } else { mx[l] };
        nan[l] |= v.is_nan();
    }
    let m = mx
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
    if nan.iter().any(|&b| b) || !m.is_finite() {
        return None;
    }
    for v in row.iter_mut() {
        *v = sleef_expf(*v - m);
    }
    Some((m, reduce_all::<16>(|a, b| a + b, row)))
}

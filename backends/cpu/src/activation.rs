//! float32 activations on contiguous memory as upstream's kernels in
//! aten/src/ATen/native/cpu/Activation.cpp compute them, bit for bit:
//!
//! - vectors of 16 lanes under upstream's AVX512 capability, 8 under AVX2 (probed: a 16-element
//!   input runs the scalar op on an AVX512 machine);
//! - `cpu_kernel_vec`'s contiguous loop: whole pairs of vectors (32 or 16 elements) through the
//!   vector op, the rest through the scalar op (libm's functions);
//! - the split into ranges: one range, or with several threads `at::parallel_for`'s equal
//!   chunks, each with its own tail.
//!
//! `gelu(x, approximate='none')` (`GeluKernelImpl`): vector op `x * 0.5 * (1 + erf(x *
//! M_SQRT1_2))` with `Vectorized<float>::erf` (Abramowitz-Stegun 7.1.26 with Sleef's `expf`),
//! scalar op with libm's `erff`; its own grain (`numel / threads`, from 16384 elements on).
//! `silu` (`silu_kernel`): vector op `x / (1 + exp(-x))` with `Vectorized<float>::exp` (Sleef's
//! `expf`), scalar op with libm's `expf`; TensorIterator's grain (32768 elements).
//!
//! Without AVX2+FMA the caller keeps its scalar loop (upstream's default build maps `std::erf`).

#![allow(clippy::excessive_precision)]

use crate::vecmath::sleef_expf;

/// `Vectorized<float>::erf` (vec256_float.h) on one lane.
#[inline(always)]
fn vec_erf(x: f32) -> f32 {
    const P: f32 = 0.3275911;
    const P1: f32 = 0.254829592;
    const P2: f32 = -0.284496736;
    const P3: f32 = 1.421413741;
    const P4: f32 = -1.453152027;
    const P5: f32 = 1.061405429;
    let sign = x.to_bits() & 0x8000_0000;
    let ax = f32::from_bits(x.to_bits() ^ sign);
    let t = 1.0 / P.mul_add(ax, 1.0);
    let r = P5
        .mul_add(t, P4)
        .mul_add(t, P3)
        .mul_add(t, P2)
        .mul_add(t, P1);
    let e = -sleef_expf(-(x * x));
    let y = (e * t).mul_add(r, 1.0);
    f32::from_bits(y.to_bits() ^ sign)
}

const ALPHA: f32 = std::f64::consts::FRAC_1_SQRT_2 as f32;

extern "C" {
    // The C library's erff and expf, which upstream's scalar ops (`std::erf`, `std::exp`) call;
    // the libm crate's (musl's) round some arguments differently from glibc's.
    fn erff(x: f32) -> f32;
    fn expf(x: f32) -> f32;
}

/// One activation: its vector op on one lane and its scalar op.
trait Act {
    fn vector(x: f32) -> f32;
    fn scalar(x: f32) -> f32;
}

struct Gelu;

impl Act for Gelu {
    #[inline(always)]
    fn vector(x: f32) -> f32 {
        x * 0.5 * (1.0 + vec_erf(x * ALPHA))
    }
    #[inline(always)]
    fn scalar(x: f32) -> f32 {
        // SAFETY: the C library's erff has no preconditions.
        x * 0.5 * (1.0 + unsafe { erff(x * ALPHA) })
    }
}

struct Sigmoid;

impl Act for Sigmoid {
    // upstream's sigmoid_kernel: vector op `(0 - a).exp()`, `+ 1`, `.reciprocal()` (a division)
    #[inline(always)]
    fn vector(x: f32) -> f32 {
        1.0 / (1.0 + sleef_expf(-x))
    }
    #[inline(always)]
    fn scalar(x: f32) -> f32 {
        // SAFETY: the C library's expf has no preconditions.
        1.0 / (1.0 + unsafe { expf(-x) })
    }
}

struct Silu;

impl Act for Silu {
    #[inline(always)]
    fn vector(x: f32) -> f32 {
        x / (1.0 + sleef_expf(-x))
    }
    #[inline(always)]
    fn scalar(x: f32) -> f32 {
        // SAFETY: the C library's expf has no preconditions.
        x / (1.0 + unsafe { expf(-x) })
    }
}

/// One range of `len` elements: the first `len / pair * pair` by the vector op, the rest by the
/// scalar op. Blocks of 64 go through a stack buffer so that `src == dst` (in place) still
/// vectorises.
#[inline(always)]
unsafe fn run_range<F: Act>(src: *const f32, dst: *mut f32, len: usize, pair: usize) {
    let body = len / pair * pair;
    let mut buf = [0f32; 64];
    let mut i = 0;
    while i < len {
        let m = (len - i).min(64);
        std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), m);
        let vec_end = body.saturating_sub(i).min(m);
        for v in buf[..vec_end].iter_mut() {
            *v = F::vector(*v);
        }
        for v in buf[vec_end..m].iter_mut() {
            *v = F::scalar(*v);
        }
        std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), m);
        i += m;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_range_avx2<F: Act>(src: *const f32, dst: *mut f32, len: usize, pair: usize) {
    run_range::<F>(src, dst, len, pair)
}

// The same lane arithmetic in 512-bit registers, only under the AVX512 capability (detected
// avx512f/vl/bw/dq): each lane computes what the 256-bit build computes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn run_range_avx512<F: Act>(src: *const f32, dst: *mut f32, len: usize, pair: usize) {
    run_range::<F>(src, dst, len, pair)
}

/// `dst = gelu(src)` for `n` contiguous floats (`src == dst` allowed); `false` (nothing written)
/// where this machine has no AVX2+FMA path.
///
/// # Safety
/// `src` and `dst` must be valid for `n` floats and either equal or not overlapping.
pub unsafe fn gelu_contiguous(src: *const f32, dst: *mut f32, n: usize) -> bool {
    // GeluKernelImpl's grain: numel / threads, parallel from 16384 elements on
    let threads = crate::threads::threads();
    let parallel = n > 16384 && threads > 1;
    contiguous::<Gelu>(src, dst, n, parallel.then(|| n / threads))
}

/// `dst = silu(src)`, as [`gelu_contiguous`].
///
/// # Safety
/// As [`gelu_contiguous`].
pub unsafe fn silu_contiguous(src: *const f32, dst: *mut f32, n: usize) -> bool {
    // TensorIterator::for_each: serial below GRAIN_SIZE (32768) elements or on one thread
    let parallel = n >= 32768 && crate::threads::threads() > 1;
    contiguous::<Silu>(src, dst, n, parallel.then_some(32768))
}

/// `dst = sigmoid(src)` (`sigmoid_kernel` in UnaryOpsKernel.cpp), as [`silu_contiguous`].
///
/// # Safety
/// As [`gelu_contiguous`].
pub unsafe fn sigmoid_contiguous(src: *const f32, dst: *mut f32, n: usize) -> bool {
    let parallel = n >= 32768 && crate::threads::threads() > 1;
    contiguous::<Sigmoid>(src, dst, n, parallel.then_some(32768))
}

/// Runs `F` over `n` elements: one range, or `at::parallel_for(0, n, grain)`'s chunks.
unsafe fn contiguous<F: Act>(
    src: *const f32,
    dst: *mut f32,
    n: usize,
    grain: Option<usize>,
) -> bool {
    let (s0, d0) = (src as usize, dst as usize);
    split(n, grain, move |off, len, wide, pair| {
        // SAFETY: in bounds by the caller's contract; each element is read before written.
        let (src, dst) = ((s0 as *const f32).add(off), (d0 as *mut f32).add(off));
        #[cfg(target_arch = "x86_64")]
        if wide {
            run_range_avx512::<F>(src, dst, len, pair)
        } else {
            run_range_avx2::<F>(src, dst, len, pair)
        }
    })
}

/// `at::parallel_for(0, n, grain)`'s chunks (one range without a grain), each given to
/// `run(offset, len, wide, pair)`: `wide` under the AVX512 capability, `pair` the elements of
/// two vectors. `false` (nothing run) without an AVX2+FMA path.
unsafe fn split(
    n: usize,
    grain: Option<usize>,
    run: impl Fn(usize, usize, bool, usize) + Sync,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::vecmath::capability() == crate::vecmath::Cap::Default {
            return false;
        }
        let wide = crate::vecmath::lanes_avx512_kernel() == Some(16);
        let pair = if wide { 32 } else { 16 };
        let threads = crate::threads::threads();
        // invoke_parallel's chunks
        let chunk = match grain {
            Some(grain) => {
                let used = threads.min(n.div_ceil(grain.max(1)));
                n.div_ceil(used)
            }
            None => n.max(1),
        };
        if chunk < n {
            crate::threads::parallel_for(
                n.div_ceil(chunk),
                || (),
                |_, c| run(c * chunk, chunk.min(n - c * chunk), wide, pair),
            );
        } else if n > 0 {
            run(0, n, wide, pair);
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (n, grain, run);
        false
    }
}

/// `silu_backward(grad_output, self)` on one element, as upstream's `silu_backward_kernel`
/// computes it (its build contracts `1 + x * (1 - s)` into a fused multiply-add, in the vector
/// and the scalar op alike); `e` is `exp(-x)`.
#[inline(always)]
fn silu_backward_with(dy: f32, x: f32, e: f32) -> f32 {
    let s = 1.0 / (1.0 + e);
    dy * s * x.mul_add(1.0 - s, 1.0)
}

/// The scalar op of `silu_backward` (libm's `expf`): strided operands take it everywhere.
pub fn silu_backward_scalar(dy: f32, x: f32) -> f32 {
    // SAFETY: the C library's expf has no preconditions.
    silu_backward_with(dy, x, unsafe { expf(-x) })
}

#[inline(always)]
unsafe fn silu_backward_range(
    g: *const f32,
    x: *const f32,
    dst: *mut f32,
    len: usize,
    pair: usize,
) {
    let body = len / pair * pair;
    let (mut bg, mut bx) = ([0f32; 64], [0f32; 64]);
    let mut i = 0;
    while i < len {
        let m = (len - i).min(64);
        std::ptr::copy_nonoverlapping(g.add(i), bg.as_mut_ptr(), m);
        std::ptr::copy_nonoverlapping(x.add(i), bx.as_mut_ptr(), m);
        let vec_end = body.saturating_sub(i).min(m);
        for (d, &v) in bg[..vec_end].iter_mut().zip(&bx[..vec_end]) {
            *d = silu_backward_with(*d, v, sleef_expf(-v));
        }
        for (d, &v) in bg[vec_end..m].iter_mut().zip(&bx[vec_end..m]) {
            *d = silu_backward_scalar(*d, v);
        }
        std::ptr::copy_nonoverlapping(bg.as_ptr(), dst.add(i), m);
        i += m;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn silu_backward_avx2(g: *const f32, x: *const f32, dst: *mut f32, len: usize, pair: usize) {
    silu_backward_range(g, x, dst, len, pair)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn silu_backward_avx512(
    g: *const f32,
    x: *const f32,
    dst: *mut f32,
    len: usize,
    pair: usize,
) {
    silu_backward_range(g, x, dst, len, pair)
}

/// `dst = silu_backward(g, x)` for `n` contiguous floats (`dst` may be `g` or `x`), with
/// TensorIterator's grain as [`silu_contiguous`]; `false` (nothing written) without AVX2+FMA.
///
/// # Safety
/// `g`, `x` and `dst` must be valid for `n` floats; `dst` equal to or apart from each input.
pub unsafe fn silu_backward_contiguous(
    g: *const f32,
    x: *const f32,
    dst: *mut f32,
    n: usize,
) -> bool {
    let parallel = n >= 32768 && crate::threads::threads() > 1;
    let (g0, x0, d0) = (g as usize, x as usize, dst as usize);
    split(n, parallel.then_some(32768), move |off, len, wide, pair| {
        let (g, x, d) = (
            (g0 as *const f32).add(off),
            (x0 as *const f32).add(off),
            (d0 as *mut f32).add(off),
        );
        #[cfg(target_arch = "x86_64")]
        if wide {
            silu_backward_avx512(g, x, d, len, pair)
        } else {
            silu_backward_avx2(g, x, d, len, pair)
        }
    })
}

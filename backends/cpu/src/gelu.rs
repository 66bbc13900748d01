//! float32 `gelu(x, approximate='none')` on contiguous memory as upstream's `GeluKernelImpl`
//! (aten/src/ATen/native/cpu/Activation.cpp) computes it, bit for bit:
//!
//! - vectors of 16 lanes under upstream's AVX512 capability, 8 under AVX2 (probed: a 16-element
//!   input runs the scalar op on an AVX512 machine);
//! - `cpu_kernel_vec`'s contiguous loop: whole pairs of vectors (32 or 16 elements) through the vector
//!   op `x * 0.5 * (1 + erf(x * M_SQRT1_2))` with `Vectorized<float>::erf` (Abramowitz-Stegun
//!   7.1.26 with Sleef's `expf`), the rest through the scalar op with libm's `erff`;
//! - the split into ranges: one range, or with more than 16384 elements and several threads
//!   (`grain = numel / threads`) `at::parallel_for`'s equal chunks, each with its own tail.
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
    // The C library's erff, which upstream's scalar op (`std::erf`) calls; the libm crate's
    // (musl's) rounds some arguments differently from glibc's.
    fn erff(x: f32) -> f32;
}

/// One range of `len` elements: the first `len / pair * pair` by the vector op, the rest by the
/// scalar op. Blocks of 64 go through a stack buffer so that `src == dst` (in place) still
/// vectorises.
#[inline(always)]
unsafe fn run_range(src: *const f32, dst: *mut f32, len: usize, pair: usize) {
    let body = len / pair * pair;
    let mut buf = [0f32; 64];
    let mut i = 0;
    while i < len {
        let m = (len - i).min(64);
        std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), m);
        let vec_end = body.saturating_sub(i).min(m);
        for v in buf[..vec_end].iter_mut() {
            let x = *v;
            *v = x * 0.5 * (1.0 + vec_erf(x * ALPHA));
        }
        for v in buf[vec_end..m].iter_mut() {
            let x = *v;
            *v = x * 0.5 * (1.0 + erff(x * ALPHA));
        }
        std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), m);
        i += m;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_range_avx2(src: *const f32, dst: *mut f32, len: usize, pair: usize) {
    run_range(src, dst, len, pair)
}

/// `dst = gelu(src)` for `n` contiguous floats (`src == dst` allowed); `false` (nothing written)
/// where this machine has no AVX2+FMA path.
///
/// # Safety
/// `src` and `dst` must be valid for `n` floats and either equal or not overlapping.
pub unsafe fn gelu_contiguous(src: *const f32, dst: *mut f32, n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::vecmath::capability() == crate::vecmath::Cap::Default {
            return false;
        }
        let pair = 2 * crate::vecmath::lanes_avx512_kernel().unwrap_or(8);
        let threads = crate::threads::threads();
        // GeluKernelImpl's grain, then invoke_parallel's chunks
        let chunk = if n > 16384 && threads > 1 {
            let grain = n / threads;
            let used = threads.min(n.div_ceil(grain));
            n.div_ceil(used)
        } else {
            n.max(1)
        };
        let (s0, d0) = (src as usize, dst as usize);
        let run = move |off: usize| {
            let len = chunk.min(n - off);
            // SAFETY: in bounds by the caller's contract; each element is read before written.
            run_range_avx2(
                (s0 as *const f32).add(off),
                (d0 as *mut f32).add(off),
                len,
                pair,
            )
        };
        if chunk < n {
            crate::threads::parallel_for(n.div_ceil(chunk), || (), |_, c| run(c * chunk));
        } else if n > 0 {
            run(0);
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, dst, n);
        false
    }
}

//! float32 scaled dot-product attention in the order of upstream's `cpu_flash_attention`
//! (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp), so that everything but the matrix
//! products rounds where upstream rounds:
//!
//! - queries in blocks of 32, 64 or 256 rows (by query length), keys in blocks of 512; with
//!   `is_causal` the key blocks past a query block's last row are skipped;
//! - per block `qk = q @ k^T` (unscaled), the causal fill with -inf, then per row either
//!   `qk = qk * scale + mask` and a NaN-propagating max, or `qk *= scale` fused with the max
//!   (`_mul_reduce_max_fusion_kernel`);
//! - `p = exp(qk - max)` by `Vectorized<float>::exp_u20` over whole vectors and `expf` over the
//!   tail, summed in vectors then the shuffle tree, then the tail
//!   (`_exp_reduce_sum_fusion_kernel`); the running sum and the accumulated `p @ v` rescaled by
//!   `exp(old max - new max)` between key blocks (online softmax);
//! - `out = acc * (1 / sum)`, `lse = max + log(sum)`; a row with every key masked gives zeros
//!   and `lse = 0` (its sum is taken as 1 and its max as 0).
//!
//! The products go through the gemm crate (upstream: MKL), so results agree within the products'
//! rounding, not bit for bit. Lanes: 16 where upstream runs its AVX512 build (the kernel is
//! registered with `ALSO_REGISTER_AVX512_DISPATCH`), 8 under AVX2.

#![allow(clippy::excessive_precision)]

use crate::kernel::{KResult, Tensor};
use crate::vecmath::{max_nan, reduce_lanes};

/// `Vectorized<float>::exp_u20` (vec512_float.h / vec256_float.h) on one lane: `2^n * p(r)`
/// with `n = floor(x log2 e + 1/2)`, `r = x - n ln 2` and a degree-5 polynomial, `2^n` built as
/// `2 * 2^(n-1)` from the exponent bits; inputs are clamped to [ln FLT_MIN, ln FLT_MAX] (NaN
/// becomes ln FLT_MAX, as `min_ps` returns its second operand) and those below ln FLT_MIN give 0.
#[inline(always)]
pub fn exp_u20(x: f32) -> f32 {
    const LOG2E: f32 = f32::from_bits(0x3fb8_aa3b);
    const LN2: f32 = f32::from_bits(0x3f31_7218);
    const LN_FLT_MIN: f32 = f32::from_bits(0xc2ae_ac50);
    const LN_FLT_MAX: f32 = f32::from_bits(0x42b1_7218);
    let below = x < LN_FLT_MIN;
    let src = if x < LN_FLT_MAX { x } else { LN_FLT_MAX };
    let src = if src > LN_FLT_MIN { src } else { LN_FLT_MIN };
    let fx = src.mul_add(LOG2E, 0.5).floor();
    let r = (-fx).mul_add(LN2, src);
    let mut p = r.mul_add(0.008_289_290_59, 0.041_897_822_1);
    p = r.mul_add(p, 0.166_676_521);
    p = r.mul_add(p, 0.499_991_506);
    p = r.mul_add(p, 0.999_999_701);
    p = r.mul_add(p, 1.0);
    // SAFETY: fx - 1 is an integer in [-127, 127] (src is clamped and never NaN), so the
    // unchecked conversion (one cvttps2dq, where `as` would saturate lane by lane) is exact.
    let e = unsafe { (fx - 1.0).to_int_unchecked::<i32>() }.wrapping_add(127);
    let pow = if below {
        0.0
    } else {
        f32::from_bits((e as u32) << 23)
    };
    p * pow * 2.0
}

/// `std::max(a, b)`: `a < b ? b : a`.
#[inline(always)]
fn std_max(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

/// The per-row steps between the two products, for one block row. Returns the row maximum.
#[inline(always)]
fn scale_and_max<const W: usize>(
    row: &mut [f32],
    scale: f32,
    mask: Option<(*const f32, isize)>,
) -> f32 {
    let body = row.len() / W * W;
    match mask {
        Some((mp, ms)) => {
            // _scale_attn_mask_fusion_kernel's `a * scale + b`, which GCC contracts to one fma
            // (its vector `*` and `+` are plain vector arithmetic), then reduce_all(maximum)
            for (j, v) in row.iter_mut().enumerate() {
                // SAFETY: the caller passes a mask row valid for the block's columns.
                let b = unsafe { *mp.offset(j as isize * ms) };
                *v = v.mul_add(scale, b);
            }
            max_nan::<W>(row)
        }
        None => {
            // _mul_reduce_max_fusion_kernel: whole vectors by vec::maximum, the tail by
            // std::max (which drops a NaN), then std::max(tail, vectors)
            for v in row.iter_mut() {
                *v *= scale;
            }
            let mut tail = f32::NEG_INFINITY;
            for &t in &row[body..] {
                tail = std_max(tail, t);
            }
            // (no whole vector: max_nan gives -inf, upstream's initial vector maximum)
            std_max(tail, max_nan::<W>(&row[..body]))
        }
    }
}

/// `_exp_reduce_sum_fusion_kernel`: `row = exp(row - max)` in place, returns the sum.
#[inline(always)]
fn exp_and_sum<const W: usize>(row: &mut [f32], max: f32) -> f32 {
    let body = row.len() / W * W;
    let mut vs = [0f32; W];
    for c in row[..body].chunks_exact_mut(W) {
        for l in 0..W {
            let e = exp_u20(c[l] - max);
            vs[l] += e;
            c[l] = e;
        }
    }
    let mut sum = reduce_lanes::<W>(|a, b| a + b, vs);
    for v in row[body..].iter_mut() {
        let e = (*v - max).exp();
        sum += e;
        *v = e;
    }
    sum
}

/// Shapes, strides (in elements) and pointers of one call; `Copy` so rayon tasks can share it.
#[derive(Clone, Copy)]
struct Problem {
    b: usize,
    h: usize,
    l: usize,
    s: usize,
    e: usize,
    q: (usize, [isize; 4]),
    /// query heads per key/value head (grouped-query attention; 1 without)
    group: usize,
    k: (usize, [isize; 4]),
    v: (usize, [isize; 4]),
    o: (usize, [isize; 4]),
    lse: (usize, [isize; 3]),
    mask: Option<(usize, [isize; 4])>,
    causal: bool,
    scale: f32,
    q_split: usize,
    kv_split: usize,
}

impl Problem {
    /// One call's operands; query blocks of 32, 64 or 256 rows by query length and key blocks
    /// of 512, as upstream's `flash_attention_kernel_impl` and its backward choose them.
    #[allow(clippy::too_many_arguments)]
    fn new(
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        out: &Tensor,
        lse: &Tensor,
        group: usize,
        mask: Option<(&Tensor, [isize; 4])>,
        causal: bool,
        scale: f32,
    ) -> Problem {
        let (l, s) = (q.size(2), k.size(2));
        let q_block = if l >= 768 {
            256
        } else if l >= 192 {
            64
        } else {
            32
        };
        Problem {
            b: q.size(0),
            h: q.size(1),
            l,
            s,
            e: q.size(3),
            group,
            q: (q.data as usize, strides4(q)),
            k: (k.data as usize, strides4(k)),
            v: (v.data as usize, strides4(v)),
            o: (out.data as usize, strides4(out)),
            lse: (
                lse.data as usize,
                [lse.stride(0), lse.stride(1), lse.stride(2)],
            ),
            mask: mask.map(|(m, st)| (m.data as usize, st)),
            causal,
            scale,
            q_split: q_block.min(l.max(1)),
            kv_split: 512.min(s.max(1)),
        }
    }
}

fn strides4(t: &Tensor) -> [isize; 4] {
    [t.stride(0), t.stride(1), t.stride(2), t.stride(3)]
}

/// float32 SDPA without dropout: `q [B, H, L, E]`, `k`/`v [B, H / group, S, E]`, an optional float32
/// additive mask already broadcast to `[B, H, L, S]` by `mask_strides` (0 on broadcast dims).
/// Writes `out [B, H, L, E]` and `lse [B, H, L]` (float32).
#[allow(clippy::too_many_arguments)]
pub fn sdpa_f32(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    group: usize,
    mask: Option<(&Tensor, [isize; 4])>,
    causal: bool,
    scale: f32,
    out: &Tensor,
    lse: &Tensor,
) -> KResult {
    let p = Problem::new(q, k, v, out, lse, group, mask, causal, scale);
    if p.b * p.h * p.l == 0 {
        return Ok(());
    }
    let q_slices = p.l.div_ceil(p.q_split);
    let tasks = p.b * p.h * q_slices;
    let run = move |bufs: &mut Bufs, z: usize| {
        let (bh, qs) = (z / q_slices, z % q_slices);
        // SAFETY: the views are valid for the call and each task writes its own rows.
        unsafe { block(&p, bufs, bh / p.h, bh % p.h, qs * p.q_split) }
    };
    // upstream splits every (batch, head, query block) across its threads
    run_tasks(&p, tasks, run);
    Ok(())
}

/// Runs `tasks` tasks on the pool, or on this thread where the problem is smaller than a
/// hand-over (a decode step's handful of one-row blocks). Which thread runs a task does not
/// change its values.
fn run_tasks(p: &Problem, tasks: usize, run: impl Fn(&mut Bufs, usize) + Sync) {
    if tasks > 1 && p.b * p.h * p.l * p.s * p.e >= 1 << 16 {
        crate::threads::parallel_for(tasks, Bufs::default, run);
    } else {
        let mut bufs = Bufs::default();
        for z in 0..tasks {
            run(&mut bufs, z);
        }
    }
}

#[derive(Default)]
struct Bufs {
    qk: Vec<f32>,
    max: Vec<f32>,
    sum: Vec<f32>,
    dst: Vec<f32>,
}

/// One query block of one (batch, head), upstream's loop body.
///
/// # Safety
/// `p`'s pointers and strides must describe valid float32 views.
unsafe fn block(p: &Problem, bufs: &mut Bufs, bi: usize, hi: usize, m: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::vecmath::{capability, Cap};
        match capability() {
            Cap::Avx512 => return block_avx512(p, bufs, bi, hi, m),
            Cap::Avx2 => return block_avx2(p, bufs, bi, hi, m),
            Cap::Default => {}
        }
    }
    block_impl::<8>(p, bufs, bi, hi, m)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn block_avx512(p: &Problem, bufs: &mut Bufs, bi: usize, hi: usize, m: usize) {
    block_impl::<16>(p, bufs, bi, hi, m)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn block_avx2(p: &Problem, bufs: &mut Bufs, bi: usize, hi: usize, m: usize) {
    block_impl::<8>(p, bufs, bi, hi, m)
}

#[inline(always)]
unsafe fn block_impl<const W: usize>(p: &Problem, bufs: &mut Bufs, bi: usize, hi: usize, m: usize) {
    let (e, s) = (p.e, p.s);
    let qb = p.q_split.min(p.l - m);
    let at = |base: usize, st: &[isize; 4], r: usize, c: usize| -> *mut f32 {
        let off =
            bi as isize * st[0] + hi as isize * st[1] + r as isize * st[2] + c as isize * st[3];
        (base as *mut f32).wrapping_offset(off)
    };
    // key and value rows: head `hi` reads its group's key/value head
    let at_kv = |base: usize, st: &[isize; 4], r: usize, c: usize| -> *mut f32 {
        let off = bi as isize * st[0]
            + (hi / p.group) as isize * st[1]
            + r as isize * st[2]
            + c as isize * st[3];
        (base as *mut f32).wrapping_offset(off)
    };
    bufs.qk.resize(qb * p.kv_split, 0.0);
    bufs.max.clear();
    bufs.max.resize(qb, f32::NEG_INFINITY);
    bufs.sum.clear();
    bufs.sum.resize(qb, 0.0);
    bufs.dst.resize(qb * e, 0.0);
    let num_keys = if p.causal { (m + qb).min(s) } else { s };
    let mut n = 0;
    while n < num_keys {
        let kvb = p.kv_split.min(s - n);
        let qk = &mut bufs.qk[..qb * kvb];
        // qk = q[m.., :] @ k[n.., :]^T
        scaled_product(
            (qb, kvb, e),
            (qk.as_mut_ptr(), 1, kvb as isize),
            false,
            (at(p.q.0, &p.q.1, m, 0), p.q.1[3], p.q.1[2]),
            (at_kv(p.k.0, &p.k.1, n, 0), p.k.1[2], p.k.1[3]),
            1.0,
        );
        if p.causal && num_keys - n <= p.kv_split {
            for r in 0..qb {
                let last = (m + r) as isize - n as isize;
                let from = (last + 1).max(0) as usize;
                if from < kvb {
                    qk[r * kvb + from..(r + 1) * kvb].fill(f32::NEG_INFINITY);
                }
            }
        }
        for r in 0..qb {
            let row = &mut qk[r * kvb..(r + 1) * kvb];
            let mrow = p
                .mask
                .map(|(base, st)| (at(base, &st, m + r, n) as *const f32, st[3]));
            let mut tmax = scale_and_max::<W>(row, p.scale, mrow);
            let old = bufs.max[r];
            tmax = if old > tmax { old } else { tmax };
            if tmax == f32::NEG_INFINITY {
                row.fill(0.0);
                continue;
            }
            let tsum = exp_and_sum::<W>(row, tmax);
            let rescale = (old - tmax).exp();
            // qk_sum = tmp_sum + exp_tmp * qk_sum, contracted to one fma as GCC does
            bufs.sum[r] = rescale.mul_add(bufs.sum[r], tsum);
            bufs.max[r] = tmax;
            if n > 0 {
                for d in bufs.dst[r * e..(r + 1) * e].iter_mut() {
                    *d *= rescale;
                }
            }
        }
        // dst (+)= p @ v[n.., :]
        if e > 0 {
            scaled_product(
                (qb, e, kvb),
                (bufs.dst.as_mut_ptr(), 1, e as isize),
                n > 0,
                (qk.as_ptr(), 1, kvb as isize),
                (at_kv(p.v.0, &p.v.1, n, 0), p.v.1[3], p.v.1[2]),
                1.0,
            );
        }
        n += p.kv_split;
    }
    for r in 0..qb {
        let mx = if bufs.max[r] == f32::NEG_INFINITY {
            0.0
        } else {
            bufs.max[r]
        };
        let sum = if bufs.sum[r] == 0.0 { 1.0 } else { bufs.sum[r] };
        let recip = 1.0 / sum;
        let acc = &bufs.dst[r * e..(r + 1) * e];
        let o = at(p.o.0, &p.o.1, m + r, 0);
        if p.o.1[3] == 1 {
            // SAFETY: a row of `e` contiguous output elements
            let o = std::slice::from_raw_parts_mut(o, e);
            for (o, a) in o.iter_mut().zip(acc) {
                *o = a * recip;
            }
        } else {
            for (d, a) in acc.iter().enumerate() {
                *o.wrapping_offset(d as isize * p.o.1[3]) = a * recip;
            }
        }
        let lp = (p.lse.0 as *mut f32).offset(
            bi as isize * p.lse.1[0] + hi as isize * p.lse.1[1] + (m + r) as isize * p.lse.1[2],
        );
        *lp = mx + sum.ln();
    }
}

/// The operands of one backward call (pointers as usize and strides in elements, so tasks on the
/// pool can share it): the forward's `q`, `k`, `v`, `out`, `lse` and mask, the incoming
/// `go`, and the three gradients written.
#[derive(Clone, Copy)]
struct BackwardProblem {
    fwd: Problem,
    go: (usize, [isize; 4]),
    gq: (usize, [isize; 4]),
    gk: (usize, [isize; 4]),
    gv: (usize, [isize; 4]),
}

/// float32 backward of [`sdpa_f32`] in the order of upstream's `cpu_flash_attention_backward`:
/// per query block `dsum = rowsum(go * out)`, then per key block `attn = exp(scale q k^T (+ mask)
/// - lse)` (Sleef's exp, as `Vectorized::exp`), the causal tail zeroed, `gv += attn^T go`,
/// `gattn = attn * (go v^T - dsum)`, `gq += scale gattn k`, `gk += scale gattn^T q`.
/// Grouped-query attention: one task per (batch, key/value head) runs its query heads in order,
/// so a key/value head's gradient accumulates over its query heads without a race. Shapes as
/// [`sdpa_f32`]; `gq`, `gk`, `gv` have the shapes of `q`, `k`, `v` and are overwritten.
#[allow(clippy::too_many_arguments)]
pub fn sdpa_backward_f32(
    go: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    out: &Tensor,
    lse: &Tensor,
    group: usize,
    mask: Option<(&Tensor, [isize; 4])>,
    causal: bool,
    scale: f32,
    gq: &Tensor,
    gk: &Tensor,
    gv: &Tensor,
) -> KResult {
    let fwd = Problem::new(q, k, v, out, lse, group, mask, causal, scale);
    let p = BackwardProblem {
        fwd,
        go: (go.data as usize, strides4(go)),
        gq: (gq.data as usize, strides4(gq)),
        gk: (gk.data as usize, strides4(gk)),
        gv: (gv.data as usize, strides4(gv)),
    };
    let kv_heads = fwd.h.checked_div(group).unwrap_or(0);
    let tasks = fwd.b * kv_heads;
    if tasks == 0 {
        return Ok(());
    }
    let run = move |bufs: &mut Bufs, z: usize| {
        // SAFETY: the views are valid for the call; task z writes the gradients of its own
        // (batch, key/value head) and of the query heads that head serves.
        unsafe { backward_task(&p, bufs, z / kv_heads, z % kv_heads) }
    };
    run_tasks(&fwd, tasks, run);
    Ok(())
}

/// Pointer to element `[bi, hi, r, c]` of a 4-d view.
#[inline(always)]
fn at4((base, st): (usize, [isize; 4]), bi: usize, hi: usize, r: usize, c: usize) -> *mut f32 {
    let off = bi as isize * st[0] + hi as isize * st[1] + r as isize * st[2] + c as isize * st[3];
    (base as *mut f32).wrapping_offset(off)
}

/// `rows x cols` elements of a 4-d view's `[bi, hi]` matrix set to zero.
unsafe fn zero_matrix(t: (usize, [isize; 4]), bi: usize, hi: usize, rows: usize, cols: usize) {
    for r in 0..rows {
        let row = at4(t, bi, hi, r, 0);
        if t.1[3] == 1 {
            std::slice::from_raw_parts_mut(row, cols).fill(0.0);
        } else {
            for c in 0..cols {
                *row.wrapping_offset(c as isize * t.1[3]) = 0.0;
            }
        }
    }
}

unsafe fn backward_task(p: &BackwardProblem, bufs: &mut Bufs, bi: usize, kh: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::vecmath::{capability, Cap};
        match capability() {
            Cap::Avx512 => return backward_task_avx512(p, bufs, bi, kh),
            Cap::Avx2 => return backward_task_avx2(p, bufs, bi, kh),
            Cap::Default => {}
        }
    }
    backward_task_impl::<8>(p, bufs, bi, kh)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn backward_task_avx512(p: &BackwardProblem, bufs: &mut Bufs, bi: usize, kh: usize) {
    backward_task_impl::<16>(p, bufs, bi, kh)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn backward_task_avx2(p: &BackwardProblem, bufs: &mut Bufs, bi: usize, kh: usize) {
    backward_task_impl::<8>(p, bufs, bi, kh)
}

/// `vec::map2_reduce_all(x * y, +)` over a row: lane sums (the first vector's products, then
/// fused multiply-adds), the tail folded into the first lanes, then the shuffle tree; shorter
/// rows than a vector fold their products into lane 0 in order.
#[inline(always)]
unsafe fn dot_row<const W: usize>(
    x: *const f32,
    xs: isize,
    y: *const f32,
    ys: isize,
    n: usize,
) -> f32 {
    let get = |p: *const f32, st: isize, i: usize| *p.wrapping_offset(i as isize * st);
    if n < W {
        if n == 0 {
            return 0.0;
        }
        let mut a = get(x, xs, 0) * get(y, ys, 0);
        for i in 1..n {
            a += get(x, xs, i) * get(y, ys, i);
        }
        return a;
    }
    let mut acc = [0f32; W];
    for (l, a) in acc.iter_mut().enumerate() {
        *a = get(x, xs, l) * get(y, ys, l);
    }
    let mut d = W;
    while d + W <= n {
        for (l, a) in acc.iter_mut().enumerate() {
            *a = get(x, xs, d + l).mul_add(get(y, ys, d + l), *a);
        }
        d += W;
    }
    for (l, a) in acc.iter_mut().enumerate().take(n - d) {
        *a = get(x, xs, d + l).mul_add(get(y, ys, d + l), *a);
    }
    reduce_lanes::<W>(|a, b| a + b, acc)
}

#[inline(always)]
unsafe fn backward_task_impl<const W: usize>(
    p: &BackwardProblem,
    bufs: &mut Bufs,
    bi: usize,
    kh: usize,
) {
    let f = &p.fwd;
    let (e, s, sc) = (f.e, f.s, f.scale);
    zero_matrix(p.gk, bi, kh, s, e);
    zero_matrix(p.gv, bi, kh, s, e);
    bufs.qk.resize(f.q_split * f.kv_split, 0.0);
    bufs.dst.resize(f.q_split * f.kv_split, 0.0);
    bufs.sum.resize(f.q_split, 0.0);
    for hi in kh * f.group..(kh + 1) * f.group {
        zero_matrix(p.gq, bi, hi, f.l, e);
        let mut m = 0;
        while m < f.l {
            let qb = f.q_split.min(f.l - m);
            for r in 0..qb {
                bufs.sum[r] = dot_row::<W>(
                    at4(p.go, bi, hi, m + r, 0),
                    p.go.1[3],
                    at4(f.o, bi, hi, m + r, 0),
                    f.o.1[3],
                    e,
                );
            }
            let num_keys = if f.causal { (m + qb).min(s) } else { s };
            let mut n = 0;
            while n < num_keys {
                let kvb = f.kv_split.min(s - n);
                let attn = &mut bufs.qk[..qb * kvb];
                let gattn = &mut bufs.dst[..qb * kvb];
                let q_blk = at4(f.q, bi, hi, m, 0);
                let k_blk = at4(f.k, bi, kh, n, 0);
                let v_blk = at4(f.v, bi, kh, n, 0);
                let go_blk = at4(p.go, bi, hi, m, 0);
                // attn = scale * q k^T
                scaled_product(
                    (qb, kvb, e),
                    (attn.as_mut_ptr(), 1, kvb as isize),
                    false,
                    (q_blk, f.q.1[3], f.q.1[2]),
                    (k_blk, f.k.1[2], f.k.1[3]),
                    sc,
                );
                for r in 0..qb {
                    let row = &mut attn[r * kvb..(r + 1) * kvb];
                    if let Some(mk) = f.mask {
                        let mrow = at4(mk, bi, hi, m + r, n);
                        for (j, a) in row.iter_mut().enumerate() {
                            // `a * 1 + mask`, one exact fma
                            *a += *mrow.wrapping_offset(j as isize * mk.1[3]);
                        }
                    }
                    let lp = (f.lse.0 as *const f32).offset(
                        bi as isize * f.lse.1[0]
                            + hi as isize * f.lse.1[1]
                            + (m + r) as isize * f.lse.1[2],
                    );
                    let norm = *lp;
                    for a in row.iter_mut() {
                        *a = crate::vecmath::sleef_expf(*a - norm);
                    }
                    if f.causal && num_keys - n <= f.kv_split {
                        let from = ((m + r) as isize - n as isize + 1).max(0) as usize;
                        if from < kvb {
                            row[from..].fill(0.0);
                        }
                    }
                }
                // gv[n..] += attn^T go
                scaled_product(
                    (kvb, e, qb),
                    (at4(p.gv, bi, kh, n, 0), p.gv.1[3], p.gv.1[2]),
                    true,
                    (attn.as_ptr(), kvb as isize, 1),
                    (go_blk, p.go.1[3], p.go.1[2]),
                    1.0,
                );
                // gattn = go v^T, then attn * (gattn - dsum)
                scaled_product(
                    (qb, kvb, e),
                    (gattn.as_mut_ptr(), 1, kvb as isize),
                    false,
                    (go_blk, p.go.1[3], p.go.1[2]),
                    (v_blk, f.v.1[2], f.v.1[3]),
                    1.0,
                );
                for r in 0..qb {
                    let d = bufs.sum[r];
                    let (a, g) = (
                        &attn[r * kvb..(r + 1) * kvb],
                        &mut gattn[r * kvb..(r + 1) * kvb],
                    );
                    for (g, a) in g.iter_mut().zip(a) {
                        *g = a * (*g - d);
                    }
                }
                // gq[m..] += scale * gattn k ; gk[n..] += scale * gattn^T q
                scaled_product(
                    (qb, e, kvb),
                    (at4(p.gq, bi, hi, m, 0), p.gq.1[3], p.gq.1[2]),
                    true,
                    (gattn.as_ptr(), 1, kvb as isize),
                    (k_blk, f.k.1[3], f.k.1[2]),
                    sc,
                );
                scaled_product(
                    (kvb, e, qb),
                    (at4(p.gk, bi, kh, n, 0), p.gk.1[3], p.gk.1[2]),
                    true,
                    (gattn.as_ptr(), kvb as isize, 1),
                    (q_blk, f.q.1[3], f.q.1[2]),
                    sc,
                );
                n += f.kv_split;
            }
            m += f.q_split;
        }
    }
}

/// `dst = alpha * lhs @ rhs`, or `dst += alpha * lhs @ rhs` with `accumulate`, for `(m, n, k)`;
/// every matrix as (pointer, column stride, row stride) in elements; `k == 0` gives zeros. On the
/// calling thread: the blocks of the forward and the backward are what runs in parallel.
#[inline(always)]
unsafe fn scaled_product(
    (m, n, k): (usize, usize, usize),
    dst: (*mut f32, isize, isize),
    accumulate: bool,
    lhs: (*const f32, isize, isize),
    rhs: (*const f32, isize, isize),
    alpha: f32,
) {
    if k == 0 {
        if !accumulate {
            for r in 0..m {
                for c in 0..n {
                    *dst.0
                        .wrapping_offset(r as isize * dst.2 + c as isize * dst.1) = 0.0;
                }
            }
        }
        return;
    }
    gemm::gemm(
        m,
        n,
        k,
        dst.0,
        dst.1,
        dst.2,
        accumulate,
        lhs.0,
        lhs.1,
        lhs.2,
        rhs.0,
        rhs.1,
        rhs.2,
        1.0,
        alpha,
        false,
        false,
        false,
        gemm::Parallelism::None,
    )
}

#[cfg(test)]
mod tests {
    use super::exp_u20;

    #[test]
    fn exp_u20_edges() {
        assert_eq!(exp_u20(0.0), 1.0);
        assert_eq!(exp_u20(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_u20(-100.0), 0.0);
        // within upstream's stated 20 ulp of the exact value where 2^(n-1) is a normal float
        // (below about -86.99 upstream's construction flushes to 0)
        for i in 0..20000 {
            let x = -86.9 * i as f32 / 20000.0;
            let (a, b) = (exp_u20(x), (x as f64).exp());
            assert!(
                ((a as f64 - b) / b).abs() < 20.0 * f32::EPSILON as f64,
                "{x}: {a} vs {b}"
            );
        }
    }
}

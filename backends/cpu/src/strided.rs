//! The N-d strided iterator: one output and k inputs, each with its own strides and element
//! size, walked in the output's memory order with contiguous dims coalesced and the innermost
//! dim as a tight inner loop (a slice loop the compiler vectorises when every operand is
//! contiguous there). This is the workhorse of the elementwise families.
//!
//! We iterate torch views in place rather than through candle tensors: candle's storage is
//! owned and contiguous-by-default, torch's views (transposes, slices, stride-0 expansions)
//! must be read where they lie.

use crate::kernel::{runtime, KResult, Tensor};

/// The most dims a plan keeps after dropping size-1 dims and coalescing.
pub const MAX_DIMS: usize = 64;

/// How to walk `N` operands over a common shape: dims outer → inner, byte strides per operand.
#[derive(Clone, Debug)]
pub struct Plan<const N: usize> {
    pub ndim: usize,
    pub sizes: [usize; MAX_DIMS],
    pub strides: [[isize; N]; MAX_DIMS],
    pub empty: bool,
}

impl<const N: usize> Plan<N> {
    /// `sizes` is the common shape; `strides[k]` are operand k's element strides (same length as
    /// `sizes`), `itemsizes[k]` its element size. The walk order is upstream's TensorIterator
    /// order (see [`Plan::ordered`]) over all operands, operand 0 (the output) first.
    // Inlined, with `ordered`, so the 2 KiB plan is built in the caller's frame rather than
    // returned through a copy (a memcpy per kernel call in the per-call overhead profile).
    #[inline(always)]
    pub fn new(sizes: &[i64], strides: [&[i64]; N], itemsizes: [usize; N]) -> KResult<Plan<N>> {
        Plan::ordered(sizes, strides, itemsizes, N, false)
    }

    /// As [`Plan::new`], with the dim order decided by the first `nsort` operands only (the rest
    /// are pseudo-operands) and, when `reduction` is set, operand 0 treated as a reduction
    /// output: dims where it has stride 0 (the reduced dims) go innermost.
    ///
    /// The order follows upstream's `TensorIteratorBase::reorder_dimensions`, so that
    /// order-sensitive accumulations (Welford, the two-pass variance) visit elements in the same
    /// sequence: an insertion sort from the innermost dim where, operand by operand, a smaller
    /// stride goes inner, a stride of 0 (a broadcast) is no evidence either way, and equal strides
    /// put the smaller dim inner.
    #[inline(always)]
    pub fn ordered(
        sizes: &[i64],
        strides: [&[i64]; N],
        itemsizes: [usize; N],
        nsort: usize,
        reduction: bool,
    ) -> KResult<Plan<N>> {
        let nd = sizes.len();
        if nd > MAX_DIMS {
            return Err(runtime(format!(
                "tensors with more than {MAX_DIMS} dims are not supported"
            )));
        }
        for s in &strides {
            if s.len() != nd {
                return Err(runtime(
                    "strided plan: operand rank differs from the iteration shape",
                ));
            }
        }
        let mut plan = Plan {
            ndim: 0,
            sizes: [0; MAX_DIMS],
            strides: [[0; N]; MAX_DIMS],
            empty: false,
        };
        if sizes.contains(&0) {
            plan.empty = true;
            return Ok(plan);
        }
        // perm[0] is the innermost dim; start from the logical order.
        let mut perm = [0usize; MAX_DIMS];
        for (i, p) in perm[..nd].iter_mut().enumerate() {
            *p = nd - 1 - i;
        }
        let should_swap = |d0: usize, d1: usize| -> i32 {
            for k in 0..nsort.min(N) {
                let (s0, s1) = (
                    strides[k][d0] * itemsizes[k] as i64,
                    strides[k][d1] * itemsizes[k] as i64,
                );
                if reduction && k == 0 && (s0 == 0) != (s1 == 0) {
                    return if s1 == 0 { 1 } else { -1 };
                }
                if s0 == 0 || s1 == 0 {
                    continue;
                } else if s0 < s1 {
                    return -1;
                } else if s0 > s1 {
                    return 1;
                }
                if sizes[d0] > sizes[d1] {
                    return 1;
                }
            }
            0
        };
        for i in 1..nd {
            let mut d1 = i;
            let mut d0 = i as isize - 1;
            while d0 >= 0 {
                let c = should_swap(perm[d0 as usize], perm[d1]);
                if c > 0 {
                    perm.swap(d0 as usize, d1);
                    d1 = d0 as usize;
                } else if c < 0 {
                    break;
                }
                d0 -= 1;
            }
        }
        // Outer → inner, dropping size-1 dims.
        let mut dims = [0usize; MAX_DIMS];
        let mut n = 0;
        for i in (0..nd).rev() {
            if sizes[perm[i]] != 1 {
                dims[n] = perm[i];
                n += 1;
            }
        }
        // Coalesce: merge an outer dim into the running inner dim when every operand's outer
        // stride equals inner stride × inner size.
        let mut m = 0usize;
        for &d in &dims[..n] {
            let size = sizes[d] as usize;
            let st: [isize; N] =
                std::array::from_fn(|k| strides[k][d] as isize * itemsizes[k] as isize);
            if m > 0 {
                let prev = m - 1;
                // `d` is inner to `prev`.
                if (0..N).all(|k| plan.strides[prev][k] == st[k] * size as isize) {
                    plan.sizes[prev] *= size;
                    plan.strides[prev] = st;
                    continue;
                }
            }
            plan.sizes[m] = size;
            plan.strides[m] = st;
            m += 1;
        }
        plan.ndim = m;
        Ok(plan)
    }

    pub fn numel(&self) -> usize {
        if self.empty {
            0
        } else {
            self.sizes[..self.ndim].iter().product()
        }
    }

    /// Calls `inner(ptrs, inner_strides, n)` once per innermost run of `n` elements. Pointers
    /// advance with wrapping arithmetic, so an operand may be a pseudo-operand (a null base whose
    /// running address is an index, as the reductions use).
    ///
    /// # Safety
    /// `ptrs` must point at element 0 of views that match the plan.
    #[inline]
    pub unsafe fn run(
        &self,
        ptrs: [*mut u8; N],
        mut inner: impl FnMut([*mut u8; N], [isize; N], usize),
    ) {
        if self.empty {
            return;
        }
        if self.ndim == 0 {
            inner(ptrs, [0; N], 1);
            return;
        }
        let nd = self.ndim;
        let n = self.sizes[nd - 1];
        let is = self.strides[nd - 1];
        if nd == 1 {
            inner(ptrs, is, n);
            return;
        }
        let mut idx = [0usize; MAX_DIMS];
        let mut p = ptrs;
        loop {
            inner(p, is, n);
            // Advance the outer counter (dims nd-2 .. 0).
            let mut d = nd - 2;
            loop {
                idx[d] += 1;
                for (pk, &st) in p.iter_mut().zip(&self.strides[d]) {
                    *pk = pk.wrapping_offset(st);
                }
                if idx[d] < self.sizes[d] {
                    break;
                }
                for (pk, &st) in p.iter_mut().zip(&self.strides[d]) {
                    *pk = pk.wrapping_offset(-(st * self.sizes[d] as isize));
                }
                idx[d] = 0;
                if d == 0 {
                    return;
                }
                d -= 1;
            }
        }
    }
}

/// Raw pointers handed to worker threads (each thread writes disjoint elements).
#[derive(Copy, Clone)]
struct Ptrs<const N: usize>([*mut u8; N]);
unsafe impl<const N: usize> Send for Ptrs<N> {}
unsafe impl<const N: usize> Sync for Ptrs<N> {}

/// Elementwise loops of at least this many elements are split across threads (upstream's
/// `at::internal::GRAIN_SIZE`).
pub const GRAIN_SIZE: usize = 32768;

impl<const N: usize> Plan<N> {
    /// As [`Plan::run`], splitting the outermost dim (or the single coalesced dim) across the
    /// threads ([`crate::threads::parallel_for`]) when the loop has at least [`GRAIN_SIZE`] elements. Operand 0 must be the only
    /// one written, and no two of its elements may alias.
    ///
    /// # Safety
    /// As [`Plan::run`].
    pub unsafe fn par_run(
        &self,
        ptrs: [*mut u8; N],
        inner: impl Fn([*mut u8; N], [isize; N], usize) + Sync,
    ) {
        let total = self.numel();
        let threads = crate::threads::threads();
        if total < GRAIN_SIZE || threads <= 1 || self.ndim == 0 {
            return self.run(ptrs, inner);
        }
        let n0 = self.sizes[0];
        let s0 = self.strides[0];
        // Chunks of the outermost dim, each at least GRAIN_SIZE elements when possible.
        let per = total / n0;
        let chunk = GRAIN_SIZE
            .div_ceil(per)
            .max(n0.div_ceil(threads * 4))
            .max(1);
        let nchunks = n0.div_ceil(chunk);
        let base = Ptrs(ptrs);
        let inner = &inner;
        crate::threads::parallel_for(
            nchunks,
            || (),
            move |_, ci| {
                let b = base;
                let start = ci * chunk;
                let len = chunk.min(n0 - start);
                let p: [*mut u8; N] =
                    std::array::from_fn(|k| b.0[k].wrapping_offset(start as isize * s0[k]));
                let mut sub = self.clone();
                sub.sizes[0] = len;
                sub.run(p, inner);
            },
        );
    }

    /// As upstream's `loop2d`: calls `f(ptrs, inner_strides, n_inner, outer_strides, n_outer)`
    /// once per block of the two innermost dims (some accumulations, like upstream's
    /// all-reduce variance, keep one partial sum per such block).
    ///
    /// # Safety
    /// As [`Plan::run`].
    pub unsafe fn run2d(
        &self,
        ptrs: [*mut u8; N],
        mut f: impl FnMut([*mut u8; N], [isize; N], usize, [isize; N], usize),
    ) {
        if self.empty {
            return;
        }
        let nd = self.ndim;
        if nd <= 2 {
            let (is, n) = if nd >= 1 {
                (self.strides[nd - 1], self.sizes[nd - 1])
            } else {
                ([0; N], 1)
            };
            let (os, m) = if nd == 2 {
                (self.strides[0], self.sizes[0])
            } else {
                ([0; N], 1)
            };
            f(ptrs, is, n, os, m);
            return;
        }
        let outer = Plan::<N> {
            ndim: nd - 2,
            sizes: self.sizes,
            strides: self.strides,
            empty: false,
        };
        let (is, n, os, m) = (
            self.strides[nd - 1],
            self.sizes[nd - 1],
            self.strides[nd - 2],
            self.sizes[nd - 2],
        );
        // Walk the outer dims one element at a time.
        outer.run(ptrs, |p, s, k| {
            for i in 0..k as isize {
                let q: [*mut u8; N] = std::array::from_fn(|j| p[j].wrapping_offset(i * s[j]));
                f(q, is, n, os, m);
            }
        });
    }
}

fn check_same_shape(op: &str, out: &Tensor, ins: &[&Tensor]) -> KResult {
    for t in ins {
        if t.sizes != out.sizes {
            return Err(runtime(format!(
                "{op}: operand of shape {:?} does not match the output shape {:?} (the core broadcasts operands)",
                t.sizes, out.sizes
            )));
        }
    }
    Ok(())
}

/// `o[i] = f(i)` for `i` in `0..n`, in blocks: each block's results computed into a local
/// array, then stored. Element by element, an output that *is* an input (the in-place forms:
/// `mul_`, `add_`) fails the vectoriser's runtime overlap check and runs its scalar fallback,
/// 3-6x slower; the blocked loop vectorises either way and computes each element alike.
#[inline(always)]
unsafe fn blocked<O: Copy>(o: *mut O, n: usize, f: impl Fn(usize) -> O) {
    const BLOCK: usize = 64;
    let mut i = 0;
    while i + BLOCK <= n {
        let r: [O; BLOCK] = std::array::from_fn(|j| f(i + j));
        std::ptr::copy_nonoverlapping(r.as_ptr(), o.add(i), BLOCK);
        i += BLOCK;
    }
    for i in i..n {
        o.add(i).write(f(i));
    }
}

/// `out[i] = f(a[i])` over strided views (`A`, `O` their element types).
///
/// # Safety
/// The element types must match the views' dtypes.
pub unsafe fn map1<A: Copy, O: Copy>(
    out: &Tensor,
    a: &Tensor,
    f: impl Fn(A) -> O + Sync,
) -> KResult {
    check_same_shape("map1", out, &[a])?;
    let plan = Plan::<2>::new(
        out.sizes,
        [out.strides, a.strides],
        [out.itemsize(), a.itemsize()],
    )?;
    let (so, sa) = (
        std::mem::size_of::<O>() as isize,
        std::mem::size_of::<A>() as isize,
    );
    plan.par_run([out.data, a.data], |p, s, n| {
        if s == [so, sa] {
            let a = p[1] as *const A;
            blocked(p[0] as *mut O, n, |i| f(a.add(i).read()));
        } else {
            for i in 0..n as isize {
                let a = (p[1].offset(i * s[1]) as *const A).read();
                (p[0].offset(i * s[0]) as *mut O).write(f(a));
            }
        }
    });
    Ok(())
}

/// `out[i] = f(a[i], b[i])`.
///
/// # Safety
/// As [`map1`].
pub unsafe fn map2<A: Copy, B: Copy, O: Copy>(
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(A, B) -> O + Sync,
) -> KResult {
    check_same_shape("map2", out, &[a, b])?;
    let plan = Plan::<3>::new(
        out.sizes,
        [out.strides, a.strides, b.strides],
        [out.itemsize(), a.itemsize(), b.itemsize()],
    )?;
    let (so, sa, sb) = (
        std::mem::size_of::<O>() as isize,
        std::mem::size_of::<A>() as isize,
        std::mem::size_of::<B>() as isize,
    );
    plan.par_run([out.data, a.data, b.data], |p, s, n| {
        if s == [so, sa, sb] {
            let (a, b) = (p[1] as *const A, p[2] as *const B);
            blocked(p[0] as *mut O, n, |i| f(a.add(i).read(), b.add(i).read()));
        } else if s == [so, sa, 0] {
            // A scalar (broadcast) right operand: `x + 1`.
            let a = p[1] as *const A;
            let b = (p[2] as *const B).read();
            blocked(p[0] as *mut O, n, |i| f(a.add(i).read(), b));
        } else {
            for i in 0..n as isize {
                let a = (p[1].offset(i * s[1]) as *const A).read();
                let b = (p[2].offset(i * s[2]) as *const B).read();
                (p[0].offset(i * s[0]) as *mut O).write(f(a, b));
            }
        }
    });
    Ok(())
}

/// `out[i] = f(a[i], b[i], c[i])`.
///
/// # Safety
/// As [`map1`].
pub unsafe fn map3<A: Copy, B: Copy, C: Copy, O: Copy>(
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(A, B, C) -> O + Sync,
) -> KResult {
    check_same_shape("map3", out, &[a, b, c])?;
    let plan = Plan::<4>::new(
        out.sizes,
        [out.strides, a.strides, b.strides, c.strides],
        [out.itemsize(), a.itemsize(), b.itemsize(), c.itemsize()],
    )?;
    let (so, sa, sb, sc) = (
        std::mem::size_of::<O>() as isize,
        std::mem::size_of::<A>() as isize,
        std::mem::size_of::<B>() as isize,
        std::mem::size_of::<C>() as isize,
    );
    plan.par_run([out.data, a.data, b.data, c.data], |p, s, n| {
        if s == [so, sa, sb, sc] {
            let (a, b, c) = (p[1] as *const A, p[2] as *const B, p[3] as *const C);
            return blocked(p[0] as *mut O, n, |i| {
                f(a.add(i).read(), b.add(i).read(), c.add(i).read())
            });
        }
        for i in 0..n as isize {
            let a = (p[1].offset(i * s[1]) as *const A).read();
            let b = (p[2].offset(i * s[2]) as *const B).read();
            let c = (p[3].offset(i * s[3]) as *const C).read();
            (p[0].offset(i * s[0]) as *mut O).write(f(a, b, c));
        }
    });
    Ok(())
}

/// `out[i] = v` for every element.
///
/// # Safety
/// `O` must be the view's element type.
pub unsafe fn fill<O: Copy + Sync>(out: &Tensor, v: O) -> KResult {
    let plan = Plan::<1>::new(out.sizes, [out.strides], [out.itemsize()])?;
    let so = std::mem::size_of::<O>() as isize;
    plan.par_run([out.data], |p, s, n| {
        if s[0] == so {
            std::slice::from_raw_parts_mut(p[0] as *mut O, n).fill(v);
        } else {
            for i in 0..n as isize {
                (p[0].offset(i * s[0]) as *mut O).write(v);
            }
        }
    });
    Ok(())
}

/// Calls `f(ptrs, byte_strides_along_dim, lens_along_dim)` once per line along `dim` of the
/// `N` tensors, which must agree in every other dim (`None`: the tensors are 0-dim, one line of
/// length 1).
///
/// # Safety
/// The views must be valid.
pub unsafe fn for_each_line<const N: usize>(
    ts: [&Tensor; N],
    dim: Option<usize>,
    mut f: impl FnMut([*mut u8; N], [isize; N], [usize; N]),
) -> KResult {
    let Some(d) = dim else {
        f(std::array::from_fn(|k| ts[k].data), [0; N], [1; N]);
        return Ok(());
    };
    let nd = ts[0].ndim();
    for t in &ts {
        if t.ndim() != nd || (0..nd).any(|e| e != d && t.sizes[e] != ts[0].sizes[e]) {
            return Err(runtime(format!(
                "line iteration: shapes {:?} and {:?} differ outside dim {d}",
                ts[0].sizes, t.sizes
            )));
        }
    }
    let mut sizes = ts[0].sizes.to_vec();
    sizes[d] = 1;
    let strides: [&[i64]; N] = std::array::from_fn(|k| ts[k].strides);
    let plan = Plan::<N>::new(&sizes, strides, std::array::from_fn(|k| ts[k].itemsize()))?;
    let ls: [isize; N] =
        std::array::from_fn(|k| ts[k].strides[d] as isize * ts[k].itemsize() as isize);
    let lens: [usize; N] = std::array::from_fn(|k| ts[k].sizes[d] as usize);
    plan.run(std::array::from_fn(|k| ts[k].data), |p, s, n| {
        for i in 0..n as isize {
            f(
                std::array::from_fn(|k| p[k].wrapping_offset(i * s[k])),
                ls,
                lens,
            );
        }
    });
    Ok(())
}

/// Contiguous element strides of `sizes`.
pub fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut st = vec![0i64; sizes.len()];
    let mut acc = 1i64;
    for d in (0..sizes.len()).rev() {
        st[d] = acc;
        acc *= sizes[d].max(1);
    }
    st
}

/// [`zip_fma`] over tensors: when `out` and every input are contiguous views of `out`'s shape
/// and of `T`'s dtype (the optimizers' state and parameters, same-shape operands). Returns
/// `false`, having done nothing, otherwise or under the default capability.
///
/// # Safety
/// The views must be valid; `out` may be one of the inputs.
pub unsafe fn zip_fma_tensors<T: crate::dtype::Elem + Send + Sync, const N: usize>(
    out: &Tensor,
    ins: [&Tensor; N],
    f: impl Fn([T; N]) -> T + Sync + Copy,
) -> bool {
    let fits = |t: &Tensor| t.dtype == T::DTYPE && t.sizes == out.sizes && t.is_contiguous();
    fits(out)
        && ins.iter().all(|t| fits(t))
        && zip_fma(
            out.data as *mut T,
            ins.map(|t| t.data as *const T),
            out.numel(),
            f,
        )
}

/// `out[i] = f([ins[0][i], ...])` over `n` contiguous elements, compiled with AVX2+FMA (and
/// AVX-512 where the machine has it) so that `mul_add` in `f` is one vector instruction rather
/// than a call to libm's `fma` per element (the crate's baseline target has no FMA). Split
/// across the threads from [`GRAIN_SIZE`] elements. Returns `false`, having done nothing, where
/// the capability is the default build (the caller runs its strided loop).
///
/// # Safety
/// `out` and every `ins[k]` must be valid for `n` elements of `T`; `out` may equal an input.
pub unsafe fn zip_fma<T: Copy + Send + Sync, const N: usize>(
    out: *mut T,
    ins: [*const T; N],
    n: usize,
    f: impl Fn([T; N]) -> T + Sync + Copy,
) -> bool {
    use crate::vecmath::{capability, detect, Cap};
    let wide = match capability() {
        Cap::Default => return false,
        // 512-bit registers only where the machine has them (the arithmetic is per element)
        _ => detect() == Cap::Avx512,
    };
    // In blocks: the inputs loaded into locals, the results computed, then stored. Element by
    // element, an output that *is* an input (the in-place forms: an optimizer's `addcmul_`)
    // fails the vectoriser's runtime overlap check and runs its scalar fallback, about 2.7x
    // slower; the blocked loop vectorises either way and computes each element alike.
    #[inline(always)]
    unsafe fn body<T: Copy, const N: usize>(
        o: *mut T,
        ins: [*const T; N],
        off: usize,
        len: usize,
        f: impl Fn([T; N]) -> T,
    ) {
        const BLOCK: usize = 64;
        let end = off + len;
        let mut i = off;
        while i + BLOCK <= end {
            let block: [[T; BLOCK]; N] =
                std::array::from_fn(|k| std::array::from_fn(|j| *ins[k].add(i + j)));
            let r: [T; BLOCK] = std::array::from_fn(|j| f(std::array::from_fn(|k| block[k][j])));
            std::ptr::copy_nonoverlapping(r.as_ptr(), o.add(i), BLOCK);
            i += BLOCK;
        }
        for i in i..end {
            *o.add(i) = f(std::array::from_fn(|k| *ins[k].add(i)));
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<T: Copy, const N: usize>(
        o: *mut T,
        ins: [*const T; N],
        off: usize,
        len: usize,
        f: impl Fn([T; N]) -> T,
    ) {
        body(o, ins, off, len, f)
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    unsafe fn avx512<T: Copy, const N: usize>(
        o: *mut T,
        ins: [*const T; N],
        off: usize,
        len: usize,
        f: impl Fn([T; N]) -> T,
    ) {
        body(o, ins, off, len, f)
    }
    #[cfg(target_arch = "x86_64")]
    {
        let (o0, i0) = (out as usize, ins.map(|p| p as usize));
        let run = move |off: usize, len: usize| {
            let (o, ins) = (o0 as *mut T, i0.map(|p| p as *const T));
            if wide {
                avx512(o, ins, off, len, f)
            } else {
                avx2(o, ins, off, len, f)
            }
        };
        if n >= GRAIN_SIZE && crate::threads::threads() > 1 {
            let chunk = GRAIN_SIZE.max(n.div_ceil(crate::threads::threads()));
            crate::threads::parallel_for(
                n.div_ceil(chunk),
                || (),
                |_, c| run(c * chunk, chunk.min(n - c * chunk)),
            );
        } else {
            run(0, n);
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (out, ins, n, f, wide);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(sizes: &[i64], strides: &[i64]) -> Vec<isize> {
        let plan = Plan::<1>::new(sizes, [strides], [1]).unwrap();
        let mut seen = vec![];
        unsafe {
            plan.run(
                [std::ptr::null_mut::<u8>().wrapping_add(1000)],
                |p, s, n| {
                    for i in 0..n as isize {
                        seen.push(p[0] as isize - 1000 + i * s[0]);
                    }
                },
            )
        };
        seen
    }

    #[test]
    fn coalesces_contiguous_dims() {
        let plan = Plan::<2>::new(&[2, 3, 4], [&[12, 4, 1], &[12, 4, 1]], [4, 4]).unwrap();
        assert_eq!(plan.ndim, 1);
        assert_eq!(plan.sizes[0], 24);
        assert_eq!(visit(&[2, 3, 4], &[12, 4, 1]), (0..24).collect::<Vec<_>>());
    }

    #[test]
    fn walks_transposed_and_broadcast_views() {
        // A transposed 2x3 view of a contiguous 3x2 buffer is walked in memory order.
        // A transposed 2x3 view of a contiguous 3x2 buffer is walked in memory order (and
        // coalesces to one run).
        assert_eq!(visit(&[2, 3], &[1, 2]), (0..6).collect::<Vec<_>>());
        let plan = Plan::<1>::new(&[2, 3], [&[1, 2]], [1]).unwrap();
        assert_eq!(plan.ndim, 1);
        // A slice with a gap is not coalesced.
        assert_eq!(visit(&[2, 2], &[3, 1]), vec![0, 1, 3, 4]);
        let mut v = visit(&[3, 2], &[0, 1]);
        v.sort();
        assert_eq!(v, vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(visit(&[], &[]), vec![0]);
        assert_eq!(visit(&[2, 0], &[1, 1]), Vec::<isize>::new());
    }

    #[test]
    fn large_loops_split_across_threads_and_agree() {
        // 300 x 400: above GRAIN_SIZE; `b` is a transposed view, `c` a broadcast row.
        let (r, c) = (300usize, 400usize);
        let a: Vec<f32> = (0..r * c).map(|i| i as f32 * 0.5).collect();
        let bt: Vec<f32> = (0..r * c).map(|i| (i % 7) as f32).collect(); // stored [c, r]
        let row: Vec<f32> = (0..c).map(|j| j as f32).collect();
        let mut out = vec![0f32; r * c];
        let sizes = [r as i64, c as i64];
        let (cs, ts, bs) = ([c as i64, 1], [1i64, r as i64], [0i64, 1]);
        let t = |p: *const f32, st: &'static [i64]| Tensor {
            data: p as *mut u8,
            dtype: torchnative_backend::abi::TnDtype::Float32,
            sizes: Box::leak(Box::new(sizes)),
            strides: st,
        };
        let cs: &'static [i64] = Box::leak(Box::new(cs));
        let ts: &'static [i64] = Box::leak(Box::new(ts));
        let bs: &'static [i64] = Box::leak(Box::new(bs));
        unsafe {
            map3(
                &t(out.as_mut_ptr(), cs),
                &t(a.as_ptr(), cs),
                &t(bt.as_ptr(), ts),
                &t(row.as_ptr(), bs),
                |x: f32, y: f32, z: f32| x + y * z,
            )
            .unwrap();
        }
        for i in 0..r {
            for j in 0..c {
                assert_eq!(
                    out[i * c + j],
                    a[i * c + j] + bt[j * r + i] * row[j],
                    "({i}, {j})"
                );
            }
        }
        let mut o2 = vec![0u8; r * c];
        unsafe {
            fill(
                &Tensor {
                    data: o2.as_mut_ptr(),
                    dtype: torchnative_backend::abi::TnDtype::UInt8,
                    sizes: Box::leak(Box::new(sizes)),
                    strides: ts,
                },
                7u8,
            )
            .unwrap()
        };
        assert!(o2.iter().all(|&v| v == 7));
    }
}

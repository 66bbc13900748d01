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
    /// `sizes`), `itemsizes[k]` its element size. Operand 0 decides the memory order.
    pub fn new(sizes: &[i64], strides: [&[i64]; N], itemsizes: [usize; N]) -> KResult<Plan<N>> {
        let nd = sizes.len();
        if nd > MAX_DIMS {
            return Err(runtime(format!("tensors with more than {MAX_DIMS} dims are not supported")));
        }
        for s in &strides {
            if s.len() != nd {
                return Err(runtime("strided plan: operand rank differs from the iteration shape"));
            }
        }
        let mut plan = Plan { ndim: 0, sizes: [0; MAX_DIMS], strides: [[0; N]; MAX_DIMS], empty: false };
        if sizes.iter().any(|&s| s == 0) {
            plan.empty = true;
            return Ok(plan);
        }
        // Dims of size > 1, in their original (outer → inner) order.
        let mut dims = [0usize; MAX_DIMS];
        let mut n = 0;
        for (d, &s) in sizes.iter().enumerate() {
            if s != 1 {
                dims[n] = d;
                n += 1;
            }
        }
        // Stable insertion sort: larger strides outer, comparing operand 0 first, then the others,
        // so a permuted output is written in memory order.
        let key = |d: usize, k: usize| strides[k][d].unsigned_abs();
        for i in 1..n {
            let mut j = i;
            while j > 0 {
                let (a, b) = (dims[j - 1], dims[j]);
                let mut swap = false;
                for k in 0..N {
                    let (ka, kb) = (key(a, k), key(b, k));
                    if ka != kb {
                        swap = ka < kb;
                        break;
                    }
                }
                if !swap {
                    break;
                }
                dims.swap(j - 1, j);
                j -= 1;
            }
        }
        // Coalesce: merge an outer dim into the running inner dim when every operand's outer
        // stride equals inner stride × inner size.
        let mut m = 0usize;
        for &d in &dims[..n] {
            let size = sizes[d] as usize;
            let st: [isize; N] = std::array::from_fn(|k| strides[k][d] as isize * itemsizes[k] as isize);
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

    /// Calls `inner(ptrs, inner_strides, n)` once per innermost run of `n` elements.
    ///
    /// # Safety
    /// `ptrs` must point at element 0 of views that match the plan.
    #[inline]
    pub unsafe fn run(&self, ptrs: [*mut u8; N], mut inner: impl FnMut([*mut u8; N], [isize; N], usize)) {
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
                for k in 0..N {
                    p[k] = p[k].offset(self.strides[d][k]);
                }
                if idx[d] < self.sizes[d] {
                    break;
                }
                for k in 0..N {
                    p[k] = p[k].offset(-(self.strides[d][k] * self.sizes[d] as isize));
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

/// `out[i] = f(a[i])` over strided views (`A`, `O` their element types).
///
/// # Safety
/// The element types must match the views' dtypes.
pub unsafe fn map1<A: Copy, O: Copy>(out: &Tensor, a: &Tensor, f: impl Fn(A) -> O) -> KResult {
    check_same_shape("map1", out, &[a])?;
    let plan = Plan::<2>::new(out.sizes, [out.strides, a.strides], [out.itemsize(), a.itemsize()])?;
    let (so, sa) = (std::mem::size_of::<O>() as isize, std::mem::size_of::<A>() as isize);
    plan.run([out.data, a.data], |p, s, n| {
        if s == [so, sa] {
            let o = std::slice::from_raw_parts_mut(p[0] as *mut O, n);
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            for (o, &a) in o.iter_mut().zip(a) {
                *o = f(a);
            }
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
pub unsafe fn map2<A: Copy, B: Copy, O: Copy>(out: &Tensor, a: &Tensor, b: &Tensor, f: impl Fn(A, B) -> O) -> KResult {
    check_same_shape("map2", out, &[a, b])?;
    let plan = Plan::<3>::new(out.sizes, [out.strides, a.strides, b.strides], [out.itemsize(), a.itemsize(), b.itemsize()])?;
    let (so, sa, sb) = (std::mem::size_of::<O>() as isize, std::mem::size_of::<A>() as isize, std::mem::size_of::<B>() as isize);
    plan.run([out.data, a.data, b.data], |p, s, n| {
        if s == [so, sa, sb] {
            let o = std::slice::from_raw_parts_mut(p[0] as *mut O, n);
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            let b = std::slice::from_raw_parts(p[2] as *const B, n);
            for ((o, &a), &b) in o.iter_mut().zip(a).zip(b) {
                *o = f(a, b);
            }
        } else if s == [so, sa, 0] {
            // A scalar (broadcast) right operand: `x + 1`.
            let o = std::slice::from_raw_parts_mut(p[0] as *mut O, n);
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            let b = (p[2] as *const B).read();
            for (o, &a) in o.iter_mut().zip(a) {
                *o = f(a, b);
            }
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
    f: impl Fn(A, B, C) -> O,
) -> KResult {
    check_same_shape("map3", out, &[a, b, c])?;
    let plan = Plan::<4>::new(
        out.sizes,
        [out.strides, a.strides, b.strides, c.strides],
        [out.itemsize(), a.itemsize(), b.itemsize(), c.itemsize()],
    )?;
    plan.run([out.data, a.data, b.data, c.data], |p, s, n| {
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
pub unsafe fn fill<O: Copy>(out: &Tensor, v: O) -> KResult {
    let plan = Plan::<1>::new(out.sizes, [out.strides], [out.itemsize()])?;
    let so = std::mem::size_of::<O>() as isize;
    plan.run([out.data], |p, s, n| {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(sizes: &[i64], strides: &[i64]) -> Vec<isize> {
        let plan = Plan::<1>::new(sizes, [strides], [1]).unwrap();
        let mut seen = vec![];
        unsafe {
            plan.run([std::ptr::null_mut::<u8>().wrapping_add(1000)], |p, s, n| {
                for i in 0..n as isize {
                    seen.push(p[0] as isize - 1000 + i * s[0]);
                }
            })
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
}

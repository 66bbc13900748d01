//! `scatter_reduce.two`: values of `src` reduced into the positions of `self` that `index`
//! chooses along `dim` (sum, prod, mean, amax, amin; with or without `self`'s own values), the
//! index's elements taken in order as upstream's CPU loop takes them. `scatter(reduce=...)` and
//! `index_reduce` reach it through the core.
//!
//! Floating values combine in their own type in upstream's order (`out = self`, the reached
//! positions reset to the reduction's identity unless `include_self`, then each `src` value in
//! the index's row-major order, so per position in order along `dim`; a mean divides by a
//! count kept in the same type), which gives upstream's bits; integers and bools accumulate in
//! i64 with wrapping, as upstream's integer arithmetic wraps, and a mean floor-divides the sum
//! by the count both wrapped to the type (upstream's `div_(count, "floor")`). NaN wins
//! amax/amin.

use torchnative_backend::abi::TnDtype;

use crate::dtype::{Elem, FloatElem, Real};
use crate::kernel::{Call, KResult, Tensor};
use crate::{bail, dispatch_all, dispatch_float, kernels};

kernels! {
    k_scatter_reduce = "aten::scatter_reduce.two" => |c| scatter_reduce(c);
}

#[derive(Clone, Copy, PartialEq)]
enum Reduce {
    Sum,
    Prod,
    Mean,
    Max,
    Min,
}

/// Calls `f(multi-index, offsets)` for every position of `sizes` in row-major order, `offsets`
/// the element offsets of that position in each of the `K` stride lists (kept incrementally).
fn walk_n<const K: usize>(
    sizes: &[usize],
    strides: [&[isize]; K],
    mut f: impl FnMut(&[usize], [isize; K]) -> KResult,
) -> KResult {
    let nd = sizes.len();
    if sizes.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0usize; nd];
    let mut off = [0isize; K];
    loop {
        f(&idx, off)?;
        let mut d = nd;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            for k in 0..K {
                off[k] += strides[k][d];
            }
            if idx[d] < sizes[d] {
                break;
            }
            for k in 0..K {
                off[k] -= strides[k][d] * sizes[d] as isize;
            }
            idx[d] = 0;
        }
    }
}

fn sizes_strides(t: &Tensor) -> (Vec<usize>, Vec<isize>) {
    (
        (0..t.ndim()).map(|d| t.size(d)).collect(),
        (0..t.ndim()).map(|d| t.stride(d)).collect(),
    )
}

/// The floating kernel into a contiguous `out`, as upstream's cpu_scatter_gather_base_kernel
/// runs it: `out = self`; unless `include_self`, a position's first contribution replaces it
/// (upstream fills the reached positions with the identity first: the same value); every later
/// one combines in the index's row-major order, in `T::Acc` (float16/bfloat16 accumulate in
/// float32 and are rounded once at the end, as upstream's are); a mean divides by a count kept
/// in the same type; positions never reached keep `self`.
unsafe fn scatter_reduce_float<T: FloatElem>(
    a: &Tensor,
    index: &Tensor,
    src: &Tensor,
    out: &Tensor,
    dim: usize,
    reduce: Reduce,
    include_self: bool,
) -> KResult {
    let (sizes, a_str) = sizes_strides(a);
    let row_major = row_major(&sizes);
    let n_out = out.numel();
    let mut acc: Vec<T::Acc> = vec![T::from_f64(0.0).to_acc(); n_out];
    walk_n(&sizes, [&a_str, &row_major], |_, [ao, p]| {
        acc[p as usize] = a.read::<T>(ao).to_acc();
        Ok(())
    })?;
    let (zero, one) = (T::from_f64(0.0).to_acc(), T::from_f64(1.0).to_acc());
    let mut count: Vec<T::Acc> = if reduce == Reduce::Mean {
        vec![if include_self { one } else { zero }; n_out]
    } else {
        Vec::new()
    };
    let mut reached = vec![false; if include_self { 0 } else { n_out }];
    let pass = IndexPass {
        index,
        src,
        dim,
        row_major: &row_major,
        size_d: a.size(dim) as i64,
    };
    let (acc, count, reached) = (&mut acc[..], &mut count[..], &mut reached[..]);
    match reduce {
        Reduce::Sum | Reduce::Mean => pass.run::<T>(acc, count, reached, one, |c, x| c + x),
        Reduce::Prod => pass.run::<T>(acc, count, reached, one, |c, x| c * x),
        // upstream: a NaN source wins, else std::max/min (a NaN already there stays)
        Reduce::Max => pass.run::<T>(acc, count, reached, one, |c, x| {
            if x.is_nan() || c < x {
                x
            } else {
                c
            }
        }),
        Reduce::Min => pass.run::<T>(acc, count, reached, one, |c, x| {
            if x.is_nan() || x < c {
                x
            } else {
                c
            }
        }),
    }?;
    // a mean is upstream's `out.div_(count)` after the scatter: both already rounded to T
    let round = |v: T::Acc| T::from_acc(v).to_acc();
    let o = out.data as *mut T;
    for (p, &v) in acc.iter().enumerate() {
        let v = match count.get(p) {
            Some(&n) if n == zero => v,
            Some(&n) => round(v) / round(n),
            None => v,
        };
        *o.add(p) = T::from_acc(v);
    }
    Ok(())
}

/// The index pass of the floating kernel: every index element in row-major order, a row (the
/// last dimension) at a time in a loop of its own, `combine` folded into the accumulator of the
/// position it chooses. Each position is reached only from its own line along `dim`, in order,
/// so the order per position is upstream's.
struct IndexPass<'a, 't> {
    index: &'a Tensor<'t>,
    src: &'a Tensor<'t>,
    dim: usize,
    row_major: &'a [isize],
    size_d: i64,
}

impl IndexPass<'_, '_> {
    #[inline(always)]
    unsafe fn run<T: FloatElem>(
        &self,
        acc: &mut [T::Acc],
        count: &mut [T::Acc],
        reached: &mut [bool],
        one: T::Acc,
        combine: impl Fn(T::Acc, T::Acc) -> T::Acc,
    ) -> KResult {
        let (isizes, i_str) = sizes_strides(self.index);
        let s_str: Vec<isize> = (0..self.src.ndim()).map(|d| self.src.stride(d)).collect();
        // the loop runs along the last dim whose size is not 1 (or `dim`): trailing dims of size
        // 1 add nothing to any offset
        let last = (0..isizes.len())
            .rev()
            .find(|&d| isizes[d] != 1 || d == self.dim)
            .unwrap_or(0);
        let (n, di, ds, dp) = (isizes[last], i_str[last], s_str[last], self.row_major[last]);
        let (dim, rm_dim, size_d) = (self.dim, self.row_major[self.dim], self.size_d);
        let (mean, first_replaces) = (!count.is_empty(), !reached.is_empty());
        let acc = acc.as_mut_ptr();
        let (count, reached) = (count.as_mut_ptr(), reached.as_mut_ptr());
        walk_n(
            &isizes[..last],
            [&i_str[..last], &s_str[..last], &self.row_major[..last]],
            |ix, [io, so, base]| {
                // the result's offset of row position j with target t: at + j * jd + t * rm_dim
                let (at, jd) = if dim == last {
                    (base, dp - rm_dim)
                } else {
                    (base - ix[dim] as isize * rm_dim, dp)
                };
                for j in 0..n as isize {
                    let target = self.index.read::<i64>(io + j * di);
                    if target as u64 >= size_d as u64 {
                        return Err(out_of_bounds(target, dim, size_d));
                    }
                    // SAFETY: 0 <= target < size_d, so p is a position of the result (acc's
                    // length); count and reached are empty unless mean / !include_self
                    let p = (at + j * jd + target as isize * rm_dim) as usize;
                    let x = self.src.read::<T>(so + j * ds).to_acc();
                    let a = acc.add(p);
                    *a = if first_replaces && !*reached.add(p) {
                        *reached.add(p) = true;
                        x
                    } else {
                        combine(*a, x)
                    };
                    if mean {
                        *count.add(p) = *count.add(p) + one;
                    }
                }
                Ok(())
            },
        )
    }
}

#[cold]
fn out_of_bounds(target: i64, dim: usize, size_d: i64) -> crate::kernel::KernelError {
    crate::kernel::runtime(format!(
        "index {target} is out of bounds for dimension {dim} with size {size_d}"
    ))
}

/// Calls `f(multi-index, element offset)` for every element of `t`, in row-major order.
fn walk(t: &Tensor, mut f: impl FnMut(&[usize], isize) -> KResult) -> KResult {
    let (sizes, strides) = sizes_strides(t);
    walk_n(&sizes, [&strides], |ix, [off]| f(ix, off))
}

/// Row-major (contiguous) element strides of `sizes`.
fn row_major(sizes: &[usize]) -> Vec<isize> {
    let mut st = vec![1isize; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * sizes[d + 1] as isize;
    }
    st
}

/// `scatter_reduce.two(self, dim, index, src, reduce, include_self)`; the core has checked the
/// dtypes and ranks, made `index` int64 and allocated `out` with `self`'s shape.
fn scatter_reduce(c: &mut Call) -> KResult {
    let (a, index, src) = (c.tensor(0)?, c.tensor(2)?, c.tensor(3)?);
    let dim = c.int(1)? as usize;
    let include_self = c.bool(5)?;
    let reduce = match c.str(4)? {
        "sum" => Reduce::Sum,
        "prod" => Reduce::Prod,
        "mean" => Reduce::Mean,
        "amax" => Reduce::Max,
        "amin" => Reduce::Min,
        r => bail!(
            runtime,
            "reduce argument must be either sum, prod, mean, amax or amin, got {r}"
        ),
    };
    let out = c.out(0)?;
    if index.dtype != TnDtype::Int64 || index.ndim() != a.ndim() || dim >= a.ndim().max(1) {
        bail!(
            runtime,
            "scatter_reduce: the core passes an int64 index of self's rank"
        );
    }
    let is_float = matches!(
        a.dtype,
        TnDtype::Float16 | TnDtype::BFloat16 | TnDtype::Float32 | TnDtype::Float64
    );
    if is_float && out.is_contiguous() && a.dtype == out.dtype && src.dtype == a.dtype {
        // SAFETY: offsets come from each view's sizes and strides; `out` is contiguous
        return unsafe {
            dispatch_float!(a.dtype, "scatter_reduce", T, A => {
                scatter_reduce_float::<T>(&a, &index, &src, &out, dim, reduce, include_self)
            })
        };
    }
    // the accumulators, in out's row-major order; whether each position was reached, how often
    let numel = a.numel();
    let mut acc_f = vec![0f64; if is_float { numel } else { 0 }];
    let mut acc_i = vec![0i64; if is_float { 0 } else { numel }];
    let mut count = vec![0u32; numel];
    let row_major: Vec<usize> = row_major(&sizes_strides(&a).0)
        .into_iter()
        .map(|s| s as usize)
        .collect();
    // SAFETY (every read below): offsets come from each view's sizes and strides.
    unsafe {
        dispatch_all!(a.dtype, "scatter_reduce", T => {
            walk(&a, |ix, off| {
                let p: usize = ix.iter().zip(&row_major).map(|(i, s)| i * s).sum();
                let v = a.read::<T>(off);
                if is_float { acc_f[p] = v.to_f64() } else { acc_i[p] = v.cast::<i64>() }
                Ok(())
            })?;
            let size_d = a.size(dim) as i64;
            walk(&index, |ix, ioff| {
                let target = index.read::<i64>(ioff);
                // no negative indices here, as upstream's scatter_gather_dtype/bounds check
                if target < 0 || target >= size_d {
                    bail!(runtime, "index {target} is out of bounds for dimension {dim} with size {size_d}");
                }
                let mut p = 0usize;
                let mut soff = 0isize;
                for (d, &i) in ix.iter().enumerate() {
                    p += if d == dim { target as usize } else { i } * row_major[d];
                    soff += i as isize * src.stride(d);
                }
                let v = src.read::<T>(soff);
                let first = count[p] == 0;
                count[p] += 1;
                if is_float {
                    let (x, cur) = (v.to_f64(), acc_f[p]);
                    acc_f[p] = if first && !include_self { x } else { combine_f(reduce, cur, x) };
                } else {
                    let (x, cur) = (v.cast::<i64>(), acc_i[p]);
                    acc_i[p] = if first && !include_self { x } else { combine_i(reduce, cur, x) };
                }
                Ok(())
            })?;
            walk(&out, |ix, ooff| {
                let p: usize = ix.iter().zip(&row_major).map(|(i, s)| i * s).sum();
                let n = count[p] as i64 + i64::from(include_self);
                let v = if is_float {
                    let x = if reduce == Reduce::Mean && count[p] > 0 { acc_f[p] / n as f64 } else { acc_f[p] };
                    T::from_f64(x)
                } else {
                    if reduce == Reduce::Mean && count[p] > 0 {
                        // upstream's `out.div_(count, "floor")`: the sum and the count are both
                        // tensors of T, so both wrap in T first (int8: 305 -> 49)
                        let wrap = |v: i64| T::from_i64(v).cast::<i64>();
                        let (s, c) = (wrap(acc_i[p]), wrap(n));
                        T::from_i64(floor_div(s, if c == 0 { 1 } else { c }))
                    } else {
                        T::from_i64(acc_i[p])
                    }
                };
                out.write::<T>(ooff, v);
                Ok(())
            })?;
        });
    }
    Ok(())
}

/// Integer division rounding toward negative infinity (torch's `div(rounding_mode="floor")`),
/// wrapping as upstream's i64 kernel does for `i64::MIN / -1`.
fn floor_div(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn combine_f(r: Reduce, a: f64, b: f64) -> f64 {
    match r {
        Reduce::Sum | Reduce::Mean => a + b,
        Reduce::Prod => a * b,
        Reduce::Max | Reduce::Min if a.is_nan() || b.is_nan() => f64::NAN,
        Reduce::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
        Reduce::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
    }
}

fn combine_i(r: Reduce, a: i64, b: i64) -> i64 {
    match r {
        Reduce::Sum | Reduce::Mean => a.wrapping_add(b),
        Reduce::Prod => a.wrapping_mul(b),
        Reduce::Max => a.max(b),
        Reduce::Min => a.min(b),
    }
}

//! Running scans along one dimension: `cummax`, `cummin` (values and the index of the running
//! extreme) and `logcumsumexp`, as upstream's cpu_cum_base_kernel runs them: one sequential pass
//! per line along `dim`, lines in parallel.
//!
//! `cummax`/`cummin` take the later index on ties (`>=`, `<=`) and let NaN win and stay (every
//! NaN moves the index to itself), as upstream's `cummax_cummin_helper`. `logcumsumexp`
//! accumulates in the accumulate type (double for float32) with upstream's `_log_add_exp_helper`:
//! `log1p(exp(min - max)) + max`, the running value when both are the same infinity.

use rayon::prelude::*;

use torchnative_backend::abi::TnDtype;

use crate::dtype::{Elem, FloatElem, Real};
use crate::kernel::{Call, KResult, Tensor};
use crate::{dispatch_all, dispatch_float, kernels};

kernels! {
    k_cummax = "aten::cummax" => |c| extreme::<true>(c);
    k_cummin = "aten::cummin" => |c| extreme::<false>(c);
    k_logcumsumexp = "aten::logcumsumexp" => |c| logcumsumexp(c);
}

/// Element offsets of the start of every line along `dim` (the other dimensions row-major).
fn line_starts(t: &Tensor, dim: usize) -> Vec<isize> {
    let mut starts = vec![0isize];
    for d in 0..t.ndim() {
        if d == dim {
            continue;
        }
        let (n, s) = (t.size(d), t.stride(d));
        starts = starts
            .iter()
            .flat_map(|&o| (0..n).map(move |i| o + i as isize * s))
            .collect();
    }
    starts
}

/// `dim` (argument `i`) wrapped by the reductions' one rule (nd >= 1 here).
fn wrap_dim(c: &Call, i: usize, nd: usize) -> KResult<usize> {
    Ok(crate::reduce::normalize_dims(&[c.int(i)?], nd)?[0])
}

/// A raw pointer that may cross into rayon's workers: each line writes its own elements.
#[derive(Clone, Copy)]
struct Shared(*mut u8);
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// `cummax(self, dim)` / `cummin(self, dim)` -> (values, indices int64).
fn extreme<const MAX: bool>(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let (vals, idxs) = (c.out(0)?, c.out(1)?);
    if a.ndim() == 0 {
        // SAFETY: one element each.
        unsafe {
            dispatch_all!(a.dtype, "cummax_cummin", T => vals.write::<T>(0, a.read::<T>(0)));
            idxs.write::<i64>(0, 0);
        }
        return Ok(());
    }
    let dim = wrap_dim(c, 1, a.ndim())?;
    let n = a.size(dim);
    let (sa, sv, si) = (a.stride(dim), vals.stride(dim), idxs.stride(dim));
    let starts: Vec<(isize, isize, isize)> = line_starts(&a, dim)
        .into_iter()
        .zip(line_starts(&vals, dim))
        .zip(line_starts(&idxs, dim))
        .map(|((x, y), z)| (x, y, z))
        .collect();
    let (pa, pv, pi) = (Shared(a.data), Shared(vals.data), Shared(idxs.data));
    dispatch_all!(a.dtype, "cummax_cummin", T => {
        starts.par_iter().for_each(|&(oa, ov, oi)| {
            let (pa, pv, pi) = (pa, pv, pi);
            let (a, v, ix) = (pa.0 as *const T, pv.0 as *mut T, pi.0 as *mut i64);
            // SAFETY: offsets come from each view's sizes and strides; lines are disjoint.
            unsafe {
                if sa == 1 && sv == 1 && si == 1 {
                    // contiguous lines as slices: bounds known, no stride arithmetic
                    let xs = std::slice::from_raw_parts(a.offset(oa), n);
                    let vs = std::slice::from_raw_parts_mut(v.offset(ov), n);
                    let is = std::slice::from_raw_parts_mut(ix.offset(oi), n);
                    scan_line::<T, MAX>(xs, vs, is);
                    return;
                }
                let (mut pa, mut pv, mut pi) = (a.offset(oa), v.offset(ov), ix.offset(oi));
                let mut out = *pa;
                #[allow(clippy::eq_op)]
                let mut out_nan = out != out;
                let mut idx = 0i64;
                for i in 0..n as i64 {
                    let x = *pa;
                    #[allow(clippy::eq_op)]
                    let x_nan = x != x; // always false for integers: compiled away
                    let better = if MAX { x >= out } else { x <= out };
                    if x_nan || (!out_nan && better) {
                        out = x;
                        out_nan = x_nan;
                        idx = i;
                    }
                    *pv = out;
                    *pi = idx;
                    pa = pa.offset(sa);
                    pv = pv.offset(sv);
                    pi = pi.offset(si);
                }
            }
        })
    });
    Ok(())
}

/// One contiguous line of cummax (`MAX`) or cummin.
#[inline(always)]
fn scan_line<T: PartialOrd + Copy, const MAX: bool>(xs: &[T], vs: &mut [T], is: &mut [i64]) {
    let Some(&first) = xs.first() else { return };
    let mut out = first;
    #[allow(clippy::eq_op)]
    let mut out_nan = out != out;
    let mut idx = 0i64;
    for (i, ((&x, v), ix)) in xs.iter().zip(vs.iter_mut()).zip(is.iter_mut()).enumerate() {
        #[allow(clippy::eq_op)]
        let x_nan = x != x;
        let better = if MAX { x >= out } else { x <= out };
        if x_nan || (!out_nan && better) {
            out = x;
            out_nan = x_nan;
            idx = i as i64;
        }
        *v = out;
        *ix = idx;
    }
}

#[inline(always)]
fn log_add_exp<A: Real>(x: A, y: A) -> A {
    // std::min/std::max return their first argument when the comparison fails (a NaN)
    let (min, max) = if y.is_nan() {
        (y, y)
    } else {
        (if y < x { y } else { x }, if x < y { y } else { x })
    };
    if min != max || min.is_finite() {
        (min - max).exp().ln1p() + max
    } else {
        x
    }
}

/// `logcumsumexp(self, dim)` for floating dtypes (the core rejects the others).
fn logcumsumexp(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let out = c.out(0)?;
    if a.ndim() == 0 {
        // SAFETY: one element each.
        unsafe {
            dispatch_float!(a.dtype, "logcumsumexp", T, A => out.write::<T>(0, a.read::<T>(0)));
        }
        return Ok(());
    }
    let dim = wrap_dim(c, 1, a.ndim())?;
    let n = a.size(dim);
    let (sa, so) = (a.stride(dim), out.stride(dim));
    let starts: Vec<(isize, isize)> = line_starts(&a, dim)
        .into_iter()
        .zip(line_starts(&out, dim))
        .collect();
    let (pa, po) = (Shared(a.data), Shared(out.data));
    // the accumulate type: double for float32 and float64, float for the reduced types
    let in_double = matches!(a.dtype, TnDtype::Float32 | TnDtype::Float64);
    dispatch_float!(a.dtype, "logcumsumexp", T, A => {
        starts.par_iter().for_each(|&(oa, oo)| {
            let (pa, po) = (pa, po);
            let (a, o) = (pa.0 as *const T, po.0 as *mut T);
            // SAFETY: as in `extreme`.
            unsafe {
                let (mut acc64, mut acc) = (f64::NEG_INFINITY, A::c(f64::NEG_INFINITY));
                for i in 0..n {
                    let x: A = (*a.offset(oa + i as isize * sa)).to_acc();
                    let y = if in_double {
                        acc64 = log_add_exp(x.to_f64(), acc64);
                        T::from_f64(acc64)
                    } else {
                        acc = log_add_exp(x, acc);
                        T::from_acc(acc)
                    };
                    *o.offset(oo + i as isize * so) = y;
                }
            }
        })
    });
    Ok(())
}

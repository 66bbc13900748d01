//! `sort`, `sort.stable`, `topk`. NaN sorts above +inf (last ascending, first descending), as
//! upstream. Equal values come out in upstream's order: its CPU `sort_kernel`
//! (aten/src/ATen/native/cpu/SortingKernel.cpp) runs, per line, `std::stable_sort` when
//! `stable=True` and libstdc++'s introsort `std::sort` otherwise, on `(value, index)` pairs with
//! the comparators `KeyValueCompAsc`/`KeyValueCompDesc` (ported in `stdsort.rs`); two cases give
//! the stable order even when unstable: an input with stride 0 along `dim` (only its indices are
//! filled) and fbgemm's radix sort (1-D, ascending, integer non-bool, at least 32768 elements).
//! The reference wheel has no x86-simd-sort path: its AVX512, AVX2 and default kernels order ties
//! alike (probed). `topk` selects as upstream's `topk_impl_loop` does, with the same algorithms.
//! `kthvalue` is upstream's `quick_select_template` (SortingUtils.h) per line, so which of equal
//! values' indices it returns is upstream's.
//! `median.dim` and `nanmedian.dim` are upstream's `median_with_indices_impl` (Sorting.cpp):
//! libstdc++'s `nth_element` over the line's indices.
//! `mode` is upstream's `mode_kernel_impl` (TensorCompareKernel.cpp): `std::sort` of the
//! `(value, index)` pairs by value alone, then the last pair of the first longest run, so its
//! index among equal values is the one libstdc++'s introsort leaves there.

use std::cmp::Ordering;

use torchnative_backend::abi::TnDtype;

use crate::dtype::Elem;
use crate::kernel::{Call, KResult, OwnedView};
use crate::reduce::normalize_dims;
use crate::stdsort;
use crate::strided::for_each_line;
use crate::{bail, dispatch_all, kernels};

kernels! {
    k_sort = "aten::sort" => |c| { let (d, desc) = (c.int(1)?, c.bool(2)?); sort(c, d, desc, false) };
    k_sort_stable = "aten::sort.stable" => |c| {
        let (st, d, desc) = (c.opt_bool(1)?.unwrap_or(false), c.int(2)?, c.bool(3)?);
        sort(c, d, desc, st)
    };
    k_topk = "aten::topk" => |c| topk(c);
    k_mode = "aten::mode" => |c| mode(c);
    k_kthvalue = "aten::kthvalue" => |c| kthvalue(c);
    k_median_dim = "aten::median.dim" => |c| median_dim(c, false);
    k_nanmedian_dim = "aten::nanmedian.dim" => |c| median_dim(c, true);
}

/// The `(value, index)` pairs of one line of `n` elements (byte stride `stride`), as upstream's
/// sorting kernels build them.
///
/// # Safety
/// `p` must point at `n` readable elements of type `T`, `stride` bytes apart.
unsafe fn pairs_of<T: Copy>(buf: &mut Vec<(T, i64)>, p: *mut u8, stride: isize, n: usize) {
    buf.clear();
    for i in 0..n {
        buf.push((
            (p.wrapping_offset(i as isize * stride) as *const T).read(),
            i as i64,
        ));
    }
}

/// Total order with NaN above everything (ints and bool compare natively).
#[inline]
fn key_cmp<T: Elem + PartialOrd>(a: T, b: T) -> Ordering {
    match a.partial_cmp(&b) {
        Some(o) => o,
        None => {
            let (an, bn) = (a.to_f64().is_nan(), b.to_f64().is_nan());
            match (an, bn) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => Ordering::Equal,
            }
        }
    }
}

/// fbgemm's `radix_sort_parallel`, which upstream's `sort_kernel` prefers (`can_use_radix_sort`):
/// 1-D, ascending, an integer dtype (not bool), at least `GRAIN_SIZE` (32768) elements. It is stable.
fn radix_sorts(a: &crate::kernel::Tensor, descending: bool) -> bool {
    use TnDtype::*;
    a.ndim() == 1
        && !descending
        && matches!(a.dtype, UInt8 | Int8 | Int16 | Int32 | Int64)
        && a.numel() >= 32768
}

fn sort(c: &mut Call, dim: i64, descending: bool, stable: bool) -> KResult {
    let (vals, idxs) = (c.out(0)?, c.out(1)?);
    let a = c.tensor(0)?;
    let d = if a.ndim() == 0 {
        None
    } else {
        Some(normalize_dims(&[dim], a.ndim())?[0])
    };
    idxs.check_dtype(TnDtype::Int64, "sort indices")?;
    // upstream returns the filled indices for an input of stride 0 along dim (all values equal)
    let stable = stable || d.is_some_and(|d| a.stride(d) == 0) || radix_sorts(&a, descending);
    unsafe {
        dispatch_all!(a.dtype, "sort", T => {
            let mut buf: Vec<(T, i64)> = vec![];
            for_each_line([&vals, &idxs, &a], d, |p, s, l| {
                let n = l[2];
                pairs_of(&mut buf, p[2], s[2], n);
                // std::stable_sort keeps equal values in input order, as Rust's stable sort does
                let want = if descending { Ordering::Greater } else { Ordering::Less };
                if stable {
                    buf.sort_by(|x, y| if descending { key_cmp(y.0, x.0) } else { key_cmp(x.0, y.0) });
                } else {
                    stdsort::sort(&mut buf, &|x: &(T, i64), y: &(T, i64)| key_cmp(x.0, y.0) == want);
                }
                for (i, &(v, j)) in buf.iter().enumerate() {
                    (p[0].wrapping_offset(i as isize * s[0]) as *mut T).write(v);
                    (p[1].wrapping_offset(i as isize * s[1]) as *mut i64).write(j);
                }
            })
        })
    }
}

/// `topk(self, k, dim=-1, largest=True, sorted=True) -> (values, indices)`.
fn topk(c: &mut Call) -> KResult {
    let (vals, idxs) = (c.out(0)?, c.out(1)?);
    let a = c.tensor(0)?;
    let k = c.int(1)?;
    let largest = c.bool(3)?;
    let sorted = c.bool(4)?;
    let d = line_dim(c, &a, 2)?;
    let n = d.map(|d| a.size(d)).unwrap_or(1);
    if k < 0 || k as usize > n {
        bail!(runtime, "selected index k out of range");
    }
    let k = k as usize;
    unsafe {
        dispatch_all!(a.dtype, "topk", T => {
            let mut buf: Vec<(T, i64)> = vec![];
            for_each_line([&vals, &idxs, &a], d, |p, s, l| {
                let n = l[2];
                pairs_of(&mut buf, p[2], s[2], n);
                if k > 0 {
                    // upstream's comparators: NaN counts as the largest value (key_cmp's order)
                    let want = if largest { Ordering::Greater } else { Ordering::Less };
                    select_top(&mut buf, k, sorted, &|x: &(T, i64), y: &(T, i64)| key_cmp(x.0, y.0) == want);
                }
                for (i, &(v, j)) in buf.iter().take(k).enumerate() {
                    (p[0].wrapping_offset(i as isize * s[0]) as *mut T).write(v);
                    (p[1].wrapping_offset(i as isize * s[1]) as *mut i64).write(j);
                }
            })
        })
    }
}

/// upstream's TopKImpl.h: `partial_sort` when k * 64 <= n, else `nth_element` at k - 1 and, when
/// sorted, `sort` of the first k - 1.
fn select_top<E: Copy>(buf: &mut [E], k: usize, sorted: bool, cmp: &impl Fn(&E, &E) -> bool) {
    if k * 64 <= buf.len() {
        stdsort::partial_sort(buf, k, cmp);
    } else {
        stdsort::nth_element(buf, k - 1, cmp);
        if sorted {
            stdsort::sort(&mut buf[..k - 1], cmp);
        }
    }
}

/// The dim (argument `at`) a line-wise kernel walks, normalised; None for a 0-dim input.
fn line_dim(c: &Call, a: &crate::kernel::Tensor, at: usize) -> KResult<Option<usize>> {
    Ok(if a.ndim() == 0 {
        None
    } else {
        Some(normalize_dims(&[c.int(at)?], a.ndim())?[0])
    })
}

/// The (values, indices) outputs of a reduction over `d`, walked as if the reduced dim were
/// there with size 1 when `keepdim` dropped it.
fn line_outputs(c: &Call, d: Option<usize>, keepdim: bool) -> KResult<(OwnedView, OwnedView)> {
    let (v, i) = (OwnedView::of(&c.out(0)?), OwnedView::of(&c.out(1)?));
    Ok(match d {
        Some(d) if !keepdim => (v.unsqueeze(d), i.unsqueeze(d)),
        _ => (v, i),
    })
}

/// `mode(self, dim=-1, keepdim=False) -> (values, indices)`; the core has refused an empty dim.
#[allow(clippy::bool_comparison)] // `<` on the generic value type, bool included
fn mode(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let keepdim = c.bool(2)?;
    let d = line_dim(c, &a, 1)?;
    let (v, i) = line_outputs(c, d, keepdim)?;
    let (vals, idxs) = (v.view(), i.view());
    idxs.check_dtype(TnDtype::Int64, "mode indices")?;
    unsafe {
        dispatch_all!(a.dtype, "mode", T => {
            let mut buf: Vec<(T, i64)> = vec![];
            for_each_line([&vals, &idxs, &a], d, |p, s, l| {
                let n = l[2];
                pairs_of(&mut buf, p[2], s[2], n);
                // upstream's comparator is `<` on the values (NaNs are unordered, each its own run)
                stdsort::sort(&mut buf, &|x: &(T, i64), y: &(T, i64)| x.0 < y.0);
                let (mut best, mut run, mut longest) = (0usize, 0usize, 0usize);
                for k in 0..n {
                    run += 1;
                    #[allow(clippy::float_cmp)]
                    let ends = k == n - 1 || buf[k].0 != buf[k + 1].0;
                    if ends {
                        if run > longest {
                            best = k;
                            longest = run;
                        }
                        run = 0;
                    }
                }
                if n > 0 {
                    (p[0] as *mut T).write(buf[best].0);
                    (p[1] as *mut i64).write(buf[best].1);
                }
            })
        })
    }
}

/// upstream's `quick_select_template`: partially orders `buf` so that position `k` holds the k-th
/// smallest (0-based) under `gt`, with its median-of-three pivot and Hoare partition (the swaps,
/// and so the index left for equal values, are upstream's).
fn quick_select<E: Copy>(buf: &mut [E], k: usize, gt: impl Fn(&E, &E) -> bool) {
    let (mut lo, mut hi) = (0usize, buf.len().saturating_sub(1));
    loop {
        if hi <= lo {
            return;
        }
        if hi == lo + 1 {
            if gt(&buf[lo], &buf[hi]) {
                buf.swap(lo, hi);
            }
            return;
        }
        buf.swap((lo + hi) >> 1, lo + 1);
        if gt(&buf[lo + 1], &buf[hi]) {
            buf.swap(lo + 1, hi);
        }
        if gt(&buf[lo], &buf[hi]) {
            buf.swap(lo, hi);
        }
        if gt(&buf[lo + 1], &buf[lo]) {
            buf.swap(lo + 1, lo);
        }
        let (mut i, mut j) = (lo + 1, hi);
        let piv = buf[lo];
        loop {
            i += 1;
            while gt(&piv, &buf[i]) {
                i += 1;
            }
            j -= 1;
            while gt(&buf[j], &piv) {
                j -= 1;
            }
            if j < i {
                break;
            }
            buf.swap(i, j);
        }
        buf.swap(lo, j);
        if j <= k {
            lo = i;
        }
        if j >= k {
            hi = j - 1;
        }
    }
}

/// `kthvalue(self, k, dim=-1, keepdim=False) -> (values, indices)`: the k-th smallest (1-based)
/// of each line along `dim`, NaN above everything; the core has checked k against the dim.
fn kthvalue(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let k = c.int(1)?;
    let keepdim = c.bool(3)?;
    let d = line_dim(c, &a, 2)?;
    let n = d.map(|d| a.size(d)).unwrap_or(1);
    if k < 1 || k as usize > n {
        bail!(
            runtime,
            "kthvalue(): selected number k out of range for dimension {}",
            d.unwrap_or(0)
        );
    }
    if a.dtype == TnDtype::Bool {
        bail!(
            not_implemented,
            "\"kthvalue_cpu\" not implemented for 'Bool'"
        );
    }
    let k = k as usize - 1;
    let (v, i) = line_outputs(c, d, keepdim)?;
    let (vals, idxs) = (v.view(), i.view());
    idxs.check_dtype(TnDtype::Int64, "kthvalue indices")?;
    unsafe {
        dispatch_all!(a.dtype, "kthvalue_cpu", T => {
            let mut buf: Vec<(T, i64)> = vec![];
            for_each_line([&vals, &idxs, &a], d, |p, s, l| {
                pairs_of(&mut buf, p[2], s[2], l[2]);
                // upstream's comparator: (isnan(x) && !isnan(y)) || x > y
                let nan = |x: T| x.to_f64().is_nan();
                #[allow(clippy::bool_comparison)]
                quick_select(&mut buf, k, |x: &(T, i64), y: &(T, i64)| (nan(x.0) && !nan(y.0)) || x.0 > y.0);
                (p[0] as *mut T).write(buf[k].0);
                (p[1] as *mut i64).write(buf[k].1);
            })
        })
    }
}

/// `median.dim(self, dim=-1, keepdim=False)` / `nanmedian.dim`: per line, the first NaN and its
/// index (median) or the lower median of the non-NaN values (nanmedian), found by libstdc++'s
/// `nth_element` over the indices with upstream's comparators, so an all-NaN line's index is
/// upstream's too; the core has refused an empty dim and `Bool`.
#[allow(clippy::float_cmp, clippy::bool_comparison)] // upstream's `<` and `==` on the value type
fn median_dim(c: &mut Call, ignore_nan: bool) -> KResult {
    let a = c.tensor(0)?;
    let keepdim = c.bool(2)?;
    let d = line_dim(c, &a, 1)?;
    if a.dtype == TnDtype::Bool {
        bail!(not_implemented, "\"median_out\" not implemented for 'Bool'");
    }
    let (v, i) = line_outputs(c, d, keepdim)?;
    let (vals, idxs) = (v.view(), i.view());
    idxs.check_dtype(TnDtype::Int64, "median indices")?;
    unsafe {
        dispatch_all!(a.dtype, "median_out", T => {
            let (mut line, mut idx): (Vec<T>, Vec<usize>) = (vec![], vec![]);
            for_each_line([&vals, &idxs, &a], d, |p, s, l| {
                let n = l[2];
                if n == 0 {
                    return; // the core refuses an empty dim; nothing to select
                }
                line.clear();
                line.extend((0..n).map(|j| (p[2].wrapping_offset(j as isize * s[2]) as *const T).read()));
                let nan = |x: T| x.to_f64().is_nan();
                let first_nan = if ignore_nan { None } else { line.iter().position(|&x| nan(x)) };
                let at = match first_nan {
                    Some(j) => j,
                    None => {
                        idx.clear();
                        idx.extend(0..n);
                        let ip = &line;
                        if ignore_nan {
                            let nans = ip.iter().filter(|&&x| nan(x)).count();
                            // C++'s truncating division: an all-NaN line takes position 0
                            let nth = ((n as i64 - nans as i64 - 1) / 2) as usize;
                            stdsort::nth_element(&mut idx, nth, &|&i: &usize, &j: &usize| {
                                ip[i] < ip[j] || (ip[i] == ip[j] && i < j) || (nan(ip[j]) && !nan(ip[i]))
                            });
                            idx[nth]
                        } else {
                            let nth = (n - 1) / 2;
                            stdsort::nth_element(&mut idx, nth, &|&i: &usize, &j: &usize| {
                                ip[i] < ip[j] || (ip[i] == ip[j] && i < j)
                            });
                            idx[nth]
                        }
                    }
                };
                (p[0] as *mut T).write(line[at]);
                (p[1] as *mut i64).write(at as i64);
            })
        })
    }
}

//! `sort`, `sort.stable`, `topk`. NaN sorts above +inf (last ascending, first descending), as
//! upstream. The sort is always stable (upstream's unstable `sort` may order ties differently;
//! any order of ties is valid for it). `topk` selects as upstream's `topk_impl_loop` does, with
//! libstdc++'s algorithms (`stdsort.rs`), so ties come out in upstream's order.

use std::cmp::Ordering;

use torchnative_abi::TnDtype;

use crate::dtype::Elem;
use crate::kernel::{Call, KResult};
use crate::reduce::normalize_dims;
use crate::stdsort;
use crate::strided::for_each_line;
use crate::{bail, dispatch_all, kernels};

kernels! {
    k_sort = "aten::sort" => |c| { let (d, desc) = (c.int(1)?, c.bool(2)?); sort(c, d, desc) };
    k_sort_stable = "aten::sort.stable" => |c| { let (d, desc) = (c.int(2)?, c.bool(3)?); sort(c, d, desc) };
    k_topk = "aten::topk" => |c| topk(c);
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

fn sort(c: &mut Call, dim: i64, descending: bool) -> KResult {
    let (vals, idxs) = (c.out(0)?, c.out(1)?);
    let a = c.tensor(0)?;
    let d = if a.ndim() == 0 {
        None
    } else {
        Some(normalize_dims(&[dim], a.ndim())?[0])
    };
    idxs.check_dtype(TnDtype::Int64, "sort indices")?;
    unsafe {
        dispatch_all!(a.dtype, "sort", T => {
            let mut buf: Vec<(T, i64)> = vec![];
            for_each_line([&vals, &idxs, &a], d, |p, s, l| {
                let n = l[2];
                buf.clear();
                for i in 0..n {
                    buf.push(((p[2].wrapping_offset(i as isize * s[2]) as *const T).read(), i as i64));
                }
                if descending {
                    buf.sort_by(|x, y| key_cmp(y.0, x.0));
                } else {
                    buf.sort_by(|x, y| key_cmp(x.0, y.0));
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
    let d = if a.ndim() == 0 {
        None
    } else {
        Some(normalize_dims(&[c.int(2)?], a.ndim())?[0])
    };
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
                buf.clear();
                for i in 0..n {
                    buf.push(((p[2].wrapping_offset(i as isize * s[2]) as *const T).read(), i as i64));
                }
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

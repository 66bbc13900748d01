//! Max pooling over windows: `max_pool2d_with_indices` and `max_pool3d_with_indices` (strided,
//! padded, dilated windows), `fractional_max_pool2d`/`3d` (pseudo-random window starts), and the
//! backward they share (each output gradient added at the input position its index names).
//!
//! The scans follow upstream's CPU loops (MaxPoolKernel.cpp, FractionalMaxPool2d/3d.cpp): a
//! window's elements in row-major order under `val > max || isnan(val)`, so the first maximum and
//! the last NaN win, and a window's initial index is its first in-bounds element. The core has
//! checked the arguments and sized the outputs.

use std::borrow::Cow;

use torchnative_backend::abi::TnDtype;

use crate::conv::expand;
use crate::dtype::{Elem, FloatElem};
use crate::kernel::{Call, KResult};
use crate::nn::{gather_vec, scatter_vec};
use crate::{bail, dispatch_float, dispatch_int, kernels};

kernels! {
    k_max_pool2d = "aten::max_pool2d_with_indices" => |c| max_pool(c, 2);
    k_max_pool3d = "aten::max_pool3d_with_indices" => |c| max_pool(c, 3);
    k_max_pool2d_backward = "aten::max_pool2d_with_indices_backward"
        => |c| pool_backward(c, 2, 7, "max_pool2d_with_indices_backward");
    k_max_pool3d_backward = "aten::max_pool3d_with_indices_backward"
        => |c| pool_backward(c, 3, 7, "max_pool3d_with_indices_backward");
    k_fractional_max_pool2d = "aten::fractional_max_pool2d" => |c| fractional_max_pool(c, 2);
    k_fractional_max_pool3d = "aten::fractional_max_pool3d" => |c| fractional_max_pool(c, 3);
    k_fractional_max_pool2d_backward = "aten::fractional_max_pool2d_backward"
        => |c| pool_backward(c, 2, 4, "fractional_max_pool2d_backward");
    k_fractional_max_pool3d_backward = "aten::fractional_max_pool3d_backward"
        => |c| pool_backward(c, 3, 4, "fractional_max_pool3d_backward");
}

/// One spatial axis of a pool: each output position's window as `[start, end)` walked with
/// `step` (the dilation), its start already moved past any padding.
#[derive(Clone)]
struct Axis {
    win: Vec<(i64, i64)>,
    step: i64,
}

impl Axis {
    /// The axis a 2-d pool lacks (depth one).
    fn unit() -> Axis {
        Axis {
            win: vec![(0, 1)],
            step: 1,
        }
    }

    /// Window `o` covers `o * stride - pad + j * dil` for `j < k`, clipped to `[0, n)`: the end
    /// clipped, the start stepped forward by the dilation while negative (upstream's loops).
    fn strided(n: i64, out: usize, k: i64, stride: i64, pad: i64, dil: i64) -> Axis {
        let win = (0..out as i64)
            .map(|o| {
                let mut s = o * stride - pad;
                let e = (s + (k - 1) * dil + 1).min(n);
                while s < 0 {
                    s += dil;
                }
                (s, e)
            })
            .collect();
        Axis { win, step: dil }
    }

    /// Windows of `k` consecutive elements from the given starts.
    fn from_starts(starts: impl Iterator<Item = i64>, k: i64) -> Axis {
        Axis {
            win: starts.map(|s| (s, s + k)).collect(),
            step: 1,
        }
    }
}

/// Writes each window's maximum and flat plane index into `y` and `ind` (output order), the
/// plane being `[d, h, w]` with `hw = [h, w]`; `lowest` starts each scan.
fn scan<V: Copy + PartialOrd>(
    plane: &[V],
    hw: [i64; 2],
    axes: &[Axis; 3],
    lowest: V,
    is_nan: impl Fn(V) -> bool,
    y: &mut [V],
    ind: &mut [i64],
) {
    let [h, w] = hw;
    let mut o = 0;
    for &(d0, d1) in &axes[0].win {
        for &(h0, h1) in &axes[1].win {
            for &(w0, w1) in &axes[2].win {
                let (mut mi, mut mv) = ((d0 * h + h0) * w + w0, lowest);
                let mut id = d0;
                while id < d1 {
                    let mut ih = h0;
                    while ih < h1 {
                        let row = (id * h + ih) * w;
                        let mut iw = w0;
                        while iw < w1 {
                            let v = plane[(row + iw) as usize];
                            if v > mv || is_nan(v) {
                                mv = v;
                                mi = row + iw;
                            }
                            iw += axes[2].step;
                        }
                        ih += axes[1].step;
                    }
                    id += axes[0].step;
                }
                y[o] = mv;
                ind[o] = mi;
                o += 1;
            }
        }
    }
}

/// Runs `f(plane, its outputs, its indices)` for every plane on the thread pool (planes are
/// independent, as upstream's `parallel_for` over them).
fn for_planes<V: Copy + Send>(
    planes: usize,
    per_plane: usize,
    y: &mut [V],
    ind: &mut [i64],
    f: impl Fn(usize, &mut [V], &mut [i64]) + Sync,
) {
    assert!(y.len() == planes * per_plane && ind.len() == planes * per_plane);
    let (yp, ip) = (y.as_mut_ptr() as usize, ind.as_mut_ptr() as usize);
    crate::threads::parallel_for(
        planes,
        || (),
        |_, p| {
            // SAFETY: plane p's ranges are disjoint from every other plane's and inside the buffers.
            let (ys, is) = unsafe {
                (
                    std::slice::from_raw_parts_mut((yp as *mut V).add(p * per_plane), per_plane),
                    std::slice::from_raw_parts_mut((ip as *mut i64).add(p * per_plane), per_plane),
                )
            };
            f(p, ys, is)
        },
    );
}

/// Pools every plane of `x` (contiguous planes of `d * h * w` elements) with the windows
/// `axes_of(plane)` gives, into the outputs `out` and `ind`. Integers start from the type's
/// lowest value, floats from -inf and compare in their computation type, as upstream's opmath.
unsafe fn pool_planes<'a>(
    x: &crate::kernel::Tensor,
    out: &crate::kernel::Tensor,
    ind: &crate::kernel::Tensor,
    planes: usize,
    dhw: [i64; 3],
    axes_of: impl Fn(usize) -> Cow<'a, [Axis; 3]> + Sync,
    name: &str,
) -> KResult {
    ind.check_dtype(TnDtype::Int64, name)?;
    let size = (dhw[0] * dhw[1] * dhw[2]) as usize;
    let per_plane = if planes == 0 { 0 } else { out.numel() / planes };
    let hw = [dhw[1], dhw[2]];
    if x.is_contiguous() && out.is_contiguous() && ind.is_contiguous() {
        // float32/float64 in place: the planes read and the results written where they are
        // (the copies in and out cost more than the scan at CNN sizes)
        macro_rules! direct {
            ($t:ty) => {{
                let xs = std::slice::from_raw_parts(x.data as *const $t, planes * size);
                let ys = std::slice::from_raw_parts_mut(out.data as *mut $t, planes * per_plane);
                let is = std::slice::from_raw_parts_mut(ind.data as *mut i64, planes * per_plane);
                for_planes(planes, per_plane, ys, is, |p, y, i| {
                    scan(
                        &xs[p * size..(p + 1) * size],
                        hw,
                        &axes_of(p),
                        <$t>::NEG_INFINITY,
                        |v: $t| v.is_nan(),
                        y,
                        i,
                    )
                });
                return Ok(());
            }};
        }
        match x.dtype {
            TnDtype::Float32 if out.dtype == TnDtype::Float32 => direct!(f32),
            TnDtype::Float64 if out.dtype == TnDtype::Float64 => direct!(f64),
            _ => {}
        }
    }
    let mut iv = vec![0i64; planes * per_plane];
    if crate::dtype::is_int(x.dtype) {
        dispatch_int!(x.dtype, name, T => {
            let xv: Vec<T> = gather_vec(x, |v: T| v)?;
            let mut yv = vec![T::default(); planes * per_plane];
            for_planes(planes, per_plane, &mut yv, &mut iv, |p, y, i| {
                scan(&xv[p * size..(p + 1) * size], hw, &axes_of(p), T::MIN, |_| false, y, i)
            });
            scatter_vec(out, &yv)?;
        })
    } else {
        dispatch_float!(x.dtype, name, T, A => {
            let xv: Vec<A> = gather_vec(x, |v: T| v.to_acc())?;
            let mut yv = vec![A::default(); planes * per_plane];
            for_planes(planes, per_plane, &mut yv, &mut iv, |p, y, i| {
                scan(&xv[p * size..(p + 1) * size], hw, &axes_of(p), -A::INFINITY, |v: A| v.is_nan(), y, i)
            });
            let yt: Vec<T> = yv.into_iter().map(T::from_acc).collect();
            scatter_vec(out, &yt)?;
        })
    }
    scatter_vec(ind, &iv)
}

/// `max_pool{nd}d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1,
/// ceil_mode=False) -> (out, indices)`: indices are flat positions in the input plane.
fn max_pool(c: &mut Call, nd: usize) -> KResult {
    let (out, ind) = (c.out(0)?, c.out(1)?);
    let x = c.tensor(0)?;
    let k = expand(c.int_list(1)?, nd, "kernel_size")?;
    let st = c.int_list(2)?;
    let st = if st.is_empty() {
        k.clone()
    } else {
        expand(st, nd, "stride")?
    };
    let pd = expand(c.int_list(3)?, nd, "padding")?;
    let dl = expand(c.int_list(4)?, nd, "dilation")?;
    // the core checks these as upstream does; a window that never advances would not end
    if k.iter().chain(&st).chain(&dl).any(|&v| v <= 0) || pd.iter().any(|&v| v < 0) {
        bail!(
            runtime,
            "max_pool{nd}d: kernel_size {k:?}, stride {st:?} and dilation {dl:?} must be positive and padding \
             {pd:?} non-negative"
        );
    }
    let r = x.ndim();
    if r != nd + 1 && r != nd + 2 || out.ndim() != r {
        bail!(
            runtime,
            "max_pool{nd}d: expected a {}-d or {}-d input, got {:?}",
            nd + 1,
            nd + 2,
            x.sizes
        );
    }
    // a 2-d pool is a 3-d one of depth one
    let pad3 = |v: &[i64], one: i64| {
        if nd == 2 {
            [one, v[0], v[1]]
        } else {
            [v[0], v[1], v[2]]
        }
    };
    let sp = |t: &crate::kernel::Tensor| {
        let s = &t.sizes[r - nd..];
        pad3(s, 1)
    };
    let (dhw, odhw) = (sp(&x), sp(&out));
    let (k, st, pd, dl) = (pad3(&k, 1), pad3(&st, 1), pad3(&pd, 0), pad3(&dl, 1));
    let axes: [Axis; 3] =
        std::array::from_fn(|i| Axis::strided(dhw[i], odhw[i] as usize, k[i], st[i], pd[i], dl[i]));
    let planes = x.sizes[..r - nd].iter().product::<i64>() as usize;
    // one set of windows for every plane (borrowed: a copy per plane cost more than the scan)
    let axes_of = |_: usize| Cow::Borrowed(&axes);
    let name = if nd == 2 { "max_pool2d" } else { "max_pool3d" };
    unsafe { pool_planes(&x, &out, &ind, planes, dhw, axes_of, name) }
}

/// `fractional_max_pool{nd}d(self, kernel_size, output_size, random_samples) -> (out, indices)`:
/// each plane's windows start where its samples put them (upstream's `generate_intervals`,
/// computed in the input's dtype: `int((i + u) * alpha) - int(u * alpha)` with
/// `alpha = (in - pool) / (out - 1)`, and the last window ending at the input's end).
fn fractional_max_pool(c: &mut Call, nd: usize) -> KResult {
    let (out, ind) = (c.out(0)?, c.out(1)?);
    let (x, samples) = (c.tensor(0)?, c.tensor(3)?);
    let k = expand(c.int_list(1)?, nd, "kernel_size")?;
    let r = x.ndim();
    if r != nd + 1 && r != nd + 2 || out.ndim() != r || samples.ndim() != 3 {
        bail!(
            runtime,
            "fractional_max_pool{nd}d: input {:?}, output {:?} and samples {:?} do not fit",
            x.sizes,
            out.sizes,
            samples.sizes
        );
    }
    if samples.dtype != x.dtype {
        bail!(
            runtime,
            "Expect _random_samples to have the same dtype as input"
        );
    }
    let planes = x.sizes[..r - nd].iter().product::<i64>() as usize;
    let (sizes, osizes) = (&x.sizes[r - nd..], &out.sizes[r - nd..]);
    let dhw = if nd == 2 {
        [1, sizes[0], sizes[1]]
    } else {
        [sizes[0], sizes[1], sizes[2]]
    };
    // upstream's sample order: (width, height) in 2-d, (time, height, width) in 3-d
    let which: &[usize] = if nd == 2 { &[1, 0] } else { &[0, 1, 2] };
    let name = format!("fractional_max_pool{nd}d_out_frame");
    unsafe {
        dispatch_float!(x.dtype, &name, T, A => {
            let sv: Vec<T> = gather_vec(&samples, |v: T| v)?;
            if sv.len() < planes * nd {
                bail!(runtime, "Expect _random_samples.size(0) no less then input batch size.");
            }
            let starts = |u: T, n: i64, o: i64, k: i64| -> Vec<i64> {
                // each operation rounds to T, as upstream's scalar_t arithmetic
                let t = |v: A| T::from_acc(v).to_acc();
                let mut s = vec![n - k; o.max(0) as usize];
                if o > 1 {
                    let alpha = t(t(A::from_f64((n - k) as f64)) / t(A::from_f64((o - 1) as f64)));
                    let u = u.to_acc();
                    let base = t(u * alpha) as i32 as i64;
                    for (i, si) in s.iter_mut().take(o as usize - 1).enumerate() {
                        let ui = t(t(t(A::from_f64(i as f64)) + u) * alpha);
                        *si = ui as i32 as i64 - base;
                    }
                }
                s
            };
            let axes_of = |p: usize| -> Cow<[Axis; 3]> {
                let mut axes = [Axis::unit(), Axis::unit(), Axis::unit()];
                for d in 0..nd {
                    let st = starts(sv[p * nd + which[d]], sizes[d], osizes[d], k[d]);
                    axes[3 - nd + d] = Axis::from_starts(st.into_iter(), k[d]);
                }
                Cow::Owned(axes)
            };
            pool_planes(&x, &out, &ind, planes, dhw, axes_of, &name)
        })
    }
}

/// The backward of every max pool here: `(grad_output, self, ..., indices at `ind_at`) ->
/// grad_input`, each plane's output gradients added into the input positions the forward's
/// indices name, in output order and in the dtype's own arithmetic, as upstream's backward loops
/// add them (so sums agree bit for bit, ties included). An index outside its plane is refused.
fn pool_backward(c: &mut Call, nd: usize, ind_at: usize, name: &str) -> KResult {
    let gi = c.out(0)?;
    let (g, x, ind) = (c.tensor(0)?, c.tensor(1)?, c.tensor(ind_at)?);
    ind.check_dtype(TnDtype::Int64, name)?;
    let r = x.ndim();
    if (r != nd + 1 && r != nd + 2) || g.ndim() != r || ind.sizes != g.sizes || gi.sizes != x.sizes
    {
        bail!(
            runtime,
            "{name}: grad_output {:?}, indices {:?} and input {:?} do not fit",
            g.sizes,
            ind.sizes,
            x.sizes
        );
    }
    let size = x.sizes[r - nd..].iter().product::<i64>() as usize;
    let osize = g.sizes[r - nd..].iter().product::<i64>() as usize;
    let planes = x.sizes[..r - nd].iter().product::<i64>() as usize;
    unsafe {
        if g.is_contiguous() && ind.is_contiguous() && gi.is_contiguous() && g.dtype == gi.dtype {
            // float32/float64 in place: indices and gradients read where they are, the input
            // gradient zeroed and added into directly
            macro_rules! direct {
                ($t:ty) => {{
                    let iv = std::slice::from_raw_parts(ind.data as *const i64, planes * osize);
                    if let Some(i) = iv.iter().find(|&&i| i < 0 || i as usize >= size) {
                        bail!(runtime, "{name}: index {i} is outside a plane of {size} elements");
                    }
                    let gv = std::slice::from_raw_parts(g.data as *const $t, planes * osize);
                    let op = gi.data as usize;
                    std::ptr::write_bytes(gi.data as *mut $t, 0, planes * size);
                    crate::threads::parallel_for(planes, || (), |_, p| {
                        // SAFETY: plane p's slice of the input gradient is disjoint from the others'.
                        let dst = std::slice::from_raw_parts_mut((op as *mut $t).add(p * size), size);
                        for o in p * osize..(p + 1) * osize {
                            dst[iv[o] as usize] += gv[o];
                        }
                    });
                    return Ok(());
                }};
            }
            match g.dtype {
                TnDtype::Float32 => direct!(f32),
                TnDtype::Float64 => direct!(f64),
                _ => {}
            }
        }
        let iv: Vec<i64> = gather_vec(&ind, |v: i64| v)?;
        if let Some(i) = iv.iter().find(|&&i| i < 0 || i as usize >= size) {
            bail!(
                runtime,
                "{name}: index {i} is outside a plane of {size} elements"
            );
        }
        dispatch_float!(g.dtype, name, T, A => {
            let gv: Vec<T> = gather_vec(&g, |v: T| v)?;
            let mut out = vec![T::from_acc(A::default()); planes * size];
            let op = out.as_mut_ptr() as usize;
            crate::threads::parallel_for(planes, || (), |_, p| {
                // SAFETY: plane p's slice of `out` is disjoint from every other plane's.
                let dst = std::slice::from_raw_parts_mut((op as *mut T).add(p * size), size);
                for o in p * osize..(p + 1) * osize {
                    let slot = &mut dst[iv[o] as usize];
                    *slot = T::from_acc(slot.to_acc() + gv[o].to_acc());
                }
            });
            scatter_vec(&gi, &out)
        })
    }
}

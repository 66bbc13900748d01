//! `convolution` (1-, 2- and 3-d, groups, stride, padding, dilation, transposed) by im2col +
//! gemm in f32/f64 (f16/bf16 widened to f32 and rounded once), and `max_pool2d_with_indices` with
//! its backward.

use torchnative_backend::abi::TnDtype;

use crate::dtype::{Elem, FloatElem, Real};
use crate::kernel::{Call, KResult};
use crate::nn::{gather_vec, scatter_vec};
use crate::{bail, dispatch_float, dispatch_int, kernels};

kernels! {
    k_convolution = "aten::convolution" => |c| convolution(c);
    k_max_pool2d = "aten::max_pool2d_with_indices" => |c| max_pool2d(c);
    k_max_pool2d_backward = "aten::max_pool2d_with_indices_backward" => |c| max_pool2d_backward(c);
}

/// Expands an `int[]` of length 1 to `n` (a schema's `int[2] padding=0` may arrive as `[0]`).
fn expand(v: &[i64], n: usize, name: &str) -> KResult<Vec<i64>> {
    match v.len() {
        l if l == n => Ok(v.to_vec()),
        1 => Ok(vec![v[0]; n]),
        _ => bail!(runtime, "expected {name} to have {n} elements, got {:?}", v),
    }
}

/// A dense row-major matmul `c[m, n] = a[m, k] @ b[k, n]` (overwrites `c`) through `gemm`.
fn matmul<T: Elem>(m: usize, k: usize, n: usize, a: &[T], b: &[T], c: &mut [T]) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.iter_mut().for_each(|x| *x = T::from_f64(0.0));
        return;
    }
    unsafe {
        crate::threads::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            T::from_f64(0.0),
            T::from_f64(1.0),
        )
    }
}

/// Geometry of one convolution: spatial sizes of input, kernel and output (the *direct*
/// direction: for a transposed convolution, `inp` is the transposed output and `out` its input).
struct Geo {
    inp: Vec<usize>,
    ker: Vec<usize>,
    out: Vec<usize>,
    stride: Vec<i64>,
    pad: Vec<i64>,
    dil: Vec<i64>,
}

impl Geo {
    fn kvol(&self) -> usize {
        self.ker.iter().product()
    }
    fn ovol(&self) -> usize {
        self.out.iter().product()
    }
    fn ivol(&self) -> usize {
        self.inp.iter().product()
    }
    /// The input position each (kernel offset, output position) reads, `kernel_flat * ovol +
    /// out_flat` -> flat input index, or -1 in the padding: computed once per call and reused
    /// for every batch item and group.
    fn table(&self) -> Vec<i64> {
        let mut t = vec![-1i64; self.kvol() * self.ovol()];
        let ov = self.ovol();
        self.walk(|kf, of, inf| t[kf * ov + of] = inf as i64);
        t
    }
    /// For each kernel offset and output position, the input position (or None in padding):
    /// calls `f(kernel_flat, out_flat, in_flat)`.
    fn walk(&self, mut f: impl FnMut(usize, usize, usize)) {
        let s = self.inp.len();
        let kv = self.kvol();
        let ov = self.ovol();
        let mut kc = vec![0usize; s];
        let mut oc = vec![0usize; s];
        for kf in 0..kv {
            let mut r = kf;
            for d in (0..s).rev() {
                kc[d] = r % self.ker[d];
                r /= self.ker[d];
            }
            for of in 0..ov {
                let mut r = of;
                for d in (0..s).rev() {
                    oc[d] = r % self.out[d];
                    r /= self.out[d];
                }
                let mut inf = 0usize;
                let mut ok = true;
                for d in 0..s {
                    let p =
                        oc[d] as i64 * self.stride[d] - self.pad[d] + kc[d] as i64 * self.dil[d];
                    if p < 0 || p >= self.inp[d] as i64 {
                        ok = false;
                        break;
                    }
                    inf = inf * self.inp[d] + p as usize;
                }
                if ok {
                    f(kf, of, inf);
                }
            }
        }
    }
}

/// `convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
/// groups)`: input `[N, C, *spatial]` (or unbatched `[C, *spatial]`).
fn convolution(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (x, w) = (c.tensor(0)?, c.tensor(1)?);
    let bias = c.opt_tensor(2)?;
    let transposed = c.bool(6)?;
    let groups = c.int(8)? as usize;
    let s = w.ndim().saturating_sub(2);
    if s == 0 || s > 3 {
        bail!(
            runtime,
            "convolution: expected a 3-, 4- or 5-d weight, got {:?}",
            w.sizes
        );
    }
    let (stride, pad, dil) = (
        expand(c.int_list(3)?, s, "stride")?,
        expand(c.int_list(4)?, s, "padding")?,
        expand(c.int_list(5)?, s, "dilation")?,
    );
    let batched = x.ndim() == s + 2;
    if !batched && x.ndim() != s + 1 {
        bail!(
            runtime,
            "convolution: input of rank {} for a {s}-d convolution",
            x.ndim()
        );
    }
    if x.dtype != w.dtype || x.dtype != out.dtype {
        bail!(
            runtime,
            "Input type ({:?}) and weight type ({:?}) should be the same",
            x.dtype,
            w.dtype
        );
    }
    let off = if batched { 0 } else { 1 };
    let nb = if batched { x.size(0) } else { 1 };
    let cin = x.size(1 - off);
    let cout = out.size(1 - off);
    let xs: Vec<usize> = (0..s).map(|d| x.size(2 - off + d)).collect();
    let os: Vec<usize> = (0..s).map(|d| out.size(2 - off + d)).collect();
    let ks: Vec<usize> = (0..s).map(|d| w.size(2 + d)).collect();
    if groups == 0 || cin % groups != 0 || cout % groups != 0 {
        bail!(
            runtime,
            "convolution: channels {cin} -> {cout} do not divide into {groups} groups"
        );
    }
    let (cig, cog) = (cin / groups, cout / groups);
    // The direct geometry: for a transposed conv, the "output" of the direct conv is its input.
    let geo = if transposed {
        Geo {
            inp: os.clone(),
            ker: ks.clone(),
            out: xs.clone(),
            stride,
            pad,
            dil,
        }
    } else {
        Geo {
            inp: xs.clone(),
            ker: ks.clone(),
            out: os.clone(),
            stride,
            pad,
            dil,
        }
    };
    if transposed && (w.size(0) != cin || w.size(1) * groups != cout) {
        bail!(
            runtime,
            "convolution: transposed weight {:?} for {cin} -> {cout} channels",
            w.sizes
        );
    }
    if !transposed && (w.size(0) != cout || w.size(1) != cig) {
        bail!(
            runtime,
            "convolution: weight {:?} for {cin} -> {cout} channels in {groups} groups",
            w.sizes
        );
    }
    unsafe {
        dispatch_float!(x.dtype, "slow_conv2d_cpu", T, A => {
            // Compute in f32 for f16/bf16 (A), f32/f64 natively.
            let xv: Vec<A> = gather_vec(&x, |v: T| v.to_acc())?;
            let wv: Vec<A> = gather_vec(&w, |v: T| v.to_acc())?;
            let bv: Option<Vec<A>> = match bias { Some(b) => Some(gather_vec(&b, |v: T| v.to_acc())?), None => None };
            let (iv, ov, kv) = (xs.iter().product::<usize>(), os.iter().product::<usize>(), geo.kvol());
            let mut yv: Vec<A> = vec![A::default(); nb * cout * ov];
            let table = geo.table();
            let gov = geo.ovol();
            if !transposed {
                let mut cols = vec![A::default(); cig * kv * gov];
                let mut res = vec![A::default(); cog * gov];
                for n in 0..nb {
                    for g in 0..groups {
                        let xb = &xv[(n * cin + g * cig) * iv..(n * cin + (g + 1) * cig) * iv];
                        // im2col: row (ci, kf) of `cols` is the input plane ci read through the
                        // table's column kf (0 in the padding)
                        for ci in 0..cig {
                            let plane = &xb[ci * iv..(ci + 1) * iv];
                            for kf in 0..kv {
                                let dst = &mut cols[(ci * kv + kf) * gov..(ci * kv + kf + 1) * gov];
                                for (d, &i) in dst.iter_mut().zip(&table[kf * gov..(kf + 1) * gov]) {
                                    *d = if i >= 0 { plane[i as usize] } else { A::default() };
                                }
                            }
                        }
                        let wg = &wv[g * cog * cig * kv..(g + 1) * cog * cig * kv];
                        matmul(cog, cig * kv, geo.ovol(), wg, &cols, &mut res);
                        yv[(n * cout + g * cog) * ov..(n * cout + (g + 1) * cog) * ov].copy_from_slice(&res);
                    }
                }
            } else {
                // y (direct input geometry) += col2im(W_g^T @ x_g).
                let mut wt = vec![A::default(); cog * kv * cig];
                let mut cols = vec![A::default(); cog * kv * geo.ovol()];
                for g in 0..groups {
                    // W[g*cig + ci, co, k] -> Wt[(co*kv + k), ci]
                    for ci in 0..cig {
                        for co in 0..cog {
                            for k in 0..kv {
                                wt[(co * kv + k) * cig + ci] = wv[((g * cig + ci) * cog + co) * kv + k];
                            }
                        }
                    }
                    for n in 0..nb {
                        let xb = &xv[(n * cin + g * cig) * iv..(n * cin + (g + 1) * cig) * iv];
                        matmul(cog * kv, cig, geo.ovol(), &wt, xb, &mut cols);
                        let yb = &mut yv[(n * cout + g * cog) * ov..(n * cout + (g + 1) * cog) * ov];
                        // col2im in the order walk() visits: kernel offset, then output position
                        let giv = geo.ivol();
                        for kf in 0..kv {
                            for (of, &inf) in table[kf * gov..(kf + 1) * gov].iter().enumerate() {
                                if inf < 0 {
                                    continue;
                                }
                                for co in 0..cog {
                                    let y = &mut yb[co * giv + inf as usize];
                                    *y += cols[(co * kv + kf) * gov + of];
                                }
                            }
                        }
                    }
                }
            }
            if let Some(b) = &bv {
                for n in 0..nb {
                    for co in 0..cout {
                        for v in &mut yv[(n * cout + co) * ov..(n * cout + co + 1) * ov] {
                            *v += b[co];
                        }
                    }
                }
            }
            let y: Vec<T> = yv.into_iter().map(T::from_acc).collect();
            scatter_vec(&out, &y)
        })
    }
}

/// `max_pool2d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1,
/// ceil_mode=False) -> (out, indices)`: the output size comes from the core; indices are flat
/// `h * W + w` positions in the input plane; NaN wins (the last NaN), as upstream's `val > max
/// || isnan(val)` scan.
fn max_pool2d(c: &mut Call) -> KResult {
    let (out, ind) = (c.out(0)?, c.out(1)?);
    let x = c.tensor(0)?;
    let k = expand(c.int_list(1)?, 2, "kernel_size")?;
    let st = c.int_list(2)?;
    let st = if st.is_empty() {
        k.clone()
    } else {
        expand(st, 2, "stride")?
    };
    let pd = expand(c.int_list(3)?, 2, "padding")?;
    let dl = expand(c.int_list(4)?, 2, "dilation")?;
    if x.ndim() != 3 && x.ndim() != 4 {
        bail!(
            runtime,
            "max_pool2d: expected a 3-d or 4-d input, got {:?}",
            x.sizes
        );
    }
    ind.check_dtype(TnDtype::Int64, "max_pool2d indices")?;
    let nd = x.ndim();
    let (h, w) = (x.size(nd - 2), x.size(nd - 1));
    let (oh, ow) = (out.size(nd - 2), out.size(nd - 1));
    let planes: usize = x.sizes[..nd - 2].iter().product::<i64>() as usize;
    let geo = PoolGeometry {
        h,
        w,
        oh,
        ow,
        k: [k[0], k[1]],
        st: [st[0], st[1]],
        pd: [pd[0], pd[1]],
        dl: [dl[0], dl[1]],
    };
    let mut iv: Vec<i64> = Vec::with_capacity(planes * oh * ow);
    unsafe {
        if crate::dtype::is_int(x.dtype) {
            // upstream's integer windows start at the type's lowest value
            dispatch_int!(x.dtype, "max_pool2d", T => {
                let xv: Vec<T> = gather_vec(&x, |v: T| v)?;
                let mut yv: Vec<T> = Vec::with_capacity(planes * oh * ow);
                for p in 0..planes {
                    geo.scan(&xv[p * h * w..(p + 1) * h * w], T::MIN, |_| false, &mut yv, &mut iv);
                }
                scatter_vec(&out, &yv)?;
            })
        } else {
            dispatch_float!(x.dtype, "max_pool2d", T, A => {
                let xv: Vec<A> = gather_vec(&x, |v: T| v.to_acc())?;
                let mut yv: Vec<A> = Vec::with_capacity(planes * oh * ow);
                for p in 0..planes {
                    geo.scan(&xv[p * h * w..(p + 1) * h * w], -A::INFINITY, |v: A| v.is_nan(), &mut yv, &mut iv);
                }
                let yt: Vec<T> = yv.into_iter().map(T::from_acc).collect();
                scatter_vec(&out, &yt)?;
            })
        }
        scatter_vec(&ind, &iv)
    }
}

/// The windows of a 2-d max pool over one `h x w` plane.
struct PoolGeometry {
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    k: [i64; 2],
    st: [i64; 2],
    pd: [i64; 2],
    dl: [i64; 2],
}

impl PoolGeometry {
    /// Appends each window's maximum and its flat index, scanning as upstream's `val > max ||
    /// isnan(val)` loop does from `lowest` (so NaN wins, the last NaN).
    fn scan<V: Copy + PartialOrd>(
        &self,
        plane: &[V],
        lowest: V,
        is_nan: impl Fn(V) -> bool,
        yv: &mut Vec<V>,
        iv: &mut Vec<i64>,
    ) {
        let (h, w, k, st, pd, dl) = (
            self.h as i64,
            self.w as i64,
            self.k,
            self.st,
            self.pd,
            self.dl,
        );
        for y in 0..self.oh as i64 {
            for xo in 0..self.ow as i64 {
                let mut h0 = y * st[0] - pd[0];
                let mut w0 = xo * st[1] - pd[1];
                let h1 = (h0 + (k[0] - 1) * dl[0] + 1).min(h);
                let w1 = (w0 + (k[1] - 1) * dl[1] + 1).min(w);
                while h0 < 0 {
                    h0 += dl[0];
                }
                while w0 < 0 {
                    w0 += dl[1];
                }
                let (mut mi, mut mv) = (h0 * w + w0, lowest);
                let mut ih = h0;
                while ih < h1 {
                    let mut iw = w0;
                    while iw < w1 {
                        let idx = ih * w + iw;
                        let v = plane[idx as usize];
                        if v > mv || is_nan(v) {
                            mv = v;
                            mi = idx;
                        }
                        iw += dl[1];
                    }
                    ih += dl[0];
                }
                yv.push(mv);
                iv.push(mi);
            }
        }
    }
}

/// `max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
/// ceil_mode, indices) -> grad_input`: each plane's output gradients added into the input
/// positions the forward's indices name, in output order and in the dtype's own arithmetic, as
/// upstream's `cpu_max_pool_backward` adds them (so the sums agree bit for bit, ties included).
/// The core's meta step has checked the shapes; an index outside its plane is refused.
fn max_pool2d_backward(c: &mut Call) -> KResult {
    let gi = c.out(0)?;
    let (g, x, ind) = (c.tensor(0)?, c.tensor(1)?, c.tensor(7)?);
    ind.check_dtype(TnDtype::Int64, "max_pool2d_with_indices_backward indices")?;
    let nd = x.ndim();
    if (nd != 3 && nd != 4) || g.ndim() != nd || ind.sizes != g.sizes || gi.sizes != x.sizes {
        bail!(
            runtime,
            "max_pool2d_with_indices_backward: grad_output {:?}, indices {:?} and input {:?} do not fit",
            g.sizes,
            ind.sizes,
            x.sizes
        );
    }
    let hw = x.size(nd - 2) * x.size(nd - 1);
    let ohw = g.size(nd - 2) * g.size(nd - 1);
    let planes: usize = x.sizes[..nd - 2].iter().product::<i64>() as usize;
    unsafe {
        dispatch_float!(g.dtype, "max_pool2d_with_indices_backward", T, A => {
            let gv: Vec<T> = gather_vec(&g, |v: T| v)?;
            let iv: Vec<i64> = gather_vec(&ind, |v: i64| v)?;
            let mut out = vec![T::from_acc(A::ZERO); planes * hw];
            for p in 0..planes {
                let dst = &mut out[p * hw..(p + 1) * hw];
                for o in p * ohw..(p + 1) * ohw {
                    let i = iv[o];
                    if i < 0 || i as usize >= hw {
                        bail!(runtime, "max_pool2d_with_indices_backward: index {i} is outside a plane of {hw} elements");
                    }
                    let slot = &mut dst[i as usize];
                    *slot = T::from_acc(slot.to_acc() + gv[o].to_acc());
                }
            }
            scatter_vec(&gi, &out)
        })
    }
}

//! `convolution` (1-, 2- and 3-d, groups, stride, padding, dilation, transposed) by im2col +
//! gemm in f32/f64 (f16/bf16 widened to f32 and rounded once).

use crate::dtype::{Elem, FloatElem};
use crate::kernel::{Call, KResult};
use crate::nn::{gather_vec, scatter_vec};
use crate::{bail, dispatch_float, kernels};

kernels! {
    k_convolution = "aten::convolution" => |c| convolution(c);
}

/// Expands an `int[]` of length 1 to `n` (a schema's `int[2] padding=0` may arrive as `[0]`).
pub(crate) fn expand(v: &[i64], n: usize, name: &str) -> KResult<Vec<i64>> {
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

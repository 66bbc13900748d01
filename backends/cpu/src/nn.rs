//! Neural-network kernels: `_softmax`, `_log_softmax`, `native_layer_norm`,
//! `_native_batch_norm_legit_no_training`, `native_batch_norm` and its backward,
//! `_scaled_dot_product_flash_attention_for_cpu`.
//! Formulas follow upstream's CPU kernels (noted per op); f16/bf16 compute in f32.

use torchnative_backend::abi::TnDtype;

use crate::dtype::{Elem, FloatElem, Real};
use crate::kernel::{Call, KResult, Tensor};
use crate::reduce::normalize_dims;
use crate::strided::{contiguous_strides, for_each_line, map1, Plan};
use crate::{bail, dispatch_float, kernels};

kernels! {
    k_softmax = "aten::_softmax" => |c| softmax(c, false);
    k_log_softmax = "aten::_log_softmax" => |c| softmax(c, true);
    k_log_softmax_backward = "aten::_log_softmax_backward_data" => |c| log_softmax_backward(c);
    k_layer_norm = "aten::native_layer_norm" => |c| layer_norm(c);
    k_batch_norm_eval = "aten::_native_batch_norm_legit_no_training" => |c| batch_norm_eval(c);
    k_batch_norm_train = "aten::native_batch_norm" => |c| batch_norm_train(c);
    k_batch_norm_backward = "aten::native_batch_norm_backward" => |c| batch_norm_backward(c);
    k_sdpa_flash_cpu = "aten::_scaled_dot_product_flash_attention_for_cpu" => |c| sdpa(c);
    k_sdpa_flash_cpu_backward = "aten::_scaled_dot_product_flash_attention_for_cpu_backward" => |c| sdpa_backward(c);
}

/// Copies a view into a contiguous `Vec` (logical order), converting each element with `conv`.
///
/// # Safety
/// `t` must describe live memory whose elements are `S`s at its sizes and strides.
pub unsafe fn gather_vec<S: Copy, D: Copy + Default>(
    t: &Tensor,
    conv: impl Fn(S) -> D,
) -> KResult<Vec<D>> {
    let mut v = vec![D::default(); t.numel()];
    let strides = contiguous_strides(t.sizes);
    let dst = Tensor {
        data: v.as_mut_ptr() as *mut u8,
        dtype: t.dtype,
        sizes: t.sizes,
        strides: &strides,
    };
    // The destination's itemsize must be D's: describe it through a plan directly.
    let plan = Plan::<2>::new(
        t.sizes,
        [dst.strides, t.strides],
        [std::mem::size_of::<D>(), t.itemsize()],
    )?;
    plan.run([dst.data, t.data], |p, s, n| {
        for i in 0..n as isize {
            let x = (p[1].wrapping_offset(i * s[1]) as *const S).read();
            (p[0].wrapping_offset(i * s[0]) as *mut D).write(conv(x));
        }
    });
    Ok(v)
}

/// Writes a contiguous `Vec` (logical order) into a view of element type `O`.
///
/// # Safety
/// `out` must describe live, writable memory whose elements are `O`s at its sizes and strides.
pub unsafe fn scatter_vec<O: Copy>(out: &Tensor, v: &[O]) -> KResult {
    if v.len() != out.numel() {
        bail!(
            runtime,
            "internal: {} values for an output of {} elements",
            v.len(),
            out.numel()
        );
    }
    let strides = contiguous_strides(out.sizes);
    let src = Tensor {
        data: v.as_ptr() as *mut u8,
        dtype: out.dtype,
        sizes: out.sizes,
        strides: &strides,
    };
    map1(out, &src, |x: O| x)
}

// ----------------------------------------------------------------------------------------------
// softmax

/// `_softmax(self, int dim, bool half_to_float)` / `_log_softmax`, per line along `dim`:
/// `m = max` (NaN-propagating), softmax `exp(x - m) * (1 / sum)`, log-softmax `(x - m) - log(sum)`
/// (upstream's `_vec_softmax_lastdim` / `_vec_log_softmax_lastdim` order).
fn softmax(c: &mut Call, log: bool) -> KResult {
    let (out, a) = (c.out(0)?, c.tensor(0)?);
    let dim = if a.ndim() == 0 {
        None
    } else {
        Some(normalize_dims(&[c.int(1)?], a.ndim())?[0])
    };
    if c.bool(2)? {
        bail!(
            runtime,
            "softmax with half to float conversion is not supported on CPU"
        );
    }
    if out.dtype != a.dtype {
        bail!(
            runtime,
            "softmax: output dtype {:?} differs from the input {:?}",
            out.dtype,
            a.dtype
        );
    }
    // Upstream's last-dim log-softmax keeps `log(sum)` in the input dtype (its per-row scratch
    // is `scalar_t[]`), which matters for f16/bf16.
    let lastdim = dim
        .map(|d| a.sizes[d + 1..].iter().all(|&s| s == 1))
        .unwrap_or(true);
    if a.dtype == TnDtype::Float32 {
        if let Some(lanes) = crate::vecmath::lanes_avx512_kernel() {
            // SAFETY: a and out are f32 views of the kernel's operands.
            return unsafe { softmax_f32_upstream(&out, &a, dim, log, lanes) };
        }
    }
    unsafe {
        dispatch_float!(a.dtype, "softmax", T, A => {
            let narrow = lastdim && matches!(a.dtype, TnDtype::Float16 | TnDtype::BFloat16);
            let mut buf: Vec<A> = vec![];
            for_each_line([&out, &a], dim, |p, s, l| {
                let n = l[1];
                let x = |i: usize| (p[1].wrapping_offset(i as isize * s[1]) as *const T).read().to_acc();
                let mut m = A::NAN;
                for i in 0..n {
                    let v = x(i);
                    m = if i == 0 { v } else { crate::binary::fmax_nan(m, v) };
                }
                buf.clear();
                let mut sum = A::ZERO;
                // (only with a finite maximum: as_f32_buf resizes the buffer). Off: softmax and
                // log_softmax keep libm's exp, whose results upstream's Sleef exp matches closely
                // enough that 200 training steps stay within 2.4e-7 of upstream; with the 2-ulp
                // polynomial the CNN of tests/test_training.py drifted to 8e-4 (SDPA keeps it).
                let fast = if FAST_SOFTMAX_EXP && m.to_f64().is_finite() { as_f32_buf::<A>(&mut buf, n) } else { None };
                if let Some(b32) = fast {
                    // f32 with a finite maximum: every x - m is finite and <= 0 (exp_f32_fast's
                    // domain), computed over the whole line at once so the loop vectorises.
                    for (i, slot) in b32.iter_mut().enumerate() {
                        *slot = (x(i) - m).to_f64() as f32;
                    }
                    exp_f32_fast_inplace(b32);
                    for &e in buf.iter() {
                        sum += e;
                    }
                } else {
                    for i in 0..n {
                        let e = (x(i) - m).exp();
                        buf.push(e);
                        sum += e;
                    }
                }
                let w = |i: usize, v: A| (p[0].wrapping_offset(i as isize * s[0]) as *mut T).write(T::from_acc(v));
                if log {
                    let ls = if narrow { T::from_acc(T::from_acc(sum).to_acc().ln()).to_acc() } else { sum.ln() };
                    for i in 0..n {
                        w(i, (x(i) - m) - ls);
                    }
                } else {
                    let inv = A::ONE / sum;
                    for (i, &e) in buf.iter().enumerate() {
                        w(i, e * inv);
                    }
                }
            })
        })
    }
}

/// A view's elements (of type `T`) in logical order: borrowed when contiguous, else gathered.
unsafe fn as_contiguous<'a, T: Copy + Default>(
    t: &'a Tensor,
) -> KResult<std::borrow::Cow<'a, [T]>> {
    if t.is_contiguous() {
        Ok(std::borrow::Cow::Borrowed(std::slice::from_raw_parts(
            t.data as *const T,
            t.numel(),
        )))
    } else {
        Ok(std::borrow::Cow::Owned(gather_vec(t, |v: T| v)?))
    }
}

/// float32 `_softmax`/`_log_softmax` in upstream's order (`vecmath`): the input made
/// contiguous as upstream's `softmax_cpu_out` does; `dim == ndim - 1` (or a 0-d input) takes
/// `_vec_softmax_lastdim`'s per-row path, any other dim `_vec_softmax`'s column path.
unsafe fn softmax_f32_upstream(
    out: &Tensor,
    a: &Tensor,
    dim: Option<usize>,
    log: bool,
    lanes: usize,
) -> KResult {
    let numel = a.numel();
    if numel == 0 {
        return Ok(());
    }
    let x = as_contiguous::<f32>(a)?;
    let direct = out.is_contiguous();
    let mut tmp: Vec<f32> = if direct {
        Vec::new()
    } else {
        vec![0f32; numel]
    };
    let y: &mut [f32] = if direct {
        std::slice::from_raw_parts_mut(out.data as *mut f32, numel)
    } else {
        &mut tmp
    };
    let nd = a.ndim();
    match dim {
        Some(d) if d + 1 != nd => {
            let dsz = a.size(d);
            let inner: usize = a.sizes[d + 1..].iter().product::<i64>() as usize;
            let block = dsz * inner;
            for (xo, yo) in x.chunks(block).zip(y.chunks_mut(block)) {
                if !crate::vecmath::softmax_cols(xo, yo, dsz, inner, log, lanes) {
                    bail!(runtime, "internal: no vector softmax path");
                }
            }
        }
        _ => {
            let n = dim.map(|d| a.size(d)).unwrap_or(1);
            for (xr, yr) in x.chunks(n).zip(y.chunks_mut(n)) {
                if !crate::vecmath::softmax_row(xr, yr, log, lanes) {
                    bail!(runtime, "internal: no vector softmax path");
                }
            }
        }
    }
    if !direct {
        scatter_vec(out, &tmp)?;
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// layer norm

/// `native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd)`.
/// Per row of the trailing `normalized_shape` dims: mean and biased variance (two-pass in f64),
/// `rstd = 1 / sqrt(var + eps)`, `y = (x * rstd + (-rstd * mean)) * w + b` (upstream's order),
/// in f32 for f16/bf16. `mean`/`rstd` may be f32 for a reduced input with f32 weights.
fn layer_norm(c: &mut Call) -> KResult {
    let (out, mean_o, rstd_o) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let a = c.tensor(0)?;
    let shape = c.int_list(1)?;
    let (w, b) = (c.opt_tensor(2)?, c.opt_tensor(3)?);
    let eps = c.float(4)?;
    let l = shape.len();
    if l > a.ndim() || a.sizes[a.ndim() - l..] != *shape {
        bail!(
            runtime,
            "native_layer_norm: normalized_shape {:?} does not match the input {:?}",
            shape,
            a.sizes
        );
    }
    let n: usize = shape.iter().product::<i64>() as usize;
    let m = a.numel().checked_div(n).unwrap_or(0);
    let same = |t: &Option<Tensor>| t.as_ref().map(|t| t.dtype == a.dtype).unwrap_or(true);
    if n > 0 && same(&w) && same(&b) && mean_o.dtype == a.dtype && rstd_o.dtype == a.dtype {
        // SAFETY: every operand checked to be of a's dtype.
        let done = unsafe {
            match a.dtype {
                TnDtype::Float32 => layer_norm_upstream::<f32>(
                    &out, &mean_o, &rstd_o, &a, &w, &b, eps as f32, m, n,
                )?,
                TnDtype::Float64 => {
                    layer_norm_upstream::<f64>(&out, &mean_o, &rstd_o, &a, &w, &b, eps, m, n)?
                }
                _ => false,
            }
        };
        if done {
            return Ok(());
        }
    }
    unsafe {
        dispatch_float!(a.dtype, "LayerNormKernelImpl", T, A => {
            let x: Vec<A> = gather_vec(&a, |v: T| v.to_acc())?;
            let wv: Option<Vec<A>> = match w { Some(t) => Some(read_param::<A>(&t)?), None => None };
            let bv: Option<Vec<A>> = match b { Some(t) => Some(read_param::<A>(&t)?), None => None };
            let eps_a = A::c(T::from_f64(eps).to_f64());
            let mut y: Vec<T> = vec![T::default(); m * n];
            let mut means = vec![0f64; m];
            let mut rstds = vec![0f64; m];
            for r in 0..m {
                let row = &x[r * n..(r + 1) * n];
                let mean = row.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
                let var = row.iter().map(|v| { let d = v.to_f64() - mean; d * d }).sum::<f64>() / n as f64;
                let (mean_a, var_a) = (A::c(mean), A::c(var));
                let rstd = A::ONE / (var_a + eps_a).sqrt();
                let bias = -rstd * mean_a;
                for j in 0..n {
                    let g = wv.as_ref().map(|v| v[j]).unwrap_or(A::ONE);
                    let bb = bv.as_ref().map(|v| v[j]).unwrap_or(A::ZERO);
                    y[r * n + j] = T::from_acc((row[j] * rstd + bias) * g + bb);
                }
                means[r] = mean_a.to_f64();
                rstds[r] = rstd.to_f64();
            }
            scatter_vec(&out, &y)?;
            crate::dispatch_all!(mean_o.dtype, "layer_norm", O => {
                scatter_vec(&mean_o, &means.iter().map(|&v| O::from_f64(v)).collect::<Vec<O>>())?;
                scatter_vec(&rstd_o, &rstds.iter().map(|&v| O::from_f64(v)).collect::<Vec<O>>())
            })
        })
    }
}

/// float32/float64 `native_layer_norm` in upstream's order (`vecmath::layer_norm_row`: Welford
/// moments over 8 (f32) or 4 (f64) lanes with the cascade, fused updates, the output by
/// `vec::map3`); `false` (nothing written) where the machine has no AVX2+FMA path.
#[allow(clippy::too_many_arguments)]
unsafe fn layer_norm_upstream<T: crate::vecmath::LayerNormRow + Default>(
    out: &Tensor,
    mean_o: &Tensor,
    rstd_o: &Tensor,
    a: &Tensor,
    w: &Option<Tensor>,
    b: &Option<Tensor>,
    eps: T,
    m: usize,
    n: usize,
) -> KResult<bool> {
    if crate::vecmath::lanes_avx2_kernel().is_none() {
        return Ok(false);
    }
    let x = as_contiguous::<T>(a)?;
    let wv = match w {
        Some(t) => Some(as_contiguous::<T>(t)?),
        None => None,
    };
    let bv = match b {
        Some(t) => Some(as_contiguous::<T>(t)?),
        None => None,
    };
    let direct = out.is_contiguous();
    let mut tmp: Vec<T> = if direct {
        Vec::new()
    } else {
        vec![T::default(); m * n]
    };
    let y: &mut [T] = if direct {
        std::slice::from_raw_parts_mut(out.data as *mut T, m * n)
    } else {
        &mut tmp
    };
    let mut means = vec![T::default(); m];
    let mut rstds = vec![T::default(); m];
    for r in 0..m {
        let (mean, rstd) = T::layer_norm_row(
            &x[r * n..(r + 1) * n],
            wv.as_deref(),
            bv.as_deref(),
            eps,
            &mut y[r * n..(r + 1) * n],
        )
        .ok_or_else(|| crate::kernel::runtime("internal: no vector layer_norm path"))?;
        means[r] = mean;
        rstds[r] = rstd;
    }
    if !direct {
        scatter_vec(out, &tmp)?;
    }
    scatter_vec(mean_o, &means)?;
    scatter_vec(rstd_o, &rstds)?;
    Ok(true)
}

/// A parameter vector (weight, bias, running stats) of any float dtype, read as `A`.
unsafe fn read_param<A: Real>(t: &Tensor) -> KResult<Vec<A>> {
    dispatch_float!(t.dtype, "param", P, _B => gather_vec(t, |v: P| A::c(v.to_f64())))
}

// ----------------------------------------------------------------------------------------------
// log_softmax backward

/// `_log_softmax_backward_data(grad_output, output, dim, input_dtype)` for float32 over the last
/// dim of contiguous rows, as upstream's `_vec_host_softmax_backward_lastdim<float, true>`:
/// `sum = vec::reduce_all(+, grad)` in the lanes of its capability, then `grad - exp(out) * sum`
/// with Sleef's exp on every element (`vec::map2` runs its tail as a partial vector). Other
/// dtypes and layouts are the core's composite (the op refuses them here).
fn log_softmax_backward(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (g, y) = (c.tensor(0)?, c.tensor(1)?);
    let n = *g.sizes.last().unwrap_or(&1) as usize;
    let contiguous = |t: &Tensor| t.strides == contiguous_strides(t.sizes).as_slice();
    let lanes = crate::vecmath::lanes_avx512_kernel();
    if out.dtype != TnDtype::Float32
        || g.dtype != TnDtype::Float32
        || y.dtype != TnDtype::Float32
        || lanes.is_none()
        || g.sizes != y.sizes
        || out.sizes != g.sizes
        || !(contiguous(&out) && contiguous(&g) && contiguous(&y))
    {
        bail!(
            not_implemented,
            "_log_softmax_backward_data: the cpu kernel takes contiguous float32 rows on AVX2/AVX512"
        );
    }
    let rows = g.numel().checked_div(n).unwrap_or(0);
    // SAFETY: three contiguous f32 buffers of rows * n elements (checked above).
    let (gs, ys, os) = unsafe {
        (
            std::slice::from_raw_parts(g.data as *const f32, rows * n),
            std::slice::from_raw_parts(y.data as *const f32, rows * n),
            std::slice::from_raw_parts_mut(out.data as *mut f32, rows * n),
        )
    };
    #[inline(always)]
    fn rows_w<const W: usize>(gs: &[f32], ys: &[f32], os: &mut [f32], n: usize) {
        for ((gr, yr), or) in gs.chunks(n).zip(ys.chunks(n)).zip(os.chunks_mut(n)) {
            let sum = crate::vecmath::reduce_all::<W>(|a, b| a + b, gr);
            for i in 0..n {
                // `x - exp(y) * sum`: GCC contracts the vector multiply and subtract of
                // upstream's build into one fused negative multiply-add
                or[i] = (-crate::vecmath::sleef_expf(yr[i])).mul_add(sum, gr[i]);
            }
        }
    }
    // compiled for the vector width, so that `mul_add` and the exp's polynomial are vector
    // instructions (the crate's baseline target would call libm's fma per element)
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    unsafe fn rows_16(gs: &[f32], ys: &[f32], os: &mut [f32], n: usize) {
        rows_w::<16>(gs, ys, os, n)
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_8(gs: &[f32], ys: &[f32], os: &mut [f32], n: usize) {
        rows_w::<8>(gs, ys, os, n)
    }
    if n > 0 {
        // SAFETY: `lanes` is Some only where the machine has AVX2+FMA (16: AVX-512 too).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            match lanes {
                Some(16) => rows_16(gs, ys, os, n),
                _ => rows_8(gs, ys, os, n),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        match lanes {
            Some(16) => rows_w::<16>(gs, ys, os, n),
            _ => rows_w::<8>(gs, ys, os, n),
        }
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// batch norm (inference)

/// `_native_batch_norm_legit_no_training(input, weight?, bias?, running_mean, running_var,
/// momentum, eps) -> (out, save_mean, save_invstd)` (the last two are empty). Per channel (dim 1):
/// `invstd = 1 / sqrt(var + eps)`, `alpha = invstd * w`, `beta = b - mean * alpha`,
/// `y = x * alpha + beta` (upstream's `batch_norm_cpu_collect_linear_and_constant_terms`).
fn batch_norm_eval(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let (w, b) = (c.opt_tensor(1)?, c.opt_tensor(2)?);
    let (rm, rv) = (c.tensor(3)?, c.tensor(4)?);
    let eps = c.float(6)?;
    if a.ndim() < 2 {
        bail!(
            runtime,
            "batch_norm: expected an input with at least 2 dims, got {:?}",
            a.sizes
        );
    }
    let ch = a.size(1);
    unsafe {
        dispatch_float!(a.dtype, "batch_norm", T, A => {
            let mean: Vec<A> = read_param(&rm)?;
            let var: Vec<A> = read_param(&rv)?;
            let wv: Option<Vec<A>> = match w { Some(t) => Some(read_param::<A>(&t)?), None => None };
            let bv: Option<Vec<A>> = match b { Some(t) => Some(read_param::<A>(&t)?), None => None };
            if mean.len() != ch || var.len() != ch {
                bail!(runtime, "batch_norm: running stats of {} elements for {ch} channels", mean.len());
            }
            let mut alpha = vec![A::ZERO; ch];
            let mut beta = vec![A::ZERO; ch];
            for k in 0..ch {
                // In the compute type, as upstream: `1 / std::sqrt(var + static_cast<opmath_t>(eps))`.
                let invstd = A::ONE / (var[k] + A::c(eps)).sqrt();
                alpha[k] = invstd * wv.as_ref().map(|v| v[k]).unwrap_or(A::ONE);
                beta[k] = bv.as_ref().map(|v| v[k]).unwrap_or(A::ZERO) - mean[k] * alpha[k];
            }
            // A pseudo-operand whose running address is the channel index.
            let mut cs = vec![0i64; a.ndim()];
            cs[1] = 1;
            let plan = Plan::<3>::new(a.sizes, [out.strides, a.strides, &cs], [out.itemsize(), a.itemsize(), 1])?;
            plan.run([out.data, a.data, std::ptr::null_mut()], |p, s, n| {
                for i in 0..n as isize {
                    let k = (p[2] as isize + i * s[2]) as usize;
                    let x = (p[1].wrapping_offset(i * s[1]) as *const T).read().to_acc();
                    (p[0].wrapping_offset(i * s[0]) as *mut T).write(T::from_acc(x * alpha[k] + beta[k]));
                }
            });
            Ok(())
        })
    }
}

/// `native_batch_norm(input, weight?, bias?, running_mean?, running_var?, training=True,
/// momentum, eps) -> (out, save_mean, save_invstd)` for contiguous float32/float64 inputs with
/// parameters of the input's dtype, in upstream's order (batch_norm_kernel.cpp
/// `batch_norm_cpu_collect_stats_contiguous_impl`, Normalization.cpp
/// `batch_norm_cpu_update_stats_template`): per channel the sum in double, `mean = sum / N`;
/// `var_sum` the double sum of `(x - mean)^2` computed in the dtype; `invstd = 1 / sqrt(var_sum
/// / N + eps)` in double; the running statistics updated in place in double (`momentum * new +
/// (1 - momentum) * old`, the unbiased variance `var_sum / (N - 1)`); then `x * alpha + beta`
/// with `alpha = invstd * w`, `beta = b - mean * alpha`. Everything else is the core's
/// composition (the op refuses it here).
fn batch_norm_train(c: &mut Call) -> KResult {
    let (out, save_mean, save_invstd) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let x = c.tensor(0)?;
    let (w, b) = (c.opt_tensor(1)?, c.opt_tensor(2)?);
    let (rm, rv) = (c.opt_tensor(3)?, c.opt_tensor(4)?);
    let (training, momentum, eps) = (c.bool(5)?, c.float(6)?, c.float(7)?);
    let dt = x.dtype;
    let params_ok = [&w, &b, &rm, &rv].iter().all(|t| {
        t.as_ref()
            .is_none_or(|t| t.dtype == dt && t.ndim() == 1 && t.is_contiguous())
    });
    let outs_ok = [&out, &save_mean, &save_invstd]
        .iter()
        .all(|t| t.dtype == dt && t.is_contiguous());
    if !training
        || !matches!(dt, TnDtype::Float32 | TnDtype::Float64)
        || x.ndim() < 2
        || !x.is_contiguous()
        || !params_ok
        || !outs_ok
        || out.sizes != x.sizes
    {
        bail!(
            not_implemented,
            "native_batch_norm: the cpu kernel takes training mode on contiguous float32/float64 inputs with parameters of their dtype"
        );
    }
    let (nb, ch) = (x.size(0), x.size(1));
    let image = x.numel().checked_div(nb * ch).unwrap_or(0);
    let n = nb * image;
    if n <= 1 || save_mean.numel() != ch || save_invstd.numel() != ch {
        bail!(
            runtime,
            "native_batch_norm: {n} values per channel for {ch} channels"
        );
    }
    // upstream's AVX2/AVX512 builds contract `x * alpha + beta` and `b - mean * alpha` into
    // fused multiply-adds; its default build does not
    let fused = crate::vecmath::capability() != crate::vecmath::Cap::Default;
    macro_rules! run {
        ($T:ty) => {{
            // SAFETY: contiguous views of the sizes checked above.
            let xs = std::slice::from_raw_parts(x.data as *const $T, x.numel());
            let param = |t: &Option<Tensor>, k: usize, dflt: $T| {
                t.as_ref()
                    .map(|t| *(t.data as *const $T).add(k))
                    .unwrap_or(dflt)
            };
            for k in 0..ch {
                let plane = |bi: usize| &xs[(bi * ch + k) * image..(bi * ch + k + 1) * image];
                let mut sum = 0f64;
                for bi in 0..nb {
                    for &v in plane(bi) {
                        sum += v as f64;
                    }
                }
                let mean = (sum / n as f64) as $T;
                let mut var_acc = 0f64;
                for bi in 0..nb {
                    for &v in plane(bi) {
                        let d = v - mean;
                        var_acc += (d * d) as f64;
                    }
                }
                let var_sum = var_acc as $T;
                let var = (var_sum / n as $T) as f64;
                let invstd = if var != 0.0 || eps != 0.0 {
                    (1.0 / (var + eps).sqrt()) as $T
                } else {
                    0.0
                };
                *(save_mean.data as *mut $T).add(k) = mean;
                *(save_invstd.data as *mut $T).add(k) = invstd;
                if let Some(t) = &rm {
                    let p = (t.data as *mut $T).add(k);
                    *p = (momentum as $T) * mean + ((1.0 - momentum) as $T) * *p;
                }
                if let Some(t) = &rv {
                    let unbiased = (var_sum / (n - 1) as $T) as f64;
                    let p = (t.data as *mut $T).add(k);
                    *p = (momentum * unbiased + (1.0 - momentum) * *p as f64) as $T;
                }
                let alpha = invstd * param(&w, k, 1.0);
                let bias = param(&b, k, 0.0);
                let beta = if fused {
                    (-mean).mul_add(alpha, bias)
                } else {
                    bias - mean * alpha
                };
                for bi in 0..nb {
                    let off = (bi * ch + k) * image;
                    let (src, dst) = (xs.as_ptr().add(off), (out.data as *mut $T).add(off));
                    let f = move |[v]: [$T; 1]| v.mul_add(alpha, beta);
                    if !(fused && crate::strided::zip_fma::<$T, 1>(dst, [src], image, f)) {
                        for i in 0..image {
                            *dst.add(i) = *src.add(i) * alpha + beta;
                        }
                    }
                }
            }
            Ok(())
        }};
    }
    unsafe {
        match dt {
            TnDtype::Float32 => run!(f32),
            _ => run!(f64),
        }
    }
}

/// `native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?, save_mean?,
/// save_invstd?, train, eps, output_mask) -> (grad_input, grad_weight, grad_bias)` for
/// contiguous float32 inputs of more than one element per plane, as upstream's
/// `batch_norm_cpu_backward_contiguous_impl` (batch_norm_kernel.cpp, registered with
/// `REGISTER_DISPATCH` alone: its AVX2 build, 8 lanes, on AVX2 and AVX512 machines). Per channel
/// `sum` and `dotp` in double, each plane adding `vec::reduce_all(+, dy)` and
/// `vec::map2_reduce_all((x - mean) * dy, +)`; training: `k = (float)dotp * invstd * invstd / N`,
/// `grad_mean = sum / N`, `dx = (dy - grad_mean - (x - mean) * k) * invstd * w` (upstream's build
/// fuses the product into the subtraction); evaluation: `invstd = 1 / sqrt(running_var + eps)`,
/// `dx = dy * invstd * w`; `grad_weight = dotp * invstd`, `grad_bias = sum`. All three outputs
/// are written whatever the mask (the core drops the ones not asked for). Other dtypes and
/// layouts are the core's composition (the op refuses them here).
fn batch_norm_backward(c: &mut Call) -> KResult {
    let (dx, dw, db) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let (g, x) = (c.tensor(0)?, c.tensor(1)?);
    let w = c.opt_tensor(2)?;
    let (rm, rv) = (c.opt_tensor(3)?, c.opt_tensor(4)?);
    let (sm, si) = (c.opt_tensor(5)?, c.opt_tensor(6)?);
    let (train, eps) = (c.bool(7)?, c.float(8)?);
    let f32_vec = |t: &Tensor, n: usize| {
        t.dtype == TnDtype::Float32 && t.ndim() == 1 && t.is_contiguous() && t.numel() == n
    };
    let ch = if x.ndim() >= 2 { x.size(1) } else { 0 };
    let nb = if x.ndim() >= 2 { x.size(0) } else { 0 };
    let image = x.numel().checked_div(nb * ch).unwrap_or(0);
    let (mean_src, var_src) = if train { (&sm, &si) } else { (&rm, &rv) };
    let lanes = crate::vecmath::lanes_avx2_kernel();
    if lanes.is_none()
        || x.ndim() < 3
        || image < 2
        || x.dtype != TnDtype::Float32
        || g.dtype != TnDtype::Float32
        || g.sizes != x.sizes
        || dx.sizes != x.sizes
        || !(x.is_contiguous()
            && g.is_contiguous()
            && dx.is_contiguous()
            && dx.dtype == TnDtype::Float32)
        || !(f32_vec(&dw, ch) && f32_vec(&db, ch))
        || !w.as_ref().is_none_or(|t| f32_vec(t, ch))
        || !mean_src.as_ref().is_some_and(|t| f32_vec(t, ch))
        || !var_src.as_ref().is_some_and(|t| f32_vec(t, ch))
    {
        bail!(
            not_implemented,
            "native_batch_norm_backward: the cpu kernel takes contiguous float32 inputs of more than one element per plane on AVX2/AVX512"
        );
    }
    let slice =
        |t: &Tensor, n: usize| unsafe { std::slice::from_raw_parts(t.data as *const f32, n) };
    // SAFETY: contiguous float32 buffers of the sizes checked above.
    let p = BnBackward {
        x: slice(&x, x.numel()),
        g: slice(&g, x.numel()),
        w: w.as_ref().map(|t| slice(t, ch)),
        mean: slice(mean_src.as_ref().unwrap(), ch),
        var: slice(var_src.as_ref().unwrap(), ch),
        nb,
        ch,
        image,
        train,
        eps,
    };
    unsafe {
        let dx = std::slice::from_raw_parts_mut(dx.data as *mut f32, x.numel());
        let dw = std::slice::from_raw_parts_mut(dw.data as *mut f32, ch);
        let db = std::slice::from_raw_parts_mut(db.data as *mut f32, ch);
        bn_backward_avx2(&p, dx, dw, db);
    }
    Ok(())
}

struct BnBackward<'a> {
    x: &'a [f32],
    g: &'a [f32],
    w: Option<&'a [f32]>,
    /// save_mean and save_invstd (training), running_mean and running_var (evaluation)
    mean: &'a [f32],
    var: &'a [f32],
    nb: usize,
    ch: usize,
    image: usize,
    train: bool,
    eps: f64,
}

// compiled with FMA, so that `mul_add` is one instruction (the crate's baseline target would call
// libm's fma per element)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn bn_backward_avx2(p: &BnBackward, dx: &mut [f32], dw: &mut [f32], db: &mut [f32]) {
    bn_backward_body(p, dx, dw, db)
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn bn_backward_avx2(p: &BnBackward, dx: &mut [f32], dw: &mut [f32], db: &mut [f32]) {
    bn_backward_body(p, dx, dw, db)
}

#[inline(always)]
fn bn_backward_body(p: &BnBackward, dx: &mut [f32], dw: &mut [f32], db: &mut [f32]) {
    let (nb, ch, image) = (p.nb, p.ch, p.image);
    let n = nb * image;
    for k in 0..ch {
        let wk = p.w.map_or(1.0, |w| w[k]);
        let mean = p.mean[k];
        let invstd = if p.train {
            p.var[k]
        } else {
            (1.0 / (p.var[k] as f64 + p.eps).sqrt()) as f32
        };
        let plane = |bi: usize| (bi * ch + k) * image..(bi * ch + k + 1) * image;
        let (mut sum, mut dotp) = (0f64, 0f64);
        for bi in 0..nb {
            let r = plane(bi);
            sum += crate::vecmath::reduce_all::<8>(|a, b| a + b, &p.g[r.clone()]) as f64;
            dotp += centered_dot::<8>(&p.x[r.clone()], &p.g[r], mean) as f64;
        }
        if p.train {
            let kk = (dotp as f32) * invstd * invstd / n as f32;
            let grad_mean = (sum / n as f64) as f32;
            for bi in 0..nb {
                let r = plane(bi);
                for ((o, &xv), &dy) in dx[r.clone()].iter_mut().zip(&p.x[r.clone()]).zip(&p.g[r]) {
                    *o = (-(xv - mean)).mul_add(kk, dy - grad_mean) * invstd * wk;
                }
            }
        } else {
            for bi in 0..nb {
                let r = plane(bi);
                for (o, &dy) in dx[r.clone()].iter_mut().zip(&p.g[r]) {
                    *o = dy * invstd * wk;
                }
            }
        }
        dw[k] = (dotp * invstd as f64) as f32;
        db[k] = sum as f32;
    }
}

/// `vec::map2_reduce_all((x - mean) * y, +)` with `W` lanes: the first vector's products, then
/// each vector's products added to the running sums; the tail's products fused into the first
/// lanes' sums (upstream's build contracts the masked `Vec::set` step into a multiply-add, not
/// the main loop: measured bit for bit, tests/test_training_kernels.py), then the shuffle tree;
/// a row shorter than a vector folds its products into lane 0 in order.
#[inline(always)]
fn centered_dot<const W: usize>(x: &[f32], y: &[f32], mean: f32) -> f32 {
    let n = x.len();
    if n < W {
        let mut a = (x[0] - mean) * y[0];
        for i in 1..n {
            a += (x[i] - mean) * y[i];
        }
        return a;
    }
    let mut acc = [0f32; W];
    for l in 0..W {
        acc[l] = (x[l] - mean) * y[l];
    }
    let mut d = W;
    while d + W <= n {
        for l in 0..W {
            acc[l] += (x[d + l] - mean) * y[d + l];
        }
        d += W;
    }
    for l in 0..n - d {
        acc[l] = (x[d + l] - mean).mul_add(y[d + l], acc[l]);
    }
    crate::vecmath::reduce_lanes::<W>(|a, b| a + b, acc)
}

// ----------------------------------------------------------------------------------------------
// scaled dot-product attention (the CPU flash overload)

/// The strides that read an attention mask right-aligned to `full` (`[B, H, L, S]`), 0 on the
/// dims it broadcasts along.
fn mask_strides(m: &Tensor, full: [usize; 4]) -> [isize; 4] {
    let nd = m.ndim();
    let mut st = [0isize; 4];
    for d in 0..nd.min(4) {
        let fd = 4 - nd.min(4) + d;
        let md = nd - nd.min(4) + d;
        st[fd] = if m.size(md) == 1 && full[fd] != 1 {
            0
        } else {
            m.stride(md)
        };
    }
    st
}

/// `_scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
/// logsumexp, dropout_p, is_causal, *, attn_mask=None, scale=None) -> (grad_query, grad_key,
/// grad_value)`: float32 without dropout (flash.rs, upstream's blocked backward); the core
/// composes the other dtypes. Key/value may have fewer heads than the query (grouped-query
/// attention, as the forward reads them).
fn sdpa_backward(c: &mut Call) -> KResult {
    let (gq, gk, gv) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let (go, q, k, v) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?, c.tensor(3)?);
    let (o, lse) = (c.tensor(4)?, c.tensor(5)?);
    let dropout = c.float(6)?;
    let causal = c.bool(7)?;
    let mask = c.opt_tensor(8)?;
    let scale = c.opt_float(9)?;
    if dropout > 0.0 {
        bail!(not_implemented, "_scaled_dot_product_flash_attention_for_cpu_backward: dropout_p > 0 is not implemented by the cpu backend");
    }
    let four = [&go, &q, &k, &v, &o, &gq, &gk, &gv]
        .iter()
        .all(|t| t.ndim() == 4);
    if !four || lse.ndim() != 3 {
        bail!(runtime, "_scaled_dot_product_flash_attention_for_cpu_backward: expected 4-d query, key, value, out and grad_out and 3-d logsumexp");
    }
    let (bn, hn, ln, e) = (q.size(0), q.size(1), q.size(2), q.size(3));
    let (kh, sn) = (k.size(1), k.size(2));
    let same = |t: &Tensor, s: [usize; 4]| (0..4).all(|d| t.size(d) == s[d]);
    if kh == 0
        || hn % kh != 0
        || !same(&k, [bn, kh, sn, e])
        || !same(&v, [bn, kh, sn, e])
        || !same(&o, [bn, hn, ln, e])
        || !same(&go, [bn, hn, ln, e])
        || !(0..3).all(|d| lse.size(d) == [bn, hn, ln][d])
    {
        bail!(runtime, "_scaled_dot_product_flash_attention_for_cpu_backward: the shapes of grad_out, query, key, value, out and logsumexp do not agree");
    }
    let all_f32 = [
        go.dtype, q.dtype, k.dtype, v.dtype, o.dtype, lse.dtype, gq.dtype, gk.dtype, gv.dtype,
    ]
    .iter()
    .all(|&d| d == TnDtype::Float32);
    if !all_f32 || mask.as_ref().is_some_and(|m| m.dtype != TnDtype::Float32) {
        bail!(not_implemented, "_scaled_dot_product_flash_attention_for_cpu_backward: the cpu backend's kernel takes float32 operands and mask");
    }
    let sc = scale.unwrap_or(1.0 / (e as f64).sqrt());
    let m = mask
        .as_ref()
        .map(|m| (m, mask_strides(m, [bn, hn, ln, sn])));
    crate::flash::sdpa_backward_f32(
        &go,
        &q,
        &k,
        &v,
        &o,
        &lse,
        hn / kh,
        m,
        causal,
        sc as f32,
        &gq,
        &gk,
        &gv,
    )
}

/// `_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0,
/// is_causal=False, *, attn_mask=None, scale=None) -> (output, logsumexp)`.
/// q `[B, H, L, E]`, k `[B, H, S, E]`, v `[B, H, S, Ev]`; per query row: scores `q·k * scale`
/// (scale defaults to `1/sqrt(E)`), plus the additive mask (a bool mask keeps `true`), causal
/// rows mask `j > i`; softmax in f32/f64; `logsumexp = max + log(sum)`. A row with every score
/// masked gives output 0 and logsumexp -inf. `dropout_p > 0` needs the core's RNG: refused.
fn sdpa(c: &mut Call) -> KResult {
    let (o, lse) = (c.out(0)?, c.out(1)?);
    let (q, k, v) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let dropout = c.float(3)?;
    let causal = c.bool(4)?;
    let mask = c.opt_tensor(5)?;
    let scale = c.opt_float(6)?;
    if dropout > 0.0 {
        bail!(not_implemented, "_scaled_dot_product_flash_attention_for_cpu: dropout_p > 0 needs the core's RNG; the cpu backend computes dropout_p == 0 only");
    }
    if q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4 {
        bail!(
            runtime,
            "scaled_dot_product_attention_flash_attention: expected 4-d query, key and value"
        );
    }
    let (bn, hn, ln, e) = (q.size(0), q.size(1), q.size(2), q.size(3));
    let (sn, ev) = (k.size(2), v.size(3));
    if k.size(3) != e || v.size(3) != e {
        bail!(
            runtime,
            "scaled_dot_product_attention_flash_attention: Q/K/V should have the same head size"
        );
    }
    // Grouped-query attention as upstream's fused kernel takes it: key/value with fewer heads,
    // each serving `group` consecutive query heads (read in place, not repeated).
    let kh = k.size(1);
    if v.size(1) != kh
        || k.size(0) != bn
        || v.size(0) != bn
        || v.size(2) != sn
        || kh == 0
        || hn % kh != 0
    {
        bail!(
            runtime,
            "scaled_dot_product_attention_flash_attention: key/value of {kh} heads do not serve {hn} query heads"
        );
    }
    let group = hn / kh;
    if let Some(m) = &mask {
        if m.dtype != q.dtype {
            bail!(runtime, "scaled_dot_product_attention_flash_attention: Attention mask is the same data type as query");
        }
    }
    let sc = scale.unwrap_or(1.0 / (e as f64).sqrt());
    // The mask, right-aligned to [B, H, L, S] with stride 0 on broadcast dims.
    let mask_view = mask.map(|m| {
        let st = mask_strides(&m, [bn, hn, ln, sn]);
        (m, st)
    });
    let all_f32 = [q.dtype, k.dtype, v.dtype, o.dtype, lse.dtype]
        .iter()
        .all(|&d| d == TnDtype::Float32);
    if all_f32
        && mask_view
            .as_ref()
            .is_none_or(|(m, _)| m.dtype == TnDtype::Float32)
    {
        // upstream's blocked flash attention, step for step (flash.rs)
        let m = mask_view.as_ref().map(|(m, st)| (m, *st));
        return crate::flash::sdpa_f32(&q, &k, &v, group, m, causal, sc as f32, &o, &lse);
    }
    unsafe {
        dispatch_float!(q.dtype, "flash_attention", T, A => {
            let sc_a = A::c(sc);
            // Per (batch, head): the operands gathered contiguous in the accumulation type, the
            // score matrix `q @ k^T * scale` and the product `p @ v` by the gemm crate (the
            // engine of mm), the masked softmax row by row between them.
            let gather = |t: &Tensor, b: usize, h: usize, rows: usize, cols: usize| -> Vec<A> {
                let mut out = Vec::with_capacity(rows * cols);
                let base = b as isize * t.stride(0) + h as isize * t.stride(1);
                for r in 0..rows {
                    let rb = base + r as isize * t.stride(2);
                    for d in 0..cols {
                        out.push(t.read::<T>(rb + d as isize * t.stride(3)).to_acc());
                    }
                }
                out
            };
            let mut scores = vec![A::ZERO; ln * sn];
            let mut acc = vec![A::ZERO; ln * ev];
            for b in 0..bn {
                for h in 0..hn {
                    let qm = gather(&q, b, h, ln, e);
                    let km = gather(&k, b, h / group, sn, e);
                    let vm = gather(&v, b, h / group, sn, ev);
                    if e > 0 {
                        // scores[i, j] = scale * sum_d q[i, d] * k[j, d]
                        crate::threads::gemm(ln, sn, e, scores.as_mut_ptr(), 1, sn as isize, false,
                                   qm.as_ptr(), 1, e as isize, km.as_ptr(), e as isize, 1,
                                   A::ZERO, sc_a);
                    } else {
                        scores.iter_mut().for_each(|x| *x = A::ZERO);
                    }
                    let mut sums = vec![A::ZERO; ln];
                    // a row with every key masked: upstream takes max 0 and sum 1, so lse 0
                    let mut lses = vec![A::ZERO; ln];
                    let mut live = vec![false; ln]; // rows with at least one unmasked score
                    let f32_rows = mask_view.is_none() && std::any::TypeId::of::<A>() == std::any::TypeId::of::<f32>();
                    for i in 0..ln {
                        let row = &mut scores[i * sn..(i + 1) * sn];
                        if f32_rows {
                            // SAFETY: A is f32 (checked above).
                            let r32 = std::slice::from_raw_parts_mut(row.as_mut_ptr().cast::<f32>(), row.len());
                            let from = if causal { i + 1 } else { sn };
                            if let Some((m, sum)) = crate::vecmath::attention_row_f32(r32, from) {
                                sums[i] = A::c(sum as f64);
                                lses[i] = A::c(m as f64) + A::c(sum as f64).ln();
                                live[i] = true;
                                continue;
                            }
                        }
                        let mut m = A::NAN;
                        let mut any = false;
                        for (j, slot) in row.iter_mut().enumerate() {
                            let mut s = *slot;
                            if let Some((mt, st)) = &mask_view {
                                let off: isize = b as isize * st[0] + h as isize * st[1] + i as isize * st[2] + j as isize * st[3];
                                if mt.dtype == TnDtype::Bool {
                                    if mt.read::<u8>(off) == 0 {
                                        s = -A::INF;
                                    }
                                } else {
                                    s += crate::dispatch_float!(mt.dtype, "attn_mask", M, _B => A::c(mt.read::<M>(off).to_f64()));
                                }
                            }
                            if causal && j > i {
                                s = -A::INF;
                            }
                            *slot = s;
                            if s != -A::INF {
                                m = if any { crate::binary::fmax_nan(m, s) } else { s };
                                any = true;
                            }
                        }
                        let mut sum = A::ZERO;
                        let fast = any && m.to_f64().is_finite() && std::any::TypeId::of::<A>() == std::any::TypeId::of::<f32>();
                        if fast {
                            // a finite maximum: unmasked scores are finite and s - m <= 0
                            // (exp_f32_fast's domain); masked ones (-inf) give 0
                            // SAFETY: A is f32 (checked above).
                            let r32 = std::slice::from_raw_parts_mut(row.as_mut_ptr().cast::<f32>(), row.len());
                            let m32 = m.to_f64() as f32;
                            for v in r32.iter_mut() {
                                *v = if *v == f32::NEG_INFINITY { f32::NEG_INFINITY } else { *v - m32 };
                            }
                            exp_f32_fast_inplace(r32);
                            for slot in row.iter() {
                                sum += *slot;
                            }
                        } else {
                            for slot in row.iter_mut() {
                                let p = if !any || *slot == -A::INF { A::ZERO } else { (*slot - m).exp() };
                                sum += p;
                                *slot = p;
                            }
                        }
                        if any {
                            sums[i] = sum;
                            lses[i] = m + sum.ln();
                            live[i] = true;
                        }
                    }
                    if sn > 0 {
                        // acc[i, d] = sum_j p[i, j] * v[j, d]
                        crate::threads::gemm(ln, ev, sn, acc.as_mut_ptr(), 1, ev as isize, false,
                                   scores.as_ptr(), 1, sn as isize, vm.as_ptr(), 1, ev as isize,
                                   A::ZERO, A::ONE);
                    } else {
                        acc.iter_mut().for_each(|x| *x = A::ZERO);
                    }
                    for i in 0..ln {
                        let any = live[i];
                        for d in 0..ev {
                            // upstream multiplies by the sum's reciprocal
                            let val = if any { acc[i * ev + d] * (A::ONE / sums[i]) } else { A::ZERO };
                            let off: isize = b as isize * o.stride(0) + h as isize * o.stride(1) + i as isize * o.stride(2) + d as isize * o.stride(3);
                            o.write::<T>(off, T::from_acc(val));
                        }
                        let off: isize = b as isize * lse.stride(0) + h as isize * lse.stride(1) + i as isize * lse.stride(2);
                        let l = lses[i];
                        crate::dispatch_float!(lse.dtype, "logsumexp", L, _C => lse.write::<L>(off, L::from_f64(l.to_f64())));
                    }
                }
            }
            Ok(())
        })
    }
}

// ----------------------------------------------------------------------------------------------
// a vectorisable exp for softmax rows

/// Whether `_softmax`/`_log_softmax` rows use `exp_f32_fast_inplace` (see `softmax`).
const FAST_SOFTMAX_EXP: bool = false;

/// `buf` (cleared and resized to `n`) seen as f32s when the accumulation type is f32.
fn as_f32_buf<A: Real>(buf: &mut Vec<A>, n: usize) -> Option<&mut [f32]> {
    if std::any::TypeId::of::<A>() != std::any::TypeId::of::<f32>() {
        return None;
    }
    buf.clear();
    buf.resize(n, A::ZERO);
    // SAFETY: A is f32 (checked above), so the buffer holds n f32s.
    Some(unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut f32, n) })
}

/// `exp` of every element, for arguments that are -inf or finite and <= 0 (a softmax row minus
/// its maximum): Cephes' `expf` (x = n ln2 + r, |r| <= ln2/2, a degree-5 polynomial; about 1 ulp,
/// as upstream's vectorised Sleef exp is), branch-free so the loop vectorises; arguments below
/// -87.3 (where exp leaves the normal range) and -inf give 0.
pub fn exp_f32_fast_inplace(xs: &mut [f32]) {
    for v in xs.iter_mut() {
        let x0 = *v;
        let x = x0.max(-87.336_54);
        let t = x * std::f32::consts::LOG2_E + 12_582_912.0; // 1.5 * 2^23: rounds to an integer
        let n = t - 12_582_912.0;
        let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
        let r2 = r * r;
        let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2)
            * r
            + 1.666_666_5e-1)
            * r
            + 0.5;
        let y = p * r2 + r + 1.0;
        let ni = (t.to_bits() as i32).wrapping_sub(0x4B40_0000);
        let e = y * f32::from_bits((ni.wrapping_add(127) << 23) as u32);
        *v = if x0 < -87.336_54 { 0.0 } else { e };
    }
}

#[cfg(test)]
mod exp_tests {
    #[test]
    fn fast_exp_is_within_two_ulp_of_libm_on_softmax_arguments() {
        let mut xs: Vec<f32> = (0..200_000).map(|i| -(i as f32) * 4.4e-4).collect();
        xs.extend([0.0, -1e-30, -87.0, -87.3, -88.0, -1000.0, f32::NEG_INFINITY]);
        let mut ys = xs.clone();
        super::exp_f32_fast_inplace(&mut ys);
        for (&x, &y) in xs.iter().zip(&ys) {
            let want = x.exp();
            if x < -87.336_54 {
                assert_eq!(y, 0.0, "exp({x})");
                continue;
            }
            let ulp = (want.to_bits() as i64 - y.to_bits() as i64).abs();
            assert!(ulp <= 2, "exp({x}) = {y}, libm {want} ({ulp} ulp)");
        }
    }
}

//! Discrete Fourier transforms: `_fft_c2c`, `_fft_r2c` and `_fft_c2r`, on rustfft and realfft.
//!
//! The core's `torch.fft` functions (upstream's SpectralOps.cpp: dtype promotion, padding or
//! trimming to `n`, the norm string, the conjugations of `hfft`/`ihfft`) reduce every transform to
//! these three primitives, as upstream's do. A kernel copies its input into one contiguous buffer,
//! transforms along each listed dim in turn (`_fft_r2c` starts with the real-to-complex transform
//! along the last listed dim, `_fft_c2r` ends with the complex-to-real one), scales once and writes
//! the output. Upstream's CPU build runs MKL's or pocketfft's transforms, so the results agree
//! within a transform's rounding (a few ulp times log n), not bit for bit.

use std::cell::RefCell;
use std::sync::Arc;

use rayon::prelude::*;
use realfft::RealFftPlanner;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftNum, FftPlanner};
use torchnative_backend::abi::TnDtype;

use crate::kernel::{unsupported_dtype, Call, KResult, Tensor};
use crate::{bail, kernels};

kernels! {
    k_fft_c2c = "aten::_fft_c2c" => |c| c2c(c);
    k_fft_r2c = "aten::_fft_r2c" => |c| r2c(c);
    k_fft_c2r = "aten::_fft_c2r" => |c| c2r(c);
}

/// Plans are cached per thread: planning a size costs more than transforming it once.
struct Planners {
    c32: FftPlanner<f32>,
    c64: FftPlanner<f64>,
    r32: RealFftPlanner<f32>,
    r64: RealFftPlanner<f64>,
}

thread_local! {
    static PLANNERS: RefCell<Planners> = RefCell::new(Planners {
        c32: FftPlanner::new(),
        c64: FftPlanner::new(),
        r32: RealFftPlanner::new(),
        r64: RealFftPlanner::new(),
    });
}

/// The element types a transform runs in, with their cached planners.
trait Real: FftNum + Default {
    fn complex_plan(n: usize, forward: bool) -> Arc<dyn Fft<Self>>;
    fn real_forward(n: usize) -> Arc<dyn realfft::RealToComplex<Self>>;
    fn real_inverse(n: usize) -> Arc<dyn realfft::ComplexToReal<Self>>;
}

macro_rules! real_impl {
    ($t:ty, $c:ident, $r:ident) => {
        impl Real for $t {
            fn complex_plan(n: usize, forward: bool) -> Arc<dyn Fft<Self>> {
                PLANNERS.with(|p| {
                    let p = &mut p.borrow_mut().$c;
                    if forward {
                        p.plan_fft_forward(n)
                    } else {
                        p.plan_fft_inverse(n)
                    }
                })
            }
            fn real_forward(n: usize) -> Arc<dyn realfft::RealToComplex<Self>> {
                PLANNERS.with(|p| p.borrow_mut().$r.plan_fft_forward(n))
            }
            fn real_inverse(n: usize) -> Arc<dyn realfft::ComplexToReal<Self>> {
                PLANNERS.with(|p| p.borrow_mut().$r.plan_fft_inverse(n))
            }
        }
    };
}
real_impl!(f32, c32, r32);
real_impl!(f64, c64, r64);

/// Calls `f` with the element offset of every index of `sizes`/`strides`, in row-major order.
fn for_each_offset(sizes: &[i64], strides: &[i64], mut f: impl FnMut(isize)) {
    let n: i64 = sizes.iter().product();
    let nd = sizes.len();
    let mut idx = vec![0i64; nd];
    let mut off = 0isize;
    for _ in 0..n {
        f(off);
        let mut d = nd;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            off += strides[d] as isize;
            if idx[d] < sizes[d] {
                break;
            }
            off -= (strides[d] * sizes[d]) as isize;
            idx[d] = 0;
        }
    }
}

/// The tensor's elements, contiguous in row-major order.
///
/// # Safety
/// `E` must be the tensor's element type.
unsafe fn gather<E: Copy>(t: &Tensor) -> Vec<E> {
    let n = t.numel();
    if t.is_contiguous() {
        return std::slice::from_raw_parts(t.data as *const E, n).to_vec();
    }
    let mut v = Vec::with_capacity(n);
    for_each_offset(t.sizes, t.strides, |o| v.push(t.read::<E>(o)));
    v
}

/// Writes row-major `v` into the tensor's elements.
///
/// # Safety
/// As [`gather`]; `v` holds the tensor's element count.
unsafe fn scatter<E: Copy>(t: &Tensor, v: &[E]) {
    if t.is_contiguous() {
        std::ptr::copy_nonoverlapping(v.as_ptr(), t.data as *mut E, v.len());
        return;
    }
    let mut i = 0;
    for_each_offset(t.sizes, t.strides, |o| {
        t.write(o, v[i]);
        i += 1;
    });
}

/// `(outer, inner)`: the element counts before and after dim `d` of a row-major `shape`.
fn around(shape: &[usize], d: usize) -> (usize, usize) {
    (shape[..d].iter().product(), shape[d + 1..].iter().product())
}

/// Transforms every line of a contiguous complex buffer along dim `d`, unscaled.
fn c2c_along<T: Real>(buf: &mut [Complex<T>], shape: &[usize], d: usize, forward: bool) {
    let n = shape[d];
    if buf.is_empty() || n <= 1 {
        return;
    }
    let fft = T::complex_plan(n, forward);
    let scratch_len = fft.get_inplace_scratch_len();
    let (_, inner) = around(shape, d);
    if inner == 1 {
        // contiguous lines: rustfft transforms a run of them in one call; large buffers in
        // blocks across the pool
        let block = n * (LINES_PER_TASK / n).max(1);
        if buf.len() > block {
            buf.par_chunks_mut(block).for_each_init(
                || vec![Complex::<T>::default(); scratch_len],
                |scratch, chunk| fft.process_with_scratch(chunk, scratch),
            );
        } else {
            fft.process_with_scratch(buf, &mut vec![Complex::<T>::default(); scratch_len]);
        }
        return;
    }
    // lines `inner` apart: each [n, inner] block transposed to [inner, n], transformed as
    // contiguous lines, transposed back
    buf.par_chunks_mut(n * inner).for_each_init(
        || {
            (
                vec![Complex::<T>::default(); n * inner],
                vec![Complex::<T>::default(); scratch_len],
            )
        },
        |(tmp, scratch), block| {
            for k in 0..n {
                for i in 0..inner {
                    tmp[i * n + k] = block[k * inner + i];
                }
            }
            fft.process_with_scratch(tmp, scratch);
            for k in 0..n {
                for i in 0..inner {
                    block[k * inner + i] = tmp[i * n + k];
                }
            }
        },
    );
}

/// About this many elements per parallel task: below it a transform stays on the calling thread.
const LINES_PER_TASK: usize = 1 << 14;

/// Upstream's `fft_norm_mode`: 0 none, 1 by the root of the signal size, 2 by the signal size.
fn scale_factor(op: &str, norm: i64, n: f64) -> KResult<Option<f64>> {
    match norm {
        0 => Ok(None),
        1 => Ok(Some(1.0 / n.sqrt())),
        2 => Ok(Some(1.0 / n)),
        _ => bail!(runtime, "{op}: invalid normalization mode {norm}"),
    }
}

/// The listed dims, wrapped and checked against the rank.
fn wrap_dims(op: &str, dims: &[i64], ndim: usize) -> KResult<Vec<usize>> {
    dims.iter()
        .map(|&d| {
            let w = if d < 0 { d + ndim as i64 } else { d };
            if w < 0 || w >= ndim as i64 {
                bail!(
                    index_error,
                    "{op}: dim {d} out of range for a {ndim}-d tensor"
                );
            }
            Ok(w as usize)
        })
        .collect()
}

fn shape_of(t: &Tensor) -> Vec<usize> {
    t.sizes.iter().map(|&s| s as usize).collect()
}

fn check_out(op: &str, out: &Tensor, dtype: TnDtype, shape: &[usize]) -> KResult {
    out.check_dtype(dtype, op)?;
    if shape_of(out) != shape {
        bail!(
            runtime,
            "{op}: output shape {:?}, expected {shape:?}",
            out.sizes
        );
    }
    Ok(())
}

fn complex_of(op: &str, dt: TnDtype) -> KResult<TnDtype> {
    match dt {
        TnDtype::Float32 => Ok(TnDtype::ComplexFloat),
        TnDtype::Float64 => Ok(TnDtype::ComplexDouble),
        _ => Err(unsupported_dtype(op, dt)),
    }
}

fn real_of(op: &str, dt: TnDtype) -> KResult<TnDtype> {
    match dt {
        TnDtype::ComplexFloat => Ok(TnDtype::Float32),
        TnDtype::ComplexDouble => Ok(TnDtype::Float64),
        _ => Err(unsupported_dtype(op, dt)),
    }
}

// --- _fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) ----------------------

fn c2c(c: &mut Call) -> KResult {
    let (x, out) = (c.tensor(0)?, c.out(0)?);
    let (dims, norm, forward) = (c.int_list(1)?, c.int(2)?, c.bool(3)?);
    real_of("_fft_c2c", x.dtype)?;
    let dims = wrap_dims("_fft_c2c", dims, x.ndim())?;
    check_out("_fft_c2c", &out, x.dtype, &shape_of(&x))?;
    unsafe {
        match x.dtype {
            TnDtype::ComplexFloat => c2c_typed::<f32>(&x, &out, &dims, norm, forward),
            _ => c2c_typed::<f64>(&x, &out, &dims, norm, forward),
        }
    }
}

unsafe fn c2c_typed<T: Real>(
    x: &Tensor,
    out: &Tensor,
    dims: &[usize],
    norm: i64,
    forward: bool,
) -> KResult {
    let shape = shape_of(x);
    let mut buf: Vec<Complex<T>> = gather(x);
    let mut n = 1f64;
    for &d in dims {
        c2c_along(&mut buf, &shape, d, forward);
        n *= shape[d] as f64;
    }
    scale(&mut buf, scale_factor("_fft_c2c", norm, n)?);
    scatter(out, &buf);
    Ok(())
}

fn scale<T: Real>(buf: &mut [Complex<T>], s: Option<f64>) {
    if let Some(s) = s {
        let s = T::from_f64(s).unwrap();
        for v in buf {
            *v = *v * s;
        }
    }
}

// --- _fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -------------------------

fn r2c(c: &mut Call) -> KResult {
    let (x, out) = (c.tensor(0)?, c.out(0)?);
    let (dims, norm, onesided) = (c.int_list(1)?, c.int(2)?, c.bool(3)?);
    let cdt = complex_of("_fft_r2c", x.dtype)?;
    let dims = wrap_dims("_fft_r2c", dims, x.ndim())?;
    let Some(&last) = dims.last() else {
        bail!(runtime, "_fft_r2c: no dim to transform");
    };
    let mut oshape = shape_of(&x);
    if onesided {
        oshape[last] = oshape[last] / 2 + 1;
    }
    check_out("_fft_r2c", &out, cdt, &oshape)?;
    unsafe {
        match x.dtype {
            TnDtype::Float32 => r2c_typed::<f32>(&x, &out, &dims, norm, onesided),
            _ => r2c_typed::<f64>(&x, &out, &dims, norm, onesided),
        }
    }
}

unsafe fn r2c_typed<T: Real>(
    x: &Tensor,
    out: &Tensor,
    dims: &[usize],
    norm: i64,
    onesided: bool,
) -> KResult {
    let shape = shape_of(x);
    let n: f64 = dims.iter().map(|&d| shape[d] as f64).product();
    let factor = scale_factor("_fft_r2c", norm, n)?;
    let mut real: Vec<T> = gather(x);
    if !onesided {
        // The whole spectrum: a complex transform of the real signal (upstream fills the second half
        // by conjugate symmetry; the values agree to the transform's rounding).
        let mut buf: Vec<Complex<T>> = real.iter().map(|&r| Complex::new(r, T::zero())).collect();
        for &d in dims {
            c2c_along(&mut buf, &shape, d, true);
        }
        scale(&mut buf, factor);
        scatter(out, &buf);
        return Ok(());
    }
    let last = *dims.last().unwrap();
    let len = shape[last];
    let half = len / 2 + 1;
    let mut oshape = shape.clone();
    oshape[last] = half;
    let mut buf = vec![Complex::<T>::default(); oshape.iter().product()];
    if !buf.is_empty() {
        let plan = T::real_forward(len);
        let (outer, inner) = around(&shape, last);
        if inner == 1 {
            real.par_chunks_mut(len)
                .zip(buf.par_chunks_mut(half))
                .with_min_len((LINES_PER_TASK / len).max(1))
                .for_each_init(
                    || plan.make_scratch_vec(),
                    |scratch, (i, o)| {
                        let _ = plan.process_with_scratch(i, o, scratch); // lengths fit by construction
                    },
                );
        } else {
            let (mut inl, mut outl) = (plan.make_input_vec(), plan.make_output_vec());
            let mut scratch = plan.make_scratch_vec();
            for o in 0..outer {
                for i in 0..inner {
                    for (k, v) in inl.iter_mut().enumerate() {
                        *v = real[o * len * inner + k * inner + i];
                    }
                    plan.process_with_scratch(&mut inl, &mut outl, &mut scratch)
                        .map_err(|e| crate::kernel::runtime(format!("_fft_r2c: {e}")))?;
                    for (k, v) in outl.iter().enumerate() {
                        buf[o * half * inner + k * inner + i] = *v;
                    }
                }
            }
        }
    }
    for &d in &dims[..dims.len() - 1] {
        c2c_along(&mut buf, &oshape, d, true);
    }
    scale(&mut buf, factor);
    scatter(out, &buf);
    Ok(())
}

// --- _fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -----------------

fn c2r(c: &mut Call) -> KResult {
    let (x, out) = (c.tensor(0)?, c.out(0)?);
    let (dims, norm, last_size) = (c.int_list(1)?, c.int(2)?, c.int(3)?);
    let rdt = real_of("_fft_c2r", x.dtype)?;
    let dims = wrap_dims("_fft_c2r", dims, x.ndim())?;
    let Some(&last) = dims.last() else {
        bail!(runtime, "_fft_c2r: no dim to transform");
    };
    if last_size < 1 {
        bail!(
            runtime,
            "Invalid number of data points ({last_size}) specified"
        );
    }
    let mut oshape = shape_of(&x);
    if (oshape[last] as i64) < last_size / 2 + 1 {
        bail!(
            runtime,
            "_fft_c2r: dim {last} holds {} values, a signal of {last_size} needs {}",
            oshape[last],
            last_size / 2 + 1
        );
    }
    oshape[last] = last_size as usize;
    check_out("_fft_c2r", &out, rdt, &oshape)?;
    unsafe {
        match x.dtype {
            TnDtype::ComplexFloat => c2r_typed::<f32>(&x, &out, &dims, norm, last_size as usize),
            _ => c2r_typed::<f64>(&x, &out, &dims, norm, last_size as usize),
        }
    }
}

unsafe fn c2r_typed<T: Real>(
    x: &Tensor,
    out: &Tensor,
    dims: &[usize],
    norm: i64,
    len: usize,
) -> KResult {
    let shape = shape_of(x);
    let last = *dims.last().unwrap();
    let mut buf: Vec<Complex<T>> = gather(x);
    let mut n = len as f64;
    for &d in &dims[..dims.len() - 1] {
        c2c_along(&mut buf, &shape, d, false);
        n *= shape[d] as f64;
    }
    let factor = scale_factor("_fft_c2r", norm, n)?;
    let mut oshape = shape.clone();
    oshape[last] = len;
    let mut real = vec![T::zero(); oshape.iter().product()];
    if !real.is_empty() {
        let plan = T::real_inverse(len);
        let half = len / 2 + 1;
        let width = shape[last];
        let (outer, inner) = around(&shape, last);
        if inner == 1 {
            real.par_chunks_mut(len)
                .zip(buf.par_chunks_mut(width))
                .with_min_len((LINES_PER_TASK / len).max(1))
                .for_each_init(
                    || plan.make_scratch_vec(),
                    |scratch, (o, i)| {
                        let i = &mut i[..half];
                        i[0].im = T::zero();
                        if len % 2 == 0 {
                            i[half - 1].im = T::zero();
                        }
                        let _ = plan.process_with_scratch(i, o, scratch); // lengths fit by construction
                    },
                );
        } else {
            let (mut inl, mut outl) = (plan.make_input_vec(), plan.make_output_vec());
            let mut scratch = plan.make_scratch_vec();
            for o in 0..outer {
                for i in 0..inner {
                    for (k, v) in inl.iter_mut().enumerate() {
                        *v = buf[o * width * inner + k * inner + i];
                    }
                    // The imaginary parts of the zero (and, for an even length, the Nyquist) frequency
                    // do not reach a real signal; pocketfft and MKL ignore them, so do we.
                    inl[0].im = T::zero();
                    if len % 2 == 0 {
                        inl[half - 1].im = T::zero();
                    }
                    plan.process_with_scratch(&mut inl, &mut outl, &mut scratch)
                        .map_err(|e| crate::kernel::runtime(format!("_fft_c2r: {e}")))?;
                    for (k, v) in outl.iter().enumerate() {
                        real[o * len * inner + k * inner + i] = *v;
                    }
                }
            }
        }
    }
    if let Some(s) = factor {
        let s = T::from_f64(s).unwrap();
        for v in &mut real {
            *v = *v * s;
        }
    }
    scatter(out, &real);
    Ok(())
}

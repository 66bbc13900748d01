//! Reductions and scans. The core passes `dim` normalised (non-negative, sorted, unique; an
//! empty or None list means every dim for the full reductions) and allocates the outputs with the
//! schema's shape (`keepdim` respected).
//!
//! Every reduction is one pass over the input in its memory order (a [`Plan`] over the input, a
//! pseudo-operand whose running address is the output index, and one whose running address is
//! the element's position within its reduction), accumulating into a buffer of accumulators
//! that is then written to the output view.
//!
//! Accumulation: floating sums and products accumulate in f64 (f32/f16/bf16 inputs: the result
//! is the correctly rounded one; upstream's cascade sum in f32 can differ in the last ulp);
//! f64 sums are pairwise within contiguous runs; integer sums and products wrap in i64 (the same
//! bits as upstream's accumulation in the output type). `cumsum`/`cumprod` accumulate exactly as
//! upstream's CPU scan does: in `acc_type<T, /*is_cuda=*/false>` (f64 for f32 and f64, f32 for
//! f16/bf16, i64 for integers), rounding each output.

use torchnative_backend::abi::TnDtype;

use crate::dtype::{is_float, is_int, Bool, Elem, FloatElem, Real};
use crate::kernel::{Call, KResult, Tensor};
use crate::strided::Plan;
use crate::{bail, dispatch_all, dispatch_float, kernels};

kernels! {
    k_sum = "aten::sum.dim_IntList" => |c| sum(c);
    k_sum_all = "aten::sum" => |c| sum(c);
    k_prod = "aten::prod.dim_int" => |c| prod(c);
    k_prod_all = "aten::prod" => |c| prod(c);
    k_amax = "aten::amax" => |c| amax_amin(c, true);
    k_amin = "aten::amin" => |c| amax_amin(c, false);
    k_max_dim = "aten::max.dim" => |c| max_min_dim(c, true);
    k_min_dim = "aten::min.dim" => |c| max_min_dim(c, false);
    k_max_all = "aten::max" => |c| amax_amin(c, true);
    k_min_all = "aten::min" => |c| amax_amin(c, false);
    k_argmax = "aten::argmax" => |c| argmax_argmin(c, true);
    k_argmin = "aten::argmin" => |c| argmax_argmin(c, false);
    k_var = "aten::var.correction" => |c| var_std(c, false, false);
    k_std = "aten::std.correction" => |c| var_std(c, true, false);
    k_var_mean = "aten::var_mean.correction" => |c| var_std(c, false, true);
    k_std_mean = "aten::std_mean.correction" => |c| var_std(c, true, true);
    k_all_dims = "aten::all.dims" => |c| all_any(c, true);
    k_any_dims = "aten::any.dims" => |c| all_any(c, false);
    k_all_dim = "aten::all.dim" => |c| all_any(c, true);
    k_any_dim = "aten::any.dim" => |c| all_any(c, false);
    k_all = "aten::all" => |c| all_any(c, true);
    k_any = "aten::any" => |c| all_any(c, false);
    k_cumsum = "aten::cumsum" => |c| scan(c, false);
    k_cumprod = "aten::cumprod" => |c| scan(c, true);
    k_logsumexp = "aten::logsumexp" => |c| logsumexp(c);
}

// ----------------------------------------------------------------------------------------------
// The reduction driver

/// The dims argument at `i`: an int list, a single int, or None (all dims).
fn dims_arg(c: &Call, i: usize, ndim: usize) -> KResult<Vec<usize>> {
    let raw: Vec<i64> = if i >= c.args.len() || c.is_none(i) {
        vec![]
    } else if let Ok(l) = c.int_list(i) {
        l.to_vec()
    } else {
        vec![c.int(i)?]
    };
    normalize_dims(&raw, ndim)
}

/// Wraps negative dims, sorts, de-duplicates; an empty list means every dim.
pub fn normalize_dims(raw: &[i64], ndim: usize) -> KResult<Vec<usize>> {
    if ndim == 0 {
        return Ok(vec![]);
    }
    if raw.is_empty() {
        return Ok((0..ndim).collect());
    }
    let mut v = vec![];
    for &d in raw {
        let w = if d < 0 { d + ndim as i64 } else { d };
        if w < 0 || w >= ndim as i64 {
            bail!(
                index_error,
                "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                -(ndim as i64),
                ndim as i64 - 1
            );
        }
        v.push(w as usize);
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// One reduction: the input, the reduced dims, the output's kept-dim layout.
pub struct Reduction<'a> {
    pub input: Tensor<'a>,
    /// Input dims kept (in order) and reduced.
    pub kept: Vec<usize>,
    pub red: Vec<usize>,
    /// Number of outputs and of elements reduced into each.
    pub out_numel: usize,
    pub red_numel: usize,
}

impl<'a> Reduction<'a> {
    pub fn new(input: Tensor<'a>, red: Vec<usize>) -> Reduction<'a> {
        let nd = input.ndim();
        let kept: Vec<usize> = (0..nd).filter(|d| !red.contains(d)).collect();
        let out_numel = kept.iter().map(|&d| input.size(d)).product();
        let red_numel = red.iter().map(|&d| input.size(d)).product();
        Reduction {
            input,
            kept,
            red,
            out_numel,
            red_numel,
        }
    }

    /// Visits every input element once, in the input's memory order:
    /// `f(out_index, in_ptr, in_byte_stride, pos, pos_stride, n)` for a run of `n` elements;
    /// `out_index` is the index of their output (logical order over the kept dims) when they
    /// share one (`out_stride == 0`), and `pos` is the position of the first within its
    /// reduction (logical order over the reduced dims).
    ///
    /// # Safety
    /// The input view must be valid.
    pub unsafe fn visit(
        &self,
        mut f: impl FnMut(usize, isize, *const u8, isize, usize, isize, usize),
    ) -> KResult {
        let nd = self.input.ndim();
        let mut idx_strides = vec![0i64; nd];
        let mut acc = 1i64;
        for &d in self.kept.iter().rev() {
            idx_strides[d] = acc;
            acc *= self.input.sizes[d];
        }
        let mut pos_strides = vec![0i64; nd];
        let mut acc = 1i64;
        for &d in self.red.iter().rev() {
            pos_strides[d] = acc;
            acc *= self.input.sizes[d];
        }
        // Upstream's reduction order: the output (here the index pseudo-operand, stride 0 on the
        // reduced dims) first, so each output's elements are visited consecutively, in the
        // input's memory order.
        let plan = Plan::<3>::ordered(
            self.input.sizes,
            [&idx_strides, self.input.strides, &pos_strides],
            [1, self.input.itemsize(), 1],
            2,
            true,
        )?;
        plan.run(
            [std::ptr::null_mut(), self.input.data, std::ptr::null_mut()],
            |p, s, n| f(p[0] as usize, s[0], p[1], s[1], p[2] as usize, s[2], n),
        );
        Ok(())
    }

    /// Accumulates every element (as `S`) into one accumulator per output:
    /// `fold(&mut acc, x, pos)`.
    ///
    /// # Safety
    /// `S` must be the input's element type.
    pub unsafe fn fold<S: Copy, A: Copy>(
        &self,
        init: A,
        mut fold: impl FnMut(&mut A, S, usize),
    ) -> KResult<Vec<A>> {
        let mut accs = vec![init; self.out_numel];
        self.visit(|oi, os, p, s, pos, ps, n| {
            for i in 0..n as isize {
                let x = (p.wrapping_offset(i * s) as *const S).read();
                let j = (oi as isize + i * os) as usize;
                fold(&mut accs[j], x, (pos as isize + i * ps) as usize);
            }
        })?;
        Ok(accs)
    }

    /// Writes one value per output element (in logical kept-dim order) into `out`, which has
    /// either the input's rank (keepdim) or one dim per kept dim.
    ///
    /// # Safety
    /// `O` must be the output's element type.
    pub unsafe fn write<O: Copy>(
        &self,
        out: &Tensor,
        mut value: impl FnMut(usize) -> O,
    ) -> KResult {
        let (sizes, strides) = self.out_layout(out)?;
        let idx = crate::strided::contiguous_strides(&sizes);
        let plan = Plan::<2>::new(&sizes, [&strides, &idx], [out.itemsize(), 1])?;
        plan.run([out.data, std::ptr::null_mut()], |p, s, n| {
            for i in 0..n as isize {
                let j = (p[1] as isize + i * s[1]) as usize;
                (p[0].wrapping_offset(i * s[0]) as *mut O).write(value(j));
            }
        });
        Ok(())
    }

    /// The output's sizes and strides over the kept dims.
    fn out_layout(&self, out: &Tensor) -> KResult<(Vec<i64>, Vec<i64>)> {
        let sizes: Vec<i64> = self.kept.iter().map(|&d| self.input.sizes[d]).collect();
        let strides: Vec<i64> = if out.ndim() == self.input.ndim() && out.ndim() != self.kept.len()
        {
            self.kept.iter().map(|&d| out.strides[d]).collect()
        } else if out.ndim() == self.kept.len() {
            out.strides.to_vec()
        } else if out.numel() == self.out_numel && self.out_numel <= 1 {
            vec![0; self.kept.len()]
        } else {
            bail!(
                runtime,
                "reduction output of shape {:?} does not match the input {:?} reduced over {:?}",
                out.sizes,
                self.input.sizes,
                self.red
            );
        };
        Ok((sizes, strides))
    }
}

// ----------------------------------------------------------------------------------------------
// sum / prod

/// Pairwise sum of a strided run of f64 values (base case 16 sequential), for accuracy
/// comparable to upstream's cascade sum.
unsafe fn pairwise_f64(p: *const u8, s: isize, n: usize) -> f64 {
    if n <= 16 {
        let mut acc = 0.0;
        for i in 0..n as isize {
            acc += (p.wrapping_offset(i * s) as *const f64).read();
        }
        return acc;
    }
    let h = n / 2;
    pairwise_f64(p, s, h) + pairwise_f64(p.wrapping_offset(h as isize * s), s, n - h)
}

/// The sum of `n` contiguous f32 values in f64, in 8 independent lanes (so the loop vectorises;
/// a single running f64 sum was a dependency chain at about 3 ns per element, a tenth of RMSNorm
/// in a Llama prefill). Lanes and tail are combined pairwise at the end; against the one
/// sequential f64 sum the difference is far below f32's rounding.
unsafe fn sum_f32_run(p: *const f32, n: usize) -> f64 {
    let xs = std::slice::from_raw_parts(p, n);
    let mut lanes = [0f64; 8];
    let chunks = xs.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            lanes[k] += c[k] as f64;
        }
    }
    let tail: f64 = tail.iter().map(|&x| x as f64).sum();
    let quads = [
        lanes[0] + lanes[4],
        lanes[1] + lanes[5],
        lanes[2] + lanes[6],
        lanes[3] + lanes[7],
    ];
    ((quads[0] + quads[2]) + (quads[1] + quads[3])) + tail
}

/// A contiguous input whose reduced dims are one block of consecutive dims followed by at least
/// one kept dim of more than one element: (outer, rows, inner) of it seen as
/// `[outer, rows, inner]` reduced over its middle dim.
fn reduced_block(a: &Tensor, red: &[usize]) -> Option<(usize, usize, usize)> {
    let (&first, &last) = (red.first()?, red.last()?);
    if last + 1 - first != red.len() || last + 1 >= a.ndim() || !a.is_contiguous() {
        return None;
    }
    let prod = |d: &[i64]| d.iter().product::<i64>() as usize;
    let (outer, rows, inner) = (
        prod(&a.sizes[..first]),
        prod(&a.sizes[first..=last]),
        prod(&a.sizes[last + 1..]),
    );
    (inner > 1 && rows > 0).then_some((outer, rows, inner))
}

/// `sum.dim_IntList(self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)` and
/// `sum(self, *, dtype)`: each element is converted to the output dtype, then accumulated.
fn sum(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = if c.args.len() >= 3 {
        dims_arg(c, 1, a.ndim())?
    } else {
        (0..a.ndim()).collect()
    };
    let r = Reduction::new(a, dims);
    unsafe {
        let od = out.dtype;
        if od == TnDtype::Float64 && a.dtype == TnDtype::Float64 {
            let mut accs = vec![0f64; r.out_numel];
            r.visit(|oi, os, p, s, _, _, n| {
                if os == 0 {
                    accs[oi] += pairwise_f64(p, s, n);
                } else {
                    for i in 0..n as isize {
                        accs[(oi as isize + i * os) as usize] +=
                            (p.wrapping_offset(i * s) as *const f64).read();
                    }
                }
            })?;
            return r.write(&out, |j| accs[j]);
        }
        if od == TnDtype::Float32 && a.dtype == TnDtype::Float32 {
            if let Some((outer, rows, inner)) = reduced_block(&a, &r.red) {
                // whole rows summed into a row of accumulators: the same sequential order per
                // output as the loop below, vectorised across the outputs (a bias gradient,
                // `sum(0)` of a [tokens, features] gradient, was 10x upstream's time strided)
                let x = std::slice::from_raw_parts(a.data as *const f32, outer * rows * inner);
                let mut accs = vec![0f64; outer * inner];
                for (o, acc) in accs.chunks_exact_mut(inner).enumerate() {
                    for row in x[o * rows * inner..(o + 1) * rows * inner].chunks_exact(inner) {
                        for (a, &v) in acc.iter_mut().zip(row) {
                            *a += v as f64;
                        }
                    }
                }
                return r.write(&out, |j| accs[j] as f32);
            }
            let mut accs = vec![0f64; r.out_numel];
            r.visit(|oi, os, p, s, _, _, n| {
                if os == 0 && s == 4 {
                    accs[oi] += sum_f32_run(p as *const f32, n);
                } else {
                    for i in 0..n as isize {
                        accs[(oi as isize + i * os) as usize] +=
                            (p.wrapping_offset(i * s) as *const f32).read() as f64;
                    }
                }
            })?;
            return r.write(&out, |j| accs[j] as f32);
        }
        if is_float(od) {
            dispatch_float!(od, "sum_cpu", D, _A => dispatch_all!(a.dtype, "sum_cpu", S => {
                let accs = r.fold(0f64, |acc: &mut f64, x: S, _| *acc += x.cast::<D>().to_f64())?;
                r.write(&out, |j| D::from_f64(accs[j]))
            }))
        } else {
            dispatch_all!(od, "sum_cpu", D => dispatch_all!(a.dtype, "sum_cpu", S => {
                let accs = r.fold(0i64, |acc: &mut i64, x: S, _| *acc = acc.wrapping_add(as_i64(x.cast::<D>())))?;
                r.write(&out, |j| D::from_i64(accs[j]))
            }))
        }
    }
}

/// An integer or bool element as i64 (floats never reach this).
#[inline(always)]
fn as_i64<T: Elem>(x: T) -> i64 {
    x.to_f64() as i64
}

/// `prod.dim_int(self, int dim, bool keepdim=False, *, ScalarType? dtype=None)` and
/// `prod(self, *, dtype)`.
fn prod(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = if c.args.len() >= 3 {
        dims_arg(c, 1, a.ndim())?
    } else {
        (0..a.ndim()).collect()
    };
    let r = Reduction::new(a, dims);
    let od = out.dtype;
    unsafe {
        if is_float(od) {
            dispatch_float!(od, "prod_cpu", D, _A => dispatch_all!(a.dtype, "prod_cpu", S => {
                let accs = r.fold(1f64, |acc: &mut f64, x: S, _| *acc *= x.cast::<D>().to_f64())?;
                r.write(&out, |j| D::from_f64(accs[j]))
            }))
        } else {
            dispatch_all!(od, "prod_cpu", D => dispatch_all!(a.dtype, "prod_cpu", S => {
                let accs = r.fold(1i64, |acc: &mut i64, x: S, _| *acc = acc.wrapping_mul(as_i64(x.cast::<D>())))?;
                r.write(&out, |j| D::from_i64(accs[j]))
            }))
        }
    }
}

// ----------------------------------------------------------------------------------------------
// max / min

/// Max/min accumulation that keeps the accumulator on ties and propagates NaN (upstream's
/// reduction semantics: `amax([-0., 0.])` is -0.).
#[inline(always)]
fn better<A: Real>(is_max: bool, acc: A, x: A) -> bool {
    if acc.is_nan() {
        false
    } else if x.is_nan() {
        true
    } else if is_max {
        x > acc
    } else {
        x < acc
    }
}

/// `amax(self, int[1] dim=[], bool keepdim=False)`, `amin`, and the full `max(self)`/`min(self)`.
fn amax_amin(c: &mut Call, is_max: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = if c.args.len() >= 2 {
        dims_arg(c, 1, a.ndim())?
    } else {
        (0..a.ndim()).collect()
    };
    let r = Reduction::new(a, dims);
    if r.out_numel == 0 {
        return Ok(()); // nothing to write: an empty dim that is not reduced
    }
    if r.red_numel == 0 {
        bail!(
            runtime,
            "{}(): Expected reduction dim to have non-zero size.",
            if is_max { "amax" } else { "amin" }
        );
    }
    unsafe {
        match a.dtype {
            TnDtype::Bool => {
                let accs = r.fold(Bool::new(!is_max), |acc: &mut Bool, x: Bool, _| {
                    *acc = if is_max { *acc | x } else { *acc & x }
                })?;
                r.write(&out, |j| accs[j])
            }
            dt if is_int(dt) => crate::dispatch_int!(dt, "amax", T => {
                let accs = r.fold(None::<T>, |acc: &mut Option<T>, x: T, _| {
                    *acc = Some(match *acc { None => x, Some(v) => if is_max { if x > v { x } else { v } } else if x < v { x } else { v } })
                })?;
                r.write(&out, |j| accs[j].unwrap())
            }),
            dt => dispatch_float!(dt, "amax", T, A => {
                let accs = r.fold(None::<T>, |acc: &mut Option<T>, x: T, _| {
                    match *acc {
                        None => *acc = Some(x),
                        Some(v) => if better(is_max, v.to_acc(), x.to_acc()) { *acc = Some(x) },
                    }
                })?;
                r.write(&out, |j| accs[j].unwrap())
            }),
        }
    }
}

/// Reduces each output to (value, position) of its max/min: the first occurrence (smallest
/// position) among equals, NaN winning (its first occurrence), as upstream's `max.dim`/`argmax`.
unsafe fn arg_reduce<S: Elem + PartialOrd>(
    r: &Reduction,
    is_max: bool,
    float: bool,
) -> KResult<Vec<(S, usize)>> {
    let accs = r.fold(
        None::<(S, usize)>,
        |acc: &mut Option<(S, usize)>, x: S, pos| match *acc {
            None => *acc = Some((x, pos)),
            Some((v, vp)) => {
                let take = if float {
                    let (vf, xf) = (v.to_f64(), x.to_f64());
                    if vf.is_nan() {
                        xf.is_nan() && pos < vp
                    } else if xf.is_nan() {
                        true
                    } else if xf == vf {
                        pos < vp
                    } else {
                        (xf > vf) == is_max
                    }
                } else if x == v {
                    pos < vp
                } else {
                    (x > v) == is_max
                };
                if take {
                    *acc = Some((x, pos));
                }
            }
        },
    )?;
    Ok(accs
        .into_iter()
        .map(|a| a.expect("non-empty reduction"))
        .collect())
}

/// `max.dim(self, int dim, bool keepdim=False) -> (values, indices)` and `min.dim`.
fn max_min_dim(c: &mut Call, is_max: bool) -> KResult {
    let (vals, idxs) = (c.out(0)?, c.out(1)?);
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    let r = Reduction::new(a, dims);
    if r.red_numel == 0 && r.out_numel > 0 {
        bail!(
            index_error,
            "{}(): Expected reduction dim {} to have non-zero size.",
            if is_max { "max" } else { "min" },
            r.red.first().copied().unwrap_or(0)
        );
    }
    idxs.check_dtype(TnDtype::Int64, "max/min indices")?;
    unsafe {
        dispatch_all!(a.dtype, "max_min_dim", S => {
            let res = arg_reduce::<S>(&r, is_max, is_float(a.dtype))?;
            r.write(&vals, |j| res[j].0)?;
            r.write(&idxs, |j| res[j].1 as i64)
        })
    }
}

/// `argmax(self, int? dim=None, bool keepdim=False)`: None reduces the flattened input.
fn argmax_argmin(c: &mut Call, is_max: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    if a.numel() == 0 {
        bail!(
            index_error,
            "{}(): Expected reduction dim to be specified for input.numel() == 0.",
            if is_max { "argmax" } else { "argmin" }
        );
    }
    let r = Reduction::new(a, dims);
    unsafe {
        dispatch_all!(a.dtype, "argmax", S => {
            let res = arg_reduce::<S>(&r, is_max, is_float(a.dtype))?;
            if c.is_none(1) || out.numel() == 1 && r.out_numel == 1 {
                // Flattened (or a single output): the output may be 0-dim or keepdim-shaped.
                return crate::strided::fill(&out, res[0].1 as i64);
            }
            r.write(&out, |j| res[j].1 as i64)
        })
    }
}

// ----------------------------------------------------------------------------------------------
// var / std

/// `var.correction(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)` and
/// `std.correction`. As upstream's CPU path: a reduction to a single output of f32/f64 is two-pass
/// (mean in the input dtype, then the sum of squared deviations in f64); otherwise Welford in f64.
/// The divisor is `max(0, n - correction)`. `var_mean.correction`/`std_mean.correction`
/// (`with_mean`, the mean as output 1) are Welford whatever the shape, as upstream's
/// `std_var_mean_out`: their mean is Welford's running mean in f64, rounded once (not
/// `mean()`'s sum in the input dtype), and NaN once it meets an infinity.
fn var_std(c: &mut Call, take_sqrt: bool, with_mean: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    let correction = c.opt_scalar(2)?.map(|s| s.as_f64()).unwrap_or(1.0);
    let r = Reduction::new(a, dims);
    let finish = |m2: f64, n: f64| {
        let divisor = if n > correction { n - correction } else { 0.0 };
        let v = m2 / divisor;
        if take_sqrt {
            v.sqrt()
        } else {
            v
        }
    };
    unsafe {
        dispatch_float!(a.dtype, "std_var_cpu", T, A => {
            if r.red_numel == 0 {
                if with_mean {
                    r.write(&c.out(1)?, |_| T::from_f64(f64::NAN))?;
                }
                return r.write(&out, |_| T::from_f64(f64::NAN));
            }
            if !with_mean && r.out_numel == 1 && matches!(a.dtype, TnDtype::Float32 | TnDtype::Float64) {
                // Upstream's `std_var_all_cpu`: mean = self.mean() (in T), then the f64 sum of
                // (x - mean)^2 in the input's iteration order, one partial sum per 2-d block.
                // Neumaier's compensated sum: as accurate as upstream's cascade sum, so a
                // constant input has its exact mean (and variance 0) as upstream's has.
                let (s, comp) = r.fold((0f64, 0f64), |acc: &mut (f64, f64), x: T, _| {
                    let x = x.to_f64();
                    let t = acc.0 + x;
                    acc.1 += if acc.0.abs() >= x.abs() { (acc.0 - t) + x } else { (x - t) + acc.0 };
                    acc.0 = t;
                })?[0];
                let total = if (s + comp).is_finite() { s + comp } else { s };
                let n = r.red_numel as f64;
                let mean: f64 = if a.dtype == TnDtype::Float32 {
                    ((total as f32) / (r.red_numel as f32)) as f64
                } else {
                    total / n
                };
                let plan = Plan::<1>::new(a.sizes, [a.strides], [a.itemsize()])?;
                let mut sdx2 = 0f64;
                plan.run2d([a.data], |p, is, ni, os, no| {
                    let mut local = 0f64;
                    for o in 0..no as isize {
                        for i in 0..ni as isize {
                            let x = (p[0].wrapping_offset(o * os[0] + i * is[0]) as *const T).read();
                            let dx = x.to_f64() - mean;
                            local += dx * dx;
                        }
                    }
                    sdx2 += local;
                });
                let divisor = (n - correction).max(0.0);
                let v = sdx2 / divisor;
                let v = if take_sqrt { v.sqrt() } else { v };
                return r.write(&out, |_| T::from_f64(v));
            }
            // Welford, as upstream's WelfordOps::reduce: (mean, m2, n) in f64.
            let accs = r.fold((0f64, 0f64, 0u64), |acc: &mut (f64, f64, u64), x: T, _| {
                let x = x.to_f64();
                let n = acc.2 + 1;
                let nf = n as f64;
                let delta = x - acc.0;
                let mean = acc.0 + delta / nf;
                let delta2 = x - mean;
                *acc = (mean, acc.1 + delta * delta2, n);
            })?;
            if with_mean {
                r.write(&c.out(1)?, |j| T::from_f64(accs[j].0))?;
            }
            r.write(&out, |j| T::from_f64(finish(accs[j].1, accs[j].2 as f64)))
        })
    }
}

// ----------------------------------------------------------------------------------------------
// all / any

/// `all.dims(self, int[]? dim=None, bool keepdim=False)` (and `all.dim`, `all`), `any.*`: the
/// output is bool (uint8 for uint8 input, as upstream).
fn all_any(c: &mut Call, is_all: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = if c.args.len() >= 2 {
        dims_arg(c, 1, a.ndim())?
    } else {
        (0..a.ndim()).collect()
    };
    let r = Reduction::new(a, dims);
    unsafe {
        dispatch_all!(a.dtype, "all_any", S => {
            let accs = r.fold(is_all, |acc: &mut bool, x: S, _| {
                if is_all { *acc = *acc && x.to_bool() } else { *acc = *acc || x.to_bool() }
            })?;
            dispatch_all!(out.dtype, "all_any", O => r.write(&out, |j| O::from_bool(accs[j])))
        })
    }
}

// ----------------------------------------------------------------------------------------------
// cumsum / cumprod

/// `cumsum(self, int dim, *, ScalarType? dtype=None)`, `cumprod`: elements converted to the
/// output dtype, accumulated in upstream's CPU `acc_type` (see the module doc), each prefix
/// rounded to the output dtype.
fn scan(c: &mut Call, is_prod: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let nd = a.ndim();
    let dim = if nd == 0 {
        None
    } else {
        Some(normalize_dims(&[c.int(1)?], nd)?[0])
    };
    if out.sizes != a.sizes {
        bail!(
            runtime,
            "cumsum/cumprod: output shape {:?} differs from the input {:?}",
            out.sizes,
            a.sizes
        );
    }
    // Iterate every line along `dim`: a plan over the shape with `dim` collapsed to 1.
    let mut sizes = a.sizes.to_vec();
    let (len, ins, outs) = match dim {
        Some(d) => {
            let l = sizes[d] as usize;
            sizes[d] = 1;
            (
                l,
                a.strides[d] as isize * a.itemsize() as isize,
                out.strides[d] as isize * out.itemsize() as isize,
            )
        }
        None => (1, 0, 0),
    };
    if len == 0 {
        return Ok(());
    }
    let plan = Plan::<2>::new(
        &sizes,
        [out.strides, a.strides],
        [out.itemsize(), a.itemsize()],
    )?;
    unsafe {
        macro_rules! lines {
            ($D:ty, $S:ty, $acc:ty, $init:expr, |$x:ident| $to:expr, |$v:ident| $from:expr, $op:ident) => {
                plan.run([out.data, a.data], |p, s, n| {
                    for k in 0..n as isize {
                        let (po, pi) = (
                            p[0].wrapping_offset(k * s[0]),
                            p[1].wrapping_offset(k * s[1]),
                        );
                        let mut acc: $acc = $init;
                        for i in 0..len as isize {
                            let $x: $D = (pi.wrapping_offset(i * ins) as *const $S)
                                .read()
                                .cast::<$D>();
                            acc = $op(acc, $to);
                            let $v = acc;
                            (po.wrapping_offset(i * outs) as *mut $D).write($from);
                        }
                    }
                })
            };
        }
        #[inline(always)]
        fn addf<T: std::ops::Add<Output = T>>(a: T, b: T) -> T {
            a + b
        }
        #[inline(always)]
        fn mulf<T: std::ops::Mul<Output = T>>(a: T, b: T) -> T {
            a * b
        }
        #[inline(always)]
        fn addi(a: i64, b: i64) -> i64 {
            a.wrapping_add(b)
        }
        #[inline(always)]
        fn muli(a: i64, b: i64) -> i64 {
            a.wrapping_mul(b)
        }
        dispatch_all!(a.dtype, "cumsum", S => match out.dtype {
            TnDtype::Float32 | TnDtype::Float64 => dispatch_float!(out.dtype, "cumsum", D, _A => {
                if is_prod { lines!(D, S, f64, 1.0, |x| x.to_f64(), |v| D::from_f64(v), mulf) }
                else { lines!(D, S, f64, 0.0, |x| x.to_f64(), |v| D::from_f64(v), addf) }
            }),
            TnDtype::Float16 | TnDtype::BFloat16 => dispatch_float!(out.dtype, "cumsum", D, A => {
                if is_prod { lines!(D, S, A, 1.0, |x| x.to_acc(), |v| D::from_acc(v), mulf) }
                else { lines!(D, S, A, 0.0, |x| x.to_acc(), |v| D::from_acc(v), addf) }
            }),
            od => dispatch_all!(od, "cumsum", D => {
                if is_prod { lines!(D, S, i64, 1, |x| as_i64(x), |v| D::from_i64(v), muli) }
                else { lines!(D, S, i64, 0, |x| as_i64(x), |v| D::from_i64(v), addi) }
            }),
        });
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// logsumexp

/// `logsumexp(self, int[1] dim, bool keepdim=False)`, composed as upstream composes it, each
/// step rounded to the dtype: `m = amax(self, dim)` with ±inf replaced by 0, then
/// `log(sum(exp(self - m))) + m`.
fn logsumexp(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    let r = Reduction::new(a, dims);
    unsafe {
        dispatch_float!(a.dtype, "logsumexp", T, A => {
            if r.red_numel == 0 {
                return r.write(&out, |_| T::from_f64(f64::NEG_INFINITY));
            }
            let maxes = r.fold(None::<A>, |acc: &mut Option<A>, x: T, _| {
                let x = x.to_acc();
                match *acc { None => *acc = Some(x), Some(v) => if better(true, v, x) { *acc = Some(x) } }
            })?;
            let m: Vec<A> = maxes.into_iter().map(|v| { let v = v.unwrap(); if v.abs() == A::INF { A::ZERO } else { v } }).collect();
            let mut sums = vec![0f64; r.out_numel];
            r.visit(|oi, os, p, s, _, _, n| {
                for i in 0..n as isize {
                    let j = (oi as isize + i * os) as usize;
                    let x = (p.wrapping_offset(i * s) as *const T).read().to_acc();
                    let t = T::from_acc(x - m[j]).to_acc();
                    sums[j] += T::from_acc(t.exp()).to_acc().to_f64();
                }
            })?;
            r.write(&out, |j| {
                let s = T::from_f64(sums[j]).to_acc();
                let l = T::from_acc(s.ln()).to_acc();
                T::from_acc(l + m[j])
            })
        })
    }
}

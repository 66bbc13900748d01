//! Indexing kernels: `embedding`, `index_select`, `gather`, `cat`, `arange.start_out`,
//! `masked_fill_.Scalar`, `index.Tensor`, `index_put_`, `nonzero`. Every index is bounds-checked
//! and an out-of-range one raises upstream's error (kind and message).

use torchnative_backend::abi::TnDtype;

use crate::copy::copy_cast;
use crate::dtype::{Elem, FloatElem, Real};
use crate::kernel::ScalarElem;
use crate::kernel::{Call, KResult, OwnedView, Tensor};
use crate::nn::gather_vec;
use crate::reduce::normalize_dims;
use crate::strided::{contiguous_strides, Plan};
use crate::{bail, dispatch_all, kernels};

kernels! {
    k_embedding = "aten::embedding" => |c| embedding(c);
    k_index_select = "aten::index_select" => |c| index_select(c);
    k_index_add = "aten::index_add" => |c| index_add(c);
    k_gather = "aten::gather" => |c| gather(c);
    k_cat = "aten::cat" => |c| cat(c);
    k_arange = "aten::arange.start_out" => |c| arange(c);
    k_linspace = "aten::linspace.out" => |c| linspace(c);
    k_masked_fill_ = "aten::masked_fill_.Scalar" => |c| masked_fill(c);
    k_masked_fill = "aten::masked_fill.Scalar" => |c| masked_fill(c);
    k_index = "aten::index.Tensor" => |c| index(c);
    k_index_put_ = "aten::index_put_" => |c| index_put(c);
    k_index_put = "aten::index_put" => |c| index_put(c);
    k_nonzero = "aten::nonzero" => |c| nonzero(c);
}

/// Reads an integer index tensor (int64 or int32; uint8/bool are masks, handled by callers)
/// into a `Vec<i64>` in logical order.
unsafe fn read_indices(t: &Tensor, op: &str) -> KResult<Vec<i64>> {
    match t.dtype {
        TnDtype::Int64 => gather_vec(t, |v: i64| v),
        TnDtype::Int32 => gather_vec(t, |v: i32| v as i64),
        TnDtype::Int16 => gather_vec(t, |v: i16| v as i64),
        TnDtype::Int8 => gather_vec(t, |v: i8| v as i64),
        _ => bail!(
            index_error,
            "{op}: tensors used as indices must be long, int, byte or bool tensors"
        ),
    }
}

/// Copies `n` elements of `size` bytes between strided runs.
#[inline]
unsafe fn copy_run(dst: *mut u8, ds: isize, src: *const u8, ss: isize, n: usize, size: usize) {
    for i in 0..n as isize {
        std::ptr::copy_nonoverlapping(
            src.wrapping_offset(i * ss),
            dst.wrapping_offset(i * ds),
            size,
        );
    }
}

/// The view `t` with dim `d` removed, at index `i` along it (a `select`).
fn select(t: &Tensor, d: usize, i: usize) -> OwnedView {
    let mut v = OwnedView::of(t);
    v.data = t
        .data
        .wrapping_offset(i as isize * t.stride(d) * t.itemsize() as isize);
    v.sizes.remove(d);
    v.strides.remove(d);
    v
}

/// Bit copy between same-shape, same-dtype views.
unsafe fn copy_bits(dst: &Tensor, src: &Tensor) -> KResult {
    let plan = Plan::<2>::new(
        dst.sizes,
        [dst.strides, src.strides],
        [dst.itemsize(), src.itemsize()],
    )?;
    let size = dst.itemsize();
    plan.run([dst.data, src.data], |p, s, n| {
        copy_run(p[0], s[0], p[1], s[1], n, size)
    });
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// index_select / embedding / gather

/// `index_select(self, int dim, Tensor index)`.
fn index_select(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let index = c.tensor(2)?;
    if a.dtype != out.dtype {
        bail!(
            runtime,
            "index_select: output dtype {:?} differs from self {:?}",
            out.dtype,
            a.dtype
        );
    }
    let idx = unsafe { read_indices(&index, "index_select")? };
    if a.ndim() == 0 {
        for &i in &idx {
            if i != 0 {
                bail!(
                    index_error,
                    "index_select(): Index to scalar can have only 1 value, got {} value(s)",
                    idx.len()
                );
            }
        }
        return unsafe { copy_bits(&out, &a) };
    }
    let d = normalize_dims(&[c.int(1)?], a.ndim())?[0];
    let n = a.size(d);
    for (j, &i) in idx.iter().enumerate() {
        if i < 0 || i as usize >= n {
            bail!(index_error, "index out of range in self");
        }
        let (dv, sv) = (select(&out, d, j), select(&a, d, i as usize));
        unsafe { copy_bits(&dv.view(), &sv.view())? };
    }
    Ok(())
}

/// `index_add(self, dim, index, source, alpha)` for float32/float64 (the core checks shapes and
/// dtypes first): a copy of `self`, then for each `i` in index order the slice `index[i]` of it
/// plus `alpha` times the slice `i` of `source` — upstream's index_add_cpu_ loop (one add kernel
/// per index, `fma(source, alpha, self)` in its vector lanes), so repeated indices accumulate in
/// the same order. The embedding's backward is this on rows.
fn index_add(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let index = c.tensor(2)?;
    let src = c.tensor(3)?;
    let alpha = c.scalar(4)?;
    if a.dtype != out.dtype || src.dtype != out.dtype || a.ndim() == 0 || src.ndim() != a.ndim() {
        bail!(
            runtime,
            "index_add: self, source and out must be of one dtype and rank (at least 1)"
        );
    }
    let d = normalize_dims(&[c.int(1)?], a.ndim())?[0];
    let idx = unsafe { read_indices(&index, "index_add")? };
    if idx.len() != src.size(d) {
        bail!(
            runtime,
            "index_add: {} indices for a source of size {} in dim {d}",
            idx.len(),
            src.size(d)
        );
    }
    let n = out.size(d);
    if a.ndim() > 1 {
        // upstream checks every index before adding (1-d: each as it comes, below)
        if let Some(&k) = idx.iter().find(|&&k| k < 0 || k as usize >= n) {
            bail!(
                runtime,
                "index {k} is out of bounds for dimension {d} with size {n}"
            );
        }
    }
    unsafe {
        if out.data != a.data {
            copy_cast(&out, &a)?;
        }
        let (outer, inner) = (
            out.sizes[..d].iter().product::<i64>() as usize,
            out.sizes[d + 1..].iter().product::<i64>() as usize,
        );
        let dense = out.is_contiguous()
            && src.is_contiguous()
            && src.sizes[..d] == out.sizes[..d]
            && src.sizes[d + 1..] == out.sizes[d + 1..];
        macro_rules! run {
            ($T:ty) => {{
                let al: $T = alpha.to();
                let m = src.size(d);
                for (i, &k) in idx.iter().enumerate() {
                    if k < 0 || k as usize >= n {
                        bail!(index_error, "index out of range in self");
                    }
                    if dense {
                        // contiguous slices: rows of `inner` elements, no plan per index
                        let (o, s) = (out.data as *mut $T, src.data as *const $T);
                        for q in 0..outer {
                            let dst = o.add((q * n + k as usize) * inner);
                            let from = s.add((q * m + i) * inner);
                            let (dst, from) = (
                                std::slice::from_raw_parts_mut(dst, inner),
                                std::slice::from_raw_parts(from, inner),
                            );
                            if al == 1.0 {
                                // fma(y, 1, x) is x + y rounded once: the plain add, vectorised
                                for (x, &y) in dst.iter_mut().zip(from) {
                                    *x += y;
                                }
                            } else {
                                for (x, &y) in dst.iter_mut().zip(from) {
                                    *x = y.mul_add(al, *x);
                                }
                            }
                        }
                        continue;
                    }
                    let (dv, sv) = (select(&out, d, k as usize), select(&src, d, i));
                    let dv = dv.view();
                    crate::strided::map2(&dv, &dv, &sv.view(), move |x: $T, y: $T| {
                        y.mul_add(al, x)
                    })?;
                }
            }};
        }
        match out.dtype {
            TnDtype::Float32 => run!(f32),
            TnDtype::Float64 => run!(f64),
            dt => bail!(
                not_implemented,
                "\"index_add_cpu_\" not implemented for '{dt:?}' in the native kernel"
            ),
        }
    }
    Ok(())
}

/// `embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)`:
/// rows of `weight` gathered by `indices`; the output is `indices.shape + [D]`.
fn embedding(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let w = c.tensor(0)?;
    let indices = c.tensor(1)?;
    if w.ndim() != 2 {
        bail!(runtime, "'weight' must be 2-D");
    }
    let idx = unsafe { read_indices(&indices, "embedding")? };
    let (rows, dsz) = (w.size(0), w.size(1));
    let ni = indices.ndim();
    if out.ndim() != ni + 1 {
        bail!(
            runtime,
            "embedding: output rank {} for indices of rank {ni}",
            out.ndim()
        );
    }
    let size = w.itemsize();
    let (ws0, ws1) = (w.stride(0) * size as isize, w.stride(1) * size as isize);
    let os1 = out.stride(ni) * size as isize;
    for (k, &i) in idx.iter().enumerate() {
        if i < 0 || i as usize >= rows {
            bail!(index_error, "index out of range in self");
        }
        let mut rem = k;
        let mut off = 0isize;
        for d in (0..ni).rev() {
            let s = indices.size(d);
            off += (rem % s) as isize * out.stride(d);
            rem /= s;
        }
        unsafe {
            copy_run(
                out.data.wrapping_offset(off * size as isize),
                os1,
                w.data.wrapping_offset(i as isize * ws0),
                ws1,
                dsz,
                size,
            );
        }
    }
    Ok(())
}

/// `gather(self, int dim, Tensor index, *, bool sparse_grad=False)`: `out[i][j] = self[index[i][j]][j]`
/// (for dim 0); `index` may be smaller than `self` in the other dims.
fn gather(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let index = c.tensor(2)?;
    let d = if a.ndim() == 0 {
        0
    } else {
        normalize_dims(&[c.int(1)?], a.ndim())?[0]
    };
    if index.dtype != TnDtype::Int64 {
        bail!(runtime, "gather(): Expected dtype int64 for index");
    }
    let n = if a.ndim() == 0 { 1 } else { a.size(d) };
    let size = a.itemsize();
    // `self` addressed at the index position with its `dim` stride zeroed.
    let mut sst = a.strides.to_vec();
    if a.ndim() > 0 {
        sst[d] = 0;
    }
    if index.ndim() != a.ndim().max(index.ndim()) || (a.ndim() > 0 && index.ndim() != a.ndim()) {
        bail!(
            runtime,
            "Index tensor must have the same number of dimensions as input tensor"
        );
    }
    let dstride = if a.ndim() > 0 {
        a.stride(d) * size as isize
    } else {
        0
    };
    let plan = Plan::<3>::new(
        index.sizes,
        [out.strides, index.strides, &sst],
        [size, 8, size],
    )?;
    let mut bad: Option<i64> = None;
    unsafe {
        plan.run([out.data, index.data, a.data], |p, s, m| {
            for k in 0..m as isize {
                if bad.is_some() {
                    return;
                }
                let i = (p[1].wrapping_offset(k * s[1]) as *const i64).read();
                if i < 0 || i as usize >= n {
                    bad = Some(i);
                    return;
                }
                std::ptr::copy_nonoverlapping(
                    p[2].wrapping_offset(k * s[2] + i as isize * dstride),
                    p[0].wrapping_offset(k * s[0]),
                    size,
                );
            }
        });
    }
    if let Some(i) = bad {
        bail!(
            runtime,
            "index {i} is out of bounds for dimension {d} with size {n}"
        );
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// cat / arange

/// `cat(Tensor[] tensors, int dim=0)`: each input copied (with dtype conversion) into its slice
/// of the output; 1-d empty inputs are skipped (upstream's legacy rule).
fn cat(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let ts = c.tensor_list(0)?;
    if out.ndim() == 0 {
        bail!(runtime, "zero-dimensional tensor cannot be concatenated");
    }
    let d = normalize_dims(&[c.int(1)?], out.ndim())?[0];
    let mut at = 0usize;
    for t in &ts {
        if t.ndim() == 1 && t.size(0) == 0 && out.ndim() != 1 {
            continue;
        }
        if t.ndim() != out.ndim() {
            bail!(
                runtime,
                "cat: input of rank {} for an output of rank {}",
                t.ndim(),
                out.ndim()
            );
        }
        let mut dst = OwnedView::of(&out);
        dst.data = out
            .data
            .wrapping_offset(at as isize * out.stride(d) * out.itemsize() as isize);
        dst.sizes[d] = t.sizes[d];
        copy_cast(&dst.view(), t)?;
        at += t.size(d);
    }
    if at != out.size(d) {
        bail!(
            runtime,
            "cat: inputs fill {at} of {} along dim {d}",
            out.size(d)
        );
    }
    Ok(())
}

/// `arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out)`: the core sizes
/// `out` (1-d, `ceil((end - start) / step)` elements); element `i` is `start + step * i` computed
/// in upstream's CPU accumulate type (f64 for f32/f64, f32 for f16/bf16, i64 for integers).
fn arange(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (start, step) = (c.scalar(0)?, c.scalar(2)?);
    let n = out.numel();
    unsafe {
        match out.dtype {
            TnDtype::Float32 | TnDtype::Float64 => dispatch_all!(out.dtype, "arange_cpu", T => {
                let (s0, st) = (start.as_f64(), step.as_f64());
                write_seq(&out, n, |i| T::from_f64(s0 + st * i as f64))
            }),
            TnDtype::Float16 | TnDtype::BFloat16 => {
                crate::dispatch_float!(out.dtype, "arange_cpu", T, A => {
                    let (s0, st) = (start.as_f64() as f32, step.as_f64() as f32);
                    write_seq(&out, n, |i| T::from_acc(A::c((s0 + st * i as f32) as f64)))
                })
            }
            dt => dispatch_all!(dt, "arange_cpu", T => {
                let (s0, st) = (start.to::<i64>(), step.to::<i64>());
                write_seq(&out, n, |i| T::from_i64(s0.wrapping_add(st.wrapping_mul(i as i64))))
            }),
        }
    }
}

/// `linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out)` for float32/float64,
/// as upstream's `linspace_kernel` (RangeFactoriesKernel.cpp, a scalar loop) writes it:
/// `step = (end - start) / (steps - 1)` in the dtype; the first half counts up from start
/// (`start + step * i`), the second down from end (`end - step * (steps - i - 1)`), each one
/// fused multiply-add as GCC builds the expression.
fn linspace(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (start, end) = (c.scalar(0)?, c.scalar(1)?);
    let steps = c.int(2)?;
    if out.ndim() != 1 || out.numel() as i64 != steps {
        bail!(
            runtime,
            "linspace: the output must be 1-d with `steps` elements"
        );
    }
    macro_rules! run {
        ($T:ty) => {{
            let (s, e): ($T, $T) = (start.to(), end.to());
            let step = if steps > 1 {
                (e - s) / (steps - 1) as $T
            } else {
                0.0
            };
            let half = steps / 2;
            for i in 0..steps {
                let v = if steps == 1 {
                    s
                } else if i < half {
                    step.mul_add(i as $T, s)
                } else {
                    (-step).mul_add((steps - i - 1) as $T, e)
                };
                out.write::<$T>(i as isize * out.stride(0), v);
            }
            Ok(())
        }};
    }
    unsafe {
        match out.dtype {
            TnDtype::Float32 => run!(f32),
            TnDtype::Float64 => run!(f64),
            _ => bail!(
                not_implemented,
                "linspace: the cpu kernel writes float32 and float64 (the core composes the rest)"
            ),
        }
    }
}

unsafe fn write_seq<T: Copy>(out: &Tensor, n: usize, f: impl Fn(usize) -> T) -> KResult {
    if out.ndim() != 1 || out.numel() != n {
        bail!(runtime, "arange: the output must be 1-d");
    }
    for i in 0..n {
        out.write::<T>(i as isize * out.stride(0), f(i));
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// masked_fill

/// `masked_fill_.Scalar(self, mask, value)` (and the functional `masked_fill.Scalar`, which first
/// copies `self` into the output): `mask` arrives broadcast to `self`'s shape.
fn masked_fill(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let mask = c.tensor(1)?;
    let v = c.scalar(2)?;
    if mask.dtype != TnDtype::Bool {
        bail!(
            runtime,
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            crate::dtype::dtype_name(mask.dtype)
        );
    }
    if out.data != a.data {
        copy_cast(&out, &a)?;
    }
    unsafe {
        dispatch_all!(out.dtype, "masked_fill", T => {
            let val: T = v.checked()?;
            let plan = Plan::<2>::new(out.sizes, [out.strides, mask.strides], [out.itemsize(), 1])?;
            plan.run([out.data, mask.data], |p, s, n| {
                for i in 0..n as isize {
                    if (p[1].wrapping_offset(i * s[1]) as *const u8).read() != 0 {
                        (p[0].wrapping_offset(i * s[0]) as *mut T).write(val);
                    }
                }
            });
            Ok(())
        })
    }
}

// ----------------------------------------------------------------------------------------------
// advanced indexing: index.Tensor / index_put_

/// The plan of `self[indices]`: which self dims are indexed, the broadcast index values, and the
/// shape of the result.
struct AdvIndex {
    /// `(self dim, index values broadcast to bshape)` for each indexed dim.
    idx: Vec<(usize, Vec<i64>)>,
    bshape: Vec<usize>,
    /// Self dims not indexed, in order.
    rest: Vec<usize>,
    /// Where the broadcast dims go in the result: after `rest[..pos]`.
    pos: usize,
    result: Vec<usize>,
}

unsafe fn plan_adv(a: &Tensor, indices: &[Option<Tensor>]) -> KResult<AdvIndex> {
    // Expand bool/uint8 masks into one long index per masked dim (their nonzero coordinates).
    let mut per_dim: Vec<(usize, Vec<i64>, Vec<usize>)> = vec![];
    let mut d = 0usize;
    for it in indices {
        match it {
            None => d += 1,
            Some(t) if matches!(t.dtype, TnDtype::Bool | TnDtype::UInt8) => {
                let k = t.ndim();
                if d + k > a.ndim() {
                    bail!(
                        index_error,
                        "too many indices for tensor of dimension {}",
                        a.ndim()
                    );
                }
                for j in 0..k {
                    if t.sizes[j] != a.sizes[d + j] {
                        bail!(index_error, "The shape of the mask {:?} at index {j} does not match the shape of the indexed tensor {:?} at index {}", t.sizes, a.sizes, d + j);
                    }
                }
                let m: Vec<u8> = gather_vec(t, |v: u8| v)?;
                let mut coords: Vec<Vec<i64>> = vec![vec![]; k];
                for (flat, &b) in m.iter().enumerate() {
                    if b != 0 {
                        let mut rem = flat;
                        for j in (0..k).rev() {
                            coords[j].push((rem % t.size(j)) as i64);
                            rem /= t.size(j);
                        }
                    }
                }
                for (j, cs) in coords.into_iter().enumerate() {
                    let len = cs.len();
                    per_dim.push((d + j, cs, vec![len]));
                }
                d += k;
            }
            Some(t) => {
                if d >= a.ndim() {
                    bail!(
                        index_error,
                        "too many indices for tensor of dimension {}",
                        a.ndim()
                    );
                }
                let v = read_indices(t, "index")?;
                per_dim.push((d, v, t.sizes.iter().map(|&s| s as usize).collect()));
                d += 1;
            }
        }
    }
    if d > a.ndim() {
        bail!(
            index_error,
            "too many indices for tensor of dimension {}",
            a.ndim()
        );
    }
    // Broadcast the index shapes.
    let nb = per_dim.iter().map(|p| p.2.len()).max().unwrap_or(0);
    let mut bshape = vec![1usize; nb];
    for (_, _, sh) in &per_dim {
        for (j, &s) in sh.iter().enumerate() {
            let bj = nb - sh.len() + j;
            if bshape[bj] == 1 {
                bshape[bj] = s;
            } else if s != 1 && s != bshape[bj] {
                bail!(index_error, "shape mismatch: indexing tensors could not be broadcast together with shapes {:?}", per_dim.iter().map(|p| p.2.clone()).collect::<Vec<_>>());
            }
        }
    }
    let bnum: usize = bshape.iter().product();
    let mut idx = vec![];
    // Upstream numbers the dims of its error message within the indexed ones.
    for (pos, (dim, v, sh)) in per_dim.into_iter().enumerate() {
        let n = a.size(dim) as i64;
        let mut out = Vec::with_capacity(bnum);
        for flat in 0..bnum {
            // Broadcast position → source position.
            let mut rem = flat;
            let mut src = 0usize;
            let mut mul = 1usize;
            for j in (0..nb).rev() {
                let c = rem % bshape[j];
                rem /= bshape[j];
                if j >= nb - sh.len() {
                    let sj = j - (nb - sh.len());
                    if sh[sj] != 1 {
                        src += c * mul;
                    }
                    mul *= sh[sj];
                }
            }
            let mut i = v[src];
            if i < -n || i >= n {
                bail!(
                    index_error,
                    "index {i} is out of bounds for dimension {pos} with size {n}"
                );
            }
            if i < 0 {
                i += n;
            }
            out.push(i);
        }
        idx.push((dim, out));
    }
    let indexed: Vec<usize> = idx.iter().map(|p| p.0).collect();
    let rest: Vec<usize> = (0..a.ndim()).filter(|x| !indexed.contains(x)).collect();
    let adjacent = indexed.windows(2).all(|w| w[1] == w[0] + 1);
    let pos = if adjacent && !indexed.is_empty() {
        rest.iter().filter(|&&r| r < indexed[0]).count()
    } else {
        0
    };
    let mut result: Vec<usize> = rest[..pos].iter().map(|&r| a.size(r)).collect();
    result.extend(&bshape);
    result.extend(rest[pos..].iter().map(|&r| a.size(r)));
    Ok(AdvIndex {
        idx,
        bshape,
        rest,
        pos,
        result,
    })
}

impl AdvIndex {
    /// Calls `f(result_flat, self_element_offset)` for every result element (logical order).
    fn for_each(&self, a: &Tensor, mut f: impl FnMut(usize, isize)) {
        let total: usize = self.result.iter().product();
        let nb = self.bshape.len();
        let mut coord = vec![0usize; self.result.len()];
        for flat in 0..total {
            let mut rem = flat;
            for j in (0..coord.len()).rev() {
                coord[j] = rem % self.result[j];
                rem /= self.result[j];
            }
            let mut off = 0isize;
            let mut bflat = 0usize;
            for j in 0..nb {
                bflat = bflat * self.bshape[j] + coord[self.pos + j];
            }
            for (dim, v) in &self.idx {
                off += v[bflat] as isize * a.stride(*dim);
            }
            for (k, &r) in self.rest.iter().enumerate() {
                let cj = if k < self.pos { k } else { k + nb };
                off += coord[cj] as isize * a.stride(r);
            }
            f(flat, off);
        }
    }
}

/// `index.Tensor(self, Tensor?[] indices)`: advanced indexing (`self[i, :, j]`, masks).
fn index(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let indices = c.opt_tensor_list(1)?;
    unsafe {
        let adv = plan_adv(&a, &indices)?;
        // The result shape depends on mask contents: the core may leave the output for us to
        // allocate (a null view), as for nonzero.
        let out = if c.out_is_unallocated(0) {
            let dims: Vec<i64> = adv.result.iter().map(|&d| d as i64).collect();
            c.alloc_output(0, a.dtype, &dims)?
        } else {
            c.out(0)?
        };
        if out.numel() != adv.result.iter().product::<usize>() {
            bail!(
                runtime,
                "index: output of shape {:?} for a result of shape {:?}",
                out.sizes,
                adv.result
            );
        }
        let size = a.itemsize();
        // The output in logical order: walk its multi-index alongside.
        let mut offs = Vec::with_capacity(out.numel());
        let oc = Plan::<2>::new(
            out.sizes,
            [&contiguous_strides(out.sizes), out.strides],
            [1, size],
        )?;
        oc.run([std::ptr::null_mut(), out.data], |p, s, n| {
            for i in 0..n as isize {
                offs.push(p[1].wrapping_offset(i * s[1]));
            }
        });
        adv.for_each(&a, |flat, off| {
            std::ptr::copy_nonoverlapping(
                a.data.wrapping_offset(off * size as isize),
                offs[flat],
                size,
            );
        });
    }
    Ok(())
}

/// `index_put_(self, Tensor?[] indices, Tensor values, bool accumulate=False)` (and the
/// functional `index_put`, which writes a copy of `self`): `values` broadcast to the indexed
/// shape; duplicates: the last write wins, or every one is added with `accumulate`.
fn index_put(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let indices = c.opt_tensor_list(1)?;
    let values = c.tensor(2)?;
    let accumulate = c.bool(3)?;
    // Upstream sends a single mask index with a one-element value to `masked_fill_`, which
    // refuses uint8 masks.
    let defined: Vec<&Tensor> = indices.iter().flatten().collect();
    if !accumulate
        && values.numel() == 1
        && defined.len() == 1
        && defined[0].dtype == TnDtype::UInt8
    {
        bail!(
            runtime,
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
        );
    }
    if out.data != a.data {
        copy_cast(&out, &a)?;
    }
    unsafe {
        let adv = plan_adv(&out, &indices)?;
        // `values` right-aligned and broadcast to the result shape.
        let rn = adv.result.len();
        if values.ndim() > rn {
            bail!(runtime, "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}", values.sizes, adv.result);
        }
        let mut vst = vec![0isize; rn];
        for j in 0..values.ndim() {
            let rj = rn - values.ndim() + j;
            let vs = values.size(j);
            if vs != 1 && vs != adv.result[rj] {
                bail!(runtime, "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}", values.sizes, adv.result);
            }
            vst[rj] = if vs == 1 { 0 } else { values.stride(j) };
        }
        let voff = |flat: usize| -> isize {
            let mut rem = flat;
            let mut off = 0isize;
            for j in (0..rn).rev() {
                off += (rem % adv.result[j]) as isize * vst[j];
                rem /= adv.result[j];
            }
            off
        };
        macro_rules! put {
            ($T:ty, |$x:ident, $y:ident| $add:expr) => {
                dispatch_all!(values.dtype, "index_put", V => {
                    adv.for_each(&out, |flat, off| {
                        let v: $T = values.read::<V>(voff(flat)).cast::<$T>();
                        let p = out.data.wrapping_offset(off * std::mem::size_of::<$T>() as isize) as *mut $T;
                        if accumulate {
                            let ($x, $y) = (p.read(), v);
                            p.write($add);
                        } else {
                            p.write(v);
                        }
                    });
                })
            };
        }
        match out.dtype {
            TnDtype::Bool => put!(crate::dtype::Bool, |x, y| x | y),
            dt if crate::dtype::is_int(dt) => {
                crate::dispatch_int!(dt, "index_put", T => put!(T, |x, y| x.wrapping_add(y)))
            }
            // f16/bf16: upstream's `Half + Half` adds in f32 and rounds once.
            dt => {
                crate::dispatch_float!(dt, "index_put", T, A => put!(T, |x, y| T::from_acc(x.to_acc() + y.to_acc())))
            }
        }
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// nonzero

/// `nonzero(self) -> [n, ndim]` int64, row-major order; the output is allocated through
/// `ctx.alloc_output` once `n` is known.
fn nonzero(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let nd = a.ndim();
    let mut flats: Vec<usize> = vec![];
    unsafe {
        dispatch_all!(a.dtype, "nonzero_cpu", T => {
            let plan = Plan::<2>::new(a.sizes, [&contiguous_strides(a.sizes), a.strides], [1, a.itemsize()])?;
            plan.run([std::ptr::null_mut(), a.data], |p, s, n| {
                for i in 0..n as isize {
                    if (p[1].wrapping_offset(i * s[1]) as *const T).read().to_bool() {
                        flats.push((p[0] as isize + i * s[0]) as usize);
                    }
                }
            });
        });
    }
    let out = c.alloc_output(0, TnDtype::Int64, &[flats.len() as i64, nd as i64])?;
    for (r, &f) in flats.iter().enumerate() {
        let mut rem = f;
        for d in (0..nd).rev() {
            let s = a.size(d);
            unsafe {
                out.write::<i64>(
                    r as isize * out.stride(0) + d as isize * out.stride(1),
                    (rem % s) as i64,
                )
            };
            rem /= s;
        }
    }
    Ok(())
}

//! Indexing: index_select, gather, index.Tensor (integer and boolean indices), cat, and the
//! arange fill. Indices are bounds-checked on the device (an error flag read back after the
//! dispatch) and raise upstream's error kind.
//!
//! Boolean masks in `index.Tensor` (and so `masked_select`) have data-dependent output sizes:
//! the mask is read back to size the output (as every GPU backend must synchronise for it);
//! the positions it selects are then uploaded as int64 indices and the gather runs on the device.

use torchnative_backend::abi::{TnDtype, TnErrorKind};

use crate::ew::{copy_cast, strides_over};
use crate::gen::{cast, ct, lit_i64, Ct, Kernel, Operand};
use crate::kernel::{err, runtime, unsupported, Call, KResult, View};
use crate::nn::{index_expr, Scratch};
use crate::reduce::norm_dims;
use crate::vk_kernels;

vk_kernels! {
    k_index_select = "aten::index_select" => |c| index_select(c);
    k_gather = "aten::gather" => |c| gather(c);
    k_index = "aten::index.Tensor" => |c| index(c);
    k_index_put_ = "aten::index_put_" => |c| index_put(c);
    k_index_put = "aten::index_put" => |c| index_put(c);
    k_cat = "aten::cat" => |c| cat(c);
    k_arange = "aten::arange.start_out" => |c| arange(c);
}

/// One gather: `out[p] = src[base(p) + ix(p) * stride]`, `ix` read from `idx` at its offset for
/// `p`; out-of-range (negative too, unless `wrap`) raises `err`.
#[allow(clippy::too_many_arguments)]
fn gather_run(
    out: &View,
    src: &View,
    src_strides: Vec<i64>,
    idx: &View,
    idx_strides: Vec<i64>,
    bound: i64,
    stride: i64,
    wrap: bool,
    err: (TnErrorKind, String),
) -> KResult {
    if out.numel() == 0 {
        return Ok(());
    }
    ct("gather", src.dtype)?;
    let ix = index_expr(1, "b1", idx.dtype)?;
    let w = if wrap {
        "if (ix < 0) { ix = ix + s_i(0); }"
    } else {
        ""
    };
    let body = format!(
        "var ix = {ix}; {w} if (ix < 0 || ix >= s_i(0)) {{ fail(); return; }} st0(b0, ld2(b2 + ix * s_i(1)));"
    );
    let mut k = Kernel::new(body);
    k.outer = out.sizes.clone();
    k.operands = vec![
        Operand::output(out, out.strides.clone(), vec![]),
        Operand::input(idx, idx_strides, vec![]),
        Operand::input(src, src_strides, vec![]),
    ];
    k.scalar_i(0, bound).scalar_i(1, stride);
    k.check = Some(err);
    k.run()
}

fn index_select(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let idx = c.tensor(2)?;
    if a.ndim() == 0 {
        let i = idx.restrided(vec![], vec![], 0);
        return gather_run(
            &out,
            &a,
            vec![0; out.ndim()],
            &i,
            vec![0; out.ndim()],
            1,
            0,
            false,
            (TnErrorKind::Index, "index out of range in self".into()),
        );
    }
    let dim = norm_dims(&[c.int(1)?], a.ndim())?[0];
    let mut ss = a.strides.clone();
    ss[dim] = 0;
    let mut is = vec![0i64; out.ndim()];
    is[dim] = if idx.ndim() == 0 { 0 } else { idx.strides[0] };
    gather_run(
        &out,
        &a,
        ss,
        &idx,
        is,
        a.sizes[dim],
        a.strides[dim],
        false,
        (TnErrorKind::Index, "index out of range in self".into()),
    )
}

fn gather(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let idx = c.tensor(2)?;
    let nd = a.ndim().max(1);
    let dim = norm_dims(&[c.int(1)?], a.ndim())?
        .first()
        .copied()
        .unwrap_or(0);
    let pad = |v: &Vec<i64>, fill: i64| {
        if v.is_empty() {
            vec![fill; nd.min(out.ndim().max(1))]
        } else {
            v.clone()
        }
    };
    if out.ndim() == 0 || a.ndim() == 0 {
        let bound = if a.ndim() == 0 { 1 } else { a.sizes[dim] };
        return gather_run(
            &out,
            &a,
            vec![0; out.ndim()],
            &idx,
            idx.strides.clone(),
            bound,
            0,
            false,
            (
                TnErrorKind::Runtime,
                format!("index is out of bounds for dimension {dim} with size {bound}"),
            ),
        );
    }
    let mut ss = pad(&a.strides, 0);
    ss[dim] = 0;
    gather_run(
        &out,
        &a,
        ss,
        &idx,
        idx.strides.clone(),
        a.sizes[dim],
        a.strides[dim],
        false,
        (
            TnErrorKind::Runtime,
            format!(
                "index is out of bounds for dimension {dim} with size {}",
                a.sizes[dim]
            ),
        ),
    )
}

/// Uploads host int64 values as a contiguous device tensor.
fn upload_i64(vals: &[i64]) -> KResult<Scratch> {
    let s = Scratch::new(TnDtype::Int64, vec![vals.len() as i64])?;
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    if let Some(b) = &s.1.buffer {
        crate::alloc::write_bytes(b, 0, &bytes).map_err(runtime)?;
    }
    Ok(s)
}

/// Reads a bool view's bytes (logical row-major order) back to the host.
fn read_mask(m: &View) -> KResult<Vec<bool>> {
    let n = m.numel();
    if n == 0 {
        return Ok(vec![]);
    }
    let dense = Scratch::new(TnDtype::Bool, m.sizes.clone())?;
    copy_cast(&dense.1, m)?;
    let mut bytes = vec![0u8; n];
    crate::alloc::read_bytes(dense.1.buffer.as_ref().unwrap(), 0, &mut bytes).map_err(runtime)?;
    Ok(bytes.into_iter().map(|b| b != 0).collect())
}

/// `index.Tensor(self, Tensor?[] indices)`: leading Nones, then a run of integer/bool index
/// tensors (broadcast together), then trailing Nones. Index tensors separated by a None
/// (upstream moves the broadcast dims first) are refused.
/// Advanced indices of `a`, normalised: bool masks expanded to int64 positions (uploaded; the
/// scratch memory lives in `scratch`), the run of index tensors, where it starts, and the shape
/// they broadcast to.
struct Indices {
    first: usize,
    run: Vec<View>,
    bshape: Vec<i64>,
    _scratch: Vec<Scratch>,
}

impl Indices {
    fn new(a: &View, raw: Vec<Option<View>>) -> KResult<Indices> {
        let mut scratch: Vec<Scratch> = vec![];
        let mut idx: Vec<Option<View>> = vec![];
        let mut dim = 0usize;
        for t in raw {
            match t {
                None => {
                    idx.push(None);
                    dim += 1;
                }
                Some(t) if t.dtype == TnDtype::Bool || t.dtype == TnDtype::UInt8 => {
                    let nd = t.ndim();
                    if nd == 0 {
                        return Err(unsupported("index with a 0-d boolean mask", TnDtype::Bool));
                    }
                    if dim + nd > a.ndim() || a.sizes[dim..dim + nd] != t.sizes[..] {
                        return Err(err(
                            TnErrorKind::Index,
                            format!(
                                "The shape of the mask {:?} at index {dim} does not match the shape of the indexed tensor {:?}",
                                t.sizes, a.sizes
                            ),
                        ));
                    }
                    let bits = read_mask(&t)?;
                    let mut coords: Vec<Vec<i64>> = vec![vec![]; nd];
                    for (flat, &b) in bits.iter().enumerate() {
                        if b {
                            let mut r = flat as i64;
                            for d in (0..nd).rev() {
                                coords[d].push(r % t.sizes[d]);
                                r /= t.sizes[d];
                            }
                        }
                    }
                    for cs in coords {
                        let s = upload_i64(&cs)?;
                        idx.push(Some(s.1.clone()));
                        scratch.push(s);
                    }
                    dim += nd;
                }
                Some(t) => {
                    idx.push(Some(t));
                    dim += 1;
                }
            }
        }
        while idx.last().is_some_and(|t| t.is_none()) {
            idx.pop();
        }
        let first = idx.iter().position(|t| t.is_some()).unwrap_or(0);
        let run: Vec<View> = idx[first..].iter().flatten().cloned().collect();
        if run.len() != idx.len() - first {
            return Err(crate::kernel::not_implemented(
                "index.Tensor with index tensors separated by None is not implemented on device 'vulkan'",
            ));
        }
        let mut bshape: Vec<i64> = vec![];
        for t in &run {
            let n = bshape.len().max(t.ndim());
            let mut s = vec![1i64; n];
            for d in 0..n {
                let x = if d + bshape.len() >= n {
                    bshape[d + bshape.len() - n]
                } else {
                    1
                };
                let y = if d + t.ndim() >= n {
                    t.sizes[d + t.ndim() - n]
                } else {
                    1
                };
                s[d] = if x == 1 {
                    y
                } else if y == 1 || y == x {
                    x
                } else {
                    return Err(err(
                        TnErrorKind::Index,
                        format!(
                            "shape mismatch: indexing tensors could not be broadcast together with shapes {:?}",
                            run.iter().map(|t| t.sizes.clone()).collect::<Vec<_>>()
                        ),
                    ));
                };
            }
            bshape = s;
        }
        Ok(Indices {
            first,
            run,
            bshape,
            _scratch: scratch,
        })
    }

    /// The shape indexing `a` gives: leading dims, the broadcast index shape, trailing dims.
    fn shape(&self, a: &View) -> Vec<i64> {
        let mut o: Vec<i64> = a.sizes[..self.first].to_vec();
        o.extend(&self.bshape);
        o.extend(&a.sizes[self.first + self.run.len()..]);
        o
    }

    /// Strides of `a` over [`Indices::shape`] (0 on the indexed dims), the index operands with
    /// their strides over that shape, and WGSL adding each bounds-checked index to `o`; the index
    /// operands are numbered from `slot0`.
    fn gather_code(
        &self,
        a: &View,
        slot0: usize,
        at: &dyn Fn(usize) -> String,
    ) -> KResult<(Vec<i64>, Vec<Operand>, String)> {
        let (first, k, nb) = (self.first, self.run.len(), self.bshape.len());
        let mut strides = a.strides[..first].to_vec();
        strides.extend(vec![0; nb]);
        strides.extend(a.strides[first + k..].iter());
        let mut ops = vec![];
        let mut code = String::new();
        for (n, t) in self.run.iter().enumerate() {
            let mut s = vec![0i64; first];
            s.extend(strides_over(t, &self.bshape)?);
            s.extend(vec![0; a.ndim() - first - k]);
            let slot = slot0 + n;
            ops.push(Operand::input(t, s, vec![]));
            let d = first + n;
            let ix = index_expr(slot, &at(slot), t.dtype)?;
            code += &format!(
                "  {{ var ix = {ix}; if (ix < 0) {{ ix = ix + {sz}; }} if (ix < 0 || ix >= {sz}) {{ fail(); return; }} o = o + ix * {st}; }}\n",
                sz = a.sizes[d],
                st = a.strides[d]
            );
        }
        Ok((strides, ops, code))
    }
}

const INDEX_ERROR: &str = "index out of bounds (an index is out of range for its dimension)";

/// `index.Tensor(self, Tensor?[] indices)`: leading Nones, then a run of integer/bool index
/// tensors (broadcast together), then trailing Nones. Index tensors separated by a None
/// (upstream moves the broadcast dims first) are refused.
fn index(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let ix = Indices::new(&a, c.opt_tensor_list(1)?)?;
    if ix.run.is_empty() {
        let out = c.alloc_output(0, a.dtype, &a.sizes)?;
        return copy_cast(&out, &a);
    }
    let oshape = ix.shape(&a);
    let out = c.alloc_output(0, a.dtype, &oshape)?;
    if out.numel() == 0 {
        return Ok(());
    }
    ct("index", a.dtype)?;
    let (src, idx_ops, code) = ix.gather_code(&a, 2, &|s| format!("b{s}"))?;
    let mut ops = vec![
        Operand::output(&out, out.strides.clone(), vec![]),
        Operand::input(&a, src, vec![]),
    ];
    ops.extend(idx_ops);
    let mut kern = Kernel::new(format!("var o = b1;\n{code}  st0(b0, ld1(o));"));
    kern.outer = oshape;
    kern.operands = ops;
    kern.check = Some((TnErrorKind::Index, INDEX_ERROR.into()));
    kern.run()
}

/// `index_put_(self, Tensor?[] indices, values, accumulate)` and the functional `index_put`
/// (which first copies `self` into its output). Without `accumulate`, one invocation per indexed
/// element (duplicate indices: one of the writes wins, which upstream leaves undefined too); with
/// `accumulate`, a single invocation walks the elements in order, so duplicates add up exactly as
/// upstream's sequential CPU loop does.
fn index_put(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let values = c.tensor(2)?;
    let accumulate = c.bool(3)?;
    if !(out.same_buffer(&a) && out.offset == a.offset) {
        copy_cast(&out, &a)?;
    }
    let ix = Indices::new(&out, c.opt_tensor_list(1)?)?;
    let shape = ix.shape(&out);
    if shape.iter().product::<i64>() == 0 {
        return Ok(());
    }
    let k = ct("index_put_", out.dtype)?;
    let vs = strides_over(&values, &shape)?;
    let kernel = if accumulate {
        let add = match k {
            Ct::F | Ct::I => "ld0(o) + v",
            Ct::L => "l_add(ld0(o), v)",
            Ct::B => "ld0(o) || v",
            Ct::D => return Err(unsupported("index_put_", out.dtype)),
        };
        let (dst, idx_ops, code) = ix.gather_code(&out, 2, &|s| format!("b{s} + ioff{s}(j)"))?;
        let v = cast("ld1(b1 + ioff1(j))", ct("index_put_", values.dtype)?, k);
        // Everything is inner: one invocation walks the elements in order.
        let mut op0 = Operand::output(&out, vec![0], dst);
        op0.load = true;
        let mut ops = vec![op0, Operand::input(&values, vec![0], vs)];
        for mut op in idx_ops {
            op.inner = std::mem::replace(&mut op.outer, vec![0]);
            ops.push(op);
        }
        let mut kern = Kernel::new(format!(
            "for (var j = 0u; j < NINNER; j = j + 1u) {{\n  var o = b0 + ioff0(j);\n{code}  let v = {v};\n  st0(o, {add});\n}}"
        ));
        kern.outer = vec![1];
        kern.inner = shape;
        kern.operands = ops;
        kern
    } else {
        let (dst, idx_ops, code) = ix.gather_code(&out, 2, &|s| format!("b{s}"))?;
        let v = cast("ld1(b1)", ct("index_put_", values.dtype)?, k);
        let mut ops = vec![
            Operand::output(&out, dst, vec![]),
            Operand::input(&values, vs, vec![]),
        ];
        ops.extend(idx_ops);
        let mut kern = Kernel::new(format!("var o = b0;\n{code}  st0(o, {v});"));
        kern.outer = shape;
        kern.operands = ops;
        kern
    };
    let mut kern = kernel;
    kern.check = Some((TnErrorKind::Index, INDEX_ERROR.into()));
    kern.run()
}

fn cat(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let ts = c.tensor_list(0)?;
    if out.numel() == 0 {
        return Ok(());
    }
    let dim = norm_dims(&[c.int(1)?], out.ndim())?[0];
    let mut at = 0i64;
    for t in ts {
        // Legacy empty 1-d tensors are skipped, as upstream does.
        if t.ndim() == 1 && t.sizes[0] == 0 && out.ndim() != 1 {
            continue;
        }
        let n = t.sizes[dim];
        if n == 0 {
            continue;
        }
        let mut sizes = out.sizes.clone();
        sizes[dim] = n;
        let slice = out.restrided(sizes, out.strides.clone(), at * out.strides[dim]);
        copy_cast(&slice, &t)?;
        at += n;
    }
    Ok(())
}

/// `arange.start_out(start, end, step, *, out)`: `out[i] = start + i * step` (int64 exactly;
/// float32 as one fused multiply-add of the f32-rounded start and step).
fn arange(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (start, step) = (c.scalar(0)?, c.scalar(2)?);
    if out.numel() == 0 {
        return Ok(());
    }
    let body = match ct("arange", out.dtype)? {
        Ct::L => format!(
            "st0(b0, l_add({}, l_mul({}, vec2<u32>(i, 0u))));",
            lit_i64(start.as_i64()),
            lit_i64(step.as_i64())
        ),
        Ct::I => format!(
            "st0(b0, {} + {} * i32(i));",
            start.as_i64() as i32,
            step.as_i64() as i32
        ),
        Ct::F => format!(
            "st0(b0, fma({}, f32(i), {}));",
            crate::gen::lit(Ct::F, step.as_f64()),
            crate::gen::lit(Ct::F, start.as_f64())
        ),
        Ct::B | Ct::D => return Err(unsupported("arange", out.dtype)),
    };
    crate::ew::map(&out, &[], &body)
}

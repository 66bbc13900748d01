//! native_layer_norm, embedding, and scaled dot-product attention (registered under the
//! overload the core routes SDPA to, `_scaled_dot_product_flash_attention_for_cpu`).

use torchnative_backend::abi::{TnDtype, TnErrorKind};

use crate::ew::strides_over;
use crate::gen::{ct, lit, Ct, Kernel, Operand};
use crate::kernel::{not_implemented, runtime, unsupported, Call, KResult, View};
use crate::vk_kernels;

vk_kernels! {
    k_native_layer_norm = "aten::native_layer_norm" => |c| layer_norm(c);
    k_embedding = "aten::embedding" => |c| embedding(c);
    k_sdpa = "aten::_scaled_dot_product_flash_attention_for_cpu" => |c| sdpa(c);
}

/// `native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd)`:
/// two-pass mean and (biased) variance per row, `rstd = 1 / sqrt(var + eps)`, as upstream.
fn layer_norm(c: &mut Call) -> KResult {
    let (out, mean, rstd) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let x = c.tensor(0)?;
    let shape = c.int_list(1)?.to_vec();
    let (w, b) = (c.opt_tensor(2)?, c.opt_tensor(3)?);
    let eps = c.float(4)?;
    if x.dtype != TnDtype::Float32 {
        return Err(unsupported("LayerNormKernelImpl", x.dtype));
    }
    let nd = x.ndim();
    let k = shape.len();
    if k > nd || x.sizes[nd - k..] != shape[..] {
        return Err(runtime(format!(
            "Given normalized_shape={shape:?}, expected input with shape [*, {}], but got input of size{:?}",
            shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            x.sizes
        )));
    }
    if x.numel() == 0 {
        return Ok(());
    }
    let lead = nd - k;
    let split = |v: &View| -> (Vec<i64>, Vec<i64>) {
        (v.strides[..lead].to_vec(), v.strides[lead..].to_vec())
    };
    // mean/rstd: [*lead, 1, ...] (same rank as the input) or [*lead].
    let stat = |v: &View| Operand::output(v, v.strides[..lead].to_vec(), vec![0; k]);
    let (xo, xi) = split(&x);
    let (oo, oi) = split(&out);
    let mut ops = vec![
        Operand::output(&out, oo, oi),
        stat(&mean),
        stat(&rstd),
        Operand::input(&x, xo, xi),
    ];
    let mut y = "(ld3(b3 + ioff3(j)) - mu) * rs".to_string();
    for (t, op) in [(&w, "*"), (&b, "+")] {
        let Some(t) = t else { continue };
        if t.dtype != TnDtype::Float32 {
            return Err(unsupported("LayerNormKernelImpl", t.dtype));
        }
        let n = ops.len();
        ops.push(Operand::input(t, vec![0; lead], strides_over(t, &shape)?));
        y = format!("({y}) {op} ld{n}(b{n} + ioff{n}(j))");
    }
    let body = format!(
        "var mu = 0.0; var comp = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let v = ld3(b3 + ioff3(j)) - comp; let t = mu + v; comp = (t - mu) - v; mu = t; }}\n  mu = mu / f32(NINNER);\n  var var_ = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let d = ld3(b3 + ioff3(j)) - mu; var_ = var_ + d * d; }}\n  var_ = var_ / f32(NINNER);\n  let rs = 1.0 / sqrt(max(var_, 0.0) + {eps});\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ st0(b0 + ioff0(j), {y}); }}\n  st1(b1, mu); st2(b2, rs);",
        eps = lit(Ct::F, eps)
    );
    let mut kern = Kernel::new(body);
    kern.outer = x.sizes[..lead].to_vec();
    kern.inner = x.sizes[lead..].to_vec();
    kern.operands = ops;
    kern.run()
}

/// WGSL reading an index (int64 or int32) loaded from operand `n` at offset `o` as i32.
pub fn index_expr(n: usize, o: &str, d: TnDtype) -> KResult<String> {
    match ct("index", d)? {
        Ct::L => Ok(format!("l_idx(ld{n}({o}))")),
        Ct::I if d == TnDtype::Int32 => Ok(format!("ld{n}({o})")),
        _ => Err(runtime(format!(
            "expected scalar type Long or Int for the indices but found {}",
            crate::kernel::dtype_name(d)
        ))),
    }
}

/// `embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)`: `out[..., d] =
/// weight[indices[...], d]`; out-of-range indices raise IndexError as upstream.
fn embedding(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (w, idx) = (c.tensor(0)?, c.tensor(1)?);
    if w.ndim() != 2 {
        return Err(runtime("'weight' must be 2-D"));
    }
    ct("embedding", w.dtype)?;
    if out.numel() == 0 {
        return Ok(());
    }
    let mut is = strides_over(&idx, &out.sizes[..out.ndim() - 1])?;
    is.push(0);
    let mut ws = vec![0i64; out.ndim() - 1];
    ws.push(w.strides[1]);
    let ix = index_expr(1, "b1", idx.dtype)?;
    let body = format!(
        "let ix = {ix}; if (ix < 0 || ix >= s_i(0)) {{ fail(); return; }} st0(b0, ld2(b2 + ix * s_i(1)));"
    );
    let mut k = Kernel::new(body);
    k.outer = out.sizes.clone();
    k.operands = vec![
        Operand::output(&out, out.strides.clone(), vec![]),
        Operand::input(&idx, is, vec![]),
        Operand::input(&w, ws, vec![]),
    ];
    k.scalar_i(0, w.sizes[0]).scalar_i(1, w.strides[0]);
    k.check = Some((TnErrorKind::Index, "index out of range in self".into()));
    k.run()
}

/// Device scratch memory for one kernel call (released when dropped; wgpu keeps the buffer
/// alive until the GPU is done with it).
pub struct Scratch(u64, pub View);

impl Scratch {
    pub fn new(dtype: TnDtype, sizes: Vec<i64>) -> KResult<Scratch> {
        let n: i64 = sizes.iter().product();
        let addr =
            crate::alloc::allocate((n.max(1) as usize) * dtype.itemsize()).map_err(runtime)?;
        let p = crate::alloc::resolve(addr).ok_or_else(|| runtime("scratch allocation lost"))?;
        let mut strides = vec![1i64; sizes.len()];
        for d in (0..sizes.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * sizes[d + 1];
        }
        Ok(Scratch(
            addr,
            View {
                buffer: Some(p.buffer),
                offset: 0,
                dtype,
                sizes,
                strides,
            },
        ))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        crate::alloc::release(self.0)
    }
}

/// `_scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, *, attn_mask,
/// scale) -> (output, logsumexp)`: q `[B,H,L,E]`, k `[B,H,S,E]`, v `[B,H,S,Ev]`. Pass 1 (one
/// invocation per query row) writes the softmax of the scaled, masked scores into scratch and
/// the logsumexp; pass 2 (one per output element) contracts them with `v`. A fully masked row
/// gives output 0 and logsumexp -inf, as the cpu backend does.
fn sdpa(c: &mut Call) -> KResult {
    let (o, lse) = (c.out(0)?, c.out(1)?);
    let (q, k, v) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let dropout = c.float(3)?;
    let causal = c.bool(4)?;
    let mask = c.opt_tensor(5)?;
    let scale = c.opt_float(6)?;
    if dropout > 0.0 {
        return Err(not_implemented(
            "_scaled_dot_product_flash_attention_for_cpu: dropout_p > 0 is not implemented on device 'vulkan'",
        ));
    }
    for t in [&q, &k, &v, &o] {
        if t.dtype != TnDtype::Float32 {
            return Err(unsupported("flash_attention", t.dtype));
        }
        if t.ndim() != 4 {
            return Err(runtime(
                "scaled_dot_product_attention_flash_attention: expected 4-d query, key and value",
            ));
        }
    }
    let (bn, hn, ln, e) = (q.sizes[0], q.sizes[1], q.sizes[2], q.sizes[3]);
    let (sn, ev) = (k.sizes[2], v.sizes[3]);
    if o.numel() == 0 {
        return Ok(());
    }
    let sc = scale.unwrap_or(1.0 / (e as f64).sqrt());
    let p = Scratch::new(TnDtype::Float32, vec![bn, hn, ln, sn.max(1)])?;
    let ps = &p.1.strides;
    let mut ops = vec![
        {
            let mut op = Operand::output(&p.1, vec![ps[0], ps[1], ps[2]], vec![ps[3]]);
            op.load = true;
            op
        },
        Operand::output(&lse, lse.strides[..3].to_vec(), vec![0]),
        Operand::input(&q, q.strides[..3].to_vec(), vec![0]),
        Operand::input(&k, vec![k.strides[0], k.strides[1], 0], vec![k.strides[2]]),
    ];
    let mut masking = String::new();
    if let Some(m) = &mask {
        let ms = strides_over(m, &[bn, hn, ln, sn])?;
        ops.push(Operand::input(m, ms[..3].to_vec(), vec![ms[3]]));
        masking = match ct("attn_mask", m.dtype)? {
            Ct::B => "if (!ld4(b4 + ioff4(j))) { s = -f_inf(); }".into(),
            Ct::F => "s = s + ld4(b4 + ioff4(j));".into(),
            _ => return Err(unsupported("attn_mask", m.dtype)),
        };
    }
    let body1 = format!(
        "let li = i32(i % u32(s_i(5)));\n  var m = -f_inf();\n  for (var j = 0u; j < NINNER; j = j + 1u) {{\n    var s = 0.0;\n    for (var d = 0; d < s_i(0); d = d + 1) {{ s = s + ld2(b2 + d * s_i(1)) * ld3(b3 + ioff3(j) + d * s_i(2)); }}\n    s = s * s_f(3);\n    {masking}\n    if (s_i(4) != 0 && i32(j) > li) {{ s = -f_inf(); }}\n    st0(b0 + ioff0(j), s);\n    if (s != -f_inf()) {{ m = select(f_max(m, s), s, m == -f_inf()); }}\n  }}\n  if (m == -f_inf()) {{\n    for (var j = 0u; j < NINNER; j = j + 1u) {{ st0(b0 + ioff0(j), 0.0); }}\n    st1(b1, -f_inf()); return;\n  }}\n  var sum = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let s = ld0(b0 + ioff0(j)); if (s != -f_inf()) {{ sum = sum + exp(s - m); }} }}\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let s = ld0(b0 + ioff0(j)); st0(b0 + ioff0(j), select(exp(s - m) / sum, 0.0, s == -f_inf())); }}\n  st1(b1, m + f_log(sum));"
    );
    let mut k1 = Kernel::new(body1);
    k1.outer = vec![bn, hn, ln];
    k1.inner = vec![sn];
    k1.operands = ops;
    k1.scalar_i(0, e)
        .scalar_i(1, q.strides[3])
        .scalar_i(2, k.strides[3])
        .scalar_f(3, sc)
        .scalar_i(4, causal as i64)
        .scalar_i(5, ln);
    if sn == 0 {
        return crate::ew::fill(&o, crate::kernel::Scalar::Float(0.0));
    }
    k1.run()?;
    let mut k2 = Kernel::new(
        "var acc = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) { acc = acc + ld1(b1 + ioff1(j)) * ld2(b2 + ioff2(j)); }\n  st0(b0, acc);",
    );
    k2.outer = vec![bn, hn, ln, ev];
    k2.inner = vec![sn];
    k2.operands = vec![
        Operand::output(&o, o.strides.clone(), vec![0]),
        Operand::input(&p.1, vec![ps[0], ps[1], ps[2], 0], vec![ps[3]]),
        Operand::input(
            &v,
            vec![v.strides[0], v.strides[1], 0, v.strides[3]],
            vec![v.strides[2]],
        ),
    ];
    k2.run()
}

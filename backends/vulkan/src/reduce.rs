//! Reductions (sum, prod, amax/amin, max/min with indices, argmax/argmin, all/any, logsumexp)
//! and softmax / log_softmax. One invocation per output element walks its reduced elements in
//! order (`ioffK(j)` over the reduced dims): deterministic, and exact for max/min/all/any and
//! integer sums. float32 sums accumulate with Kahan compensation (upstream's cascade sum is
//! similarly accurate; plain serial f32 sums are not).

use crate::ew::fill;
use crate::gen::{cast, ct, Ct, Kernel, Operand};
use crate::kernel::{err, runtime, unsupported, Call, KResult, Scalar, View};
use crate::vk_kernels;
use torchnative_backend::abi::{TnDtype, TnErrorKind};

vk_kernels! {
    k_sum = "aten::sum" => |c| sum(c, false);
    k_sum_dim = "aten::sum.dim_IntList" => |c| sum(c, true);
    k_prod = "aten::prod" => |c| prod(c, None);
    k_prod_dim = "aten::prod.dim_int" => |c| { let d = c.int(1)?; prod(c, Some(d)) };
    k_amax = "aten::amax" => |c| minmax_dims(c, true);
    k_amin = "aten::amin" => |c| minmax_dims(c, false);
    k_max = "aten::max" => |c| minmax_all(c, true);
    k_min = "aten::min" => |c| minmax_all(c, false);
    k_max_dim = "aten::max.dim" => |c| minmax_dim(c, true);
    k_min_dim = "aten::min.dim" => |c| minmax_dim(c, false);
    k_argmax = "aten::argmax" => |c| argminmax(c, true);
    k_argmin = "aten::argmin" => |c| argminmax(c, false);
    k_all = "aten::all" => |c| allany(c, true, None);
    k_all_dim = "aten::all.dim" => |c| { let d = vec![c.int(1)?]; allany(c, true, Some(d)) };
    k_all_dims = "aten::all.dims" => |c| { let d = c.opt_int_list(1)?.unwrap_or_default().to_vec(); allany(c, true, Some(d)) };
    k_any = "aten::any" => |c| allany(c, false, None);
    k_any_dim = "aten::any.dim" => |c| { let d = vec![c.int(1)?]; allany(c, false, Some(d)) };
    k_any_dims = "aten::any.dims" => |c| { let d = c.opt_int_list(1)?.unwrap_or_default().to_vec(); allany(c, false, Some(d)) };
    k_logsumexp = "aten::logsumexp" => |c| logsumexp(c);
    k_var = "aten::var.correction" => |c| var_std(c, false);
    k_cumsum = "aten::cumsum" => |c| scan(c, false);
    k_frobenius = "aten::frobenius_norm.dim" => |c| frobenius(c);
    k_cumprod = "aten::cumprod" => |c| scan(c, true);
    k_std = "aten::std.correction" => |c| var_std(c, true);
    k_softmax = "aten::_softmax" => |c| softmax(c, false);
    k_log_softmax = "aten::_log_softmax" => |c| softmax(c, true);
}

/// Normalised dims: negatives wrapped, sorted, unique; empty means all.
pub fn norm_dims(dims: &[i64], ndim: usize) -> KResult<Vec<usize>> {
    let n = ndim.max(1) as i64;
    let mut out = vec![];
    for &d in dims {
        let w = if d < 0 { d + n } else { d };
        if w < 0 || w >= n {
            return Err(err(
                TnErrorKind::Index,
                format!(
                    "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                    -n,
                    n - 1
                ),
            ));
        }
        if ndim > 0 {
            out.push(w as usize);
        }
    }
    if dims.is_empty() {
        out = (0..ndim).collect();
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// A reduction of `inp` over `dims` into `outs` (keepdim or not): one invocation per output
/// element; the input is the last operand (index `outs.len()`).
pub fn reduction(outs: &[&View], inp: &View, dims: &[usize], body: String) -> KResult<Kernel> {
    let kept: Vec<usize> = (0..inp.ndim()).filter(|d| !dims.contains(d)).collect();
    let outer: Vec<i64> = kept.iter().map(|&d| inp.sizes[d]).collect();
    let inner: Vec<i64> = dims.iter().map(|&d| inp.sizes[d]).collect();
    let mut k = Kernel::new(body);
    for o in outs {
        let strides: Vec<i64> = if o.ndim() == inp.ndim() {
            kept.iter().map(|&d| o.strides[d]).collect()
        } else if o.ndim() == kept.len() {
            o.strides.clone()
        } else {
            return Err(runtime(format!(
                "internal: reduction output of rank {} for input rank {} over {dims:?}",
                o.ndim(),
                inp.ndim()
            )));
        };
        let mut op = Operand::output(o, strides, vec![0; inner.len()]);
        op.load = false;
        k.operands.push(op);
    }
    k.operands.push(Operand::input(
        inp,
        kept.iter().map(|&d| inp.strides[d]).collect(),
        dims.iter().map(|&d| inp.strides[d]).collect(),
    ));
    k.outer = outer;
    k.inner = inner;
    Ok(k)
}

fn dims_arg(c: &Call, i: usize, ndim: usize) -> KResult<Vec<usize>> {
    let d = if c.is_none(i) {
        vec![]
    } else {
        c.int_list(i)?.to_vec()
    };
    norm_dims(&d, ndim)
}

/// The WGSL accumulation of a sum into compute type `k` of element `x` (compute type `kx`).
fn sum_body(n: usize, kx: Ct, k: Ct) -> KResult<String> {
    let x = cast(&format!("ld{n}(b{n} + ioff{n}(j))"), kx, k);
    Ok(match k {
        Ct::F => format!(
            "var acc = 0.0; var comp = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let y = {x} - comp; let t = acc + y; comp = (t - acc) - y; acc = t; }}\n  st0(b0, acc);"
        ),
        Ct::I => format!(
            "var acc = 0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = acc + {x}; }}\n  st0(b0, acc);"
        ),
        Ct::L => format!(
            "var acc = vec2<u32>(0u, 0u);\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = l_add(acc, {x}); }}\n  st0(b0, acc);"
        ),
        Ct::B => return Err(unsupported("sum", TnDtype::Bool)),
        Ct::D => return Err(unsupported("sum", TnDtype::Float64)),
    })
}

fn sum(c: &mut Call, with_dims: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = if with_dims {
        dims_arg(c, 1, a.ndim())?
    } else {
        (0..a.ndim()).collect()
    };
    let body = sum_body(1, ct("sum", a.dtype)?, ct("sum", out.dtype)?)?;
    run_reduction(&[&out], &a, &dims, body)
}

fn run_reduction(outs: &[&View], a: &View, dims: &[usize], body: String) -> KResult {
    if outs.iter().all(|o| o.numel() == 0) {
        return Ok(());
    }
    if a.numel() == 0 {
        // Only sums/products/all/any reach here with empty inputs (callers refuse the others).
        return Err(runtime("internal: empty reduction"));
    }
    reduction(outs, a, dims, body)?.run()
}

fn prod(c: &mut Call, dim: Option<i64>) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = match dim {
        Some(d) => norm_dims(&[d], a.ndim())?,
        None => (0..a.ndim()).collect(),
    };
    let (kx, k) = (ct("prod", a.dtype)?, ct("prod", out.dtype)?);
    if a.numel() == 0 {
        return fill(&out, Scalar::Int(1));
    }
    let x = cast("ld1(b1 + ioff1(j))", kx, k);
    let (init, step) = match k {
        Ct::F => ("1.0", "acc * x"),
        Ct::I => ("1", "acc * x"),
        Ct::L => ("vec2<u32>(1u, 0u)", "l_mul(acc, x)"),
        Ct::B | Ct::D => return Err(unsupported("prod", out.dtype)),
    };
    let body = format!(
        "var acc = {init};\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let x = {x}; acc = {step}; }}\n  st0(b0, acc);"
    );
    run_reduction(&[&out], &a, &dims, body)
}

/// WGSL deciding whether `x` replaces the running best `m` (NaN wins, first occurrence kept).
fn better(k: Ct, is_max: bool) -> &'static str {
    match (k, is_max) {
        (Ct::F, true) => "(is_nan(x) && !is_nan(m)) || (!is_nan(m) && x > m)",
        (Ct::F, false) => "(is_nan(x) && !is_nan(m)) || (!is_nan(m) && x < m)",
        (Ct::I, true) => "x > m",
        (Ct::I, false) => "x < m",
        (Ct::L, true) => "l_lt(m, x)",
        (Ct::L, false) => "l_lt(x, m)",
        (Ct::B, true) => "x && !m",
        (Ct::B, false) => "!x && m",
        (Ct::D, true) => "(d_is_nan(x) && !d_is_nan(m)) || (!d_is_nan(m) && d_lt(m, x))",
        (Ct::D, false) => "(d_is_nan(x) && !d_is_nan(m)) || (!d_is_nan(m) && d_lt(x, m))",
    }
}

/// Body storing the max/min into output `val` (if Some) and its position into `idx` (if Some).
fn minmax_body(n: usize, k: Ct, is_max: bool, val: Option<usize>, idx: Option<usize>) -> String {
    let mut s = format!(
        "var m = ld{n}(b{n} + ioff{n}(0u)); var at = 0u;\n  for (var j = 1u; j < NINNER; j = j + 1u) {{ let x = ld{n}(b{n} + ioff{n}(j)); if ({}) {{ m = x; at = j; }} }}\n",
        better(k, is_max)
    );
    if let Some(v) = val {
        s += &format!("  st{v}(b{v}, m);\n");
    }
    if let Some(i) = idx {
        s += &format!("  st{i}(b{i}, vec2<u32>(at, 0u));\n");
    }
    s
}

fn empty_error(name: &str) -> crate::kernel::KernelError {
    err(
        TnErrorKind::Index,
        format!("{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
    )
}

fn minmax_dims(c: &mut Call, is_max: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    let name = if is_max { "amax" } else { "amin" };
    if a.numel() == 0 {
        return Err(empty_error(name));
    }
    let body = minmax_body(1, ct(name, a.dtype)?, is_max, Some(0), None);
    run_reduction(&[&out], &a, &dims, body)
}

fn minmax_all(c: &mut Call, is_max: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let name = if is_max { "max" } else { "min" };
    if a.numel() == 0 {
        return Err(runtime(format!(
            "{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )));
    }
    let dims: Vec<usize> = (0..a.ndim()).collect();
    let body = minmax_body(1, ct(name, a.dtype)?, is_max, Some(0), None);
    run_reduction(&[&out], &a, &dims, body)
}

fn minmax_dim(c: &mut Call, is_max: bool) -> KResult {
    let (vals, idx) = (c.out(0)?, c.out(1)?);
    let a = c.tensor(0)?;
    let dims = norm_dims(&[c.int(1)?], a.ndim())?;
    let name = if is_max { "max" } else { "min" };
    if a.numel() == 0 {
        return Err(empty_error(name));
    }
    let body = minmax_body(2, ct(name, a.dtype)?, is_max, Some(0), Some(1));
    run_reduction(&[&vals, &idx], &a, &dims, body)
}

fn argminmax(c: &mut Call, is_max: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let name = if is_max { "argmax" } else { "argmin" };
    if a.numel() == 0 {
        return Err(empty_error(name));
    }
    let k = ct(name, a.dtype)?;
    match c.opt_int(1)? {
        Some(d) => {
            let dims = norm_dims(&[d], a.ndim())?;
            run_reduction(&[&out], &a, &dims, minmax_body(1, k, is_max, None, Some(0)))
        }
        None => {
            // Flattened: `j` walks every dim in row-major order, so it is the flat position.
            let dims: Vec<usize> = (0..a.ndim()).collect();
            run_reduction(&[&out], &a, &dims, minmax_body(1, k, is_max, None, Some(0)))
        }
    }
}

fn allany(c: &mut Call, is_all: bool, dims: Option<Vec<i64>>) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = match dims {
        Some(d) => norm_dims(&d, a.ndim())?,
        None => (0..a.ndim()).collect(),
    };
    if a.numel() == 0 {
        return fill(&out, Scalar::Bool(is_all));
    }
    let x = cast("ld1(b1 + ioff1(j))", ct("all", a.dtype)?, Ct::B);
    let ko = ct("all", out.dtype)?;
    let (init, step) = if is_all {
        ("true", "r = r && x;")
    } else {
        ("false", "r = r || x;")
    };
    let body = format!(
        "var r = {init};\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let x = {x}; {step} }}\n  st0(b0, {});",
        cast("r", Ct::B, ko)
    );
    run_reduction(&[&out], &a, &dims, body)
}

fn logsumexp(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    if ct("logsumexp", a.dtype)? != Ct::F || out.dtype != TnDtype::Float32 {
        return Err(unsupported("logsumexp", a.dtype));
    }
    if a.numel() == 0 {
        return fill(&out, Scalar::Float(f64::NEG_INFINITY));
    }
    // Upstream: m = max (0 where infinite), m + log(sum(exp(x - m))).
    let body = "var m = -f_inf();\n  for (var j = 0u; j < NINNER; j = j + 1u) { m = f_max(m, ld1(b1 + ioff1(j))); }\n  if (is_inf(m)) { m = 0.0; }\n  var s = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) { s = s + exp(ld1(b1 + ioff1(j)) - m); }\n  st0(b0, f_log(s) + m);".to_string();
    run_reduction(&[&out], &a, &dims, body)
}

fn softmax(c: &mut Call, log: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dim = norm_dims(&[c.int(1)?], a.ndim())?;
    let name = if log { "log_softmax" } else { "softmax" };
    if ct(name, a.dtype)? != Ct::F || out.dtype != TnDtype::Float32 {
        return Err(unsupported(name, a.dtype));
    }
    if a.numel() == 0 {
        return Ok(());
    }
    let kept: Vec<usize> = (0..a.ndim()).filter(|d| !dim.contains(d)).collect();
    let mut k = Kernel::new(if log {
        "var m = -f_inf();\n  for (var j = 0u; j < NINNER; j = j + 1u) { m = f_max(m, ld1(b1 + ioff1(j))); }\n  var s = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) { s = s + exp(ld1(b1 + ioff1(j)) - m); }\n  let ls = f_log(s);\n  for (var j = 0u; j < NINNER; j = j + 1u) { st0(b0 + ioff0(j), ld1(b1 + ioff1(j)) - m - ls); }"
    } else {
        "var m = -f_inf();\n  for (var j = 0u; j < NINNER; j = j + 1u) { m = f_max(m, ld1(b1 + ioff1(j))); }\n  var s = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) { s = s + exp(ld1(b1 + ioff1(j)) - m); }\n  for (var j = 0u; j < NINNER; j = j + 1u) { st0(b0 + ioff0(j), exp(ld1(b1 + ioff1(j)) - m) / s); }"
    });
    k.outer = kept.iter().map(|&d| a.sizes[d]).collect();
    k.inner = dim.iter().map(|&d| a.sizes[d]).collect();
    let split = |v: &View| -> (Vec<i64>, Vec<i64>) {
        (
            kept.iter().map(|&d| v.strides[d]).collect(),
            dim.iter().map(|&d| v.strides[d]).collect(),
        )
    };
    let (oo, oi) = split(&out);
    let (ao, ai) = split(&a);
    k.operands = vec![Operand::output(&out, oo, oi), Operand::input(&a, ao, ai)];
    k.run()
}

/// `var.correction(self, dim?, *, correction?, keepdim)` and `std.correction`: two passes (mean,
/// then the sum of squared deviations, both Kahan-compensated), divisor `max(0, n - correction)`.
fn var_std(c: &mut Call, take_sqrt: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    let correction = c.opt_scalar(2)?.map(|s| s.as_f64()).unwrap_or(1.0);
    let name = if take_sqrt { "std" } else { "var" };
    if ct(name, a.dtype)? != Ct::F || out.dtype != TnDtype::Float32 {
        return Err(unsupported(name, a.dtype));
    }
    if a.numel() == 0 {
        return fill(&out, Scalar::Float(f64::NAN));
    }
    let n: i64 = dims
        .iter()
        .map(|&d| a.sizes[d])
        .product::<i64>()
        .max(if a.ndim() == 0 { 1 } else { 0 });
    let divisor = (n as f64 - correction).max(0.0);
    let fin = if take_sqrt { "sqrt(v)" } else { "v" };
    let body = format!(
        "var mu = 0.0; var comp = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let y = ld1(b1 + ioff1(j)) - comp; let t = mu + y; comp = (t - mu) - y; mu = t; }}\n  mu = mu / f32(NINNER);\n  var ss = 0.0; comp = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let d = ld1(b1 + ioff1(j)) - mu; let y = d * d - comp; let t = ss + y; comp = (t - ss) - y; ss = t; }}\n  let v = {};\n  st0(b0, {fin});",
        if divisor == 0.0 {
            // 0/0 and x/0 spelled out (drivers may fold a division by a zero literal).
            "select(f_inf(), f_nan(), ss == 0.0)".to_string()
        } else {
            format!("ss / {}", crate::gen::lit(Ct::F, divisor))
        }
    );
    run_reduction(&[&out], &a, &dims, body)
}

/// `cumsum(self, dim, *, dtype)` / `cumprod`: one invocation per line along `dim`, in order.
/// float32 sums are Kahan-compensated (upstream accumulates float32 scans in double).
fn scan(c: &mut Call, prod: bool) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dim = norm_dims(&[c.int(1)?], a.ndim())?;
    if out.numel() == 0 {
        return Ok(());
    }
    let name = if prod { "cumprod" } else { "cumsum" };
    let (kx, k) = (ct(name, a.dtype)?, ct(name, out.dtype)?);
    let x = cast("ld1(b1 + ioff1(j))", kx, k);
    let body = match (k, prod) {
        (Ct::F, false) => format!("var acc = 0.0; var comp = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ let y = {x} - comp; let t = acc + y; comp = (t - acc) - y; acc = t; st0(b0 + ioff0(j), acc); }}"),
        (Ct::F, true) => format!("var acc = 1.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = acc * {x}; st0(b0 + ioff0(j), acc); }}"),
        (Ct::I, false) => format!("var acc = 0;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = acc + {x}; st0(b0 + ioff0(j), acc); }}"),
        (Ct::I, true) => format!("var acc = 1;\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = acc * {x}; st0(b0 + ioff0(j), acc); }}"),
        (Ct::L, false) => format!("var acc = vec2<u32>(0u, 0u);\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = l_add(acc, {x}); st0(b0 + ioff0(j), acc); }}"),
        (Ct::L, true) => format!("var acc = vec2<u32>(1u, 0u);\n  for (var j = 0u; j < NINNER; j = j + 1u) {{ acc = l_mul(acc, {x}); st0(b0 + ioff0(j), acc); }}"),
        _ => return Err(unsupported(name, out.dtype)),
    };
    let kept: Vec<usize> = (0..a.ndim()).filter(|d| !dim.contains(d)).collect();
    let mut kern = Kernel::new(body);
    kern.outer = kept.iter().map(|&d| a.sizes[d]).collect();
    kern.inner = dim.iter().map(|&d| a.sizes[d]).collect();
    if a.ndim() == 0 {
        kern.inner = vec![1];
    }
    let split = |v: &View| -> (Vec<i64>, Vec<i64>) {
        if v.ndim() == 0 {
            return (vec![], vec![0]);
        }
        (
            kept.iter().map(|&d| v.strides[d]).collect(),
            dim.iter().map(|&d| v.strides[d]).collect(),
        )
    };
    let (oo, oi) = split(&out);
    let (ao, ai) = split(&a);
    kern.operands = vec![Operand::output(&out, oo, oi), Operand::input(&a, ao, ai)];
    kern.run()
}

/// `frobenius_norm.dim(self, dim[], keepdim)`: `sqrt(sum(x * x))`, the sum Kahan-compensated.
fn frobenius(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let dims = dims_arg(c, 1, a.ndim())?;
    if ct("frobenius_norm", a.dtype)? != Ct::F || out.dtype != TnDtype::Float32 {
        return Err(unsupported("frobenius_norm", a.dtype));
    }
    if a.numel() == 0 {
        return fill(&out, Scalar::Float(0.0));
    }
    let body = "var acc = 0.0; var comp = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) { let x = ld1(b1 + ioff1(j)); let y = x * x - comp; let t = acc + y; comp = (t - acc) - y; acc = t; }\n  st0(b0, sqrt(acc));".to_string();
    run_reduction(&[&out], &a, &dims, body)
}

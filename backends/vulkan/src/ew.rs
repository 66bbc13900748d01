//! Elementwise kernels: copy_ (with dtype conversion), fill_, unary math, binary arithmetic and
//! comparisons with broadcasting and arbitrary strides, where, masked_fill, clamp.
//!
//! The core hands binary operands already broadcast to the output shape and cast to the common
//! dtype (docs/design/kernel-conventions.md); [`strides_over`] still right-aligns and zeroes
//! broadcast dims so a kernel is correct for any view it receives.

use torchnative_backend::abi::TnDtype;

use crate::gen::{cast, ct, elementwise, lit, lit_i64, Ct, Operand};
use crate::kernel::{runtime, unsupported, Call, KResult, Scalar, View};
use crate::vk_kernels;

vk_kernels! {
    k_copy_ = "aten::copy_" => |c| copy(c);
    k_fill_scalar = "aten::fill_.Scalar" => |c| fill_scalar(c);
    k_neg = "aten::neg" => |c| unary(c, "neg");
    k_neg_ = "aten::neg_" => |c| unary(c, "neg");
    k_abs = "aten::abs" => |c| unary(c, "abs");
    k_abs_ = "aten::abs_" => |c| unary(c, "abs");
    k_exp = "aten::exp" => |c| unary(c, "exp");
    k_exp_ = "aten::exp_" => |c| unary(c, "exp");
    k_exp2 = "aten::exp2" => |c| unary(c, "exp2");
    k_expm1 = "aten::expm1" => |c| unary(c, "expm1");
    k_log = "aten::log" => |c| unary(c, "log");
    k_log2 = "aten::log2" => |c| unary(c, "log2");
    k_log10 = "aten::log10" => |c| unary(c, "log10");
    k_log1p = "aten::log1p" => |c| unary(c, "log1p");
    k_sqrt = "aten::sqrt" => |c| unary(c, "sqrt");
    k_rsqrt = "aten::rsqrt" => |c| unary(c, "rsqrt");
    k_sin = "aten::sin" => |c| unary(c, "sin");
    k_cos = "aten::cos" => |c| unary(c, "cos");
    k_tan = "aten::tan" => |c| unary(c, "tan");
    k_atan = "aten::atan" => |c| unary(c, "atan");
    k_asin = "aten::asin" => |c| unary(c, "asin");
    k_acos = "aten::acos" => |c| unary(c, "acos");
    k_sinh = "aten::sinh" => |c| unary(c, "sinh");
    k_cosh = "aten::cosh" => |c| unary(c, "cosh");
    k_asinh = "aten::asinh" => |c| unary(c, "asinh");
    k_acosh = "aten::acosh" => |c| unary(c, "acosh");
    k_atanh = "aten::atanh" => |c| unary(c, "atanh");
    k_elu = "aten::elu" => |c| elu(c);
    k_elu_ = "aten::elu_" => |c| elu(c);
    k_softplus = "aten::softplus" => |c| softplus(c);
    k_nan_to_num = "aten::nan_to_num" => |c| nan_to_num(c);
    k_tanh = "aten::tanh" => |c| unary(c, "tanh");
    k_tanh_ = "aten::tanh_" => |c| unary(c, "tanh");
    k_sigmoid = "aten::sigmoid" => |c| unary(c, "sigmoid");
    k_sigmoid_ = "aten::sigmoid_" => |c| unary(c, "sigmoid");
    k_relu = "aten::relu" => |c| unary(c, "relu");
    k_relu_ = "aten::relu_" => |c| unary(c, "relu");
    k_silu = "aten::silu" => |c| unary(c, "silu");
    k_silu_ = "aten::silu_" => |c| unary(c, "silu");
    k_gelu = "aten::gelu" => |c| gelu(c);
    k_gelu_ = "aten::gelu_" => |c| gelu(c);
    k_reciprocal = "aten::reciprocal" => |c| unary(c, "reciprocal");
    k_erf = "aten::erf" => |c| unary(c, "erf");
    k_erfc = "aten::erfc" => |c| unary(c, "erfc");
    k_floor = "aten::floor" => |c| unary(c, "floor");
    k_ceil = "aten::ceil" => |c| unary(c, "ceil");
    k_trunc = "aten::trunc" => |c| unary(c, "trunc");
    k_round = "aten::round" => |c| unary(c, "round");
    k_frac = "aten::frac" => |c| unary(c, "frac");
    k_sign = "aten::sign" => |c| unary(c, "sign");
    k_isnan = "aten::isnan" => |c| predicate(c, "isnan");
    k_isinf = "aten::isinf" => |c| predicate(c, "isinf");
    k_isfinite = "aten::isfinite" => |c| predicate(c, "isfinite");
    k_logical_not = "aten::logical_not" => |c| predicate(c, "logical_not");
    k_bitwise_not = "aten::bitwise_not" => |c| unary(c, "bitwise_not");
    k_add = "aten::add.Tensor" => |c| binary(c, "add");
    k_add_ = "aten::add_.Tensor" => |c| binary(c, "add");
    k_sub = "aten::sub.Tensor" => |c| binary(c, "sub");
    k_sub_ = "aten::sub_.Tensor" => |c| binary(c, "sub");
    k_mul = "aten::mul.Tensor" => |c| binary(c, "mul");
    k_mul_ = "aten::mul_.Tensor" => |c| binary(c, "mul");
    k_div = "aten::div.Tensor" => |c| binary(c, "div");
    k_div_ = "aten::div_.Tensor" => |c| binary(c, "div");
    k_div_mode = "aten::div.Tensor_mode" => |c| div_mode(c);
    k_div_mode_ = "aten::div_.Tensor_mode" => |c| div_mode(c);
    k_pow = "aten::pow.Tensor_Tensor" => |c| binary(c, "pow");
    k_atan2 = "aten::atan2" => |c| binary(c, "atan2");
    k_fmod = "aten::fmod.Tensor" => |c| int_remainder(c, 2);
    k_remainder = "aten::remainder.Tensor" => |c| int_remainder(c, 1);
    k_maximum = "aten::maximum" => |c| binary(c, "maximum");
    k_minimum = "aten::minimum" => |c| binary(c, "minimum");
    k_eq = "aten::eq.Tensor" => |c| binary(c, "eq");
    k_ne = "aten::ne.Tensor" => |c| binary(c, "ne");
    k_lt = "aten::lt.Tensor" => |c| binary(c, "lt");
    k_le = "aten::le.Tensor" => |c| binary(c, "le");
    k_gt = "aten::gt.Tensor" => |c| binary(c, "gt");
    k_ge = "aten::ge.Tensor" => |c| binary(c, "ge");
    k_logical_and = "aten::logical_and" => |c| binary(c, "logical_and");
    k_logical_or = "aten::logical_or" => |c| binary(c, "logical_or");
    k_logical_xor = "aten::logical_xor" => |c| binary(c, "logical_xor");
    k_bitwise_and = "aten::bitwise_and.Tensor" => |c| binary(c, "bitwise_and");
    k_bitwise_or = "aten::bitwise_or.Tensor" => |c| binary(c, "bitwise_or");
    k_bitwise_xor = "aten::bitwise_xor.Tensor" => |c| binary(c, "bitwise_xor");
    k_where = "aten::where.self" => |c| where_self(c);
    k_masked_fill = "aten::masked_fill.Scalar" => |c| masked_fill(c);
    k_masked_fill_ = "aten::masked_fill_.Scalar" => |c| masked_fill(c);
    k_clamp = "aten::clamp" => |c| clamp(c);
    k_clamp_t = "aten::clamp.Tensor" => |c| clamp_tensor(c);
    k_hardtanh = "aten::hardtanh" => |c| hardtanh(c);
    k_leaky_relu = "aten::leaky_relu" => |c| leaky_relu(c);
}

/// Strides of `v` over `shape` (right-aligned; broadcast dims get stride 0).
pub fn strides_over(v: &View, shape: &[i64]) -> KResult<Vec<i64>> {
    let n = shape.len();
    if v.ndim() > n {
        return Err(runtime(format!(
            "internal: an operand of rank {} does not broadcast to rank {n}",
            v.ndim()
        )));
    }
    let lead = n - v.ndim();
    let mut s = vec![0i64; n];
    for d in 0..v.ndim() {
        let (vs, os) = (v.sizes[d], shape[lead + d]);
        if vs == os {
            s[lead + d] = if vs == 1 { 0 } else { v.strides[d] };
        } else if vs == 1 {
            s[lead + d] = 0;
        } else {
            return Err(runtime(format!(
                "internal: size {vs} does not broadcast to {os}"
            )));
        }
    }
    Ok(s)
}

/// `out[...] = body(ins...)`, one invocation per element of `out`.
pub fn map(out: &View, ins: &[&View], body: &str) -> KResult {
    if out.numel() == 0 {
        return Ok(());
    }
    let mut ops = vec![Operand::output(out, out.strides.clone(), vec![])];
    for v in ins {
        ops.push(Operand::input(v, strides_over(v, &out.sizes)?, vec![]));
    }
    elementwise(&out.sizes, ops, body).run()
}

/// Copies `src` into `dst` (same shape after broadcasting) with torch's dtype conversion.
pub fn copy_cast(dst: &View, src: &View) -> KResult {
    if dst.numel() == 0 {
        return Ok(());
    }
    let same = dst.same_buffer(src)
        && dst.offset == src.offset
        && dst.strides == src.strides
        && dst.dtype == src.dtype;
    if same {
        return Ok(());
    }
    let (cd, cs) = (ct("copy_", dst.dtype)?, ct("copy_", src.dtype)?);
    // Same dtype: move bits (float32 through i32 so NaN payloads survive).
    let body = if dst.dtype == src.dtype && cd == Ct::F {
        let mut d2 = dst.clone();
        d2.dtype = TnDtype::Int32;
        let mut s2 = src.clone();
        s2.dtype = TnDtype::Int32;
        return map(&d2, &[&s2], "st0(b0, ld1(b1));");
    } else {
        format!("st0(b0, {});", cast("ld1(b1)", cs, cd))
    };
    map(dst, &[src], &body)
}

fn copy(c: &mut Call) -> KResult {
    let dst = c.tensor(0)?;
    let src = c.tensor(1)?;
    copy_cast(&dst, &src)
}

/// A scalar as a WGSL literal in compute type `to`.
pub fn scalar_lit(v: Scalar, to: Ct) -> String {
    match (v, to) {
        (Scalar::Int(i), Ct::L) => lit_i64(i),
        (Scalar::Int(i), Ct::I) => format!("i32({})", i as i32),
        (Scalar::Bool(b), _) => cast(&b.to_string(), Ct::B, to),
        (s, c) => lit(c, s.as_f64()),
    }
}

pub fn fill(dst: &View, v: Scalar) -> KResult {
    let c = ct("fill_", dst.dtype)?;
    if dst.numel() == 0 {
        return Ok(());
    }
    let ops = vec![Operand::output(dst, dst.strides.clone(), vec![])];
    elementwise(&dst.sizes, ops, &format!("st0(b0, {});", scalar_lit(v, c))).run()
}

fn fill_scalar(c: &mut Call) -> KResult {
    let dst = c.tensor(0)?;
    let v = c.scalar(1)?;
    fill(&dst, v)
}

/// The WGSL expression of a unary op on `x` in compute type `c`, if supported.
fn unary_expr(name: &str, c: Ct) -> Option<&'static str> {
    Some(match (name, c) {
        ("neg", Ct::F) => "-x",
        ("neg", Ct::I) => "-x",
        ("neg", Ct::L) => "l_neg(x)",
        ("abs", Ct::F) => "abs(x)",
        ("abs", Ct::I) => "abs(x)",
        ("abs", Ct::L) => "l_abs(x)",
        ("abs", Ct::B) => "x",
        ("neg", Ct::D) => "vec2<u32>(x.x, x.y ^ 0x80000000u)",
        ("abs", Ct::D) => "vec2<u32>(x.x, x.y & 0x7fffffffu)",
        ("exp", Ct::F) => "exp(x)",
        ("exp2", Ct::F) => "exp2(x)",
        ("expm1", Ct::F) => "f_expm1(x)",
        ("log", Ct::F) => "f_log(x)",
        ("log2", Ct::F) => "f_log(x) * 1.4426950408889634",
        ("log10", Ct::F) => "f_log(x) * 0.4342944819032518",
        ("log1p", Ct::F) => "f_log1p(x)",
        ("sqrt", Ct::F) => "f_sqrt(x)",
        ("rsqrt", Ct::F) => "1.0 / f_sqrt(x)",
        ("sin", Ct::F) => "sin(x)",
        ("cos", Ct::F) => "cos(x)",
        ("tan", Ct::F) => "tan(x)",
        ("atan", Ct::F) => "f_atan(x)",
        ("asin", Ct::F) => "f_asin(x)",
        ("acos", Ct::F) => "f_acos(x)",
        ("sinh", Ct::F) => "f_sinh(x)",
        ("cosh", Ct::F) => "f_cosh(x)",
        ("asinh", Ct::F) => "f_asinh(x)",
        ("acosh", Ct::F) => "f_acosh(x)",
        ("atanh", Ct::F) => "f_atanh(x)",
        ("tanh", Ct::F) => "f_tanh(x)",
        ("sigmoid", Ct::F) => "f_sigmoid(x)",
        ("relu", Ct::F) => "select(x, 0.0, x < 0.0)",
        ("relu", Ct::I) => "max(x, 0)",
        ("relu", Ct::L) => "select(x, vec2<u32>(0u, 0u), l_is_neg(x))",
        ("silu", Ct::F) => "x / (1.0 + exp(-x))",
        ("reciprocal", Ct::F) => "1.0 / x",
        ("erf", Ct::F) => "f_erf(x)",
        ("erfc", Ct::F) => "1.0 - f_erf(x)",
        ("floor", Ct::F) => "floor(x)",
        ("ceil", Ct::F) => "ceil(x)",
        ("trunc", Ct::F) => "trunc(x)",
        ("round", Ct::F) => "round(x)",
        ("frac", Ct::F) => "x - trunc(x)",
        ("floor" | "ceil" | "trunc" | "round", Ct::I | Ct::L) => "x",
        ("sign", Ct::F) => "f_sign(x)",
        ("sign", Ct::I) => "i_sign(x)",
        ("sign", Ct::B) => "x",
        ("bitwise_not", Ct::I) => "~x",
        ("bitwise_not", Ct::L) => "~x",
        ("bitwise_not", Ct::B) => "!x",
        _ => return None,
    })
}

fn unary_on(name: &'static str, out: &View, a: &View) -> KResult {
    let c = ct(name, a.dtype)?;
    if out.dtype != a.dtype {
        return Err(runtime(format!(
            "{name}: expected the output dtype to equal the input's"
        )));
    }
    let e = unary_expr(name, c).ok_or_else(|| unsupported(name, a.dtype))?;
    map(out, &[a], &format!("let x = ld1(b1); st0(b0, {e});"))
}

fn unary(c: &mut Call, name: &'static str) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    unary_on(name, &out, &a)
}

fn gelu(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    if ct("gelu", a.dtype)? != Ct::F {
        return Err(unsupported("GeluKernelImpl", a.dtype));
    }
    let f = match c.str(1)? {
        "none" => "f_gelu",
        "tanh" => "f_gelu_tanh",
        other => {
            return Err(runtime(format!(
                "approximate argument must be either none or tanh. (got {other})"
            )))
        }
    };
    map(&out, &[&a], &format!("st0(b0, {f}(ld1(b1)));"))
}

/// Ops whose output is bool.
fn predicate(c: &mut Call, name: &'static str) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let k = ct(name, a.dtype)?;
    let e = match (name, k) {
        ("isnan", Ct::F) => "is_nan(x)",
        ("isinf", Ct::F) => "is_inf(x)",
        ("isfinite", Ct::F) => "!(is_nan(x) || is_inf(x))",
        ("isnan", Ct::D) => "d_is_nan(x)",
        ("isinf", Ct::D) => "d_is_inf(x)",
        ("isfinite", Ct::D) => "!(d_is_nan(x) || d_is_inf(x))",
        ("isnan" | "isinf", _) => "false",
        ("isfinite", _) => "true",
        ("logical_not", k) => {
            let body = format!(
                "let x = ld1(b1); st0(b0, {});",
                cast(
                    &format!("!{}", cast("x", k, Ct::B)),
                    Ct::B,
                    ct(name, out.dtype)?
                )
            );
            return map(&out, &[&a], &body);
        }
        _ => return Err(unsupported(name, a.dtype)),
    };
    // isnan/isinf/isfinite must still read every operand for the binding layout.
    map(&out, &[&a], &format!("let x = ld1(b1); st0(b0, {e});"))
}

/// The WGSL expression of a binary op on `a`, `b` (compute type `c`; `al` = alpha in `c`).
fn binary_expr(name: &str, c: Ct) -> Option<&'static str> {
    use Ct::*;
    Some(match (name, c) {
        ("add", F | I) => "a + al * b",
        ("add", L) => "l_add(a, l_mul(al, b))",
        ("add", B) => "a || b",
        ("sub", F | I) => "a - al * b",
        ("sub", L) => "l_sub(a, l_mul(al, b))",
        ("mul", F | I) => "a * b",
        ("mul", L) => "l_mul(a, b)",
        ("mul", B) => "a && b",
        ("div", F) => "a / b",
        ("div", D) => "d_div(a, b)",
        ("eq", D) => "d_eq(a, b)",
        ("ne", D) => "!d_eq(a, b)",
        ("lt", D) => "d_lt(a, b)",
        ("le", D) => "d_lt(a, b) || d_eq(a, b)",
        ("gt", D) => "d_lt(b, a)",
        ("ge", D) => "d_lt(b, a) || d_eq(a, b)",
        ("pow", F) => "f_pow(a, b)",
        ("atan2", F) => "f_atan2(a, b)",
        ("fmod", F) => "f_fmod(a, b)",
        ("remainder", F) => "f_remainder(a, b)",
        ("maximum", F) => "f_max(a, b)",
        ("maximum", I) => "max(a, b)",
        ("maximum", L) => "l_max(a, b)",
        ("maximum", B) => "a || b",
        ("minimum", F) => "f_min(a, b)",
        ("minimum", I) => "min(a, b)",
        ("minimum", L) => "l_min(a, b)",
        ("minimum", B) => "a && b",
        ("eq", F | I | B) => "a == b",
        ("eq", L) => "l_eq(a, b)",
        // Unordered: NaN != NaN is true (`!=` may compile to an ordered compare).
        ("ne", F) => "!(a == b)",
        ("ne", I | B) => "a != b",
        ("ne", L) => "!l_eq(a, b)",
        ("lt", F | I) => "a < b",
        ("lt", L) => "l_lt(a, b)",
        ("lt", B) => "!a && b",
        ("le", F | I) => "a <= b",
        ("le", L) => "!l_lt(b, a)",
        ("le", B) => "!a || b",
        ("gt", F | I) => "a > b",
        ("gt", L) => "l_lt(b, a)",
        ("gt", B) => "a && !b",
        ("ge", F | I) => "a >= b",
        ("ge", L) => "!l_lt(a, b)",
        ("ge", B) => "a || !b",
        ("bitwise_and", I | L) => "a & b",
        ("bitwise_and", B) => "a && b",
        ("bitwise_or", I | L) => "a | b",
        ("bitwise_or", B) => "a || b",
        ("bitwise_xor", I | L) => "a ^ b",
        ("bitwise_xor", B) => "a != b",
        _ => return None,
    })
}

fn binary(c: &mut Call, name: &'static str) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let b = c.tensor(1)?;
    binary_on(c, name, &out, &a, &b)
}

fn binary_on(c: &Call, name: &'static str, out: &View, a: &View, b: &View) -> KResult {
    let (ka, kb) = (ct(name, a.dtype)?, ct(name, b.dtype)?);
    let ko = ct(name, out.dtype)?;
    if name.starts_with("logical_") {
        let e = match name {
            "logical_and" => "a && b",
            "logical_or" => "a || b",
            _ => "a != b",
        };
        let body = format!(
            "let a = {}; let b = {}; st0(b0, {});",
            cast("ld1(b1)", ka, Ct::B),
            cast("ld2(b2)", kb, Ct::B),
            cast(e, Ct::B, ko)
        );
        return map(out, &[a, b], &body);
    }
    if ka != kb {
        return Err(runtime(format!(
            "{name}: the core should have cast both operands to one dtype (got {:?} and {:?})",
            a.dtype, b.dtype
        )));
    }
    let e = binary_expr(name, ka).ok_or_else(|| unsupported(name, a.dtype))?;
    let alpha = if matches!(name, "add" | "sub") {
        let al = c.opt_scalar(2)?.unwrap_or(Scalar::Int(1));
        if ka == Ct::B && al != Scalar::Int(1) && al != Scalar::Bool(true) {
            return Err(unsupported(name, a.dtype));
        }
        format!("let al = {};", scalar_lit(al, ka))
    } else {
        String::new()
    };
    let cmp = matches!(name, "eq" | "ne" | "lt" | "le" | "gt" | "ge");
    let result = if cmp {
        cast(e, Ct::B, ko)
    } else {
        cast(e, ka, ko)
    };
    let body = format!("let a = ld1(b1); let b = ld2(b2); {alpha} st0(b0, {result});");
    map(out, &[a, b], &body)
}

fn div_mode(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let b = c.tensor(1)?;
    let mode = if c.is_none(2) { None } else { Some(c.str(2)?) };
    let k = ct("div", a.dtype)?;
    let e = match (mode, k) {
        (None, Ct::F) => "a / b",
        // Upstream: trunc(a / b); floor: div_floor_floating (exact fmod-based).
        (Some("trunc"), Ct::F) => "trunc(a / b)",
        (Some("floor"), Ct::F) => "f_div_floor(a, b)",
        (Some(m @ ("trunc" | "floor")), Ct::I | Ct::L) => {
            return int_div(&out, &a, &b, if m == "floor" { 1 } else { 0 }, 0)
        }
        (Some("trunc" | "floor") | None, _) => return Err(unsupported("div.Tensor_mode", a.dtype)),
        (Some(m), _) => {
            return Err(runtime(format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{m}'"
            )))
        }
    };
    let body = format!("let a = ld1(b1); let b = ld2(b2); st0(b0, {e});");
    map(&out, &[&a, &b], &body)
}

/// Integer division (rounding `mode` 0 trunc, 1 floor) or remainder (`rem` 1: Python's `%`, 2:
/// C's fmod), exact for int32/int64 (uint8/int8 too, computed in i32); division by zero raises
/// upstream's `ZeroDivisionError` RuntimeError.
fn int_div(out: &View, a: &View, b: &View, mode: i32, rem: i32) -> KResult {
    let k = ct("div", a.dtype)?;
    if ct("div", b.dtype)? != k || ct("div", out.dtype)? != k {
        return Err(runtime(
            "integer division: the core should have cast both operands to one dtype",
        ));
    }
    let (f, zero) = match k {
        Ct::I => ("i_div", "b == 0"),
        Ct::L => ("l_div", "!l_nz(b)"),
        _ => return Err(unsupported("div", a.dtype)),
    };
    if out.numel() == 0 {
        return Ok(());
    }
    let mut ops = vec![Operand::output(out, out.strides.clone(), vec![])];
    for v in [a, b] {
        ops.push(Operand::input(v, strides_over(v, &out.sizes)?, vec![]));
    }
    let mut k = elementwise(
        &out.sizes,
        ops,
        &format!("let a = ld1(b1); let b = ld2(b2); if ({zero}) {{ fail(); return; }} st0(b0, {f}(a, b, {mode}, {rem}));"),
    );
    k.check = Some((
        torchnative_backend::abi::TnErrorKind::Runtime,
        "ZeroDivisionError".into(),
    ));
    k.run()
}

fn int_remainder(c: &mut Call, rem: i32) -> KResult {
    let out = c.out(0)?;
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    if ct("remainder", a.dtype)? == Ct::F {
        return binary_on(c, if rem == 1 { "remainder" } else { "fmod" }, &out, &a, &b);
    }
    int_div(&out, &a, &b, 1, rem)
}

fn where_self(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let cond = c.tensor(0)?;
    let a = c.tensor(1)?;
    let b = c.tensor(2)?;
    let ko = ct("where", out.dtype)?;
    let kc = ct("where", cond.dtype)?;
    let body = format!(
        "let p = {}; st0(b0, select({}, {}, p));",
        cast("ld1(b1)", kc, Ct::B),
        cast("ld3(b3)", ct("where", b.dtype)?, ko),
        cast("ld2(b2)", ct("where", a.dtype)?, ko)
    );
    map(&out, &[&cond, &a, &b], &body)
}

fn masked_fill(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let mask = c.tensor(1)?;
    let v = c.scalar(2)?;
    if mask.dtype != TnDtype::Bool {
        return Err(runtime(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            crate::kernel::dtype_name(mask.dtype)
        )));
    }
    let k = ct("masked_fill", out.dtype)?;
    let body = format!(
        "st0(b0, select({}, {}, ld2(b2)));",
        cast("ld1(b1)", ct("masked_fill", a.dtype)?, k),
        scalar_lit(v, k)
    );
    map(&out, &[&a, &mask], &body)
}

fn clamp_body(k: Ct, lo: Option<String>, hi: Option<String>) -> KResult<String> {
    let (mx, mn) = match k {
        Ct::F => ("f_max", "f_min"),
        Ct::I => ("max", "min"),
        Ct::L => ("l_max", "l_min"),
        Ct::B => return Err(unsupported("clamp", TnDtype::Bool)),
        Ct::D => return Err(unsupported("clamp", TnDtype::Float64)),
    };
    let mut e = "x".to_string();
    if let Some(l) = lo {
        e = format!("{mx}({e}, {l})");
    }
    if let Some(h) = hi {
        e = format!("{mn}({e}, {h})");
    }
    Ok(e)
}

fn clamp(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let (lo, hi) = (c.opt_scalar(1)?, c.opt_scalar(2)?);
    if lo.is_none() && hi.is_none() {
        return Err(runtime(
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    let k = ct("clamp", a.dtype)?;
    let e = clamp_body(
        k,
        lo.map(|s| scalar_lit(s, k)),
        hi.map(|s| scalar_lit(s, k)),
    )?;
    map(&out, &[&a], &format!("let x = ld1(b1); st0(b0, {e});"))
}

fn clamp_tensor(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let (lo, hi) = (c.opt_tensor(1)?, c.opt_tensor(2)?);
    let k = ct("clamp", a.dtype)?;
    match (&lo, &hi) {
        (None, None) => Err(runtime(
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        )),
        (Some(l), None) => {
            let e = clamp_body(k, Some("ld2(b2)".into()), None)?;
            map(&out, &[&a, l], &format!("let x = ld1(b1); st0(b0, {e});"))
        }
        (None, Some(h)) => {
            let e = clamp_body(k, None, Some("ld2(b2)".into()))?;
            map(&out, &[&a, h], &format!("let x = ld1(b1); st0(b0, {e});"))
        }
        (Some(l), Some(h)) => {
            let e = clamp_body(k, Some("ld2(b2)".into()), Some("ld3(b3)".into()))?;
            map(
                &out,
                &[&a, l, h],
                &format!("let x = ld1(b1); st0(b0, {e});"),
            )
        }
    }
}

fn hardtanh(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let (lo, hi) = (c.scalar(1)?, c.scalar(2)?);
    let k = ct("hardtanh", a.dtype)?;
    let e = clamp_body(k, Some(scalar_lit(lo, k)), Some(scalar_lit(hi, k)))?;
    map(&out, &[&a], &format!("let x = ld1(b1); st0(b0, {e});"))
}

fn leaky_relu(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let slope = c.scalar(1)?;
    if ct("leaky_relu", a.dtype)? != Ct::F {
        return Err(unsupported("leaky_relu", a.dtype));
    }
    let s = lit(Ct::F, slope.as_f64());
    map(
        &out,
        &[&a],
        &format!("let x = ld1(b1); st0(b0, select(x, x * {s}, x <= 0.0));"),
    )
}

fn float_only(name: &str, a: &View) -> KResult {
    if ct(name, a.dtype)? != Ct::F {
        return Err(unsupported(name, a.dtype));
    }
    Ok(())
}

/// `elu(self, alpha, scale, input_scale)`: upstream's `x <= 0 ? expm1(x * input_scale) * alpha
/// * scale : x * scale`.
fn elu(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    float_only("elu", &a)?;
    let (al, sc, isc) = (
        c.scalar(1)?.as_f64(),
        c.scalar(2)?.as_f64(),
        c.scalar(3)?.as_f64(),
    );
    let (al, sc, isc) = (lit(Ct::F, al), lit(Ct::F, sc), lit(Ct::F, isc));
    map(
        &out,
        &[&a],
        &format!("let x = ld1(b1); st0(b0, select(x * {sc}, f_expm1(x * {isc}) * {al} * {sc}, x <= 0.0));"),
    )
}

/// `softplus(self, beta, threshold)`: `x * beta > threshold ? x : log1p(exp(x * beta)) / beta`.
fn softplus(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    float_only("softplus", &a)?;
    let (be, th) = (
        lit(Ct::F, c.scalar(1)?.as_f64()),
        lit(Ct::F, c.scalar(2)?.as_f64()),
    );
    map(
        &out,
        &[&a],
        &format!(
            "let x = ld1(b1); st0(b0, select(f_log1p(exp(x * {be})) / {be}, x, x * {be} > {th}));"
        ),
    )
}

/// `nan_to_num(self, nan?, posinf?, neginf?)`: defaults 0, the largest and lowest float32.
fn nan_to_num(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let k = ct("nan_to_num", a.dtype)?;
    if k != Ct::F {
        return copy_cast(&out, &a);
    }
    let n = lit(Ct::F, c.opt_float(1)?.unwrap_or(0.0));
    let p = lit(Ct::F, c.opt_float(2)?.unwrap_or(f32::MAX as f64));
    let m = lit(Ct::F, c.opt_float(3)?.unwrap_or(f32::MIN as f64));
    map(
        &out,
        &[&a],
        &format!("let x = ld1(b1); var y = x; if (is_nan(x)) {{ y = {n}; }} else if (is_inf(x)) {{ y = select({m}, {p}, x > 0.0); }} st0(b0, y);"),
    )
}

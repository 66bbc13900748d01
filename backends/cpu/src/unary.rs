//! Elementwise unary kernels: input dtype == output dtype (the core promotes integers to the
//! default float for float-only ops). `float16`/`bfloat16` compute in f32 and round once.
//! Formulas follow upstream's CPU kernels' order of operations (noted per op); transcendental
//! functions come from Rust's libm bindings, upstream uses Sleef: last-ulp differences expected.
#![allow(unused_comparisons)]

use torchnative_backend::abi::TnDtype;

use crate::dtype::{is_int, Bool, Elem, FloatElem, Real};
use crate::kernel::ScalarElem;
use crate::kernel::{Call, KResult, Tensor};
use crate::strided::{map1, map2};
use crate::{bail, dispatch_all, dispatch_float, dispatch_int, kernels};

kernels! {
    k_abs = "aten::abs" => |c| abs(c);
    k_abs_ = "aten::abs_" => |c| abs(c);
    k_neg = "aten::neg" => |c| neg(c);
    k_neg_ = "aten::neg_" => |c| neg(c);
    k_sign = "aten::sign" => |c| sign(c);
    k_exp = "aten::exp" => |c| exp(c);
    k_exp_ = "aten::exp_" => |c| exp(c);
    k_exp2 = "aten::exp2" => |c| float_unary::<Exp2>(c);
    k_expm1 = "aten::expm1" => |c| float_unary::<Expm1>(c);
    k_log = "aten::log" => |c| float_unary::<Log>(c);
    k_log2 = "aten::log2" => |c| float_unary::<Log2>(c);
    k_log10 = "aten::log10" => |c| float_unary::<Log10>(c);
    k_log1p = "aten::log1p" => |c| float_unary::<Log1p>(c);
    k_sqrt = "aten::sqrt" => |c| float_unary::<Sqrt>(c);
    k_rsqrt = "aten::rsqrt" => |c| float_unary::<Rsqrt>(c);
    k_reciprocal = "aten::reciprocal" => |c| float_unary::<Reciprocal>(c);
    k_sin = "aten::sin" => |c| float_unary::<Sin>(c);
    k_cos = "aten::cos" => |c| float_unary::<Cos>(c);
    k_tan = "aten::tan" => |c| float_unary::<Tan>(c);
    k_asin = "aten::asin" => |c| float_unary::<Asin>(c);
    k_acos = "aten::acos" => |c| float_unary::<Acos>(c);
    k_atan = "aten::atan" => |c| float_unary::<Atan>(c);
    k_sinh = "aten::sinh" => |c| float_unary::<Sinh>(c);
    k_cosh = "aten::cosh" => |c| float_unary::<Cosh>(c);
    k_tanh = "aten::tanh" => |c| float_unary::<Tanh>(c);
    k_tanh_ = "aten::tanh_" => |c| float_unary::<Tanh>(c);
    k_asinh = "aten::asinh" => |c| float_unary::<Asinh>(c);
    k_acosh = "aten::acosh" => |c| float_unary::<Acosh>(c);
    k_atanh = "aten::atanh" => |c| float_unary::<Atanh>(c);
    k_sigmoid = "aten::sigmoid" => |c| sigmoid(c);
    k_silu_backward = "aten::silu_backward" => |c| silu_backward(c);
    k_sigmoid_ = "aten::sigmoid_" => |c| sigmoid(c);
    k_erf = "aten::erf" => |c| float_unary::<Erf>(c);
    k_erfc = "aten::erfc" => |c| float_unary::<Erfc>(c);
    k_erfinv = "aten::erfinv" => |c| float_unary::<Erfinv>(c);
    k_silu = "aten::silu" => |c| silu(c);
    k_silu_ = "aten::silu_" => |c| silu(c);
    k_frac = "aten::frac" => |c| float_unary::<Frac>(c);
    k_floor = "aten::floor" => |c| rounding::<Floor>(c, "floor_vml_cpu");
    k_ceil = "aten::ceil" => |c| rounding::<Ceil>(c, "ceil_vml_cpu");
    k_trunc = "aten::trunc" => |c| rounding::<Trunc>(c, "trunc_vml_cpu");
    k_round = "aten::round" => |c| rounding::<Round>(c, "round_vml_cpu");
    k_round_decimals = "aten::round.decimals" => |c| round_decimals(c);
    k_relu = "aten::relu" => |c| relu(c);
    k_relu_ = "aten::relu_" => |c| relu(c);
    k_gelu = "aten::gelu" => |c| gelu(c);
    k_gelu_ = "aten::gelu_" => |c| gelu(c);
    k_softplus = "aten::softplus" => |c| softplus(c);
    k_logical_not = "aten::logical_not" => |c| logical_not(c);
    k_bitwise_not = "aten::bitwise_not" => |c| bitwise_not(c);
    k_isnan = "aten::isnan" => |c| classify(c, Class::Nan);
    k_isinf = "aten::isinf" => |c| classify(c, Class::Inf);
    k_isfinite = "aten::isfinite" => |c| classify(c, Class::Finite);
    k_nan_to_num = "aten::nan_to_num" => |c| nan_to_num(c);
    k_hardtanh = "aten::hardtanh" => |c| hardtanh(c);
    k_hardtanh_ = "aten::hardtanh_" => |c| hardtanh(c);
    k_leaky_relu = "aten::leaky_relu" => |c| leaky_relu(c);
    k_leaky_relu_ = "aten::leaky_relu_" => |c| leaky_relu(c);
    k_elu = "aten::elu" => |c| elu(c);
    k_elu_ = "aten::elu_" => |c| elu(c);
}

fn io<'a>(c: &Call<'a>, op: &str) -> KResult<(Tensor<'a>, Tensor<'a>)> {
    let (out, a) = (c.out(0)?, c.tensor(0)?);
    if out.dtype != a.dtype && !matches!(op, "logical_not" | "isnan" | "isinf" | "isfinite") {
        bail!(
            runtime,
            "{op}: input dtype {:?} differs from the output dtype {:?} (the core casts the input)",
            a.dtype,
            out.dtype
        );
    }
    Ok((out, a))
}

/// A float function, generic over the compute type.
pub trait FloatFn {
    const NAME: &'static str;
    fn f<A: Real>(x: A) -> A;
}

macro_rules! float_fns {
    ($($S:ident $name:literal |$x:ident| $e:expr;)*) => {
        $(
            pub struct $S;
            impl FloatFn for $S {
                const NAME: &'static str = $name;
                #[inline(always)]
                fn f<A: Real>($x: A) -> A { $e }
            }
        )*
    };
}

float_fns! {
    Exp "exp_vml_cpu" |x| x.exp();
    Exp2 "exp2_cpu" |x| x.exp2();
    Expm1 "expm1_vml_cpu" |x| x.expm1();
    Log "log_vml_cpu" |x| x.ln();
    Log2 "log2_vml_cpu" |x| x.log2();
    Log10 "log10_vml_cpu" |x| x.log10();
    Log1p "log1p_vml_cpu" |x| x.ln1p();
    Sqrt "sqrt_vml_cpu" |x| x.sqrt();
    // Upstream: `1 / std::sqrt(a)`.
    Rsqrt "rsqrt_cpu" |x| A::ONE / x.sqrt();
    Reciprocal "reciprocal_cpu" |x| A::ONE / x;
    Sin "sin_vml_cpu" |x| x.sin();
    Cos "cos_vml_cpu" |x| x.cos();
    Tan "tan_vml_cpu" |x| x.tan();
    Asin "asin_vml_cpu" |x| x.asin();
    Acos "acos_vml_cpu" |x| x.acos();
    Atan "atan_vml_cpu" |x| x.atan();
    Sinh "sinh_vml_cpu" |x| x.sinh();
    Cosh "cosh_vml_cpu" |x| x.cosh();
    Tanh "tanh_vml_cpu" |x| x.tanh();
    Asinh "asinh_cpu" |x| x.asinh();
    Acosh "acosh_cpu" |x| x.acosh();
    Atanh "atanh_cpu" |x| x.atanh();
    // Upstream: `1 / (1 + exp(-x))`.
    Sigmoid "sigmoid_cpu" |x| A::ONE / (A::ONE + (-x).exp());
    Erf "erf_vml_cpu" |x| Real::erf(x);
    Erfc "erfc_vml_cpu" |x| Real::erfc(x);
    Erfinv "erfinv_vml_cpu" |x| erfinv(x);
    // Upstream: `x / (1 + exp(-x))`.
    Silu "silu_cpu" |x| x / (A::ONE + (-x).exp());
    Frac "frac_cpu" |x| x - x.trunc();
    Floor "floor" |x| x.floor();
    Ceil "ceil" |x| x.ceil();
    Trunc "trunc" |x| x.trunc();
    // Half to even (`std::nearbyint` in the default rounding mode).
    Round "round" |x| x.round_even();
}

/// Inverse error function: the rational approximation of G. L. Pavlis (1996, the MATLAB
/// `erfinv` m-file) refined by two Newton steps — the algorithm upstream's `calc_erfinv` uses.
pub fn erfinv<A: Real>(y: A) -> A {
    let c = A::c;
    let ya = y.abs();
    if ya > A::ONE || y.is_nan() {
        return A::NAN;
    }
    if ya == A::ONE {
        return A::INF.copysign(y);
    }
    let mut x = if ya <= c(0.7) {
        let z = y * y;
        let num =
            ((c(-0.140543331) * z + c(0.914624893)) * z + c(-1.645349621)) * z + c(0.886226899);
        let dem = (((c(0.012229801) * z + c(-0.329097515)) * z + c(1.442710462)) * z
            + c(-2.118377725))
            * z
            + A::ONE;
        y * num / dem
    } else {
        let z = (-((A::ONE - ya) / c(2.0)).ln()).sqrt();
        let num =
            ((c(1.641345311) * z + c(3.429567803)) * z + c(-1.624906493)) * z + c(-1.970840454);
        let dem = (c(1.637067800) * z + c(3.543889200)) * z + A::ONE;
        num.copysign(y) / dem
    };
    let two_over_sqrt_pi = c(std::f64::consts::FRAC_2_SQRT_PI);
    for _ in 0..2 {
        x = x - (Real::erf(x) - y) / (two_over_sqrt_pi * (-x * x).exp());
    }
    x
}

/// Applies a float function to a float tensor.
pub(crate) fn float_unary<F: FloatFn>(c: &mut Call) -> KResult {
    let (out, a) = io(c, F::NAME)?;
    unsafe {
        dispatch_float!(out.dtype, F::NAME, T, A => map1(&out, &a, |x: T| T::from_acc(F::f::<A>(x.to_acc()))))
    }
}

/// `exp`: contiguous float32 through `vecmath::expf_contiguous` (libm's expf, vectorised),
/// everything else through the generic loop.
fn exp(c: &mut Call) -> KResult {
    let (out, a) = io(c, Exp::NAME)?;
    if out.dtype == TnDtype::Float32
        && out.sizes == a.sizes
        && out.is_contiguous()
        && a.is_contiguous()
    {
        // SAFETY: both are contiguous f32 views of numel elements (possibly the same one).
        unsafe {
            crate::vecmath::expf_contiguous(a.data as *const f32, out.data as *mut f32, a.numel())
        };
        return Ok(());
    }
    float_unary::<Exp>(c)
}

/// `silu`: contiguous float32 as upstream's vectorised kernel (`activation::silu_contiguous`),
/// everything else through the generic loop (upstream's scalar op).
fn silu(c: &mut Call) -> KResult {
    let (out, a) = io(c, Silu::NAME)?;
    if contiguous_f32(&out, &a, crate::activation::silu_contiguous) {
        return Ok(());
    }
    float_unary::<Silu>(c)
}

/// `sigmoid`: contiguous float32 as upstream's vectorised kernel, as [`silu`].
fn sigmoid(c: &mut Call) -> KResult {
    let (out, a) = io(c, Sigmoid::NAME)?;
    if contiguous_f32(&out, &a, crate::activation::sigmoid_contiguous) {
        return Ok(());
    }
    float_unary::<Sigmoid>(c)
}

/// `silu_backward(grad_output, self)` of float32 (the core sends other dtypes to its composition):
/// contiguous operands as upstream's vectorised kernel, strided ones by its scalar op.
fn silu_backward(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (g, x) = (c.tensor(0)?, c.tensor(1)?);
    if [out.dtype, g.dtype, x.dtype] != [TnDtype::Float32; 3] {
        bail!(
            not_implemented,
            "\"silu_backward\" is native for float32 only, got {:?}",
            out.dtype
        );
    }
    let n = out.numel();
    let dense = out.sizes == g.sizes
        && out.sizes == x.sizes
        && [&out, &g, &x].iter().all(|t| t.is_contiguous());
    // SAFETY: contiguous float32 views of n elements, each input equal to or apart from out.
    if dense
        && equal_or_apart(&g, &out, n)
        && equal_or_apart(&x, &out, n)
        && unsafe {
            crate::activation::silu_backward_contiguous(
                g.data as *const f32,
                x.data as *const f32,
                out.data as *mut f32,
                n,
            )
        }
    {
        return Ok(());
    }
    unsafe { map2(&out, &g, &x, crate::activation::silu_backward_scalar) }
}

/// Runs `f(src, dst, n)` (an `activation` kernel) where `out` and `a` are contiguous float32
/// views of one shape that are the same memory or apart; whether it ran.
fn contiguous_f32(
    out: &Tensor,
    a: &Tensor,
    f: unsafe fn(*const f32, *mut f32, usize) -> bool,
) -> bool {
    if out.dtype != TnDtype::Float32
        || out.sizes != a.sizes
        || !out.is_contiguous()
        || !a.is_contiguous()
    {
        return false;
    }
    let n = a.numel();
    // SAFETY: both views are contiguous float32 of n elements, equal or disjoint.
    equal_or_apart(a, out, n) && unsafe { f(a.data as *const f32, out.data as *mut f32, n) }
}

/// Whether the `n` floats at `a` and at `out` are the same memory or do not overlap (the
/// `activation` kernels read each element before writing it, nothing else).
fn equal_or_apart(a: &Tensor, out: &Tensor, n: usize) -> bool {
    let (s, d) = (a.data as usize, out.data as usize);
    s == d || s + 4 * n <= d || d + 4 * n <= s
}

/// floor/ceil/trunc/round: the identity on integers.
fn rounding<F: FloatFn>(c: &mut Call, name: &str) -> KResult {
    let (out, a) = io(c, name)?;
    unsafe {
        if is_int(out.dtype) {
            return dispatch_int!(out.dtype, name, T => map1(&out, &a, |x: T| x));
        }
        dispatch_float!(out.dtype, name, T, A => map1(&out, &a, |x: T| T::from_acc(F::f::<A>(x.to_acc()))))
    }
}

/// `round.decimals(self, *, int decimals)`: upstream's `nearbyint(x * 10^d) / 10^d` (or
/// `nearbyint(x / 10^-d) * 10^-d` for negative `d`), `10^d` computed in double and cast.
fn round_decimals(c: &mut Call) -> KResult {
    let (out, a) = io(c, "round_cpu")?;
    let d = c.int(1)?;
    unsafe {
        dispatch_float!(out.dtype, "round_cpu", T, A => {
            let neg = d < 0;
            let ten = A::c(10f64.powi(d.unsigned_abs().min(i32::MAX as u64) as i32));
            map1(&out, &a, |x: T| {
                let x = x.to_acc();
                T::from_acc(if neg { (x / ten).round_even() * ten } else { (x * ten).round_even() / ten })
            })
        })
    }
}

fn abs(c: &mut Call) -> KResult {
    let (out, a) = io(c, "abs")?;
    unsafe {
        match out.dtype {
            TnDtype::UInt8 => map1(&out, &a, |x: u8| x),
            dt if is_int(dt) => {
                dispatch_int!(dt, "abs_cpu", T => map1(&out, &a, |x: T| if x < 0 as T { (0 as T).wrapping_sub(x) } else { x }))
            }
            dt => {
                dispatch_float!(dt, "abs_cpu", T, A => map1(&out, &a, |x: T| T::from_acc(x.to_acc().abs())))
            }
        }
    }
}

fn neg(c: &mut Call) -> KResult {
    let (out, a) = io(c, "neg")?;
    unsafe {
        match out.dtype {
            dt if crate::complex::is_complex(dt) => crate::complex::neg(&out, &a),
            TnDtype::Bool => bail!(runtime, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."),
            dt if is_int(dt) => dispatch_int!(dt, "neg_cpu", T => map1(&out, &a, |x: T| x.wrapping_neg())),
            dt => dispatch_float!(dt, "neg_cpu", T, A => map1(&out, &a, |x: T| T::from_acc(-x.to_acc()))),
        }
    }
}

/// `sign`: `(0 < x) - (x < 0)` as upstream computes it, so NaN and -0.0 give +0.0.
fn sign(c: &mut Call) -> KResult {
    let (out, a) = io(c, "sign")?;
    unsafe {
        match out.dtype {
            TnDtype::Bool => map1(&out, &a, |x: Bool| Bool::new(x.get())),
            dt if is_int(dt) => {
                dispatch_int!(dt, "sign_cpu", T => map1(&out, &a, |x: T| ((0 as T) < x) as T - (x < 0 as T) as T))
            }
            dt => dispatch_float!(dt, "sign_cpu", T, A => map1(&out, &a, |x: T| {
                let x = x.to_acc();
                T::from_acc(A::c(((A::ZERO < x) as i32 - (x < A::ZERO) as i32) as f64))
            })),
        }
    }
}

/// `relu`: `max(x, 0)` with NaN kept (upstream's `clamp_min(self, 0)`); -0.0 stays -0.0.
fn relu(c: &mut Call) -> KResult {
    let (out, a) = io(c, "relu")?;
    unsafe {
        match out.dtype {
            TnDtype::Bool => bail!(runtime, "Boolean inputs not supported for relu"),
            dt if is_int(dt) => {
                dispatch_int!(dt, "clamp_min_scalar_cpu", T => map1(&out, &a, |x: T| if x < 0 as T { 0 as T } else { x }))
            }
            dt => dispatch_float!(dt, "clamp_min_scalar_cpu", T, A => map1(&out, &a, |x: T| {
                let v = x.to_acc();
                if v < A::ZERO { T::from_acc(A::ZERO) } else { x }
            })),
        }
    }
}

/// `gelu(self, *, str approximate='none')`, in upstream's order of operations:
/// none: `x * 0.5 * (1 + erf(x * M_SQRT1_2))`;
/// tanh: `0.5 * x * (1 + tanh(kBeta * (x + kKappa * x*x*x)))`, kBeta = `M_SQRT2 * M_2_SQRTPI * 0.5`.
fn gelu(c: &mut Call) -> KResult {
    let (out, a) = io(c, "gelu")?;
    let approx = c.str(1)?;
    if approx == "none" && contiguous_f32(&out, &a, crate::activation::gelu_contiguous) {
        return Ok(());
    }
    unsafe {
        dispatch_float!(out.dtype, "GeluKernelImpl", T, A => match approx {
            "none" => {
                let alpha = A::c(std::f64::consts::FRAC_1_SQRT_2);
                map1(&out, &a, |x: T| {
                    let x = x.to_acc();
                    T::from_acc(x * A::HALF * (A::ONE + Real::erf(x * alpha)))
                })
            }
            "tanh" => {
                let beta = A::c(std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5);
                let kappa = A::c(0.044715);
                map1(&out, &a, |x: T| {
                    let x = x.to_acc();
                    let inner = beta * (x + kappa * (x * x * x));
                    T::from_acc(A::HALF * x * (A::ONE + inner.tanh()))
                })
            }
            other => bail!(runtime, "approximate argument must be either none or tanh. (got {other})"),
        })
    }
}

/// `softplus(self, beta=1, threshold=20)`: `x * beta > threshold ? x : log1p(exp(x * beta)) / beta`.
fn softplus(c: &mut Call) -> KResult {
    let (out, a) = io(c, "softplus")?;
    let (beta, threshold) = (c.scalar(1)?, c.scalar(2)?);
    unsafe {
        dispatch_float!(out.dtype, "softplus_cpu", T, A => {
            let b: A = beta.checked::<A>()?;
            let t: A = threshold.checked::<A>()?;
            map1(&out, &a, |x: T| {
                let x = x.to_acc();
                T::from_acc(if x * b > t { x } else { (x * b).exp().ln1p() / b })
            })
        })
    }
}

/// `leaky_relu(self, negative_slope=0.01)`: `x > 0 ? x : x * slope`.
fn leaky_relu(c: &mut Call) -> KResult {
    let (out, a) = io(c, "leaky_relu")?;
    let slope = c.scalar(1)?;
    unsafe {
        dispatch_float!(out.dtype, "leaky_relu_cpu", T, A => {
            let s: A = slope.checked::<A>()?;
            map1(&out, &a, |x: T| {
                let v = x.to_acc();
                if v > A::ZERO { x } else { T::from_acc(v * s) }
            })
        })
    }
}

/// `elu(self, alpha, scale, input_scale)`: upstream's `elu_kernel`, `expm1(x * input_scale) *
/// alpha * scale` for `x <= 0` (not `exp(...) - 1`, which loses a small argument: celu with a
/// large alpha gave 0), `x * scale` above; reduced floats in float32.
fn elu(c: &mut Call) -> KResult {
    let (out, a) = io(c, "elu")?;
    let (alpha, scale, input_scale) = (c.scalar(1)?, c.scalar(2)?, c.scalar(3)?);
    unsafe {
        dispatch_float!(out.dtype, "elu_cpu", T, A => {
            let neg = alpha.checked::<A>()? * scale.checked::<A>()?;
            let pos: A = scale.checked::<A>()?;
            let inp: A = input_scale.checked::<A>()?;
            map1(&out, &a, |x: T| {
                let v = x.to_acc();
                T::from_acc(if v <= A::ZERO { (v * inp).expm1() * neg } else { v * pos })
            })
        })
    }
}

/// `hardtanh(self, min_val=-1, max_val=1)`: upstream computes it as `clamp`.
fn hardtanh(c: &mut Call) -> KResult {
    crate::binary::clamp_scalar(c)
}

fn logical_not(c: &mut Call) -> KResult {
    let (out, a) = io(c, "logical_not")?;
    unsafe {
        dispatch_all!(out.dtype, "logical_not_cpu", O => dispatch_all!(a.dtype, "logical_not_cpu", T => map1(&out, &a, |x: T| O::from_bool(!x.to_bool()))))
    }
}

fn bitwise_not(c: &mut Call) -> KResult {
    let (out, a) = io(c, "bitwise_not")?;
    unsafe {
        match out.dtype {
            TnDtype::Bool => map1(&out, &a, |x: Bool| !x),
            dt => dispatch_int!(dt, "bitwise_not_cpu", T => map1(&out, &a, |x: T| !x)),
        }
    }
}

#[derive(Copy, Clone)]
enum Class {
    Nan,
    Inf,
    Finite,
}

fn classify(c: &mut Call, k: Class) -> KResult {
    let (out, a) = io(c, "isnan")?;
    if out.dtype != TnDtype::Bool {
        bail!(runtime, "isnan/isinf/isfinite: the output must be bool");
    }
    unsafe {
        if crate::dtype::is_float(a.dtype) {
            dispatch_float!(a.dtype, "isnan", T, A => match k {
                Class::Nan => map1(&out, &a, |x: T| x.to_acc().is_nan()),
                Class::Inf => map1(&out, &a, |x: T| x.to_acc().is_infinite()),
                Class::Finite => map1(&out, &a, |x: T| x.to_acc().is_finite()),
            })
        } else {
            crate::strided::fill(&out, matches!(k, Class::Finite))
        }
    }
}

/// `nan_to_num(self, float? nan=None, float? posinf=None, float? neginf=None)`: replacements
/// default to 0, the dtype's max and lowest; given ones are cast (unchecked) to the dtype.
/// Integers and bool are copied.
fn nan_to_num(c: &mut Call) -> KResult {
    let (out, a) = io(c, "nan_to_num")?;
    let (n, p, m) = (c.opt_float(1)?, c.opt_float(2)?, c.opt_float(3)?);
    unsafe {
        if !crate::dtype::is_float(out.dtype) {
            return dispatch_all!(out.dtype, "nan_to_num", T => map1(&out, &a, |x: T| x));
        }
        dispatch_float!(out.dtype, "nan_to_num", T, A => {
            let nv = T::from_f64(n.unwrap_or(0.0));
            let pv = p.map(T::from_f64).unwrap_or(T::from_f64(<T as Elem>::MAX));
            let mv = m.map(T::from_f64).unwrap_or(T::from_f64(<T as Elem>::LOWEST));
            map1(&out, &a, |x: T| {
                let v = x.to_acc();
                if v.is_nan() { nv } else if v == A::INF { pv } else if v == -A::INF { mv } else { x }
            })
        })
    }
}

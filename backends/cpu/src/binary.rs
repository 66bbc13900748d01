//! Elementwise binary kernels (`.Tensor` overloads), comparisons, `where.self` and `clamp`.
//!
//! The core broadcasts both operands to the output shape (stride-0 views) and casts them to the
//! computation dtype. One upstream subtlety is handled here: for `float16`/`bfloat16`, `mul` and
//! `div` read a CPU-scalar `other` at opmath (f32) precision from its *original* dtype
//! (`iter.original_scalar_value<opmath_t>(2)`), while `add`/`sub` narrow it to the tensor dtype
//! first. A scalar `other` (every stride 0) that arrives in a dtype other than the computation
//! dtype is therefore read with the op's rule; one that arrives already cast is used as is (see
//! KERNELS.md, "conventions").
#![allow(unused_comparisons)]

use std::sync::atomic::{AtomicBool, Ordering};

use torchnative_backend::abi::TnDtype;

use crate::dtype::{is_float, is_int, Bool, Elem, FloatElem, Real};
use crate::kernel::ScalarElem;
use crate::kernel::{Call, KResult, Scalar, Tensor};
use crate::strided::{map1, map2, map3, zip_fma_tensors};
use crate::{bail, dispatch_all, dispatch_float, dispatch_int, kernels};

kernels! {
    k_add = "aten::add.Tensor" => |c| add(c, false);
    k_add_ = "aten::add_.Tensor" => |c| add(c, false);
    k_sub = "aten::sub.Tensor" => |c| add(c, true);
    k_sub_ = "aten::sub_.Tensor" => |c| add(c, true);
    k_mul = "aten::mul.Tensor" => |c| mul(c);
    k_mul_ = "aten::mul_.Tensor" => |c| mul(c);
    k_div = "aten::div.Tensor" => |c| div(c, None);
    k_div_ = "aten::div_.Tensor" => |c| div(c, None);
    k_div_mode = "aten::div.Tensor_mode" => |c| { let m = c.opt_str(2)?; div(c, m) };
    k_div_mode_ = "aten::div_.Tensor_mode" => |c| { let m = c.opt_str(2)?; div(c, m) };
    k_remainder = "aten::remainder.Tensor" => |c| remainder(c);
    k_fmod = "aten::fmod.Tensor" => |c| fmod(c);
    k_pow = "aten::pow.Tensor_Tensor" => |c| pow(c);
    k_maximum = "aten::maximum" => |c| max_min(c, true);
    k_minimum = "aten::minimum" => |c| max_min(c, false);
    k_atan2 = "aten::atan2" => |c| atan2(c);
    k_hypot = "aten::hypot" => |c| hypot(c);
    k_bitwise_and = "aten::bitwise_and.Tensor" => |c| bitwise(c, Bit::And);
    k_bitwise_or = "aten::bitwise_or.Tensor" => |c| bitwise(c, Bit::Or);
    k_bitwise_xor = "aten::bitwise_xor.Tensor" => |c| bitwise(c, Bit::Xor);
    k_lshift = "aten::bitwise_left_shift.Tensor" => |c| int_op(c, IntOp::Shl);
    k_rshift = "aten::bitwise_right_shift.Tensor" => |c| int_op(c, IntOp::Shr);
    k_gcd = "aten::gcd" => |c| int_op(c, IntOp::Gcd);
    k_lcm = "aten::lcm" => |c| int_op(c, IntOp::Lcm);
    k_logical_and = "aten::logical_and" => |c| logical(c, Bit::And);
    k_logical_or = "aten::logical_or" => |c| logical(c, Bit::Or);
    k_logical_xor = "aten::logical_xor" => |c| logical(c, Bit::Xor);
    k_eq = "aten::eq.Tensor" => |c| compare(c, Cmp::Eq);
    k_ne = "aten::ne.Tensor" => |c| compare(c, Cmp::Ne);
    k_lt = "aten::lt.Tensor" => |c| compare(c, Cmp::Lt);
    k_le = "aten::le.Tensor" => |c| compare(c, Cmp::Le);
    k_gt = "aten::gt.Tensor" => |c| compare(c, Cmp::Gt);
    k_ge = "aten::ge.Tensor" => |c| compare(c, Cmp::Ge);
    k_where = "aten::where.self" => |c| where_self(c);
    k_threshold_backward = "aten::threshold_backward" => |c| threshold_backward(c);
    k_clamp = "aten::clamp" => |c| clamp_scalar(c);
    k_clamp_tensor = "aten::clamp.Tensor" => |c| clamp_tensor(c);
}

/// The three operands of a binary `.Tensor` overload: output, self, other.
fn operands<'a>(c: &Call<'a>) -> KResult<(Tensor<'a>, Tensor<'a>, Tensor<'a>)> {
    Ok((c.out(0)?, c.tensor(0)?, c.tensor(1)?))
}

fn expect_dtype(op: &str, t: &Tensor, dt: TnDtype) -> KResult {
    if t.dtype != dt {
        bail!(
            runtime,
            "{op}: operand dtype {:?} differs from the computation dtype {:?} (the core casts operands)",
            t.dtype,
            dt
        );
    }
    Ok(())
}

/// True when every element of `t` is the same memory (a broadcast scalar).
pub fn is_scalar_like(t: &Tensor) -> bool {
    t.sizes
        .iter()
        .zip(t.strides)
        .all(|(&n, &s)| n == 1 || s == 0)
}

/// The single value of a scalar-like tensor, converted to `D` with torch's rules.
pub fn read_scalar<D: Elem>(op: &str, t: &Tensor) -> KResult<D> {
    unsafe { dispatch_all!(t.dtype, op, S => Ok(t.read::<S>(0).cast::<D>())) }
}

/// How a reduced-float kernel reads a scalar `other` of another dtype.
#[derive(Copy, Clone)]
enum ScalarRule {
    /// Upstream's `original_scalar_value<opmath_t>`: the original value at f32 (mul, div).
    Opmath,
    /// Narrowed to the tensor dtype first (add, sub, and everything else).
    Narrow,
}

/// `out = f(a, b)` for a float computation dtype `T` (computing in `T::Acc`).
unsafe fn float_op<T: FloatElem>(
    op: &str,
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    rule: ScalarRule,
    f: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync,
) -> KResult {
    expect_dtype(op, a, T::DTYPE)?;
    if b.dtype == T::DTYPE {
        return map2(out, a, b, |x: T, y: T| {
            T::from_acc(f(x.to_acc(), y.to_acc()))
        });
    }
    if !is_scalar_like(b) {
        expect_dtype(op, b, T::DTYPE)?;
    }
    let y: T::Acc = match rule {
        ScalarRule::Opmath => read_scalar::<T::Acc>(op, b)?,
        ScalarRule::Narrow => read_scalar::<T>(op, b)?.to_acc(),
    };
    map1(out, a, |x: T| T::from_acc(f(x.to_acc(), y)))
}

/// `out = f(a, b)` for same-dtype operands of element type `T`.
unsafe fn same_op<T: Elem>(
    op: &str,
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> T + Sync,
) -> KResult {
    expect_dtype(op, a, T::DTYPE)?;
    expect_dtype(op, b, T::DTYPE)?;
    map2(out, a, b, f)
}

// ----------------------------------------------------------------------------------------------
// add / sub / mul / div

/// `add.Tensor(self, other, *, alpha=1)`: `self + alpha * other`; `sub` is `add` with `-alpha`
/// as upstream implements it. Floats use one fused multiply-add when `alpha != 1` (upstream's
/// `vec::fmadd`); alpha is first converted to the computation dtype.
fn add(c: &mut Call, negate: bool) -> KResult {
    let (out, a, b) = operands(c)?;
    let alpha = c.scalar(2)?;
    let dt = out.dtype;
    let op = if negate { "sub" } else { "add" };
    if crate::complex::is_complex(dt) {
        return unsafe { crate::complex::add(op, &out, &a, &b, alpha, negate) };
    }
    if dt == TnDtype::Bool && negate {
        bail!(runtime, "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.");
    }
    if matches!(alpha, Scalar::Bool(_)) && dt != TnDtype::Bool {
        bail!(runtime, "Boolean alpha only supported for Boolean results.");
    }
    if !is_float(dt) && alpha.is_float() {
        bail!(
            runtime,
            "For integral input tensors, argument alpha must not be a floating point number."
        );
    }
    let alpha = if negate {
        match alpha {
            Scalar::Int(i) => Scalar::Int(i.wrapping_neg()),
            Scalar::Float(f) => Scalar::Float(-f),
            Scalar::Bool(b) => Scalar::Int(-(b as i64)),
        }
    } else {
        alpha
    };
    unsafe {
        match dt {
            TnDtype::Bool => {
                let al: Bool = alpha.checked()?;
                same_op(op, &out, &a, &b, |x: Bool, y: Bool| x | (al & y))
            }
            dt if is_int(dt) => dispatch_int!(dt, op, T => {
                let al: T = alpha.checked()?;
                if al == 1 {
                    same_op(op, &out, &a, &b, |x: T, y: T| x.wrapping_add(y))
                } else {
                    same_op(op, &out, &a, &b, |x: T, y: T| x.wrapping_add(y.wrapping_mul(al)))
                }
            }),
            dt => dispatch_float!(dt, op, T, A => {
                let al: A = alpha.checked::<T>()?.to_acc();
                if al == 1.0 {
                    float_op::<T>(op, &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| x + y)
                } else if al == -1.0 {
                    // `sub`: fma(y, -1, x) rounds once, exactly as x - y does
                    float_op::<T>(op, &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| x - y)
                } else if [TnDtype::Float32, TnDtype::Float64].contains(&dt)
                    && zip_fma_tensors::<T, 2>(&out, [&a, &b], move |[x, y]: [T; 2]| {
                        T::from_acc(y.to_acc().mul_add(al, x.to_acc()))
                    })
                {
                    // contiguous float32/float64: one vector FMA loop (the strided loop below
                    // would call libm's fma per element)
                    Ok(())
                } else {
                    float_op::<T>(op, &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| y.mul_add(al, x))
                }
            }),
        }
    }
}

fn mul(c: &mut Call) -> KResult {
    let (out, a, b) = operands(c)?;
    unsafe {
        match out.dtype {
            dt if crate::complex::is_complex(dt) => crate::complex::mul(&out, &a, &b),
            TnDtype::Bool => same_op("mul", &out, &a, &b, |x: Bool, y: Bool| x & y),
            dt if is_int(dt) => {
                dispatch_int!(dt, "mul", T => same_op("mul", &out, &a, &b, |x: T, y: T| x.wrapping_mul(y)))
            }
            dt => {
                dispatch_float!(dt, "mul", T, A => float_op::<T>("mul", &out, &a, &b, ScalarRule::Opmath, |x: A, y: A| x * y))
            }
        }
    }
}

/// Integer kernels that raise `ZeroDivisionError` (as a RuntimeError, like upstream) when any
/// divisor is zero. The elements before the first zero are written, as upstream's loop does.
unsafe fn int_div_op<T: Elem + PartialEq + Default>(
    op: &str,
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> T + Sync,
) -> KResult {
    let zero = AtomicBool::new(false);
    same_op(op, out, a, b, |x: T, y: T| {
        if y == T::default() {
            zero.store(true, Ordering::Relaxed);
            T::default()
        } else {
            f(x, y)
        }
    })?;
    if zero.load(Ordering::Relaxed) {
        bail!(runtime, "ZeroDivisionError");
    }
    Ok(())
}

/// Python's float floor division, in the order of upstream's vectorised `div_floor_floating_vec`.
#[inline(always)]
pub fn div_floor_float<A: Real>(a: A, b: A) -> A {
    let basic = a / b;
    if b == A::ZERO {
        return basic;
    }
    let m = a.fmod(b);
    // Upstream's fixup for a quotient that overflows while `a` is finite.
    let floor = if basic.abs() == A::INF && a.abs() != A::INF {
        a
    } else {
        a - m
    };
    let mut div = floor / b;
    if m != A::ZERO && ((b < A::ZERO) != (m < A::ZERO)) {
        div = div - A::ONE;
    }
    if div == A::ZERO {
        return A::ZERO.copysign(basic);
    }
    let mut fl = div.floor();
    if div - fl > A::HALF {
        fl = fl + A::ONE;
    }
    fl
}

fn div(c: &mut Call, mode: Option<&str>) -> KResult {
    let (out, a, b) = operands(c)?;
    let dt = out.dtype;
    unsafe {
        match mode {
            None if crate::complex::is_complex(dt) => crate::complex::div(&out, &a, &b),
            None => {
                dispatch_float!(dt, "div_cpu", T, A => float_op::<T>("div", &out, &a, &b, ScalarRule::Opmath, |x: A, y: A| x / y))
            }
            Some("trunc") => {
                if is_int(dt) {
                    dispatch_int!(dt, "div_trunc_cpu", T => int_div_op("div", &out, &a, &b, |x: T, y: T| x.wrapping_div(y)))
                } else {
                    dispatch_float!(dt, "div_trunc_cpu", T, A => float_op::<T>("div", &out, &a, &b, ScalarRule::Opmath, |x: A, y: A| (x / y).trunc()))
                }
            }
            Some("floor") => {
                if dt == TnDtype::UInt8 {
                    // Unsigned floor division is truncation, as upstream dispatches it.
                    int_div_op("div", &out, &a, &b, |x: u8, y: u8| x / y)
                } else if is_int(dt) {
                    dispatch_int!(dt, "div_floor_cpu", T => int_div_op("div", &out, &a, &b, |x: T, y: T| {
                        let q = x.wrapping_div(y);
                        if (x < 0 as T) != (y < 0 as T) && x.wrapping_rem(y) != 0 { q.wrapping_sub(1) } else { q }
                    }))
                } else {
                    dispatch_float!(dt, "div_floor_cpu", T, A => float_op::<T>("div", &out, &a, &b, ScalarRule::Opmath, div_floor_float::<A>))
                }
            }
            Some(m) => bail!(
                runtime,
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{m}'"
            ),
        }
    }
}

// ----------------------------------------------------------------------------------------------
// remainder / fmod / pow

fn remainder(c: &mut Call) -> KResult {
    let (out, a, b) = operands(c)?;
    let dt = out.dtype;
    unsafe {
        if is_int(dt) {
            dispatch_int!(dt, "remainder_cpu", T => int_div_op("remainder", &out, &a, &b, |x: T, y: T| {
                let m = x.wrapping_rem(y);
                if m != 0 && ((y < 0 as T) != (m < 0 as T)) { m.wrapping_add(y) } else { m }
            }))
        } else {
            dispatch_float!(dt, "remainder_cpu", T, A => float_op::<T>("remainder", &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| {
                let m = x % y;
                if m != 0.0 && ((y < 0.0) != (m < 0.0)) { m + y } else { m }
            }))
        }
    }
}

fn fmod(c: &mut Call) -> KResult {
    let (out, a, b) = operands(c)?;
    let dt = out.dtype;
    unsafe {
        if is_int(dt) {
            dispatch_int!(dt, "fmod_cpu", T => int_div_op("fmod", &out, &a, &b, |x: T, y: T| x.wrapping_rem(y)))
        } else {
            dispatch_float!(dt, "fmod_cpu", T, A => float_op::<T>("fmod", &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| x % y))
        }
    }
}

/// Integer power as upstream's `powi`: square-and-multiply with wrapping, and for negative
/// exponents 1 → 1, -1 → ±1 by parity, anything else → 0.
macro_rules! powi {
    ($T:ty, $a:expr, $b:expr) => {{
        let (mut a, mut b): ($T, $T) = ($a, $b);
        #[allow(unused_comparisons)]
        if b < 0 as $T {
            if a == 1 as $T {
                1 as $T
            } else if (a as i64) == -1 {
                if b % 2 as $T != 0 as $T {
                    a
                } else {
                    1 as $T
                }
            } else {
                0 as $T
            }
        } else {
            let mut r: $T = 1 as $T;
            while b != 0 as $T {
                if b & 1 as $T != 0 as $T {
                    r = r.wrapping_mul(a);
                }
                b /= 2 as $T;
                a = a.wrapping_mul(a);
            }
            r
        }
    }};
}

fn pow(c: &mut Call) -> KResult {
    let (out, a, b) = operands(c)?;
    if a.dtype == TnDtype::Bool {
        return Err(crate::kernel::unsupported_dtype("pow", a.dtype));
    }
    let dt = out.dtype;
    unsafe {
        if is_int(dt) {
            dispatch_int!(dt, "pow", T => same_op("pow", &out, &a, &b, |x: T, y: T| powi!(T, x, y)))
        } else {
            dispatch_float!(dt, "pow", T, A => float_op::<T>("pow", &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| x.powf(y)))
        }
    }
}

// ----------------------------------------------------------------------------------------------
// maximum / minimum / atan2

/// NaN-propagating maximum; on equal values (±0) returns `b`, as upstream's vectorised path
/// (`_mm512_max_ps`) does. (Upstream's scalar path, used for tiny or non-contiguous inputs,
/// returns `a` there: the sign of a zero result can differ between upstream's own paths.)
#[inline(always)]
pub fn fmax_nan<A: Real>(a: A, b: A) -> A {
    if a.is_nan() || b.is_nan() {
        A::NAN
    } else if a > b {
        a
    } else {
        b
    }
}

/// NaN-propagating minimum; on equal values returns `b` (see [`fmax_nan`]).
#[inline(always)]
pub fn fmin_nan<A: Real>(a: A, b: A) -> A {
    if a.is_nan() || b.is_nan() {
        A::NAN
    } else if a < b {
        a
    } else {
        b
    }
}

fn max_min(c: &mut Call, is_max: bool) -> KResult {
    let (out, a, b) = operands(c)?;
    let op = if is_max { "maximum" } else { "minimum" };
    unsafe {
        match out.dtype {
            TnDtype::Bool => {
                if is_max {
                    same_op(op, &out, &a, &b, |x: Bool, y: Bool| x | y)
                } else {
                    same_op(op, &out, &a, &b, |x: Bool, y: Bool| x & y)
                }
            }
            dt if is_int(dt) => dispatch_int!(dt, op, T => if is_max {
                same_op(op, &out, &a, &b, |x: T, y: T| x.max(y))
            } else {
                same_op(op, &out, &a, &b, |x: T, y: T| x.min(y))
            }),
            dt => dispatch_float!(dt, op, T, A => if is_max {
                float_op::<T>(op, &out, &a, &b, ScalarRule::Narrow, fmax_nan::<A>)
            } else {
                float_op::<T>(op, &out, &a, &b, ScalarRule::Narrow, fmin_nan::<A>)
            }),
        }
    }
}

fn atan2(c: &mut Call) -> KResult {
    let (out, a, b) = operands(c)?;
    unsafe {
        dispatch_float!(out.dtype, "atan2_cpu", T, A => float_op::<T>("atan2", &out, &a, &b, ScalarRule::Narrow, |x: A, y: A| x.atan2(y)))
    }
}

/// `hypot`, rounded once to the dtype from float64 (upstream's Sleef hypot and std::hypot are
/// correctly rounded). A float32 or narrower operand squared is exact in float64 and the sum
/// cannot overflow there, so sqrt(x² + y²) in float64 serves (4x faster than the C library's
/// hypot, which float64 operands keep for its overflow-free scaling).
fn hypot(c: &mut Call) -> KResult {
    let (out, a, b) = operands(c)?;
    for t in [&a, &b] {
        expect_dtype("hypot", t, out.dtype)?;
    }
    unsafe {
        match out.dtype {
            TnDtype::Float32 => map2(&out, &a, &b, |x: f32, y: f32| {
                (x as f64).hypot(y as f64) as f32
            }),
            TnDtype::Float64 => map2(&out, &a, &b, |x: f64, y: f64| x.hypot(y)),
            TnDtype::Float16 => map2(&out, &a, &b, |x: half::f16, y: half::f16| {
                half::f16::from_f64(wide_hypot(x.to_f64(), y.to_f64()))
            }),
            TnDtype::BFloat16 => map2(&out, &a, &b, |x: half::bf16, y: half::bf16| {
                half::bf16::from_f64(wide_hypot(x.to_f64(), y.to_f64()))
            }),
            dt => Err(crate::kernel::unsupported_dtype("hypot_cpu", dt)),
        }
    }
}

/// hypot of two values widened from float32 or narrower (infinities win over NaN, as hypot's).
#[inline]
fn wide_hypot(x: f64, y: f64) -> f64 {
    if x.is_infinite() || y.is_infinite() {
        return f64::INFINITY;
    }
    (x * x + y * y).sqrt()
}

// ----------------------------------------------------------------------------------------------
// bitwise / logical / comparisons / where

#[derive(Copy, Clone)]
enum Bit {
    And,
    Or,
    Xor,
}

fn bitwise(c: &mut Call, k: Bit) -> KResult {
    let (out, a, b) = operands(c)?;
    let name = match k {
        Bit::And => "bitwise_and_cpu",
        Bit::Or => "bitwise_or_cpu",
        Bit::Xor => "bitwise_xor_cpu",
    };
    unsafe {
        match out.dtype {
            TnDtype::Bool => match k {
                Bit::And => same_op(name, &out, &a, &b, |x: Bool, y: Bool| x & y),
                Bit::Or => same_op(name, &out, &a, &b, |x: Bool, y: Bool| x | y),
                Bit::Xor => same_op(name, &out, &a, &b, |x: Bool, y: Bool| x ^ y),
            },
            dt => dispatch_int!(dt, name, T => match k {
                Bit::And => same_op(name, &out, &a, &b, |x: T, y: T| x & y),
                Bit::Or => same_op(name, &out, &a, &b, |x: T, y: T| x | y),
                Bit::Xor => same_op(name, &out, &a, &b, |x: T, y: T| x ^ y),
            }),
        }
    }
}

/// The integer-only binary operators, as upstream's scalar kernels (BinaryOpsKernel.cpp) compute
/// them: shift counts below zero or at least the width give 0 on the left and the sign fill (0
/// for unsigned) on the right; gcd by Euclid on absolute values, lcm = |a / gcd * b|, both
/// wrapping as two's complement does at the type's minimum.
trait IntOps: Copy {
    fn torch_shl(self, n: Self) -> Self;
    fn torch_shr(self, n: Self) -> Self;
    fn torch_gcd(self, b: Self) -> Self;
    fn torch_lcm(self, b: Self) -> Self;
}

macro_rules! int_ops {
    ($($t:ty, $u:ty, $s:ty, $p:ty, $signed:expr);*) => {$(
        impl IntOps for $t {
            #[inline]
            fn torch_shl(self, n: $t) -> $t {
                let m = n as $s; // upstream tests the count as the signed type of the same width
                if m < 0 || m as i64 >= <$t>::BITS as i64 { 0 } else { ((self as $u) << m) as $t }
            }
            #[inline]
            fn torch_shr(self, n: $t) -> $t {
                let (m, max) = (n as $s, <$t>::BITS as i64 - $signed as i64);
                if m < 0 || m as i64 >= max {
                    if $signed { self >> (max as u32) } else { 0 }
                } else {
                    self >> m
                }
            }
            #[inline]
            #[allow(unused_comparisons)]
            fn torch_gcd(self, b: $t) -> $t {
                let abs = |v: $t| if v < 0 { (0 as $t).wrapping_sub(v) } else { v };
                let (mut a, mut b) = (abs(self), abs(b));
                while a != 0 {
                    let c = a;
                    a = b.wrapping_rem(a);
                    b = c;
                }
                b
            }
            #[inline]
            fn torch_lcm(self, b: $t) -> $t {
                let g = self.torch_gcd(b);
                if g == 0 {
                    return 0;
                }
                // C++ computes `std::abs(a / g * b)` in the promoted type (int for the narrow ones)
                ((self as $p).wrapping_div(g as $p).wrapping_mul(b as $p).wrapping_abs()) as $t
            }
        }
    )*};
}
int_ops!(u8, u8, i8, i32, false; i8, u8, i8, i32, true; i16, u16, i16, i32, true; i32, u32, i32, i32, true;
         i64, u64, i64, i64, true);

#[derive(Copy, Clone)]
enum IntOp {
    Shl,
    Shr,
    Gcd,
    Lcm,
}

fn int_op(c: &mut Call, k: IntOp) -> KResult {
    let (out, a, b) = operands(c)?;
    let name = match k {
        IntOp::Shl => "lshift_cpu",
        IntOp::Shr => "rshift_cpu",
        IntOp::Gcd => "gcd_cpu",
        IntOp::Lcm => "lcm_cpu",
    };
    unsafe {
        dispatch_int!(out.dtype, name, T => match k {
            IntOp::Shl => same_op(name, &out, &a, &b, |x: T, y: T| x.torch_shl(y)),
            IntOp::Shr => same_op(name, &out, &a, &b, |x: T, y: T| x.torch_shr(y)),
            IntOp::Gcd => same_op(name, &out, &a, &b, |x: T, y: T| x.torch_gcd(y)),
            IntOp::Lcm => same_op(name, &out, &a, &b, |x: T, y: T| x.torch_lcm(y)),
        })
    }
}

/// `logical_*`: operands of the common dtype, truthiness `!= 0` (NaN is true); the output is
/// bool for the functional overloads (any dtype for `out=`).
fn logical(c: &mut Call, k: Bit) -> KResult {
    let (out, a, b) = operands(c)?;
    let name = match k {
        Bit::And => "logical_and_cpu",
        Bit::Or => "logical_or_cpu",
        Bit::Xor => "logical_xor_cpu",
    };
    expect_dtype(name, &b, a.dtype)?;
    unsafe {
        dispatch_all!(out.dtype, name, O => dispatch_all!(a.dtype, name, T => match k {
            Bit::And => map2(&out, &a, &b, |x: T, y: T| O::from_bool(x.to_bool() && y.to_bool())),
            Bit::Or => map2(&out, &a, &b, |x: T, y: T| O::from_bool(x.to_bool() || y.to_bool())),
            Bit::Xor => map2(&out, &a, &b, |x: T, y: T| O::from_bool(x.to_bool() != y.to_bool())),
        }))
    }
}

#[derive(Copy, Clone)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[inline(always)]
fn cmp<T: PartialOrd>(k: Cmp, x: T, y: T) -> bool {
    match k {
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
    }
}

// dispatch_all! instantiates the `<`/`>` closures for bool too, where clippy prefers `!x & y`.
#[allow(clippy::bool_comparison)]
fn compare(c: &mut Call, k: Cmp) -> KResult {
    let (out, a, b) = operands(c)?;
    expect_dtype("comparison", &b, a.dtype)?;
    if out.dtype != TnDtype::Bool {
        // `out=` with another dtype: compute into bool semantics, store converted.
        return unsafe {
            dispatch_all!(out.dtype, "comparison", O => dispatch_all!(a.dtype, "comparison", T =>
                map2(&out, &a, &b, |x: T, y: T| O::from_bool(cmp(k, x.to_f64(), y.to_f64())))))
        };
    }
    unsafe {
        match a.dtype {
            TnDtype::Float16 | TnDtype::BFloat16 => {
                dispatch_float!(a.dtype, "comparison", T, A => map2(&out, &a, &b, |x: T, y: T| cmp(k, x.to_acc(), y.to_acc())))
            }
            dt => dispatch_all!(dt, "comparison", T => match k {
                // One closure per comparison so each inner loop is branch-free.
                Cmp::Eq => map2(&out, &a, &b, |x: T, y: T| x == y),
                Cmp::Ne => map2(&out, &a, &b, |x: T, y: T| x != y),
                Cmp::Lt => map2(&out, &a, &b, |x: T, y: T| x < y),
                Cmp::Le => map2(&out, &a, &b, |x: T, y: T| x <= y),
                Cmp::Gt => map2(&out, &a, &b, |x: T, y: T| x > y),
                Cmp::Ge => map2(&out, &a, &b, |x: T, y: T| x >= y),
            }),
        }
    }
}

/// `where.self(condition, self, other)`: a select, copied bit for bit.
/// `threshold_backward(grad_output, self, threshold)`: `self <= threshold ? 0 : grad_output`,
/// the threshold read in the operands' dtype (upstream's `threshold_kernel` with value 0), so a
/// gradient through a ReLU is an exact zero where the unit was off, never `-0.0` or NaN.
fn threshold_backward(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (g, x) = (c.tensor(0)?, c.tensor(1)?);
    let th = c.scalar(2)?;
    expect_dtype("threshold_backward", &g, out.dtype)?;
    expect_dtype("threshold_backward", &x, out.dtype)?;
    unsafe {
        dispatch_all!(out.dtype, "threshold_backward", T => {
            let t: T = th.to();
            let zero = T::from_i64(0);
            map2(&out, &x, &g, move |xv: T, gv: T| if xv <= t { zero } else { gv })
        })
    }
}

fn where_self(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (cond, a, b) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    expect_dtype("where", &a, out.dtype)?;
    expect_dtype("where", &b, out.dtype)?;
    unsafe {
        macro_rules! sel {
            ($C:ty) => {
                match out.itemsize() {
                    1 => map3(
                        &out,
                        &cond,
                        &a,
                        &b,
                        |c: $C, x: u8, y: u8| if c != 0 as $C { x } else { y },
                    ),
                    2 => map3(
                        &out,
                        &cond,
                        &a,
                        &b,
                        |c: $C, x: u16, y: u16| if c != 0 as $C { x } else { y },
                    ),
                    4 => map3(
                        &out,
                        &cond,
                        &a,
                        &b,
                        |c: $C, x: u32, y: u32| if c != 0 as $C { x } else { y },
                    ),
                    _ => map3(
                        &out,
                        &cond,
                        &a,
                        &b,
                        |c: $C, x: u64, y: u64| if c != 0 as $C { x } else { y },
                    ),
                }
            };
        }
        match cond.dtype {
            // bool is read as its byte (0 or 1).
            TnDtype::Bool | TnDtype::UInt8 => sel!(u8),
            dt => bail!(
                runtime,
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                crate::dtype::dtype_name(dt)
            ),
        }
    }
}

// ----------------------------------------------------------------------------------------------
// clamp

/// `clamp(self, Scalar? min, Scalar? max)`. The bounds are converted to the output dtype
/// (checked, as `Scalar::to<scalar_t>()`). Floats: NaN in the input or a NaN bound gives NaN;
/// `min > max` gives `max`; on ties the input is kept.
pub fn clamp_scalar(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let (lo, hi) = (c.opt_scalar(1)?, c.opt_scalar(2)?);
    if lo.is_none() && hi.is_none() {
        bail!(
            runtime,
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        );
    }
    expect_dtype("clamp", &a, out.dtype)?;
    unsafe {
        match out.dtype {
            dt if is_int(dt) => dispatch_int!(dt, "clamp_scalar_cpu", T => {
                let lo: Option<T> = lo.map(|s| s.checked()).transpose()?;
                let hi: Option<T> = hi.map(|s| s.checked()).transpose()?;
                let (l, h) = (lo.unwrap_or(T::MIN), hi.unwrap_or(T::MAX));
                map1(&out, &a, |x: T| { let y = if x < l { l } else { x }; if y > h { h } else { y } })
            }),
            dt => dispatch_float!(dt, "clamp_scalar_cpu", T, A => {
                let lo: Option<A> = lo.map(|s| s.checked::<T>().map(|v| v.to_acc())).transpose()?;
                let hi: Option<A> = hi.map(|s| s.checked::<T>().map(|v| v.to_acc())).transpose()?;
                let (l, h) = (lo.unwrap_or(A::NEG_INFINITY), hi.unwrap_or(A::INFINITY));
                map1(&out, &a, |x: T| {
                    let x = x.to_acc();
                    T::from_acc(if x.is_nan() || l.is_nan() || h.is_nan() {
                        A::NAN
                    } else {
                        let y = if x < l { l } else { x };
                        if y > h { h } else { y }
                    })
                })
            }),
        }
    }
}

/// `clamp.Tensor(self, Tensor? min, Tensor? max)`: bounds broadcast and cast by the core;
/// NaN-propagating `minimum(maximum(self, min), max)` (upstream's vectorised semantics).
fn clamp_tensor(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let a = c.tensor(0)?;
    let (lo, hi) = (c.opt_tensor(1)?, c.opt_tensor(2)?);
    expect_dtype("clamp", &a, out.dtype)?;
    for t in [&lo, &hi].into_iter().flatten() {
        expect_dtype("clamp", t, out.dtype)?;
    }
    unsafe {
        match (lo, hi) {
            (None, None) => bail!(
                runtime,
                "torch.clamp: At least one of 'min' or 'max' must not be None"
            ),
            // upstream's clamp_min/clamp_max with a tensor bound are maximum/minimum, which take
            // bool (or, and); clamp with both bounds does not
            (Some(l), None) if out.dtype == TnDtype::Bool => {
                map2(&out, &a, &l, |x: Bool, l: Bool| x | l)
            }
            (None, Some(h)) if out.dtype == TnDtype::Bool => {
                map2(&out, &a, &h, |x: Bool, h: Bool| x & h)
            }
            (Some(l), None) => match out.dtype {
                dt if is_int(dt) => {
                    dispatch_int!(dt, "clamp_min_cpu", T => map2(&out, &a, &l, |x: T, l: T| x.max(l)))
                }
                dt => {
                    dispatch_float!(dt, "clamp_min_cpu", T, A => map2(&out, &a, &l, |x: T, l: T| T::from_acc(fmax_nan(x.to_acc(), l.to_acc()))))
                }
            },
            (None, Some(h)) => match out.dtype {
                dt if is_int(dt) => {
                    dispatch_int!(dt, "clamp_max_cpu", T => map2(&out, &a, &h, |x: T, h: T| x.min(h)))
                }
                dt => {
                    dispatch_float!(dt, "clamp_max_cpu", T, A => map2(&out, &a, &h, |x: T, h: T| T::from_acc(fmin_nan(x.to_acc(), h.to_acc()))))
                }
            },
            (Some(l), Some(h)) => match out.dtype {
                dt if is_int(dt) => {
                    dispatch_int!(dt, "clamp_cpu", T => map3(&out, &a, &l, &h, |x: T, l: T, h: T| x.max(l).min(h)))
                }
                dt => {
                    dispatch_float!(dt, "clamp_cpu", T, A => map3(&out, &a, &l, &h, |x: T, l: T, h: T| {
                        T::from_acc(fmin_nan(fmax_nan(x.to_acc(), l.to_acc()), h.to_acc()))
                    }))
                }
            },
        }
    }
}

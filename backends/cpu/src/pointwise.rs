//! Pointwise kernels of three operands, for float32 and float64, as upstream's CPU kernels
//! compute them (the optimizers' inner loop: Adam's `lerp_`, `addcmul_`, `addcdiv_`):
//!
//! - `addcmul`: `self + value * t1 * t2` (PointwiseOpsKernel.cpp). Upstream's build contracts
//!   `(value * t1) * t2 + self` into one fused multiply-add, in its vector loop and its scalar
//!   tail alike.
//! - `addcdiv`: `self + value * t1 / t2`, rounded after the product, the quotient and the sum.
//! - `lerp.Scalar`, `lerp.Tensor`: `lerp_vec` (aten/src/ATen/native/Lerp.h): for `|w| < 0.5`,
//!   `fma(w, end - self, self)`, else `fma(w - 1, end - self, end)`; with a weight tensor the
//!   choice is made per element (upstream's build contracts its scalar tail to the same FMAs).
//!
//! The core broadcasts the operands to the output's shape and falls back to its composites for
//! other dtypes; the output may be `self` itself (the in-place forms).

use torchnative_backend::abi::TnDtype;

use crate::kernel::ScalarElem;
use crate::kernel::{Call, KResult, Scalar, Tensor};
use crate::strided::{map2, map3, zip_fma_tensors};
use crate::{bail, kernels};

kernels! {
    k_addcmul = "aten::addcmul" => |c| addc(c, Op::Mul);
    k_addcmul_ = "aten::addcmul_" => |c| addc(c, Op::Mul);
    k_addcdiv = "aten::addcdiv" => |c| addc(c, Op::Div);
    k_addcdiv_ = "aten::addcdiv_" => |c| addc(c, Op::Div);
    k_lerp = "aten::lerp.Scalar" => |c| lerp(c);
    k_lerp_ = "aten::lerp_.Scalar" => |c| lerp(c);
    k_lerp_t = "aten::lerp.Tensor" => |c| lerp_tensor(c);
}

#[derive(Copy, Clone)]
enum Op {
    Mul,
    Div,
}

fn same_float_dtype(op: &str, out: &Tensor, ts: &[&Tensor]) -> KResult<TnDtype> {
    let dt = out.dtype;
    if !matches!(dt, TnDtype::Float32 | TnDtype::Float64) || ts.iter().any(|t| t.dtype != dt) {
        bail!(
            not_implemented,
            "{op}: the cpu kernel takes float32 or float64 operands of one dtype (the core composes the rest)"
        );
    }
    Ok(dt)
}

/// `addcmul(self, tensor1, tensor2, *, value=1)` / `addcdiv(...)`.
fn addc(c: &mut Call, op: Op) -> KResult {
    let out = c.out(0)?;
    let (s, t1, t2) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let value = c.scalar(3)?;
    let dt = same_float_dtype("addcmul/addcdiv", &out, &[&s, &t1, &t2])?;
    macro_rules! run {
        ($T:ty) => {{
            let v: $T = value.to();
            match op {
                Op::Mul => {
                    let f = move |a: $T, x: $T, y: $T| (v * x).mul_add(y, a);
                    if zip_fma_tensors::<$T, 3>(&out, [&s, &t1, &t2], move |[a, x, y]| f(a, x, y)) {
                        return Ok(());
                    }
                    map3(&out, &s, &t1, &t2, f)
                }
                Op::Div => map3(&out, &s, &t1, &t2, move |a: $T, x: $T, y: $T| a + v * x / y),
            }
        }};
    }
    unsafe {
        match dt {
            TnDtype::Float32 => run!(f32),
            _ => run!(f64),
        }
    }
}

/// `lerp.Tensor(self, end, weight)`.
fn lerp_tensor(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (s, e, w) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let dt = same_float_dtype("lerp", &out, &[&s, &e, &w])?;
    macro_rules! run {
        ($T:ty) => {{
            let f = move |a: $T, b: $T, w: $T| {
                if w.abs() < 0.5 {
                    w.mul_add(b - a, a)
                } else {
                    (w - 1.0).mul_add(b - a, b)
                }
            };
            if zip_fma_tensors::<$T, 3>(&out, [&s, &e, &w], move |[a, b, w]| f(a, b, w)) {
                return Ok(());
            }
            map3(&out, &s, &e, &w, f)
        }};
    }
    unsafe {
        match dt {
            TnDtype::Float32 => run!(f32),
            _ => run!(f64),
        }
    }
}

/// `lerp.Scalar(self, end, weight)`.
fn lerp(c: &mut Call) -> KResult {
    let out = c.out(0)?;
    let (s, e) = (c.tensor(0)?, c.tensor(1)?);
    let w = c.scalar(2)?;
    let dt = same_float_dtype("lerp", &out, &[&s, &e])?;
    macro_rules! run {
        ($T:ty) => {{
            let w: $T = Scalar::to(w);
            // upstream's is_lerp_weight_small: |w| < 0.5
            let (coeff, small) = if w.abs() < 0.5 {
                (w, true)
            } else {
                (w - 1.0, false)
            };
            let f = move |a: $T, b: $T| coeff.mul_add(b - a, if small { a } else { b });
            if zip_fma_tensors::<$T, 2>(&out, [&s, &e], move |[a, b]| f(a, b)) {
                return Ok(());
            }
            map2(&out, &s, &e, f)
        }};
    }
    unsafe {
        match dt {
            TnDtype::Float32 => run!(f32),
            _ => run!(f64),
        }
    }
}

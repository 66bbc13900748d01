//! complex64 and complex128 arithmetic for the binary kernels (`add`, `sub`, `mul`, `div`) and
//! `neg`: the kernels of binary.rs and unary.rs hand a complex dtype here. Upstream's formulas
//! (c10/util/complex.h and its vectorised complex types): products `ac - bd, ad + bc` without
//! fused multiply-add, `x + alpha * y` as a product then a sum, the quotient scaled by the larger
//! part of the divisor (upstream's vectorised quotient scales by an approximate reciprocal, so
//! quotients agree within an ulp or two, not bit for bit). Other operators on complex operands
//! are composed from real kernels by the core (ops/complex/arithmetic.py).

use rustfft::num_complex::Complex;
use rustfft::num_traits::Float;
use torchnative_backend::abi::TnDtype;

use crate::bail;
use crate::kernel::{KResult, Scalar, Tensor};
use crate::strided::{map1, map2};

pub fn is_complex(dt: TnDtype) -> bool {
    matches!(dt, TnDtype::ComplexFloat | TnDtype::ComplexDouble)
}

fn same_dtype(op: &str, out: &Tensor, ins: &[&Tensor]) -> KResult {
    for t in ins {
        if t.dtype != out.dtype {
            bail!(runtime, "{op}: operand dtype {:?} differs from the computation dtype {:?} (the core casts operands)", t.dtype, out.dtype);
        }
    }
    Ok(())
}

/// `self + alpha * other` (`negate`: `self - alpha * other`) with a real `alpha`.
///
/// # Safety
/// The views are valid kernel arguments.
pub unsafe fn add(
    op: &str,
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    negate: bool,
) -> KResult {
    same_dtype(op, out, &[a, b])?;
    let al = match alpha {
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
        Scalar::Bool(_) => bail!(runtime, "Boolean alpha only supported for Boolean results."),
    };
    let al = if negate { -al } else { al };
    match out.dtype {
        TnDtype::ComplexFloat => add_t::<f32>(out, a, b, al as f32),
        _ => add_t::<f64>(out, a, b, al),
    }
}

unsafe fn add_t<T: Float + Send + Sync>(out: &Tensor, a: &Tensor, b: &Tensor, al: T) -> KResult {
    if al == T::one() {
        return map2(out, a, b, |x: Complex<T>, y: Complex<T>| x + y);
    }
    if al == -T::one() {
        return map2(out, a, b, |x: Complex<T>, y: Complex<T>| x - y);
    }
    map2(out, a, b, move |x: Complex<T>, y: Complex<T>| {
        Complex::new(x.re + al * y.re, x.im + al * y.im)
    })
}

/// # Safety
/// The views are valid kernel arguments.
pub unsafe fn mul(out: &Tensor, a: &Tensor, b: &Tensor) -> KResult {
    same_dtype("mul", out, &[a, b])?;
    match out.dtype {
        TnDtype::ComplexFloat => map2(out, a, b, |x: Complex<f32>, y: Complex<f32>| x * y),
        _ => map2(out, a, b, |x: Complex<f64>, y: Complex<f64>| x * y),
    }
}

/// c10::complex's `operator/=`: Smith's division, scaled by the larger part of the divisor.
#[inline]
fn quotient<T: Float>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let (a, b, c, d) = (x.re, x.im, y.re, y.im);
    let (abs_c, abs_d) = (c.abs(), d.abs());
    if abs_c >= abs_d {
        if abs_c == T::zero() && abs_d == T::zero() {
            return Complex::new(a / abs_c, b / abs_d); // a complex infinity or NaN
        }
        let rat = d / c;
        let scl = T::one() / (c + d * rat);
        Complex::new((a + b * rat) * scl, (b - a * rat) * scl)
    } else {
        let rat = c / d;
        let scl = T::one() / (d + c * rat);
        Complex::new((a * rat + b) * scl, (b * rat - a) * scl)
    }
}

/// # Safety
/// The views are valid kernel arguments.
pub unsafe fn div(out: &Tensor, a: &Tensor, b: &Tensor) -> KResult {
    same_dtype("div", out, &[a, b])?;
    match out.dtype {
        TnDtype::ComplexFloat => map2(out, a, b, quotient::<f32>),
        _ => map2(out, a, b, quotient::<f64>),
    }
}

/// # Safety
/// The views are valid kernel arguments.
pub unsafe fn neg(out: &Tensor, a: &Tensor) -> KResult {
    same_dtype("neg", out, &[a])?;
    match out.dtype {
        TnDtype::ComplexFloat => map1(out, a, |x: Complex<f32>| -x),
        _ => map1(out, a, |x: Complex<f64>| -x),
    }
}

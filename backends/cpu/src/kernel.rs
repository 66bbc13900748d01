//! The cpu backend's names for the SDK's calling side (`torchnative_backend`): its kernels read
//! [`Call`]s of [`Cpu`](crate::Cpu) whose tensors are host views ([`Tensor`]), report
//! [`KernelError`]s, and are declared with [`kernels!`](crate::kernels). What is the cpu's own
//! here is torch's conversion of a [`Scalar`] into an element type ([`ScalarElem`]).

/// The cpu's dtype refusals are upstream's own messages (`"addmm_impl_cpu_" not implemented for
/// 'Half'`), without the device that the SDK's generic `unsupported_dtype` adds.
pub use torchnative_backend::upstream_unsupported_dtype as unsupported_dtype;
pub use torchnative_backend::{
    err, index_error, not_implemented, runtime, value_error, HostTensor as Tensor, KResult,
    KernelError, OwnedView, Registry, Scalar,
};

use crate::dtype::{is_float, is_int, Elem};

/// One kernel invocation on the cpu backend.
pub type Call<'a> = torchnative_backend::Call<'a, crate::Cpu>;

/// Declares `extern "C"` cpu kernels: `kernels! { k_add = "aten::add.Tensor" => |c| add(c); }`
/// (the SDK's [`kernel_table!`](torchnative_backend::kernel_table) for [`Cpu`](crate::Cpu)).
#[macro_export]
macro_rules! kernels {
    ($($t:tt)*) => { ::torchnative_backend::kernel_table! { $crate::Cpu; $($t)* } };
}

/// A [`Scalar`] as an element type, with torch's conversion rules.
pub trait ScalarElem {
    /// The scalar in dtype `T`, converted with torch's conversion rules.
    fn to<T: Elem>(self) -> T;
    /// The scalar in dtype `T` as upstream's `Scalar::to<T>()` gives it: checked for overflow
    /// (`RuntimeError: value cannot be converted to type uint8_t without overflow`), then
    /// converted with torch's rules. Negative ints wrap into unsigned types (-1 → 255).
    fn checked<T: Elem>(self) -> KResult<T>;
}

impl ScalarElem for Scalar {
    #[inline]
    fn to<T: Elem>(self) -> T {
        match self {
            Scalar::Int(i) => T::from_i64(i),
            Scalar::Float(f) => T::from_f64(f),
            Scalar::Bool(b) => T::from_bool(b),
        }
    }
    fn checked<T: Elem>(self) -> KResult<T> {
        let overflow = if T::DTYPE == torchnative_backend::abi::TnDtype::Bool {
            false
        } else {
            match self {
                Scalar::Bool(_) => false,
                Scalar::Int(i) => {
                    let i = i as i128;
                    if is_int(T::DTYPE) && T::LOWEST == 0.0 {
                        i > T::MAX as i128 || (i < 0 && -i > T::MAX as i128)
                    } else {
                        i < T::LOWEST as i128 || i > T::MAX as i128
                    }
                }
                Scalar::Float(f) => {
                    if is_float(T::DTYPE) && (f.is_infinite() || f.is_nan()) {
                        false
                    } else {
                        f.is_nan() || f < T::LOWEST || f > T::MAX
                    }
                }
            }
        };
        if overflow {
            return Err(runtime(format!(
                "value cannot be converted to type {} without overflow",
                T::CNAME
            )));
        }
        Ok(self.to::<T>())
    }
}

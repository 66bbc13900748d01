//! The error a kernel reports: the Python exception kind and its message, copied into the
//! core's `TnError` slot by [`crate::kernel::run`].

use crate::abi::{TnDtype, TnErrorKind};
use crate::dtype::dtype_name;

/// An error a kernel reports: the Python exception kind and its message.
#[derive(Debug, Clone)]
pub struct KernelError {
    pub kind: TnErrorKind,
    pub msg: String,
}

pub type KResult<T = ()> = Result<T, KernelError>;

#[inline]
pub fn err(kind: TnErrorKind, msg: impl Into<String>) -> KernelError {
    KernelError {
        kind,
        msg: msg.into(),
    }
}
#[inline]
pub fn runtime(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::Runtime, msg)
}
#[inline]
pub fn index_error(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::Index, msg)
}
#[inline]
pub fn value_error(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::Value, msg)
}
#[inline]
pub fn not_implemented(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::NotImplemented, msg)
}
/// Upstream's wording for a dtype its dispatch macro does not cover
/// (`"exp" not implemented for 'Long'`).
pub fn unsupported_dtype(op: &str, dt: TnDtype) -> KernelError {
    not_implemented(format!("\"{op}\" not implemented for '{}'", dtype_name(dt)))
}

/// `bail!(kind_fn, "fmt", args)`: return early with an error (`bail!(runtime, "{op}: ...")`).
#[macro_export]
macro_rules! bail {
    ($f:ident, $($t:tt)*) => { return Err($crate::$f(format!($($t)*))) };
}

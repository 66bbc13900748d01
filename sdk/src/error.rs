//! The error a kernel reports: the Python exception kind and its message, copied into the
//! core's `TnError` slot by [`crate::kernel::run`].

use crate::abi::{TnDtype, TnErrorKind};
use crate::dtype::dtype_name;
use crate::Backend;

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
/// A kernel's refusal of a dtype it does not handle, on backend `B`: upstream's dispatch-macro
/// wording with the device key `B` declares (`"exp" not implemented for 'Long' on device
/// 'rustdev'`), the form `torchnative conformance` counts as a refusal by name rather than a
/// disagreement (`unsupported_dtype::<MyBackend>("exp", t.dtype)`).
pub fn unsupported_dtype<B: Backend>(op: &str, dt: TnDtype) -> KernelError {
    not_implemented(format!(
        "\"{op}\" not implemented for '{}' on device '{}'",
        dtype_name(dt),
        B::DEVICE_KEY
    ))
}

/// Upstream's exact wording, without the device (`"exp" not implemented for 'Long'`): only for a
/// backend whose messages must equal upstream's own, as the cpu backend's do. On any other device
/// use [`unsupported_dtype`], since conformance does not count this form as a refusal.
pub fn upstream_unsupported_dtype(op: &str, dt: TnDtype) -> KernelError {
    not_implemented(format!("\"{op}\" not implemented for '{}'", dtype_name(dt)))
}

/// `bail!(kind_fn, "fmt", args)`: return early with an error (`bail!(runtime, "{op}: ...")`).
#[macro_export]
macro_rules! bail {
    ($f:ident, $($t:tt)*) => { return Err($crate::$f(format!($($t)*))) };
}

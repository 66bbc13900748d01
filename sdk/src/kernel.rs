//! The `extern "C"` side of a kernel: [`run`] builds the [`Call`], catches panics (a panic must
//! never unwind across the C boundary) and reports errors through the `TnError` slot;
//! [`kernel_table!`](crate::kernel_table) declares kernels and the module's `register` function.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::{TnArg, TnError, TnKernelCtx, TnTensor};
use crate::error::{runtime, KResult};
use crate::{Backend, Call};

/// Runs a kernel body behind the C ABI: builds the [`Call`], catches panics, reports errors.
/// Generic over the backend and `#[inline]`, so each kernel's `extern "C"` function compiles to
/// its body with the constant `body` called directly, as when this lived in each backend.
///
/// # Safety
/// The pointers are those the core passes to a `TnKernelFn`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub unsafe fn run<B: Backend>(
    op: &'static str,
    ctx: *const TnKernelCtx,
    args: *const TnArg,
    nargs: usize,
    outs: *mut TnTensor,
    nouts: usize,
    errp: *mut TnError,
    body: fn(&mut Call<B>) -> KResult,
) -> i32 {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let args = if nargs == 0 || args.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(args, nargs)
        };
        let outs = if nouts == 0 || outs.is_null() {
            &mut [][..]
        } else {
            std::slice::from_raw_parts_mut(outs, nouts)
        };
        body(&mut Call::new(op, args, outs, ctx))
    }));
    let e = match result {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            runtime(format!("{op}: internal error in {}: {what}", B::NAME))
        }
    };
    if !errp.is_null() {
        (*errp).set(e.kind, &e.msg);
    }
    1
}

/// Declares `extern "C"` kernels of backend `B` and the module's table:
///
/// ```ignore
/// torchnative_backend::kernel_table! { MyBackend;
///     k_add = "aten::add.Tensor" => |c| add(c);
///     k_fill = "aten::fill_.Scalar" => fill;
/// }
/// ```
///
/// Each line becomes a `pub unsafe extern "C" fn` of type `TnKernelFn` that runs the body
/// (`fn(&mut Call<B>) -> KResult`) through [`run`], and the module gets
/// `pub fn register(reg: &mut Registry)` appending `(overload, kernel)` for each.
#[macro_export]
macro_rules! kernel_table {
    ($backend:ty; $( $name:ident = $op:literal => $body:expr ;)*) => {
        $(
            #[allow(clippy::missing_safety_doc, clippy::redundant_closure)]
            pub unsafe extern "C" fn $name(
                _user: *mut ::std::ffi::c_void,
                ctx: *const $crate::abi::TnKernelCtx,
                args: *const $crate::abi::TnArg,
                nargs: usize,
                outs: *mut $crate::abi::TnTensor,
                nouts: usize,
                err: *mut $crate::abi::TnError,
            ) -> i32 {
                $crate::kernel::run::<$backend>($op, ctx, args, nargs, outs, nouts, err, $body)
            }
        )*
        /// This module's kernels, as `(operator overload, kernel)`.
        pub fn register(reg: &mut $crate::Registry) {
            $( reg.push(($op, $name as $crate::abi::TnKernelFn)); )*
        }
    };
}

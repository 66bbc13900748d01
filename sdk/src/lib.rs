//! torchnative-backend: the SDK a native torchnative backend is built on.
//!
//! The layers: a backend crate depends on this crate, which depends on the C ABI
//! ([`abi`], the `torchnative-abi` crate re-exported); neither knows the core (`torch._C`), which
//! hands the backend its registrar at run time. What lives here is what every native backend
//! needs beside its kernels, so that a new backend is its kernels plus a short table:
//!
//! * [`Backend`]: the trait a backend implements once (its name, device key, tensor view,
//!   allocator and kernel table);
//! * [`kernel_table!`]: declares `extern "C"` kernels from `name = "aten::op" => body;` lines and
//!   the module's `register` function; each kernel runs through [`kernel::run`], which never
//!   unwinds across the C boundary and reports errors through the `TnError` slot;
//! * [`Call`]: the schema-ordered arguments of one call, read with typed accessors
//!   (`c.tensor(0)?`, `c.int(1)?`, `c.scalar(2)?`, ...), and its outputs;
//! * [`KernelError`] / [`KResult`] and their constructors ([`runtime`], [`not_implemented`], ...,
//!   [`bail!`]): the Python exception a kernel raises;
//! * [`HostTensor`] / [`OwnedView`]: strided views of host memory, for backends whose memory the
//!   CPU can read (cpu, the Rust template);
//! * [`register::register_into`]: the handshake with the core's `TnRegistrar` (ABI version,
//!   struct size, allocator, every kernel);
//! * [`python::add_backend_functions`]: the functions of the backend's `_native` Python module;
//! * [`dtype`]: upstream's dtype names for messages.
//!
//! The hot path stays in the backend's crate: [`Call`]'s accessors and [`kernel::run`] are
//! generic over the [`Backend`] (monomorphised, and inlined, where the backend's kernels are) and
//! the small methods are `#[inline]`.

pub use torchnative_abi as abi;

pub mod call;
pub mod dtype;
pub mod error;
pub mod host;
pub mod kernel;
pub mod python;
pub mod register;

pub use call::{Call, Scalar};
pub use error::{
    err, index_error, not_implemented, runtime, unsupported_dtype, upstream_unsupported_dtype,
    value_error, KResult, KernelError,
};
pub use host::{HostTensor, OwnedView};

use std::ffi::c_void;

use abi::{TnAllocator, TnKernelFn, TnTensor};

/// `(operator overload, kernel)` pairs, in registration order.
pub type Registry = Vec<(&'static str, TnKernelFn)>;

/// What a native backend says about itself, once: the SDK's wrapper, accessors, handshake and
/// Python module functions are generic over it.
pub trait Backend: 'static {
    /// The distribution, as messages name it (`"torchnative-cpu"`, `"rustdev"`).
    const NAME: &'static str;
    /// The device key its allocator and kernels are registered for (`"cpu"`).
    const DEVICE_KEY: &'static str;
    /// What [`Call::tensor`] hands a kernel body: a view of a `TnTensor` argument or output
    /// ([`HostTensor`] for host memory; vulkan resolves its buffer).
    type Tensor<'a>;
    /// Views one tensor of a call.
    ///
    /// # Safety
    /// `t` is a valid view from the core for `'a`.
    unsafe fn view<'a>(t: &'a TnTensor) -> KResult<Self::Tensor<'a>>;
    /// The allocator registered for [`Backend::DEVICE_KEY`] (the core copies the struct).
    fn allocator() -> TnAllocator;
    /// Every kernel, as `(operator overload, kernel)`.
    fn kernels() -> Registry;
}

/// `extern "C" fn(user, nbytes, align) -> address`: a device allocation.
pub type AllocFn = unsafe extern "C" fn(*mut c_void, usize, usize) -> *mut c_void;
/// `extern "C" fn(user, address, nbytes, align)`: frees what [`AllocFn`] gave.
pub type FreeFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, usize);
/// `extern "C" fn(user, dst, src, nbytes) -> 0 on success`: a copy to or from the host.
pub type CopyFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void, usize) -> i32;

/// The allocator table of four `extern "C"` functions without `user` state, for
/// [`Backend::allocator`].
pub fn allocator(
    alloc: AllocFn,
    free: FreeFn,
    copy_from_host: CopyFn,
    copy_to_host: CopyFn,
) -> TnAllocator {
    TnAllocator {
        struct_size: std::mem::size_of::<TnAllocator>() as u32,
        user: std::ptr::null_mut(),
        alloc,
        free,
        copy_from_host,
        copy_to_host,
    }
}

/// Whether sizes and strides describe a dense row-major layout (size-1 dims' strides ignored).
#[inline]
pub fn is_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    let mut expected = 1i64;
    for d in (0..sizes.len()).rev() {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected *= sizes[d];
        }
    }
    true
}

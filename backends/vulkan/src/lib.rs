//! torchnative-vulkan: the Vulkan backend wheel of torchnative (device key `"vulkan"`).
//!
//! wgpu (Vulkan backend only) runs compute shaders generated in WGSL. The core parses
//! arguments, promotes types, broadcasts, computes output shapes and allocates (through
//! [`alloc`], whose "pointers" are virtual addresses of `wgpu::Buffer`s); this crate only
//! computes. It is built on the backend SDK (`torchnative_backend`: the never-unwinding kernel
//! wrapper, argument access, the registrar handshake, the Python module's functions) through
//! [`Vulkan`], its [`Backend`]. Layout: `device` (the lazily opened adapter/device), `alloc`
//! (allocator and host copies), `kernel` (device views of tensors, `vk_kernels!`), `gen` (WGSL
//! generation, pipeline cache, dispatch; `wgsl_lib.wgsl` holds the shared WGSL functions), and
//! the kernel families `ew`, `reduce`, `linalg`, `nn`, `index`.
//!
//! Dtypes: float32 computes in f32; int32/uint8/int8 in i32; int64 as a pair of u32 words with
//! exact add/sub/mul/compare/cast; bool as one byte per element (0 or 1, the core's layout).
//! Anything else (float16, bfloat16, float64, complex) is refused by name with the dtype.

pub mod alloc;
pub mod device;
pub mod gen;
pub mod kernel;

pub mod ew;
pub mod index;
pub mod linalg;
pub mod nn;
pub mod reduce;

#[cfg(test)]
mod tests;

use torchnative_backend::abi::{TnAllocator, TnTensor};
use torchnative_backend::{Backend, KResult, Registry};

/// The device key this backend serves.
pub const DEVICE_KEY: &str = "vulkan";

/// The vulkan backend, as the SDK sees it: device views, the vulkan allocator, [`kernels`].
pub struct Vulkan;

impl Backend for Vulkan {
    const NAME: &'static str = "torchnative-vulkan";
    const DEVICE_KEY: &'static str = DEVICE_KEY;
    type Tensor<'a> = kernel::View;
    unsafe fn view(t: &TnTensor) -> KResult<kernel::View> {
        kernel::View::from_raw(t)
    }
    fn allocator() -> TnAllocator {
        alloc::vulkan_allocator()
    }
    fn kernels() -> Registry {
        kernels()
    }
}

/// Every kernel of the backend, as `(operator overload, kernel)`, in registration order.
pub fn kernels() -> Registry {
    let mut reg = vec![];
    ew::register(&mut reg);
    reduce::register(&mut reg);
    linalg::register(&mut reg);
    nn::register(&mut reg);
    index::register(&mut reg);
    reg
}

mod python {
    use pyo3::prelude::*;

    /// `(True, adapter description)` or `(False, "no Vulkan adapter")`; probes once per process.
    #[pyfunction]
    fn probe(py: Python<'_>) -> (bool, String) {
        match py.allow_threads(crate::device::probe) {
            Ok(d) => (true, d),
            Err(e) => (false, e),
        }
    }

    /// Live device allocations and compiled pipelines (diagnostics).
    #[pyfunction]
    fn stats() -> (usize, usize) {
        (
            crate::alloc::live_allocations(),
            crate::gen::pipeline_count(),
        )
    }

    /// `register`, `kernel_names`, `refused_kernels` and the constants come from the SDK.
    #[pymodule]
    fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        torchnative_backend::python::add_backend_functions::<crate::Vulkan>(m)?;
        m.add_function(wrap_pyfunction!(probe, m)?)?;
        m.add_function(wrap_pyfunction!(stats, m)?)?;
        Ok(())
    }
}

//! torchnative-vulkan: the Vulkan backend wheel of torchnative (device key `"vulkan"`).
//!
//! wgpu (Vulkan backend only) runs compute shaders generated in WGSL. The core parses
//! arguments, promotes types, broadcasts, computes output shapes and allocates (through
//! [`alloc`], whose "pointers" are virtual addresses of `wgpu::Buffer`s); this crate only
//! computes. Layout: `device` (the lazily opened adapter/device), `alloc` (allocator and host
//! copies), `kernel` (argument access, the never-unwinding wrapper), `gen` (WGSL generation,
//! pipeline cache, dispatch; `wgsl_lib.wgsl` holds the shared WGSL functions), `register` (the
//! handshake), and the kernel families `ew`, `reduce`, `linalg`, `nn`, `index`.
//!
//! Dtypes: float32 computes in f32; int32/uint8/int8 in i32; int64 as a pair of u32 words with
//! exact add/sub/mul/compare/cast; bool as one byte per element (0 or 1, the core's layout).
//! Anything else (float16, bfloat16, float64, complex) is refused by name with the dtype.

pub mod alloc;
pub mod device;
pub mod gen;
pub mod kernel;
pub mod register;

pub mod ew;
pub mod index;
pub mod linalg;
pub mod nn;
pub mod reduce;

#[cfg(test)]
mod tests;

use torchnative_abi::TnKernelFn;

/// The device key this backend serves.
pub const DEVICE_KEY: &str = "vulkan";

/// Every kernel of the backend, as `(operator overload, kernel)`, in registration order.
pub fn kernels() -> Vec<(&'static str, TnKernelFn)> {
    let mut reg = vec![];
    ew::register(&mut reg);
    reduce::register(&mut reg);
    linalg::register(&mut reg);
    nn::register(&mut reg);
    index::register(&mut reg);
    reg
}

mod python {
    use std::ffi::CString;
    use std::sync::Mutex;

    use pyo3::exceptions::{PyImportError, PyRuntimeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::PyCapsule;
    use torchnative_abi::{TnRegistrar, ABI_VERSION, REGISTRAR_CAPSULE_NAME};

    use crate::register::{register_into, RegisterError};

    static REFUSED: Mutex<Vec<(&'static str, i32)>> = Mutex::new(Vec::new());

    /// Registers the allocator and every kernel with the core's registrar capsule.
    #[pyfunction]
    fn register(capsule: &Bound<'_, PyAny>) -> PyResult<usize> {
        let capsule = capsule.downcast::<PyCapsule>().map_err(|_| {
            PyValueError::new_err("register() expects the core's registrar PyCapsule")
        })?;
        let name = capsule.name()?.map(|n| n.to_owned());
        let expected = CString::new(REGISTRAR_CAPSULE_NAME).unwrap();
        if name.as_deref() != Some(expected.as_c_str()) {
            return Err(PyValueError::new_err(format!(
                "register() expects a PyCapsule named {REGISTRAR_CAPSULE_NAME:?}, got {name:?}"
            )));
        }
        match unsafe { register_into(capsule.pointer() as *const TnRegistrar) } {
            Ok(r) => {
                *REFUSED.lock().unwrap() = r.refused;
                Ok(r.accepted)
            }
            Err(RegisterError::AbiMismatch(m)) => Err(PyImportError::new_err(m)),
            Err(RegisterError::Invalid(m)) => Err(PyValueError::new_err(m)),
            Err(RegisterError::Allocator(m)) => Err(PyRuntimeError::new_err(m)),
        }
    }

    /// `(True, adapter description)` or `(False, "no Vulkan adapter")`; probes once per process.
    #[pyfunction]
    fn probe(py: Python<'_>) -> (bool, String) {
        match py.allow_threads(crate::device::probe) {
            Ok(d) => (true, d),
            Err(e) => (false, e),
        }
    }

    #[pyfunction]
    fn refused_kernels() -> Vec<(&'static str, i32)> {
        REFUSED.lock().unwrap().clone()
    }

    #[pyfunction]
    fn kernel_names() -> Vec<&'static str> {
        crate::kernels().into_iter().map(|(n, _)| n).collect()
    }

    /// Live device allocations and compiled pipelines (diagnostics).
    #[pyfunction]
    fn stats() -> (usize, usize) {
        (
            crate::alloc::live_allocations(),
            crate::gen::pipeline_count(),
        )
    }

    #[pymodule]
    fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("ABI_VERSION", ABI_VERSION)?;
        m.add("REGISTRAR_CAPSULE_NAME", REGISTRAR_CAPSULE_NAME)?;
        m.add("DEVICE_KEY", crate::DEVICE_KEY)?;
        m.add_function(wrap_pyfunction!(register, m)?)?;
        m.add_function(wrap_pyfunction!(probe, m)?)?;
        m.add_function(wrap_pyfunction!(kernel_names, m)?)?;
        m.add_function(wrap_pyfunction!(refused_kernels, m)?)?;
        m.add_function(wrap_pyfunction!(stats, m)?)?;
        Ok(())
    }
}

//! torchnative-cpu: the CPU backend wheel of torchnative.
//!
//! The core (`torch._C`) parses arguments, promotes types, broadcasts, computes output shapes
//! and allocates; this crate only computes. It speaks the C ABI of `torchnative-abi`: the
//! Python module `torchnative_cpu._native` exposes `register(capsule)`, which reads the core's
//! `TnRegistrar` out of the capsule, registers the host allocator for device key `"cpu"` and
//! then every kernel of [`kernels`] under its upstream overload name.
//!
//! Layout: `dtype` (element types and conversions, `dispatch_*!`), `kernel` (argument access
//! and the never-unwinding `extern "C"` wrapper, `kernels!`), `strided` (the N-d strided
//! iterator), `alloc` (the host allocator), `register` (the handshake), and one module per kernel
//! family: `copy`, `binary`, `unary`, `reduce`, `linalg`, `nn`, `index`, `sort`, `conv`.
//!
//! Where candle fits, we use what candle-core uses (its CPU matmul engine, the `gemm` crate, and
//! `half`); everything else is plain strided loops, because candle's owned, contiguous-by-default
//! storage does not fit torch's view semantics (kernels read and write views in place).

pub mod dtype;
pub mod kernel;
pub mod strided;
pub mod threads;

pub mod alloc;
pub mod register;

pub mod activation;
pub mod binary;
pub mod complex;
pub mod conv;
pub mod copy;
pub mod decomp;
pub mod fft;
pub mod flash;
pub mod index;
pub mod linalg;
pub mod loss;
pub mod nn;
pub mod pointwise;
pub mod reduce;
pub mod scan;
pub mod scatter;
pub mod sort;
pub mod special;
pub mod stdsort;
pub mod unary;
pub mod vecmath;

use torchnative_abi::TnKernelFn;

/// The device key this backend serves.
pub const DEVICE_KEY: &str = "cpu";

/// Every kernel of the backend, as `(operator overload, kernel)`, in registration order.
pub fn kernels() -> Vec<(&'static str, TnKernelFn)> {
    let mut reg = kernel::Registry::new();
    copy::register(&mut reg);
    binary::register(&mut reg);
    unary::register(&mut reg);
    reduce::register(&mut reg);
    linalg::register(&mut reg);
    decomp::register(&mut reg);
    fft::register(&mut reg);
    nn::register(&mut reg);
    loss::register(&mut reg);
    pointwise::register(&mut reg);
    index::register(&mut reg);
    sort::register(&mut reg);
    scan::register(&mut reg);
    scatter::register(&mut reg);
    special::register(&mut reg);
    conv::register(&mut reg);
    reg
}

#[cfg(test)]
mod golden;

mod python {
    use std::ffi::CString;
    use std::sync::Mutex;

    use pyo3::exceptions::{PyImportError, PyRuntimeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::PyCapsule;
    use torchnative_abi::{TnRegistrar, ABI_VERSION, REGISTRAR_CAPSULE_NAME};

    use crate::register::{register_into, RegisterError};

    /// Overloads the core refused at the last `register` (diagnostics).
    static REFUSED: Mutex<Vec<(&'static str, i32)>> = Mutex::new(Vec::new());

    /// Registers the allocator and every kernel with the core's registrar (a PyCapsule named
    /// `torchnative.registrar` holding a `*const TnRegistrar`); returns the number of kernels the
    /// core accepted. Raises ImportError naming both versions on an ABI major mismatch.
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
        let reg = capsule.pointer() as *const TnRegistrar;
        match unsafe { register_into(reg) } {
            Ok(r) => {
                *REFUSED.lock().unwrap() = r.refused;
                Ok(r.accepted)
            }
            Err(RegisterError::AbiMismatch(m)) => Err(PyImportError::new_err(m)),
            Err(RegisterError::Invalid(m)) => Err(PyValueError::new_err(m)),
            Err(RegisterError::Allocator(m)) => Err(PyRuntimeError::new_err(m)),
        }
    }

    /// `[(overload, return code)]` the core refused at the last `register`.
    #[pyfunction]
    fn refused_kernels() -> Vec<(&'static str, i32)> {
        REFUSED.lock().unwrap().clone()
    }

    /// The overload names this backend implements (for diagnostics and tests).
    #[pyfunction]
    fn kernel_names() -> Vec<&'static str> {
        crate::kernels().into_iter().map(|(n, _)| n).collect()
    }

    /// `torch.set_num_threads(n)`, passed on by the plugin's `torchnative_set_num_threads`.
    #[pyfunction]
    fn set_num_threads(n: usize) -> PyResult<()> {
        if n == 0 {
            return Err(PyRuntimeError::new_err(
                "set_num_threads expects a positive integer",
            ));
        }
        crate::threads::set(n);
        Ok(())
    }

    /// The threads a kernel may use now (the setting, bounded by the pool's size).
    #[pyfunction]
    fn num_threads() -> usize {
        crate::threads::threads()
    }

    /// The CPU capability this backend's kernels run (`ATEN_CPU_CAPABILITY` lowers it).
    #[pyfunction]
    fn cpu_capability() -> &'static str {
        crate::vecmath::capability_name()
    }

    #[pymodule]
    fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("ABI_VERSION", ABI_VERSION)?;
        m.add("REGISTRAR_CAPSULE_NAME", REGISTRAR_CAPSULE_NAME)?;
        m.add("DEVICE_KEY", crate::DEVICE_KEY)?;
        m.add_function(wrap_pyfunction!(register, m)?)?;
        m.add_function(wrap_pyfunction!(kernel_names, m)?)?;
        m.add_function(wrap_pyfunction!(refused_kernels, m)?)?;
        m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
        m.add_function(wrap_pyfunction!(num_threads, m)?)?;
        m.add_function(wrap_pyfunction!(cpu_capability, m)?)?;
        Ok(())
    }
}

//! torchnative-cpu: the CPU backend wheel of torchnative.
//!
//! The core (`torch._C`) parses arguments, promotes types, broadcasts, computes output shapes
//! and allocates; this crate only computes. It speaks the C ABI of `torchnative-abi`: the
//! Python module `torchnative_cpu._native` exposes `register(capsule)`, which reads the core's
//! `TnRegistrar` out of the capsule, registers the host allocator for device key `"cpu"` and
//! then every kernel of [`kernels`] under its upstream overload name.
//!
//! Layout: `dtype` (element types and conversions), `kernel` (argument access and the
//! never-unwinding `extern "C"` wrapper), `strided` (the N-d strided iterator), and one module
//! per kernel family.

pub mod dtype;
pub mod kernel;
pub mod strided;

pub mod alloc;
pub mod binary;
pub mod copy;
pub mod unary;

use torchnative_abi::TnKernelFn;

/// The device key this backend serves.
pub const DEVICE_KEY: &str = "cpu";

/// Every kernel of the backend, as `(operator overload, kernel)`, in registration order.
pub fn kernels() -> Vec<(&'static str, TnKernelFn)> {
    let mut reg = kernel::Registry::new();
    copy::register(&mut reg);
    binary::register(&mut reg);
    unary::register(&mut reg);
    reg
}

#[cfg(test)]
mod golden;

mod python {
    use std::ffi::{CStr, CString};

    use pyo3::exceptions::{PyImportError, PyRuntimeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::PyCapsule;
    use torchnative_abi::{abi_compatible, TnRegistrar, ABI_VERSION, REGISTRAR_CAPSULE_NAME};

    fn version_str(v: u32) -> String {
        format!("{}.{}", v >> 16, v & 0xffff)
    }

    /// Registers the allocator and every kernel with the core's registrar; returns the number
    /// of kernels registered.
    #[pyfunction]
    fn register(capsule: &Bound<'_, PyAny>) -> PyResult<usize> {
        let capsule = capsule
            .downcast::<PyCapsule>()
            .map_err(|_| PyValueError::new_err("register() expects the core's registrar PyCapsule"))?;
        let name = capsule.name()?.map(|n| n.to_owned());
        let expected = CString::new(REGISTRAR_CAPSULE_NAME).unwrap();
        if name.as_deref() != Some(expected.as_c_str()) {
            return Err(PyValueError::new_err(format!(
                "register() expects a PyCapsule named {REGISTRAR_CAPSULE_NAME:?}, got {name:?}"
            )));
        }
        let reg = capsule.pointer() as *const TnRegistrar;
        if reg.is_null() {
            return Err(PyValueError::new_err("the registrar capsule holds a null pointer"));
        }
        let reg = unsafe { &*reg };
        if !abi_compatible(reg.abi_version, ABI_VERSION) {
            return Err(PyImportError::new_err(format!(
                "torchnative-cpu was built for backend ABI {} but the core speaks ABI {}",
                version_str(ABI_VERSION),
                version_str(reg.abi_version)
            )));
        }
        let plugin = if reg.plugin.is_null() {
            "cpu".to_string()
        } else {
            unsafe { CStr::from_ptr(reg.plugin) }.to_string_lossy().into_owned()
        };
        let device = CString::new(crate::DEVICE_KEY).unwrap();
        let rc = unsafe { (reg.register_allocator)(reg.core, device.as_ptr(), &crate::alloc::host_allocator()) };
        if rc != 0 {
            return Err(PyRuntimeError::new_err(format!("{plugin}: the core refused the allocator for device 'cpu' ({rc})")));
        }
        let mut n = 0;
        for (op, kernel) in crate::kernels() {
            let cop = CString::new(op).unwrap();
            let rc = unsafe { (reg.register_kernel)(reg.core, cop.as_ptr(), device.as_ptr(), kernel, std::ptr::null_mut()) };
            if rc != 0 {
                return Err(PyRuntimeError::new_err(format!("{plugin}: the core refused kernel {op} for device 'cpu' ({rc})")));
            }
            n += 1;
        }
        Ok(n)
    }

    /// The overload names this backend implements (for diagnostics and tests).
    #[pyfunction]
    fn kernel_names() -> Vec<&'static str> {
        crate::kernels().into_iter().map(|(n, _)| n).collect()
    }

    #[pymodule]
    fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("ABI_VERSION", ABI_VERSION)?;
        m.add("REGISTRAR_CAPSULE_NAME", REGISTRAR_CAPSULE_NAME)?;
        m.add("DEVICE_KEY", crate::DEVICE_KEY)?;
        m.add_function(wrap_pyfunction!(register, m)?)?;
        m.add_function(wrap_pyfunction!(kernel_names, m)?)?;
        Ok(())
    }
}

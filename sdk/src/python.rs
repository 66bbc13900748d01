//! The Python face of a native backend: the functions every backend's `_native` module exports,
//! built for backend `B`. The backend's `#[pymodule] fn _native` calls
//! [`add_backend_functions`] and adds its own extras (cpu: `set_num_threads`; vulkan: `probe`).

use std::ffi::CString;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyImportError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyCapsule, PyDict, PyTuple};

use crate::abi::{TnRegistrar, ABI_VERSION, REGISTRAR_CAPSULE_NAME};
use crate::register::{register_into, RegisterError};
use crate::Backend;

/// The `*const TnRegistrar` inside the core's capsule (ValueError for anything else).
pub fn registrar_from_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<*const TnRegistrar> {
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
    Ok(capsule.pointer() as *const TnRegistrar)
}

/// [`register_into`] from Python: the accepted kernels, or ImportError naming both versions on
/// an ABI major mismatch (the plugin is then recorded as failed), ValueError for a malformed
/// registrar, RuntimeError when the core refuses the allocator.
pub fn register_capsule<B: Backend>(
    capsule: &Bound<'_, PyAny>,
) -> PyResult<crate::register::Registered> {
    match unsafe { register_into::<B>(registrar_from_capsule(capsule)?) } {
        Ok(r) => Ok(r),
        Err(RegisterError::AbiMismatch(m)) => Err(PyImportError::new_err(m)),
        Err(RegisterError::Invalid(m)) => Err(PyValueError::new_err(m)),
        Err(RegisterError::Allocator(m)) => Err(PyRuntimeError::new_err(m)),
    }
}

fn one_arg<'py>(args: &Bound<'py, PyTuple>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    if args.len() != 1 {
        return Err(PyTypeError::new_err(format!(
            "{name}() takes exactly one argument ({} given)",
            args.len()
        )));
    }
    args.get_item(0)
}

/// Adds to `m`: `ABI_VERSION`, `REGISTRAR_CAPSULE_NAME`, `DEVICE_KEY`, and
///
/// * `register(capsule) -> int`: the allocator and every kernel, through the core's registrar
///   capsule; the number of kernels the core accepted;
/// * `kernel_names() -> list[str]`: the overloads the backend implements;
/// * `refused_kernels() -> list[tuple[str, int]]`: those the core refused at the last
///   `register`, with its return code.
pub fn add_backend_functions<B: Backend>(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ABI_VERSION", ABI_VERSION)?;
    m.add("REGISTRAR_CAPSULE_NAME", REGISTRAR_CAPSULE_NAME)?;
    m.add("DEVICE_KEY", B::DEVICE_KEY)?;
    let refused: Arc<Mutex<Vec<(&'static str, i32)>>> = Arc::default();
    let last = refused.clone();
    let register = PyCFunction::new_closure(
        py,
        Some(c"register"),
        Some(c"register(capsule) -> int: registers the allocator and every kernel with the core's registrar capsule; returns the number of kernels the core accepted."),
        move |args: &Bound<'_, PyTuple>, _kw: Option<&Bound<'_, PyDict>>| -> PyResult<usize> {
            let r = register_capsule::<B>(&one_arg(args, "register")?)?;
            *last.lock().unwrap() = r.refused;
            Ok(r.accepted)
        },
    )?;
    let refused_kernels = PyCFunction::new_closure(
        py,
        Some(c"refused_kernels"),
        Some(c"refused_kernels() -> list[tuple[str, int]]: the overloads the core refused at the last register, with its return code."),
        move |_args: &Bound<'_, PyTuple>, _kw: Option<&Bound<'_, PyDict>>| -> Vec<(&'static str, i32)> {
            refused.lock().unwrap().clone()
        },
    )?;
    let kernel_names = PyCFunction::new_closure(
        py,
        Some(c"kernel_names"),
        Some(c"kernel_names() -> list[str]: the operator overloads this backend implements."),
        |_args: &Bound<'_, PyTuple>, _kw: Option<&Bound<'_, PyDict>>| -> Vec<&'static str> {
            B::kernels().into_iter().map(|(n, _)| n).collect()
        },
    )?;
    m.add("register", register)?;
    m.add("refused_kernels", refused_kernels)?;
    m.add("kernel_names", kernel_names)?;
    Ok(())
}

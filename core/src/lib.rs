//! torchnative-core: the native half of our `torch._C`.
//!
//! Rust holds what has to be fast or owns memory: tensors and storage (`tensor.rs`,
//! `storage.rs`), the single door (`door.rs`), kernel launch (`launch.rs`), the backend
//! registrar (`registrar.rs`, `registry.rs`). The Python half, `torchnative_core`, builds the
//! rest of the `_C` name surface from generated tables and is run from `init` below.

// The library must be named `_C` (the extension module Python imports as `torch._C`); rustc
// reports the crate name under non_snake_case, which only a crate-level allow can silence.
#![allow(non_snake_case)]

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyType;
use torchnative_abi::TnDtype;

pub mod c10d;
pub mod door;
pub mod dtype;
pub mod engine;
pub mod fastpath;
pub mod formulas;
pub mod graph;
pub mod launch;
pub mod layout;
pub mod overlap;
pub mod plans;
pub mod registrar;
pub mod registry;
pub mod rng_ops;
pub mod saved;
pub mod storage;
pub mod tensor;
pub mod torch_function;

use tensor::TensorBase;

static TENSOR_CLASS: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// The class op results are created as: `torch.Tensor` once `_initExtension` ran, TensorBase
/// before that.
pub fn tensor_class(py: Python<'_>) -> PyResult<Py<PyType>> {
    match TENSOR_CLASS.get(py) {
        Some(c) => Ok(c.clone_ref(py)),
        None => Ok(py.get_type::<TensorBase>().unbind()),
    }
}

#[pyfunction]
fn _tn_set_tensor_class(py: Python<'_>, cls: Py<PyType>) -> PyResult<()> {
    if !cls.bind(py).is_subclass_of::<TensorBase>()? {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "the tensor class must be a subclass of torch._C.TensorBase",
        ));
    }
    let _ = TENSOR_CLASS.set(py, cls);
    Ok(())
}

/// The address of the registered tensor class (torch.Tensor), 0 before it is registered.
pub(crate) fn tensor_class_ptr(py: Python<'_>) -> usize {
    TENSOR_CLASS.get(py).map_or(0, |c| c.as_ptr() as usize)
}

fn dtype_of(code: i32) -> PyResult<TnDtype> {
    TnDtype::from_code(code).ok_or_else(|| {
        pyo3::exceptions::PyTypeError::new_err(format!("unsupported dtype code {code}"))
    })
}

/// A new uninitialised tensor (`empty`), on a device key by name.
#[pyfunction]
#[pyo3(signature = (sizes, dtype, device="cpu", device_index=0))]
fn _tn_empty(
    py: Python<'_>,
    sizes: Vec<i64>,
    dtype: i32,
    device: &str,
    device_index: i32,
) -> PyResult<PyObject> {
    let key = registry::intern_device(device);
    let t = TensorBase::new_empty(key, device_index, sizes, dtype_of(dtype)?)?;
    tensor::wrap(py, t)
}

/// A new tensor holding a copy of `data` (raw bytes in the dtype's layout), contiguous.
#[pyfunction]
#[pyo3(signature = (data, sizes, dtype, device="cpu", device_index=0))]
fn _tn_from_bytes(
    py: Python<'_>,
    data: &[u8],
    sizes: Vec<i64>,
    dtype: i32,
    device: &str,
    device_index: i32,
) -> PyResult<PyObject> {
    let key = registry::intern_device(device);
    let t = TensorBase::new_empty(key, device_index, sizes, dtype_of(dtype)?)?;
    let n = t.numel() as usize * t.meta.dtype.itemsize();
    if data.len() != n {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "expected {n} bytes, got {}",
            data.len()
        )));
    }
    let cpu = registry::lookup_device("cpu").unwrap();
    // SAFETY: `t` was just allocated with `n` bytes and `data` has `n` bytes (checked above).
    unsafe {
        storage::copy_between(
            t.place(),
            t.data_ptr_raw() as *mut _,
            (cpu, 0),
            data.as_ptr() as *const _,
            n,
        )
    }?;
    tensor::wrap(py, t)
}

/// The bytes of a contiguous tensor's elements, copied to the host.
#[pyfunction]
fn _tn_to_bytes<'py>(
    py: Python<'py>,
    t: PyRef<'_, TensorBase>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    if t.batched {
        return Err(tensor::batched_read_error());
    }
    if !tensor::is_contiguous(&t.meta.sizes, &t.meta.strides) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "_tn_to_bytes needs a contiguous tensor",
        ));
    }
    let n = t.numel() as usize * t.meta.dtype.itemsize();
    let cpu = registry::lookup_device("cpu").unwrap();
    pyo3::types::PyBytes::new_with(py, n, |buf| {
        // SAFETY: `buf` has `n` bytes and the contiguous `t` holds `n` bytes of elements.
        unsafe {
            storage::copy_between(
                (cpu, 0),
                buf.as_mut_ptr() as *mut _,
                t.place(),
                t.data_ptr_raw() as *const _,
                n,
            )
        }
    })
}

/// A CPU tensor over memory owned by `owner` (a numpy array): `torch.from_numpy` shares it.
#[pyfunction]
fn _tn_from_address(
    py: Python<'_>,
    address: usize,
    nbytes: usize,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    dtype: i32,
    owner: PyObject,
) -> PyResult<PyObject> {
    let cpu = registry::lookup_device("cpu").unwrap();
    let st = storage::Storage::foreign(cpu, address as *mut u8, nbytes, owner);
    let t = TensorBase {
        storage: std::sync::Arc::new(st),
        meta: tensor::Meta {
            sizes,
            strides,
            offset: 0,
            dtype: dtype_of(dtype)?,
        },
        version: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0)),
        requires_grad: false,
        wrapped_number: false,
        inference: false,
        base: None,
        batched: false,
        functional: false,
        edge: None,
    };
    tensor::wrap(py, t)
}

#[pyfunction]
fn _tn_promote_types(a: i32, b: i32) -> PyResult<i32> {
    Ok(dtype::promote_types(dtype_of(a)?, dtype_of(b)?) as i32)
}

/// `torch._C._autograd._unsafe_set_version_counter`: sets the version counter a tensor shares with
/// its views (torch.autograd._unsafe_preserve_version_counter restores it after an in-place op).
#[pyfunction]
fn _tn_set_version(t: PyRef<'_, TensorBase>, version: i64) {
    t.version
        .store(version, std::sync::atomic::Ordering::Relaxed);
}

#[pyfunction]
fn _tn_abi_version() -> u32 {
    torchnative_abi::ABI_VERSION
}

#[pymodule]
#[pyo3(name = "_C")]
fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TensorBase>()?;
    m.add_class::<rng_ops::PyCpuGenerator>()?;
    m.add_function(wrap_pyfunction!(rng_ops::_tn_rng_fill, m)?)?;
    m.add_function(wrap_pyfunction!(rng_ops::_tn_rng_multinomial, m)?)?;
    m.add_function(wrap_pyfunction!(rng_ops::_tn_rng_sample, m)?)?;
    m.add_function(wrap_pyfunction!(rng_ops::_tn_standard_gamma_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_set_tensor_class, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_empty, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_from_address, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_abi_version, m)?)?;
    m.add_function(wrap_pyfunction!(_tn_set_version, m)?)?;
    m.add_function(wrap_pyfunction!(launch::_tn_launch, m)?)?;
    m.add_function(wrap_pyfunction!(launch::_tn_has_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(registry::_tn_trace_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(launch::_tn_copy_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(registrar::_tn_make_registrar, m)?)?;
    m.add_function(wrap_pyfunction!(registrar::_tn_register_python_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(registrar::_tn_registered_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(
        registrar::_tn_register_python_allocator,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(registrar::_tn_set_known_ops, m)?)?;
    m.add_function(wrap_pyfunction!(registrar::_tn_unregister_plugin, m)?)?;
    m.add_function(wrap_pyfunction!(door::_aten_dispatch, m)?)?;
    m.add_class::<plans::Plan>()?;
    m.add_class::<graph::Node>()?;
    m.add_class::<graph::RecordPlan>()?;
    m.add_class::<saved::SavedTensor>()?;
    m.add_function(wrap_pyfunction!(saved::_tn_install_saved, m)?)?;
    m.add_function(wrap_pyfunction!(saved::_tn_saved_hooks_depth, m)?)?;
    m.add_function(wrap_pyfunction!(graph::_tn_record, m)?)?;
    m.add_function(wrap_pyfunction!(engine::_tn_execute, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::_tn_set_native_formulas, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::_tn_native_formula_runs, m)?)?;
    m.add_function(wrap_pyfunction!(graph::_tn_install_record, m)?)?;
    m.add_function(wrap_pyfunction!(graph::_tn_next_seq, m)?)?;
    m.add_function(wrap_pyfunction!(graph::_tn_nodes_recorded, m)?)?;
    m.add_class::<c10d::Mesh>()?;
    m.add_function(wrap_pyfunction!(c10d::_tn_c10d_reduce_into, m)?)?;
    m.add_function(wrap_pyfunction!(plans::_tn_install_plans, m)?)?;
    m.add_function(wrap_pyfunction!(plans::_tn_call_planned, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_call_impl, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_below_autograd, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_below_autograd_no_grad, m)?)?;
    m.add_function(wrap_pyfunction!(door::is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(door::_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(door::is_inference_mode_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(door::_set_inference_mode, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_install_door, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_set_vmap_handler, m)?)?;
    m.add_function(wrap_pyfunction!(fastpath::_tn_set_fast_paths, m)?)?;
    m.add_function(wrap_pyfunction!(overlap::_tn_set_written_arguments, m)?)?;
    m.add_function(wrap_pyfunction!(fastpath::_tn_wrapped_number, m)?)?;
    m.add_function(wrap_pyfunction!(fastpath::_tn_fast_paths_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_count_ops, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_op_counts, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_tn_tf_mode_active, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_tn_tf_state, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_tn_tf_set_state, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_tn_tf_set_refs, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_tn_tf_set_parameter_class, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_push_on_torch_function_stack, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_pop_torch_function_stack, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_len_torch_function_stack, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_get_function_stack_at, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_has_torch_function, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_has_torch_function_unary, m)?)?;
    m.add_function(wrap_pyfunction!(torch_function::_has_torch_function_variadic, m)?)?;
    m.add_function(wrap_pyfunction!(door::_push_on_torch_dispatch_stack, m)?)?;
    m.add_function(wrap_pyfunction!(door::_pop_torch_dispatch_stack, m)?)?;
    m.add_function(wrap_pyfunction!(door::_len_torch_dispatch_stack, m)?)?;
    m.add_function(wrap_pyfunction!(door::_get_dispatch_stack_at, m)?)?;
    m.add_function(wrap_pyfunction!(door::_set_dispatch_mode, m)?)?;
    m.add_function(wrap_pyfunction!(door::_get_dispatch_mode, m)?)?;
    m.add_function(wrap_pyfunction!(door::_unset_dispatch_mode, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_enable_python_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_set_pre_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_install_functionalize, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_set_record_plan, m)?)?;
    m.add_function(wrap_pyfunction!(door::_tn_set_functionalize_tls, m)?)?;
    m.add_function(wrap_pyfunction!(layout::_tn_elementwise_strides, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::_tn_storage_expired, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::_tn_storage_free_weak_ref, m)?)?;
    // The Python half builds the rest of the surface into this module's namespace.
    let py = m.py();
    // Visible as torch._C while the Python half builds the surface (single-phase init only
    // inserts the module into sys.modules after this function returns).
    py.import("sys")?
        .getattr("modules")?
        .set_item("torch._C", m)?;
    py.import("torchnative_core.surface")?
        .call_method1("install", (m,))?;
    Ok(())
}

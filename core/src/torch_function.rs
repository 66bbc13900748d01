//! `__torch_function__` state and probes of `torch._C`: the TorchFunctionMode stack, the
//! enable/disable state and `_has_torch_function*` (upstream: torch/csrc/utils/
//! python_arg_parser.cpp `check_has_torch_function`, torch/csrc/utils/disable_torch_function.cpp).
//!
//! Native because every `torch.nn.functional` call and many `Tensor` dunders probe their
//! arguments first: in Python the probe cost about 1 us a call (upstream's: 30 ns). The state is
//! per thread, as upstream's `PythonTorchFunctionTLS`.

use std::cell::{Cell, RefCell};

use pyo3::exceptions::{PyAttributeError, PyRuntimeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyTuple, PyType};

use crate::tensor::TensorBase;

thread_local! {
    /// 0 enabled, 1 subclasses disabled, 2 all disabled (upstream's TorchFunctionDisabledState).
    static STATE: Cell<u8> = const { Cell::new(0) };
    /// The TorchFunctionMode stack, innermost last.
    static STACK: RefCell<Vec<Py<PyAny>>> = const { RefCell::new(Vec::new()) };
}

/// `torch._C._disabled_torch_function_impl` (defined in Python, registered once).
static DISABLED_IMPL: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
/// `torch.nn.Parameter`: treated as a plain tensor, as upstream's `THPVariable_CheckTypeExact`.
static PARAMETER: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn stack_len() -> usize {
    STACK.with(|s| s.borrow().len())
}

/// Whether a TorchFunctionMode sees calls now: a mode is pushed and not everything is disabled.
#[pyfunction]
pub fn _tn_tf_mode_active() -> bool {
    STATE.with(Cell::get) != 2 && stack_len() > 0
}

#[pyfunction]
pub fn _tn_tf_state() -> u8 {
    STATE.with(Cell::get)
}

#[pyfunction]
pub fn _tn_tf_set_state(state: u8) -> PyResult<()> {
    if state > 2 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "unknown torch function state {state}"
        )));
    }
    STATE.with(|s| s.set(state));
    Ok(())
}

#[pyfunction]
pub fn _tn_tf_set_refs(py: Python<'_>, disabled_impl: Py<PyAny>) {
    let _ = DISABLED_IMPL.set(py, disabled_impl);
}

#[pyfunction]
pub fn _tn_tf_set_parameter_class(py: Python<'_>, cls: Py<PyType>) {
    let _ = PARAMETER.set(py, cls);
}

#[pyfunction]
pub fn _push_on_torch_function_stack(mode: Py<PyAny>) {
    STACK.with(|s| s.borrow_mut().push(mode));
}

#[pyfunction]
pub fn _pop_torch_function_stack() -> PyResult<Py<PyAny>> {
    STACK
        .with(|s| s.borrow_mut().pop())
        .ok_or_else(|| PyRuntimeError::new_err("trying to pop from empty mode stack"))
}

#[pyfunction]
pub fn _len_torch_function_stack() -> usize {
    stack_len()
}

/// The mode at `i`, outermost first. Upstream checks only the upper bound and crashes on a
/// negative index; ours refuses it with the same error.
#[pyfunction]
pub fn _get_function_stack_at(py: Python<'_>, i: i64) -> PyResult<Py<PyAny>> {
    STACK.with(|s| {
        let s = s.borrow();
        match usize::try_from(i).ok().and_then(|j| s.get(j)) {
            Some(m) => Ok(m.clone_ref(py)),
            None => Err(PyRuntimeError::new_err(
                "Tried to get stack at idx that's too big",
            )),
        }
    })
}

/// `getattr(obj, name, None)`: only an AttributeError means absent.
fn attr_opt<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, pyo3::types::PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr(name) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyAttributeError>(obj.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether `a`'s type overrides `__torch_function__`: not torch.Tensor, TensorBase or Parameter
/// exactly, and a `__torch_function__` other than the disabled one. A subclass that only inherits
/// torch.Tensor's default counts as overriding, as upstream (its default re-wraps results).
fn overridden(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<bool> {
    let t = a.get_type();
    let tp = t.as_ptr() as usize;
    if tp == crate::tensor_class_ptr(py) || t.is(py.get_type::<TensorBase>()) {
        return Ok(false);
    }
    // Plain Python values (upstream's is_basic_python_type): no lookup, no AttributeError.
    if a.is_none()
        || t.is(py.get_type::<pyo3::types::PyInt>())
        || t.is(py.get_type::<pyo3::types::PyBool>())
        || t.is(py.get_type::<pyo3::types::PyFloat>())
        || t.is(py.get_type::<pyo3::types::PyString>())
        || t.is(py.get_type::<PyTuple>())
        || t.is(py.get_type::<pyo3::types::PyList>())
        || t.is(py.get_type::<pyo3::types::PyDict>())
    {
        return Ok(false);
    }
    if PARAMETER.get(py).is_some_and(|p| t.is(p.bind(py))) {
        return Ok(false);
    }
    let Some(tf) = attr_opt(t.as_any(), intern!(py, "__torch_function__"))? else {
        return Ok(false);
    };
    if tf.is_none() {
        return Ok(false);
    }
    let f = attr_opt(&tf, intern!(py, "__func__"))?.unwrap_or(tf);
    if DISABLED_IMPL.get(py).is_some_and(|d| f.is(d.bind(py))) {
        return Ok(false);
    }
    if crate::tensor_class_ptr(py) != 0 {
        let base = crate::tensor_class(py)?;
        let base_tf = base.bind(py).getattr(intern!(py, "__torch_function__"))?;
        let base_f = attr_opt(&base_tf, intern!(py, "__func__"))?;
        if base_f.is_some_and(|b| f.is(&b)) {
            // torch.Tensor's default on a non-tensor does nothing for it
            return Ok(a.is_instance_of::<TensorBase>());
        }
    }
    Ok(true)
}

fn any_overridden<'py>(
    py: Python<'py>,
    args: impl Iterator<Item = Bound<'py, PyAny>>,
) -> PyResult<bool> {
    // upstream's order: a mode sees everything unless all is disabled; else only while enabled
    match STATE.with(Cell::get) {
        2 => return Ok(false),
        _ if stack_len() > 0 => return Ok(true),
        0 => {}
        _ => return Ok(false),
    }
    for a in args {
        if overridden(py, &a)? {
            return Ok(true);
        }
    }
    Ok(false)
}

#[pyfunction]
pub fn _has_torch_function(py: Python<'_>, args: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(t) = args.downcast::<PyTuple>() {
        return any_overridden(py, t.iter());
    }
    let items: Vec<Bound<'_, PyAny>> = args.try_iter()?.collect::<PyResult<_>>()?;
    any_overridden(py, items.into_iter())
}

#[pyfunction]
pub fn _has_torch_function_unary(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<bool> {
    any_overridden(py, std::iter::once(a.clone()))
}

#[pyfunction]
#[pyo3(signature = (*args))]
pub fn _has_torch_function_variadic(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<bool> {
    any_overridden(py, args.iter())
}

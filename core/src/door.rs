//! The single door: every ATen operator call enters through `_aten_dispatch`.
//!
//! In order: autograd (when grad mode is on and an input requires grad, the autograd handler
//! records the graph around the rest of the call, as upstream's Autograd key sits above the
//! Python key), functionalization (when an argument is a functional wrapper), dispatch modes (TorchDispatchMode stack), then the operator's implementation
//! (its meta step plus a kernel launch, or a composition of other operators through this door),
//! or a refusal by name. Implementations are registered per overload name by the core's Python layer
//! (`torchnative_core.ops`); for the hottest ones a native meta step (`fastpath.rs`) runs instead
//! when the arguments are ones it covers exactly.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::launch::refuse;
use crate::registry;
use crate::tensor::TensorBase;

struct DoorState {
    impls: Py<PyDict>,
    mode_handler: Option<Py<PyAny>>,
    autograd_handler: Option<Py<PyAny>>,
}

static STATE: GILOnceCell<DoorState> = GILOnceCell::new();

thread_local! {
    /// Grad mode (`torch.is_grad_enabled()`): thread-local, as upstream's GradMode.
    static GRAD_ENABLED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Inference mode: tensors made while it is on are inference tensors.
    static INFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The vmap step (functorch/dispatch.py `handle`), set while a vmap level is active: it runs
    /// before autograd, as upstream's FuncTorchDynamicLayerFrontMode does, and unwraps batched
    /// tensors so that autograd records on the physical (batch-carrying) tensors.
    static VMAP: std::cell::RefCell<Option<Py<PyAny>>> = const { std::cell::RefCell::new(None) };
    /// Whether `VMAP` holds a step (read on every call: a Cell is cheaper than the RefCell).
    static VMAP_ON: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether the PreDispatch key is in the thread's include set (make_fx/export's pre-dispatch
    /// tracing): the door then offers every call to the pre-dispatch step first, as upstream's
    /// PreDispatch key sits above everything else, autograd and functorch included.
    static PRE_DISPATCH_ON: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The TorchDispatchMode stack (upstream keeps it in C++ thread-local state too).
    static MODES: std::cell::RefCell<Vec<Py<PyAny>>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The infra modes by `_TorchDispatchModeKey` (FAKE, PROXY, FUNCTIONAL): below every user
    /// mode, FUNCTIONAL above PROXY above FAKE, as upstream's TorchDispatchModeTLS orders them.
    static INFRA: std::cell::RefCell<[Option<Py<PyAny>>; 3]> = const { std::cell::RefCell::new([None, None, None]) };
    /// Whether either holds a mode (read on every call; kept in step by `modes_changed`).
    static ANY_MODE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether the Functionalize key is in the thread's include set (`torch._enable_functionalization`):
    /// every call then takes the functionalize step, so that factories' results are wrapped too.
    static FUNCTIONALIZE_TLS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Operators the autograd step handles natively: overload name -> record.py's native plan
/// (`_TnRecordPlan`), for operators with a formula called positionally, not in place and not
/// `out=`, or 1 (2: not differentiable) for operators without a formula that are neither `out=`
/// nor mutating. A call found here goes to `graph::_tn_record` or `graph::run_composed` without
/// record.py's frames; record.py keeps the table (it drops an entry when a formula is
/// registered).
static RECORD_PLANS: GILOnceCell<Py<PyDict>> = GILOnceCell::new();

fn record_plans(py: Python<'_>) -> &Bound<'_, PyDict> {
    RECORD_PLANS
        .get_or_init(py, || PyDict::new(py).unbind())
        .bind(py)
}

/// Sets (or with None removes) the native record plan of `op`.
#[pyfunction]
#[pyo3(signature = (op, plan=None))]
pub fn _tn_set_record_plan(
    py: Python<'_>,
    op: &Bound<'_, PyString>,
    plan: Option<Py<PyAny>>,
) -> PyResult<()> {
    match plan {
        Some(p) => record_plans(py).set_item(op, p),
        None => {
            let d = record_plans(py);
            if d.contains(op)? {
                d.del_item(op)?;
            }
            Ok(())
        }
    }
}

/// The functionalize step (functionalize/step.py `handle`), installed once.
static FUNCTIONALIZE: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
/// Whether a functional wrapper was ever made: until then the door checks no argument for one.
static FUNCTIONAL_LIVE: AtomicBool = AtomicBool::new(false);

pub fn functional_exists() {
    FUNCTIONAL_LIVE.store(true, Ordering::Relaxed);
}

/// Installs the functionalize step (once).
#[pyfunction]
pub fn _tn_install_functionalize(py: Python<'_>, handler: Py<PyAny>) {
    let _ = FUNCTIONALIZE.set(py, handler);
}

/// Sets whether the Functionalize key is in this thread's include set; returns the old value.
#[pyfunction]
pub fn _tn_set_functionalize_tls(on: bool) -> bool {
    if on {
        functional_exists();
    }
    FUNCTIONALIZE_TLS.with(|c| c.replace(on))
}

/// Whether a tensor argument (top level, or in a list or tuple) is a functional wrapper.
fn any_functional_arg(args: &Bound<'_, PyTuple>) -> bool {
    let hit = |o: &Bound<'_, PyAny>| {
        o.downcast::<TensorBase>()
            .map(|t| t.borrow().functional)
            .unwrap_or(false)
    };
    args.iter().any(|a| {
        if let Ok(l) = a.downcast::<PyList>() {
            l.iter().any(|x| hit(&x))
        } else if let Ok(t) = a.downcast::<PyTuple>() {
            t.iter().any(|x| hit(&x))
        } else {
            hit(&a)
        }
    })
}

/// The tensor classes that override `__torch_dispatch__` (FakeTensor, NestedTensor, users'
/// wrappers; registered as they are defined): a call whose tensor arguments include an instance
/// of one takes the Python-key step. `import torch` alone defines several, so the check is per
/// argument type, not a global switch.
static DISPATCH_TYPES: std::sync::RwLock<Vec<usize>> = std::sync::RwLock::new(Vec::new());
/// The pre-dispatch step (ops/door/modes.py `pre_dispatch`), installed once.
static PRE_DISPATCH: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

static CALLS: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);
/// Whether inference mode was ever on (so an inference tensor may exist): until then the door
/// skips the in-place check.
static ANY_INFERENCE: AtomicBool = AtomicBool::new(false);
/// Whether `CALLS` counts (read on every call without taking the lock).
static COUNTING: AtomicBool = AtomicBool::new(false);

fn state(py: Python<'_>) -> &DoorState {
    STATE.get_or_init(py, || DoorState {
        impls: PyDict::new(py).unbind(),
        mode_handler: None,
        autograd_handler: None,
    })
}

/// Installs the implementation table (op overload name -> callable), the mode handler and the
/// autograd handler.
#[pyfunction]
#[pyo3(signature = (impls, mode_handler, autograd_handler=None))]
pub fn _tn_install_door(
    py: Python<'_>,
    impls: Py<PyDict>,
    mode_handler: Py<PyAny>,
    autograd_handler: Option<Py<PyAny>>,
) -> PyResult<()> {
    let _ = STATE.set(
        py,
        DoorState {
            impls,
            mode_handler: Some(mode_handler),
            autograd_handler,
        },
    );
    Ok(())
}

/// Installs (or, with None, removes) the vmap step of the door.
#[pyfunction]
#[pyo3(signature = (handler=None))]
pub fn _tn_set_vmap_handler(handler: Option<Py<PyAny>>) {
    VMAP_ON.with(|c| c.set(handler.is_some()));
    VMAP.with(|v| *v.borrow_mut() = handler);
}

#[pyfunction]
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|g| g.get())
}

#[pyfunction]
pub fn _set_grad_enabled(enabled: bool) {
    GRAD_ENABLED.with(|g| g.set(enabled));
}

#[pyfunction]
pub fn is_inference_mode_enabled() -> bool {
    INFERENCE.with(|g| g.get())
}

#[pyfunction]
pub fn _set_inference_mode(enabled: bool) {
    if enabled {
        ANY_INFERENCE.store(true, Ordering::Relaxed);
    }
    INFERENCE.with(|g| g.set(enabled));
}

/// Marks the tensors of an operator's result as inference tensors.
fn mark_inference(py: Python<'_>, out: &PyObject) {
    ANY_INFERENCE.store(true, Ordering::Relaxed);
    let b = out.bind(py);
    if let Ok(t) = b.downcast::<TensorBase>() {
        t.borrow_mut().inference = true;
    } else if let Ok(tup) = b.downcast::<PyTuple>() {
        for x in tup.iter() {
            if let Ok(t) = x.downcast::<TensorBase>() {
                t.borrow_mut().inference = true;
            }
        }
    } else if let Ok(l) = b.downcast::<PyList>() {
        for x in l.iter() {
            if let Ok(t) = x.downcast::<TensorBase>() {
                t.borrow_mut().inference = true;
            }
        }
    }
}

/// Whether any tensor argument (or tensor in a list argument) requires grad.
fn any_requires_grad(args: &Bound<'_, PyTuple>) -> bool {
    for a in args.iter() {
        if let Ok(t) = a.downcast::<TensorBase>() {
            if t.borrow().requires_grad {
                return true;
            }
        } else if let Ok(l) = a.downcast::<PyList>() {
            for x in l.iter() {
                if let Ok(t) = x.downcast::<TensorBase>() {
                    if t.borrow().requires_grad {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// Turns per-op call counting on (`_tn_op_counts()` reads it); used by the coverage report.
#[pyfunction]
pub fn _tn_count_ops(on: bool) {
    *CALLS.lock().unwrap() = if on { Some(HashMap::new()) } else { None };
    COUNTING.store(on, Ordering::Relaxed);
}

#[pyfunction]
pub fn _tn_op_counts() -> HashMap<String, u64> {
    CALLS.lock().unwrap().clone().unwrap_or_default()
}

fn first_device(args: &Bound<'_, PyTuple>) -> String {
    for a in args.iter() {
        if let Ok(t) = a.downcast::<TensorBase>() {
            return registry::device_name(t.borrow().device());
        }
        if let Ok(l) = a.downcast::<PyList>() {
            for x in l.iter() {
                if let Ok(t) = x.downcast::<TensorBase>() {
                    return registry::device_name(t.borrow().device());
                }
            }
        }
    }
    "cpu".into()
}

/// Upstream refuses an in-place update of an inference tensor outside inference mode.
fn check_inference_inplace(op: &Bound<'_, PyString>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
    if let Some(first) = args.iter().next() {
        if let Ok(t) = first.downcast::<TensorBase>() {
            if t.borrow().inference && !INFERENCE.with(|g| g.get()) && mutates_self(op.to_str()?) {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a \
                     clone to get a normal tensor before doing inplace update.See \
                     https://github.com/pytorch/rfcs/pull/17 for more details.",
                ));
            }
        }
    }
    Ok(())
}

/// Whether an overload writes its first argument in place, by upstream's naming (`add_.Tensor`,
/// `copy_`; not the dunder `__and__`).
fn mutates_self(op: &str) -> bool {
    let base = op.split('.').next().unwrap_or(op);
    base.ends_with('_') && !base.ends_with("__")
}

/// `_aten_dispatch(op, *args, **kwargs)`: `op` is the overload name as upstream spells it in a
/// schema, `"add.Tensor"` or `"mm"`; arguments are already bound to the schema. `op` stays a
/// Python string: the callers pass constants whose hash is cached, so finding the
/// implementation costs no string building.
#[pyfunction]
#[pyo3(signature = (op, *args, **kwargs))]
pub fn _aten_dispatch(
    py: Python<'_>,
    op: &Bound<'_, PyString>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    if COUNTING.load(Ordering::Relaxed) {
        if let Some(c) = CALLS.lock().unwrap().as_mut() {
            *c.entry(op.to_str()?.to_string()).or_default() += 1;
        }
    }
    if ANY_INFERENCE.load(Ordering::Relaxed) {
        check_inference_inplace(op, args)?;
    }
    if PRE_DISPATCH_ON.with(|c| c.get()) {
        if let Some(h) = PRE_DISPATCH.get(py) {
            let out = h.call(py, (op, args.clone()), kwargs)?;
            if !out.is(py.NotImplemented()) {
                return Ok(out);
            }
        }
    }
    if VMAP_ON.with(|c| c.get()) {
        if let Some(h) = VMAP.with(|v| v.borrow().as_ref().map(|h| h.clone_ref(py))) {
            let out = h.call(py, (op, args.clone()), kwargs)?;
            if !out.is(py.NotImplemented()) {
                return Ok(out);
            }
        }
    }
    let st = state(py);
    if let Some(h) = &st.autograd_handler {
        if GRAD_ENABLED.with(|g| g.get()) && any_requires_grad(args) {
            if kwargs.is_none_or(|k| k.is_empty()) {
                if let Some(plan) = record_plans(py).get_item(op)? {
                    // a RecordPlan, or an int for an operator whose parts record themselves
                    // (downcast first: a failed int extraction builds a TypeError's message)
                    if let Ok(plan) = plan.downcast::<crate::graph::RecordPlan>() {
                        return crate::graph::_tn_record(py, plan, op, args);
                    }
                    let kind = plan.extract::<i64>()?;
                    return crate::graph::run_composed(py, kind == 2, op, args);
                }
            }
            return h.call(py, (op, args.clone()), kwargs);
        }
    }
    let out = _tn_below_autograd(py, op, args, kwargs)?;
    if INFERENCE.with(|g| g.get()) {
        mark_inference(py, &out);
    }
    Ok(out)
}

/// What runs below the autograd step: functionalization (upstream's Functionalize key sits
/// between Autograd and Python), dispatch modes, then the implementation.
#[pyfunction]
#[pyo3(signature = (op, *args, **kwargs))]
pub fn _tn_below_autograd(
    py: Python<'_>,
    op: &Bound<'_, PyString>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    if FUNCTIONAL_LIVE.load(Ordering::Relaxed)
        && (FUNCTIONALIZE_TLS.with(|c| c.get()) || any_functional_arg(args))
    {
        if let Some(h) = FUNCTIONALIZE.get(py) {
            return h.call(py, (op, args.clone()), kwargs);
        }
    }
    let st = state(py);
    let has_mode = ANY_MODE.with(|c| c.get()) || any_dispatching_arg(args);
    if has_mode {
        if let Some(h) = &st.mode_handler {
            return h.call(py, (op, args.clone()), kwargs);
        }
    }
    _tn_call_impl(py, op, args, kwargs)
}

/// `_tn_below_autograd` with grad mode off, restored afterwards whatever happens: how the
/// autograd step runs an operator it records one node for (one call instead of three).
#[pyfunction]
#[pyo3(signature = (op, *args, **kwargs))]
pub fn _tn_below_autograd_no_grad(
    py: Python<'_>,
    op: &Bound<'_, PyString>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    let prev = GRAD_ENABLED.with(|g| g.replace(false));
    let out = _tn_below_autograd(py, op, args, kwargs);
    GRAD_ENABLED.with(|g| g.set(prev));
    out
}

/// The implementation step alone (no modes): what a mode calls to run the real operator.
#[pyfunction]
#[pyo3(signature = (op, *args, **kwargs))]
pub fn _tn_call_impl(
    py: Python<'_>,
    op: &Bound<'_, PyString>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    let st = state(py);
    let name = op.to_str()?;
    crate::overlap::check(py, name, args)?;
    match st.impls.bind(py).get_item(op)? {
        Some(f) => {
            if let Some(out) = crate::fastpath::try_call(py, name, &f, args, kwargs)? {
                return Ok(out);
            }
            f.call(args, kwargs)
                .map(|o| o.unbind())
                .map_err(|e| python_accident_as_runtime_error(py, name, e))
        }
        None => {
            // no implementation in the core: upstream's own Python decomposition, when
            // torch._decomp has one (installed into the table so the lookup runs once)
            let found = py
                .import("torchnative_core.ops.door.decompositions")?
                .call_method1("lookup", (op,))?;
            if !found.is_none() {
                st.impls.bind(py).set_item(op, &found)?;
                return found
                    .call(args, kwargs)
                    .map(|o| o.unbind())
                    .map_err(|e| python_accident_as_runtime_error(py, name, e));
            }
            Err(refuse(
                &crate::launch::display_name(&format!("aten::{}", op.to_str()?)),
                &first_device(args),
            ))
        }
    }
}

/// An operator implemented in Python can fail on arguments it did not expect with a Python
/// builtin's error (`list index out of range`, `not enough values to unpack`, a division by
/// zero, an attribute of `None`); upstream's C++ operator refuses such arguments with a
/// RuntimeError from its checks. Those accidents leave the door as a RuntimeError naming the
/// operator, the original error chained as its cause; every error an implementation raises on
/// purpose (upstream's own types and messages) passes unchanged. An IndexError passes too: in
/// our implementations it comes from indexing a shape with a dimension upstream's checks call out
/// of range, which upstream raises as IndexError as well (measured with tools/fuzz_ops.py).
fn python_accident_as_runtime_error(py: Python<'_>, op: &str, e: PyErr) -> PyErr {
    use pyo3::exceptions::*;
    let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| msg.starts_with(p));
    let ty = e.get_type(py);
    let exact = |t: &Bound<'_, pyo3::types::PyType>| ty.is(t);
    let accident = exact(&py.get_type::<PyZeroDivisionError>())
        || exact(&py.get_type::<PyAttributeError>())
        || exact(&py.get_type::<PyKeyError>())
        || (exact(&py.get_type::<PyOverflowError>())
            && starts(&[
                "Python int too large",
                "cannot convert float",
                "int too large",
                "math range error",
            ]))
        || (exact(&py.get_type::<PyValueError>())
            && starts(&[
                "not enough values to unpack",
                "too many values to unpack",
                "cannot convert float NaN to integer",
                "math domain error",
                "range() arg 3 must not be zero",
                "max() arg is an empty",
                "min() arg is an empty",
                "max() iterable argument is empty",
                "min() iterable argument is empty",
            ]))
        || (exact(&py.get_type::<PyTypeError>())
            && (msg.starts_with("'NoneType' object")
                || msg.starts_with("object of type 'NoneType'")
                || msg.starts_with("unsupported operand type")
                || msg.contains("got multiple values for argument")
                || msg.starts_with("'int' object is not")
                || msg.starts_with("'float' object is not")
                || msg.starts_with("'bool' object is not")));
    if !accident {
        return e;
    }
    let err = PyRuntimeError::new_err(format!(
        "aten::{op}: invalid arguments for this operator ({}: {msg})",
        ty.name().map(|n| n.to_string()).unwrap_or_default()
    ));
    err.set_cause(py, Some(e));
    err
}

// --- TorchDispatchMode stack (upstream names) --------------------------------------------------

/// A mode with a `_mode_key` (FakeTensorMode, ProxyTorchDispatchMode, FunctionalTensorMode)
/// takes its infra slot, as upstream's binding does; any other goes on the user stack.
#[pyfunction]
pub fn _push_on_torch_dispatch_stack(mode: Bound<'_, PyAny>) -> PyResult<()> {
    if mode.getattr("_mode_key").is_ok_and(|k| !k.is_none()) {
        return _set_dispatch_mode(mode);
    }
    MODES.with(|m| m.borrow_mut().push(mode.unbind()));
    modes_changed();
    Ok(())
}

fn modes_changed() {
    let any = _len_torch_dispatch_stack() > 0;
    ANY_MODE.with(|c| c.set(any));
}

/// The infra-mode slot of a `_TorchDispatchModeKey` (an IntEnum: FAKE 0, PROXY 1, FUNCTIONAL 2).
fn infra_slot(key: &Bound<'_, PyAny>) -> PyResult<usize> {
    let k: usize = key.extract()?;
    if k > 2 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "unknown _TorchDispatchModeKey {k}"
        )));
    }
    Ok(k)
}

#[pyfunction]
#[pyo3(signature = (mode_key=None))]
pub fn _pop_torch_dispatch_stack(
    py: Python<'_>,
    mode_key: Option<Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let empty = || {
        pyo3::exceptions::PyAssertionError::new_err(
            "trying to pop from an empty dispatch mode stack",
        )
    };
    let popped = if let Some(key) = mode_key.filter(|k| !k.is_none()) {
        let slot = infra_slot(&key)?;
        INFRA.with(|m| m.borrow_mut()[slot].take())
    } else if let Some(mode) = MODES.with(|m| m.borrow_mut().pop()) {
        Some(mode.clone_ref(py))
    } else {
        INFRA.with(|m| m.borrow_mut().iter_mut().rev().find_map(|s| s.take()))
    };
    modes_changed();
    popped.ok_or_else(empty)
}

#[pyfunction]
pub fn _len_torch_dispatch_stack() -> usize {
    MODES.with(|m| m.borrow().len()) + INFRA.with(|m| m.borrow().iter().flatten().count())
}

/// Index 0 is the bottom: the infra modes (FAKE first), then the user modes in push order.
#[pyfunction]
pub fn _get_dispatch_stack_at(py: Python<'_>, idx: usize) -> PyResult<PyObject> {
    let infra: Vec<PyObject> = INFRA.with(|m| {
        m.borrow()
            .iter()
            .flatten()
            .map(|x| x.clone_ref(py))
            .collect()
    });
    if idx < infra.len() {
        return Ok(infra[idx].clone_ref(py));
    }
    MODES.with(|m| {
        m.borrow()
            .get(idx - infra.len())
            .map(|x| x.clone_ref(py))
            .ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err("dispatch stack index out of range")
            })
    })
}

/// `_set_dispatch_mode` (store, by the mode's `_mode_key`), `_get_dispatch_mode` and
/// `_unset_dispatch_mode`: upstream's infra-mode slots.
#[pyfunction]
pub fn _set_dispatch_mode(mode: Bound<'_, PyAny>) -> PyResult<()> {
    let slot = infra_slot(&mode.getattr("_mode_key")?)?;
    INFRA.with(|m| m.borrow_mut()[slot] = Some(mode.unbind()));
    modes_changed();
    Ok(())
}

#[pyfunction]
pub fn _get_dispatch_mode(py: Python<'_>, key: Bound<'_, PyAny>) -> PyResult<Option<PyObject>> {
    let slot = infra_slot(&key)?;
    Ok(INFRA.with(|m| m.borrow()[slot].as_ref().map(|x| x.clone_ref(py))))
}

#[pyfunction]
pub fn _unset_dispatch_mode(key: Bound<'_, PyAny>) -> PyResult<Option<PyObject>> {
    let slot = infra_slot(&key)?;
    let prior = INFRA.with(|m| m.borrow_mut()[slot].take());
    modes_changed();
    Ok(prior)
}

/// Installs the pre-dispatch step (once) and sets whether this thread has PreDispatch included.
#[pyfunction]
#[pyo3(signature = (on, handler=None))]
pub fn _tn_set_pre_dispatch(py: Python<'_>, on: bool, handler: Option<Py<PyAny>>) {
    if let Some(h) = handler {
        let _ = PRE_DISPATCH.set(py, h);
    }
    PRE_DISPATCH_ON.with(|c| c.set(on));
}

/// Registers a tensor class overriding `__torch_dispatch__` (from TensorBase.__init_subclass__).
#[pyfunction]
pub fn _tn_enable_python_dispatch(cls: &Bound<'_, pyo3::types::PyType>) {
    let mut types = DISPATCH_TYPES.write().unwrap_or_else(|e| e.into_inner());
    let ptr = cls.as_ptr() as usize;
    if !types.contains(&ptr) {
        types.push(ptr);
    }
}

/// Whether a tensor argument (top level, or in a list or tuple) is of a registered class.
fn any_dispatching_arg(args: &Bound<'_, PyTuple>) -> bool {
    // torch.Tensor itself, the common case, is answered without the lock
    let plain = crate::tensor_class_ptr(args.py());
    let hit = |o: &Bound<'_, PyAny>| {
        let ty = o.get_type().as_ptr() as usize;
        ty != plain
            && DISPATCH_TYPES
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&ty)
    };
    args.iter().any(|a| {
        if a.is_instance_of::<TensorBase>() {
            hit(&a)
        } else if let Ok(l) = a.downcast::<PyList>() {
            l.iter()
                .any(|x| x.is_instance_of::<TensorBase>() && hit(&x))
        } else if let Ok(t) = a.downcast::<PyTuple>() {
            t.iter()
                .any(|x| x.is_instance_of::<TensorBase>() && hit(&x))
        } else {
            false
        }
    })
}

//! Tensors saved for backward (upstream's `SavedVariable`): the tensor, or what a saved-tensor
//! pack hook made of it, with the version it had when saved.
//!
//! `autograd/graph.py`'s `SavedTensor` derives from `_TnSavedTensor` and keeps the behaviour
//! (`unpack`, `register_hooks`); the fields and the constructor are here because a training
//! step saves a tensor for most of the operators it records, and building the object in Python
//! cost a frame and eight attribute stores each time. With saved-tensor hooks on the thread's
//! stack the constructor hands the tensor to graph.py's `_pack` (which runs the pack hook).

use std::cell::Cell;

use pyo3::exceptions::PyRuntimeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyTuple;
use pyo3::{intern, PyTraverseError};

use crate::tensor::TensorBase;

pub const INFERENCE_SAVED: &str = "Inference tensors cannot be saved for backward. Please do not use Tensors created \
     in inference mode in computation tracked by autograd. To work around this, you can make a clone to get a \
     normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.";

thread_local! {
    /// Depth of this thread's saved-tensor hook stack, kept by graph.py's push and pop: while it is
    /// zero no pack hook can apply and the constructor never calls into Python.
    static HOOK_DEPTH: Cell<i64> = const { Cell::new(0) };
}

/// graph.py's `_pack(t) -> (packed, unpack_hook) or None`, installed once.
static PACK: GILOnceCell<PyObject> = GILOnceCell::new();

#[pyfunction]
pub fn _tn_install_saved(py: Python<'_>, pack: PyObject) {
    let _ = PACK.set(py, pack);
}

/// Adds `delta` to this thread's hook-stack depth (push: 1, pop: -1).
#[pyfunction]
pub fn _tn_saved_hooks_depth(delta: i64) -> i64 {
    HOOK_DEPTH.with(|d| {
        d.set((d.get() + delta).max(0));
        d.get()
    })
}

#[pyclass(module = "torch._C", name = "_TnSavedTensor", subclass)]
pub struct SavedTensor {
    #[pyo3(get, set)]
    data: Option<PyObject>,
    #[pyo3(get, set)]
    version: i64,
    #[pyo3(get, set)]
    is_output: bool,
    #[pyo3(get, set)]
    output_nr: i64,
    #[pyo3(get, set)]
    was_leaf: bool,
    #[pyo3(get, set)]
    requires_grad: bool,
    #[pyo3(get, set)]
    packed: Option<PyObject>,
    #[pyo3(get, set)]
    unpack_hook: Option<PyObject>,
}

impl SavedTensor {
    /// The saved tensor held as it is: no unpack hook, not released.
    pub fn plain_data(&self) -> Option<&PyObject> {
        if self.unpack_hook.is_some() {
            return None;
        }
        self.data.as_ref()
    }

    pub fn version(&self) -> i64 {
        self.version
    }

    pub fn has_unpack_hook(&self) -> bool {
        self.unpack_hook.is_some()
    }

    pub fn release(&mut self) {
        self.data = None;
        self.packed = None;
    }
}

/// Whether `t` has no history: none recorded, or an edge to no node.
fn is_leaf(t: &TensorBase) -> bool {
    !matches!(t.edge, Some((Some(_), _)))
}

#[pymethods]
impl SavedTensor {
    /// An output of the node itself is kept as a detached alias (no reference cycle through
    /// grad_fn) and gets the node back as grad_fn when unpacked.
    #[new]
    #[pyo3(signature = (t, is_output=false, output_nr=0))]
    fn new(
        py: Python<'_>,
        t: &Bound<'_, TensorBase>,
        is_output: bool,
        output_nr: i64,
    ) -> PyResult<Self> {
        let (inference, requires_grad, version, was_leaf) = {
            let r = t.borrow();
            (
                r.inference,
                r.requires_grad,
                r.version.load(std::sync::atomic::Ordering::Relaxed),
                is_leaf(&r),
            )
        };
        if inference {
            return Err(PyRuntimeError::new_err(INFERENCE_SAVED));
        }
        let mut s = SavedTensor {
            data: None,
            version,
            is_output,
            output_nr,
            was_leaf,
            requires_grad,
            packed: None,
            unpack_hook: None,
        };
        if HOOK_DEPTH.with(|d| d.get()) > 0 {
            if let Some(pack) = PACK.get(py) {
                let r = pack.call1(py, (t,))?.into_bound(py);
                if !r.is_none() {
                    let r = r.downcast::<PyTuple>()?;
                    s.packed = Some(r.get_item(0)?.unbind());
                    s.unpack_hook = Some(r.get_item(1)?.unbind());
                    return Ok(s);
                }
            }
        }
        s.data = Some(if is_output {
            t.call_method0(intern!(py, "_tn_alias"))?.unbind()
        } else {
            t.clone().into_any().unbind()
        });
        Ok(s)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for x in [&self.data, &self.packed, &self.unpack_hook]
            .into_iter()
            .flatten()
        {
            visit.call(x)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.data = None;
        self.packed = None;
        self.unpack_hook = None;
    }
}

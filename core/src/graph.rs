//! The autograd graph's node storage: what every backward node holds — its edges, the metadata of
//! its forward outputs, its sequence number, saved values and formula — in one native object.
//!
//! `autograd/graph.py`'s `NodeBase` derives from `_TnNode` and keeps the behaviour (names, hooks,
//! the engine protocol). Keeping the edges as a Rust vector rather than a Python list of
//! `(node, output_nr)` tuples makes a recorded node one object the garbage collector tracks
//! instead of four or five: a training step records hundreds of nodes that live through the
//! collector's younger generations, and every object among them counts towards the full
//! collections of the whole heap (the training profile measured 2 ms a step on a tiny Llama before). The
//! object still takes part in collection (`__traverse__`), so cycles through a node (a hook that
//! holds its own tensor) are found as before; the subclass's `__dict__` (hooks, metadata) is
//! added by Python, which traverses it.

use std::sync::atomic::{AtomicI64, Ordering};

use pyo3::exceptions::PyTypeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{intern, PyTraverseError};
use torchnative_abi::TnDtype;

use crate::tensor::TensorBase;

/// Sequence numbers of nodes (upstream's per-thread sequence_nr; the engine runs the most recent
/// ready node first) and the number of nodes made, which record.py reads to tell an operator
/// whose parts recorded themselves from one that ran kernels directly.
static SEQ: AtomicI64 = AtomicI64::new(0);
static RECORDED: AtomicI64 = AtomicI64::new(0);

/// The next sequence number (`torch._C._autograd._get_sequence_nr` too).
#[pyfunction]
pub fn _tn_next_seq() -> i64 {
    SEQ.fetch_add(1, Ordering::Relaxed)
}

#[pyfunction]
pub fn _tn_nodes_recorded() -> i64 {
    RECORDED.load(Ordering::Relaxed)
}

/// `torch._C._TnNode`: the native part of every autograd node.
#[pyclass(subclass, module = "torch._C", name = "_TnNode")]
pub struct Node {
    /// One edge per differentiable input: the node its gradient goes to (None: nowhere) and
    /// which of that node's outputs it is.
    edges: Vec<(Option<PyObject>, i64)>,
    /// Per forward output, `autograd.graph.tensor_meta` (None for a non-differentiable one).
    #[pyo3(get, set)]
    _tn_out_meta: Option<PyObject>,
    #[pyo3(get, set)]
    pub _tn_seq: i64,
    /// Saved values by name (`SavedTensor`s and plain arguments).
    #[pyo3(get, set)]
    pub _tn_saved: Option<PyObject>,
    /// Metadata of every tensor argument by name.
    #[pyo3(get, set)]
    pub _tn_argmeta: Option<PyObject>,
    /// The derivative formula (built-in nodes).
    #[pyo3(get, set)]
    _tn_f: Option<PyObject>,
    /// Set once any hook is registered on the node (node pre/post hooks, a tensor's hooks or
    /// retain_grad, all kept in its `__dict__`): the engine asks Python for them only then.
    #[pyo3(get, set)]
    pub _tn_hooked: bool,
    /// The native formula the engine may run instead of `_tn_f` (formulas.rs).
    pub native: crate::formulas::Kind,
}

impl Node {
    pub fn edges(&self) -> &[(Option<PyObject>, i64)] {
        &self.edges
    }

    /// How many forward outputs the node has (its output metadata's length).
    pub fn num_outputs(&self, py: Python<'_>) -> PyResult<usize> {
        match &self._tn_out_meta {
            Some(m) => m.bind(py).len(),
            None => Ok(0),
        }
    }

    /// The metadata of output `i`, None where it is not differentiable or out of range.
    pub fn out_meta_at(&self, py: Python<'_>, i: usize) -> PyResult<Option<PyObject>> {
        let Some(m) = &self._tn_out_meta else {
            return Ok(None);
        };
        let m = m.bind(py);
        if i >= m.len()? {
            return Ok(None);
        }
        let x = m.get_item(i)?;
        Ok((!x.is_none()).then(|| x.unbind()))
    }
}

#[pymethods]
impl Node {
    /// Subclasses take their own constructor arguments (`AccumulateGrad(variable)`, ...).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>) -> Self {
        Node {
            edges: Vec::new(),
            _tn_out_meta: None,
            _tn_seq: 0,
            _tn_saved: None,
            _tn_argmeta: None,
            _tn_f: None,
            _tn_hooked: false,
            native: crate::formulas::Kind::None,
        }
    }

    /// The edges as a list of `(node or None, output_nr)`.
    #[getter]
    fn _tn_edges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .edges
            .iter()
            .map(|(n, nr)| {
                PyTuple::new(
                    py,
                    [
                        n.as_ref().map_or_else(|| py.None(), |n| n.clone_ref(py)),
                        nr.into_pyobject(py)?.into_any().unbind(),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    #[setter]
    fn set__tn_edges(&mut self, edges: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut out = Vec::new();
        for e in edges.try_iter()? {
            let e = e?;
            let t = e
                .downcast::<PyTuple>()
                .map_err(|_| PyTypeError::new_err("an edge is a (node, output_nr) tuple"))?;
            if t.len() != 2 {
                return Err(PyTypeError::new_err("an edge is a (node, output_nr) tuple"));
            }
            let n = t.get_item(0)?;
            out.push((
                (!n.is_none()).then(|| n.unbind()),
                t.get_item(1)?.extract()?,
            ));
        }
        self.edges = out;
        Ok(())
    }

    /// The number of edges (without building them).
    fn _tn_num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Whether edge `i` leads anywhere: differentiable input `i` needs a gradient (upstream's
    /// `needs_input_grad`). Out of range: False.
    fn _tn_needs(&self, i: usize) -> bool {
        self.edges.get(i).is_some_and(|(n, _)| n.is_some())
    }

    /// A new node's edges and output metadata; gives it the next sequence number.
    fn _tn_init(&mut self, edges: &Bound<'_, PyAny>, out_meta: PyObject) -> PyResult<()> {
        self.set__tn_edges(edges)?;
        self._tn_out_meta = Some(out_meta);
        self._tn_seq = _tn_next_seq();
        RECORDED.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for n in self.edges.iter().filter_map(|(n, _)| n.as_ref()) {
            visit.call(n)?;
        }
        let fields = [
            &self._tn_out_meta,
            &self._tn_saved,
            &self._tn_argmeta,
            &self._tn_f,
        ];
        for x in fields.into_iter().flatten() {
            visit.call(x)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.edges.clear();
        self._tn_out_meta = None;
        self._tn_saved = None;
        self._tn_argmeta = None;
        self._tn_f = None;
    }
}

// --- recording -------------------------------------------------------------------------------

/// What `autograd/record.py` hands the native recorder once (`_tn_install_record`).
struct Hooks {
    saved_tensor: PyObject,
    grad_accumulator: PyObject,
    tensor_meta: PyObject,
    /// `graph._DEVICE_CODE`: (device key, index) -> the code metadata tuples hold.
    device_codes: Py<PyDict>,
}

static HOOKS: GILOnceCell<Hooks> = GILOnceCell::new();

#[pyfunction]
pub fn _tn_install_record(
    py: Python<'_>,
    saved_tensor: PyObject,
    grad_accumulator: PyObject,
    tensor_meta: PyObject,
    device_codes: Py<PyDict>,
) {
    let _ = HOOKS.set(
        py,
        Hooks {
            saved_tensor,
            grad_accumulator,
            tensor_meta,
            device_codes,
        },
    );
}

/// record.py's `_Plan` for one operator overload, in the form the native recorder reads.
#[pyclass(module = "torch._C", name = "_TnRecordPlan", frozen)]
pub struct RecordPlan {
    formula: PyObject,
    node_cls: PyObject,
    /// Argument names by position.
    names: Vec<Py<PyString>>,
    /// Each differentiable input's argument position (None: not an argument).
    inputs: Vec<Option<usize>>,
    /// Whether the formula reads the argument at each position.
    save: Vec<bool>,
    /// Whether each output may be differentiable (derivatives.yaml's output_differentiability).
    diff: Option<Vec<bool>>,
    /// The saved name of each output the formula reads, by number of outputs: `result`, or
    /// `result0`, `result1`, ...
    result_save: Vec<(usize, Py<PyString>)>,
    result_save_multi: Vec<(usize, Py<PyString>)>,
    /// The operator's native formula, if it has one.
    native: crate::formulas::Kind,
}

#[pymethods]
impl RecordPlan {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        formula: PyObject,
        node_cls: PyObject,
        names: Vec<Py<PyString>>,
        inputs: Vec<Option<usize>>,
        save: Vec<bool>,
        diff: Option<Vec<bool>>,
        result_save: Vec<(usize, Py<PyString>)>,
        result_save_multi: Vec<(usize, Py<PyString>)>,
    ) -> Self {
        let native = Python::with_gil(|py| {
            formula
                .getattr(py, "op")
                .and_then(|o| o.extract::<String>(py))
                .map_or(crate::formulas::Kind::None, |o| {
                    crate::formulas::Kind::of(&o)
                })
        });
        RecordPlan {
            native,
            formula,
            node_cls,
            names,
            inputs,
            save,
            diff,
            result_save,
            result_save_multi,
        }
    }
}

fn is_diff_dtype(dt: TnDtype) -> bool {
    matches!(
        dt,
        TnDtype::Float16
            | TnDtype::Float32
            | TnDtype::Float64
            | TnDtype::BFloat16
            | TnDtype::ComplexHalf
            | TnDtype::ComplexFloat
            | TnDtype::ComplexDouble
    )
}

/// `graph.gradient_edge(t)`.
fn edge_of(
    py: Python<'_>,
    hooks: &Hooks,
    t: &Bound<'_, PyAny>,
    requires_grad: bool,
) -> PyResult<(Option<PyObject>, i64)> {
    if let Ok(d) = t.getattr(intern!(py, "__dict__")) {
        if let Some(e) = d.downcast::<PyDict>()?.get_item(intern!(py, "_tn_edge"))? {
            let e = e.downcast::<PyTuple>()?;
            let n = e.get_item(0)?;
            return Ok((
                (!n.is_none()).then(|| n.unbind()),
                e.get_item(1)?.extract()?,
            ));
        }
    }
    if requires_grad {
        return Ok((Some(hooks.grad_accumulator.call1(py, (t,))?), 0));
    }
    Ok((None, 0))
}

/// `graph.tensor_meta(t)`: natively where the device's code is known, else through Python.
fn meta_of(py: Python<'_>, hooks: &Hooks, t: &Bound<'_, TensorBase>) -> PyResult<PyObject> {
    let (code, dtype, sizes) = {
        let r = t.borrow();
        let (key, index) = r.place();
        let name = crate::registry::device_name(key);
        if name == "meta" {
            return hooks.tensor_meta.call1(py, (t,));
        }
        let code = hooks.device_codes.bind(py).get_item((name, index as i64))?;
        match code {
            Some(c) => (c.unbind(), r.meta.dtype as i64, r.meta.sizes.clone()),
            None => return hooks.tensor_meta.call1(py, (t,)),
        }
    };
    let mut items: Vec<PyObject> = Vec::with_capacity(sizes.len() + 2);
    items.push(dtype.into_pyobject(py)?.into_any().unbind());
    items.push(code);
    for s in sizes {
        items.push(s.into_pyobject(py)?.into_any().unbind());
    }
    Ok(PyTuple::new(py, items)?.into_any().unbind())
}

/// A node of the plan's class, made by its `tp_new` alone: `graph.Node.__init__` (a Python
/// frame and a `__dict__`) only stores the formula, which the recorder sets natively.
fn new_node<'py>(py: Python<'py>, cls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let ty = cls.downcast::<pyo3::types::PyType>()?;
    let args = PyTuple::empty(py);
    // SAFETY: `ty` is a live type object (a Node subclass); tp_new with an empty argument tuple
    // is how `type.__call__` starts, and its result is a new reference or NULL with an error set.
    unsafe {
        let new = pyo3::ffi::PyType_GetSlot(ty.as_type_ptr(), pyo3::ffi::Py_tp_new);
        if new.is_null() {
            return Err(PyTypeError::new_err("a node class without tp_new"));
        }
        let new: pyo3::ffi::newfunc = std::mem::transmute(new);
        let obj = new(ty.as_type_ptr(), args.as_ptr(), std::ptr::null_mut());
        Bound::from_owned_ptr_or_err(py, obj)
    }
}

/// The autograd step for an operator with a formula, called positionally and not in place:
/// record.py `_record` natively. Edges to each differentiable input, the metadata of every
/// tensor argument, the saved values, the operator run below autograd with grad mode off, one
/// node of the plan's class whose outputs get its history.
#[pyfunction]
pub fn _tn_record(
    py: Python<'_>,
    plan: &Bound<'_, RecordPlan>,
    op: &Bound<'_, PyString>,
    args: &Bound<'_, PyTuple>,
) -> PyResult<PyObject> {
    let hooks = HOOKS
        .get(py)
        .ok_or_else(|| PyTypeError::new_err("the native recorder is not installed"))?;
    let plan = plan.get();
    let n = args.len();
    let mut edges: Vec<(Option<PyObject>, i64)> = Vec::with_capacity(plan.inputs.len());
    let mut any_edge = false;
    for idx in &plan.inputs {
        let v = match idx {
            Some(i) if *i < n => Some(args.get_item(*i)?),
            _ => None,
        };
        match v {
            Some(v) => {
                if let Ok(t) = v.downcast::<TensorBase>() {
                    let rg = t.borrow().requires_grad;
                    let e = edge_of(py, hooks, &v, rg)?;
                    any_edge |= e.0.is_some();
                    edges.push(e);
                } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
                    for x in v.try_iter()? {
                        let x = x?;
                        let e = match x.downcast::<TensorBase>() {
                            Ok(t) => {
                                let rg = t.borrow().requires_grad;
                                edge_of(py, hooks, &x, rg)?
                            }
                            Err(_) => (None, 0),
                        };
                        any_edge |= e.0.is_some();
                        edges.push(e);
                    }
                } else {
                    edges.push((None, 0));
                }
            }
            None => edges.push((None, 0)),
        }
    }
    let saved = PyDict::new(py);
    let argmeta = PyDict::new(py);
    for (i, v) in args.iter().enumerate() {
        let Some(name) = plan.names.get(i) else {
            break;
        };
        let name = name.bind(py);
        let save = plan.save.get(i).copied().unwrap_or(false);
        if let Ok(t) = v.downcast::<TensorBase>() {
            argmeta.set_item(name, meta_of(py, hooks, t)?)?;
            if save {
                saved.set_item(name, hooks.saved_tensor.call1(py, (&v,))?)?;
            }
            continue;
        }
        let tensor_list = (v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>())
            && v.len()? > 0
            && v.get_item(0)?.downcast::<TensorBase>().is_ok();
        if tensor_list {
            let mut metas = Vec::new();
            let mut saves = Vec::new();
            for x in v.try_iter()? {
                let x = x?;
                match x.downcast::<TensorBase>() {
                    Ok(t) => metas.push(meta_of(py, hooks, t)?),
                    Err(_) => metas.push(py.None()),
                }
                if save {
                    saves.push(hooks.saved_tensor.call1(py, (&x,))?);
                }
            }
            argmeta.set_item(name, PyList::new(py, metas)?)?;
            if save {
                saved.set_item(name, PyList::new(py, saves)?)?;
            }
        } else {
            saved.set_item(name, &v)?;
        }
    }

    let out = crate::door::_tn_below_autograd_no_grad(py, op, args, None)?;
    if !any_edge {
        return Ok(out);
    }
    // An implementation may hand back an input unchanged (a no-op view): the result must be a
    // tensor of its own, or recording its history would rewrite the input's.
    let is_arg = |x: &Bound<'_, PyAny>| args.iter().any(|a| a.is(x));
    let mut out = out.into_bound(py);
    let multi = out.is_instance_of::<PyTuple>() || out.is_instance_of::<PyList>();
    let mut outs: Vec<Bound<'_, PyAny>> = if multi {
        out.try_iter()?.collect::<PyResult<_>>()?
    } else {
        vec![out.clone()]
    };
    let mut replaced = false;
    for o in outs.iter_mut() {
        if o.downcast::<TensorBase>().is_ok() && is_arg(o) {
            *o = o.call_method0(intern!(py, "_tn_alias"))?;
            replaced = true;
        }
    }
    if replaced {
        out = if !multi {
            outs[0].clone()
        } else if out.is_instance_of::<PyList>() {
            PyList::new(py, &outs)?.into_any()
        } else {
            PyTuple::new(py, &outs)?.into_any()
        };
    }
    let mut metas: Vec<PyObject> = Vec::with_capacity(outs.len());
    for (i, o) in outs.iter().enumerate() {
        let m = match o.downcast::<TensorBase>() {
            Ok(t)
                if is_diff_dtype(t.borrow().meta.dtype)
                    && plan.diff.as_ref().is_none_or(|d| i >= d.len() || d[i]) =>
            {
                meta_of(py, hooks, t)?
            }
            _ => py.None(),
        };
        metas.push(m);
    }
    let node = new_node(py, plan.node_cls.bind(py))?;
    {
        let node_ref = node.downcast::<Node>()?;
        let mut nb = node_ref.borrow_mut();
        nb._tn_f = Some(plan.formula.clone_ref(py));
        nb.edges = edges;
        nb._tn_out_meta = Some(PyTuple::new(py, &metas)?.into_any().unbind());
        nb._tn_seq = _tn_next_seq();
        nb._tn_argmeta = Some(argmeta.into_any().unbind());
        nb.native = plan.native;
    }
    RECORDED.fetch_add(1, Ordering::Relaxed);
    let edge_key = intern!(py, "_tn_edge");
    for (i, o) in outs.iter().enumerate() {
        if metas[i].is_none(py) {
            continue;
        }
        let edge = PyTuple::new(
            py,
            [
                node.clone().into_any().unbind(),
                (i as i64).into_pyobject(py)?.into_any().unbind(),
            ],
        )?;
        o.getattr(intern!(py, "__dict__"))?
            .downcast::<PyDict>()?
            .set_item(edge_key, edge)?;
        o.downcast::<TensorBase>()?.borrow_mut().requires_grad = true;
    }
    let result_save = if outs.len() == 1 {
        &plan.result_save
    } else {
        &plan.result_save_multi
    };
    for (i, key) in result_save {
        if let Some(o) = outs.get(*i) {
            if o.downcast::<TensorBase>().is_ok() {
                saved.set_item(key.bind(py), hooks.saved_tensor.call1(py, (o, true, *i))?)?;
            }
        }
    }
    node.downcast::<Node>()?.borrow_mut()._tn_saved = Some(saved.into_any().unbind());
    Ok(out.unbind())
}

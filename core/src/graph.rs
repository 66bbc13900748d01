//! The autograd graph's node storage: what every backward node holds — its edges, the metadata of
//! its forward outputs and tensor arguments, its sequence number, saved values and formula — in
//! one native object.
//!
//! `autograd/graph.py`'s `NodeBase` derives from `_TnNode` and keeps the behaviour (names, hooks,
//! the engine protocol). Edges, metadata and saved values are Rust vectors of plain numbers and
//! references rather than Python lists, tuples and dicts (Python sees them built on demand), so a
//! recorded node is one object the garbage collector counts instead of eight or nine: a training
//! step keeps hundreds of nodes alive until backward, and CPython runs a young-generation
//! collection for every 700 container objects allocated and not yet freed (a tiny Llama's step
//! ran one per step with Python containers; see docs/PERF.md). The object still takes part in
//! collection (`__traverse__`), so cycles through a node (a hook that holds its own tensor) are
//! found as before; the subclass's `__dict__` (hooks) is added by Python, which traverses it.

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
    out_meta: Option<Vec<Option<TensorMeta>>>,
    #[pyo3(get, set)]
    pub _tn_seq: i64,
    /// Saved values by name (`SavedTensor`s and plain arguments).
    pub saved: Option<SavedValues>,
    /// Metadata of every tensor argument (or tensor list) by name.
    argmeta: Vec<(Py<PyString>, ArgMeta)>,
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
    pub fn num_outputs(&self) -> usize {
        self.out_meta.as_ref().map_or(0, |m| m.len())
    }

    /// The metadata of output `i`, None where it is not differentiable or out of range.
    pub fn out_meta_at(&self, i: usize) -> Option<&TensorMeta> {
        self.out_meta.as_ref()?.get(i)?.as_ref()
    }

    fn arg_meta(&self, py: Python<'_>, name: &str) -> Option<&ArgMeta> {
        self.argmeta
            .iter()
            .find(|(n, _)| n.bind(py).to_str().is_ok_and(|n| n == name))
            .map(|(_, m)| m)
    }

    /// The sizes of tensor argument `name`, None where it is not a tensor argument.
    pub fn arg_sizes(&self, py: Python<'_>, name: &str) -> PyResult<Option<Vec<i64>>> {
        match self.arg_meta(py, name) {
            Some(ArgMeta::One(m)) => m.sizes(py).map(Some),
            _ => Ok(None),
        }
    }

    /// The sizes of each tensor of tensor-list argument `name` (None for an element that is
    /// not a tensor), None where it is not a tensor list.
    pub fn arg_list_sizes(
        &self,
        py: Python<'_>,
        name: &str,
    ) -> PyResult<Option<Vec<Option<Vec<i64>>>>> {
        match self.arg_meta(py, name) {
            Some(ArgMeta::List(ms)) => ms
                .iter()
                .map(|m| m.as_ref().map(|m| m.sizes(py)).transpose())
                .collect::<PyResult<Vec<_>>>()
                .map(Some),
            _ => Ok(None),
        }
    }
}

/// A tensor's metadata as a node keeps it: `graph.tensor_meta`'s `(dtype code, device code,
/// *sizes)` as plain numbers, made into that tuple only when Python asks for it. A node recorded
/// with Python tuples held two to four of them (and a dict) more: objects the collector counts,
/// and a tiny Llama's training step ran a young-generation collection each step because of them.
pub enum TensorMeta {
    Native {
        dtype: i64,
        device: i64,
        sizes: Vec<i64>,
    },
    /// What Python set that is not such a tuple, kept as it is.
    Py(PyObject),
}

impl TensorMeta {
    fn from_py(m: &Bound<'_, PyAny>) -> TensorMeta {
        if let Ok(t) = m.downcast::<PyTuple>() {
            if let Ok(v) = t.extract::<Vec<i64>>() {
                if v.len() >= 2 {
                    return TensorMeta::Native {
                        dtype: v[0],
                        device: v[1],
                        sizes: v[2..].to_vec(),
                    };
                }
            }
        }
        TensorMeta::Py(m.clone().unbind())
    }

    pub fn to_py(&self, py: Python<'_>) -> PyResult<PyObject> {
        match self {
            TensorMeta::Py(o) => Ok(o.clone_ref(py)),
            TensorMeta::Native {
                dtype,
                device,
                sizes,
            } => {
                let mut items = Vec::with_capacity(sizes.len() + 2);
                items.extend([*dtype, *device]);
                items.extend_from_slice(sizes);
                Ok(PyTuple::new(py, items)?.into_any().unbind())
            }
        }
    }

    /// The dtype code and sizes.
    pub fn dtype_and_sizes(&self, py: Python<'_>) -> PyResult<(i64, Vec<i64>)> {
        match self {
            TensorMeta::Native { dtype, sizes, .. } => Ok((*dtype, sizes.clone())),
            TensorMeta::Py(o) => {
                let t = o.bind(py).downcast::<PyTuple>()?;
                Ok((
                    t.get_item(0)?.extract()?,
                    t.get_slice(2, t.len()).extract()?,
                ))
            }
        }
    }

    /// Whether a tensor of this dtype code and sizes fits the metadata.
    pub fn describes(&self, py: Python<'_>, dtype: i64, sizes: &[i64]) -> PyResult<bool> {
        Ok(match self {
            TensorMeta::Native {
                dtype: d, sizes: s, ..
            } => *d == dtype && s[..] == sizes[..],
            TensorMeta::Py(_) => {
                let (d, s) = self.dtype_and_sizes(py)?;
                d == dtype && s[..] == sizes[..]
            }
        })
    }

    fn sizes(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        Ok(self.dtype_and_sizes(py)?.1)
    }

    fn visit(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        match self {
            TensorMeta::Py(o) => visit.call(o),
            TensorMeta::Native { .. } => Ok(()),
        }
    }
}

fn metas_from_py(v: &Bound<'_, PyAny>) -> PyResult<Vec<Option<TensorMeta>>> {
    v.try_iter()?
        .map(|m| {
            let m = m?;
            Ok((!m.is_none()).then(|| TensorMeta::from_py(&m)))
        })
        .collect()
}

fn metas_to_py<'py>(py: Python<'py>, ms: &[Option<TensorMeta>]) -> PyResult<Vec<PyObject>> {
    ms.iter()
        .map(|m| m.as_ref().map_or_else(|| Ok(py.None()), |m| m.to_py(py)))
        .collect()
}

/// A tensor argument's metadata, or a tensor list's (None for an element that is not a tensor).
pub enum ArgMeta {
    One(TensorMeta),
    List(Vec<Option<TensorMeta>>),
}

impl ArgMeta {
    fn from_py(v: &Bound<'_, PyAny>) -> PyResult<ArgMeta> {
        Ok(if v.is_instance_of::<PyList>() {
            ArgMeta::List(metas_from_py(v)?)
        } else {
            ArgMeta::One(TensorMeta::from_py(v))
        })
    }

    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject> {
        match self {
            ArgMeta::One(m) => m.to_py(py),
            ArgMeta::List(ms) => Ok(PyList::new(py, metas_to_py(py, ms)?)?.into_any().unbind()),
        }
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
            out_meta: None,
            _tn_seq: 0,
            saved: None,
            argmeta: Vec::new(),
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

    /// The output metadata as a tuple (None entries for non-differentiable outputs).
    #[getter]
    fn _tn_out_meta(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        self.out_meta
            .as_ref()
            .map(|ms| Ok(PyTuple::new(py, metas_to_py(py, ms)?)?.into_any().unbind()))
            .transpose()
    }

    #[setter]
    fn set__tn_out_meta(&mut self, v: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.out_meta = match v {
            Some(v) if !v.is_none() => Some(metas_from_py(v)?),
            _ => None,
        };
        Ok(())
    }

    /// The argument metadata as a dict by name (a tensor list's as a list).
    #[getter]
    fn _tn_argmeta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (n, m) in &self.argmeta {
            d.set_item(n.bind(py), m.to_py(py)?)?;
        }
        Ok(d)
    }

    #[setter]
    fn set__tn_argmeta(&mut self, v: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        self.argmeta.clear();
        for (k, m) in v.into_iter().flat_map(|d| d.iter()) {
            self.argmeta.push((
                k.downcast_into::<PyString>()?.unbind(),
                ArgMeta::from_py(&m)?,
            ));
        }
        Ok(())
    }

    /// The metadata of argument `name` (what `_tn_argmeta[name]` holds); KeyError if none.
    fn _tn_arg_meta(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        match self.arg_meta(py, name) {
            Some(m) => m.to_py(py),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_owned())),
        }
    }

    /// The saved values as a dict by name (None: nothing was saved).
    #[getter]
    fn _tn_saved<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.saved
            .as_ref()
            .map(|s| {
                let d = PyDict::new(py);
                for (n, v) in &s.0 {
                    d.set_item(n.bind(py), v.bind(py))?;
                }
                Ok(d)
            })
            .transpose()
    }

    #[setter]
    fn set__tn_saved(&mut self, v: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        self.saved = v
            .map(|d| {
                d.iter()
                    .map(|(k, v)| Ok((k.downcast_into::<PyString>()?.unbind(), v.unbind())))
                    .collect::<PyResult<Vec<_>>>()
                    .map(SavedValues)
            })
            .transpose()?;
        Ok(())
    }

    /// Saved value `name`, or `default` where none was saved under that name.
    fn _tn_saved_get(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyString>,
        default: PyObject,
    ) -> PyResult<PyObject> {
        Ok(
            match self
                .saved
                .as_ref()
                .map(|s| s.get(py, name))
                .transpose()?
                .flatten()
            {
                Some(v) => v.unbind(),
                None => default,
            },
        )
    }

    /// Drops the data of every saved tensor (a list's too): backward ran without retain_graph.
    /// (The values are taken out of the borrow first: freeing a tensor may run Python.)
    pub fn _tn_release_saved(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let Some(saved) = slf.borrow().saved.as_ref().map(|s| s.clone_ref(py)) else {
            return Ok(());
        };
        for v in saved.values() {
            let v = v.bind(py);
            if let Ok(st) = v.downcast::<crate::saved::SavedTensor>() {
                st.borrow_mut().release();
            } else if let Ok(l) = v.downcast::<PyList>() {
                for x in l.iter() {
                    if let Ok(st) = x.downcast::<crate::saved::SavedTensor>() {
                        st.borrow_mut().release();
                    }
                }
            }
        }
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
    fn _tn_init(&mut self, edges: &Bound<'_, PyAny>, out_meta: &Bound<'_, PyAny>) -> PyResult<()> {
        self.set__tn_edges(edges)?;
        self.out_meta = Some(metas_from_py(out_meta)?);
        self._tn_seq = _tn_next_seq();
        RECORDED.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for n in self.edges.iter().filter_map(|(n, _)| n.as_ref()) {
            visit.call(n)?;
        }
        if let Some(x) = &self._tn_f {
            visit.call(x)?;
        }
        for (_, v) in self.saved.iter().flat_map(|s| s.0.iter()) {
            visit.call(v)?;
        }
        for m in self.out_meta.iter().flatten().flatten() {
            m.visit(&visit)?;
        }
        for (_, m) in &self.argmeta {
            match m {
                ArgMeta::One(m) => m.visit(&visit)?,
                ArgMeta::List(ms) => {
                    for m in ms.iter().flatten() {
                        m.visit(&visit)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.edges.clear();
        self.out_meta = None;
        self.saved = None;
        self.argmeta.clear();
        self._tn_f = None;
    }
}

/// A node's saved values by name, in the order they were saved. A few entries each: a search
/// costs less than a dict, which would be one more object for the collector per node.
pub struct SavedValues(Vec<(Py<PyString>, PyObject)>);

impl SavedValues {
    pub fn get<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let want = name.to_str()?;
        for (n, v) in &self.0 {
            if n.as_ptr() == name.as_ptr() || n.bind(py).to_str()? == want {
                return Ok(Some(v.bind(py).clone()));
            }
        }
        Ok(None)
    }

    pub fn values(&self) -> impl Iterator<Item = &PyObject> {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn clone_ref(&self, py: Python<'_>) -> SavedValues {
        SavedValues(
            self.0
                .iter()
                .map(|(n, v)| (n.clone_ref(py), v.clone_ref(py)))
                .collect(),
        )
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
    /// `record.composed_rest(op, args, out)`: see [`run_composed`].
    composed_rest: PyObject,
}

static HOOKS: GILOnceCell<Hooks> = GILOnceCell::new();

#[pyfunction]
pub fn _tn_install_record(
    py: Python<'_>,
    saved_tensor: PyObject,
    grad_accumulator: PyObject,
    tensor_meta: PyObject,
    device_codes: Py<PyDict>,
    composed_rest: PyObject,
) {
    let _ = HOOKS.set(
        py,
        Hooks {
            saved_tensor,
            grad_accumulator,
            tensor_meta,
            device_codes,
            composed_rest,
        },
    );
}

/// The autograd step for an operator without a formula (a CompositeImplicitAutograd one, or one
/// upstream does not differentiate: `nondiff`), called positionally: record.py `_untracked`
/// natively for its usual outcome. The operator runs with grad mode on, so the operators it is
/// made of record themselves; when they recorded something, or it returned its first argument,
/// or it is not differentiable, that is all. Otherwise record.py gives its outputs without
/// history a NotImplemented node.
pub fn run_composed(
    py: Python<'_>,
    nondiff: bool,
    op: &Bound<'_, PyString>,
    args: &Bound<'_, PyTuple>,
) -> PyResult<PyObject> {
    let before = RECORDED.load(Ordering::Relaxed);
    let out = crate::door::_tn_below_autograd(py, op, args, None)?;
    if nondiff
        || RECORDED.load(Ordering::Relaxed) != before
        || (!args.is_empty() && out.bind(py).is(&args.get_item(0)?))
    {
        return Ok(out);
    }
    let hooks = HOOKS
        .get(py)
        .ok_or_else(|| PyTypeError::new_err("the native recorder is not installed"))?;
    hooks.composed_rest.call1(py, (op, args, out))
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
    t: &Bound<'_, TensorBase>,
) -> PyResult<(Option<PyObject>, i64)> {
    let requires_grad = {
        let r = t.borrow();
        if let Some((n, nr)) = &r.edge {
            return Ok((n.as_ref().map(|n| n.clone_ref(py)), *nr));
        }
        r.requires_grad
    };
    if requires_grad {
        return Ok((Some(hooks.grad_accumulator.call1(py, (t,))?), 0));
    }
    Ok((None, 0))
}

thread_local! {
    /// `graph._DEVICE_CODE` as read so far, by place (None: a meta tensor, whose device Python
    /// decides). Codes are only ever added to that dict, never changed, so a code once read stays
    /// valid; the lookup otherwise built a (name, index) tuple and a string per tensor argument.
    static DEVICE_CODES: std::cell::RefCell<Vec<(crate::registry::Place, Option<i64>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The code `graph._DEVICE_CODE` gives a place, None for meta storage or a place not yet coded.
fn device_code(
    py: Python<'_>,
    hooks: &Hooks,
    place: crate::registry::Place,
) -> PyResult<Option<i64>> {
    if let Some(c) = DEVICE_CODES.with(|c| {
        c.borrow()
            .iter()
            .find(|(p, _)| *p == place)
            .map(|(_, c)| *c)
    }) {
        return Ok(c);
    }
    let name = crate::registry::device_name(place.0);
    if name == "meta" {
        DEVICE_CODES.with(|c| c.borrow_mut().push((place, None)));
        return Ok(None);
    }
    let code = hooks
        .device_codes
        .bind(py)
        .get_item((name, place.1 as i64))?
        .map(|c| c.extract::<i64>())
        .transpose()?;
    if code.is_some() {
        DEVICE_CODES.with(|c| c.borrow_mut().push((place, code)));
    }
    Ok(code)
}

/// `graph.tensor_meta(t)`: natively where the device's code is known, else through Python.
fn meta_of(py: Python<'_>, hooks: &Hooks, t: &Bound<'_, TensorBase>) -> PyResult<TensorMeta> {
    let r = t.borrow();
    let code = device_code(py, hooks, r.place())?;
    match code {
        Some(device) => Ok(TensorMeta::Native {
            dtype: r.meta.dtype as i64,
            device,
            sizes: r.meta.sizes.to_vec(),
        }),
        None => {
            drop(r);
            Ok(TensorMeta::from_py(
                hooks.tensor_meta.bind(py).call1((t,))?.as_any(),
            ))
        }
    }
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
                    let e = edge_of(py, hooks, t)?;
                    any_edge |= e.0.is_some();
                    edges.push(e);
                } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
                    for x in v.try_iter()? {
                        let x = x?;
                        let e = match x.downcast::<TensorBase>() {
                            Ok(t) => edge_of(py, hooks, t)?,
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
    let mut saved: Vec<(Py<PyString>, PyObject)> = Vec::new();
    let mut argmeta: Vec<(Py<PyString>, ArgMeta)> = Vec::new();
    for (i, v) in args.iter().enumerate() {
        let Some(name) = plan.names.get(i) else {
            break;
        };
        let name = name.bind(py);
        let save = plan.save.get(i).copied().unwrap_or(false);
        if let Ok(t) = v.downcast::<TensorBase>() {
            argmeta.push((name.clone().unbind(), ArgMeta::One(meta_of(py, hooks, t)?)));
            if save {
                saved.push((name.clone().unbind(), hooks.saved_tensor.call1(py, (&v,))?));
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
                metas.push(match x.downcast::<TensorBase>() {
                    Ok(t) => Some(meta_of(py, hooks, t)?),
                    Err(_) => None,
                });
                if save {
                    saves.push(hooks.saved_tensor.call1(py, (&x,))?);
                }
            }
            argmeta.push((name.clone().unbind(), ArgMeta::List(metas)));
            if save {
                saved.push((
                    name.clone().unbind(),
                    PyList::new(py, saves)?.into_any().unbind(),
                ));
            }
        } else {
            saved.push((name.clone().unbind(), v.unbind()));
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
    let mut metas: Vec<Option<TensorMeta>> = Vec::with_capacity(outs.len());
    for (i, o) in outs.iter().enumerate() {
        let m = match o.downcast::<TensorBase>() {
            Ok(t)
                if is_diff_dtype(t.borrow().meta.dtype)
                    && plan.diff.as_ref().is_none_or(|d| i >= d.len() || d[i]) =>
            {
                Some(meta_of(py, hooks, t)?)
            }
            _ => None,
        };
        metas.push(m);
    }
    let has_history: Vec<bool> = metas.iter().map(Option::is_some).collect();
    let node = new_node(py, plan.node_cls.bind(py))?;
    {
        let node_ref = node.downcast::<Node>()?;
        let mut nb = node_ref.borrow_mut();
        nb._tn_f = Some(plan.formula.clone_ref(py));
        nb.edges = edges;
        nb.out_meta = Some(metas);
        nb._tn_seq = _tn_next_seq();
        nb.argmeta = argmeta;
        nb.native = plan.native;
    }
    RECORDED.fetch_add(1, Ordering::Relaxed);
    for (i, o) in outs.iter().enumerate() {
        if !has_history[i] {
            continue;
        }
        let mut t = o.downcast::<TensorBase>()?.borrow_mut();
        t.edge = Some((Some(node.clone().unbind()), i as i64));
        t.requires_grad = true;
    }
    let result_save = if outs.len() == 1 {
        &plan.result_save
    } else {
        &plan.result_save_multi
    };
    for (i, key) in result_save {
        if let Some(o) = outs.get(*i) {
            if o.downcast::<TensorBase>().is_ok() {
                saved.push((
                    key.clone_ref(py),
                    hooks.saved_tensor.call1(py, (o, true, *i))?,
                ));
            }
        }
    }
    node.downcast::<Node>()?.borrow_mut().saved = Some(SavedValues(saved));
    Ok(out.unbind())
}

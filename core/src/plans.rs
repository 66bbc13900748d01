//! Binding plans, run natively: the recorded resolution of a Python call (`x.view(2, 3)`,
//! `F.linear(x, w)`) replayed without Python frames.
//!
//! `binding/plans.py` decides *what* a plan is (which signature won, where each schema argument
//! comes from, which conversions are the identity) the first time a call with a given argument
//! type key resolves; this module holds the result (`_TnPlan`) and replays it:
//! `_tn_call_planned` forms the same type key as `plans.key`, finds the plan in the overload's
//! dict and runs it — one native call where the Python replay took three frames and a loop
//! (docs/PERF.md). Anything it cannot key or finds no plan for answers `_tn_plan_miss`, and the
//! caller takes the full Python path, which records the plan.

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PyString, PyTuple, PyType};

use crate::tensor::TensorBase;

// Slot kinds, as binding/plans.py numbers them.
const POS: i64 = 0;
const KW: i64 = 1;
const CONST: i64 = 2;
const SELF: i64 = 3;
const VARARGS: i64 = 4;

enum Source {
    Pos(usize),
    Kw(Py<PyString>),
    /// A constant; lists are copied per call (the callee may keep and mutate them).
    Const(Py<PyAny>, bool),
    SelfArg,
    Varargs,
}

struct Slot {
    source: Source,
    /// `functions.convert` bound to the parameter, None where it is the identity.
    conv: Option<Py<PyAny>>,
    /// An int-list parameter (`IntArrayRef`, `SymIntArrayRef`): a list or tuple of plain ints
    /// converts to a list natively (what `_to_intlist` does for them).
    int_list: bool,
    /// A `Tensor` parameter: a Python bool, int or float becomes a wrapped number natively
    /// (`convert` does the same through `_tn_wrapped_number`).
    wrap_number: bool,
}

/// One recorded resolution (see binding/plans.py `Plan`).
#[pyclass(module = "torch._C", name = "_TnPlan", frozen)]
pub struct Plan {
    #[pyo3(get)]
    op: Py<PyString>,
    /// The slots as Python gave them, `(kind, where, conv, ptype)` (read by `direct_binary`).
    #[pyo3(get)]
    slots: Py<PyTuple>,
    #[pyo3(get)]
    rg: Option<Py<PyAny>>,
    door: Py<PyAny>,
    /// `door` is torch._C._aten_dispatch itself: called directly.
    native_door: bool,
    compiled: Vec<Slot>,
    rg_source: Option<Source>,
}

fn source(kind: i64, place: &Bound<'_, PyAny>) -> PyResult<Source> {
    Ok(match kind {
        POS => Source::Pos(place.extract()?),
        KW => Source::Kw(place.downcast::<PyString>()?.clone().unbind()),
        CONST => Source::Const(
            place.clone().unbind(),
            place.is_exact_instance_of::<PyList>(),
        ),
        SELF => Source::SelfArg,
        VARARGS => Source::Varargs,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown plan slot kind {kind}"
            )))
        }
    })
}

#[pymethods]
impl Plan {
    #[new]
    fn new(
        py: Python<'_>,
        op: Py<PyString>,
        slots: Py<PyTuple>,
        rg: Option<Py<PyAny>>,
        door: Py<PyAny>,
    ) -> PyResult<Self> {
        let mut compiled = Vec::new();
        for s in slots.bind(py).iter() {
            let (kind, place, conv, ptype): (i64, Bound<'_, PyAny>, Bound<'_, PyAny>, String) =
                s.extract()?;
            compiled.push(Slot {
                source: source(kind, &place)?,
                conv: (!conv.is_none()).then(|| conv.unbind()),
                int_list: matches!(ptype.as_str(), "IntArrayRef" | "SymIntArrayRef"),
                wrap_number: ptype == "Tensor",
            });
        }
        let rg_source = match &rg {
            Some(r) => {
                let (kind, place): (i64, Bound<'_, PyAny>) = r.bind(py).extract()?;
                Some(source(kind, &place)?)
            }
            None => None,
        };
        let native = py
            .import("torch._C")
            .and_then(|m| m.getattr("_aten_dispatch"))
            .map(|f| f.is(door.bind(py)))
            .unwrap_or(false);
        Ok(Plan {
            op,
            slots,
            rg,
            door,
            native_door: native,
            compiled,
            rg_source,
        })
    }

    /// Runs the plan on a call's `self` (None for functions), positional and keyword values.
    #[pyo3(signature = (self_, args, kwargs=None))]
    fn __call__(
        &self,
        py: Python<'_>,
        self_: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let mut argv = Vec::with_capacity(self.compiled.len());
        for slot in &self.compiled {
            let mut v = Self::value(&slot.source, self_, args, kwargs)?;
            if let (Some(conv), false, false) = (
                &slot.conv,
                v.is_none(),
                matches!(slot.source, Source::Const(..)),
            ) {
                let wrapped = if slot.wrap_number {
                    crate::fastpath::_tn_wrapped_number(py, &v)?.into_bound(py)
                } else {
                    py.None().into_bound(py)
                };
                v = if !wrapped.is_none() {
                    wrapped
                } else {
                    match slot.int_list.then(|| int_list(&v)).flatten() {
                        Some(l) => l.into_any(),
                        None => conv.bind(py).call1((v,))?,
                    }
                };
            }
            argv.push(v);
        }
        let argv = PyTuple::new(py, argv)?;
        let mut result = if self.native_door {
            crate::door::_aten_dispatch(py, self.op.bind(py), &argv, None)?
        } else {
            let mut full = vec![self.op.bind(py).clone().into_any()];
            full.extend(argv.iter());
            self.door.call1(py, PyTuple::new(py, full)?)?
        };
        if let Ok(l) = result.bind(py).downcast_exact::<PyList>() {
            result = PyTuple::new(py, l.iter())?.into_any().unbind();
        }
        if let Some(src) = &self.rg_source {
            if Self::value(src, self_, args, kwargs)?.is_truthy()? {
                result.call_method1(py, "requires_grad_", (true,))?;
            }
        }
        Ok(result)
    }
}

/// The items of an exact list or tuple, None for anything else.
fn seq_items<'py>(v: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(t) = v.downcast_exact::<PyTuple>() {
        Some(t.iter().collect())
    } else if let Ok(l) = v.downcast_exact::<PyList>() {
        Some(l.iter().collect())
    } else {
        None
    }
}

/// A list or tuple of plain ints as a new list, None for anything else.
fn int_list<'py>(v: &Bound<'py, PyAny>) -> Option<Bound<'py, PyList>> {
    let items = seq_items(v)?;
    if !items
        .iter()
        .all(|x| x.is_exact_instance_of::<pyo3::types::PyInt>())
    {
        return None;
    }
    PyList::new(v.py(), items).ok()
}

impl Plan {
    fn value<'py>(
        src: &Source,
        self_: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = args.py();
        Ok(match src {
            Source::Pos(i) => args.get_item(*i)?,
            Source::Kw(name) => kwargs
                .and_then(|k| k.get_item(name.bind(py)).ok().flatten())
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.clone_ref(py)))?,
            Source::Const(v, is_list) => {
                let v = v.bind(py);
                if *is_list {
                    PyList::new(py, v.downcast::<PyList>()?.iter())?.into_any()
                } else {
                    v.clone()
                }
            }
            Source::SelfArg => self_.clone(),
            Source::Varargs => args.clone().into_any(),
        })
    }
}

struct KeyTypes {
    /// binding/plans.py `_PLAIN`: types whose every signature check depends on the type alone.
    plain: Py<PyFrozenSet>,
    miss: Py<PyAny>,
}

static KEY_TYPES: GILOnceCell<KeyTypes> = GILOnceCell::new();

/// Installs `_PLAIN` (as a frozenset of types); returns the miss sentinel.
#[pyfunction]
pub fn _tn_install_plans(py: Python<'_>, plain: Py<PyFrozenSet>) -> PyResult<PyObject> {
    let kt = KEY_TYPES.get_or_try_init(py, || -> PyResult<KeyTypes> {
        Ok(KeyTypes {
            plain,
            miss: py.import("builtins")?.getattr("object")?.call0()?.unbind(),
        })
    })?;
    Ok(kt.miss.clone_ref(py))
}

/// binding/plans.py `key` of one value: its type, `(list or tuple type,)` when empty, `(list or
/// tuple type, element type)` when every element is of one type that is int or a tensor class;
/// None where the value has no type-only key.
fn key_part<'py>(
    x: &Bound<'py, PyAny>,
    plain: &Bound<'py, PyFrozenSet>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = x.py();
    let t = x.get_type();
    if let Some(items) = seq_items(x) {
        let Some(first) = items.first() else {
            return Ok(Some(PyTuple::new(py, [t])?.into_any()));
        };
        let t0 = first.get_type();
        if !(t0.is(py.get_type::<pyo3::types::PyInt>()) || is_tensor_type(&t0)?) {
            return Ok(None);
        }
        if !items.iter().all(|e| e.get_type().is(&t0)) {
            return Ok(None);
        }
        return Ok(Some(PyTuple::new(py, [t, t0])?.into_any()));
    }
    if plain.contains(&t)? || is_tensor_type(&t)? {
        return Ok(Some(t.into_any()));
    }
    Ok(None)
}

fn is_tensor_type(t: &Bound<'_, PyType>) -> PyResult<bool> {
    t.is_subclass_of::<TensorBase>()
}

/// `_tn_call_planned(plans, self_, args, kwargs)`: the call's plan key (binding/plans.py `key`),
/// its plan in `plans` run, or the miss sentinel when the call has no key or no plan yet.
#[pyfunction]
#[pyo3(signature = (plans, self_, args, kwargs=None))]
pub fn _tn_call_planned(
    py: Python<'_>,
    plans: &Bound<'_, PyDict>,
    self_: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    let Some(kt) = KEY_TYPES.get(py) else {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "_tn_install_plans was not called",
        ));
    };
    let plain = kt.plain.bind(py);
    let mut parts = Vec::with_capacity(args.len() + 2 * kwargs.map_or(0, |k| k.len()));
    for x in args.iter() {
        match key_part(&x, plain)? {
            Some(k) => parts.push(k),
            None => return Ok(kt.miss.clone_ref(py)),
        }
    }
    if let Some(kw) = kwargs {
        for (name, x) in kw.iter() {
            match key_part(&x, plain)? {
                Some(k) => {
                    parts.push(name);
                    parts.push(k);
                }
                None => return Ok(kt.miss.clone_ref(py)),
            }
        }
    }
    let key = PyTuple::new(py, parts)?;
    match plans.get_item(key)? {
        Some(p) => match p.downcast::<Plan>() {
            Ok(plan) => plan.get().__call__(py, self_, args, kwargs),
            Err(_) => Ok(kt.miss.clone_ref(py)), // None: this key's calls take the full path
        },
        None => Ok(kt.miss.clone_ref(py)),
    }
}

//! Native backward formulas for the operators a training step records most (views, transposes,
//! matrix products, the arithmetic of residuals and norms): the same compositions of door
//! operators as their Python formulas in `autograd/formulas/`, called from the engine's loop
//! without the Python frames around them (the `Formula` object, the saved-value view, the tensor
//! methods' binding), which cost more than the kernels on a small model.
//!
//! A native formula covers the plain case only and answers `None` for anything else — a
//! gradient graph being built (`create_graph`), a complex dtype, a saved tensor that was packed by
//! hooks, modified in place or released, a scale other than 1 — and the engine then runs the
//! Python formula, which handles (or reports) every case. The two must agree to the bit: each
//! is written as the same door calls in the same order.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use torchnative_abi::TnDtype;

use crate::door::_aten_dispatch;
use crate::graph::{Node, SavedValues};
use crate::saved::SavedTensor;
use crate::tensor::TensorBase;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(true);
static RUNS: AtomicU64 = AtomicU64::new(0);

/// Turns the native formulas off (every node then runs its Python formula) or back on; returns
/// the previous setting. For tests that compare the two.
#[pyfunction]
pub fn _tn_set_native_formulas(on: bool) -> bool {
    ENABLED.swap(on, Ordering::Relaxed)
}

/// How many nodes a native formula has run (tests check that it does).
#[pyfunction]
pub fn _tn_native_formula_runs() -> u64 {
    RUNS.load(Ordering::Relaxed)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Kind {
    None = 0,
    /// `view`, `_unsafe_view`: the gradient reshaped to the input's sizes.
    Reshape,
    T,
    Transpose,
    Mm,
    Addmm,
    Mul,
    Add,
    Sub,
    Neg,
    Relu,
    Slice,
    Cat,
    /// `rsqrt`: `-0.5 * g * r * r * r` (r the result), as elementwise.py's formula.
    Rsqrt,
    /// `pow.Tensor_Scalar` with a nonzero real exponent: `g * (e * self.pow(e - 1))`.
    PowScalar,
    /// `mean.dim`: the gradient unsqueezed where reduced, expanded, divided by the count.
    MeanDim,
}

impl Kind {
    pub fn of(op: &str) -> Kind {
        match op {
            "view" | "_unsafe_view" => Kind::Reshape,
            "t" => Kind::T,
            "transpose.int" => Kind::Transpose,
            "mm" => Kind::Mm,
            "addmm" => Kind::Addmm,
            "mul.Tensor" => Kind::Mul,
            "add.Tensor" => Kind::Add,
            "sub.Tensor" => Kind::Sub,
            "neg" => Kind::Neg,
            "relu" => Kind::Relu,
            "slice.Tensor" => Kind::Slice,
            "cat" => Kind::Cat,
            "rsqrt" => Kind::Rsqrt,
            "pow.Tensor_Scalar" => Kind::PowScalar,
            "mean.dim" => Kind::MeanDim,
            _ => Kind::None,
        }
    }
}

fn real_float(dt: TnDtype) -> bool {
    matches!(
        dt,
        TnDtype::Float16 | TnDtype::Float32 | TnDtype::Float64 | TnDtype::BFloat16
    )
}

/// A Python number as the 0-dim wrapped-number tensor a binding passes for it.
fn wrapped<'py>(py: Python<'py>, x: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let w = crate::fastpath::_tn_wrapped_number(py, &x)?.into_bound(py);
    if w.is_none() {
        return Err(pyo3::exceptions::PyOverflowError::new_err(
            "int too big to convert",
        ));
    }
    Ok(w)
}

/// A saved argument that is not a tensor (a dimension, a scale), as it is.
fn saved<'py>(
    saved: &SavedValues,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    saved.get(name.py(), name)
}

/// A saved tensor, unpacked when its `SavedTensor` holds it unchanged (no unpack hook, not
/// released, the same version); None otherwise.
fn saved_tensor<'py>(
    py: Python<'py>,
    saved: &SavedValues,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(v) = saved.get(py, name)? else {
        return Ok(None);
    };
    let Ok(st) = v.downcast::<SavedTensor>() else {
        return Ok(None);
    };
    let st = st.borrow();
    let Some(data) = st.plain_data().map(|d| d.bind(py).clone()) else {
        return Ok(None);
    };
    let Ok(t) = data.downcast::<TensorBase>() else {
        return Ok(None);
    };
    if t.borrow()
        .version
        .load(std::sync::atomic::Ordering::Relaxed)
        != st.version()
    {
        return Ok(None);
    }
    Ok(Some(data))
}

/// A saved tensor that must be present (else the Python formula takes over).
macro_rules! need {
    ($e:expr) => {
        match $e {
            Some(x) => x,
            None => return Ok(None),
        }
    };
}

fn is_one(v: Option<&Bound<'_, PyAny>>) -> bool {
    match v {
        None => true,
        Some(v) => {
            v.extract::<f64>().is_ok_and(|x| x == 1.0)
                && !v.is_instance_of::<pyo3::types::PyComplex>()
        }
    }
}

struct Door<'py> {
    py: Python<'py>,
}

impl<'py> Door<'py> {
    fn call<const N: usize>(
        &self,
        op: &Bound<'py, PyString>,
        args: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(_aten_dispatch(self.py, op, &PyTuple::new(self.py, args)?, None)?.into_bound(self.py))
    }
}

fn column_major(t: &Bound<'_, PyAny>) -> PyResult<bool> {
    let t = t.downcast::<TensorBase>()?.borrow();
    let (sz, st) = (&t.meta.sizes, &t.meta.strides);
    Ok(sz.len() == 2 && st[0] == 1 && st[1] == sz[0])
}

/// The gradients of `node`'s inputs for output gradients `grads`, or None where the Python
/// formula must run.
pub fn backward<'py>(
    py: Python<'py>,
    kind: Kind,
    node: &Bound<'py, Node>,
    grads: &[Option<PyObject>],
) -> PyResult<Option<Vec<Option<PyObject>>>> {
    if !ENABLED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let nb = node.borrow();
    let n = nb.edges().len();
    let needs: Vec<bool> = nb.edges().iter().map(|(x, _)| x.is_some()).collect();
    let Some(g) = grads.first().and_then(|g| g.as_ref()) else {
        return Ok(if grads.iter().all(|g| g.is_none()) {
            Some((0..n).map(|_| None).collect())
        } else {
            None
        });
    };
    let g = g.bind(py).clone();
    match g.downcast::<TensorBase>() {
        Ok(t) if real_float(t.borrow().meta.dtype) && !t.borrow().batched => {}
        _ => return Ok(None),
    }
    let Some(sv) = nb.saved.as_ref().map(|s| s.clone_ref(py)) else {
        return Ok(None);
    };
    drop(nb);
    let d = Door { py };
    let some = |x: Bound<'py, PyAny>| Some(x.unbind());
    let out: Vec<Option<PyObject>> = match kind {
        Kind::None => return Ok(None),
        Kind::Reshape => {
            let sizes = need!(node.borrow().arg_sizes(py, "self")?);
            let sizes = pyo3::types::PyList::new(py, sizes)?.into_any();
            vec![some(d.call(intern!(py, "reshape"), [g, sizes])?)]
        }
        Kind::T => vec![some(d.call(intern!(py, "t"), [g])?)],
        Kind::Transpose => {
            let d0 = need!(saved(&sv, intern!(py, "dim0"))?);
            let d1 = need!(saved(&sv, intern!(py, "dim1"))?);
            vec![some(d.call(intern!(py, "transpose.int"), [g, d0, d1])?)]
        }
        Kind::Mm | Kind::Addmm => {
            let (n1, n2, first) = if kind == Kind::Mm {
                (intern!(py, "self"), intern!(py, "mat2"), 0)
            } else {
                if !is_one(saved(&sv, intern!(py, "alpha"))?.as_ref())
                    || !is_one(saved(&sv, intern!(py, "beta"))?.as_ref())
                {
                    return Ok(None);
                }
                (intern!(py, "mat1"), intern!(py, "mat2"), 1)
            };
            let m1 = need!(saved_tensor(py, &sv, n1)?);
            let m2 = need!(saved_tensor(py, &sv, n2)?);
            let (t, mm) = (intern!(py, "t"), intern!(py, "mm"));
            let mut out = Vec::with_capacity(n);
            if first == 1 {
                out.push(needs[0].then(|| g.clone().unbind()));
            }
            // upstream's mm_mat1_backward / mm_mat2_backward: a column-major input (a
            // transposed weight) gets a column-major gradient
            out.push(if needs[first] {
                if column_major(&m1)? {
                    let gt = d.call(t, [g.clone()])?;
                    some(d.call(t, [d.call(mm, [m2.clone(), gt])?])?)
                } else {
                    some(d.call(mm, [g.clone(), d.call(t, [m2.clone()])?])?)
                }
            } else {
                None
            });
            out.push(if needs[first + 1] {
                if column_major(&m2)? {
                    let gt = d.call(t, [g.clone()])?;
                    some(d.call(t, [d.call(mm, [gt, m1])?])?)
                } else {
                    some(d.call(mm, [d.call(t, [m1])?, g])?)
                }
            } else {
                None
            });
            out
        }
        Kind::Mul => {
            let mul = intern!(py, "mul.Tensor");
            let a = if needs[0] {
                let other = need!(saved_tensor(py, &sv, intern!(py, "other"))?);
                some(d.call(mul, [g.clone(), other])?)
            } else {
                None
            };
            let b = if needs.get(1).copied().unwrap_or(false) {
                let me = need!(saved_tensor(py, &sv, intern!(py, "self"))?);
                some(d.call(mul, [g, me])?)
            } else {
                None
            };
            vec![a, b]
        }
        Kind::Add | Kind::Sub => {
            if !is_one(saved(&sv, intern!(py, "alpha"))?.as_ref()) {
                return Ok(None);
            }
            let b = if needs.get(1).copied().unwrap_or(false) {
                if kind == Kind::Add {
                    Some(g.clone().unbind())
                } else {
                    some(d.call(intern!(py, "neg"), [g.clone()])?)
                }
            } else {
                None
            };
            vec![Some(g.unbind()), b]
        }
        Kind::Neg => vec![some(d.call(intern!(py, "neg"), [g])?)],
        Kind::Relu => {
            let r = need!(saved_tensor(py, &sv, intern!(py, "result"))?);
            let zero = 0i64.into_pyobject(py)?.into_any();
            vec![some(
                d.call(intern!(py, "threshold_backward"), [g, r, zero])?,
            )]
        }
        Kind::Slice => {
            // the gradient placed in zeros of the input's length along `dim` (step 1 only)
            let sizes = need!(node.borrow().arg_sizes(py, "self")?);
            let nd = sizes.len() as i64;
            let step = saved(&sv, intern!(py, "step"))?;
            if nd == 0 || step.is_some_and(|s| s.extract::<i64>().ok() != Some(1)) {
                return Ok(None);
            }
            let dim = need!(saved(&sv, intern!(py, "dim"))?)
                .extract::<i64>()?
                .rem_euclid(nd);
            let size = sizes[dim as usize];
            let start = match saved(&sv, intern!(py, "start"))? {
                Some(v) if !v.is_none() => v.extract::<i64>()?,
                _ => 0,
            };
            let start = if start < 0 { start + size } else { start }.clamp(0, size);
            let gn = g.downcast::<TensorBase>()?.borrow().meta.sizes[dim as usize];
            let mut pad = vec![0i64; 2 * (nd - 1 - dim) as usize];
            pad.extend([start, size - start - gn]);
            let pad = pyo3::types::PyList::new(py, pad)?.into_any();
            let zero = 0i64.into_pyobject(py)?.into_any();
            vec![some(
                d.call(intern!(py, "constant_pad_nd"), [g, pad, zero])?,
            )]
        }
        Kind::Cat => {
            // one narrow of the gradient per input, a legacy empty input ([0]) skipped
            let metas = need!(node.borrow().arg_list_sizes(py, "tensors")?);
            let nd = g.downcast::<TensorBase>()?.borrow().meta.sizes.len() as i64;
            if nd == 0 {
                return Ok(None);
            }
            let dim = need!(saved(&sv, intern!(py, "dim"))?)
                .extract::<i64>()?
                .rem_euclid(nd);
            let narrow = intern!(py, "narrow");
            let mut out = Vec::new();
            let mut off = 0i64;
            for sizes in metas {
                let sizes = need!(sizes);
                if sizes.len() == 1 && sizes[0] == 0 && nd != 1 {
                    out.push(None);
                    continue;
                }
                let len = *need!(sizes.get(dim as usize));
                let args = [
                    g.clone(),
                    dim.into_pyobject(py)?.into_any(),
                    off.into_pyobject(py)?.into_any(),
                    len.into_pyobject(py)?.into_any(),
                ];
                out.push(some(d.call(narrow, args)?));
                off += len;
            }
            out
        }
        Kind::Rsqrt => {
            // `-0.5 * g` binds as g.__rmul__: mul.Tensor(g, wrapped -0.5)
            let r = need!(saved_tensor(py, &sv, intern!(py, "result"))?);
            let mul = intern!(py, "mul.Tensor");
            let half = wrapped(py, (-0.5f64).into_pyobject(py)?.into_any())?;
            let mut x = d.call(mul, [g, half])?;
            for _ in 0..3 {
                x = d.call(mul, [x, r.clone()])?;
            }
            vec![some(x)]
        }
        Kind::PowScalar => {
            let e = need!(saved(&sv, intern!(py, "exponent"))?);
            // an int or a float (bool and complex keep the Python formula), and not 0 (zeros)
            let is_int = e.is_exact_instance_of::<pyo3::types::PyInt>();
            if !(is_int || e.is_exact_instance_of::<pyo3::types::PyFloat>()) || !e.is_truthy()? {
                return Ok(None);
            }
            let x = need!(saved_tensor(py, &sv, intern!(py, "self"))?);
            let e1 = e.sub(1)?; // int stays int, as in Python
            let p = d.call(intern!(py, "pow.Tensor_Scalar"), [x, e1])?;
            let mul = intern!(py, "mul.Tensor");
            let q = d.call(mul, [p, wrapped(py, e)?])?; // `e * p`: p.__rmul__(e)
            vec![some(d.call(mul, [g, q])?)]
        }
        Kind::MeanDim => {
            let sizes = need!(node.borrow().arg_sizes(py, "self")?);
            let nd = sizes.len() as i64;
            let dim = saved(&sv, intern!(py, "dim"))?;
            let keepdim = match saved(&sv, intern!(py, "keepdim"))? {
                Some(k) => k.is_truthy()?,
                None => false,
            };
            // reductions.py `_dims`: every dim for None or [], else each wrapped, sorted
            let mut dims: Vec<i64> = match dim {
                _ if nd == 0 => vec![],
                None => (0..nd).collect(),
                Some(v) if v.is_none() => (0..nd).collect(),
                Some(v) => match v.extract::<i64>() {
                    Ok(i) => vec![i.rem_euclid(nd)],
                    Err(_) => {
                        let l: Vec<i64> = need!(v.extract().ok());
                        if l.is_empty() {
                            (0..nd).collect()
                        } else {
                            l.iter().map(|i| i.rem_euclid(nd)).collect()
                        }
                    }
                },
            };
            dims.sort_unstable();
            let mut x = g;
            if !keepdim && nd > 0 {
                for &k in &dims {
                    x = d.call(
                        intern!(py, "unsqueeze"),
                        [x, k.into_pyobject(py)?.into_any()],
                    )?;
                }
            }
            let count: i64 = dims.iter().map(|&k| sizes[k as usize]).product();
            let size_list = pyo3::types::PyList::new(py, &sizes)?.into_any();
            let no = false.into_pyobject(py)?.to_owned().into_any();
            let x = d.call(intern!(py, "expand"), [x, size_list, no])?;
            let n = wrapped(py, count.into_pyobject(py)?.into_any())?;
            vec![some(d.call(intern!(py, "div.Tensor"), [x, n])?)]
        }
    };
    if out.len() != n {
        return Ok(None);
    }
    RUNS.fetch_add(1, Ordering::Relaxed);
    Ok(Some(out))
}

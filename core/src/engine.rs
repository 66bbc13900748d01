//! The backward engine's loop (`autograd/engine.py` `_execute`, natively): dependency counts over
//! the nodes reachable from the roots, a node run once every gradient for it has arrived (the
//! most recently created first among those ready), incoming gradients summed per output slot,
//! checked against the receiving node's output metadata, saved values released after a node
//! runs unless the graph is kept. What stays in Python is called from here: each node's
//! `_tn_apply` (its formula or a custom Function), hooks, accumulation into a leaf's `.grad`,
//! and the rare reshaping of a gradient (`_validate_one`: broadcast reduction, dtype cast, the
//! error messages).

use std::collections::{BinaryHeap, HashMap, HashSet};

use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::graph::Node;
use crate::tensor::TensorBase;

type Key = usize;
/// A node on the depth-first stack: the node, its edges, the next edge to look at.
type Frame<'py> = (Bound<'py, PyAny>, Vec<(Option<PyObject>, i64)>, usize);

fn key(n: &Bound<'_, PyAny>) -> Key {
    n.as_ptr() as usize
}

/// The edges of a node, as (next node, output_nr).
fn edges_of(py: Python<'_>, n: &Bound<'_, Node>) -> Vec<(Option<PyObject>, i64)> {
    n.borrow()
        .edges()
        .iter()
        .map(|(x, nr)| (x.as_ref().map(|x| x.clone_ref(py)), *nr))
        .collect()
}

struct Pending {
    node: PyObject,
    grads: Vec<Option<PyObject>>,
}

/// `_execute(task, roots, targets, accumulate_grad, inputs)` minus the final accumulation into
/// non-leaf inputs, which engine.py does on the returned captures. `py_helpers` is engine.py's
/// `(AccumulateGrad, tensor_pre_hooks, pre_hooks, post_hooks, accumulate_into_leaf,
/// validate_one, validate_all)`; `check_nan` is anomaly mode's NaN check (then every gradient
/// goes through `validate_all`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _tn_execute<'py>(
    py: Python<'py>,
    task: &Bound<'py, PyAny>,
    roots: &Bound<'py, PyList>,
    targets: &Bound<'py, PyList>,
    accumulate_grad: bool,
    keep_graph: bool,
    create_graph: bool,
    check_nan: bool,
    py_helpers: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyDict>> {
    let acc_cls = py_helpers.get_item(0)?;
    let tensor_pre_hooks = py_helpers.get_item(1)?;
    let pre_hooks = py_helpers.get_item(2)?;
    let post_hooks = py_helpers.get_item(3)?;
    let accumulate_into_leaf = py_helpers.get_item(4)?;
    let validate_one = py_helpers.get_item(5)?;
    let validate_all = py_helpers.get_item(6)?;

    // roots: ((node, nr), grad)
    let mut root_list: Vec<(Bound<'py, PyAny>, i64, Bound<'py, PyAny>)> = Vec::new();
    for r in roots.iter() {
        let r = r.downcast_into::<PyTuple>()?;
        let e = r.get_item(0)?.downcast_into::<PyTuple>()?;
        root_list.push((e.get_item(0)?, e.get_item(1)?.extract()?, r.get_item(1)?));
    }

    // reachability and dependency counts
    let mut deps: HashMap<Key, i64> = HashMap::new();
    let mut seen: HashSet<Key> = HashSet::new();
    let mut todo: Vec<Bound<'py, PyAny>> = root_list.iter().map(|r| r.0.clone()).collect();
    while let Some(n) = todo.pop() {
        if !seen.insert(key(&n)) {
            continue;
        }
        for (nxt, _) in edges_of(py, n.downcast::<Node>()?) {
            if let Some(nxt) = nxt {
                let nxt = nxt.into_bound(py);
                *deps.entry(key(&nxt)).or_insert(0) += 1;
                if !seen.contains(&key(&nxt)) {
                    todo.push(nxt);
                }
            }
        }
    }

    // which nodes must run: all, or those on a path to a target
    let mut captures: HashMap<Key, Vec<(usize, usize)>> = HashMap::new();
    let mut needed: Option<HashSet<Key>> = None;
    if !targets.is_empty() {
        let mut target_ids = HashSet::new();
        for (i, t) in targets.iter().enumerate() {
            let t = t.downcast_into::<PyTuple>()?;
            let n = t.get_item(0)?;
            let nr: usize = t.get_item(1)?.extract()?;
            captures.entry(key(&n)).or_default().push((nr, i));
            target_ids.insert(key(&n));
        }
        let mut need = HashSet::new();
        for n in postorder(py, root_list.iter().map(|r| r.0.clone()).collect())? {
            let k = key(&n);
            let feeds = edges_of(py, n.downcast::<Node>()?).iter().any(|(x, _)| {
                x.as_ref()
                    .is_some_and(|x| need.contains(&(x.as_ptr() as usize)))
            });
            if target_ids.contains(&k) || feeds {
                need.insert(k);
            }
        }
        needed = Some(need);
    }

    let mut pending: HashMap<Key, Pending> = HashMap::new();
    // (sequence number, smallest address first among equal ones): the most recent node first
    let mut ready: BinaryHeap<(i64, std::cmp::Reverse<Key>)> = BinaryHeap::new();

    let deliver = |node: &Bound<'py, PyAny>,
                   nr: usize,
                   g: Option<Bound<'py, PyAny>>,
                   pending: &mut HashMap<Key, Pending>,
                   deps: &mut HashMap<Key, i64>,
                   ready: &mut BinaryHeap<(i64, std::cmp::Reverse<Key>)>|
     -> PyResult<()> {
        let k = key(node);
        if needed.as_ref().is_some_and(|n| !n.contains(&k)) {
            return Ok(());
        }
        let nb = node.downcast::<Node>()?.borrow();
        let seq = nb._tn_seq;
        let p = match pending.entry(k) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(Pending {
                node: node.clone().unbind(),
                grads: (0..nb.num_outputs().max(1)).map(|_| None).collect(),
            }),
        };
        drop(nb);
        if let Some(g) = g {
            if nr >= p.grads.len() {
                p.grads.resize_with(nr + 1, || None);
            }
            p.grads[nr] = Some(match p.grads[nr].take() {
                None => g.unbind(),
                Some(old) => crate::door::_aten_dispatch(
                    py,
                    intern!(py, "add.Tensor"),
                    &PyTuple::new(
                        py,
                        [old.into_bound(py), g, 1i64.into_pyobject(py)?.into_any()],
                    )?,
                    None,
                )?,
            });
        }
        let left = deps.entry(k).or_insert(0);
        *left -= 1;
        if *left <= 0 {
            ready.push((seq, std::cmp::Reverse(k)));
        }
        Ok(())
    };

    for (n, _, _) in &root_list {
        *deps.entry(key(n)).or_insert(0) += 1;
    }
    for (n, nr, g) in &root_list {
        let g = (!g.is_none()).then(|| g.clone());
        deliver(n, *nr as usize, g, &mut pending, &mut deps, &mut ready)?;
    }

    let captured = PyDict::new(py);
    let prev_grad = crate::door::is_grad_enabled();
    crate::door::_set_grad_enabled(create_graph);
    let result = (|| -> PyResult<()> {
        let current = intern!(py, "current_node");
        while let Some((_, std::cmp::Reverse(k))) = ready.pop() {
            let Pending { node, grads } = pending.remove(&k).unwrap();
            let node = node.into_bound(py);
            task.setattr(current, &node)?;
            let is_acc = node.is_instance(&acc_cls)?;
            let hooked = node.downcast::<Node>()?.borrow()._tn_hooked;
            let mut grads: Vec<Option<PyObject>> = grads;
            if is_acc || hooked {
                let out = tensor_pre_hooks.call1((&node, to_list(py, &grads)?))?;
                grads = from_seq(&out)?;
            }
            if let Some(cs) = captures.get(&k) {
                for (nr, i) in cs {
                    let g = grads
                        .get(*nr)
                        .and_then(|g| g.as_ref())
                        .map(|g| g.clone_ref(py));
                    captured.set_item(*i, g)?;
                }
            }
            if is_acc {
                if accumulate_grad {
                    // moved into the call: the accumulator may steal a gradient nothing else holds
                    let g0 = grads.get_mut(0).and_then(|g| g.take());
                    drop(grads);
                    accumulate_into_leaf.call1((&node, g0, create_graph))?;
                }
                continue;
            }
            let edges = edges_of(py, node.downcast::<Node>()?);
            if !accumulate_grad && !targets.is_empty() && captures.contains_key(&k) {
                let need = needed.as_ref().unwrap();
                if !edges.iter().any(|(x, _)| {
                    x.as_ref()
                        .is_some_and(|x| need.contains(&(x.as_ptr() as usize)))
                }) {
                    continue; // a target reached: nothing below it is needed
                }
            }
            let native = node.downcast::<Node>()?.borrow().native;
            let native_outs = if native != crate::formulas::Kind::None
                && !hooked
                && !create_graph
                && !check_nan
            {
                crate::formulas::backward(py, native, node.downcast::<Node>()?, &grads)?
            } else {
                None
            };
            let outs = match native_outs {
                Some(outs) => {
                    let outs = check(py, &node, &edges, outs, &validate_one)?;
                    if !keep_graph {
                        Node::_tn_release_saved(node.downcast::<Node>()?)?;
                    }
                    outs
                }
                None => {
                    let grads_list = to_list(py, &grads)?;
                    let grads_list = if hooked {
                        pre_hooks
                            .call1((&node, grads_list))?
                            .downcast_into::<PyList>()?
                    } else {
                        grads_list
                    };
                    let applied = node.call_method1(
                        intern!(py, "_tn_apply"),
                        (grads_list.get_slice(0, grads_list.len()),),
                    )?;
                    let mut outs = validate(
                        py,
                        &node,
                        &edges,
                        applied,
                        check_nan,
                        &validate_one,
                        &validate_all,
                    )?;
                    if hooked {
                        let r = post_hooks.call1((&node, to_list(py, &outs)?, &grads_list))?;
                        outs = from_seq(&r)?;
                    }
                    if !keep_graph {
                        node.call_method0(intern!(py, "_tn_release"))?;
                    }
                    outs
                }
            };
            for ((nxt, nr), g) in edges.into_iter().zip(outs) {
                if let Some(nxt) = nxt {
                    deliver(
                        &nxt.into_bound(py),
                        nr as usize,
                        g.map(|g| g.into_bound(py)),
                        &mut pending,
                        &mut deps,
                        &mut ready,
                    )?;
                }
            }
        }
        Ok(())
    })();
    crate::door::_set_grad_enabled(prev_grad);
    task.setattr(intern!(py, "current_node"), py.None())?;
    result?;
    Ok(captured)
}

fn to_list<'py>(py: Python<'py>, v: &[Option<PyObject>]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(
        py,
        v.iter()
            .map(|g| g.as_ref().map_or_else(|| py.None(), |g| g.clone_ref(py))),
    )
}

fn from_seq(x: &Bound<'_, PyAny>) -> PyResult<Vec<Option<PyObject>>> {
    x.try_iter()?
        .map(|g| g.map(|g| (!g.is_none()).then(|| g.unbind())))
        .collect()
}

/// engine.py `_validate`: one gradient per edge, each of the receiving output's shape and dtype;
/// the ones that are not go through `validate_one` (which reduces, casts or raises), and every
/// one through `validate_all` under anomaly mode.
fn validate<'py>(
    py: Python<'py>,
    node: &Bound<'py, PyAny>,
    edges: &[(Option<PyObject>, i64)],
    applied: Bound<'py, PyAny>,
    check_nan: bool,
    validate_one: &Bound<'py, PyAny>,
    validate_all: &Bound<'py, PyAny>,
) -> PyResult<Vec<Option<PyObject>>> {
    if check_nan {
        return from_seq(&validate_all.call1((node, applied))?);
    }
    check(py, node, edges, from_seq(&applied)?, validate_one)
}

/// One gradient per edge, each of the receiving output's shape and dtype (`validate_one`
/// reduces, casts or raises for one that is not).
fn check<'py>(
    py: Python<'py>,
    node: &Bound<'py, PyAny>,
    edges: &[(Option<PyObject>, i64)],
    mut outs: Vec<Option<PyObject>>,
    validate_one: &Bound<'py, PyAny>,
) -> PyResult<Vec<Option<PyObject>>> {
    if outs.len() != edges.len() {
        let name: String = node.call_method0(intern!(py, "name"))?.extract()?;
        return Err(PyRuntimeError::new_err(format!(
            "function {name} returned an incorrect number of gradients (expected {}, got {})",
            edges.len(),
            outs.len()
        )));
    }
    for (i, (nxt, nr)) in edges.iter().enumerate() {
        let (Some(g), Some(nxt)) = (outs[i].as_ref(), nxt.as_ref()) else {
            continue;
        };
        let nxt = nxt.bind(py).downcast::<Node>()?.borrow();
        let Some(meta) = nxt.out_meta_at(*nr as usize) else {
            continue;
        };
        let fits = match g.bind(py).downcast::<TensorBase>() {
            Ok(t) => {
                let t = t.borrow();
                meta.describes(py, t.meta.dtype as i64, &t.meta.sizes)?
            }
            Err(_) => false,
        };
        let meta = if fits { None } else { Some(meta.to_py(py)?) };
        drop(nxt);
        if let Some(meta) = meta {
            let fixed = validate_one.call1((node, i, g.bind(py), meta))?;
            outs[i] = Some(fixed.unbind());
        }
    }
    Ok(outs)
}

/// The nodes reachable from `starts`, each after every node it leads to (depth first).
fn postorder<'py>(
    py: Python<'py>,
    starts: Vec<Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for s in starts {
        if !seen.insert(key(&s)) {
            continue;
        }
        let e = edges_of(py, s.downcast::<Node>()?);
        let mut stack: Vec<Frame<'py>> = vec![(s, e, 0)];
        while let Some(top) = stack.last_mut() {
            let mut pushed = None;
            while top.2 < top.1.len() {
                let i = top.2;
                top.2 += 1;
                if let Some(nxt) = &top.1[i].0 {
                    let nxt = nxt.bind(py).clone();
                    if seen.insert(key(&nxt)) {
                        pushed = Some(nxt);
                        break;
                    }
                }
            }
            match pushed {
                Some(nxt) => {
                    let e = edges_of(py, nxt.downcast::<Node>()?);
                    stack.push((nxt, e, 0));
                }
                None => {
                    let (n, _, _) = stack.pop().unwrap();
                    out.push(n);
                }
            }
        }
    }
    Ok(out)
}

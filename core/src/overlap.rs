//! Upstream's internal-overlap check for the tensors an operator writes (`assert_no_internal_overlap`,
//! which TensorIterator and most out=/in-place kernels run): a written tensor in which one memory
//! location stands for several elements — a dimension of size > 1 with stride 0, as `expand`
//! makes — is refused before the operator runs, instead of each element's result landing on the
//! same place (a silently wrong answer: `x.expand(3, 3).add_(1)` added 3 to each value of `x`).
//!
//! Which arguments each in-place operator writes comes from the schema table (`Tensor(a!)`
//! arguments), handed over once by the ops package (`_tn_set_written_arguments`, which leaves out
//! the operators that write no elements and the fills upstream leaves unchecked). out= overloads
//! are checked where they copy into `out`, after upstream's resize (ops/forms/out_variants.py). Only
//! in-place names (a base name ending in `_`) are looked up, so other calls pay one string test.

use std::collections::HashMap;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple};

use crate::tensor::TensorBase;

static WRITTEN: GILOnceCell<HashMap<String, Vec<usize>>> = GILOnceCell::new();

/// `{overload name: [positions of the arguments it writes]}`, once.
#[pyfunction]
pub fn _tn_set_written_arguments(py: Python<'_>, table: &Bound<'_, PyDict>) -> PyResult<usize> {
    let mut map = HashMap::new();
    for (k, v) in table.iter() {
        map.insert(k.extract::<String>()?, v.extract::<Vec<usize>>()?);
    }
    let n = map.len();
    let _ = WRITTEN.set(py, map);
    Ok(n)
}

fn may_write(op: &str) -> bool {
    op.split('.').next().unwrap_or(op).ends_with('_')
}

/// Upstream's `has_internal_overlap(t) == YES`: some dimension of size > 1 has stride 0.
fn internally_overlapping(t: &TensorBase) -> bool {
    t.meta
        .sizes
        .iter()
        .zip(&t.meta.strides)
        .any(|(&size, &stride)| size > 1 && stride == 0)
}

pub fn check(py: Python<'_>, op: &str, args: &Bound<'_, PyTuple>) -> PyResult<()> {
    if !may_write(op) {
        return Ok(());
    }
    let Some(table) = WRITTEN.get(py) else {
        return Ok(());
    };
    let Some(positions) = table.get(op) else {
        return Ok(());
    };
    for &i in positions {
        let Ok(item) = args.get_item(i) else { continue };
        if let Ok(t) = item.downcast::<TensorBase>() {
            if internally_overlapping(&t.borrow()) {
                return Err(PyRuntimeError::new_err(
                    "unsupported operation: more than one element of the written-to tensor refers to a single \
                     memory location. Please clone() the tensor before performing the operation.",
                ));
            }
        }
    }
    Ok(())
}

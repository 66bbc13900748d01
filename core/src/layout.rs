//! The memory layout of an elementwise result, as upstream's TensorIterator allocates it
//! (aten/src/ATen/TensorIterator.cpp: `compute_fast_setup_type`, `reorder_dimensions`,
//! `allocate_or_resize_outputs`): operands of one shape that are all contiguous, all
//! channels-last or all dense with equal strides give a result laid out the same way; otherwise
//! the result's dimensions are ordered as the inputs' strides order them (a transposed input
//! gives a transposed result). The Python meta steps and the native fast paths both use it, so
//! they agree on every result's strides.

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::tensor::{contiguous_strides, is_contiguous, TensorBase};

fn is_channels_last(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.len() != 4 {
        return false;
    }
    let mut expected = 1i64;
    for d in [1, 3, 2, 0] {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected *= sizes[d];
        }
    }
    true
}

fn channels_last_strides(sizes: &[i64]) -> Vec<i64> {
    let mut s = vec![0i64; 4];
    s[1] = 1;
    s[3] = sizes[1];
    s[2] = s[3] * sizes[3];
    s[0] = s[2] * sizes[2];
    s
}

/// c10's `compute_non_overlapping_and_dense`.
pub(crate) fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.len() == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    let mut perm: Vec<usize> = (0..sizes.len()).collect();
    perm.sort_by(|&a, &b| {
        use std::cmp::Ordering;
        match (sizes[a] < 2, sizes[b] < 2) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => strides[a].cmp(&strides[b]),
        }
    });
    let mut require = 1i64;
    for &d in &perm {
        if sizes[d] < 2 {
            return true;
        }
        if strides[d] != require {
            return false;
        }
        require *= sizes[d];
    }
    true
}

/// Strides of `sizes`/`strides` broadcast to `shape` (0 along broadcast dimensions).
fn broadcast_strides(sizes: &[i64], strides: &[i64], shape: &[i64]) -> Vec<i64> {
    let off = shape.len().saturating_sub(sizes.len());
    let mut out = vec![0i64; shape.len()];
    for i in 0..sizes.len().min(shape.len()) {
        if sizes[i] == shape[i + off] {
            out[i + off] = strides[i];
        }
    }
    out
}

/// The result strides for `shape` given the inputs' (sizes, strides); None means contiguous.
pub fn elementwise_strides(shape: &[i64], inputs: &[(&[i64], &[i64])]) -> Option<Vec<i64>> {
    let nd = shape.len();
    if nd < 2 || inputs.is_empty() {
        return None;
    }
    if inputs.iter().all(|(s, _)| *s == shape) {
        if inputs.iter().all(|(s, st)| is_contiguous(s, st)) {
            return None;
        }
        if inputs.iter().all(|(s, st)| is_channels_last(s, st)) {
            return Some(channels_last_strides(shape));
        }
        if inputs
            .iter()
            .all(|(s, st)| is_non_overlapping_and_dense(s, st))
        {
            let last = inputs[inputs.len() - 1].1;
            if inputs.iter().all(|(_, st)| *st == last) {
                return Some(last.to_vec());
            }
        }
    }
    let strides: Vec<Vec<i64>> = inputs
        .iter()
        .map(|(s, st)| broadcast_strides(s, st, shape))
        .collect();
    // 1: dim0 goes after dim1; -1: before; 0: no operand decides
    let should_swap = |d0: usize, d1: usize| -> i32 {
        for st in &strides {
            let (s0, s1) = (st[d0], st[d1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[d0] > shape[d1] {
                return 1;
            }
        }
        0
    };
    // perm[0] is the fastest-moving dimension; insertion sort tolerant of undecided pairs
    let mut perm: Vec<usize> = (0..nd).rev().collect();
    for i in 1..nd {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match should_swap(perm[d0], perm[d1]) {
                c if c > 0 => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                c if c < 0 => break,
                _ => {}
            }
        }
    }
    if perm.iter().enumerate().all(|(j, &p)| p == nd - 1 - j) {
        return None;
    }
    let mut out = vec![0i64; nd];
    let mut next = 1i64;
    for &p in &perm {
        out[p] = next;
        next = next.wrapping_mul(shape[p]);
    }
    Some(out)
}

/// `_tn_elementwise_strides(shape, inputs)`: the strides an elementwise result of `shape` takes
/// from its tensor inputs, or None for contiguous.
#[pyfunction]
pub fn _tn_elementwise_strides(
    shape: Vec<i64>,
    inputs: &Bound<'_, PyList>,
) -> PyResult<Option<Vec<i64>>> {
    let mut held = Vec::with_capacity(inputs.len());
    for t in inputs.iter() {
        let t = t.downcast::<TensorBase>()?.borrow();
        if !t.wrapped_number {
            held.push((t.meta.sizes.clone(), t.meta.strides.clone()));
        }
    }
    let views: Vec<(&[i64], &[i64])> = held
        .iter()
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    Ok(elementwise_strides(&shape, &views).filter(|s| *s != contiguous_strides(&shape)))
}

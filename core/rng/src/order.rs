//! The element order of upstream's `cpu_serial_kernel` over a nullary
//! TensorIterator (`aten/src/ATen/TensorIterator.cpp`, `reorder_dimensions`):
//! dimensions are sorted by increasing stride (ties: smaller size first), the
//! smallest-stride dimension varies fastest. For contiguous, channels-last and
//! other non-overlapping dense tensors this is plain memory order.

/// For each draw k (0-based), the row-major logical index of the element that
/// upstream's serial kernel writes with that draw. `sizes` and `strides` (in
/// elements) describe the destination tensor.
pub fn draw_order(sizes: &[usize], strides: &[isize]) -> Vec<usize> {
    assert_eq!(
        sizes.len(),
        strides.len(),
        "sizes and strides differ in length"
    );
    let ndim = sizes.len();
    let numel: usize = sizes.iter().product();
    if numel == 0 {
        return Vec::new();
    }
    // perm[0] is the fastest-moving dimension; start from the reversed order.
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    let should_swap = |d0: usize, d1: usize| -> i32 {
        let (s0, s1) = (strides[d0], strides[d1]);
        if s0 == 0 || s1 == 0 {
            return 0; // broadcast dimension: no opinion
        }
        match s0.cmp(&s1) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Greater => 1,
            // equal strides: the larger dimension goes behind
            std::cmp::Ordering::Equal => (sizes[d0] > sizes[d1]) as i32,
        }
    };
    for i in 1..ndim {
        let mut dim1 = i;
        let mut dim0 = i as isize - 1;
        while dim0 >= 0 {
            let c = should_swap(perm[dim0 as usize], perm[dim1]);
            if c > 0 {
                perm.swap(dim0 as usize, dim1);
                dim1 = dim0 as usize;
            } else if c < 0 {
                break;
            }
            dim0 -= 1;
        }
    }
    // row-major strides of the logical index
    let mut lstride = vec![1usize; ndim];
    for d in (0..ndim.saturating_sub(1)).rev() {
        lstride[d] = lstride[d + 1] * sizes[d + 1];
    }
    let mut out = Vec::with_capacity(numel);
    let mut idx = vec![0usize; ndim];
    for _ in 0..numel {
        out.push(idx.iter().zip(&lstride).map(|(i, s)| i * s).sum());
        for &d in &perm {
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// Writes `draws` (in draw order) into a row-major `logical` buffer.
pub fn scatter_draws<T: Copy>(draws: &[T], order: &[usize], logical: &mut [T]) {
    assert_eq!(draws.len(), order.len());
    for (v, &i) in draws.iter().zip(order) {
        logical[i] = *v;
    }
}

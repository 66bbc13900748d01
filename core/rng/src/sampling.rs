//! randperm (`aten/src/ATen/native/TensorFactories.cpp`), multinomial
//! (`aten/src/ATen/native/Distributions.cpp`,
//! `aten/src/ATen/native/cpu/MultinomialKernel.cpp`) and dropout
//! (`aten/src/ATen/native/Dropout.cpp`).

use crate::boxmuller::uniform_f64;
use crate::dist::exponential_;
use crate::elem::{Float, FloatKind};
use crate::{CpuGenerator, RngError};

/// Above this n upstream switches from the `random() % (n - i)` swap shuffle
/// to the inside-out Fisher–Yates with `random64() % (i + 1)`.
pub const RANDPERM_SMALL_N_LIMIT: u64 = u32::MAX as u64 / 20;

/// `torch.randperm(n)` (int64 output; other dtypes hold the same values).
pub fn randperm(gen: &mut CpuGenerator, n: usize) -> Vec<i64> {
    let mut r: Vec<i64> = Vec::with_capacity(n);
    if (n as u64) < RANDPERM_SMALL_N_LIMIT {
        r.extend(0..n as i64);
        for i in 0..n.saturating_sub(1) {
            let z = (gen.random() as u64 % (n - i) as u64) as usize;
            r.swap(i, z + i);
        }
    } else {
        r.resize(n, 0);
        for i in 0..n {
            let z = (gen.random64() % (i as u64 + 1)) as usize;
            r[i] = r[z];
            r[z] = i as i64;
        }
    }
    r
}

/// `torch.multinomial(probs, n_sample, replacement)` for probs of shape
/// `[n_categories]` (`n_dist = 1`) or `[n_dist, n_categories]`, row-major and
/// contiguous. Returns `n_dist * n_sample` category indices, row-major.
///
/// Without replacement, or with `n_sample == 1`, upstream uses the Gumbel trick:
/// `q = exponential_(1)` over the whole probs shape, `q = probs / q`, then
/// argmax (one sample) or the indices of the top-k (largest first). Otherwise
/// each sample is one `uniform<double>` (`random64()`) located by binary search
/// in the normalised cumulative sum (accumulated in the dtype; f16/bf16 in float).
pub fn multinomial<T: Float>(
    gen: &mut CpuGenerator,
    probs: &[T],
    n_dist: usize,
    n_categories: usize,
    n_sample: usize,
    replacement: bool,
) -> Result<Vec<i64>, RngError> {
    if probs.len() != n_dist * n_categories {
        return Err(RngError::new(
            "multinomial: probs length != n_dist * n_categories",
        ));
    }
    if n_sample == 0 {
        return Err(RngError::new("cannot sample n_sample <= 0 samples"));
    }
    if !replacement && n_sample > n_categories {
        return Err(RngError::new(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ));
    }
    if n_categories > (1 << 24) {
        return Err(RngError::new("number of categories cannot exceed 2^24"));
    }
    if n_dist * n_sample == 0 {
        return Ok(Vec::new());
    }
    if !replacement || n_sample == 1 {
        let valid = probs.iter().all(|p| {
            let v = p.to_f64();
            (0.0..f64::INFINITY).contains(&v)
        });
        if !valid {
            return Err(RngError::new(
                "probability tensor contains either `inf`, `nan` or element < 0",
            ));
        }
        for row in probs.chunks(n_categories) {
            if row.iter().all(|p| p.to_f64() == 0.0) {
                return Err(RngError::new(
                    "invalid multinomial distribution (sum of probabilities <= 0)",
                ));
            }
        }
        let mut q: Vec<T> = vec![T::from_f64(0.0); probs.len()];
        exponential_(gen, &mut q, 1.0)?;
        for (qv, p) in q.iter_mut().zip(probs) {
            // f64 divides in double; f32 in float; Half/BFloat16 in float, rounded back
            *qv = match T::KIND {
                FloatKind::F64 => T::from_f64(p.to_f64() / qv.to_f64()),
                _ => T::from_f32(p.to_f32() / qv.to_f32()),
            };
        }
        let mut result = Vec::with_capacity(n_dist * n_sample);
        for row in q.chunks(n_categories) {
            let vals: Vec<f64> = row.iter().map(|v| v.to_f64()).collect();
            if n_sample == 1 {
                // argmax: first maximum, NaN counts as the maximum
                let mut best = 0usize;
                for (i, &v) in vals.iter().enumerate() {
                    let b = vals[best];
                    if b.is_nan() {
                        break;
                    }
                    if v.is_nan() || v > b {
                        best = i;
                    }
                }
                result.push(best as i64);
            } else {
                // topk(largest, sorted): descending, NaN first; equal values keep
                // index order (upstream's order among exact ties may differ).
                let mut idx: Vec<usize> = (0..n_categories).collect();
                idx.sort_by(|&a, &b| {
                    let (x, y) = (vals[a], vals[b]);
                    match (x.is_nan(), y.is_nan()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => std::cmp::Ordering::Less,
                        (false, true) => std::cmp::Ordering::Greater,
                        _ => y.partial_cmp(&x).unwrap(),
                    }
                });
                result.extend(idx[..n_sample].iter().map(|&i| i as i64));
            }
        }
        return Ok(result);
    }

    let mut result = Vec::with_capacity(n_dist * n_sample);
    for row in probs.chunks(n_categories) {
        // f64 accumulates in double; f32 in float; f16/bf16 in float too
        let mut cum: Vec<f64> = match T::KIND {
            FloatKind::F64 => {
                cumulative(row.iter().map(|p| p.to_f64()), |s, v| s + v, |c, s| c / s)?
            }
            _ => cumulative(row.iter().map(|p| p.to_f32()), |s, v| s + v, |c, s| c / s)?,
        };
        for _ in 0..n_sample {
            let u = uniform_f64(gen);
            cum[n_categories - 1] = 1.0;
            let (mut left, mut right) = (0usize, n_categories);
            while right > left {
                let mid = left + (right - left) / 2;
                if cum[mid] < u {
                    left = mid + 1;
                } else {
                    right = mid;
                }
            }
            result.push(left as i64);
        }
    }
    Ok(result)
}

/// Normalised running sum in the accumulation type `A`, widened to f64 for the
/// comparisons (`cum_prob < uniform_sample` promotes the float to double).
fn cumulative<A>(
    vals: impl Iterator<Item = A>,
    add: impl Fn(A, A) -> A,
    div: impl Fn(A, A) -> A,
) -> Result<Vec<f64>, RngError>
where
    A: Copy + Into<f64> + PartialOrd + Default,
{
    let mut sum = A::default();
    let mut cum: Vec<A> = Vec::new();
    for v in vals {
        let vf: f64 = v.into();
        if !(vf >= 0.0) {
            return Err(RngError::new(
                "invalid multinomial distribution (encountering probability entry < 0)",
            ));
        }
        if !vf.is_finite() {
            return Err(RngError::new("invalid multinomial distribution (encountering probability entry = infinity or NaN)"));
        }
        sum = add(sum, v);
        cum.push(sum);
    }
    if !(sum.into() > 0.0) {
        return Err(RngError::new(
            "invalid multinomial distribution (sum of probabilities <= 0)",
        ));
    }
    Ok(cum.into_iter().map(|c| div(c, sum).into()).collect())
}

/// The dropout keep-mask: `bernoulli_(1 - p)` on a tensor shaped like the input
/// (one `random64()` per element, in the input's memory order).
pub fn dropout_mask(gen: &mut CpuGenerator, n: usize, p: f64) -> Result<Vec<bool>, RngError> {
    let mut m = vec![false; n];
    crate::dist::bernoulli_scalar_(gen, &mut m, 1.0 - p)?;
    Ok(m)
}

/// `torch.nn.functional.dropout(input, p, training)` on CPU (`_dropout_impl`):
/// `noise = empty_like(input).bernoulli_(1 - p); noise.div_(1 - p); input * noise`.
/// `input` is in draw order (memory order of the input tensor). No draws
/// happen when `p == 0`, `p == 1`, `!train` or the input is empty.
pub fn dropout<T: Float>(
    gen: &mut CpuGenerator,
    input: &[T],
    p: f64,
    train: bool,
) -> Result<Vec<T>, RngError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(RngError::new(format!(
            "dropout probability has to be between 0 and 1, but got {}",
            p
        )));
    }
    if p == 0.0 || !train || input.is_empty() {
        return Ok(input.to_vec());
    }
    if p == 1.0 {
        return Ok(input
            .iter()
            .map(|&x| mul::<T>(x, T::from_f64(0.0)))
            .collect());
    }
    let q = 1.0 - p;
    let mask = dropout_mask(gen, input.len(), p)?;
    let one = T::from_f64(1.0);
    let zero = T::from_f64(0.0);
    let scaled_one = match T::KIND {
        FloatKind::F64 => T::from_f64(1.0 / q),
        FloatKind::F32 => T::from_f32(1.0f32 / q as f32),
        // reduced types: opmath float division by the float scalar
        _ => T::from_f32(one.to_f32() / q as f32),
    };
    let scaled_zero = match T::KIND {
        FloatKind::F64 => T::from_f64(0.0 / q),
        _ => T::from_f32(zero.to_f32() / q as f32),
    };
    Ok(input
        .iter()
        .zip(mask)
        .map(|(&x, keep)| mul::<T>(x, if keep { scaled_one } else { scaled_zero }))
        .collect())
}

#[inline]
fn mul<T: Float>(a: T, b: T) -> T {
    match T::KIND {
        FloatKind::F64 => T::from_f64(a.to_f64() * b.to_f64()),
        _ => T::from_f32(a.to_f32() * b.to_f32()),
    }
}

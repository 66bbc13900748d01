//! Loss kernels: `nll_loss_forward` and `nll_loss_backward` for 1-D and 2-D inputs, as upstream's
//! CPU frames compute them (aten/src/ATen/native/LossNLL.cpp, `nll_loss_out_frame` and
//! `nll_loss_backward_out_frame`): every operation in the input's own dtype (a float16 sum is
//! rounded to float16 after each addition, as `c10::Half` arithmetic is), and the reduced loss
//! summed through upstream's cascade of eight partial sums, so the bits agree with upstream's.
//! The core's meta step has checked the shapes and allocated the outputs.

use torchnative_backend::abi::TnDtype;

use crate::dtype::{dtype_name, Elem, FloatElem};
use crate::kernel::{Call, KResult, Tensor};
use crate::nn::gather_vec;
use crate::{bail, dispatch_float, kernels};

kernels! {
    k_nll_loss_forward = "aten::nll_loss_forward" => |c| nll_forward(c);
    k_nll_loss_backward = "aten::nll_loss_backward" => |c| nll_backward(c);
}

const NONE: i64 = 0;
const MEAN: i64 = 1;

/// The class indices, in logical order (int64, or uint8 as upstream also reads).
fn targets(t: &Tensor) -> KResult<Vec<i64>> {
    unsafe {
        match t.dtype {
            TnDtype::Int64 => gather_vec(t, |v: i64| v),
            TnDtype::UInt8 => gather_vec(t, |v: u8| v as i64),
            d => bail!(
                runtime,
                "expected scalar type Long but found {}",
                dtype_name(d)
            ),
        }
    }
}

fn check_target(t: i64, classes: usize) -> KResult {
    if t < 0 || t as usize >= classes {
        bail!(index_error, "Target {t} is out of bounds.");
    }
    Ok(())
}

/// `x op y` in `T` itself: computed in its accumulation type, rounded back to `T`.
#[inline(always)]
fn in_t<T: FloatElem>(x: T, y: T, f: impl Fn(T::Acc, T::Acc) -> T::Acc) -> T {
    T::from_acc(f(x.to_acc(), y.to_acc()))
}

/// `nll_loss_forward(self, target, weight?, reduction, ignore_index) -> (output, total_weight)`.
fn nll_forward(c: &mut Call) -> KResult {
    let (out, total) = (c.out(0)?, c.out(1)?);
    let x = c.tensor(0)?;
    let target = targets(&c.tensor(1)?)?;
    let weight = c.opt_tensor(2)?;
    let reduction = c.int(3)?;
    let ignore = c.int(4)?;
    let classes = x.size(x.ndim() - 1);
    let rows = if x.ndim() == 2 { x.size(0) } else { 1 };
    if target.len() != rows {
        bail!(
            runtime,
            "nll_loss_forward: {} targets for {rows} rows",
            target.len()
        );
    }
    // element (row b, class k) of the input
    let (rs, cs) = if x.ndim() == 2 {
        (x.stride(0), x.stride(1))
    } else {
        (0, x.stride(0))
    };
    unsafe {
        dispatch_float!(x.dtype, "nll_loss_out_frame", T, _A => {
            let w: Option<Vec<T>> = match &weight {
                Some(t) => Some(gather_vec(t, |v: T| v)?),
                None => None,
            };
            let at = |b: usize, k: usize| -> T {
                (x.data as *const T).offset(b as isize * rs + k as isize * cs).read()
            };
            let wt = |k: usize| -> T { w.as_ref().map(|v| v[k]).unwrap_or(T::from_f64(1.0)) };
            let zero = T::from_f64(0.0);
            (total.data as *mut T).write(zero);
            if reduction == NONE && x.ndim() == 2 {
                let o = out.data as *mut T;
                for (b, &t) in target.iter().enumerate() {
                    let v = if t == ignore {
                        zero
                    } else {
                        check_target(t, classes)?;
                        let k = t as usize;
                        in_t(T::from_acc(-at(b, k).to_acc()), wt(k), |p, q| p * q)
                    };
                    o.offset(b as isize * out.stride(0)).write(v);
                }
                return Ok(());
            }
            let o = out.data as *mut T;
            if target.is_empty() {
                o.write(if reduction == MEAN { T::from_f64(f64::NAN) } else { zero });
                return Ok(());
            }
            let batch = target.len();
            const LEVELS: usize = 8;
            let ceil_log2 = if batch <= 1 { 0 } else { 64 - ((batch - 1) as u64).leading_zeros() as usize };
            let level_power = (ceil_log2 / LEVELS).max(4);
            let level_mask = (1usize << level_power) - 1;
            let mut loss = [zero; LEVELS];
            let mut wsum = [zero; LEVELS];
            let mut ignored = 0usize;
            for (b, &t) in target.iter().enumerate() {
                if t == ignore {
                    ignored += 1;
                    continue;
                }
                check_target(t, classes)?;
                let k = t as usize;
                let v = at(b, k);
                if w.is_some() {
                    let wk = wt(k);
                    loss[0] = in_t(loss[0], in_t(v, wk, |p, q| p * q), |p, q| p - q);
                    wsum[0] = in_t(wsum[0], wk, |p, q| p + q);
                } else {
                    loss[0] = in_t(loss[0], v, |p, q| p - q);
                }
                for j in 0..LEVELS - 1 {
                    if b & (level_mask << (j * level_power)) != 0 {
                        break;
                    }
                    wsum[j + 1] = in_t(wsum[j + 1], wsum[j], |p, q| p + q);
                    loss[j + 1] = in_t(loss[j + 1], loss[j], |p, q| p + q);
                    wsum[j] = zero;
                    loss[j] = zero;
                }
            }
            let sum = |parts: &[T; LEVELS]| parts.iter().fold(zero, |a, &p| in_t(a, p, |x, y| x + y));
            let total_w = if w.is_some() { sum(&wsum) } else { T::from_f64((batch - ignored) as f64) };
            let mut value = sum(&loss);
            if reduction == MEAN {
                value = in_t(value, total_w, |p, q| p / q);
            }
            o.write(value);
            (total.data as *mut T).write(total_w);
            Ok(())
        })
    }
}

/// `nll_loss_backward(grad_output, self, target, weight?, reduction, ignore_index, total_weight)
/// -> grad_input`: zeros, then each row's target class gets `-w * grad` (mean: divided by the
/// total weight first, as upstream).
fn nll_backward(c: &mut Call) -> KResult {
    let gi = c.out(0)?;
    let go = c.tensor(0)?;
    let x = c.tensor(1)?;
    let target = targets(&c.tensor(2)?)?;
    let weight = c.opt_tensor(3)?;
    let reduction = c.int(4)?;
    let ignore = c.int(5)?;
    let total = c.tensor(6)?;
    let classes = x.size(x.ndim() - 1);
    let (rs, cs) = if gi.ndim() == 2 {
        (gi.stride(0), gi.stride(1))
    } else {
        (0, gi.stride(0))
    };
    unsafe {
        dispatch_float!(x.dtype, "nll_loss_backward_out_frame", T, _A => {
            let zero = T::from_f64(0.0);
            let rows = if gi.ndim() == 2 { gi.size(0) } else { 1 };
            if target.len() != rows {
                bail!(runtime, "nll_loss_backward: {} targets for {rows} rows", target.len());
            }
            let g = gi.data as *mut T;
            for b in 0..rows {
                for k in 0..classes {
                    g.offset(b as isize * rs + k as isize * cs).write(zero);
                }
            }
            let w: Option<Vec<T>> = match &weight {
                Some(t) => Some(gather_vec(t, |v: T| v)?),
                None => None,
            };
            let put = |b: usize, k: usize, v: T| g.offset(b as isize * rs + k as isize * cs).write(v);
            if reduction == NONE && x.ndim() == 2 {
                let gov: Vec<T> = gather_vec(&go, |v: T| v)?;
                if gov.len() != rows {
                    bail!(runtime, "nll_loss_backward: {} gradients for {rows} rows", gov.len());
                }
                for (b, &t) in target.iter().enumerate() {
                    if t == ignore {
                        continue;
                    }
                    // upstream writes unchecked here (the forward checked); a direct call with
                    // a bad target raises instead of writing out of bounds
                    check_target(t, classes)?;
                    let k = t as usize;
                    let wk = w.as_ref().map(|v| v[k]).unwrap_or(T::from_f64(1.0));
                    put(b, k, in_t(T::from_acc(-wk.to_acc()), gov[b], |p, q| p * q));
                }
                return Ok(());
            }
            let gval = (go.data as *const T).read();
            let tw = (total.data as *const T).read();
            let scaled = if reduction == MEAN { in_t(gval, tw, |p, q| p / q) } else { gval };
            let grad = T::from_acc(-scaled.to_acc());
            for (b, &t) in target.iter().enumerate() {
                if t == ignore {
                    continue;
                }
                check_target(t, classes)?;
                let k = t as usize;
                put(b, k, match &w { Some(v) => in_t(v[k], grad, |p, q| p * q), None => grad });
            }
            Ok(())
        })
    }
}

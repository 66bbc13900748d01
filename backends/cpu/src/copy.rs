//! `copy_` (strided copy with dtype conversion) and `fill_.Scalar`.

use crate::dtype::Elem;
use crate::kernel::ScalarElem;
use crate::kernel::{Call, KResult, Tensor};
use crate::strided::{fill, map1};
use crate::{dispatch_all, kernels};
use torchnative_backend::abi::TnDtype;

kernels! {
    k_copy_ = "aten::copy_" => |c| copy(c);
    k_fill_scalar = "aten::fill_.Scalar" => |c| fill_scalar(c);
}

/// `copy_(Tensor(a!) self, Tensor src, bool non_blocking=False)`: `src` arrives broadcast to
/// `self`'s shape; dtypes may differ. `outs[0]` is `self`.
fn copy(c: &mut Call) -> KResult {
    let dst = c.tensor(0)?;
    let src = c.tensor(1)?;
    copy_cast(&dst, &src)
}

/// Copies `src` (same shape) into `dst` with torch's dtype conversion rules.
pub fn copy_cast(dst: &Tensor, src: &Tensor) -> KResult {
    let (dst, src) = (*dst, *src);
    if dst.numel() == 0 {
        return Ok(());
    }
    if dst.data == src.data && dst.strides == src.strides && dst.dtype == src.dtype {
        return Ok(());
    }
    unsafe {
        if dst.dtype == src.dtype {
            // Same dtype: move raw bits (no NaN canonicalisation, no conversion); bool bytes
            // are normalised to 0/1 as upstream's copy does.
            if dst.dtype == TnDtype::Bool {
                return map1(&dst, &src, |x: u8| (x != 0) as u8);
            }
            return match dst.itemsize() {
                1 => map1(&dst, &src, |x: u8| x),
                2 => map1(&dst, &src, |x: u16| x),
                4 => map1(&dst, &src, |x: u32| x),
                8 => map1(&dst, &src, |x: u64| x),
                _ => map1(&dst, &src, |x: u128| x),
            };
        }
        dispatch_all!(dst.dtype, "copy_", D => {
            dispatch_all!(src.dtype, "copy_", S => map1(&dst, &src, |x: S| x.cast::<D>()))
        })
    }
}

/// `fill_.Scalar(Tensor(a!) self, Scalar value)`.
fn fill_scalar(c: &mut Call) -> KResult {
    let dst = c.tensor(0)?;
    let v = c.scalar(1)?;
    unsafe { dispatch_all!(dst.dtype, "fill_", T => fill(&dst, v.checked::<T>()?)) }
}

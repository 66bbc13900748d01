//! `mm`, `bmm`, `addmm`.
//!
//! Batches of small floating-point products (under 400 multiply-adds each) take upstream's naive
//! kernel instead (`naive_product`), so their bits agree on every CPU.
//!
//! f32/f64 go straight to the `gemm` crate (candle-core's CPU matmul engine), which takes any
//! row and column stride for every operand, so transposed, sliced and expanded torch views are
//! multiplied in place without a copy. f16/bf16 are widened to f32 (contiguous copies), multiplied
//! with f32 accumulation and rounded once, as upstream accumulates reduced types in f32. Integer
//! dtypes use a plain triple loop with wrapping i64 arithmetic (the low bits are those of
//! upstream's accumulation in the dtype).

use crate::threads::gemm;
use torchnative_backend::abi::TnDtype;

use crate::dtype::{is_int, Elem};
use crate::kernel::ScalarElem;
use crate::kernel::{Call, KResult, Scalar, Tensor};
use crate::{bail, dispatch_int, kernels};

kernels! {
    k_mm = "aten::mm" => |c| mm(c);
    k_bmm = "aten::bmm" => |c| bmm(c);
    k_addmm = "aten::addmm" => |c| addmm(c);
}

/// A 2-d operand: base pointer and element strides (rows, cols).
#[derive(Copy, Clone)]
struct Mat {
    data: *mut u8,
    rows: usize,
    cols: usize,
    rs: isize,
    cs: isize,
}

fn mat(t: &Tensor, batch: Option<usize>) -> Mat {
    let nd = t.ndim();
    let (r, c) = (nd - 2, nd - 1);
    let off = batch
        .map(|b| b as isize * t.strides[0] as isize * t.itemsize() as isize)
        .unwrap_or(0);
    Mat {
        data: t.data.wrapping_offset(off),
        rows: t.size(r),
        cols: t.size(c),
        rs: t.stride(r),
        cs: t.stride(c),
    }
}

/// `out = beta_c * out + alpha_p * (a @ b)`; `read_out == false` ignores `out`'s contents
/// (upstream's `beta == 0` rule: NaN in `self` does not propagate).
// dispatch_int! instantiates the `as i64` widening for i64 too, where the cast is a no-op.
#[allow(clippy::unnecessary_cast)]
unsafe fn matmul(
    dt: TnDtype,
    out: Mat,
    a: Mat,
    b: Mat,
    read_out: bool,
    beta_c: Scalar,
    alpha_p: Scalar,
) -> KResult {
    let (m, n, k) = (out.rows, out.cols, a.cols);
    if a.rows != m || b.cols != n || b.rows != k {
        bail!(
            runtime,
            "mm: shapes [{}, {}] x [{}, {}] -> [{m}, {n}] do not match",
            a.rows,
            a.cols,
            b.rows,
            b.cols
        );
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    match dt {
        TnDtype::Float32 => {
            let (bc, ap): (f32, f32) = (beta_c.checked()?, alpha_p.checked()?);
            gemm_f::<f32>(out, a, b, read_out, bc, ap, k);
        }
        TnDtype::Float64 => {
            let (bc, ap): (f64, f64) = (beta_c.checked()?, alpha_p.checked()?);
            gemm_f::<f64>(out, a, b, read_out, bc, ap, k);
        }
        TnDtype::Float16 | TnDtype::BFloat16 => {
            // Widen to f32, multiply, round once.
            let (bc, ap): (f32, f32) = if dt == TnDtype::Float16 {
                (
                    beta_c.checked::<half::f16>()?.to_f32(),
                    alpha_p.checked::<half::f16>()?.to_f32(),
                )
            } else {
                (
                    beta_c.checked::<half::bf16>()?.to_f32(),
                    alpha_p.checked::<half::bf16>()?.to_f32(),
                )
            };
            let wa = widen(dt, a);
            let wb = widen(dt, b);
            let mut wo = if read_out {
                widen(dt, out)
            } else {
                vec![0f32; m * n]
            };
            let om = Mat {
                data: wo.as_mut_ptr() as *mut u8,
                rows: m,
                cols: n,
                rs: n as isize,
                cs: 1,
            };
            let am = Mat {
                data: wa.as_ptr() as *mut u8,
                rows: m,
                cols: k,
                rs: k as isize,
                cs: 1,
            };
            let bm = Mat {
                data: wb.as_ptr() as *mut u8,
                rows: k,
                cols: n,
                rs: n as isize,
                cs: 1,
            };
            gemm_f::<f32>(om, am, bm, read_out, bc, ap, k);
            for i in 0..m {
                for j in 0..n {
                    let v = wo[i * n + j];
                    let p = out
                        .data
                        .wrapping_offset((i as isize * out.rs + j as isize * out.cs) * 2);
                    if dt == TnDtype::Float16 {
                        (p as *mut half::f16).write(half::f16::from_f32(v));
                    } else {
                        (p as *mut half::bf16).write(half::bf16::from_f32(v));
                    }
                }
            }
        }
        dt if is_int(dt) => dispatch_int!(dt, "addmm_impl_cpu_", T => {
            let bc: i64 = beta_c.checked::<T>()?.to_f64() as i64;
            let ap: i64 = alpha_p.checked::<T>()?.to_f64() as i64;
            let at = |x: &Mat, i: usize, j: usize| -> *mut T { x.data.wrapping_offset((i as isize * x.rs + j as isize * x.cs) * std::mem::size_of::<T>() as isize) as *mut T };
            for i in 0..m {
                for j in 0..n {
                    let mut acc: i64 = 0;
                    for l in 0..k {
                        acc = acc.wrapping_add((at(&a, i, l).read() as i64).wrapping_mul(at(&b, l, j).read() as i64));
                    }
                    let mut v = acc.wrapping_mul(ap);
                    if read_out {
                        v = v.wrapping_add((at(&out, i, j).read() as i64).wrapping_mul(bc));
                    }
                    at(&out, i, j).write(T::from_i64(v));
                }
            }
        }),
        other => return Err(crate::kernel::unsupported_dtype("addmm_impl_cpu_", other)),
    }
    Ok(())
}

/// Copies a strided f16/bf16 matrix into a contiguous f32 buffer.
unsafe fn widen(dt: TnDtype, x: Mat) -> Vec<f32> {
    let mut v = Vec::with_capacity(x.rows * x.cols);
    for i in 0..x.rows {
        for j in 0..x.cols {
            let p = x
                .data
                .wrapping_offset((i as isize * x.rs + j as isize * x.cs) * 2);
            v.push(if dt == TnDtype::Float16 {
                (p as *const half::f16).read().to_f32()
            } else {
                (p as *const half::bf16).read().to_f32()
            });
        }
    }
    v
}

/// The `gemm` call for f32/f64: `dst = beta_c * dst + alpha_p * lhs @ rhs`.
unsafe fn gemm_f<T: Elem>(
    out: Mat,
    a: Mat,
    b: Mat,
    read_out: bool,
    beta_c: T,
    alpha_p: T,
    k: usize,
) {
    let (m, n) = (out.rows, out.cols);
    if k == 0 {
        // An empty product: dst = beta_c * dst, or 0.
        for i in 0..m {
            for j in 0..n {
                let p = out.data.wrapping_offset(
                    (i as isize * out.rs + j as isize * out.cs) * std::mem::size_of::<T>() as isize,
                ) as *mut T;
                let v = if read_out {
                    scale(p.read(), beta_c)
                } else {
                    T::default()
                };
                p.write(v);
            }
        }
        return;
    }
    gemm(
        m,
        n,
        k,
        out.data as *mut T,
        out.cs,
        out.rs,
        read_out,
        a.data as *const T,
        a.cs,
        a.rs,
        b.data as *const T,
        b.cs,
        b.rs,
        beta_c,
        alpha_p,
    );
}

fn scale<T: Elem>(x: T, s: T) -> T {
    // Exact in f64 for f32 operands, so this is the correctly rounded product.
    T::from_f64(x.to_f64() * s.to_f64())
}

fn check_same(op: &str, ts: &[&Tensor]) -> KResult {
    let dt = ts[0].dtype;
    for t in ts {
        if t.dtype != dt {
            bail!(
                runtime,
                "{op}: expected operands of the same dtype, got {:?} and {:?}",
                dt,
                t.dtype
            );
        }
    }
    Ok(())
}

/// `mm(self, mat2)`.
fn mm(c: &mut Call) -> KResult {
    let (out, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?);
    check_same("mm", &[&out, &a, &b])?;
    if a.ndim() != 2 || b.ndim() != 2 || out.ndim() != 2 {
        bail!(runtime, "mm: expected 2-d tensors");
    }
    unsafe {
        matmul(
            out.dtype,
            mat(&out, None),
            mat(&a, None),
            mat(&b, None),
            false,
            Scalar::Int(0),
            Scalar::Int(1),
        )
    }
}

/// `bmm(self, mat2)`: one gemm per batch.
fn bmm(c: &mut Call) -> KResult {
    let (out, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?);
    check_same("bmm", &[&out, &a, &b])?;
    if a.ndim() != 3 || b.ndim() != 3 || out.ndim() != 3 {
        bail!(runtime, "bmm: expected 3-d tensors");
    }
    // Upstream multiplies batches of fewer than 400 multiply-adds per matrix with its naive
    // `baddbmm_cpu_kernel`, whatever the CPU; its rounding is reproduced exactly.
    let (m, n, k) = (out.size(1), out.size(2), a.size(2));
    let small = m * n * k < 400 && a.size(1) == m && b.size(1) == k && b.size(2) == n;
    for i in 0..out.size(0) {
        let (o, x, y) = (mat(&out, Some(i)), mat(&a, Some(i)), mat(&b, Some(i)));
        unsafe {
            match out.dtype {
                TnDtype::Float32 if small => naive_product(o, x, y, |v: f32| v, |v| v),
                TnDtype::Float64 if small => naive_product(o, x, y, |v: f64| v, |v| v),
                TnDtype::Float16 if small => {
                    naive_product(o, x, y, |v: half::f16| v.to_f32(), half::f16::from_f32)
                }
                TnDtype::BFloat16 if small => {
                    naive_product(o, x, y, |v: half::bf16| v.to_f32(), half::bf16::from_f32)
                }
                dt => matmul(dt, o, x, y, false, Scalar::Int(0), Scalar::Int(1))?,
            }
        };
    }
    Ok(())
}

/// `out = a @ b` as upstream's `baddbmm_cpu_kernel` computes it: each element a sum over k in
/// order, in the op-math type (f32 for f16/bf16), separate multiply and add (no FMA: Rust does
/// not contract them), rounded to the dtype once.
unsafe fn naive_product<S: Copy, O>(out: Mat, a: Mat, b: Mat, load: fn(S) -> O, store: fn(O) -> S)
where
    O: Copy + Default + std::ops::Add<Output = O> + std::ops::Mul<Output = O>,
{
    let sz = std::mem::size_of::<S>() as isize;
    let at = |x: &Mat, i: usize, j: usize| {
        x.data
            .wrapping_offset((i as isize * x.rs + j as isize * x.cs) * sz) as *mut S
    };
    for i in 0..out.rows {
        for j in 0..out.cols {
            let mut acc = O::default();
            for l in 0..a.cols {
                acc = acc + load(at(&a, i, l).read()) * load(at(&b, l, j).read());
            }
            at(&out, i, j).write(store(acc));
        }
    }
}

/// `addmm(self, mat1, mat2, *, beta=1, alpha=1)`: `beta * self + alpha * (mat1 @ mat2)`, `self`
/// broadcast to the output by the core. `beta == 0` ignores `self` (NaN included), as upstream.
fn addmm(c: &mut Call) -> KResult {
    let (out, s, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let (beta, alpha) = (c.scalar(3)?, c.scalar(4)?);
    check_same("addmm", &[&out, &s, &a, &b])?;
    if out.ndim() != 2 || s.sizes != out.sizes {
        bail!(
            runtime,
            "addmm: `self` must arrive broadcast to the output shape {:?}, got {:?}",
            out.sizes,
            s.sizes
        );
    }
    let beta_zero = beta.as_f64() == 0.0;
    unsafe {
        if !beta_zero && s.data != out.data {
            // out = self (then out = beta * out + alpha * a @ b).
            match out.itemsize() {
                1 => crate::strided::map1(&out, &s, |x: u8| x)?,
                2 => crate::strided::map1(&out, &s, |x: u16| x)?,
                4 => crate::strided::map1(&out, &s, |x: u32| x)?,
                _ => crate::strided::map1(&out, &s, |x: u64| x)?,
            }
        }
        matmul(
            out.dtype,
            mat(&out, None),
            mat(&a, None),
            mat(&b, None),
            !beta_zero,
            beta,
            alpha,
        )
    }
}

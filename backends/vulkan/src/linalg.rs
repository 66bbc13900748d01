//! mm, bmm, addmm, baddbmm: one invocation per output element, a dot product over K in order
//! (float32 only; integer matmuls are refused by name). Every operand may be strided
//! (transposed weights reach the kernel without a copy).

use torchnative_abi::TnDtype;

use crate::ew::strides_over;
use crate::gen::{lit, Ct, Kernel, Operand};
use crate::kernel::{runtime, unsupported, Call, KResult, View};
use crate::vk_kernels;

vk_kernels! {
    k_mm = "aten::mm" => |c| { let (o, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?); matmul(&o, &a, &b, None) };
    k_bmm = "aten::bmm" => |c| { let (o, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?); matmul(&o, &a, &b, None) };
    k_addmm = "aten::addmm" => |c| addmm(c);
    k_baddbmm = "aten::baddbmm" => |c| addmm(c);
}

/// `[B, M, N]` strides of a 2-d or 3-d matrix view (2-d: batch stride 0).
fn batched(v: &View) -> KResult<(i64, i64, i64, i64, i64, i64)> {
    match v.ndim() {
        2 => Ok((1, v.sizes[0], v.sizes[1], 0, v.strides[0], v.strides[1])),
        3 => Ok((
            v.sizes[0],
            v.sizes[1],
            v.sizes[2],
            v.strides[0],
            v.strides[1],
            v.strides[2],
        )),
        n => Err(runtime(format!(
            "matmul: expected a 2-d or 3-d tensor, got {n}-d"
        ))),
    }
}

/// `out = beta * c + alpha * (a @ b)` (`c` None: `out = a @ b`).
pub fn matmul(out: &View, a: &View, b: &View, c: Option<(&View, f64, f64)>) -> KResult {
    for t in [out, a, b] {
        if t.dtype != TnDtype::Float32 {
            return Err(unsupported("addmm_impl_cpu_", t.dtype));
        }
    }
    let (bn, m, k, sab, sam, sak) = batched(a)?;
    let (_, _, n, sbb, sbk, sbn) = batched(b)?;
    let (_, _, _, sob, som, son) = batched(out)?;
    let shape = vec![bn, m, n];
    if out.numel() == 0 {
        return Ok(());
    }
    if k == 0 {
        // An empty contraction: a @ b is zeros.
        return match c {
            Some((cv, beta, _)) if beta != 0.0 => crate::ew::map(
                out,
                &[cv],
                &format!("st0(b0, {} * ld1(b1));", lit(Ct::F, beta)),
            ),
            _ => crate::ew::fill(out, crate::kernel::Scalar::Float(0.0)),
        };
    }
    let mut body = String::from(
        "var acc = 0.0;\n  for (var j = 0u; j < NINNER; j = j + 1u) { acc = acc + ld1(b1 + ioff1(j)) * ld2(b2 + ioff2(j)); }\n",
    );
    let mut ops = vec![
        Operand::output(out, vec![sob, som, son], vec![0]),
        Operand::input(a, vec![sab, sam, 0], vec![sak]),
        Operand::input(b, vec![sbb, 0, sbn], vec![sbk]),
    ];
    match c {
        Some((cv, beta, alpha)) if beta != 0.0 => {
            if cv.dtype != TnDtype::Float32 {
                return Err(unsupported("addmm_impl_cpu_", cv.dtype));
            }
            // `self` broadcasts to [M, N] (addmm) or [B, M, N] (baddbmm).
            let cs = if cv.ndim() <= 2 {
                let s = strides_over(cv, &[m, n])?;
                vec![0, s[0], s[1]]
            } else {
                strides_over(cv, &shape)?
            };
            ops.push(Operand::input(cv, cs, vec![0]));
            let (be, al) = (lit(Ct::F, beta), lit(Ct::F, alpha));
            body += &if beta == 1.0 && alpha == 1.0 {
                "  st0(b0, ld3(b3) + acc);".to_string()
            } else {
                format!("  st0(b0, {be} * ld3(b3) + {al} * acc);")
            };
        }
        Some((_, _, alpha)) if alpha != 1.0 => {
            body += &format!("  st0(b0, {} * acc);", lit(Ct::F, alpha));
        }
        _ => body += "  st0(b0, acc);",
    }
    let mut kern = Kernel::new(body);
    kern.outer = shape;
    kern.inner = vec![k];
    kern.operands = ops;
    kern.run()
}

fn addmm(c: &mut Call) -> KResult {
    let (out, s, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let (beta, alpha) = (c.scalar(3)?.as_f64(), c.scalar(4)?.as_f64());
    matmul(&out, &a, &b, Some((&s, beta, alpha)))
}

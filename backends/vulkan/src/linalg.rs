//! mm, bmm, addmm, baddbmm: one invocation per output element, a dot product over K in order
//! (float32 only; integer matmuls are refused by name). Every operand may be strided
//! (transposed weights reach the kernel without a copy).

use torchnative_backend::abi::TnDtype;

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
    // Tiled: a 16x16 workgroup computes a 64x64 block of one batch, 4x4 outputs per invocation,
    // through 64x16 / 16x64 tiles of A and B in workgroup memory. Each output is still the dot
    // product over K in order (the same sum as the plain loop).
    let mut ops = vec![
        Operand::output(out, vec![0], vec![]),
        Operand::input(a, vec![0], vec![]),
        Operand::input(b, vec![0], vec![]),
    ];
    let mut result = "r".to_string();
    let mut kern = Kernel::new("");
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
            ops.push(Operand::input(cv, vec![0], vec![]));
            kern.scalar_i(12, cs[0])
                .scalar_i(13, cs[1])
                .scalar_i(14, cs[2]);
            let cval = "ld3(base3() + batch * s_i(12) + gm * s_i(13) + gn * s_i(14))";
            result = if beta == 1.0 && alpha == 1.0 {
                format!("{cval} + r")
            } else {
                format!("{} * {cval} + {} * r", lit(Ct::F, beta), lit(Ct::F, alpha))
            };
        }
        Some((_, _, alpha)) if alpha != 1.0 => {
            result = format!("{} * r", lit(Ct::F, alpha));
        }
        _ => {}
    }
    // One invocation computes a 4x4 block of outputs of one batch from registers (no workgroup
    // memory: barriers are costly on CPU implementations such as lavapipe); each output is the
    // dot product over K in order (the same sum as the plain loop).
    let main = format!(
        "@compute @workgroup_size(8, 8)\n\
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
  let M = s_i(0); let N = s_i(1); let K = s_i(2);\n\
  let batch = i32(gid.z);\n\
  let mb = i32(gid.y) * 4; let nb = i32(gid.x) * 4;\n\
  if (mb >= M || nb >= N) {{ return; }}\n\
  let a0 = base1() + batch * s_i(3); let b0 = base2() + batch * s_i(6);\n\
  let sam = s_i(4); let sak = s_i(5); let sbk = s_i(7); let sbn = s_i(8);\n\
  var ar: array<i32, 4>; var bc: array<i32, 4>;\n\
  for (var t = 0; t < 4; t = t + 1) {{ ar[t] = a0 + min(mb + t, M - 1) * sam; bc[t] = b0 + min(nb + t, N - 1) * sbn; }}\n\
  var acc: array<vec4<f32>, 4>;\n\
  for (var k = 0; k < K; k = k + 1) {{\n\
    let bv = vec4<f32>(ld2(bc[0] + k * sbk), ld2(bc[1] + k * sbk), ld2(bc[2] + k * sbk), ld2(bc[3] + k * sbk));\n\
    acc[0] = acc[0] + ld1(ar[0] + k * sak) * bv;\n\
    acc[1] = acc[1] + ld1(ar[1] + k * sak) * bv;\n\
    acc[2] = acc[2] + ld1(ar[2] + k * sak) * bv;\n\
    acc[3] = acc[3] + ld1(ar[3] + k * sak) * bv;\n\
  }}\n\
  let o0 = base0() + batch * s_i(9);\n\
  for (var ii = 0; ii < 4; ii = ii + 1) {{ for (var jj = 0; jj < 4; jj = jj + 1) {{\n\
    let gm = mb + ii; let gn = nb + jj;\n\
    if (gm < M && gn < N) {{ let r = acc[ii][jj]; st0(o0 + gm * s_i(10) + gn * s_i(11), {result}); }}\n\
  }} }}\n\
}}\n"
    );
    kern.outer = vec![1];
    kern.operands = ops;
    kern.scalar_i(0, m).scalar_i(1, n).scalar_i(2, k);
    kern.scalar_i(3, sab).scalar_i(4, sam).scalar_i(5, sak);
    kern.scalar_i(6, sbb).scalar_i(7, sbk).scalar_i(8, sbn);
    kern.scalar_i(9, sob).scalar_i(10, som).scalar_i(11, son);
    let wx = (n as u64).div_ceil(32) as u32;
    let wy = (m as u64).div_ceil(32) as u32;
    if wy > 65535 || wx > 65535 || bn > 65535 {
        return Err(runtime(
            "matmul: a dimension is too large for one vulkan dispatch",
        ));
    }
    kern.custom = Some((main, [wx, wy, bn as u32]));
    kern.run()
}

fn addmm(c: &mut Call) -> KResult {
    let (out, s, a, b) = (c.out(0)?, c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let (beta, alpha) = (c.scalar(3)?.as_f64(), c.scalar(4)?.as_f64());
    matmul(&out, &a, &b, Some((&s, beta, alpha)))
}

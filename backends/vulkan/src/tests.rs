//! Kernel tests against host-computed expectations, through the same `extern "C"` entry points
//! the core calls (views built over device allocations exactly as the core builds them).
//! Every test skips (passing, with a message) when wgpu finds no Vulkan adapter.

use std::ffi::{c_char, CString};

use torchnative_backend::abi::{TnArg, TnArgKind, TnDtype, TnError, TnTensor};

use crate::alloc::{allocate, read_bytes, release, resolve, write_bytes};

fn have_device() -> bool {
    match crate::device::probe() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// A device tensor: its allocation and the view the core would pass.
struct Dev {
    addr: u64,
    /// Element offset of the view inside the allocation.
    off: i64,
    dtype: TnDtype,
    sizes: Vec<i64>,
    strides: Vec<i64>,
}

fn contiguous(sizes: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * sizes[d + 1];
    }
    s
}

impl Dev {
    fn from_bytes(bytes: &[u8], dtype: TnDtype, sizes: &[i64]) -> Dev {
        let addr = allocate(bytes.len().max(1)).unwrap();
        let p = resolve(addr).unwrap();
        write_bytes(&p.buffer, 0, bytes).unwrap();
        Dev {
            addr,
            off: 0,
            dtype,
            sizes: sizes.to_vec(),
            strides: contiguous(sizes),
        }
    }
    fn f32(v: &[f32], sizes: &[i64]) -> Dev {
        Dev::from_bytes(bytemuck::cast_slice(v), TnDtype::Float32, sizes)
    }
    fn i64(v: &[i64], sizes: &[i64]) -> Dev {
        Dev::from_bytes(bytemuck::cast_slice(v), TnDtype::Int64, sizes)
    }
    fn zeros(dtype: TnDtype, sizes: &[i64]) -> Dev {
        let n: i64 = sizes.iter().product();
        Dev::from_bytes(&vec![0u8; n as usize * dtype.itemsize()], dtype, sizes)
    }
    fn view(&self, sizes: &[i64], strides: &[i64], off: i64) -> Dev {
        Dev {
            addr: self.addr,
            off,
            dtype: self.dtype,
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
        }
    }
    fn raw(&self) -> TnTensor {
        TnTensor {
            data: (self.addr + (self.off as u64) * self.dtype.itemsize() as u64) as *mut _,
            dtype: self.dtype as i32,
            ndim: self.sizes.len() as i32,
            sizes: self.sizes.as_ptr(),
            strides: self.strides.as_ptr(),
            device_index: 0,
        }
    }
    /// The whole allocation's bytes.
    fn bytes(&self, n: usize) -> Vec<u8> {
        let p = resolve(self.addr).unwrap();
        let mut out = vec![0u8; n];
        read_bytes(&p.buffer, 0, &mut out).unwrap();
        out
    }
    fn read_f32(&self) -> Vec<f32> {
        let n: i64 = self.sizes.iter().product();
        bytemuck::cast_slice(&self.bytes(n as usize * 4)).to_vec()
    }
    fn read_i64(&self) -> Vec<i64> {
        let n: i64 = self.sizes.iter().product();
        bytemuck::cast_slice(&self.bytes(n as usize * 8)).to_vec()
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if self.off == 0 && self.strides == contiguous(&self.sizes) {
            release(self.addr);
        }
    }
}

fn zero_arg() -> TnArg {
    TnArg {
        kind: TnArgKind::None as i32,
        tensor: TnTensor {
            data: std::ptr::null_mut(),
            dtype: 0,
            ndim: 0,
            sizes: std::ptr::null(),
            strides: std::ptr::null(),
            device_index: 0,
        },
        i: 0,
        f: 0.0,
        f_imag: 0.0,
        ints: std::ptr::null(),
        floats: std::ptr::null(),
        tensors: std::ptr::null(),
        len: 0,
        str_: std::ptr::null(),
    }
}

enum A<'a> {
    T(&'a Dev),
    I(i64),
    F(f64),
    B(bool),
    Ints(&'a [i64]),
    S(&'a str),
    N,
}

/// Calls the registered kernel of `op` with `args` and `outs`; Err(message) on failure.
fn call(op: &str, args: &[A], outs: &[&Dev]) -> Result<(), String> {
    let (_, kernel) = crate::kernels()
        .into_iter()
        .find(|(n, _)| *n == op)
        .unwrap_or_else(|| panic!("{op} is not registered"));
    let strs: Vec<CString> = args
        .iter()
        .map(|a| match a {
            A::S(s) => CString::new(*s).unwrap(),
            _ => CString::default(),
        })
        .collect();
    let raw: Vec<TnArg> = args
        .iter()
        .zip(&strs)
        .map(|(a, s)| {
            let mut r = zero_arg();
            match a {
                A::T(t) => {
                    r.kind = TnArgKind::Tensor as i32;
                    r.tensor = t.raw();
                }
                A::I(i) => {
                    r.kind = TnArgKind::Int as i32;
                    r.i = *i;
                }
                A::F(f) => {
                    r.kind = TnArgKind::Float as i32;
                    r.f = *f;
                }
                A::B(b) => {
                    r.kind = TnArgKind::Bool as i32;
                    r.i = *b as i64;
                }
                A::Ints(v) => {
                    r.kind = TnArgKind::IntList as i32;
                    r.ints = v.as_ptr();
                    r.len = v.len();
                }
                A::S(_) => {
                    r.kind = TnArgKind::Str as i32;
                    r.str_ = s.as_ptr();
                }
                A::N => {}
            }
            r
        })
        .collect();
    let mut outs: Vec<TnTensor> = outs.iter().map(|d| d.raw()).collect();
    let mut buf = vec![0u8; 1024];
    let mut err = TnError {
        kind: 0,
        message: buf.as_mut_ptr() as *mut c_char,
        capacity: buf.len(),
    };
    let rc = unsafe {
        kernel(
            std::ptr::null_mut(),
            std::ptr::null(),
            raw.as_ptr(),
            raw.len(),
            outs.as_mut_ptr(),
            outs.len(),
            &mut err,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
        Err(String::from_utf8_lossy(&buf[..end]).into_owned())
    }
}

fn close(got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (*g as f64 - w).abs() <= tol * (1.0 + w.abs()) || (g.is_nan() && w.is_nan());
        assert!(ok, "element {i}: got {g}, want {w}");
    }
}

fn vals(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 20000) as f32 / 5000.0 - 2.0
        })
        .collect()
}

#[test]
fn add_broadcast_strided_with_alpha() {
    if !have_device() {
        return;
    }
    let av = vals(12, 1);
    let bv = vals(4, 2);
    let a = Dev::f32(&av, &[3, 4]);
    // `a` transposed (4x3 view), `b` broadcast along dim 1 (stride 0).
    let at = a.view(&[4, 3], &[1, 4], 0);
    let b = Dev::f32(&bv, &[4]);
    let bb = b.view(&[4, 3], &[1, 0], 0);
    let out = Dev::zeros(TnDtype::Float32, &[4, 3]);
    call(
        "aten::add.Tensor",
        &[A::T(&at), A::T(&bb), A::F(2.5)],
        &[&out],
    )
    .unwrap();
    let mut want = vec![];
    for i in 0..4 {
        for j in 0..3 {
            want.push((av[j * 4 + i] + 2.5f32 * bv[i]) as f64);
        }
    }
    close(&out.read_f32(), &want, 0.0);
}

#[test]
fn the_comparison_detects_a_wrong_result() {
    if !have_device() {
        return;
    }
    let a = Dev::f32(&[1.0, 2.0], &[2]);
    let out = Dev::zeros(TnDtype::Float32, &[2]);
    call("aten::neg", &[A::T(&a)], &[&out]).unwrap();
    let r = std::panic::catch_unwind(|| close(&out.read_f32(), &[-1.0, -2.0 + 1e-3], 1e-6));
    assert!(r.is_err(), "a 1e-3 error must fail the comparison");
}

#[test]
fn unary_math_against_f64() {
    if !have_device() {
        return;
    }
    let xv = vals(1000, 3);
    let x = Dev::f32(&xv, &[1000]);
    let erf = |v: f64| {
        // erf by its Taylor series / continued fraction is overkill: integrate numerically.
        let n = 2000;
        let h = v / n as f64;
        let f = |t: f64| (-t * t).exp();
        let mut s = f(0.0) + f(v);
        for k in 1..n {
            s += f(k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
    };
    type F = fn(f64) -> f64;
    let cases: Vec<(&str, F, f64)> = vec![
        ("aten::exp", f64::exp, 2e-6),
        ("aten::tanh", f64::tanh, 2e-6),
        ("aten::sigmoid", |v| 1.0 / (1.0 + (-v).exp()), 2e-6),
        ("aten::sin", f64::sin, 2e-6),
        ("aten::abs", f64::abs, 0.0),
        ("aten::relu", |v| v.max(0.0), 0.0),
        ("aten::silu", |v| v / (1.0 + (-v).exp()), 2e-6),
    ];
    for (op, f, tol) in cases {
        let out = Dev::zeros(TnDtype::Float32, &[1000]);
        call(op, &[A::T(&x)], &[&out]).unwrap();
        let want: Vec<f64> = xv.iter().map(|&v| f(v as f64)).collect();
        close(&out.read_f32(), &want, tol);
    }
    let out = Dev::zeros(TnDtype::Float32, &[1000]);
    call("aten::erf", &[A::T(&x)], &[&out]).unwrap();
    let want: Vec<f64> = xv.iter().map(|&v| erf(v as f64)).collect();
    close(&out.read_f32(), &want, 1e-6);
    call("aten::gelu", &[A::T(&x), A::S("none")], &[&out]).unwrap();
    let want: Vec<f64> = xv
        .iter()
        .map(|&v| v as f64 * 0.5 * (1.0 + erf(v as f64 / 2f64.sqrt())))
        .collect();
    close(&out.read_f32(), &want, 1e-6);
}

#[test]
fn int64_is_exact() {
    if !have_device() {
        return;
    }
    let av: Vec<i64> = vec![
        1 << 40,
        -(1 << 35) - 7,
        5,
        -1,
        i64::MAX,
        (1 << 62) + 12345,
        3,
    ];
    let bv: Vec<i64> = vec![3, 1 << 33, -5, -1, 1, -77777777777, 1 << 31];
    let n = av.len() as i64;
    let (a, b) = (Dev::i64(&av, &[n]), Dev::i64(&bv, &[n]));
    let out = Dev::zeros(TnDtype::Int64, &[n]);
    call("aten::mul.Tensor", &[A::T(&a), A::T(&b)], &[&out]).unwrap();
    let want: Vec<i64> = av
        .iter()
        .zip(&bv)
        .map(|(x, y)| x.wrapping_mul(*y))
        .collect();
    assert_eq!(out.read_i64(), want);
    call("aten::sub.Tensor", &[A::T(&a), A::T(&b), A::I(3)], &[&out]).unwrap();
    let want: Vec<i64> = av
        .iter()
        .zip(&bv)
        .map(|(x, y)| x.wrapping_sub(y.wrapping_mul(3)))
        .collect();
    assert_eq!(out.read_i64(), want);
    // Comparisons into bool bytes (several invocations write one 32-bit word).
    let lt = Dev::zeros(TnDtype::Bool, &[n]);
    call("aten::lt.Tensor", &[A::T(&a), A::T(&b)], &[&lt]).unwrap();
    let want: Vec<u8> = av.iter().zip(&bv).map(|(x, y)| (x < y) as u8).collect();
    assert_eq!(lt.bytes(n as usize), want);
    // int64 -> float32 rounds to nearest even exactly as Rust's `as f32` does.
    let f = Dev::zeros(TnDtype::Float32, &[n]);
    call("aten::copy_", &[A::T(&f), A::T(&a), A::B(false)], &[&f]).unwrap();
    let want: Vec<f32> = av.iter().map(|&x| x as f32).collect();
    assert_eq!(f.read_f32(), want);
    // float32 -> int64 truncates toward zero.
    let fv = [-2.7f32, 2.7, 3e12, -3e12, 0.5];
    let fs = Dev::f32(&fv, &[5]);
    let l = Dev::zeros(TnDtype::Int64, &[5]);
    call("aten::copy_", &[A::T(&l), A::T(&fs), A::B(false)], &[&l]).unwrap();
    assert_eq!(
        l.read_i64(),
        fv.iter().map(|&x| x as i64).collect::<Vec<_>>()
    );
}

#[test]
fn bool_stores_keep_their_neighbours() {
    if !have_device() {
        return;
    }
    // Fill every other byte of a bool buffer; the bytes in between must survive.
    let base = Dev::from_bytes(&[7u8; 9], TnDtype::Bool, &[9]);
    let odd = base.view(&[4], &[2], 1);
    call("aten::fill_.Scalar", &[A::T(&odd), A::B(true)], &[&odd]).unwrap();
    assert_eq!(base.bytes(9), vec![7, 1, 7, 1, 7, 1, 7, 1, 7]);
}

#[test]
fn reductions_softmax_and_layer_norm() {
    if !have_device() {
        return;
    }
    let (r, cn) = (5usize, 384usize);
    let xv = vals(r * cn, 4);
    let x = Dev::f32(&xv, &[r as i64, cn as i64]);
    let rows: Vec<&[f32]> = xv.chunks(cn).collect();
    let out = Dev::zeros(TnDtype::Float32, &[r as i64]);
    call(
        "aten::sum.dim_IntList",
        &[A::T(&x), A::Ints(&[1]), A::B(false), A::N],
        &[&out],
    )
    .unwrap();
    let want: Vec<f64> = rows
        .iter()
        .map(|w| w.iter().map(|&v| v as f64).sum())
        .collect();
    close(&out.read_f32(), &want, 1e-6);
    let idx = Dev::zeros(TnDtype::Int64, &[r as i64]);
    call(
        "aten::max.dim",
        &[A::T(&x), A::I(1), A::B(false)],
        &[&out, &idx],
    )
    .unwrap();
    let want: Vec<i64> = rows
        .iter()
        .map(|w| {
            let m = w.iter().cloned().fold(f32::MIN, f32::max);
            w.iter().position(|&v| v == m).unwrap() as i64
        })
        .collect();
    assert_eq!(idx.read_i64(), want);
    let sm = Dev::zeros(TnDtype::Float32, &[r as i64, cn as i64]);
    call("aten::_softmax", &[A::T(&x), A::I(1), A::B(false)], &[&sm]).unwrap();
    let mut want = vec![];
    for w in &rows {
        let m = w.iter().cloned().fold(f32::MIN, f32::max) as f64;
        let s: f64 = w.iter().map(|&v| (v as f64 - m).exp()).sum();
        want.extend(w.iter().map(|&v| (v as f64 - m).exp() / s));
    }
    close(&sm.read_f32(), &want, 1e-5);
    let (mean, rstd) = (
        Dev::zeros(TnDtype::Float32, &[r as i64, 1]),
        Dev::zeros(TnDtype::Float32, &[r as i64, 1]),
    );
    call(
        "aten::native_layer_norm",
        &[A::T(&x), A::Ints(&[cn as i64]), A::N, A::N, A::F(1e-12)],
        &[&sm, &mean, &rstd],
    )
    .unwrap();
    let mut want = vec![];
    for w in &rows {
        let mu: f64 = w.iter().map(|&v| v as f64).sum::<f64>() / cn as f64;
        let var: f64 = w.iter().map(|&v| (v as f64 - mu).powi(2)).sum::<f64>() / cn as f64;
        want.extend(w.iter().map(|&v| (v as f64 - mu) / (var + 1e-12).sqrt()));
    }
    close(&sm.read_f32(), &want, 1e-5);
}

#[test]
fn matmul_with_transposed_operand() {
    if !have_device() {
        return;
    }
    let (m, k, n) = (7usize, 33usize, 5usize);
    let av = vals(m * k, 5);
    let bv = vals(n * k, 6); // stored [n, k], used transposed
    let cv = vals(n, 7);
    let a = Dev::f32(&av, &[m as i64, k as i64]);
    let b = Dev::f32(&bv, &[n as i64, k as i64]);
    let bt = b.view(&[k as i64, n as i64], &[1, k as i64], 0);
    let c = Dev::f32(&cv, &[n as i64]);
    let out = Dev::zeros(TnDtype::Float32, &[m as i64, n as i64]);
    call(
        "aten::addmm",
        &[A::T(&c), A::T(&a), A::T(&bt), A::I(1), A::I(1)],
        &[&out],
    )
    .unwrap();
    let mut want = vec![];
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k)
                .map(|t| av[i * k + t] as f64 * bv[j * k + t] as f64)
                .sum();
            want.push(s + cv[j] as f64);
        }
    }
    close(&out.read_f32(), &want, 1e-5);
}

#[test]
fn indices_are_bounds_checked() {
    if !have_device() {
        return;
    }
    let w = Dev::f32(&vals(12, 8), &[4, 3]);
    let good = Dev::i64(&[3, 0, 3], &[3]);
    let out = Dev::zeros(TnDtype::Float32, &[3, 3]);
    call(
        "aten::embedding",
        &[A::T(&w), A::T(&good), A::I(-1), A::B(false), A::B(false)],
        &[&out],
    )
    .unwrap();
    let wv = w.read_f32();
    let got = out.read_f32();
    assert_eq!(&got[0..3], &wv[9..12]);
    assert_eq!(&got[3..6], &wv[0..3]);
    let bad = Dev::i64(&[1, 4, 0], &[3]);
    let e = call(
        "aten::embedding",
        &[A::T(&w), A::T(&bad), A::I(-1), A::B(false), A::B(false)],
        &[&out],
    )
    .unwrap_err();
    assert!(e.contains("index out of range"), "{e}");
}

#[test]
fn unsupported_dtypes_are_refused_by_name() {
    if !have_device() {
        return;
    }
    let x = Dev::zeros(TnDtype::Float16, &[4]);
    let out = Dev::zeros(TnDtype::Float16, &[4]);
    let e = call("aten::exp", &[A::T(&x)], &[&out]).unwrap_err();
    assert!(e.contains("'Half'") && e.contains("vulkan"), "{e}");
}

#[test]
fn float64_division_and_casts_are_exact() {
    if !have_device() {
        return;
    }
    let mut av: Vec<f64> = vec![1.0, 7.0, 1e-300, 3e-320, -0.0, 1e308, 2.5, f64::INFINITY];
    let mut bv: Vec<f64> = vec![3.0, 1e-300, 1e10, 3.0, 5.0, 1e-10, -0.1, 2.0];
    for (i, v) in vals(200, 9).iter().zip(vals(200, 10)) {
        av.push((*i as f64) * 1e3_f64.powf(*i as f64));
        bv.push((v as f64 + 0.001) * 7.3);
    }
    let n = av.len() as i64;
    let d = |v: &[f64]| Dev::from_bytes(bytemuck::cast_slice(v), TnDtype::Float64, &[n]);
    let (a, b) = (d(&av), d(&bv));
    let out = Dev::zeros(TnDtype::Float64, &[n]);
    call("aten::div.Tensor", &[A::T(&a), A::T(&b)], &[&out]).unwrap();
    let got: Vec<f64> = bytemuck::cast_slice(&out.bytes(n as usize * 8)).to_vec();
    for i in 0..av.len() {
        assert_eq!(
            got[i].to_bits(),
            (av[i] / bv[i]).to_bits(),
            "{} / {}",
            av[i],
            bv[i]
        );
    }
    // float64 -> float32 rounds to nearest even (subnormal and overflowing results included).
    let f = Dev::zeros(TnDtype::Float32, &[n]);
    call("aten::copy_", &[A::T(&f), A::T(&a), A::B(false)], &[&f]).unwrap();
    let want: Vec<f32> = av.iter().map(|&x| x as f32).collect();
    let got = f.read_f32();
    for i in 0..av.len() {
        assert_eq!(got[i].to_bits(), want[i].to_bits(), "{} as f32", av[i]);
    }
}

//! Replays the golden cases of `tests/golden/*.txt` (written by `tests/gen_expected.py` from
//! upstream torch 2.13.0) through the registered `extern "C"` kernels: each case builds
//! `TnTensor` views over `Vec`s exactly as the core would pass them (non-contiguous and stride-0
//! views included), calls the kernel found by its overload name in [`crate::kernels`], and
//! compares outputs bit for bit (or within the case's stated ulp/tolerance) and errors by kind
//! and message.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_void, CString};

use torchnative_backend::abi::{
    TnArg, TnArgKind, TnDtype, TnError, TnErrorKind, TnKernelCtx, TnTensor,
};

#[derive(Clone, Debug)]
struct TSpec {
    dtype: TnDtype,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: usize,
    bytes: Vec<u8>,
}

#[derive(Clone, Debug)]
enum ASpec {
    T(TSpec),
    I(i64),
    F(f64),
    B(bool),
    N,
    S(String),
    D(i32),
    L(Vec<i64>),
    FL(Vec<f64>),
    TL(Vec<Option<TSpec>>),
}

#[derive(Clone, Debug)]
enum OSpec {
    Fresh {
        dtype: TnDtype,
        sizes: Vec<i64>,
        bytes: Vec<u8>,
    },
    Dyn {
        dtype: TnDtype,
        sizes: Vec<i64>,
        bytes: Vec<u8>,
    },
    Alias {
        arg: usize,
        bytes: Vec<u8>,
    },
}

#[derive(Clone, Debug)]
enum Tol {
    Exact,
    Ulp(u64),
    Close(f64, f64),
}

#[derive(Clone, Debug)]
pub struct Case {
    name: String,
    op: String,
    tol: Tol,
    args: Vec<ASpec>,
    outs: Vec<(usize, OSpec)>,
    error: Option<(String, String)>,
}

fn hex(s: &str) -> Vec<u8> {
    if s == "-" {
        return vec![];
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
fn ints(s: &str) -> Vec<i64> {
    if s == "-" {
        vec![]
    } else {
        s.split(',').map(|x| x.parse().unwrap()).collect()
    }
}
fn fbits(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).unwrap())
}
fn dtype(s: &str) -> TnDtype {
    TnDtype::from_code(s.parse().unwrap()).unwrap()
}
fn tspec(w: &[&str]) -> TSpec {
    assert_eq!(w[0], "T");
    TSpec {
        dtype: dtype(w[1]),
        sizes: ints(w[2]),
        strides: ints(w[3]),
        offset: w[4].parse().unwrap(),
        bytes: hex(w[5]),
    }
}

pub fn parse(text: &str) -> Vec<Case> {
    let mut cases = vec![];
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    while let Some(l) = lines.next() {
        let w: Vec<&str> = l.split(' ').collect();
        assert_eq!(w[0], "case", "{l}");
        let mut c = Case {
            name: w[1].into(),
            op: w[2].into(),
            tol: Tol::Exact,
            args: vec![],
            outs: vec![],
            error: None,
        };
        while let Some(l) = lines.next() {
            let w: Vec<&str> = l.split(' ').collect();
            match w[0] {
                "end" => break,
                "tol" => {
                    c.tol = match w[1] {
                        "exact" => Tol::Exact,
                        "ulp" => Tol::Ulp(w[2].parse().unwrap()),
                        "close" => Tol::Close(w[2].parse().unwrap(), w[3].parse().unwrap()),
                        t => panic!("tol {t}"),
                    }
                }
                "arg" => {
                    let a = match w[1] {
                        "T" => ASpec::T(tspec(&w[1..])),
                        "I" => ASpec::I(w[2].parse().unwrap()),
                        "F" => ASpec::F(fbits(w[2])),
                        "B" => ASpec::B(w[2] == "1"),
                        "N" => ASpec::N,
                        "S" => ASpec::S(w[2..].join(" ")),
                        "D" => ASpec::D(w[2].parse().unwrap()),
                        "L" => ASpec::L(ints(w[2])),
                        "FL" => ASpec::FL(if w[2] == "-" {
                            vec![]
                        } else {
                            w[2].split(',').map(fbits).collect()
                        }),
                        "TL" => {
                            // The list items follow on their own lines; collected below.
                            ASpec::TL(Vec::with_capacity(w[2].parse().unwrap()))
                        }
                        k => panic!("arg kind {k}"),
                    };
                    if let ASpec::TL(mut items) = a {
                        let n = items.capacity();
                        for _ in 0..n {
                            let item = lines.next().unwrap();
                            let iw: Vec<&str> = item.split(' ').collect();
                            items.push(if iw[0] == "N" { None } else { Some(tspec(&iw)) });
                        }
                        c.args.push(ASpec::TL(items));
                    } else {
                        c.args.push(a);
                    }
                }
                "out" => {
                    let i = c.outs.len();
                    c.outs.push((
                        i,
                        OSpec::Fresh {
                            dtype: dtype(w[1]),
                            sizes: ints(w[2]),
                            bytes: hex(w[3]),
                        },
                    ))
                }
                "dynout" => {
                    let i = c.outs.len();
                    c.outs.push((
                        i,
                        OSpec::Dyn {
                            dtype: dtype(w[1]),
                            sizes: ints(w[2]),
                            bytes: hex(w[3]),
                        },
                    ))
                }
                "alias" => c.outs.push((
                    w[1].parse().unwrap(),
                    OSpec::Alias {
                        arg: w[2].parse().unwrap(),
                        bytes: hex(w[3]),
                    },
                )),
                "error" => c.error = Some((w[1].into(), w[2..].join(" "))),
                k => panic!("line kind {k}"),
            }
        }
        cases.push(c);
    }
    cases
}

/// A storage buffer aligned to 64 bytes.
struct Buf(Vec<u64>);
impl Buf {
    fn new(bytes: &[u8]) -> Buf {
        // 8-byte alignment, the least a torch storage has.
        let b = Buf(vec![0u64; bytes.len().div_ceil(8).max(1)]);
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.ptr(), bytes.len()) };
        b
    }
    fn ptr(&self) -> *mut u8 {
        self.0.as_ptr() as *mut u8
    }
    fn bytes(&self, n: usize) -> Vec<u8> {
        unsafe { std::slice::from_raw_parts(self.ptr(), n).to_vec() }
    }
}

/// A tensor's sizes and strides; `TnTensor`s point into the Vecs' heap buffers, which stay put.
type Dims = (Vec<i64>, Vec<i64>);

struct Views {
    bufs: Vec<Buf>,
    dims: Vec<Dims>,
    strings: Vec<CString>,
    lists: Vec<Vec<TnTensor>>,
}

impl Views {
    fn tensor(&mut self, t: &TSpec) -> (TnTensor, usize) {
        let b = Buf::new(&t.bytes);
        let data = unsafe { b.ptr().add(t.offset * t.dtype.itemsize()) };
        self.bufs.push(b);
        let d = (t.sizes.clone(), t.strides.clone());
        let tt = TnTensor {
            data: data as *mut c_void,
            dtype: t.dtype as i32,
            ndim: t.sizes.len() as i32,
            sizes: d.0.as_ptr(),
            strides: d.1.as_ptr(),
            device_index: 0,
        };
        self.dims.push(d);
        (tt, self.bufs.len() - 1)
    }
}

fn zero_arg() -> TnArg {
    unsafe { std::mem::zeroed() }
}

/// The harness side of `TnKernelCtx`: allocations made through `alloc_output`.
struct Core {
    allocs: Vec<(Buf, Dims)>,
}

unsafe extern "C" fn alloc_output(
    core: *mut c_void,
    _index: usize,
    dtype: i32,
    ndim: i32,
    sizes: *const i64,
    out: *mut TnTensor,
) -> i32 {
    let core = &mut *(core as *mut Core);
    let sizes = if ndim == 0 {
        vec![]
    } else {
        std::slice::from_raw_parts(sizes, ndim as usize).to_vec()
    };
    let dt = TnDtype::from_code(dtype).unwrap();
    let n: i64 = sizes.iter().product();
    let buf = Buf::new(&vec![0xABu8; n as usize * dt.itemsize()]);
    let strides = crate::strided::contiguous_strides(&sizes);
    let d = (sizes, strides);
    *out = TnTensor {
        data: buf.ptr() as *mut c_void,
        dtype,
        ndim,
        sizes: d.0.as_ptr(),
        strides: d.1.as_ptr(),
        device_index: 0,
    };
    core.allocs.push((buf, d));
    0
}

fn float_bits_ord(dt: TnDtype, b: &[u8]) -> Option<(i64, bool)> {
    // Maps a float's bits to a monotone integer (for ulp distance); returns (key, is_nan).
    let (bits, nbits, nan) = match dt {
        TnDtype::Float32 => {
            let v = f32::from_le_bytes(b.try_into().unwrap());
            (v.to_bits() as i64, 32, v.is_nan())
        }
        TnDtype::Float64 => {
            let v = f64::from_le_bytes(b.try_into().unwrap());
            (v.to_bits() as i64, 64, v.is_nan())
        }
        TnDtype::Float16 => {
            let v = half::f16::from_le_bytes(b.try_into().unwrap());
            (v.to_bits() as i64, 16, v.is_nan())
        }
        TnDtype::BFloat16 => {
            let v = half::bf16::from_le_bytes(b.try_into().unwrap());
            (v.to_bits() as i64, 16, v.is_nan())
        }
        _ => return None,
    };
    let sign = if nbits == 64 {
        bits < 0
    } else {
        (bits >> (nbits - 1)) & 1 == 1
    };
    let mag = if nbits == 64 {
        bits & i64::MAX
    } else {
        bits & ((1i64 << (nbits - 1)) - 1)
    };
    Some((if sign { -mag } else { mag }, nan))
}

fn as_f64(dt: TnDtype, b: &[u8]) -> f64 {
    match dt {
        TnDtype::Float32 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
        TnDtype::Float64 => f64::from_le_bytes(b.try_into().unwrap()),
        TnDtype::Float16 => half::f16::from_le_bytes(b.try_into().unwrap()).to_f64(),
        TnDtype::BFloat16 => half::bf16::from_le_bytes(b.try_into().unwrap()).to_f64(),
        _ => unreachable!(),
    }
}

/// Compares two byte buffers of dtype `dt` under `tol`; returns the first mismatch.
fn compare(dt: TnDtype, tol: &Tol, got: &[u8], want: &[u8]) -> Result<(), String> {
    // a complex element is compared as its two parts
    let dt = match dt {
        TnDtype::ComplexFloat => TnDtype::Float32,
        TnDtype::ComplexDouble => TnDtype::Float64,
        d => d,
    };
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let n = dt.itemsize();
    for i in 0..got.len() / n {
        let (g, w) = (&got[i * n..(i + 1) * n], &want[i * n..(i + 1) * n]);
        if g == w {
            continue;
        }
        let ok = match float_bits_ord(dt, g) {
            None => false,
            Some((gk, gnan)) => {
                let (wk, wnan) = float_bits_ord(dt, w).unwrap();
                if gnan || wnan {
                    gnan && wnan
                } else {
                    match tol {
                        Tol::Exact => false,
                        Tol::Ulp(u) => gk.abs_diff(wk) <= *u,
                        Tol::Close(rtol, atol) => {
                            let (gv, wv) = (as_f64(dt, g), as_f64(dt, w));
                            gv == wv || (gv - wv).abs() <= atol + rtol * wv.abs()
                        }
                    }
                }
            }
        };
        if !ok {
            let show = |b: &[u8]| match dt {
                TnDtype::Float16 | TnDtype::BFloat16 | TnDtype::Float32 | TnDtype::Float64 => {
                    format!("{:e}", as_f64(dt, b))
                }
                _ => format!("{:02x?}", b),
            };
            return Err(format!("element {i}: got {} want {}", show(g), show(w)));
        }
    }
    Ok(())
}

fn kind_name(k: i32) -> &'static str {
    match k {
        x if x == TnErrorKind::Runtime as i32 => "Runtime",
        x if x == TnErrorKind::Value as i32 => "Value",
        x if x == TnErrorKind::Type as i32 => "Type",
        x if x == TnErrorKind::Index as i32 => "Index",
        x if x == TnErrorKind::NotImplemented as i32 => "NotImplemented",
        _ => "?",
    }
}

/// Runs one case; `Err` describes the disagreement.
pub fn run_case(
    c: &Case,
    kernels: &BTreeMap<&str, torchnative_backend::abi::TnKernelFn>,
) -> Result<(), String> {
    let kernel = *kernels
        .get(c.op.as_str())
        .ok_or_else(|| format!("no kernel registered for {}", c.op))?;
    let mut v = Views {
        bufs: vec![],
        dims: vec![],
        strings: vec![],
        lists: vec![],
    };
    let mut args = vec![];
    let mut arg_buf: Vec<Option<(usize, TSpec)>> = vec![];
    for a in &c.args {
        let mut ta = zero_arg();
        let mut which = None;
        match a {
            ASpec::T(t) => {
                let (tt, bi) = v.tensor(t);
                ta.kind = TnArgKind::Tensor as i32;
                ta.tensor = tt;
                which = Some((bi, t.clone()));
            }
            ASpec::I(i) => {
                ta.kind = TnArgKind::Int as i32;
                ta.i = *i;
            }
            ASpec::F(f) => {
                ta.kind = TnArgKind::Float as i32;
                ta.f = *f;
            }
            ASpec::B(b) => {
                ta.kind = TnArgKind::Bool as i32;
                ta.i = *b as i64;
            }
            ASpec::N => ta.kind = TnArgKind::None as i32,
            ASpec::S(s) => {
                ta.kind = TnArgKind::Str as i32;
                let cs = CString::new(s.as_str()).unwrap();
                ta.str_ = cs.as_ptr() as *const c_char;
                v.strings.push(cs);
            }
            ASpec::D(d) => {
                ta.kind = TnArgKind::Dtype as i32;
                ta.i = *d as i64;
            }
            ASpec::L(l) => {
                ta.kind = TnArgKind::IntList as i32;
                let d = (l.clone(), vec![]);
                ta.ints = d.0.as_ptr();
                ta.len = l.len();
                v.dims.push(d);
            }
            ASpec::FL(l) => {
                ta.kind = TnArgKind::FloatList as i32;
                let d = Box::new(l.clone());
                ta.floats = d.as_ptr();
                ta.len = l.len();
                std::mem::forget(d);
            }
            ASpec::TL(items) => {
                ta.kind = TnArgKind::TensorList as i32;
                let mut list = vec![];
                for it in items {
                    match it {
                        Some(t) => list.push(v.tensor(t).0),
                        None => {
                            let mut none: TnTensor = unsafe { std::mem::zeroed() };
                            none.ndim = -1;
                            list.push(none);
                        }
                    }
                }
                ta.tensors = list.as_ptr();
                ta.len = list.len();
                v.lists.push(list);
            }
        }
        arg_buf.push(which);
        args.push(ta);
    }
    let nouts = c.outs.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
    let mut outs: Vec<TnTensor> = vec![unsafe { std::mem::zeroed() }; nouts];
    let mut out_bufs: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, o) in &c.outs {
        match o {
            OSpec::Fresh { dtype, sizes, .. } => {
                let n: i64 = sizes.iter().product();
                let t = TSpec {
                    dtype: *dtype,
                    sizes: sizes.clone(),
                    strides: crate::strided::contiguous_strides(sizes),
                    offset: 0,
                    bytes: vec![0xAB; n as usize * dtype.itemsize()],
                };
                let (tt, bi) = v.tensor(&t);
                outs[*i] = tt;
                out_bufs.insert(*i, bi);
            }
            OSpec::Dyn { .. } => {
                outs[*i].ndim = -1;
            }
            OSpec::Alias { arg, .. } => outs[*i] = args[*arg].tensor,
        }
    }
    let mut core = Core { allocs: vec![] };
    let ctx = TnKernelCtx {
        struct_size: std::mem::size_of::<TnKernelCtx>() as u32,
        core: &mut core as *mut Core as *mut c_void,
        alloc_output,
    };
    let mut msg = vec![0u8; 1024];
    let mut err = TnError {
        kind: -1,
        message: msg.as_mut_ptr() as *mut c_char,
        capacity: msg.len(),
    };
    let rc = unsafe {
        kernel(
            std::ptr::null_mut(),
            &ctx,
            args.as_ptr(),
            args.len(),
            outs.as_mut_ptr(),
            outs.len(),
            &mut err,
        )
    };
    let got_msg = || {
        let end = msg.iter().position(|&b| b == 0).unwrap_or(0);
        String::from_utf8_lossy(&msg[..end]).into_owned()
    };
    if let Some((kind, want)) = &c.error {
        if rc == 0 {
            return Err(format!("expected {kind}Error `{want}`, kernel succeeded"));
        }
        let (gk, gm) = (kind_name(err.kind), got_msg());
        if gk != kind || &gm != want {
            return Err(format!(
                "expected {kind}Error `{want}`, got {gk}Error `{gm}`"
            ));
        }
        return Ok(());
    }
    if rc != 0 {
        return Err(format!(
            "kernel failed: {}Error `{}`",
            kind_name(err.kind),
            got_msg()
        ));
    }
    for (i, o) in &c.outs {
        match o {
            OSpec::Fresh { dtype, bytes, .. } => {
                let got = v.bufs[out_bufs[i]].bytes(bytes.len());
                compare(*dtype, &c.tol, &got, bytes).map_err(|e| format!("output {i}: {e}"))?;
            }
            OSpec::Alias { arg, bytes } => {
                let (bi, t) = arg_buf[*arg].clone().unwrap();
                let got = v.bufs[bi].bytes(bytes.len());
                compare(t.dtype, &c.tol, &got, bytes)
                    .map_err(|e| format!("output {i} (argument {arg}): {e}"))?;
            }
            OSpec::Dyn {
                dtype,
                sizes,
                bytes,
            } => {
                let t = &outs[*i];
                if t.data.is_null() {
                    return Err(format!(
                        "output {i} was not allocated through ctx.alloc_output"
                    ));
                }
                let gs = unsafe { t.sizes() }.to_vec();
                if &gs != sizes || t.dtype != *dtype as i32 {
                    return Err(format!(
                        "output {i}: shape {gs:?} dtype {} want {sizes:?} {:?}",
                        t.dtype, dtype
                    ));
                }
                let got = unsafe { std::slice::from_raw_parts(t.data as *const u8, bytes.len()) }
                    .to_vec();
                compare(*dtype, &c.tol, &got, bytes).map_err(|e| format!("output {i}: {e}"))?;
            }
        }
    }
    drop(v);
    Ok(())
}

/// The golden directory: `tests/golden`, or `$TN_GOLDEN_DIR` (to replay a regenerated set, e.g.
/// `gen_expected.py --seed-offset 7 --out /tmp/g`).
fn golden_dir() -> String {
    std::env::var("TN_GOLDEN_DIR")
        .unwrap_or_else(|_| format!("{}/tests/golden", env!("CARGO_MANIFEST_DIR")))
}

pub fn run_family(name: &str) -> (usize, Vec<String>) {
    let path = format!("{}/{name}.txt", golden_dir());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let kernels: BTreeMap<&str, _> = crate::kernels().into_iter().collect();
    let cases = parse(&text);
    let mut failures = vec![];
    for c in &cases {
        if let Err(e) = run_case(c, &kernels) {
            failures.push(format!("{} ({}): {e}", c.name, c.op));
        }
    }
    (cases.len(), failures)
}

pub fn check_family(name: &str) {
    let (n, failures) = run_family(name);
    assert!(n > 0, "no cases in family {name}");
    if !failures.is_empty() {
        panic!(
            "{} of {n} golden cases of `{name}` disagree with upstream:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
}

/// The golden families, one file each.
pub const FAMILIES: &[&str] = &[
    "copy", "binary", "unary", "reduce", "linalg", "nn", "index", "sort", "conv", "training",
    "decomp", "special", "bessel", "scan", "scatter", "fft", "complex",
];

/// Every registered kernel has golden cases, and every golden op is registered.
#[test]
fn every_kernel_has_golden_cases() {
    let mut covered = BTreeSet::new();
    for f in FAMILIES {
        let path = format!("{}/{f}.txt", golden_dir());
        for c in parse(&std::fs::read_to_string(path).unwrap()) {
            covered.insert(c.op);
        }
    }
    let registered: BTreeSet<String> = crate::kernels()
        .into_iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let missing: Vec<_> = registered.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "kernels without golden cases: {missing:?}"
    );
    let unknown: Vec<_> = covered.difference(&registered).collect();
    assert!(
        unknown.is_empty(),
        "golden cases for unregistered ops: {unknown:?}"
    );
    let mut names = BTreeSet::new();
    for (n, _) in crate::kernels() {
        assert!(names.insert(n), "{n} registered twice");
    }
}

#[test]
fn golden_copy() {
    check_family("copy");
}

#[test]
fn golden_binary() {
    check_family("binary");
}

/// The harness can fail: a corrupted expectation, a wrong error message and a missing error
/// are each reported.
#[test]
fn harness_detects_disagreement() {
    let path = format!("{}/tests/golden/binary.txt", env!("CARGO_MANIFEST_DIR"));
    let cases = parse(&std::fs::read_to_string(path).unwrap());
    let kernels: BTreeMap<&str, _> = crate::kernels().into_iter().collect();
    let mut checked = 0;
    for c in &cases {
        assert!(run_case(c, &kernels).is_ok(), "{}", c.name);
        let mut bad = c.clone();
        match (&mut bad.error, bad.outs.first_mut()) {
            (Some((_, msg)), _) => msg.push('!'),
            (None, Some((_, OSpec::Fresh { dtype, bytes, .. }))) if !bytes.is_empty() => {
                if !corrupt(*dtype, bytes) {
                    continue;
                }
            }
            _ => continue,
        }
        assert!(
            run_case(&bad, &kernels).is_err(),
            "a corrupted {} still passes",
            c.name
        );
        checked += 1;
    }
    assert!(checked > 100);
    // An expected error the kernel does not raise.
    let ok = cases.iter().find(|c| c.error.is_none()).unwrap();
    let mut bad = ok.clone();
    bad.error = Some(("Runtime".into(), "boom".into()));
    assert!(run_case(&bad, &kernels).is_err());
}

/// Changes one element of `bytes` beyond any tolerance the cases use: the first finite float
/// moves by max(1, |v|) (written back in its dtype), an integer or bool flips its low bit.
fn corrupt(dt: TnDtype, bytes: &mut [u8]) -> bool {
    let n = dt.itemsize();
    for i in 0..bytes.len() / n {
        let e = &mut bytes[i * n..(i + 1) * n];
        match dt {
            TnDtype::Float16 | TnDtype::BFloat16 | TnDtype::Float32 | TnDtype::Float64 => {
                let v = as_f64(dt, e);
                if !v.is_finite() {
                    continue;
                }
                let w = v + v.abs().max(1.0);
                match dt {
                    TnDtype::Float16 => e.copy_from_slice(&half::f16::from_f64(w).to_le_bytes()),
                    TnDtype::BFloat16 => e.copy_from_slice(&half::bf16::from_f64(w).to_le_bytes()),
                    TnDtype::Float32 => e.copy_from_slice(&(w as f32).to_le_bytes()),
                    _ => e.copy_from_slice(&w.to_le_bytes()),
                }
                return true;
            }
            _ => {
                e[0] ^= 1;
                return true;
            }
        }
    }
    false
}

#[test]
fn golden_unary() {
    check_family("unary");
}

#[test]
fn golden_reduce() {
    check_family("reduce");
}

#[test]
fn golden_linalg() {
    check_family("linalg");
}

#[test]
fn golden_nn() {
    check_family("nn");
}

#[test]
fn golden_index() {
    check_family("index");
}

#[test]
fn golden_sort() {
    check_family("sort");
}

#[test]
fn golden_conv() {
    check_family("conv");
}

#[test]
fn golden_training() {
    check_family("training");
}

#[test]
fn golden_decomp() {
    check_family("decomp");
}

#[test]
fn golden_special() {
    check_family("special");
}

#[test]
fn golden_bessel() {
    check_family("bessel");
}

#[test]
fn golden_scan() {
    check_family("scan");
}

#[test]
fn golden_scatter() {
    check_family("scatter");
}

#[test]
fn golden_fft() {
    check_family("fft");
}

#[test]
fn golden_complex() {
    check_family("complex");
}

//! WGSL generation and dispatch: every kernel is one compute shader generated from
//! * the operands (device views): each gets a binding slot (operands sharing a buffer share a
//!   slot, so in-place kernels bind a buffer once), a typed load `ldK(o)` and/or store `stK(o, v)`
//!   in its dtype's compute type (see `wgsl_lib.wgsl`), and base offsets;
//! * a loop structure: one invocation per element of the *outer* shape; an optional *inner*
//!   shape (reduced dims, softmax rows, ...) that the body walks with `ioffK(j)`;
//! * a body (WGSL statements) written by the kernel module.
//!
//! Sizes, strides, offsets and up to [`NSCALARS`] scalars travel in one read-only storage
//! buffer `P` (i32 words), so one compiled pipeline serves every shape with the same rank;
//! pipelines are cached by their source text. Byte-sized outputs (bool, uint8, int8) share
//! 32-bit words between invocations, so their slots are `atomic<u32>` and stores are
//! `atomicAnd`/`atomicOr` on the owning byte (bool is one byte per element, as the core
//! allocates it: 0 or 1).

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

use torchnative_backend::abi::TnDtype;

use crate::device::{gpu, take_uncaptured, Gpu};
use crate::kernel::{runtime, unsupported, KResult, View};

pub const LIB: &str = include_str!("wgsl_lib.wgsl");
pub const NSCALARS: usize = 24;
const WG: u32 = 256;

/// How a dtype computes in WGSL.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ct {
    /// float32 as f32
    F,
    /// int32, uint8, int8 as i32
    I,
    /// int64 as vec2<u32>
    L,
    /// bool as bool
    B,
    /// float64 as its IEEE bits in a vec2<u32> (exact casts, neg/abs, comparisons, division)
    D,
}

impl Ct {
    pub fn ty(self) -> &'static str {
        match self {
            Ct::F => "f32",
            Ct::I => "i32",
            Ct::L | Ct::D => "vec2<u32>",
            Ct::B => "bool",
        }
    }
}

/// The compute type of a dtype, or a refusal naming the op and the dtype.
pub fn ct(op: &str, d: TnDtype) -> KResult<Ct> {
    use TnDtype::*;
    Ok(match d {
        Float32 => Ct::F,
        Int32 | UInt8 | Int8 => Ct::I,
        Int64 => Ct::L,
        Bool => Ct::B,
        Float64 => Ct::D,
        _ => return Err(unsupported(op, d)),
    })
}

fn is_byte(d: TnDtype) -> bool {
    matches!(d, TnDtype::Bool | TnDtype::UInt8 | TnDtype::Int8)
}

/// WGSL converting `v` (an expression of compute type `from`) to compute type `to`, with torch's
/// rules (float→int truncates, →bool is `!= 0`, int64→float rounds to nearest even).
pub fn cast(v: &str, from: Ct, to: Ct) -> String {
    use Ct::*;
    match (from, to) {
        (a, b) if a == b => v.to_string(),
        (F, I) => format!("f_to_i({v})"),
        (F, L) => format!("f_to_l({v})"),
        (F, B) => format!("!({v} == 0.0)"),
        (I, F) => format!("i_to_f({v})"),
        (I, L) => format!("l_from_i({v})"),
        (I, B) => format!("({v} != 0)"),
        (L, F) => format!("l_to_f({v})"),
        (L, I) => format!("bitcast<i32>(({v}).x)"),
        (L, B) => format!("l_nz({v})"),
        (B, F) => format!("select(0.0, 1.0, {v})"),
        (B, I) => format!("select(0, 1, {v})"),
        (B, L) => format!("vec2<u32>(select(0u, 1u, {v}), 0u)"),
        (F, D) => format!("f_to_d({v})"),
        (D, F) => format!("d_to_f({v})"),
        (I, D) => format!("l_to_d(l_from_i({v}))"),
        (L, D) => format!("l_to_d({v})"),
        (D, I) => format!("bitcast<i32>(d_to_l({v}).x)"),
        (D, L) => format!("d_to_l({v})"),
        (D, B) => format!("d_nz({v})"),
        (B, D) => format!("select(vec2<u32>(0u, 0u), vec2<u32>(0u, 0x3ff00000u), {v})"),
        _ => unreachable!(),
    }
}

/// A WGSL literal of a scalar in compute type `c`.
pub fn lit(c: Ct, v: f64) -> String {
    match c {
        Ct::F => {
            let f = v as f32;
            format!("bitcast<f32>({}u)", f.to_bits())
        }
        Ct::I => format!("i32({})", (v as i64) as i32),
        Ct::L => {
            let i = v as i64 as u64;
            format!("vec2<u32>({}u, {}u)", i as u32, (i >> 32) as u32)
        }
        Ct::B => (v != 0.0).to_string(),
        Ct::D => {
            let b = v.to_bits();
            format!("vec2<u32>({}u, {}u)", b as u32, (b >> 32) as u32)
        }
    }
}

/// An int64 literal exactly.
pub fn lit_i64(v: i64) -> String {
    let i = v as u64;
    format!("vec2<u32>({}u, {}u)", i as u32, (i >> 32) as u32)
}

/// One operand of a generated kernel.
pub struct Operand {
    pub view: View,
    /// Strides over the outer shape (elements), one per outer dim.
    pub outer: Vec<i64>,
    /// Strides over the inner shape, one per inner dim.
    pub inner: Vec<i64>,
    pub load: bool,
    pub store: bool,
}

impl Operand {
    pub fn input(view: &View, outer: Vec<i64>, inner: Vec<i64>) -> Operand {
        Operand {
            view: view.clone(),
            outer,
            inner,
            load: true,
            store: false,
        }
    }
    pub fn output(view: &View, outer: Vec<i64>, inner: Vec<i64>) -> Operand {
        Operand {
            view: view.clone(),
            outer,
            inner,
            load: false,
            store: true,
        }
    }
}

/// A kernel to generate and run.
pub struct Kernel {
    pub operands: Vec<Operand>,
    pub outer: Vec<i64>,
    pub inner: Vec<i64>,
    /// WGSL statements run per outer element. In scope: `bK` (base element offset of operand K
    /// at this outer element), `ldK`/`stK`, `ioffK(j)` (inner offset), `NINNER` (u32),
    /// `s_i(k)` / `s_f(k)` (scalar k as i32 / f32), `fail()` (reports an index error).
    pub body: String,
    pub scalars: [i32; NSCALARS],
    /// Adds an error flag (`fail()` in the body); after the run, a raised flag becomes this
    /// error (kind and message).
    pub check: Option<(torchnative_backend::abi::TnErrorKind, String)>,
    /// A hand-written entry point (its own `@compute fn main`, using `ldK`/`stK`/`baseK()`/
    /// `s_i`/`s_f`) and its workgroup counts, instead of one invocation per outer element.
    pub custom: Option<(String, [u32; 3])>,
}

/// Merges adjacent dims that every operand walks contiguously, and drops size-1 dims.
fn collapse(sizes: &[i64], strides: &mut [Vec<i64>]) -> (Vec<i64>, Vec<Vec<i64>>) {
    let mut out_sizes: Vec<i64> = vec![];
    let mut out_strides: Vec<Vec<i64>> = vec![vec![]; strides.len()];
    for d in 0..sizes.len() {
        if sizes[d] == 1 {
            continue;
        }
        if let Some(&last) = out_sizes.last() {
            let mergeable = strides
                .iter()
                .zip(&out_strides)
                .all(|(s, os)| *os.last().unwrap() == s[d] * sizes[d]);
            if mergeable {
                let n = out_sizes.len() - 1;
                out_sizes[n] = last * sizes[d];
                for (os, s) in out_strides.iter_mut().zip(strides.iter()) {
                    let m = os.len() - 1;
                    os[m] = s[d];
                }
                continue;
            }
        }
        out_sizes.push(sizes[d]);
        for (os, s) in out_strides.iter_mut().zip(strides.iter()) {
            os.push(s[d]);
        }
    }
    (out_sizes, out_strides)
}

fn word(slot: usize, atomic: bool, idx: &str) -> String {
    if atomic {
        format!("atomicLoad(&B{slot}[{idx}])")
    } else {
        format!("B{slot}[{idx}]")
    }
}

fn load_fn(k: usize, slot: usize, atomic: bool, d: TnDtype) -> String {
    let c = ct("", d).unwrap();
    let ty = c.ty();
    let body = match d {
        TnDtype::Float32 => format!("return bitcast<f32>({});", word(slot, atomic, "u32(o)")),
        TnDtype::Int32 => format!("return bitcast<i32>({});", word(slot, atomic, "u32(o)")),
        TnDtype::Int64 | TnDtype::Float64 => format!(
            "return vec2<u32>({}, {});",
            word(slot, atomic, "2u * u32(o)"),
            word(slot, atomic, "2u * u32(o) + 1u")
        ),
        _ => {
            let by = format!(
                "let q = u32(o); let by = ({} >> ((q & 3u) * 8u)) & 0xffu;",
                word(slot, atomic, "q >> 2u")
            );
            let conv = match d {
                TnDtype::Bool => "by != 0u",
                TnDtype::UInt8 => "i32(by)",
                _ => "(bitcast<i32>(by << 24u) >> 24u)",
            };
            format!("{by} return {conv};")
        }
    };
    format!("fn ld{k}(o: i32) -> {ty} {{ {body} }}\n")
}

fn store_fn(k: usize, slot: usize, atomic: bool, d: TnDtype) -> String {
    let c = ct("", d).unwrap();
    let ty = c.ty();
    let put = |idx: &str, val: &str| {
        if atomic {
            format!("atomicStore(&B{slot}[{idx}], {val});")
        } else {
            format!("B{slot}[{idx}] = {val};")
        }
    };
    let body = match d {
        TnDtype::Float32 | TnDtype::Int32 => put("u32(o)", "bitcast<u32>(v)"),
        TnDtype::Int64 | TnDtype::Float64 => format!(
            "{} {}",
            put("2u * u32(o)", "v.x"),
            put("2u * u32(o) + 1u", "v.y")
        ),
        _ => {
            let val = if d == TnDtype::Bool {
                "select(0u, 1u, v)"
            } else {
                "(bitcast<u32>(v) & 0xffu)"
            };
            format!(
                "let q = u32(o); let sh = (q & 3u) * 8u; atomicAnd(&B{slot}[q >> 2u], ~(0xffu << sh)); atomicOr(&B{slot}[q >> 2u], {val} << sh);"
            )
        }
    };
    format!("fn st{k}(o: i32, v: {ty}) {{ {body} }}\n")
}

struct Plan {
    source: String,
    params: Vec<i32>,
    buffers: Vec<wgpu::Buffer>,
    threads: u64,
}

impl Kernel {
    pub fn new(body: impl Into<String>) -> Kernel {
        Kernel {
            operands: vec![],
            outer: vec![],
            inner: vec![],
            body: body.into(),
            scalars: [0; NSCALARS],
            check: None,
            custom: None,
        }
    }
    pub fn scalar_f(&mut self, k: usize, v: f64) -> &mut Self {
        self.scalars[k] = (v as f32).to_bits() as i32;
        self
    }
    pub fn scalar_i(&mut self, k: usize, v: i64) -> &mut Self {
        self.scalars[k] = v as i32;
        self
    }

    fn plan(&self) -> KResult<Option<Plan>> {
        let n_outer: i64 = self.outer.iter().product();
        let n_inner: i64 = self.inner.iter().product();
        if n_outer == 0 {
            return Ok(None);
        }
        // Operands whose every view is empty (inner size 0) still bind: give them a buffer.
        let mut outer_strides: Vec<Vec<i64>> =
            self.operands.iter().map(|o| o.outer.clone()).collect();
        let (osz, ost) = collapse(&self.outer, &mut outer_strides);
        let mut inner_strides: Vec<Vec<i64>> =
            self.operands.iter().map(|o| o.inner.clone()).collect();
        let (isz, ist) = collapse(&self.inner, &mut inner_strides);
        let (no, ni) = (osz.len(), isz.len());

        let mut buffers: Vec<wgpu::Buffer> = vec![];
        let mut slot_of = vec![];
        let mut atomic: Vec<bool> = vec![];
        for o in &self.operands {
            let Some(buf) = o.view.buffer.clone() else {
                return Err(runtime(
                    "internal: an operand without memory reached a dispatch",
                ));
            };
            let s = match buffers.iter().position(|b| *b == buf) {
                Some(s) => s,
                None => {
                    buffers.push(buf);
                    atomic.push(false);
                    buffers.len() - 1
                }
            };
            if o.store && is_byte(o.view.dtype) {
                atomic[s] = true;
            }
            slot_of.push(s);
        }
        let mut src = String::with_capacity(8192);
        src.push_str(LIB);
        src.push_str("@group(0) @binding(0) var<storage, read> P: array<i32>;\n");
        for (s, a) in atomic.iter().enumerate() {
            let ty = if *a {
                "array<atomic<u32>>"
            } else {
                "array<u32>"
            };
            let _ = writeln!(
                src,
                "@group(0) @binding({}) var<storage, read_write> B{s}: {ty};",
                s + 1
            );
        }
        if self.check.is_some() {
            let _ = writeln!(
                src,
                "@group(0) @binding({}) var<storage, read_write> ERR: array<atomic<u32>>;\nfn fail() {{ atomicStore(&ERR[0], 1u); }}",
                buffers.len() + 1
            );
        }
        let ns = NSCALARS;
        let osz_at = 2 + ns;
        let isz_at = osz_at + no;
        let op_at = |k: usize| isz_at + ni + k * (1 + no + ni);
        let _ = writeln!(
            src,
            "fn s_i(k: u32) -> i32 {{ return P[1u + k]; }}\nfn s_f(k: u32) -> f32 {{ return bitcast<f32>(P[1u + k]); }}"
        );
        for (k, o) in self.operands.iter().enumerate() {
            if o.load {
                src.push_str(&load_fn(k, slot_of[k], atomic[slot_of[k]], o.view.dtype));
            }
            if o.store {
                src.push_str(&store_fn(k, slot_of[k], atomic[slot_of[k]], o.view.dtype));
            }
            let _ = writeln!(src, "fn base{k}() -> i32 {{ return P[{}]; }}", op_at(k));
            if ni == 0 {
                let _ = writeln!(src, "fn ioff{k}(j: u32) -> i32 {{ return 0; }}");
            } else if ni == 1 {
                let _ = writeln!(
                    src,
                    "fn ioff{k}(j: u32) -> i32 {{ return i32(j) * P[{}]; }}",
                    op_at(k) + 1 + no
                );
            } else {
                let base = op_at(k) + 1 + no;
                let _ = writeln!(
                    src,
                    "fn ioff{k}(j: u32) -> i32 {{ var r = 0; var rem = j; for (var d: i32 = {last}; d >= 0; d = d - 1) {{ let sz = u32(P[{isz_at} + d]); r = r + i32(rem % sz) * P[{base} + d]; rem = rem / sz; }} return r; }}",
                    last = ni as i32 - 1
                );
            }
        }
        if let Some((main, _)) = &self.custom {
            src.push_str(main);
        } else {
            let _ = writeln!(
            src,
            "@compute @workgroup_size({WG})\nfn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{\n  let i = gid.x + gid.y * nwg.x * {WG}u;\n  if (i >= u32(P[0])) {{ return; }}\n  let NINNER = u32(P[{}]);",
            1 + ns
        );
            for k in 0..self.operands.len() {
                let _ = writeln!(src, "  var b{k}: i32 = P[{}];", op_at(k));
            }
            if no > 0 {
                let _ = writeln!(
                src,
                "  var rem = i;\n  for (var d: i32 = {}; d >= 0; d = d - 1) {{\n    let sz = u32(P[{osz_at} + d]); let c = i32(rem % sz); rem = rem / sz;",
                no as i32 - 1
            );
                for k in 0..self.operands.len() {
                    let _ = writeln!(src, "    b{k} = b{k} + c * P[{} + d];", op_at(k) + 1);
                }
                src.push_str("  }\n");
            }
            src.push_str(&self.body);
            src.push_str("\n}\n");
        }

        let mut params = vec![0i32; op_at(self.operands.len())];
        params[0] = n_outer as i32;
        params[1..=ns].copy_from_slice(&self.scalars);
        params[1 + ns] = n_inner as i32;
        for (d, s) in osz.iter().enumerate() {
            params[osz_at + d] = *s as i32;
        }
        for (d, s) in isz.iter().enumerate() {
            params[isz_at + d] = *s as i32;
        }
        for (k, o) in self.operands.iter().enumerate() {
            let at = op_at(k);
            params[at] = o.view.elem_offset() as i32;
            for d in 0..no {
                params[at + 1 + d] = ost[k][d] as i32;
            }
            for d in 0..ni {
                params[at + 1 + no + d] = ist[k][d] as i32;
            }
        }
        if n_outer > i32::MAX as i64 || n_inner > i32::MAX as i64 {
            return Err(runtime(
                "tensors of more than 2^31 elements are not supported on vulkan",
            ));
        }
        Ok(Some(Plan {
            source: src,
            params,
            buffers,
            threads: n_outer as u64,
        }))
    }

    /// Generates, compiles (cached) and runs the kernel; waits for completion only when it
    /// checks indices.
    pub fn run(&self) -> KResult {
        let Some(plan) = self.plan()? else {
            return Ok(());
        };
        let g = gpu().map_err(runtime)?;
        let pipeline = pipeline(g, &plan.source)?;
        let params = buffer_init(g, bytemuck_cast(&plan.params));
        let err = if self.check.is_some() {
            Some(buffer_init(g, &[0u8; 4]))
        } else {
            None
        };
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: params.as_entire_binding(),
        }];
        for (s, b) in plan.buffers.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: s as u32 + 1,
                resource: b.as_entire_binding(),
            });
        }
        if let Some(e) = &err {
            entries.push(wgpu::BindGroupEntry {
                binding: plan.buffers.len() as u32 + 1,
                resource: e.as_entire_binding(),
            });
        }
        let layout = pipeline.get_bind_group_layout(0);
        let group = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &entries,
        });
        let groups = plan.threads.div_ceil(WG as u64);
        let (x, y, z) = match &self.custom {
            Some((_, [x, y, z])) => (*x, *y, *z),
            None => {
                let x = groups.min(65535) as u32;
                (x, groups.div_ceil(x as u64) as u32, 1)
            }
        };
        let mut enc = g
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(x, y, z);
        }
        g.queue.submit([enc.finish()]);
        if let Some(msg) = take_uncaptured() {
            return Err(runtime(format!("vulkan dispatch failed: {msg}")));
        }
        if let Some(e) = err {
            let mut flag = [0u8; 4];
            crate::alloc::read_bytes(&e, 0, &mut flag).map_err(runtime)?;
            if flag != [0u8; 4] {
                let (kind, msg) = self.check.clone().unwrap();
                return Err(crate::kernel::err(kind, msg));
            }
        }
        Ok(())
    }
}

fn bytemuck_cast(p: &[i32]) -> &[u8] {
    bytemuck::cast_slice(p)
}

fn buffer_init(g: &Gpu, bytes: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    g.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        })
}

static PIPELINES: Mutex<Option<HashMap<String, Arc<wgpu::ComputePipeline>>>> = Mutex::new(None);

/// Number of distinct compiled pipelines (diagnostics).
pub fn pipeline_count() -> usize {
    PIPELINES.lock().unwrap().as_ref().map_or(0, |m| m.len())
}

fn pipeline(g: &Gpu, source: &str) -> KResult<Arc<wgpu::ComputePipeline>> {
    if let Some(p) = PIPELINES
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .get(source)
    {
        return Ok(p.clone());
    }
    g.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = g.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let p = g
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    if let Some(e) = pollster::block_on(g.device.pop_error_scope()) {
        let body: String = source[LIB.len()..].to_string();
        return Err(runtime(format!(
            "internal: a generated vulkan shader did not compile: {e}\n{body}"
        )));
    }
    let p = Arc::new(p);
    PIPELINES
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(source.to_string(), p.clone());
    Ok(p)
}

/// Runs `body` once per element of `shape` over operands given with strides over that shape.
pub fn elementwise(shape: &[i64], operands: Vec<Operand>, body: &str) -> Kernel {
    let mut k = Kernel::new(body);
    k.outer = shape.to_vec();
    k.operands = operands;
    k
}

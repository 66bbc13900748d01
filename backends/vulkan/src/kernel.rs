//! The calling side of a vulkan kernel: `TnArg` access, device views of `TnTensor`s (virtual
//! address resolved to a `wgpu::Buffer`), errors, and the never-unwinding `extern "C"` wrapper
//! ([`vk_kernels!`](crate::vk_kernels)).

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use torchnative_abi::{TnArg, TnArgKind, TnDtype, TnError, TnErrorKind, TnKernelCtx, TnTensor};

use crate::alloc::resolve;

/// An error a kernel reports: the Python exception kind and its message.
#[derive(Debug, Clone)]
pub struct KernelError {
    pub kind: TnErrorKind,
    pub msg: String,
}

pub type KResult<T = ()> = Result<T, KernelError>;

pub fn kerr(kind: TnErrorKind, msg: impl Into<String>) -> KernelError {
    KernelError {
        kind,
        msg: msg.into(),
    }
}
pub fn runtime(msg: impl Into<String>) -> KernelError {
    kerr(TnErrorKind::Runtime, msg)
}
pub fn not_implemented(msg: impl Into<String>) -> KernelError {
    kerr(TnErrorKind::NotImplemented, msg)
}

/// Upstream's name of a dtype in error messages ('Float', 'Long', ...).
pub fn dtype_name(d: TnDtype) -> &'static str {
    use TnDtype::*;
    match d {
        UInt8 => "Byte",
        Int8 => "Char",
        Int16 => "Short",
        Int32 => "Int",
        Int64 => "Long",
        Float16 => "Half",
        Float32 => "Float",
        Float64 => "Double",
        ComplexHalf => "ComplexHalf",
        ComplexFloat => "ComplexFloat",
        ComplexDouble => "ComplexDouble",
        Bool => "Bool",
        BFloat16 => "BFloat16",
    }
}

/// A refusal for a dtype this backend cannot compute exactly, in upstream's wording plus the
/// device, so the user sees what is missing (`"exp" not implemented for 'Long' on vulkan`).
pub fn unsupported(op: &str, d: TnDtype) -> KernelError {
    not_implemented(format!(
        "\"{op}\" not implemented for '{}' on device 'vulkan' (torchnative-vulkan computes in float32, int32, int64 and bool)",
        dtype_name(d)
    ))
}

/// A scalar argument (`Scalar` in a schema).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Bool(b) => b as u8 as f64,
        }
    }
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
            Scalar::Bool(b) => b as i64,
        }
    }
}

/// A small device buffer holding `bytes` (padded to 4).
fn host_scalar(bytes: &[u8]) -> KResult<wgpu::Buffer> {
    use wgpu::util::DeviceExt;
    let g = crate::device::gpu().map_err(runtime)?;
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().div_ceil(4).max(1) * 4, 0);
    Ok(g.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("cpu scalar"),
            contents: &padded,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        }))
}

/// A device view: the buffer holding element 0, its byte offset, dtype, sizes and strides.
#[derive(Clone, Debug)]
pub struct View {
    pub buffer: Option<wgpu::Buffer>,
    /// Byte offset of element 0 inside `buffer`.
    pub offset: u64,
    pub dtype: TnDtype,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

impl View {
    /// # Safety
    /// `t` must be a valid view from the core.
    pub unsafe fn from_raw(t: &TnTensor) -> KResult<View> {
        let dtype = TnDtype::from_code(t.dtype)
            .ok_or_else(|| runtime(format!("unknown dtype code {}", t.dtype)))?;
        if t.ndim < 0 {
            return Err(runtime("tensor view with negative ndim"));
        }
        let sizes = t.sizes().to_vec();
        let strides = t.strides().to_vec();
        let numel: i64 = sizes.iter().product();
        let (buffer, offset) = if numel == 0 {
            (None, 0)
        } else if strides.iter().all(|&s| s == 0)
            && !t.data.is_null()
            && resolve(t.data as u64).is_none()
        {
            // A 0-dim CPU tensor (possibly expanded) beside vulkan operands: the core allows it
            // (a wrapped Python number, `torch.where(c, x, 0.0)`); its one element is host
            // memory, so it is uploaded.
            let bytes = std::slice::from_raw_parts(t.data as *const u8, dtype.itemsize());
            (Some(host_scalar(bytes)?), 0)
        } else {
            let p = resolve(t.data as u64).ok_or_else(|| {
                runtime(format!(
                    "{:#x} is not memory of the vulkan allocator (a tensor of another device reached a vulkan kernel)",
                    t.data as u64
                ))
            })?;
            (Some(p.buffer), p.offset)
        };
        Ok(View {
            buffer,
            offset,
            dtype,
            sizes,
            strides,
        })
    }
    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }
    pub fn numel(&self) -> usize {
        self.sizes.iter().product::<i64>() as usize
    }
    pub fn itemsize(&self) -> u64 {
        self.dtype.itemsize() as u64
    }
    /// The element offset of element 0, in units of the dtype's itemsize.
    pub fn elem_offset(&self) -> i64 {
        (self.offset / self.itemsize()) as i64
    }
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1i64;
        for d in (0..self.ndim()).rev() {
            if self.sizes[d] != 1 {
                if self.strides[d] != expected {
                    return false;
                }
                expected *= self.sizes[d];
            }
        }
        true
    }
    /// The same storage with other sizes/strides and `delta` elements further on.
    pub fn restrided(&self, sizes: Vec<i64>, strides: Vec<i64>, delta: i64) -> View {
        View {
            buffer: self.buffer.clone(),
            offset: (self.offset as i64 + delta * self.itemsize() as i64) as u64,
            dtype: self.dtype,
            sizes,
            strides,
        }
    }
    /// Same buffer (for binding-slot sharing between operands).
    pub fn same_buffer(&self, other: &View) -> bool {
        match (&self.buffer, &other.buffer) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// One kernel invocation: the schema-ordered args and the outputs.
pub struct Call<'a> {
    pub op: &'static str,
    pub args: &'a [TnArg],
    pub outs: &'a mut [TnTensor],
    pub ctx: *const TnKernelCtx,
}

impl<'a> Call<'a> {
    fn arg(&self, i: usize) -> KResult<&'a TnArg> {
        self.args
            .get(i)
            .ok_or_else(|| runtime(format!("{}: expected argument {i}", self.op)))
    }
    fn wrong(&self, i: usize, want: &str) -> KernelError {
        let k = self.args.get(i).map(|a| a.kind).unwrap_or(-1);
        runtime(format!(
            "{}: argument {i} should be {want} (got kind {k})",
            self.op
        ))
    }
    pub fn is_none(&self, i: usize) -> bool {
        self.args
            .get(i)
            .map(|a| a.kind == TnArgKind::None as i32)
            .unwrap_or(true)
    }
    pub fn tensor(&self, i: usize) -> KResult<View> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::Tensor as i32 {
            return Err(self.wrong(i, "a Tensor"));
        }
        unsafe { View::from_raw(&a.tensor) }
    }
    pub fn opt_tensor(&self, i: usize) -> KResult<Option<View>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.tensor(i).map(Some)
        }
    }
    pub fn tensor_list(&self, i: usize) -> KResult<Vec<View>> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::TensorList as i32 {
            return Err(self.wrong(i, "a tensor list"));
        }
        let raw: &[TnTensor] = if a.len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(a.tensors, a.len) }
        };
        raw.iter().map(|t| unsafe { View::from_raw(t) }).collect()
    }
    pub fn int(&self, i: usize) -> KResult<i64> {
        let a = self.arg(i)?;
        if a.kind == TnArgKind::Int as i32 || a.kind == TnArgKind::Bool as i32 {
            Ok(a.i)
        } else {
            Err(self.wrong(i, "an int"))
        }
    }
    pub fn opt_int(&self, i: usize) -> KResult<Option<i64>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.int(i).map(Some)
        }
    }
    pub fn float(&self, i: usize) -> KResult<f64> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Float as i32 => Ok(a.f),
            k if k == TnArgKind::Int as i32 || k == TnArgKind::Bool as i32 => Ok(a.i as f64),
            _ => Err(self.wrong(i, "a float")),
        }
    }
    pub fn opt_float(&self, i: usize) -> KResult<Option<f64>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.float(i).map(Some)
        }
    }
    pub fn bool(&self, i: usize) -> KResult<bool> {
        self.int(i).map(|v| v != 0)
    }
    pub fn scalar(&self, i: usize) -> KResult<Scalar> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Int as i32 => Ok(Scalar::Int(a.i)),
            k if k == TnArgKind::Float as i32 => Ok(Scalar::Float(a.f)),
            k if k == TnArgKind::Bool as i32 => Ok(Scalar::Bool(a.i != 0)),
            k if k == TnArgKind::Complex as i32 => Err(not_implemented(format!(
                "{}: complex scalars are not supported on device 'vulkan'",
                self.op
            ))),
            _ => Err(self.wrong(i, "a Scalar")),
        }
    }
    pub fn opt_scalar(&self, i: usize) -> KResult<Option<Scalar>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.scalar(i).map(Some)
        }
    }
    pub fn int_list(&self, i: usize) -> KResult<Vec<i64>> {
        let a = self.arg(i)?;
        if a.kind == TnArgKind::None as i32 {
            return Ok(vec![]);
        }
        if a.kind != TnArgKind::IntList as i32 {
            return Err(self.wrong(i, "an int list"));
        }
        Ok(if a.len == 0 {
            vec![]
        } else {
            unsafe { std::slice::from_raw_parts(a.ints, a.len) }.to_vec()
        })
    }
    pub fn str(&self, i: usize) -> KResult<&'a str> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::Str as i32 || a.str_.is_null() {
            return Err(self.wrong(i, "a str"));
        }
        unsafe { CStr::from_ptr(a.str_) }
            .to_str()
            .map_err(|_| runtime(format!("{}: argument {i} is not UTF-8", self.op)))
    }
    /// `Tensor?[]`: None entries (ndim -1) are None.
    pub fn opt_tensor_list(&self, i: usize) -> KResult<Vec<Option<View>>> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::TensorList as i32 {
            return Err(self.wrong(i, "a tensor list"));
        }
        let raw: &[TnTensor] = if a.len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(a.tensors, a.len) }
        };
        raw.iter()
            .map(|t| {
                if t.ndim < 0 {
                    Ok(None)
                } else {
                    unsafe { View::from_raw(t) }.map(Some)
                }
            })
            .collect()
    }
    /// Allocates a data-dependent output through the core (`ctx.alloc_output`).
    pub fn alloc_output(&mut self, i: usize, dtype: TnDtype, sizes: &[i64]) -> KResult<View> {
        if self.ctx.is_null() || i >= self.outs.len() {
            return Err(runtime(format!(
                "{}: no kernel context to allocate output {i}",
                self.op
            )));
        }
        let ctx = unsafe { &*self.ctx };
        let slot: *mut TnTensor = &mut self.outs[i];
        let rc = unsafe {
            (ctx.alloc_output)(
                ctx.core,
                i,
                dtype as i32,
                sizes.len() as i32,
                sizes.as_ptr(),
                slot,
            )
        };
        if rc != 0 {
            return Err(runtime(format!(
                "{}: the core could not allocate output {i}",
                self.op
            )));
        }
        self.out(i)
    }
    pub fn out(&self, i: usize) -> KResult<View> {
        let t = self
            .outs
            .get(i)
            .ok_or_else(|| runtime(format!("{}: expected output {i}", self.op)))?;
        unsafe { View::from_raw(t) }
    }
}

/// Runs a kernel body behind the C ABI: builds the [`Call`], catches panics, reports errors.
///
/// # Safety
/// The pointers are those the core passes to a `TnKernelFn`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn run(
    op: &'static str,
    ctx: *const TnKernelCtx,
    args: *const TnArg,
    nargs: usize,
    outs: *mut TnTensor,
    nouts: usize,
    errp: *mut TnError,
    body: fn(&mut Call) -> KResult,
) -> i32 {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let args = if nargs == 0 || args.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(args, nargs)
        };
        let outs = if nouts == 0 || outs.is_null() {
            &mut [][..]
        } else {
            std::slice::from_raw_parts_mut(outs, nouts)
        };
        body(&mut Call {
            op,
            args,
            outs,
            ctx,
        })
    }));
    let e = match result {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            runtime(format!(
                "{op}: internal error in torchnative-vulkan: {what}"
            ))
        }
    };
    if !errp.is_null() {
        (*errp).set(e.kind, &e.msg);
    }
    1
}

/// Declares `extern "C"` kernels from `(name, overload, body)` triples and a `register` function
/// that appends them to the backend's table.
#[macro_export]
macro_rules! vk_kernels {
    ($( $name:ident = $op:literal => $body:expr ;)*) => {
        $(
            #[allow(clippy::missing_safety_doc, clippy::redundant_closure)]
            pub unsafe extern "C" fn $name(
                _user: *mut ::std::ffi::c_void,
                ctx: *const ::torchnative_abi::TnKernelCtx,
                args: *const ::torchnative_abi::TnArg,
                nargs: usize,
                outs: *mut ::torchnative_abi::TnTensor,
                nouts: usize,
                err: *mut ::torchnative_abi::TnError,
            ) -> i32 {
                $crate::kernel::run($op, ctx, args, nargs, outs, nouts, err, $body)
            }
        )*
        /// This module's kernels, as `(operator overload, kernel)`.
        pub fn register(reg: &mut Vec<(&'static str, ::torchnative_abi::TnKernelFn)>) {
            $( reg.push(($op, $name as ::torchnative_abi::TnKernelFn)); )*
        }
    };
}

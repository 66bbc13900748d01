//! The calling side of a kernel: reading `TnArg`s, viewing `TnTensor`s, errors, and the
//! [`kernel!`](crate::kernel!) wrapper that makes every kernel an `extern "C"` function which
//! never unwinds across the boundary.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use torchnative_abi::{TnArg, TnArgKind, TnDtype, TnError, TnErrorKind, TnKernelCtx, TnTensor};

use crate::dtype::{dtype_name, Elem};

/// An error a kernel reports: the Python exception kind and its message.
#[derive(Debug, Clone)]
pub struct KernelError {
    pub kind: TnErrorKind,
    pub msg: String,
}

pub type KResult<T = ()> = Result<T, KernelError>;

pub fn err(kind: TnErrorKind, msg: impl Into<String>) -> KernelError {
    KernelError {
        kind,
        msg: msg.into(),
    }
}
pub fn runtime(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::Runtime, msg)
}
pub fn index_error(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::Index, msg)
}
pub fn value_error(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::Value, msg)
}
pub fn not_implemented(msg: impl Into<String>) -> KernelError {
    err(TnErrorKind::NotImplemented, msg)
}
pub fn unsupported_dtype(op: &str, dt: TnDtype) -> KernelError {
    // Upstream's wording for a dtype its dispatch macro does not cover.
    err(
        TnErrorKind::NotImplemented,
        format!("\"{op}\" not implemented for '{}'", dtype_name(dt)),
    )
}

/// `bail!(kind_fn, "fmt", args)`: return early with an error.
#[macro_export]
macro_rules! bail {
    ($f:ident, $($t:tt)*) => { return Err($crate::kernel::$f(format!($($t)*))) };
}

/// A scalar argument (`Scalar` in a schema).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    /// The scalar in dtype `T`, converted with torch's conversion rules.
    pub fn to<T: Elem>(self) -> T {
        match self {
            Scalar::Int(i) => T::from_i64(i),
            Scalar::Float(f) => T::from_f64(f),
            Scalar::Bool(b) => T::from_bool(b),
        }
    }
    /// The scalar in dtype `T` as upstream's `Scalar::to<T>()` gives it: checked for overflow
    /// (`RuntimeError: value cannot be converted to type uint8_t without overflow`), then
    /// converted with torch's rules. Negative ints wrap into unsigned types (-1 → 255).
    pub fn checked<T: Elem>(self) -> KResult<T> {
        let overflow = if T::DTYPE == TnDtype::Bool {
            false
        } else {
            match self {
                Scalar::Bool(_) => false,
                Scalar::Int(i) => {
                    let i = i as i128;
                    if crate::dtype::is_int(T::DTYPE) && T::LOWEST == 0.0 {
                        i > T::MAX as i128 || (i < 0 && -i > T::MAX as i128)
                    } else {
                        i < T::LOWEST as i128 || i > T::MAX as i128
                    }
                }
                Scalar::Float(f) => {
                    if crate::dtype::is_float(T::DTYPE) && (f.is_infinite() || f.is_nan()) {
                        false
                    } else {
                        f.is_nan() || f < T::LOWEST || f > T::MAX
                    }
                }
            }
        };
        if overflow {
            return Err(runtime(format!(
                "value cannot be converted to type {} without overflow",
                T::CNAME
            )));
        }
        Ok(self.to::<T>())
    }
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Bool(b) => b as u8 as f64,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float(_))
    }
}

/// A strided view of one tensor argument or output, valid for the duration of the call.
/// Sizes and strides are in elements, as in torch.
#[derive(Copy, Clone, Debug)]
pub struct Tensor<'a> {
    pub data: *mut u8,
    pub dtype: TnDtype,
    pub sizes: &'a [i64],
    pub strides: &'a [i64],
}

impl<'a> Tensor<'a> {
    /// # Safety
    /// `t` must be a valid view for `'a`.
    pub unsafe fn from_raw(t: &'a TnTensor) -> KResult<Tensor<'a>> {
        let dtype = TnDtype::from_code(t.dtype)
            .ok_or_else(|| runtime(format!("unknown dtype code {}", t.dtype)))?;
        if t.ndim < 0 {
            return Err(runtime("tensor view with negative ndim"));
        }
        Ok(Tensor {
            data: t.data as *mut u8,
            dtype,
            sizes: t.sizes(),
            strides: t.strides(),
        })
    }
    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }
    pub fn numel(&self) -> usize {
        self.sizes.iter().product::<i64>() as usize
    }
    pub fn size(&self, d: usize) -> usize {
        self.sizes[d] as usize
    }
    pub fn stride(&self, d: usize) -> isize {
        self.strides[d] as isize
    }
    pub fn itemsize(&self) -> usize {
        self.dtype.itemsize()
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
    /// Pointer to the element at a multi-index.
    pub fn ptr_at(&self, idx: &[usize]) -> *mut u8 {
        let mut off = 0isize;
        for (d, &i) in idx.iter().enumerate() {
            off += i as isize * self.strides[d] as isize;
        }
        unsafe { self.data.offset(off * self.itemsize() as isize) }
    }
    /// Element strides in bytes.
    pub fn byte_strides(&self) -> Vec<isize> {
        let s = self.itemsize() as isize;
        self.strides.iter().map(|&x| x as isize * s).collect()
    }
    /// Reads element `T` at element offset `off` from `data`.
    ///
    /// # Safety
    /// `T` must be the view's element type and the offset in bounds.
    #[inline(always)]
    pub unsafe fn read<T: Copy>(&self, off: isize) -> T {
        (self.data as *const T).offset(off).read()
    }
    /// # Safety
    /// As [`Tensor::read`].
    #[inline(always)]
    pub unsafe fn write<T: Copy>(&self, off: isize, v: T) {
        (self.data as *mut T).offset(off).write(v)
    }
    /// Element offset of a multi-index.
    pub fn offset_of(&self, idx: &[usize]) -> isize {
        idx.iter()
            .zip(self.strides)
            .map(|(&i, &s)| i as isize * s as isize)
            .sum()
    }
    pub fn check_dtype(&self, dt: TnDtype, what: &str) -> KResult {
        if self.dtype != dt {
            bail!(
                runtime,
                "{what}: expected dtype {} but got {}",
                dtype_name(dt),
                dtype_name(self.dtype)
            );
        }
        Ok(())
    }
}

/// Owned sizes/strides for views a kernel derives (permuted, reshaped, ...).
#[derive(Clone, Debug)]
pub struct OwnedView {
    pub data: *mut u8,
    pub dtype: TnDtype,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

impl OwnedView {
    pub fn of(t: &Tensor) -> OwnedView {
        OwnedView {
            data: t.data,
            dtype: t.dtype,
            sizes: t.sizes.to_vec(),
            strides: t.strides.to_vec(),
        }
    }
    pub fn view(&self) -> Tensor<'_> {
        Tensor {
            data: self.data,
            dtype: self.dtype,
            sizes: &self.sizes,
            strides: &self.strides,
        }
    }
    /// Moves dim `d` to the end.
    pub fn move_to_last(mut self, d: usize) -> OwnedView {
        let s = self.sizes.remove(d);
        let st = self.strides.remove(d);
        self.sizes.push(s);
        self.strides.push(st);
        self
    }
    /// Inserts a size-1 dim at `d` (stride irrelevant).
    pub fn unsqueeze(mut self, d: usize) -> OwnedView {
        self.sizes.insert(d, 1);
        self.strides.insert(d, 0);
        self
    }
}

/// One kernel invocation: the schema-ordered args, the outputs, the core's services.
pub struct Call<'a> {
    pub op: &'static str,
    pub args: &'a [TnArg],
    pub outs: &'a mut [TnTensor],
    pub ctx: *const TnKernelCtx,
}

impl<'a> Call<'a> {
    fn arg(&self, i: usize) -> KResult<&'a TnArg> {
        self.args.get(i).ok_or_else(|| {
            runtime(format!(
                "{}: expected argument {i}, got {} arguments",
                self.op,
                self.args.len()
            ))
        })
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
    pub fn tensor(&self, i: usize) -> KResult<Tensor<'a>> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::Tensor as i32 {
            return Err(self.wrong(i, "a Tensor"));
        }
        unsafe { Tensor::from_raw(&a.tensor) }
    }
    pub fn opt_tensor(&self, i: usize) -> KResult<Option<Tensor<'a>>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.tensor(i).map(Some)
        }
    }
    pub fn int(&self, i: usize) -> KResult<i64> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Int as i32 => Ok(a.i),
            k if k == TnArgKind::Bool as i32 => Ok(a.i),
            _ => Err(self.wrong(i, "an int")),
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
            k if k == TnArgKind::Int as i32 => Ok(a.i as f64),
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
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Bool as i32 || k == TnArgKind::Int as i32 => Ok(a.i != 0),
            _ => Err(self.wrong(i, "a bool")),
        }
    }
    pub fn opt_bool(&self, i: usize) -> KResult<Option<bool>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.bool(i).map(Some)
        }
    }
    pub fn scalar(&self, i: usize) -> KResult<Scalar> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Int as i32 => Ok(Scalar::Int(a.i)),
            k if k == TnArgKind::Float as i32 => Ok(Scalar::Float(a.f)),
            k if k == TnArgKind::Bool as i32 => Ok(Scalar::Bool(a.i != 0)),
            k if k == TnArgKind::Complex as i32 => Err(err(
                TnErrorKind::NotImplemented,
                format!(
                    "{}: complex scalars are not supported by the cpu backend",
                    self.op
                ),
            )),
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
    pub fn int_list(&self, i: usize) -> KResult<&'a [i64]> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::IntList as i32 {
            return Err(self.wrong(i, "an int list"));
        }
        Ok(if a.len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(a.ints, a.len) }
        })
    }
    pub fn opt_int_list(&self, i: usize) -> KResult<Option<&'a [i64]>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.int_list(i).map(Some)
        }
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
    pub fn opt_str(&self, i: usize) -> KResult<Option<&'a str>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.str(i).map(Some)
        }
    }
    pub fn opt_dtype(&self, i: usize) -> KResult<Option<TnDtype>> {
        if self.is_none(i) {
            return Ok(None);
        }
        let a = self.arg(i)?;
        if a.kind != TnArgKind::Dtype as i32 {
            return Err(self.wrong(i, "a dtype"));
        }
        TnDtype::from_code(a.i as i32)
            .map(Some)
            .ok_or_else(|| runtime(format!("unknown dtype code {}", a.i)))
    }
    /// `Tensor[]`.
    pub fn tensor_list(&self, i: usize) -> KResult<Vec<Tensor<'a>>> {
        self.opt_tensor_list(i)?
            .into_iter()
            .map(|t| t.ok_or_else(|| runtime("None in a Tensor[] argument")))
            .collect::<KResult<_>>()
    }
    /// `Tensor?[]`: an element is None when its `ndim` is negative or its kind-less view has a
    /// null `sizes` pointer with ndim -1 (see KERNELS.md, "conventions this backend assumes").
    pub fn opt_tensor_list(&self, i: usize) -> KResult<Vec<Option<Tensor<'a>>>> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::TensorList as i32 {
            return Err(self.wrong(i, "a tensor list"));
        }
        let raw: &'a [TnTensor] = if a.len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(a.tensors, a.len) }
        };
        raw.iter()
            .map(|t| {
                if t.ndim < 0 {
                    Ok(None)
                } else {
                    unsafe { Tensor::from_raw(t) }.map(Some)
                }
            })
            .collect()
    }
    pub fn nouts(&self) -> usize {
        self.outs.len()
    }
    pub fn out(&self, i: usize) -> KResult<Tensor<'a>> {
        let t = self.outs.get(i).ok_or_else(|| {
            runtime(format!(
                "{}: expected output {i}, got {}",
                self.op,
                self.outs.len()
            ))
        })?;
        // SAFETY: the views in `outs` live for the call; we hand out a copy of the pointers.
        let t: &'a TnTensor = unsafe { &*(t as *const TnTensor) };
        unsafe { Tensor::from_raw(t) }
    }
    /// True when the core left output `i` for the kernel to allocate (a null, 0-dim view).
    pub fn out_is_unallocated(&self, i: usize) -> bool {
        self.outs
            .get(i)
            .map(|t| t.data.is_null() && t.ndim == 0)
            .unwrap_or(false)
    }
    /// Allocates a data-dependent output through the core (`ctx.alloc_output`).
    pub fn alloc_output(&mut self, i: usize, dtype: TnDtype, sizes: &[i64]) -> KResult<Tensor<'a>> {
        if self.ctx.is_null() {
            bail!(
                runtime,
                "{}: no kernel context to allocate a data-dependent output",
                self.op
            );
        }
        if i >= self.outs.len() {
            bail!(runtime, "{}: no output slot {i}", self.op);
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
            bail!(
                runtime,
                "{}: the core could not allocate output {i}",
                self.op
            );
        }
        self.out(i)
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
        let mut call = Call {
            op,
            args,
            outs,
            ctx,
        };
        body(&mut call)
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
                "{op}: internal error in the torchnative-cpu kernel: {what}"
            ))
        }
    };
    if !errp.is_null() {
        (*errp).set(e.kind, &e.msg);
    }
    1
}

/// Declares `extern "C"` kernels: `kernels! { k_add = "aten::add.Tensor" => |c| add(c); }`.
/// Each becomes an `unsafe extern "C" fn` of type `TnKernelFn` (by convention named `k_...`)
/// that runs the body through [`run`] (catching panics, reporting errors), and the module gets
/// a `register` function listing them for [`Registry`].
#[macro_export]
macro_rules! kernels {
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

pub type Registry = Vec<(&'static str, torchnative_abi::TnKernelFn)>;

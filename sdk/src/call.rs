//! One kernel invocation: the schema-ordered arguments (`TnArg`s) read with typed accessors, the
//! outputs, and the core's services (`ctx.alloc_output`).

use std::ffi::CStr;
use std::marker::PhantomData;

use crate::abi::{TnArg, TnArgKind, TnDtype, TnKernelCtx, TnTensor};
use crate::error::{not_implemented, runtime, KResult, KernelError};
use crate::Backend;

/// A scalar argument (`Scalar` in a schema).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    #[inline]
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Bool(b) => b as u8 as f64,
        }
    }
    /// Truncates a float, as a C cast.
    #[inline]
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
            Scalar::Bool(b) => b as i64,
        }
    }
    #[inline]
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float(_))
    }
}

/// One kernel invocation of backend `B`: the schema-ordered args, the outputs, the core's
/// services. Tensors come out as `B::Tensor` views.
pub struct Call<'a, B: Backend> {
    pub op: &'static str,
    pub args: &'a [TnArg],
    pub outs: &'a mut [TnTensor],
    pub ctx: *const TnKernelCtx,
    pub(crate) backend: PhantomData<B>,
}

impl<'a, B: Backend> Call<'a, B> {
    /// A call over raw parts (the wrapper builds it; tests may too).
    #[inline]
    pub fn new(
        op: &'static str,
        args: &'a [TnArg],
        outs: &'a mut [TnTensor],
        ctx: *const TnKernelCtx,
    ) -> Self {
        Call {
            op,
            args,
            outs,
            ctx,
            backend: PhantomData,
        }
    }
    #[inline]
    fn arg(&self, i: usize) -> KResult<&'a TnArg> {
        self.args.get(i).ok_or_else(|| {
            runtime(format!(
                "{}: expected argument {i}, got {} arguments",
                self.op,
                self.args.len()
            ))
        })
    }
    #[cold]
    fn wrong(&self, i: usize, want: &str) -> KernelError {
        let k = self.args.get(i).map(|a| a.kind).unwrap_or(-1);
        runtime(format!(
            "{}: argument {i} should be {want} (got kind {k})",
            self.op
        ))
    }
    #[inline]
    pub fn is_none(&self, i: usize) -> bool {
        self.args
            .get(i)
            .map(|a| a.kind == TnArgKind::None as i32)
            .unwrap_or(true)
    }
    #[inline]
    pub fn tensor(&self, i: usize) -> KResult<B::Tensor<'a>> {
        let a = self.arg(i)?;
        if a.kind != TnArgKind::Tensor as i32 {
            return Err(self.wrong(i, "a Tensor"));
        }
        unsafe { B::view(&a.tensor) }
    }
    #[inline]
    pub fn opt_tensor(&self, i: usize) -> KResult<Option<B::Tensor<'a>>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.tensor(i).map(Some)
        }
    }
    #[inline]
    pub fn int(&self, i: usize) -> KResult<i64> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Int as i32 || k == TnArgKind::Bool as i32 => Ok(a.i),
            _ => Err(self.wrong(i, "an int")),
        }
    }
    #[inline]
    pub fn opt_int(&self, i: usize) -> KResult<Option<i64>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.int(i).map(Some)
        }
    }
    #[inline]
    pub fn float(&self, i: usize) -> KResult<f64> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Float as i32 => Ok(a.f),
            k if k == TnArgKind::Int as i32 || k == TnArgKind::Bool as i32 => Ok(a.i as f64),
            _ => Err(self.wrong(i, "a float")),
        }
    }
    #[inline]
    pub fn opt_float(&self, i: usize) -> KResult<Option<f64>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.float(i).map(Some)
        }
    }
    #[inline]
    pub fn bool(&self, i: usize) -> KResult<bool> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Bool as i32 || k == TnArgKind::Int as i32 => Ok(a.i != 0),
            _ => Err(self.wrong(i, "a bool")),
        }
    }
    #[inline]
    pub fn opt_bool(&self, i: usize) -> KResult<Option<bool>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.bool(i).map(Some)
        }
    }
    /// A `Scalar`; a complex one is refused (NotImplementedError naming the device).
    #[inline]
    pub fn scalar(&self, i: usize) -> KResult<Scalar> {
        let a = self.arg(i)?;
        match a.kind {
            k if k == TnArgKind::Int as i32 => Ok(Scalar::Int(a.i)),
            k if k == TnArgKind::Float as i32 => Ok(Scalar::Float(a.f)),
            k if k == TnArgKind::Bool as i32 => Ok(Scalar::Bool(a.i != 0)),
            k if k == TnArgKind::Complex as i32 => Err(not_implemented(format!(
                "{}: complex scalars are not supported on device '{}'",
                self.op,
                B::DEVICE_KEY
            ))),
            _ => Err(self.wrong(i, "a Scalar")),
        }
    }
    #[inline]
    pub fn opt_scalar(&self, i: usize) -> KResult<Option<Scalar>> {
        if self.is_none(i) {
            Ok(None)
        } else {
            self.scalar(i).map(Some)
        }
    }
    #[inline]
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
    #[inline]
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
    pub fn tensor_list(&self, i: usize) -> KResult<Vec<B::Tensor<'a>>> {
        self.opt_tensor_list(i)?
            .into_iter()
            .map(|t| t.ok_or_else(|| runtime("None in a Tensor[] argument")))
            .collect::<KResult<_>>()
    }
    /// `Tensor?[]`: an element is None when its view's `ndim` is negative.
    pub fn opt_tensor_list(&self, i: usize) -> KResult<Vec<Option<B::Tensor<'a>>>> {
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
                    unsafe { B::view(t) }.map(Some)
                }
            })
            .collect()
    }
    #[inline]
    pub fn nouts(&self) -> usize {
        self.outs.len()
    }
    #[inline]
    pub fn out(&self, i: usize) -> KResult<B::Tensor<'a>> {
        let t = self.outs.get(i).ok_or_else(|| {
            runtime(format!(
                "{}: expected output {i}, got {}",
                self.op,
                self.outs.len()
            ))
        })?;
        // SAFETY: the views in `outs` live for the call; we hand out a copy of the pointers.
        let t: &'a TnTensor = unsafe { &*(t as *const TnTensor) };
        unsafe { B::view(t) }
    }
    /// True when the core left output `i` for the kernel to allocate (a null, 0-dim view).
    pub fn out_is_unallocated(&self, i: usize) -> bool {
        self.outs
            .get(i)
            .map(|t| t.data.is_null() && t.ndim == 0)
            .unwrap_or(false)
    }
    /// Allocates a data-dependent output through the core (`ctx.alloc_output`).
    pub fn alloc_output(
        &mut self,
        i: usize,
        dtype: TnDtype,
        sizes: &[i64],
    ) -> KResult<B::Tensor<'a>> {
        if self.ctx.is_null() {
            crate::bail!(
                runtime,
                "{}: no kernel context to allocate a data-dependent output",
                self.op
            );
        }
        if i >= self.outs.len() {
            crate::bail!(runtime, "{}: no output slot {i}", self.op);
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
            crate::bail!(
                runtime,
                "{}: the core could not allocate output {i}",
                self.op
            );
        }
        self.out(i)
    }
}

//! Strided views of host memory, for backends whose device memory the CPU reads and writes
//! directly (cpu, the Rust template). Sizes and strides are in elements, as in torch.

use crate::abi::{TnDtype, TnTensor};
use crate::dtype::dtype_name;
use crate::error::{runtime, KResult};

/// A strided view of one tensor argument or output, valid for the duration of the call.
#[derive(Copy, Clone, Debug)]
pub struct HostTensor<'a> {
    pub data: *mut u8,
    pub dtype: TnDtype,
    pub sizes: &'a [i64],
    pub strides: &'a [i64],
}

impl<'a> HostTensor<'a> {
    /// # Safety
    /// `t` must be a valid view for `'a`.
    #[inline]
    pub unsafe fn from_raw(t: &'a TnTensor) -> KResult<HostTensor<'a>> {
        let dtype = TnDtype::from_code(t.dtype)
            .ok_or_else(|| runtime(format!("unknown dtype code {}", t.dtype)))?;
        if t.ndim < 0 {
            return Err(runtime("tensor view with negative ndim"));
        }
        Ok(HostTensor {
            data: t.data as *mut u8,
            dtype,
            sizes: t.sizes(),
            strides: t.strides(),
        })
    }
    #[inline]
    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }
    #[inline]
    pub fn numel(&self) -> usize {
        self.sizes.iter().product::<i64>() as usize
    }
    #[inline]
    pub fn size(&self, d: usize) -> usize {
        self.sizes[d] as usize
    }
    #[inline]
    pub fn stride(&self, d: usize) -> isize {
        self.strides[d] as isize
    }
    #[inline]
    pub fn itemsize(&self) -> usize {
        self.dtype.itemsize()
    }
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        crate::is_contiguous(self.sizes, self.strides)
    }
    /// Pointer to the element at a multi-index.
    #[inline]
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
    /// As [`HostTensor::read`].
    #[inline(always)]
    pub unsafe fn write<T: Copy>(&self, off: isize, v: T) {
        (self.data as *mut T).offset(off).write(v)
    }
    /// Element offset of a multi-index.
    #[inline]
    pub fn offset_of(&self, idx: &[usize]) -> isize {
        idx.iter()
            .zip(self.strides)
            .map(|(&i, &s)| i as isize * s as isize)
            .sum()
    }
    pub fn check_dtype(&self, dt: TnDtype, what: &str) -> KResult {
        if self.dtype != dt {
            crate::bail!(
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
    pub fn of(t: &HostTensor) -> OwnedView {
        OwnedView {
            data: t.data,
            dtype: t.dtype,
            sizes: t.sizes.to_vec(),
            strides: t.strides.to_vec(),
        }
    }
    #[inline]
    pub fn view(&self) -> HostTensor<'_> {
        HostTensor {
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

//! The vulkan backend's side of the SDK (`torchnative_backend`): device views of `TnTensor`s
//! (virtual address resolved to a `wgpu::Buffer`), the refusal naming what vulkan computes, and
//! [`vk_kernels!`](crate::vk_kernels), the SDK's kernel table for [`Vulkan`](crate::Vulkan).

use torchnative_backend::abi::{TnDtype, TnTensor};
pub use torchnative_backend::dtype::dtype_name;
pub use torchnative_backend::{err, not_implemented, runtime, KResult, KernelError, Scalar};

use crate::alloc::resolve;

/// One kernel invocation on the vulkan backend.
pub type Call<'a> = torchnative_backend::Call<'a, crate::Vulkan>;

/// Declares `extern "C"` vulkan kernels from `name = "overload" => body;` lines and the module's
/// `register` function (the SDK's `kernel_table!` for [`Vulkan`](crate::Vulkan)).
#[macro_export]
macro_rules! vk_kernels {
    ($($t:tt)*) => { ::torchnative_backend::kernel_table! { $crate::Vulkan; $($t)* } };
}

/// A refusal for a dtype this backend cannot compute exactly, in upstream's wording plus the
/// device, so the user sees what is missing (`"exp" not implemented for 'Long' on vulkan`).
pub fn unsupported(op: &str, d: TnDtype) -> KernelError {
    not_implemented(format!(
        "\"{op}\" not implemented for '{}' on device 'vulkan' (torchnative-vulkan computes in float32, int32, int64 and bool)",
        dtype_name(d)
    ))
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
        torchnative_backend::is_contiguous(&self.sizes, &self.strides)
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

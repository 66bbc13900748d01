//! The allocator of device key `"vulkan"`: every allocation is one `wgpu::Buffer`
//! (STORAGE | COPY_SRC | COPY_DST), named to the core by a *virtual address*.
//!
//! The ABI hands kernels a data pointer with the storage offset already applied, so device memory
//! must be addressable by integers. Allocations get disjoint address ranges from a monotonic
//! counter starting at [`BASE`] (64-byte aligned, never reused, never dereferenced by anyone); a
//! `BTreeMap` from range start to buffer resolves any pointer inside an allocation to
//! `(buffer, byte offset)`. Buffer sizes are rounded up to 4 bytes (wgpu copies and WGSL storage
//! arrays work in 32-bit words); byte-sized dtypes (bool, uint8, int8) are addressed inside those
//! words by the shaders.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use torchnative_backend::abi::TnAllocator;

use crate::device::{gpu, wait, Gpu};

/// The first virtual address handed out (far from null, recognisable in `data_ptr()`).
pub const BASE: u64 = 0x7600_0000_0000;
/// Alignment of every virtual address (the core asks for 64).
pub const ALIGN: u64 = 256;

struct Space {
    next: u64,
    blocks: BTreeMap<u64, (wgpu::Buffer, u64)>,
}

static SPACE: Mutex<Space> = Mutex::new(Space {
    next: BASE,
    blocks: BTreeMap::new(),
});

/// A resolved device pointer: the buffer holding it and the byte offset inside that buffer.
#[derive(Clone, Debug)]
pub struct DevPtr {
    pub buffer: wgpu::Buffer,
    pub offset: u64,
    /// Bytes from `offset` to the end of the allocation.
    pub available: u64,
}

/// Resolves a virtual address to its buffer (None: not an address of this allocator).
pub fn resolve(addr: u64) -> Option<DevPtr> {
    let s = SPACE.lock().unwrap();
    let (&start, (buf, size)) = s.blocks.range(..=addr).next_back()?;
    // A zero-size allocation still owns its start address.
    if addr > start && addr - start >= *size {
        return None;
    }
    Some(DevPtr {
        buffer: buf.clone(),
        offset: addr - start,
        available: size.saturating_sub(addr - start),
    })
}

/// Number of live allocations (for tests and diagnostics).
pub fn live_allocations() -> usize {
    SPACE.lock().unwrap().blocks.len()
}

fn round4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

/// Allocates `nbytes` of device memory; returns its virtual address.
pub fn allocate(nbytes: usize) -> Result<u64, String> {
    let g = gpu()?;
    let size = round4(nbytes as u64).max(4);
    if size > g.limits.max_buffer_size {
        return Err(format!(
            "cannot allocate {nbytes} bytes on vulkan: the adapter's largest buffer is {} bytes",
            g.limits.max_buffer_size
        ));
    }
    let buffer = g.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut s = SPACE.lock().unwrap();
    let addr = s.next;
    s.next += size.div_ceil(ALIGN) * ALIGN + ALIGN;
    s.blocks.insert(addr, (buffer, nbytes as u64));
    Ok(addr)
}

/// Releases the allocation starting at `addr` (wgpu frees the buffer once the GPU is done).
pub fn release(addr: u64) {
    SPACE.lock().unwrap().blocks.remove(&addr);
}

fn staging(g: &Gpu, size: u64) -> wgpu::Buffer {
    g.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Reads `len` bytes at `offset` of `buffer` (any alignment) into `dst`.
pub fn read_bytes(buffer: &wgpu::Buffer, offset: u64, dst: &mut [u8]) -> Result<(), String> {
    if dst.is_empty() {
        return Ok(());
    }
    let g = gpu()?;
    let start = offset / 4 * 4;
    let end = round4(offset + dst.len() as u64).min(buffer.size());
    let stage = staging(g, end - start);
    let mut enc = g
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    enc.copy_buffer_to_buffer(buffer, start, &stage, 0, end - start);
    g.queue.submit([enc.finish()]);
    let slice = stage.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    wait(g)?;
    rx.recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("mapping a Vulkan buffer for reading failed: {e}"))?;
    {
        let view = slice.get_mapped_range();
        let skip = (offset - start) as usize;
        dst.copy_from_slice(&view[skip..skip + dst.len()]);
    }
    stage.unmap();
    Ok(())
}

/// Writes `src` at byte `offset` of `buffer` (any alignment: partial words are read, patched
/// and written back).
pub fn write_bytes(buffer: &wgpu::Buffer, offset: u64, src: &[u8]) -> Result<(), String> {
    if src.is_empty() {
        return Ok(());
    }
    let g = gpu()?;
    let start = offset / 4 * 4;
    let end = round4(offset + src.len() as u64);
    if end > buffer.size() {
        return Err("write past the end of a Vulkan buffer".into());
    }
    if start == offset && end == offset + src.len() as u64 {
        g.queue.write_buffer(buffer, offset, src);
    } else {
        let mut words = vec![0u8; (end - start) as usize];
        read_bytes(buffer, start, &mut words)?;
        let skip = (offset - start) as usize;
        words[skip..skip + src.len()].copy_from_slice(src);
        g.queue.write_buffer(buffer, start, &words);
    }
    // Make the write visible to a later map of another buffer without a submit in between.
    g.queue.submit([]);
    Ok(())
}

fn report(what: &str, e: &str) {
    eprintln!("torchnative-vulkan: {what} failed: {e}");
}

unsafe extern "C" fn vk_alloc(_user: *mut c_void, nbytes: usize, _align: usize) -> *mut c_void {
    match allocate(nbytes) {
        Ok(a) => a as *mut c_void,
        Err(e) => {
            report("allocation", &e);
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn vk_free(_user: *mut c_void, ptr: *mut c_void, _nbytes: usize, _align: usize) {
    release(ptr as u64)
}

fn span(addr: u64, nbytes: usize) -> Result<DevPtr, String> {
    let p = resolve(addr).ok_or_else(|| format!("{addr:#x} is not a vulkan device address"))?;
    if (nbytes as u64) > p.available {
        return Err(format!(
            "a copy of {nbytes} bytes at {addr:#x} runs past its allocation ({} bytes left)",
            p.available
        ));
    }
    Ok(p)
}

/// Runs one host copy against the allocation holding `addr`; 0 on success, 1 (reported) if not.
fn host_copy(
    what: &str,
    addr: u64,
    nbytes: usize,
    f: impl FnOnce(&DevPtr) -> Result<(), String>,
) -> i32 {
    if nbytes == 0 {
        return 0;
    }
    match span(addr, nbytes).and_then(|p| f(&p)) {
        Ok(()) => 0,
        Err(e) => {
            report(what, &e);
            1
        }
    }
}

unsafe extern "C" fn vk_copy_from_host(
    _user: *mut c_void,
    dst: *mut c_void,
    src: *const c_void,
    nbytes: usize,
) -> i32 {
    host_copy("copy_from_host", dst as u64, nbytes, |p| {
        let bytes = std::slice::from_raw_parts(src as *const u8, nbytes);
        write_bytes(&p.buffer, p.offset, bytes)
    })
}

unsafe extern "C" fn vk_copy_to_host(
    _user: *mut c_void,
    dst: *mut c_void,
    src: *const c_void,
    nbytes: usize,
) -> i32 {
    host_copy("copy_to_host", src as u64, nbytes, |p| {
        let out = std::slice::from_raw_parts_mut(dst as *mut u8, nbytes);
        read_bytes(&p.buffer, p.offset, out)
    })
}

/// The allocator table handed to `register_allocator` (the core copies it).
pub fn vulkan_allocator() -> TnAllocator {
    torchnative_backend::allocator(vk_alloc, vk_free, vk_copy_from_host, vk_copy_to_host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_any_alignment() {
        if crate::device::probe().is_err() {
            eprintln!("skipped: no Vulkan adapter");
            return;
        }
        let a = vulkan_allocator();
        unsafe {
            for n in [0usize, 1, 3, 4, 7, 64, 1001] {
                let p = (a.alloc)(std::ptr::null_mut(), n, 64);
                assert!(!p.is_null());
                assert_eq!(p as u64 % 64, 0);
                let src: Vec<u8> = (0..n).map(|i| (i * 7 + 1) as u8).collect();
                assert_eq!((a.copy_from_host)(a.user, p, src.as_ptr() as _, n), 0);
                let mut back = vec![0u8; n];
                assert_eq!((a.copy_to_host)(a.user, back.as_mut_ptr() as _, p, n), 0);
                assert_eq!(back, src);
                if n > 2 {
                    // An unaligned sub-range in the middle (bool/uint8 storage offsets).
                    let patch = [0xAAu8, 0xBB];
                    let q = (p as *mut u8).add(1) as *mut c_void;
                    assert_eq!((a.copy_from_host)(a.user, q, patch.as_ptr() as _, 2), 0);
                    let mut all = vec![0u8; n];
                    assert_eq!((a.copy_to_host)(a.user, all.as_mut_ptr() as _, p, n), 0);
                    let mut want = src.clone();
                    want[1..3].copy_from_slice(&patch);
                    assert_eq!(all, want);
                }
                (a.free)(a.user, p, n, 64);
            }
            // A copy past the end is refused, not performed.
            let p = (a.alloc)(std::ptr::null_mut(), 8, 64);
            let src = [0u8; 16];
            assert_ne!((a.copy_from_host)(a.user, p, src.as_ptr() as _, 16), 0);
            (a.free)(a.user, p, 8, 64);
        }
    }
}

//! The host allocator registered for device key `"cpu"`: 64-byte aligned (a cache line, and
//! enough for AVX-512 loads), zero-size safe; host↔device copies are `memcpy`.

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::c_void;

use torchnative_abi::TnAllocator;

/// The minimum alignment of every allocation.
pub const ALIGN: usize = 64;

fn layout(nbytes: usize, align: usize) -> Option<Layout> {
    // Zero-size requests still get a unique, aligned, freeable pointer.
    Layout::from_size_align(nbytes.max(1), align.max(ALIGN).next_power_of_two()).ok()
}

unsafe extern "C" fn host_alloc(_user: *mut c_void, nbytes: usize, align: usize) -> *mut c_void {
    match layout(nbytes, align) {
        Some(l) => alloc(l) as *mut c_void,
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn host_free(_user: *mut c_void, ptr: *mut c_void, nbytes: usize, align: usize) {
    if ptr.is_null() {
        return;
    }
    if let Some(l) = layout(nbytes, align) {
        dealloc(ptr as *mut u8, l)
    }
}

unsafe extern "C" fn host_copy(
    _user: *mut c_void,
    dst: *mut c_void,
    src: *const c_void,
    nbytes: usize,
) -> i32 {
    if nbytes > 0 {
        std::ptr::copy(src as *const u8, dst as *mut u8, nbytes);
    }
    0
}

/// The allocator table handed to `register_allocator` (the core copies it).
pub fn host_allocator() -> TnAllocator {
    TnAllocator {
        struct_size: std::mem::size_of::<TnAllocator>() as u32,
        user: std::ptr::null_mut(),
        alloc: host_alloc,
        free: host_free,
        copy_from_host: host_copy,
        copy_to_host: host_copy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zero_size_safe() {
        let a = host_allocator();
        unsafe {
            for n in [0usize, 1, 3, 64, 1000] {
                let p = (a.alloc)(std::ptr::null_mut(), n, 8);
                assert!(!p.is_null());
                assert_eq!(p as usize % ALIGN, 0);
                let src = vec![7u8; n];
                assert_eq!(
                    (a.copy_from_host)(std::ptr::null_mut(), p, src.as_ptr() as *const c_void, n),
                    0
                );
                let mut back = vec![0u8; n];
                assert_eq!(
                    (a.copy_to_host)(std::ptr::null_mut(), back.as_mut_ptr() as *mut c_void, p, n),
                    0
                );
                assert_eq!(back, src);
                (a.free)(std::ptr::null_mut(), p, n, 8);
            }
        }
    }
}

//! The host allocator registered for device key `"cpu"`: 64-byte aligned (a cache line, and
//! enough for AVX-512 loads), zero-size safe; host↔device copies are `memcpy`.
//!
//! Small blocks (up to `SMALL_MAX` bytes) are kept per thread in free lists by power-of-two size
//! class and handed out again: glibc's aligned allocation (`posix_memalign`) splits and frees a
//! larger chunk on every call, which was a tenth of a one-element `x + y` (perf, docs/PERF.md).
//! At most `CACHED_PER_CLASS` blocks per class and thread are kept (under 300 KiB in all).

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::c_void;

use torchnative_backend::abi::TnAllocator;

/// The minimum alignment of every allocation.
pub const ALIGN: usize = 64;

/// The largest block the free lists keep, and how many blocks each size class keeps.
const SMALL_MAX: usize = 4096;
const CACHED_PER_CLASS: usize = 32;
/// Size classes 64, 128, ..., SMALL_MAX bytes.
const CLASSES: usize = (SMALL_MAX / ALIGN).trailing_zeros() as usize + 1;

fn layout(nbytes: usize, align: usize) -> Option<Layout> {
    // Zero-size requests still get a unique, aligned, freeable pointer; small ones are rounded
    // up to their size class, so a block can serve any request of its class.
    let align = align.max(ALIGN).next_power_of_two();
    let size = nbytes.max(1);
    let size = if size <= SMALL_MAX && align == ALIGN {
        size.next_power_of_two().max(ALIGN)
    } else {
        size
    };
    Layout::from_size_align(size, align).ok()
}

/// The free-list index of a layout, None for blocks the lists do not keep.
fn class(l: Layout) -> Option<usize> {
    (l.size() <= SMALL_MAX && l.align() == ALIGN)
        .then(|| (l.size() / ALIGN).trailing_zeros() as usize)
}

/// One thread's free lists; blocks still cached when the thread ends are released.
struct FreeLists([Vec<*mut u8>; CLASSES]);

impl Drop for FreeLists {
    fn drop(&mut self) {
        for (c, list) in self.0.iter_mut().enumerate() {
            let l = Layout::from_size_align(ALIGN << c, ALIGN).unwrap();
            for p in list.drain(..) {
                // SAFETY: every cached block was allocated with its class's layout.
                unsafe { dealloc(p, l) }
            }
        }
    }
}

thread_local! {
    static FREE: std::cell::RefCell<FreeLists> =
        std::cell::RefCell::new(FreeLists(std::array::from_fn(|_| Vec::new())));
}

unsafe extern "C" fn host_alloc(_user: *mut c_void, nbytes: usize, align: usize) -> *mut c_void {
    let Some(l) = layout(nbytes, align) else {
        return std::ptr::null_mut();
    };
    if let Some(c) = class(l) {
        let cached = FREE.try_with(|f| f.borrow_mut().0[c].pop()).ok().flatten();
        if let Some(p) = cached {
            return p as *mut c_void;
        }
    }
    alloc(l) as *mut c_void
}

unsafe extern "C" fn host_free(_user: *mut c_void, ptr: *mut c_void, nbytes: usize, align: usize) {
    if ptr.is_null() {
        return;
    }
    let Some(l) = layout(nbytes, align) else {
        return;
    };
    if let Some(c) = class(l) {
        let kept = FREE
            .try_with(|f| {
                let list = &mut f.borrow_mut().0[c];
                (list.len() < CACHED_PER_CLASS)
                    .then(|| list.push(ptr as *mut u8))
                    .is_some()
            })
            .unwrap_or(false);
        if kept {
            return;
        }
    }
    dealloc(ptr as *mut u8, l)
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
    torchnative_backend::allocator(host_alloc, host_free, host_copy, host_copy)
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

    #[test]
    fn small_blocks_are_reused_by_class_and_large_ones_are_not_kept() {
        let a = host_allocator();
        unsafe {
            let p = (a.alloc)(std::ptr::null_mut(), 100, 8);
            (a.free)(std::ptr::null_mut(), p, 100, 8);
            // 100 and 120 bytes share the 128-byte class: the freed block comes back.
            let q = (a.alloc)(std::ptr::null_mut(), 120, 8);
            assert_eq!(p, q);
            // Another class gets another block, still aligned.
            let r = (a.alloc)(std::ptr::null_mut(), 1000, 8);
            assert_ne!(r, q);
            assert_eq!(r as usize % ALIGN, 0);
            (a.free)(std::ptr::null_mut(), q, 120, 8);
            (a.free)(std::ptr::null_mut(), r, 1000, 8);
            // The lists are bounded: freeing more blocks than a class keeps releases the rest.
            let many: Vec<_> = (0..CACHED_PER_CLASS + 8)
                .map(|_| (a.alloc)(std::ptr::null_mut(), 64, 8))
                .collect();
            for &p in &many {
                (a.free)(std::ptr::null_mut(), p, 64, 8);
            }
            FREE.with(|f| assert_eq!(f.borrow().0[0].len(), CACHED_PER_CLASS));
            assert_eq!(class(layout(SMALL_MAX + 1, 8).unwrap()), None);
        }
    }
}

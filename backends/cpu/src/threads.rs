//! The intra-op thread count the kernels may use: `torch.set_num_threads(n)` reaches the backend
//! through the `torchnative_set_num_threads` hook. rayon's global pool cannot shrink once built,
//! so `n == 1` runs kernels on the calling thread, and `n > 1` lets them split work into `n`
//! parts on the pool (at most its size, which `RAYON_NUM_THREADS` sets). Work splits that depend
//! on upstream's thread count (gelu's ranges) follow this number, as upstream's follow
//! `at::get_num_threads()`.

use std::sync::atomic::{AtomicUsize, Ordering};

/// 0: no limit asked for (the pool's size).
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Records `torch.set_num_threads(n)` (`n >= 1`; the core has checked it).
pub fn set(n: usize) {
    LIMIT.store(n, Ordering::Relaxed);
}

/// The threads a kernel may use now.
pub fn threads() -> usize {
    let pool = rayon::current_num_threads();
    match LIMIT.load(Ordering::Relaxed) {
        0 => pool,
        n => n.min(pool),
    }
}

/// The gemm crate's parallelism for an `m x k` by `k x n` product: split across the allowed
/// threads from 64^3 multiply-adds on, on the calling thread below that.
pub fn gemm_parallelism(m: usize, n: usize, k: usize) -> gemm::Parallelism {
    match threads() {
        t if t > 1 && m * n * k >= 64 * 64 * 64 => gemm::Parallelism::Rayon(t),
        _ => gemm::Parallelism::None,
    }
}

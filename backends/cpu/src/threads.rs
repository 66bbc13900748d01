//! The intra-op thread count the kernels may use, and the pool their loops split across.
//!
//! `torch.set_num_threads(n)` reaches the backend through the `torchnative_set_num_threads`
//! hook: `n == 1` runs kernels on the calling thread, `n > 1` lets them split work into `n`
//! parts (at most the pool's size, which `RAYON_NUM_THREADS` sets, as it sets the gemm crate's
//! rayon pool). Work splits that depend on upstream's thread count (gelu's ranges) follow this
//! number, as upstream's follow `at::get_num_threads()`.
//!
//! [`parallel_for`] runs a loop as upstream's OpenMP `parallel_for` does, not as a rayon job
//! from outside the pool would: the calling thread takes parts itself, next to `n - 1` workers,
//! and the workers spin briefly after a loop before they sleep. A rayon job injected from the
//! Python thread parks that thread and wakes sleeping workers on every loop (two futex round
//! trips, tens of microseconds on a virtual machine's idle cores), which made two threads slower
//! than one on small loops (a decode step). Here parts are taken one by one from a shared
//! counter, so a worker that wakes late only takes fewer parts: the caller never waits for a
//! worker that has not started.

use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

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

/// Products below this many multiply-adds run on the calling thread: a split costs a worker's
/// hand-off (microseconds), and one thread multiplies a 64^3 product in about 3 us (AVX-512).
/// Measured with `benchmarks/suite.py --only mm-threads` (docs/PERF.md).
const GEMM_SPLIT_MIN: usize = 96 * 96 * 96;

/// Skinny products (at most [`SKINNY_ROWS`] rows or columns: a decode step's `F.linear`) read
/// their weight once and do little arithmetic per element, so their time is the weight's
/// streaming from memory, which two cores do faster than one: they split from this many weight
/// elements (256 x 128, 128 KiB of float32), as upstream's MKL splits its matrix-vector
/// products. Measured with `benchmarks/llama_ops.py` (docs/PERF.md).
const SKINNY_SPLIT_MIN: usize = 256 * 128;
const SKINNY_ROWS: usize = 16;

/// The gemm crate copies a column-major left operand into packed panels when the product has
/// more than this many microkernel columns (6 on AVX-512; the crate's default is 8). Small
/// products (`mm` 64) skip the copy at 11: their operands arrive cache-cold from Python, and
/// the copy cost 0.3-0.5 us of a 64^3 product's 3.5-4.5 (a probe program against the crate, the
/// operands evicted from L1 between calls; `benchmarks/llama_ops.py`'s `mm 64`).
const LHS_PACK_MIN_PANELS: usize = 11;

/// `dst = beta * dst + alpha * lhs @ rhs` (`read_dst == false`: `dst = alpha * lhs @ rhs`) for an
/// `m x k` by `k x n` product, strides in elements as `gemm::gemm` takes them (column stride
/// first). From [`GEMM_SPLIT_MIN`] multiply-adds on, the output is cut along its longer side into
/// one block per allowed thread (multiples of 16 rows or columns) and the blocks run on this
/// module's pool ([`parallel_for`]), each a single-threaded gemm call: the caller starts at once
/// and a worker that is still asleep only takes fewer blocks. The gemm crate's own rayon split
/// parked the calling thread and woke the pool's sleeping workers for every product (a 128^3
/// product at two threads took longer than at one). Blocks never cut the k dimension, and the
/// gemm crate's k blocking depends on k alone, so every element is the same sum whatever the
/// thread count (tests/test_num_threads.py).
///
/// # Safety
/// As `gemm::gemm`: the pointers and strides describe valid `m x n`, `m x k`, `k x n` matrices,
/// `dst` not overlapping the operands.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T>(
    m: usize,
    n: usize,
    k: usize,
    dst: *mut T,
    dst_cs: isize,
    dst_rs: isize,
    read_dst: bool,
    lhs: *const T,
    lhs_cs: isize,
    lhs_rs: isize,
    rhs: *const T,
    rhs_cs: isize,
    rhs_rs: isize,
    beta: T,
    alpha: T,
) where
    T: Copy + Send + Sync + 'static,
{
    static TUNED: std::sync::Once = std::sync::Once::new();
    TUNED.call_once(|| gemm::set_lhs_packing_threshold_single_thread(LHS_PACK_MIN_PANELS));
    // one single-threaded call on the block of `rows x cols` whose first output element is
    // `first` rows or columns in (raw pointers as usize: the closure runs on the pool)
    let (dst_a, lhs_a, rhs_a) = (dst as usize, lhs as usize, rhs as usize);
    let size = std::mem::size_of::<T>() as isize;
    let block_call = |rows: usize, cols: usize, first: isize, by_cols: bool| {
        let (d, l, r) = if by_cols {
            (first * dst_cs, 0, first * rhs_cs)
        } else {
            (first * dst_rs, first * lhs_rs, 0)
        };
        // SAFETY: a sub-matrix of the caller's valid operands; blocks are disjoint in `dst`.
        unsafe {
            gemm::gemm(
                rows,
                cols,
                k,
                (dst_a as isize + d * size) as *mut T,
                dst_cs,
                dst_rs,
                read_dst,
                (lhs_a as isize + l * size) as *const T,
                lhs_cs,
                lhs_rs,
                (rhs_a as isize + r * size) as *const T,
                rhs_cs,
                rhs_rs,
                beta,
                alpha,
                false,
                false,
                false,
                gemm::Parallelism::None,
            )
        }
    };
    let t = threads();
    let (long, by_cols) = if n >= m { (n, true) } else { (m, false) };
    let block = long.div_ceil(t.max(1)).next_multiple_of(16);
    let skinny = m.min(n) <= SKINNY_ROWS && long * k >= SKINNY_SPLIT_MIN;
    if t <= 1 || (m * n * k < GEMM_SPLIT_MIN && !skinny) || block >= long {
        return block_call(m, n, 0, false);
    }
    parallel_for(
        long.div_ceil(block),
        || (),
        |_, part| {
            let start = part * block;
            let len = block.min(long - start);
            if by_cols {
                block_call(m, len, start as isize, true)
            } else {
                block_call(len, n, start as isize, false)
            }
        },
    );
}

/// How long a worker looks for the next loop before it sleeps: `TORCHNATIVE_CPU_SPIN_US`
/// microseconds, by default [`SPIN_DEFAULT_US`]. A worker that sleeps misses the next loop when
/// waking it takes longer than the loop (a futex wake on a virtual machine's idle core takes tens
/// to hundreds of microseconds), so the spin must cover the gaps between the parallel loops of
/// one model step, the Python work between them included. Upstream's OpenMP runtime (libgomp)
/// spins longer still (`GOMP_SPINCOUNT`, 300,000 iterations by default).
fn spin() -> Duration {
    static SPIN: OnceLock<Duration> = OnceLock::new();
    *SPIN.get_or_init(|| {
        let us = std::env::var("TORCHNATIVE_CPU_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(SPIN_DEFAULT_US);
        Duration::from_micros(us)
    })
}
const SPIN_DEFAULT_US: u64 = 1000;

/// One loop in flight: `run` takes parts until none is left.
struct Job {
    run: *const (dyn Fn() + Sync),
    /// participants (the caller counts as one) still inside `run`
    active: AtomicUsize,
    /// workers wanted beyond the caller
    wanted: usize,
    /// a part panicked on a worker (the caller panics once every participant has left)
    panicked: AtomicUsize,
}

struct Pool {
    /// the job of the current loop (null between loops); set and cleared under `lock`
    job: AtomicPtr<Job>,
    /// bumped for every loop, so a worker sees a new one
    epoch: AtomicU64,
    /// workers that have joined the current loop
    joined: AtomicUsize,
    lock: Mutex<usize>, // sleeping workers
    wake: Condvar,
    /// one loop at a time (a nested or concurrent loop runs on its own thread)
    busy: Mutex<()>,
}

// SAFETY: the raw pointers are only dereferenced while the caller keeps the job alive (it
// clears `job` under `lock` and waits for `active` to drop to zero before it returns).
unsafe impl Sync for Pool {}
unsafe impl Send for Pool {}

thread_local! {
    static IN_WORKER: Cell<bool> = const { Cell::new(false) };
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let p: &'static Pool = Box::leak(Box::new(Pool {
            job: AtomicPtr::new(std::ptr::null_mut()),
            epoch: AtomicU64::new(0),
            joined: AtomicUsize::new(0),
            lock: Mutex::new(0),
            wake: Condvar::new(),
            busy: Mutex::new(()),
        }));
        for i in 1..rayon::current_num_threads() {
            std::thread::Builder::new()
                .name(format!("torchnative-cpu-{i}"))
                .spawn(move || worker(p))
                .expect("spawning a cpu backend worker thread");
        }
        p
    })
}

fn worker(p: &'static Pool) {
    IN_WORKER.with(|w| w.set(true));
    let mut seen = 0u64;
    loop {
        // look for a loop newer than the last one seen: spin, then sleep
        let start = Instant::now();
        while p.epoch.load(Ordering::Acquire) == seen && start.elapsed() < spin() {
            std::hint::spin_loop();
        }
        if p.epoch.load(Ordering::Acquire) == seen {
            let mut sleeping = p.lock.lock().unwrap();
            *sleeping += 1;
            while p.epoch.load(Ordering::Acquire) == seen {
                sleeping = p.wake.wait(sleeping).unwrap();
            }
            *sleeping -= 1;
        }
        seen = p.epoch.load(Ordering::Acquire);
        // join under the lock, so the caller cannot retire the job between the load and the count
        let job = {
            let _g = p.lock.lock().unwrap();
            let j = p.job.load(Ordering::Acquire);
            if j.is_null() {
                continue;
            }
            // SAFETY: non-null under the lock: the caller has not retired it yet.
            let job = unsafe { &*j };
            if p.joined.fetch_add(1, Ordering::AcqRel) >= job.wanted {
                continue;
            }
            job.active.fetch_add(1, Ordering::AcqRel);
            j
        };
        // SAFETY: counted in `active`, so the caller keeps the job and its closure alive.
        unsafe {
            let job = &*job;
            let run = std::panic::AssertUnwindSafe(|| (*job.run)());
            if std::panic::catch_unwind(run).is_err() {
                job.panicked.store(1, Ordering::Relaxed);
            }
            job.active.fetch_sub(1, Ordering::Release);
        }
    }
}

/// Runs `f(state, i)` for every `i` in `0..parts`, on the calling thread and up to
/// `threads() - 1` workers; each participant makes its `state` with `init` once. Which thread
/// runs which part is not fixed, so `f` must not depend on it (the parts themselves, like
/// upstream's chunks, are the caller's choice).
pub fn parallel_for<S>(
    parts: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) + Sync,
) {
    if parts == 0 {
        return;
    }
    let t = threads().min(parts);
    let sequential = || {
        let mut s = init();
        for i in 0..parts {
            f(&mut s, i);
        }
    };
    if t <= 1 || IN_WORKER.with(|w| w.get()) {
        return sequential();
    }
    let p = pool();
    let Ok(_busy) = p.busy.try_lock() else {
        return sequential();
    };
    let next = AtomicUsize::new(0);
    let take = || {
        let mut s = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= parts {
                return;
            }
            f(s.get_or_insert_with(&init), i);
        }
    };
    let run: &(dyn Fn() + Sync) = &take;
    // SAFETY: the lifetime is erased for the workers; this function does not return before
    // every worker that joined has left `run` (see below).
    let run: *const (dyn Fn() + Sync) = unsafe { std::mem::transmute(run) };
    let job = Job {
        run,
        active: AtomicUsize::new(0),
        wanted: t - 1,
        panicked: AtomicUsize::new(0),
    };
    {
        let sleeping = p.lock.lock().unwrap();
        p.joined.store(0, Ordering::Release);
        p.job
            .store(&job as *const Job as *mut Job, Ordering::Release);
        p.epoch.fetch_add(1, Ordering::AcqRel);
        if *sleeping > 0 {
            p.wake.notify_all();
        }
    }
    // retires the job even when a part panics on this thread
    let _retire = Retire(p, &job);
    take();
}

/// Clears the pool's job (no worker joins after this) and waits for those that joined.
struct Retire<'a>(&'static Pool, &'a Job);

impl Drop for Retire<'_> {
    fn drop(&mut self) {
        {
            let _g = self.0.lock.lock().unwrap();
            self.0.job.store(std::ptr::null_mut(), Ordering::Release);
        }
        let mut spins = 0u32;
        while self.1.active.load(Ordering::Acquire) != 0 {
            spins += 1;
            if spins < 1 << 14 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now(); // the worker waits for a core
            }
        }
        if self.1.panicked.load(Ordering::Relaxed) != 0 && !std::thread::panicking() {
            panic!("a cpu backend worker thread panicked in a parallel loop");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_with_its_own_state() {
        for parts in [0, 1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            let inits = AtomicUsize::new(0);
            parallel_for(
                parts,
                || {
                    inits.fetch_add(1, Ordering::Relaxed);
                    0usize
                },
                |s, i| {
                    *s += 1;
                    hits[i].fetch_add(1, Ordering::Relaxed);
                },
            );
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            assert_eq!(inits.load(Ordering::Relaxed) > 0, parts > 0);
        }
    }

    #[test]
    fn nested_and_back_to_back_loops_finish() {
        let total = AtomicUsize::new(0);
        for _ in 0..2000 {
            parallel_for(
                4,
                || (),
                |_, _| {
                    parallel_for(
                        3,
                        || (),
                        |_, _| {
                            total.fetch_add(1, Ordering::Relaxed);
                        },
                    );
                },
            );
        }
        assert_eq!(total.load(Ordering::Relaxed), 2000 * 12);
    }

    /// Products whose operands are stored row- or column-major all give the same bits: the
    /// panels of a transposed operand are packed through the patched gemm-common's tile
    /// transposes (third_party/gemm-common), the others by plain copies, and packing only moves
    /// values. `F.linear`'s `x @ W^T` is the (row-major, column-major) case.
    #[test]
    fn operand_layouts_pack_to_the_same_products() {
        fn check<T: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static>(
            from: fn(usize) -> T,
            one: T,
            zero: T,
        ) {
            for &(m, n, k) in &[
                (64, 48, 37),
                (130, 70, 64),
                (17, 33, 129),
                (128, 256, 48),
                (5, 300, 16),
            ] {
                let a: Vec<T> = (0..m * k).map(|i| from(i * 7919 % 211)).collect();
                let b: Vec<T> = (0..k * n).map(|i| from(i * 104_729 % 199)).collect();
                let transposed = |x: &[T], rows: usize, cols: usize| {
                    let mut t = vec![zero; rows * cols];
                    for i in 0..rows {
                        for j in 0..cols {
                            t[j * rows + i] = x[i * cols + j];
                        }
                    }
                    t
                };
                let (a_cm, b_cm) = (transposed(&a, m, k), transposed(&b, k, n));
                // (data, column stride, row stride) of each layout
                let a_layouts = [(&a, 1, k as isize), (&a_cm, m as isize, 1)];
                let b_layouts = [(&b, 1, n as isize), (&b_cm, k as isize, 1)];
                let mut want: Option<Vec<T>> = None;
                for (ad, acs, ars) in a_layouts {
                    for &(bd, bcs, brs) in &b_layouts {
                        let mut got = vec![zero; m * n];
                        // SAFETY: every operand is a valid matrix of the sizes given.
                        unsafe {
                            gemm(
                                m,
                                n,
                                k,
                                got.as_mut_ptr(),
                                1,
                                n as isize,
                                false,
                                ad.as_ptr(),
                                acs,
                                ars,
                                bd.as_ptr(),
                                bcs,
                                brs,
                                zero,
                                one,
                            );
                        }
                        match &want {
                            None => want = Some(got),
                            Some(w) => {
                                assert_eq!(&got, w, "{m}x{n}x{k} a({acs},{ars}) b({bcs},{brs})")
                            }
                        }
                    }
                }
            }
        }
        check::<f32>(|i| i as f32 / 64.0 - 1.5, 1.0, 0.0);
        check::<f64>(|i| i as f64 / 64.0 - 1.5, 1.0, 0.0);
    }
}

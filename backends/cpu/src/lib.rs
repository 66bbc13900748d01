//! torchnative-cpu: the CPU backend wheel of torchnative.
//!
//! The core (`torch._C`) parses arguments, promotes types, broadcasts, computes output shapes
//! and allocates; this crate only computes. It is built on the backend SDK
//! (`torchnative_backend`: the never-unwinding `extern "C"` kernel wrapper, argument access, the
//! registrar handshake, the Python module's functions), through [`Cpu`], its [`Backend`]: the
//! Python module `torchnative_cpu._native` exposes `register(capsule)`, which registers the host
//! allocator for device key `"cpu"` and then every kernel of [`kernels`] under its upstream
//! overload name.
//!
//! Layout: `dtype` (element types and conversions, `dispatch_*!`), `kernel` (the SDK's names for
//! this backend, `kernels!`), `strided` (the N-d strided iterator), `alloc` (the host
//! allocator), and one module per kernel family: `copy`, `binary`, `unary`, `reduce`, `linalg`,
//! `nn`, `index`, `sort`, `conv`, ...
//!
//! Where candle fits, we use what candle-core uses (its CPU matmul engine, the `gemm` crate, and
//! `half`); everything else is plain strided loops, because candle's owned, contiguous-by-default
//! storage does not fit torch's view semantics (kernels read and write views in place).

pub mod dtype;
pub mod kernel;
pub mod strided;
pub mod threads;

pub mod alloc;

pub mod activation;
pub mod bessel;
pub mod binary;
pub mod complex;
pub mod conv;
pub mod copy;
pub mod decomp;
pub mod eig;
pub mod fft;
pub mod flash;
pub mod igamma;
pub mod index;
pub mod linalg;
pub mod loss;
pub mod nn;
pub mod pointwise;
pub mod pool;
pub mod reduce;
pub mod scan;
pub mod scatter;
pub mod sort;
pub mod special;
pub mod stdsort;
pub mod unary;
pub mod vecmath;

use torchnative_backend::abi::{TnAllocator, TnTensor};
pub use torchnative_backend::bail;
use torchnative_backend::{Backend, HostTensor, KResult, Registry};

/// The device key this backend serves.
pub const DEVICE_KEY: &str = "cpu";

/// The cpu backend, as the SDK sees it: host views, the host allocator, [`kernels`].
pub struct Cpu;

impl Backend for Cpu {
    const NAME: &'static str = "torchnative-cpu";
    const DEVICE_KEY: &'static str = DEVICE_KEY;
    type Tensor<'a> = HostTensor<'a>;
    #[inline]
    unsafe fn view<'a>(t: &'a TnTensor) -> KResult<HostTensor<'a>> {
        HostTensor::from_raw(t)
    }
    fn allocator() -> TnAllocator {
        alloc::host_allocator()
    }
    fn kernels() -> Registry {
        kernels()
    }
}

/// Every kernel of the backend, as `(operator overload, kernel)`, in registration order.
pub fn kernels() -> Registry {
    let mut reg = Registry::new();
    copy::register(&mut reg);
    binary::register(&mut reg);
    unary::register(&mut reg);
    reduce::register(&mut reg);
    linalg::register(&mut reg);
    decomp::register(&mut reg);
    eig::register(&mut reg);
    fft::register(&mut reg);
    nn::register(&mut reg);
    loss::register(&mut reg);
    pointwise::register(&mut reg);
    index::register(&mut reg);
    sort::register(&mut reg);
    scan::register(&mut reg);
    bessel::register(&mut reg);
    scatter::register(&mut reg);
    special::register(&mut reg);
    igamma::register(&mut reg);
    conv::register(&mut reg);
    pool::register(&mut reg);
    reg
}

#[cfg(test)]
mod golden;

mod python {
    use pyo3::exceptions::PyRuntimeError;
    use pyo3::prelude::*;

    /// `torch.set_num_threads(n)`, passed on by the plugin's `torchnative_set_num_threads`.
    #[pyfunction]
    fn set_num_threads(n: usize) -> PyResult<()> {
        if n == 0 {
            return Err(PyRuntimeError::new_err(
                "set_num_threads expects a positive integer",
            ));
        }
        crate::threads::set(n);
        Ok(())
    }

    /// The threads a kernel may use now (the setting, bounded by the pool's size).
    #[pyfunction]
    fn num_threads() -> usize {
        crate::threads::threads()
    }

    /// The CPU capability this backend's kernels run (`ATEN_CPU_CAPABILITY` lowers it).
    #[pyfunction]
    fn cpu_capability() -> &'static str {
        crate::vecmath::capability_name()
    }

    /// `register`, `kernel_names`, `refused_kernels` and the constants come from the SDK.
    #[pymodule]
    fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        torchnative_backend::python::add_backend_functions::<crate::Cpu>(m)?;
        m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
        m.add_function(wrap_pyfunction!(num_threads, m)?)?;
        m.add_function(wrap_pyfunction!(cpu_capability, m)?)?;
        Ok(())
    }
}

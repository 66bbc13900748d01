//! torch's CPU generator inside `torch._C`: `_TnCpuGenerator` (state, seeding, get/set_state in
//! upstream's byte layout) and `_tn_rng_fill`, which fills a CPU tensor in upstream's draw order
//! so seeded results are bit-identical (the algorithms live in the `torchnative-rng` crate).

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use torchnative_abi::TnDtype;
use torchnative_rng::{self as rng, bf16, f16, CpuGenerator, Element, Float};

use crate::registry;
use crate::tensor::TensorBase;

#[pyclass(name = "_TnCpuGenerator", module = "torch._C")]
pub struct PyCpuGenerator {
    pub g: Mutex<CpuGenerator>,
}

fn rng_err(e: rng::RngError) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

#[pymethods]
impl PyCpuGenerator {
    #[new]
    fn new(seed: u64) -> Self {
        PyCpuGenerator {
            g: Mutex::new(CpuGenerator::new(seed)),
        }
    }
    fn manual_seed(&self, seed: u64) {
        self.g.lock().unwrap().manual_seed(seed);
    }
    fn seed(&self) -> u64 {
        self.g.lock().unwrap().seed()
    }
    fn initial_seed(&self) -> u64 {
        self.g.lock().unwrap().initial_seed()
    }
    fn get_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.g.lock().unwrap().get_state())
    }
    fn set_state(&self, state: &[u8]) -> PyResult<()> {
        self.g.lock().unwrap().set_state(state).map_err(rng_err)
    }
    /// `randperm(n)` as int64 values.
    fn randperm(&self, n: usize) -> Vec<i64> {
        rng::randperm(&mut self.g.lock().unwrap(), n)
    }
}

/// `multinomial` over the rows of a contiguous CPU probability tensor (f32/f64/f16/bf16):
/// returns the sampled category indices, row-major, `n_sample` per row.
#[pyfunction]
pub fn _tn_rng_multinomial(
    gen: &PyCpuGenerator,
    probs: PyRef<'_, TensorBase>,
    n_sample: usize,
    replacement: bool,
) -> PyResult<Vec<i64>> {
    if !crate::tensor::is_contiguous(&probs.meta.sizes, &probs.meta.strides) {
        return Err(PyRuntimeError::new_err(
            "_tn_rng_multinomial needs a contiguous tensor",
        ));
    }
    let sizes = &probs.meta.sizes;
    let n_cat = *sizes.last().unwrap_or(&1) as usize;
    let n_dist = if sizes.len() == 2 {
        sizes[0] as usize
    } else {
        1
    };
    let n = n_dist * n_cat;
    let mut g = gen.g.lock().unwrap();
    let ptr = probs.data_ptr_raw();
    unsafe {
        match probs.meta.dtype {
            TnDtype::Float32 => rng::multinomial(
                &mut g,
                std::slice::from_raw_parts(ptr as *const f32, n),
                n_dist,
                n_cat,
                n_sample,
                replacement,
            ),
            TnDtype::Float64 => rng::multinomial(
                &mut g,
                std::slice::from_raw_parts(ptr as *const f64, n),
                n_dist,
                n_cat,
                n_sample,
                replacement,
            ),
            TnDtype::Float16 => rng::multinomial(
                &mut g,
                std::slice::from_raw_parts(ptr as *const f16, n),
                n_dist,
                n_cat,
                n_sample,
                replacement,
            ),
            TnDtype::BFloat16 => rng::multinomial(
                &mut g,
                std::slice::from_raw_parts(ptr as *const bf16, n),
                n_dist,
                n_cat,
                n_sample,
                replacement,
            ),
            d => {
                return Err(PyRuntimeError::new_err(format!(
                    "multinomial only supports floating-point dtypes for input, got: {}",
                    crate::dtype::name(d)
                )))
            }
        }
    }
    .map_err(rng_err)
}

/// Writes `draws` (in upstream's draw order) into the strided tensor `t`.
unsafe fn scatter<T: Copy>(t: &TensorBase, draws: &[T]) {
    let sizes: Vec<usize> = t.meta.sizes.iter().map(|&s| s as usize).collect();
    let strides: Vec<isize> = t.meta.strides.iter().map(|&s| s as isize).collect();
    let order = rng::draw_order(&sizes, &strides);
    let base = t.data_ptr_raw() as *mut T;
    for (k, &li) in order.iter().enumerate() {
        // logical row-major index -> element offset
        let mut rem = li;
        let mut off = 0isize;
        for d in (0..sizes.len()).rev() {
            let i = rem % sizes[d];
            rem /= sizes[d];
            off += i as isize * strides[d];
        }
        *base.offset(off) = draws[k];
    }
}

fn fill_float<T: Float + Default + Copy>(
    g: &mut CpuGenerator,
    t: &TensorBase,
    kind: &str,
    a: f64,
    b: f64,
    contiguous: bool,
) -> PyResult<bool> {
    let mut v = vec![T::default(); t.numel() as usize];
    match kind {
        "uniform" => rng::uniform_(g, &mut v, a, b).map_err(rng_err)?,
        "normal" => rng::normal_(g, &mut v, a, b, contiguous).map_err(rng_err)?,
        "exponential" => rng::exponential_(g, &mut v, a).map_err(rng_err)?,
        "cauchy" => rng::cauchy_(g, &mut v, a, b).map_err(rng_err)?,
        "log_normal" => rng::log_normal_(g, &mut v, a, b).map_err(rng_err)?,
        _ => return Ok(false),
    }
    unsafe { scatter(t, &v) };
    Ok(true)
}

fn fill_elem<T: Element + Default + Copy>(
    g: &mut CpuGenerator,
    t: &TensorBase,
    kind: &str,
    a: f64,
    ia: i64,
    ib: Option<i64>,
) -> PyResult<()> {
    let mut v = vec![T::default(); t.numel() as usize];
    match kind {
        "random_from_to" => rng::random_from_to_(g, &mut v, ia, ib).map_err(rng_err)?,
        "random" => rng::random_(g, &mut v).map_err(rng_err)?,
        "bernoulli" => rng::bernoulli_scalar_(g, &mut v, a).map_err(rng_err)?,
        "geometric" => rng::geometric_(g, &mut v, a).map_err(rng_err)?,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "unknown random fill '{kind}'"
            )))
        }
    }
    unsafe { scatter(t, &v) };
    Ok(())
}

/// Fills CPU tensor `t` in place: kind is uniform(a, b), normal(a=mean, b=std),
/// exponential(a=lambda), cauchy(a=median, b=sigma), log_normal(a=mean, b=std), random_from_to(ia,
/// ib), random, bernoulli(a=p) or geometric(a=p).
#[pyfunction]
#[pyo3(signature = (gen, t, kind, a=0.0, b=0.0, ia=0, ib=None))]
pub fn _tn_rng_fill(
    gen: &PyCpuGenerator,
    t: PyRef<'_, TensorBase>,
    kind: &str,
    a: f64,
    b: f64,
    ia: i64,
    ib: Option<i64>,
) -> PyResult<()> {
    if Some(t.device()) != registry::lookup_device("cpu") {
        return Err(PyRuntimeError::new_err(
            "torchnative: random fills run on CPU tensors (the core moves others)",
        ));
    }
    let contiguous = crate::tensor::is_contiguous(&t.meta.sizes, &t.meta.strides);
    let mut g = gen.g.lock().unwrap();
    let g = &mut *g;
    let float_kind = matches!(
        kind,
        "uniform" | "normal" | "exponential" | "cauchy" | "log_normal"
    );
    use TnDtype::*;
    if float_kind {
        let done = match t.meta.dtype {
            Float32 => fill_float::<f32>(g, &t, kind, a, b, contiguous)?,
            Float64 => fill_float::<f64>(g, &t, kind, a, b, contiguous)?,
            Float16 => fill_float::<f16>(g, &t, kind, a, b, contiguous)?,
            BFloat16 => fill_float::<bf16>(g, &t, kind, a, b, contiguous)?,
            d => {
                return Err(PyRuntimeError::new_err(format!(
                    "\"{kind}_kernel_cpu\" not implemented for '{}'",
                    crate::dtype::name(d)
                )))
            }
        };
        debug_assert!(done);
        return Ok(());
    }
    match t.meta.dtype {
        Float32 => fill_elem::<f32>(g, &t, kind, a, ia, ib),
        Float64 => fill_elem::<f64>(g, &t, kind, a, ia, ib),
        Float16 => fill_elem::<f16>(g, &t, kind, a, ia, ib),
        BFloat16 => fill_elem::<bf16>(g, &t, kind, a, ia, ib),
        Int64 => fill_elem::<i64>(g, &t, kind, a, ia, ib),
        Int32 => fill_elem::<i32>(g, &t, kind, a, ia, ib),
        Int16 => fill_elem::<i16>(g, &t, kind, a, ia, ib),
        Int8 => fill_elem::<i8>(g, &t, kind, a, ia, ib),
        UInt8 => fill_elem::<u8>(g, &t, kind, a, ia, ib),
        Bool => fill_elem::<bool>(g, &t, kind, a, ia, ib),
        d => Err(PyRuntimeError::new_err(format!(
            "random fill not implemented for '{}'",
            crate::dtype::name(d)
        ))),
    }
}

/// The samplers of `torch.distributions` (torchnative-rng's `distributions`), one draw per
/// element of the contiguous CPU tensor `a` (and `b`), in order, into the contiguous `out`:
/// `poisson` (rate `a`; float32/64, float16, bfloat16), `binomial` (count `a`, probability `b`;
/// float32/64), `gamma` (concentration `a`; float32/64) and `dirichlet_gamma` (concentration `a`
/// as float32/64, the double gamma draws of `_sample_dirichlet` into a float64 `out`).
#[pyfunction]
#[pyo3(signature = (gen, kind, out, a, b=None))]
pub fn _tn_rng_sample(
    gen: &PyCpuGenerator,
    kind: &str,
    out: PyRef<'_, TensorBase>,
    a: PyRef<'_, TensorBase>,
    b: Option<PyRef<'_, TensorBase>>,
) -> PyResult<()> {
    let dense = |t: &TensorBase| {
        crate::tensor::is_contiguous(&t.meta.sizes, &t.meta.strides)
            && Some(t.device()) == registry::lookup_device("cpu")
            && t.numel() == out.numel()
    };
    if !dense(&out) || !dense(&a) || b.as_ref().is_some_and(|b| !dense(b)) {
        return Err(PyRuntimeError::new_err(
            "_tn_rng_sample: contiguous CPU tensors of one size",
        ));
    }
    let n = out.numel() as usize;
    let mut g = gen.g.lock().unwrap();
    let g = &mut *g;
    let ad = a.meta.dtype;
    unsafe fn read<T: Copy>(t: &TensorBase, n: usize) -> &[T] {
        std::slice::from_raw_parts(t.data_ptr_raw() as *const T, n)
    }
    /// `out[i] = draw(a[i])` in order (the caller holds the only view that writes `out`).
    unsafe fn each<S: Copy, O>(
        out: &TensorBase,
        a: &TensorBase,
        n: usize,
        mut draw: impl FnMut(S) -> Result<O, rng::RngError>,
    ) -> PyResult<()> {
        let o = std::slice::from_raw_parts_mut(out.data_ptr_raw() as *mut O, n);
        for (o, &x) in o.iter_mut().zip(read::<S>(a, n)) {
            *o = draw(x).map_err(rng_err)?;
        }
        Ok(())
    }
    use rng::distributions as dists;
    use TnDtype::*;
    let mismatch = || PyRuntimeError::new_err(format!("_tn_rng_sample: {kind} of {ad:?}"));
    unsafe {
        match (kind, ad, out.meta.dtype) {
            ("poisson", Float32, Float32) => each(&out, &a, n, |l: f32| {
                dists::poisson(g, l as f64).map(|k| k as f32)
            })?,
            ("poisson", Float64, Float64) => {
                each(&out, &a, n, |l: f64| dists::poisson(g, l).map(|k| k as f64))?
            }
            // c10::Half / BFloat16 from an int64: through float
            ("poisson", Float16, Float16) => each(&out, &a, n, |l: f16| {
                dists::poisson(g, l.to_f64()).map(|k| f16::from_f32(k as f32))
            })?,
            ("poisson", BFloat16, BFloat16) => each(&out, &a, n, |l: bf16| {
                dists::poisson(g, l.to_f64()).map(|k| rng::bf16_from_f32(k as f32))
            })?,
            ("binomial", Float32, Float32) | ("binomial", Float64, Float64) => {
                let b = b.ok_or_else(mismatch)?;
                if b.meta.dtype != ad {
                    return Err(mismatch());
                }
                if ad == Float32 {
                    // `each` visits the counts in order, once each: the probabilities alongside
                    let mut p = read::<f32>(&b, n).iter();
                    each(&out, &a, n, |c: f32| {
                        dists::binomial(g, c, *p.next().unwrap())
                    })?
                } else {
                    // `each` visits the counts in order, once each: the probabilities alongside
                    let mut p = read::<f64>(&b, n).iter();
                    each(&out, &a, n, |c: f64| {
                        dists::binomial(g, c, *p.next().unwrap())
                    })?
                }
            }
            ("gamma", Float32, Float32) => each(&out, &a, n, |x| dists::standard_gamma_f32(g, x))?,
            ("gamma", Float64, Float64) => each(&out, &a, n, |x| dists::standard_gamma_f64(g, x))?,
            ("dirichlet_gamma", Float32, Float64) => {
                each(&out, &a, n, |x: f32| dists::standard_gamma_f64(g, x as f64))?
            }
            ("dirichlet_gamma", Float64, Float64) => {
                each(&out, &a, n, |x| dists::standard_gamma_f64(g, x))?
            }
            _ => return Err(mismatch()),
        }
    }
    Ok(())
}

/// `_standard_gamma_grad(self, output)` over contiguous CPU float32/float64 tensors of one size:
/// the gamma sampler's reparameterised gradient, computed in double per element.
#[pyfunction]
pub fn _tn_standard_gamma_grad(
    out: PyRef<'_, TensorBase>,
    alpha: PyRef<'_, TensorBase>,
    x: PyRef<'_, TensorBase>,
) -> PyResult<()> {
    let n = out.numel() as usize;
    let ok = |t: &TensorBase| {
        crate::tensor::is_contiguous(&t.meta.sizes, &t.meta.strides)
            && t.numel() as usize == n
            && t.meta.dtype == out.meta.dtype
            && Some(t.device()) == registry::lookup_device("cpu")
    };
    if !ok(&out) || !ok(&alpha) || !ok(&x) {
        return Err(PyRuntimeError::new_err(
            "_tn_standard_gamma_grad: contiguous CPU tensors of one size and dtype",
        ));
    }
    macro_rules! run {
        ($t:ty) => {{
            // SAFETY: three contiguous CPU buffers of n elements (checked above)
            let (o, a, v) = unsafe {
                (
                    std::slice::from_raw_parts_mut(out.data_ptr_raw() as *mut $t, n),
                    std::slice::from_raw_parts(alpha.data_ptr_raw() as *const $t, n),
                    std::slice::from_raw_parts(x.data_ptr_raw() as *const $t, n),
                )
            };
            for i in 0..n {
                o[i] = rng::distributions::standard_gamma_grad(a[i] as f64, v[i] as f64) as $t;
            }
        }};
    }
    match out.meta.dtype {
        TnDtype::Float32 => run!(f32),
        TnDtype::Float64 => run!(f64),
        d => {
            return Err(PyRuntimeError::new_err(format!(
                "_tn_standard_gamma_grad: {d:?}"
            )))
        }
    }
    Ok(())
}

//! torchnative-rng: CPU random numbers bit-identical to upstream torch 2.13.0
//! (x86-64 Linux wheel, AVX2 distribution kernels, glibc libm) for the same seed.
//!
//! * [`CpuGenerator`]: MT19937 `CPUGeneratorImpl` with upstream's 5056-byte
//!   `get_state()` layout.
//! * Distribution fills ([`uniform_`], [`normal_`], [`random_from_to_`],
//!   [`random_`], [`bernoulli_scalar_`], [`bernoulli_tensor_`], [`exponential_`]),
//!   sampling ([`randperm`], [`multinomial`], [`dropout`]), and the rejection samplers of
//!   `torch.distributions` ([`distributions`]: poisson, binomial, gamma).
//! * Outputs are written in upstream's draw order; see [`draw_order`].
//!
//! See `docs/design/rng.md` for what is verified bit-identical and how.

// `!(a >= b)` is deliberate: it mirrors upstream's TORCH_CHECKs, which reject NaN.
// `x = z * x` keeps the operand order of the transcribed instruction sequence.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::assign_op_pattern)]

pub mod boxmuller;
pub mod dist;
pub mod distributions;
pub mod elem;
pub mod generator;
pub mod mt19937;
pub mod order;
pub mod sampling;

pub use dist::{
    bernoulli_scalar_, bernoulli_tensor_, cauchy_, exponential_, geometric_, log_normal_, normal_,
    random_, random_from_to_, random_from_to_kernel, uniform_,
};
pub use elem::{bf16_from_f32, f16_from_f32, Element, Float, FloatKind, RangeKind};
pub use generator::{nondeterministic_seed, CpuGenerator, DEFAULT_RNG_SEED, STATE_SIZE};
pub use half::{bf16, f16};
pub use order::{draw_order, scatter_draws};
pub use sampling::{dropout, dropout_mask, multinomial, randperm, RANDPERM_SMALL_N_LIMIT};

/// An argument error, with upstream's message where one exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RngError(pub String);

impl RngError {
    pub fn new(msg: impl Into<String>) -> Self {
        RngError(msg.into())
    }
}

impl std::fmt::Display for RngError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RngError {}

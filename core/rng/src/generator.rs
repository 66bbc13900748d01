//! `CPUGeneratorImpl` (`aten/src/ATen/CPUGeneratorImpl.cpp/.h`): engine, normal
//! caches, seeding and the 5056-byte state of `torch.Generator.get_state()`.

use crate::mt19937::{Mt19937, MERSENNE_STATE_N};
use crate::RngError;

/// `c10::default_rng_seed_val`: the seed of a fresh `torch.Generator()`.
pub const DEFAULT_RNG_SEED: u64 = 67_280_421_310_721;

/// `sizeof(CPUGeneratorImplState)` on x86-64: the byte length of `get_state()`.
pub const STATE_SIZE: usize = 5056;

// Byte offsets inside CPUGeneratorImplState (legacy THGeneratorState + 2 fields).
const OFF_SEED: usize = 0; // uint64 the_initial_seed
const OFF_LEFT: usize = 8; // int left
const OFF_SEEDED: usize = 12; // int seeded
const OFF_NEXT: usize = 16; // uint64 next
const OFF_STATE: usize = 24; // uint64 state[624]
const OFF_NORMAL_X: usize = OFF_STATE + 8 * MERSENNE_STATE_N; // 5016 double normal_x (dummy)
const OFF_NORMAL_Y: usize = OFF_NORMAL_X + 8; // 5024 double normal_y (cached double sample)
const OFF_NORMAL_RHO: usize = OFF_NORMAL_Y + 8; // 5032 double normal_rho (dummy)
const OFF_NORMAL_VALID: usize = OFF_NORMAL_RHO + 8; // 5040 int normal_is_valid; 4 pad bytes follow
const OFF_FLOAT_SAMPLE: usize = 5048; // float next_float_normal_sample
const OFF_FLOAT_VALID: usize = 5052; // bool is_next_float_normal_sample_valid; 3 pad bytes follow

/// The CPU generator: an MT19937 engine plus the cached second Box–Muller sample.
#[derive(Clone, Debug)]
pub struct CpuGenerator {
    engine: Mt19937,
    next_float_normal_sample: Option<f32>,
    next_double_normal_sample: Option<f64>,
}

impl Default for CpuGenerator {
    fn default() -> Self {
        CpuGenerator::new(DEFAULT_RNG_SEED)
    }
}

impl CpuGenerator {
    /// Like `torch.Generator().manual_seed(seed)`.
    pub fn new(seed: u64) -> Self {
        CpuGenerator {
            engine: Mt19937::new(seed),
            next_float_normal_sample: None,
            next_double_normal_sample: None,
        }
    }

    /// `set_current_seed`: re-seeds the engine and clears both normal caches.
    pub fn manual_seed(&mut self, seed: u64) {
        self.next_float_normal_sample = None;
        self.next_double_normal_sample = None;
        self.engine = Mt19937::new(seed);
    }

    /// `current_seed()` / `torch.Generator.initial_seed()`: the full 64-bit seed.
    pub fn initial_seed(&self) -> u64 {
        self.engine.seed
    }

    /// `seed()`: seed from OS entropy (8 bytes of /dev/urandom, as upstream's
    /// `readURandomLong`) and return the new seed.
    pub fn seed(&mut self) -> u64 {
        let s = nondeterministic_seed();
        self.manual_seed(s);
        s
    }

    /// One 32-bit draw (`CPUGeneratorImpl::random`).
    #[inline]
    pub fn random(&mut self) -> u32 {
        self.engine.next_u32()
    }

    /// One 64-bit draw: two 32-bit draws, the first one is the high half.
    #[inline]
    pub fn random64(&mut self) -> u64 {
        let hi = self.engine.next_u32();
        let lo = self.engine.next_u32();
        ((hi as u64) << 32) | lo as u64
    }

    pub fn next_float_normal_sample(&self) -> Option<f32> {
        self.next_float_normal_sample
    }
    pub fn set_next_float_normal_sample(&mut self, v: Option<f32>) {
        self.next_float_normal_sample = v;
    }
    pub fn next_double_normal_sample(&self) -> Option<f64> {
        self.next_double_normal_sample
    }
    pub fn set_next_double_normal_sample(&mut self, v: Option<f64>) {
        self.next_double_normal_sample = v;
    }

    /// Read access to the engine (for debugging / tests).
    pub fn engine(&self) -> &Mt19937 {
        &self.engine
    }

    /// `get_state()`: exactly the bytes of upstream's uint8 state tensor.
    pub fn get_state(&self) -> Vec<u8> {
        let mut b = vec![0u8; STATE_SIZE];
        let e = &self.engine;
        b[OFF_SEED..OFF_SEED + 8].copy_from_slice(&e.seed.to_le_bytes());
        b[OFF_LEFT..OFF_LEFT + 4].copy_from_slice(&e.left.to_le_bytes());
        b[OFF_SEEDED..OFF_SEEDED + 4].copy_from_slice(&(e.seeded as i32).to_le_bytes());
        b[OFF_NEXT..OFF_NEXT + 8].copy_from_slice(&(e.next as u64).to_le_bytes());
        for (i, w) in e.state.iter().enumerate() {
            let o = OFF_STATE + 8 * i;
            b[o..o + 8].copy_from_slice(&(*w as u64).to_le_bytes());
        }
        // normal_x and normal_rho are always 0.0 (already zero).
        if let Some(y) = self.next_double_normal_sample {
            b[OFF_NORMAL_Y..OFF_NORMAL_Y + 8].copy_from_slice(&y.to_le_bytes());
            b[OFF_NORMAL_VALID..OFF_NORMAL_VALID + 4].copy_from_slice(&1i32.to_le_bytes());
        }
        if let Some(f) = self.next_float_normal_sample {
            b[OFF_FLOAT_SAMPLE..OFF_FLOAT_SAMPLE + 4].copy_from_slice(&f.to_le_bytes());
            b[OFF_FLOAT_VALID] = 1;
        }
        b
    }

    /// `set_state()`: accepts upstream's bytes (and ours). Errors like upstream on
    /// a wrong size or an invalid engine state; the generator is unchanged then.
    pub fn set_state(&mut self, bytes: &[u8]) -> Result<(), RngError> {
        if bytes.len() != STATE_SIZE {
            return Err(RngError::new(format!(
                "Expected a CPUGeneratorImplState of size {} but found the input RNG state size to be {}",
                STATE_SIZE,
                bytes.len()
            )));
        }
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let i32_at = |o: usize| i32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let mut state = [0u32; MERSENNE_STATE_N];
        for (i, w) in state.iter_mut().enumerate() {
            *w = u64_at(OFF_STATE + 8 * i) as u32; // legacy layout keeps 64-bit words
        }
        let engine = Mt19937 {
            seed: u64_at(OFF_SEED),
            left: i32_at(OFF_LEFT),
            seeded: i32_at(OFF_SEEDED) != 0,
            next: u64_at(OFF_NEXT) as u32,
            state,
        };
        if !engine.is_valid() {
            return Err(RngError::new("Invalid mt19937 state"));
        }
        self.engine = engine;
        self.next_float_normal_sample = if bytes[OFF_FLOAT_VALID] != 0 {
            Some(f32::from_le_bytes(
                bytes[OFF_FLOAT_SAMPLE..OFF_FLOAT_SAMPLE + 4]
                    .try_into()
                    .unwrap(),
            ))
        } else {
            None
        };
        self.next_double_normal_sample = if i32_at(OFF_NORMAL_VALID) != 0 {
            Some(f64::from_le_bytes(
                bytes[OFF_NORMAL_Y..OFF_NORMAL_Y + 8].try_into().unwrap(),
            ))
        } else {
            None
        };
        Ok(())
    }
}

/// 64 bits of OS entropy (upstream: `c10::detail::getNonDeterministicRandom`,
/// which reads /dev/urandom for CPU generators).
pub fn nondeterministic_seed() -> u64 {
    use std::io::Read;
    let mut buf = [0u8; 8];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        if f.read_exact(&mut buf).is_ok() {
            return u64::from_le_bytes(buf);
        }
    }
    // Fallback: time and address entropy, hashed through the std hasher.
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.write_usize(&buf as *const _ as usize);
    h.finish()
}

//! MT19937 engine with upstream's state layout and draw semantics
//! (`aten/src/ATen/core/MT19937RNGEngine.h`).
//!
//! Two details matter for bit-identity:
//! * seeding is Matsumoto–Nishimura `init_genrand` on the low 32 bits of the
//!   seed, while the full 64-bit seed is remembered for `initial_seed()`;
//! * after seeding `left == 1`, and every draw first decrements `left`; when it
//!   reaches zero the whole state is regenerated ("twist") *before* the draw,
//!   so the first draw after seeding already comes from a twisted state.

pub const MERSENNE_STATE_N: usize = 624;
pub const MERSENNE_STATE_M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UMASK: u32 = 0x8000_0000;
const LMASK: u32 = 0x7fff_ffff;

/// Plain data of the engine, in upstream's field order (`mt19937_data_pod`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mt19937 {
    pub seed: u64,
    pub left: i32,
    pub seeded: bool,
    pub next: u32,
    pub state: [u32; MERSENNE_STATE_N],
}

impl Mt19937 {
    /// `init_with_uint32`: the state is derived from `seed & 0xffff_ffff`.
    pub fn new(seed: u64) -> Self {
        let mut state = [0u32; MERSENNE_STATE_N];
        state[0] = seed as u32;
        for j in 1..MERSENNE_STATE_N {
            let prev = state[j - 1];
            state[j] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(j as u32);
        }
        Mt19937 {
            seed,
            left: 1,
            seeded: true,
            next: 0,
            state,
        }
    }

    /// Upstream's `is_valid()` check used when loading a state.
    pub fn is_valid(&self) -> bool {
        self.seeded
            && self.left > 0
            && self.left as usize <= MERSENNE_STATE_N
            && self.next as usize <= MERSENNE_STATE_N
    }

    #[inline]
    fn twist(u: u32, v: u32) -> u32 {
        let mixed = (u & UMASK) | (v & LMASK);
        (mixed >> 1) ^ if v & 1 != 0 { MATRIX_A } else { 0 }
    }

    fn next_state(&mut self) {
        self.left = MERSENNE_STATE_N as i32;
        self.next = 0;
        let s = &mut self.state;
        let (n, m) = (MERSENNE_STATE_N, MERSENNE_STATE_M);
        for k in 0..n - m {
            s[k] = s[k + m] ^ Self::twist(s[k], s[k + 1]);
        }
        for k in n - m..n - 1 {
            s[k] = s[k + m - n] ^ Self::twist(s[k], s[k + 1]);
        }
        s[n - 1] = s[m - 1] ^ Self::twist(s[n - 1], s[0]);
    }

    /// One tempered 32-bit output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.next_state();
        }
        // A loaded state may (legally for upstream's is_valid) hold next == 624;
        // upstream would read past the array there. Wrap instead of panicking.
        let idx = self.next as usize % MERSENNE_STATE_N;
        self.next = self.next.wrapping_add(1);
        let mut y = self.state[idx];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }
}

//! Bit-identity against upstream torch 2.13.0. Expected values come from
//! `tests/gen_expected.py` (run with the reference interpreter); every
//! comparison is on raw bytes, and after each op the generator position and a
//! probe of two further draws are compared as well.

mod common;
use common::*;
use half::{bf16, f16};
use torchnative_rng::*;

macro_rules! with_float {
    ($dt:expr, $T:ident, $body:block) => {
        match $dt {
            "f64" => {
                type $T = f64;
                $body
            }
            "f32" => {
                type $T = f32;
                $body
            }
            "f16" => {
                type $T = f16;
                $body
            }
            "bf16" => {
                type $T = bf16;
                $body
            }
            other => panic!("dtype {other}"),
        }
    };
}

macro_rules! with_elem {
    ($dt:expr, $T:ident, $body:block) => {
        match $dt {
            "f64" => {
                type $T = f64;
                $body
            }
            "f32" => {
                type $T = f32;
                $body
            }
            "f16" => {
                type $T = f16;
                $body
            }
            "bf16" => {
                type $T = bf16;
                $body
            }
            "i64" => {
                type $T = i64;
                $body
            }
            "i32" => {
                type $T = i32;
                $body
            }
            "i16" => {
                type $T = i16;
                $body
            }
            "i8" => {
                type $T = i8;
                $body
            }
            "u8" => {
                type $T = u8;
                $body
            }
            "u16" => {
                type $T = u16;
                $body
            }
            "u32" => {
                type $T = u32;
                $body
            }
            "u64" => {
                type $T = u64;
                $body
            }
            "bool" => {
                type $T = bool;
                $body
            }
            other => panic!("dtype {other}"),
        }
    };
}

fn width(dt: &str) -> usize {
    match dt {
        "f64" | "i64" | "u64" => 8,
        "f32" | "i32" | "u32" => 4,
        "f16" | "bf16" | "i16" | "u16" => 2,
        _ => 1,
    }
}

/// Draw-order values -> logical row-major order, per the case's sizes/strides.
fn to_logical<T: Copy>(c: &J, draws: Vec<T>) -> Vec<T> {
    match c.opt("sizes") {
        None => draws,
        Some(sizes) => {
            let sizes = sizes.usizes();
            let strides: Vec<isize> = c
                .get("strides")
                .arr()
                .iter()
                .map(|v| v.i() as isize)
                .collect();
            let order = draw_order(&sizes, &strides);
            let mut out = draws.clone();
            scatter_draws(&draws, &order, &mut out);
            out
        }
    }
}

fn assert_bytes(got: &[u8], c: &J, dt: &str, what: &str) {
    let want = unhex(c.get("bytes").s());
    assert!(
        got == want.as_slice(),
        "{what}: {}",
        first_diff(got, &want, width(dt))
    );
}

// ------------------------------------------------------------------ state

#[test]
fn state_fresh_seeds_match_upstream_bytes() {
    for c in cases("state")
        .iter()
        .filter(|c| c.get("kind").s() == "fresh")
    {
        let seed = c.get("seed").u();
        let g = CpuGenerator::new(seed);
        let want = unhex(c.get("state").s());
        assert_eq!(want.len(), STATE_SIZE);
        assert!(
            g.get_state() == want,
            "seed {seed}: {}",
            first_diff(&g.get_state(), &want, 8)
        );
        assert_eq!(g.initial_seed(), seed);
    }
}

#[test]
fn state_after_draws_matches_upstream_bytes() {
    let cs = cases("state");
    let after: Vec<&J> = cs
        .iter()
        .filter(|c| c.get("kind").s() == "after_draws")
        .collect();
    assert_eq!(after.len(), 2);
    // seed 42: rand(5); randn(3)  (scalar normal path leaves a double cached)
    let mut g = CpuGenerator::new(42);
    uniform_(&mut g, &mut [0f32; 5], 0.0, 1.0).unwrap();
    normal_(&mut g, &mut [0f32; 3], 0.0, 1.0, true).unwrap();
    assert!(g.next_double_normal_sample().is_some());
    let want = unhex(after[0].get("state").s());
    assert!(
        g.get_state() == want,
        "{}",
        first_diff(&g.get_state(), &want, 8)
    );
    // seed 7: rand(700, float64) crosses a twist
    let mut g = CpuGenerator::new(7);
    uniform_(&mut g, &mut vec![0f64; 700], 0.0, 1.0).unwrap();
    let want = unhex(after[1].get("state").s());
    assert!(
        g.get_state() == want,
        "{}",
        first_diff(&g.get_state(), &want, 8)
    );
}

#[test]
fn state_saved_by_upstream_loads_and_continues() {
    let cs = cases("state");
    let c = cs.iter().find(|c| c.get("kind").s() == "load").unwrap();
    let saved = unhex(c.get("saved").s());
    let mut g = CpuGenerator::new(0);
    g.set_state(&saved).unwrap();
    assert_eq!(g.get_state(), saved, "round trip of upstream state bytes");
    assert!(
        g.next_double_normal_sample().is_some(),
        "upstream state carried a cached normal"
    );
    let mut out = [0f64; 5];
    normal_(&mut g, &mut out, 0.0, 1.0, true).unwrap();
    assert_bytes(&out.bytes(), c, "f64", "randn(5, f64) after set_state");
}

#[test]
fn state_rejects_bad_input() {
    let mut g = CpuGenerator::new(1);
    assert!(g.set_state(&[0u8; 100]).is_err());
    let mut s = CpuGenerator::new(1).get_state();
    s[8..12].copy_from_slice(&0i32.to_le_bytes()); // left = 0 is invalid
    assert!(g.set_state(&s).is_err());
    assert_eq!(
        g.get_state(),
        CpuGenerator::new(1).get_state(),
        "failed load leaves generator unchanged"
    );
}

// ------------------------------------------------------------------ uniform

#[test]
fn uniform_bit_identical() {
    let cs = cases("uniform");
    for (k, c) in cs.iter().enumerate() {
        let dt = c.get("dtype").s();
        let n = c.get("n").u() as usize;
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!(
            "uniform case {k} {dt} n={n} [{}, {})",
            c.get("lo").f(),
            c.get("hi").f()
        );
        with_float!(dt, T, {
            let mut out = vec![T::from_f64(0.0); n];
            uniform_(&mut g, &mut out, c.get("lo").f(), c.get("hi").f()).unwrap();
            assert_bytes(&to_logical(c, out).bytes(), c, dt, &what);
        });
        check_pos(&mut g, c, &what);
    }
}

// ------------------------------------------------------------------ normal

#[test]
fn normal_bit_identical() {
    let cs = cases("normal");
    let mut n_fill = 0;
    for (k, c) in cs.iter().enumerate() {
        let dt = c.get("dtype").s();
        let n = c.get("n").u() as usize;
        let contiguous = c.opt("sizes").is_none();
        if contiguous && n >= 16 {
            n_fill += 1;
        }
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!(
            "normal case {k} {dt} n={n} mean={} std={} contiguous={contiguous}",
            c.get("mean").f(),
            c.get("std").f()
        );
        with_float!(dt, T, {
            let mut out = vec![T::from_f64(0.0); n];
            normal_(
                &mut g,
                &mut out,
                c.get("mean").f(),
                c.get("std").f(),
                contiguous,
            )
            .unwrap();
            assert_bytes(&to_logical(c, out).bytes(), c, dt, &what);
        });
        check_pos(&mut g, c, &what);
    }
    assert!(n_fill > 50, "block path covered");
}

#[test]
fn normal_cache_across_calls() {
    for c in cases("normal_seq") {
        let mut g = CpuGenerator::new(seed_of(&c));
        for (s, step) in c.get("steps").arr().iter().enumerate() {
            let st = step.arr();
            let (dt, n) = (st[0].s(), st[1].u() as usize);
            let want = unhex(st[2].s());
            with_float!(dt, T, {
                let mut out = vec![T::from_f64(0.0); n];
                normal_(&mut g, &mut out, 0.0, 1.0, true).unwrap();
                assert!(
                    out.bytes() == want,
                    "seq seed {} step {s}: {}",
                    seed_of(&c),
                    first_diff(&out.bytes(), &want, width(dt))
                );
            });
        }
        check_pos(&mut g, &c, "normal sequence");
    }
}

// ------------------------------------------------------------------ random_ / randint

#[test]
fn random_bit_identical() {
    let cs = cases("random");
    for (k, c) in cs.iter().enumerate() {
        let dt = c.get("dtype").s();
        let n = c.get("n").u() as usize;
        let op = c.get("op").s();
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!(
            "random case {k} {op} {dt} {:?} {:?}",
            c.opt("lo").map(|v| v.s()),
            c.opt("hi").map(|v| v.s())
        );
        with_elem!(dt, T, {
            let mut out = vec![T::from_i64(0); n];
            match op {
                "from_to" => {
                    random_from_to_(&mut g, &mut out, c.get("lo").i(), Some(c.get("hi").i()))
                        .unwrap()
                }
                "from_none" => random_from_to_(&mut g, &mut out, c.get("lo").i(), None).unwrap(),
                "random" => random_(&mut g, &mut out).unwrap(),
                "full64" => random_from_to_(&mut g, &mut out, i64::MIN, None).unwrap(),
                _ => panic!("op {op}"),
            }
            assert_bytes(&out.bytes(), c, dt, &what);
        });
        check_pos(&mut g, c, &what);
    }
}

#[test]
fn random_unsupported_dtypes_error_like_upstream() {
    let mut g = CpuGenerator::new(0);
    assert!(random_(&mut g, &mut [0u32; 3]).is_err());
    assert!(random_from_to_(&mut g, &mut [f16::ZERO; 3], i64::MIN, None).is_err());
    assert!(random_from_to_(&mut g, &mut [0i8; 3], 0, Some(1000)).is_err());
    assert!(random_from_to_(&mut g, &mut [0i64; 3], 5, Some(5)).is_err());
}

// ------------------------------------------------------------------ bernoulli

#[test]
fn bernoulli_bit_identical() {
    for (k, c) in cases("bernoulli").iter().enumerate() {
        let dt = c.get("dtype").s();
        let n = c.get("n").u() as usize;
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!("bernoulli case {k} {} {dt}", c.get("op").s());
        with_elem!(dt, T, {
            let mut out = vec![T::from_i64(0); n];
            if c.get("op").s() == "scalar" {
                bernoulli_scalar_(&mut g, &mut out, c.get("p").f()).unwrap();
            } else {
                let pb = unhex(c.get("p_bytes").s());
                with_float!(c.get("pdtype").s(), P, {
                    let p = P::from_bytes(&pb);
                    bernoulli_tensor_(&mut g, &mut out, &p).unwrap();
                });
            }
            assert_bytes(&out.bytes(), c, dt, &what);
        });
        check_pos(&mut g, c, &what);
    }
}

// ------------------------------------------------------------------ exponential

#[test]
fn exponential_bit_identical() {
    for (k, c) in cases("exponential").iter().enumerate() {
        let dt = c.get("dtype").s();
        let n = c.get("n").u() as usize;
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!("exponential case {k} {dt} lambda={}", c.get("lam").f());
        with_float!(dt, T, {
            let mut out = vec![T::from_f64(0.0); n];
            exponential_(&mut g, &mut out, c.get("lam").f()).unwrap();
            assert_bytes(&out.bytes(), c, dt, &what);
        });
        check_pos(&mut g, c, &what);
    }
}

// ------------------------------------------------------------------ randperm

#[test]
fn randperm_bit_identical() {
    for c in cases("randperm")
        .iter()
        .filter(|c| c.opt("sha256").is_none())
    {
        let n = c.get("n").u() as usize;
        let mut g = CpuGenerator::new(seed_of(c));
        let p = randperm(&mut g, n);
        assert_bytes(
            &p.bytes(),
            c,
            "i64",
            &format!("randperm({n}) seed {}", seed_of(c)),
        );
        check_pos(&mut g, c, "randperm");
    }
}

/// The random64 path for n >= u32::MAX / 20 (needs ~1.7 GB; run with --ignored --release).
#[test]
#[ignore]
fn randperm_large_n_bit_identical() {
    let cs = cases("randperm");
    let c = cs
        .iter()
        .find(|c| c.opt("sha256").is_some())
        .expect("regenerate with RNG_GEN_LARGE_RANDPERM=1");
    let n = c.get("n").u() as usize;
    assert!(n as u64 >= RANDPERM_SMALL_N_LIMIT);
    let mut g = CpuGenerator::new(seed_of(c));
    let p = randperm(&mut g, n);
    assert_eq!(hex(&p[..16].bytes()), c.get("head").s());
    assert_eq!(hex(&p[n - 16..].bytes()), c.get("tail_values").s());
    let mut h = sha256::Sha256::new();
    for chunk in p.chunks(1 << 16) {
        h.update(&chunk.bytes());
    }
    assert_eq!(hex(&h.finish()), c.get("sha256").s());
    check_pos(&mut g, c, "randperm large");
}

// ------------------------------------------------------------------ multinomial

#[test]
fn multinomial_bit_identical() {
    for (k, c) in cases("multinomial").iter().enumerate() {
        let dt = c.get("dtype").s();
        let shape = c.get("shape").usizes();
        let (n_dist, n_cat) = if shape.len() == 1 {
            (1, shape[0])
        } else {
            (shape[0], shape[1])
        };
        let ns = c.get("n_sample").u() as usize;
        let repl = c.get("replacement").b();
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!("multinomial case {k} {dt} {shape:?} n_sample={ns} replacement={repl}");
        with_float!(dt, T, {
            let probs = T::from_bytes(&unhex(c.get("probs").s()));
            let r = multinomial(&mut g, &probs, n_dist, n_cat, ns, repl).unwrap();
            assert_bytes(&r.bytes(), c, "i64", &what);
        });
        check_pos(&mut g, c, &what);
    }
}

// ------------------------------------------------------------------ dropout

#[test]
fn dropout_bit_identical() {
    for (k, c) in cases("dropout").iter().enumerate() {
        let dt = c.get("dtype").s();
        let mut g = CpuGenerator::new(seed_of(c));
        let what = format!("dropout case {k} {dt} p={}", c.get("p").f());
        with_float!(dt, T, {
            let x_logical = T::from_bytes(&unhex(c.get("x").s()));
            // the input in draw (memory) order
            let x: Vec<T> = match c.opt("sizes") {
                None => x_logical.clone(),
                Some(s) => {
                    let strides: Vec<isize> = c
                        .get("strides")
                        .arr()
                        .iter()
                        .map(|v| v.i() as isize)
                        .collect();
                    draw_order(&s.usizes(), &strides)
                        .iter()
                        .map(|&i| x_logical[i])
                        .collect()
                }
            };
            let y = dropout(&mut g, &x, c.get("p").f(), true).unwrap();
            assert_bytes(&to_logical(c, y).bytes(), c, dt, &what);
        });
        check_pos(&mut g, c, &what);
    }
}

mod sha256 {
    //! Minimal SHA-256 for the large randperm digest (test-only).
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    pub struct Sha256 {
        h: [u32; 8],
        buf: Vec<u8>,
        len: u64,
    }
    impl Sha256 {
        pub fn new() -> Self {
            Sha256 {
                h: [
                    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
                    0x1f83d9ab, 0x5be0cd19,
                ],
                buf: Vec::new(),
                len: 0,
            }
        }
        fn block(&mut self, b: &[u8]) {
            let mut w = [0u32; 64];
            for i in 0..16 {
                w[i] = u32::from_be_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
            }
            for i in 16..64 {
                let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
                let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16]
                    .wrapping_add(s0)
                    .wrapping_add(w[i - 7])
                    .wrapping_add(s1);
            }
            let mut v = self.h;
            for i in 0..64 {
                let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
                let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
                let t1 = v[7]
                    .wrapping_add(s1)
                    .wrapping_add(ch)
                    .wrapping_add(K[i])
                    .wrapping_add(w[i]);
                let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
                let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
                let t2 = s0.wrapping_add(maj);
                v = [
                    t1.wrapping_add(t2),
                    v[0],
                    v[1],
                    v[2],
                    v[3].wrapping_add(t1),
                    v[4],
                    v[5],
                    v[6],
                ];
            }
            for (h, &vi) in self.h.iter_mut().zip(&v) {
                *h = h.wrapping_add(vi);
            }
        }
        pub fn update(&mut self, data: &[u8]) {
            self.len += data.len() as u64;
            self.buf.extend_from_slice(data);
            let full = self.buf.len() / 64 * 64;
            let buf = std::mem::take(&mut self.buf);
            for b in buf[..full].chunks(64) {
                self.block(b);
            }
            self.buf = buf[full..].to_vec();
        }
        pub fn finish(mut self) -> Vec<u8> {
            let bits = self.len * 8;
            let mut pad = vec![0x80u8];
            while (self.buf.len() + pad.len()) % 64 != 56 {
                pad.push(0);
            }
            pad.extend_from_slice(&bits.to_be_bytes());
            let buf = [std::mem::take(&mut self.buf), pad].concat();
            for b in buf.chunks(64) {
                self.block(b);
            }
            self.h.iter().flat_map(|x| x.to_be_bytes()).collect()
        }
    }

    #[test]
    fn sha256_known_answer() {
        let mut h = Sha256::new();
        h.update(b"abc");
        assert_eq!(
            super::hex(&h.finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

//! Test helpers: a minimal JSON reader (no dependencies) and case plumbing.
#![allow(dead_code)]

use std::collections::BTreeMap;
use torchnative_rng::CpuGenerator;

#[derive(Clone, Debug)]
pub enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(BTreeMap<String, J>),
}

impl J {
    pub fn get(&self, k: &str) -> &J {
        match self {
            J::Obj(m) => m.get(k).unwrap_or_else(|| panic!("missing key {k}")),
            _ => panic!("not an object"),
        }
    }
    pub fn opt(&self, k: &str) -> Option<&J> {
        match self {
            J::Obj(m) => m.get(k),
            _ => None,
        }
    }
    pub fn arr(&self) -> &Vec<J> {
        match self {
            J::Arr(v) => v,
            _ => panic!("not an array: {self:?}"),
        }
    }
    pub fn s(&self) -> &str {
        match self {
            J::Str(s) => s,
            J::Num(s) => s,
            _ => panic!("not a string: {self:?}"),
        }
    }
    pub fn f(&self) -> f64 {
        self.s().parse().unwrap()
    }
    pub fn i(&self) -> i64 {
        self.s().parse().unwrap()
    }
    pub fn u(&self) -> u64 {
        self.s().parse().unwrap()
    }
    pub fn b(&self) -> bool {
        match self {
            J::Bool(b) => *b,
            _ => panic!("not a bool"),
        }
    }
    pub fn usizes(&self) -> Vec<usize> {
        self.arr().iter().map(|v| v.u() as usize).collect()
    }
}

pub fn parse(text: &str) -> J {
    let b = text.as_bytes();
    let mut i = 0;
    let v = value(b, &mut i);
    ws(b, &mut i);
    assert_eq!(i, b.len(), "trailing data");
    v
}

fn ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && (b[*i] as char).is_ascii_whitespace() {
        *i += 1;
    }
}

fn value(b: &[u8], i: &mut usize) -> J {
    ws(b, i);
    match b[*i] {
        b'{' => {
            *i += 1;
            let mut m = BTreeMap::new();
            loop {
                ws(b, i);
                if b[*i] == b'}' {
                    *i += 1;
                    break;
                }
                let k = match value(b, i) {
                    J::Str(s) => s,
                    _ => panic!("key"),
                };
                ws(b, i);
                assert_eq!(b[*i], b':');
                *i += 1;
                let v = value(b, i);
                m.insert(k, v);
                ws(b, i);
                if b[*i] == b',' {
                    *i += 1;
                }
            }
            J::Obj(m)
        }
        b'[' => {
            *i += 1;
            let mut v = Vec::new();
            loop {
                ws(b, i);
                if b[*i] == b']' {
                    *i += 1;
                    break;
                }
                v.push(value(b, i));
                ws(b, i);
                if b[*i] == b',' {
                    *i += 1;
                }
            }
            J::Arr(v)
        }
        b'"' => {
            *i += 1;
            let start = *i;
            while b[*i] != b'"' {
                assert_ne!(b[*i], b'\\', "escapes not supported");
                *i += 1;
            }
            let s = std::str::from_utf8(&b[start..*i]).unwrap().to_string();
            *i += 1;
            J::Str(s)
        }
        b't' => {
            *i += 4;
            J::Bool(true)
        }
        b'f' => {
            *i += 5;
            J::Bool(false)
        }
        b'n' => {
            *i += 4;
            J::Null
        }
        _ => {
            let start = *i;
            while *i < b.len() && matches!(b[*i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                *i += 1;
            }
            J::Num(std::str::from_utf8(&b[start..*i]).unwrap().to_string())
        }
    }
}

pub fn load(name: &str) -> J {
    let path = format!(
        "{}/tests/expected/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        name
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let j = parse(&text);
    assert_eq!(
        j.get("torch").s(),
        "2.13.0+cu130",
        "expected data comes from upstream 2.13.0"
    );
    j
}

pub fn cases(name: &str) -> Vec<J> {
    load(name).get("cases").arr().clone()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|k| u8::from_str_radix(&s[2 * k..2 * k + 2], 16).unwrap())
        .collect()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Raw little-endian bytes of a slice of plain values.
pub trait Bytes {
    fn bytes(&self) -> Vec<u8>;
}
macro_rules! impl_bytes {
    ($($t:ty),*) => {$(
        impl Bytes for [$t] {
            fn bytes(&self) -> Vec<u8> { self.iter().flat_map(|v| v.to_le_bytes()).collect() }
        }
    )*};
}
impl_bytes!(f64, f32, i64, i32, i16, i8, u8, u16, u32, u64);
impl Bytes for [bool] {
    fn bytes(&self) -> Vec<u8> {
        self.iter().map(|&v| v as u8).collect()
    }
}
impl Bytes for [half::f16] {
    fn bytes(&self) -> Vec<u8> {
        self.iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect()
    }
}
impl Bytes for [half::bf16] {
    fn bytes(&self) -> Vec<u8> {
        self.iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect()
    }
}

/// Parse little-endian values of a type from bytes.
pub trait FromBytes: Sized {
    fn from_bytes(b: &[u8]) -> Vec<Self>;
}
macro_rules! impl_from_bytes {
    ($($t:ty),*) => {$(
        impl FromBytes for $t {
            fn from_bytes(b: &[u8]) -> Vec<Self> {
                const N: usize = std::mem::size_of::<$t>();
                b.chunks(N).map(|c| <$t>::from_le_bytes(c.try_into().unwrap())).collect()
            }
        }
    )*};
}
impl_from_bytes!(f64, f32, i64);
impl FromBytes for half::f16 {
    fn from_bytes(b: &[u8]) -> Vec<Self> {
        b.chunks(2)
            .map(|c| half::f16::from_bits(u16::from_le_bytes([c[0], c[1]])))
            .collect()
    }
}
impl FromBytes for half::bf16 {
    fn from_bytes(b: &[u8]) -> Vec<Self> {
        b.chunks(2)
            .map(|c| half::bf16::from_bits(u16::from_le_bytes([c[0], c[1]])))
            .collect()
    }
}

/// Compare the generator position after an op with the recorded one, then the probe.
pub fn check_pos(g: &mut CpuGenerator, c: &J, what: &str) {
    let st = g.get_state();
    let left = i32::from_le_bytes(st[8..12].try_into().unwrap()) as i64;
    let next = u64::from_le_bytes(st[16..24].try_into().unwrap());
    assert_eq!(left, c.get("left").i(), "{what}: generator `left` after op");
    assert_eq!(next, c.get("next").u(), "{what}: generator `next` after op");
    assert_eq!(
        hex(&st[5016..5056]),
        c.get("tail").s(),
        "{what}: normal caches after op"
    );
    let probe: Vec<String> = (0..2).map(|_| format!("{:016x}", g.random64())).collect();
    let want: Vec<String> = c
        .get("probe")
        .arr()
        .iter()
        .map(|v| v.s().to_string())
        .collect();
    assert_eq!(probe, want, "{what}: probe draws after op");
}

/// First differing element index, for messages.
pub fn first_diff(a: &[u8], b: &[u8], width: usize) -> String {
    if a.len() != b.len() {
        return format!("length {} vs {}", a.len(), b.len());
    }
    for k in 0..a.len() / width {
        let (x, y) = (
            &a[k * width..(k + 1) * width],
            &b[k * width..(k + 1) * width],
        );
        if x != y {
            return format!("element {k}: got {} want {}", hex(x), hex(y));
        }
    }
    "equal".into()
}

pub fn seed_of(c: &J) -> u64 {
    c.get("seed").u()
}

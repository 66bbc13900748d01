//! Distribution fills, mirroring `aten/src/ATen/native/cpu/DistributionTemplates.h`
//! (AVX2 kernels, which this x86-64 build also uses on AVX512 CPUs) and the
//! argument handling of `aten/src/ATen/native/DistributionTemplates.h`.
//!
//! Every function writes its output slice in *draw order*: the order in which
//! upstream's `cpu_serial_kernel` visits the elements. For a contiguous tensor
//! that is the row-major order; for other layouts use [`crate::draw_order`] to
//! map draw k to its logical element.

use crate::boxmuller::{
    normal_double_sample, normal_fill_16_f32, normal_fill_16_f64, uniform_f32, uniform_f64,
};
use crate::elem::{Element, Float, FloatKind, RangeKind};
use crate::{CpuGenerator, RngError};

fn err<T>(msg: impl Into<String>) -> Result<T, RngError> {
    Err(RngError::new(msg))
}

// ---------------------------------------------------------------- uniform_

/// The C++ type name upstream's bounds messages print (`caffe2::TypeMeta`'s name, as
/// `dtype` streams): "from is out of bounds for unsigned char", not "Byte".
fn type_meta_name(scalar_type: &str) -> &str {
    match scalar_type {
        "Double" => "double",
        "Float" => "float",
        "Half" => "c10::Half",
        "BFloat16" => "c10::BFloat16",
        "Bool" => "bool",
        "Byte" => "unsigned char",
        "Char" => "signed char",
        "Short" => "short int",
        "Int" => "int",
        "Long" => "long int",
        "UInt64" => "unsigned long",
        other => other,
    }
}

/// `Tensor.uniform_(from, to)` / `torch.rand` (from=0, to=1).
///
/// f64 uses one `random64()` (53 bits) per element; f32/f16/bf16 use one
/// `random()` (24 bits) and compute in float. The scaling is the FMA
/// `x * (to - from) + from` that upstream's compiler emitted; a value equal to
/// `to` after the cast to the output dtype is replaced by `from`.
pub fn uniform_<T: Float>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    from: f64,
    to: f64,
) -> Result<(), RngError> {
    let (min, max) = (T::lowest(), T::max_value());
    if !(from >= min && from <= max) {
        return err(format!(
            "from is out of bounds for {}",
            type_meta_name(T::NAME)
        ));
    }
    if !(to >= min && to <= max) {
        return err(format!(
            "to is out of bounds for {}",
            type_meta_name(T::NAME)
        ));
    }
    if !(from <= to) {
        return err(format!(
            "uniform_ expects to return a [from, to) range, but found from={} > to={}",
            from, to
        ));
    }
    if !((to - from) <= max) {
        return err(format!(
            "uniform_ expects to-from <= std::numeric_limits<{}>::max(), but found to={} and from={} which result in to-from to exceed the limit",
            T::NAME, to, from
        ));
    }
    let to_scalar = T::from_f64(to);
    let from_scalar = T::from_f64(from);
    match T::KIND {
        FloatKind::F64 => {
            let span = to - from;
            for o in out.iter_mut() {
                let x = uniform_f64(gen);
                let v = T::from_f64(x.mul_add(span, from));
                *o = if v == to_scalar { from_scalar } else { v };
            }
        }
        _ => {
            let (f, t) = (from as f32, to as f32);
            let span = t - f;
            for o in out.iter_mut() {
                let x = uniform_f32(gen);
                let v = T::from_f32(x.mul_add(span, f));
                // Half/BFloat16 operator== compares the float values
                *o = if v.to_f32() == to_scalar.to_f32() {
                    from_scalar
                } else {
                    v
                };
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- normal_

/// `Tensor.normal_(mean, std)` / `torch.randn`.
///
/// `contiguous` must be the destination's `is_contiguous()`: upstream uses the
/// block ("fill") path only for contiguous tensors with at least 16 elements:
/// all uniforms are drawn first, Box–Muller runs on blocks of 16 (element j
/// pairs with j+8), and when `len % 16 != 0` the last 16 elements are redrawn
/// and transformed again. f64 blocks use glibc log/sincos; f32 blocks (and the
/// float buffer used for f16/bf16) use the AVX2 Cephes approximations. Every
/// other case uses `normal_distribution<double>` per element (two `random64()`
/// per pair, second sample cached in the generator).
pub fn normal_<T: Float>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    mean: f64,
    std: f64,
    contiguous: bool,
) -> Result<(), RngError> {
    if !(std >= 0.0) {
        return err(format!("normal expects std >= 0.0, but found std {}", std));
    }
    let size = out.len();
    if size >= 16 && contiguous {
        normal_fill(gen, out, mean, std);
    } else {
        for o in out.iter_mut() {
            *o = T::from_f64(normal_double_sample(gen, mean, std));
        }
    }
    Ok(())
}

fn normal_fill<T: Float>(gen: &mut CpuGenerator, out: &mut [T], mean: f64, std: f64) {
    let size = out.len();
    match T::KIND {
        FloatKind::F64 => {
            let mut data: Vec<f64> = (0..size).map(|_| uniform_f64(gen)).collect();
            let mut i = 0;
            while i + 16 <= size {
                normal_fill_16_f64(&mut data[i..i + 16], mean, std);
                i += 16;
            }
            if size % 16 != 0 {
                let tail = &mut data[size - 16..];
                for v in tail.iter_mut() {
                    *v = uniform_f64(gen);
                }
                normal_fill_16_f64(tail, mean, std);
            }
            for (o, v) in out.iter_mut().zip(data) {
                *o = T::from_f64(v);
            }
        }
        FloatKind::F32 => {
            let (m, s) = (mean as f32, std as f32);
            let mut data: Vec<f32> = (0..size).map(|_| uniform_f32(gen)).collect();
            let mut i = 0;
            while i + 16 <= size {
                normal_fill_16_f32(&mut data[i..i + 16], m, s);
                i += 16;
            }
            if size % 16 != 0 {
                let tail = &mut data[size - 16..];
                for v in tail.iter_mut() {
                    *v = uniform_f32(gen);
                }
                normal_fill_16_f32(tail, m, s);
            }
            for (o, v) in out.iter_mut().zip(data) {
                *o = T::from_f32(v);
            }
        }
        FloatKind::F16 | FloatKind::BF16 => {
            // opmath float buffer: 16 uniforms drawn per block, then transformed
            let (m, s) = (mean as f32, std as f32);
            let mut buf = [0f32; 16];
            let mut i = 0;
            while i + 16 <= size {
                for b in buf.iter_mut() {
                    *b = uniform_f32(gen);
                }
                normal_fill_16_f32(&mut buf, m, s);
                for j in 0..16 {
                    out[i + j] = T::from_f32(buf[j]);
                }
                i += 16;
            }
            if size % 16 != 0 {
                let off = size - 16;
                for b in buf.iter_mut() {
                    *b = uniform_f32(gen);
                }
                normal_fill_16_f32(&mut buf, m, s);
                for j in 0..16 {
                    out[off + j] = T::from_f32(buf[j]);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- random_

fn update_from<T: Element>(from: i64, digits: u32) -> i64 {
    let from_plus_1 = T::from_i64(from.wrapping_add(1)).to_f64() as i64;
    if from_plus_1 < from {
        let mut f = from.wrapping_add(1).wrapping_abs();
        let mut n: i64 = 0;
        loop {
            f >>= 1;
            if f == 0 {
                break;
            }
            n += 1;
        }
        return from_plus_1.wrapping_add(1i64 << (n - digits as i64 + 1));
    }
    from
}

fn update_to<T: Element>(to: i64, digits: u32) -> i64 {
    let to_minus_1 = T::from_i64(to.wrapping_sub(1)).to_f64() as i64;
    if to_minus_1 >= to {
        let mut t = to.wrapping_sub(1).wrapping_abs();
        let mut n: i64 = 0;
        loop {
            t >>= 1;
            if t == 0 {
                break;
            }
            n += 1;
        }
        return to_minus_1.wrapping_sub(1i64 << (n - digits as i64 + 1));
    }
    to
}

fn check_from_to_in_range<T: Element>(from: i64, to_inc: i64) -> Result<(), RngError> {
    let (ok_from, ok_to) = match T::range_kind() {
        RangeKind::Floating { lowest, max, .. } => {
            let (f, t) = (from as f64, to_inc as f64);
            (f >= lowest && f <= max, t >= lowest && t <= max)
        }
        RangeKind::UInt64 => (from >= 0, to_inc >= 0),
        RangeKind::Integral { min, max } => {
            (from >= min && from <= max, to_inc >= min && to_inc <= max)
        }
    };
    if !ok_from {
        return err(format!(
            "from is out of bounds for {}",
            type_meta_name(T::NAME)
        ));
    }
    if !ok_to {
        return err(format!(
            "to - 1 is out of bounds for {}",
            type_meta_name(T::NAME)
        ));
    }
    Ok(())
}

/// The kernel of `random_from_to`: values in `[base, base + range)`; draws
/// `random64()` when `range >= 2^28`, else `random()`.
pub fn random_from_to_kernel<T: Element>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    range: u64,
    base: i64,
) {
    let wide = range >= 1u64 << 28;
    for o in out.iter_mut() {
        let val = if wide {
            gen.random64()
        } else {
            gen.random() as u64
        };
        *o = T::from_i64((val % range).wrapping_add(base as u64) as i64);
    }
}

/// `Tensor.random_(from, to)` and `torch.randint(low, high)` (`to = Some(high)`),
/// `Tensor.random_(from, None)` (to = max of the dtype, inclusive), and
/// `random_(INT64_MIN, None)` (full 64-bit range). Bounds handling, including
/// `update_from/update_to` for floating dtypes, follows `random_from_to_impl`.
pub fn random_from_to_<T: Element>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    from: i64,
    to: Option<i64>,
) -> Result<(), RngError> {
    let mut from = from;
    if let Some(mut to) = to {
        if from >= to {
            return err(format!(
                "random_ expects 'from' to be less than 'to', but got from={} >= to={}",
                from, to
            ));
        }
        if let RangeKind::Floating { digits, .. } = T::range_kind() {
            from = update_from::<T>(from, digits);
            to = update_to::<T>(to, digits);
            if from >= to {
                return err(format!(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from={} >= to={}",
                    from, to
                ));
            }
        }
        check_from_to_in_range::<T>(from, to.wrapping_sub(1))?;
        if out.is_empty() {
            return Ok(());
        }
        let range = (to as u64).wrapping_sub(from as u64);
        random_from_to_kernel(gen, out, range, from);
    } else if from != i64::MIN {
        let to_inc = match T::range_kind() {
            RangeKind::Floating { digits, .. } => {
                let to_inc = if digits >= 63 {
                    i64::MAX
                } else {
                    1i64 << digits
                };
                from = update_from::<T>(from, digits);
                if from >= to_inc {
                    return err(format!(
                        "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from={} > to_inc={}",
                        from, to_inc
                    ));
                }
                to_inc
            }
            RangeKind::Integral { max, .. } => max,
            RangeKind::UInt64 => u64::MAX as i64,
        };
        check_from_to_in_range::<T>(from, to_inc)?;
        if out.is_empty() {
            return Ok(());
        }
        let range = (to_inc as u64).wrapping_sub(from as u64).wrapping_add(1);
        random_from_to_kernel(gen, out, range, from);
    } else {
        if out.is_empty() {
            return Ok(());
        }
        if !T::FULL64 {
            return err(format!(
                "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16 (got {})",
                T::NAME
            ));
        }
        for o in out.iter_mut() {
            *o = T::from_i64(gen.random64() as i64);
        }
    }
    Ok(())
}

/// `Tensor.random_()` without bounds: `[0, max]` for integral dtypes (bool: low
/// bit), `[0, 2^digits]` for floating dtypes. int64/f64 use `random64()`.
pub fn random_<T: Element>(gen: &mut CpuGenerator, out: &mut [T]) -> Result<(), RngError> {
    if out.is_empty() {
        return Ok(());
    }
    for o in out.iter_mut() {
        match T::uniform_int(gen) {
            Some(v) => *o = v,
            None => {
                return err(format!(
                    "\"random_kernel_cpu\" not implemented for '{}'",
                    T::NAME
                ))
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- bernoulli_

/// `Tensor.bernoulli_(p)` with a float `p`: one `random64()` per element,
/// `u < p` in double.
pub fn bernoulli_scalar_<T: Element>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    p: f64,
) -> Result<(), RngError> {
    if !(0.0..=1.0).contains(&p) {
        return err(format!(
            "bernoulli_ expects p to be in [0, 1], but got p={}",
            p
        ));
    }
    for o in out.iter_mut() {
        *o = T::from_i64((uniform_f64(gen) < p) as i64);
    }
    Ok(())
}

/// `Tensor.bernoulli_(p_tensor)` / `torch.bernoulli(p_tensor)`: `p[k]` is the
/// probability of draw k (same draw order as `out`; broadcast p by repeating).
/// A double p tensor draws `random64()` and compares in double; a float, half
/// or bfloat16 p tensor draws `random()` (24 bits) and compares in float.
pub fn bernoulli_tensor_<T: Element, P: Float>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    p: &[P],
) -> Result<(), RngError> {
    if p.len() != out.len() {
        return err(format!(
            "bernoulli_: p has {} elements, output has {}",
            p.len(),
            out.len()
        ));
    }
    for (o, pv) in out.iter_mut().zip(p) {
        let hit = if P::KIND == FloatKind::F64 {
            let pd = pv.to_f64();
            if !(0.0..=1.0).contains(&pd) {
                return err("Expected p_in >= 0 && p_in <= 1 to be true");
            }
            uniform_f64(gen) < pd
        } else {
            let pf = pv.to_f32();
            if !(0.0..=1.0).contains(&pf) {
                return err("Expected p_in >= 0 && p_in <= 1 to be true");
            }
            uniform_f32(gen) < pf
        };
        *o = T::from_i64(hit as i64);
    }
    Ok(())
}

// ---------------------------------------------------------------- exponential_

/// `Tensor.exponential_(lambda)`: one `random64()` per element,
/// `(-1/lambda) * log1p(-u)` in double, then cast.
pub fn exponential_<T: Float>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    lambda: f64,
) -> Result<(), RngError> {
    if !(lambda > 0.0) {
        return err(format!(
            "exponential_ expects lambda > 0.0, but found lambda={}",
            lambda
        ));
    }
    let k = -1.0 / lambda;
    for o in out.iter_mut() {
        let u = uniform_f64(gen);
        *o = T::from_f64(k * (-u).ln_1p());
    }
    Ok(())
}

// ---------------------------------------------------------------- cauchy_, log_normal_, geometric_

/// `Tensor.cauchy_(median, sigma)`: one `random64()` per element,
/// `median + sigma * tan(pi * (u - 0.5))` in double (the product and sum fused, as upstream's
/// build computes it), then cast.
pub fn cauchy_<T: Float>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    median: f64,
    sigma: f64,
) -> Result<(), RngError> {
    if !(sigma > 0.0) {
        return err(format!(
            "cauchy_ expects sigma > 0.0, but found sigma={}",
            sigma
        ));
    }
    for o in out.iter_mut() {
        let u = uniform_f64(gen);
        *o = T::from_f64(sigma.mul_add((std::f64::consts::PI * (u - 0.5)).tan(), median));
    }
    Ok(())
}

/// `Tensor.log_normal_(mean, std)`: `exp` of upstream's `normal_distribution<double>` draw (the
/// generator's cached second Box-Muller value included), then cast.
pub fn log_normal_<T: Float>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    mean: f64,
    std: f64,
) -> Result<(), RngError> {
    if !(std > 0.0) {
        return err(format!(
            "log_normal_ expects std > 0.0, but found std={}",
            std
        ));
    }
    for o in out.iter_mut() {
        *o = T::from_f64(normal_double_sample(gen, mean, std).exp());
    }
    Ok(())
}

/// `Tensor.geometric_(p)`: one `random64()` per element, `ceil(log(u) / log1p(-p))` in double,
/// converted as upstream's `static_cast<scalar_t>` (every dtype but bool).
pub fn geometric_<T: Element>(
    gen: &mut CpuGenerator,
    out: &mut [T],
    p: f64,
) -> Result<(), RngError> {
    if !(p > 0.0 && p < 1.0) {
        return err(format!(
            "geometric_ expects p to be in (0, 1), but got p={}",
            p
        ));
    }
    let denom = (-p).ln_1p();
    for o in out.iter_mut() {
        // static_cast<scalar_t>(double): a float dtype keeps inf for a tiny p
        *o = T::from_f64_cast((uniform_f64(gen).ln() / denom).ceil());
    }
    Ok(())
}

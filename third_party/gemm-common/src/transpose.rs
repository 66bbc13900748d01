//! Transposing packs with in-register tile transposes (torchnative's patch).
//!
//! `pack_generic_inner_loop` gathers a panel one element at a time when the source's packed
//! dimension is strided and its depth dimension contiguous (`src_cs == 1`, `src_rs != 1`): a
//! row-major left operand, such as a weight `W` in `W @ x^T`. On x86-64 this packs such panels
//! with square tile transposes instead (16x16 or 8x8 of 4-byte elements, 8x8 or 4x4 of 8-byte
//! ones), then gathers only the edges. Packing moves bits, so any element type of that size is
//! transposed alike.

/// Packs `src_width` rows of `k` contiguous elements (row stride `src_rs`) into `dst`, one group
/// of `dst_width` elements per depth step; the rows past `src_width` are zeroed when `zero_tail`.
/// Returns false (having written nothing) when no tile transpose applies here.
///
/// # Safety
/// As `pack_generic_inner_loop`: `src` valid for `src_width` rows of `k` elements, `dst` for
/// `k * dst_width` elements.
#[inline(always)]
pub unsafe fn pack_transposed<T: Copy>(
    dst: *mut T,
    src: *const T,
    src_rs: isize,
    src_width: usize,
    dst_width: usize,
    k: usize,
    zero_tail: bool,
) -> bool {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        let tile = match core::mem::size_of::<T>() {
            4 if x86::has_avx512() => 16,
            4 if x86::has_avx() => 8,
            8 if x86::has_avx512() => 8,
            8 if x86::has_avx() => 4,
            _ => 0,
        };
        if tile == 0 || src_width < tile || k < tile {
            return false;
        }
        pack_tiles(tile, dst, src, src_rs, src_width, dst_width, k, zero_tail);
        true
    }
    #[cfg(not(all(feature = "std", target_arch = "x86_64")))]
    {
        let _ = (dst, src, src_rs, src_width, dst_width, k, zero_tail);
        false
    }
}

/// [`pack_transposed`] with `tile x tile` transposes, which the CPU must support for the
/// element size (16 or 8 for 4-byte elements, 8 or 4 for 8-byte ones).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn pack_tiles<T: Copy>(
    tile: usize,
    dst: *mut T,
    src: *const T,
    src_rs: isize,
    src_width: usize,
    dst_width: usize,
    k: usize,
    zero_tail: bool,
) {
    let size = core::mem::size_of::<T>();
    let (jv, kv) = (src_width / tile * tile, k / tile * tile);
    let (srs, drs) = (src_rs * size as isize, (dst_width * size) as isize);
    let mut j = 0;
    while j < jv {
        let mut kk = 0;
        while kk < kv {
            let s = src.offset(j as isize * src_rs + kk as isize) as *const u8;
            let d = dst.add(kk * dst_width + j) as *mut u8;
            match (size, tile) {
                (4, 16) => x86::tr16x16_32(s, srs, d, drs),
                (4, _) => x86::tr8x8_32(s, srs, d, drs),
                (_, 8) => x86::tr8x8_64(s, srs, d, drs),
                _ => x86::tr4x4_64(s, srs, d, drs),
            }
            kk += tile;
        }
        j += tile;
    }
    // the edges: the depth steps past the tiles, and the rows past them
    for kk in 0..k {
        let d = dst.add(kk * dst_width);
        for jj in (if kk < kv { jv } else { 0 })..src_width {
            *d.add(jj) = *src.offset(jj as isize * src_rs + kk as isize);
        }
        if zero_tail {
            core::ptr::write_bytes(d.add(src_width), 0, dst_width - src_width);
        }
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod x86 {
    use core::arch::x86_64::*;

    pub fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    pub fn has_avx() -> bool {
        std::arch::is_x86_feature_detected!("avx")
    }

    /// 16x16 4-byte tile: `d` row `i` = `s` column `i` (row strides in bytes).
    #[target_feature(enable = "avx512f")]
    pub unsafe fn tr16x16_32(s: *const u8, srs: isize, d: *mut u8, drs: isize) {
        let mut r = [_mm512_setzero_ps(); 16];
        for (i, v) in r.iter_mut().enumerate() {
            *v = _mm512_loadu_ps(s.offset(i as isize * srs) as *const f32);
        }
        let mut t = [_mm512_setzero_ps(); 16];
        for i in 0..8 {
            t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        for i in 0..4 {
            let (a, b) = (_mm512_castps_pd(t[4 * i]), _mm512_castps_pd(t[4 * i + 1]));
            let (c, e) = (
                _mm512_castps_pd(t[4 * i + 2]),
                _mm512_castps_pd(t[4 * i + 3]),
            );
            r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
            r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
            r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e));
            r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
        }
        for i in 0..2 {
            for j in 0..4 {
                let (a, b) = (r[8 * i + j], r[8 * i + 4 + j]);
                t[8 * i + j] = _mm512_shuffle_f32x4::<0x88>(a, b);
                t[8 * i + 4 + j] = _mm512_shuffle_f32x4::<0xdd>(a, b);
            }
        }
        for j in 0..8 {
            let (a, b) = (t[j], t[8 + j]);
            r[j] = _mm512_shuffle_f32x4::<0x88>(a, b);
            r[8 + j] = _mm512_shuffle_f32x4::<0xdd>(a, b);
        }
        for (i, v) in r.iter().enumerate() {
            _mm512_storeu_ps(d.offset(i as isize * drs) as *mut f32, *v);
        }
    }

    /// 8x8 4-byte tile.
    #[target_feature(enable = "avx")]
    pub unsafe fn tr8x8_32(s: *const u8, srs: isize, d: *mut u8, drs: isize) {
        let mut r = [_mm256_setzero_ps(); 8];
        for (i, v) in r.iter_mut().enumerate() {
            *v = _mm256_loadu_ps(s.offset(i as isize * srs) as *const f32);
        }
        let mut t = [_mm256_setzero_ps(); 8];
        for i in 0..4 {
            t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        for i in 0..2 {
            let (a, b, c, e) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
            r[4 * i] = _mm256_shuffle_ps::<0x44>(a, c);
            r[4 * i + 1] = _mm256_shuffle_ps::<0xee>(a, c);
            r[4 * i + 2] = _mm256_shuffle_ps::<0x44>(b, e);
            r[4 * i + 3] = _mm256_shuffle_ps::<0xee>(b, e);
        }
        for j in 0..4 {
            t[j] = _mm256_permute2f128_ps::<0x20>(r[j], r[4 + j]);
            t[4 + j] = _mm256_permute2f128_ps::<0x31>(r[j], r[4 + j]);
        }
        for (i, v) in t.iter().enumerate() {
            _mm256_storeu_ps(d.offset(i as isize * drs) as *mut f32, *v);
        }
    }

    /// 8x8 8-byte tile.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn tr8x8_64(s: *const u8, srs: isize, d: *mut u8, drs: isize) {
        let mut r = [_mm512_setzero_pd(); 8];
        for (i, v) in r.iter_mut().enumerate() {
            *v = _mm512_loadu_pd(s.offset(i as isize * srs) as *const f64);
        }
        let mut t = [_mm512_setzero_pd(); 8];
        for i in 0..4 {
            t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
        }
        for i in 0..2 {
            for j in 0..2 {
                let (a, b) = (t[4 * i + j], t[4 * i + 2 + j]);
                r[4 * i + j] = _mm512_shuffle_f64x2::<0x88>(a, b);
                r[4 * i + 2 + j] = _mm512_shuffle_f64x2::<0xdd>(a, b);
            }
        }
        for j in 0..4 {
            let (a, b) = (r[j], r[4 + j]);
            t[j] = _mm512_shuffle_f64x2::<0x88>(a, b);
            t[4 + j] = _mm512_shuffle_f64x2::<0xdd>(a, b);
        }
        for (i, v) in t.iter().enumerate() {
            _mm512_storeu_pd(d.offset(i as isize * drs) as *mut f64, *v);
        }
    }

    /// 4x4 8-byte tile.
    #[target_feature(enable = "avx")]
    pub unsafe fn tr4x4_64(s: *const u8, srs: isize, d: *mut u8, drs: isize) {
        let mut r = [_mm256_setzero_pd(); 4];
        for (i, v) in r.iter_mut().enumerate() {
            *v = _mm256_loadu_pd(s.offset(i as isize * srs) as *const f64);
        }
        let t0 = _mm256_unpacklo_pd(r[0], r[1]);
        let t1 = _mm256_unpackhi_pd(r[0], r[1]);
        let t2 = _mm256_unpacklo_pd(r[2], r[3]);
        let t3 = _mm256_unpackhi_pd(r[2], r[3]);
        r[0] = _mm256_permute2f128_pd::<0x20>(t0, t2);
        r[1] = _mm256_permute2f128_pd::<0x20>(t1, t3);
        r[2] = _mm256_permute2f128_pd::<0x31>(t0, t2);
        r[3] = _mm256_permute2f128_pd::<0x31>(t1, t3);
        for (i, v) in r.iter().enumerate() {
            _mm256_storeu_pd(d.offset(i as isize * drs) as *mut f64, *v);
        }
    }
}

#[cfg(all(test, feature = "std", target_arch = "x86_64"))]
mod tests {
    use super::{pack_tiles, x86};

    fn check<T: Copy + PartialEq + core::fmt::Debug + Default>(
        make: fn(usize) -> T,
        tiles: &[usize],
    ) {
        for &tile in tiles {
            for &(w, dw, k, rs) in &[
                (64, 64, 37, 300),
                (16, 64, 16, 17),
                (48, 64, 50, 64),
                (23, 24, 9, 40),
                (8, 8, 8, 8),
                (5, 8, 33, 33),
                (31, 48, 70, 71),
            ] {
                let src: Vec<T> = (0..w * rs).map(make).collect();
                for zero_tail in [false, true] {
                    let sentinel = make(999_999);
                    let mut got = vec![sentinel; k * dw];
                    let mut want = vec![sentinel; k * dw];
                    for kk in 0..k {
                        for j in 0..w {
                            want[kk * dw + j] = src[j * rs + kk];
                        }
                        if zero_tail {
                            for j in w..dw {
                                want[kk * dw + j] = T::default();
                            }
                        }
                    }
                    unsafe {
                        pack_tiles(
                            tile,
                            got.as_mut_ptr(),
                            src.as_ptr(),
                            rs as isize,
                            w,
                            dw,
                            k,
                            zero_tail,
                        )
                    };
                    assert_eq!(got, want, "tile={tile} w={w} dw={dw} k={k} rs={rs}");
                }
            }
        }
    }

    #[test]
    fn tiles_agree_with_a_gather() {
        let (t4, t8): (&[usize], &[usize]) = match (x86::has_avx512(), x86::has_avx()) {
            (true, _) => (&[16, 8], &[8, 4]),
            (false, true) => (&[8], &[4]),
            _ => (&[], &[]),
        };
        check::<f32>(|i| i as f32, t4);
        check::<u32>(|i| i as u32, t4);
        check::<f64>(|i| i as f64, t8);
        check::<[f32; 2]>(|i| [i as f32, -(i as f32)], t8);
    }
}

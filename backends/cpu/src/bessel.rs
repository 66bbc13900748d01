//! The modified Bessel functions of the first and second kind and the spherical J0, as
//! upstream's CPU kernels compute them (aten/src/ATen/native/Math.h, from Cephes): `i0`, `i0e`,
//! `i1`, `i1e` (`calc_i0` ... `calc_i1e`), `special_modified_bessel_{i0,i1,k0,k1}`,
//! `special_scaled_modified_bessel_{k0,k1}` and `special_spherical_bessel_j0`.
//!
//! Each is a Chebyshev series summed by Clenshaw's recurrence (Cephes' `chbevl`) in the compute
//! type (float32 for float32/float16/bfloat16, as upstream upcasts the reduced types), times
//! libm's `exp`/`sqrt`/`log` of that type. Two details decide the last bit:
//!
//! - upstream compiles these kernels once per CPU capability, and its AVX2/AVX512 builds contract
//!   `y * b1 - b2 + c` into a fused multiply-add (`fma(y, b1, -b2) + c`), as GCC does with
//!   `-mfma`; the default build does not. [`Fused`] follows [`capability`](crate::vecmath::capability).
//! - the float32 tables are upstream's: `calc_i1`/`calc_i1e` take Cephes' shorter single-precision
//!   series (the last 17 and 7 terms of the double ones, whose literals round to the same floats),
//!   `calc_i0` and the `modified_bessel_*` family the double tables rounded to float.

// Cephes' coefficients are written as it publishes them (more digits than an f64 holds).
#![allow(clippy::excessive_precision, clippy::unreadable_literal)]

use crate::dispatch_float;
use crate::dtype::{FloatElem, Real};
use crate::kernel::{Call, KResult};
use crate::kernels;
use crate::strided::map1;
use crate::vecmath::{capability, Cap};

kernels! {
    k_i0 = "aten::i0" => |c| run::<I0>(c);
    k_i0e = "aten::special_i0e" => |c| run::<I0e>(c);
    k_i1 = "aten::special_i1" => |c| run::<I1>(c);
    k_i1e = "aten::special_i1e" => |c| run::<I1e>(c);
    k_mod_i0 = "aten::special_modified_bessel_i0" => |c| run::<ModI0>(c);
    k_mod_i1 = "aten::special_modified_bessel_i1" => |c| run::<ModI1>(c);
    k_mod_k0 = "aten::special_modified_bessel_k0" => |c| run::<ModK0>(c);
    k_mod_k1 = "aten::special_modified_bessel_k1" => |c| run::<ModK1>(c);
    k_scaled_k0 = "aten::special_scaled_modified_bessel_k0" => |c| run::<ScaledK0>(c);
    k_scaled_k1 = "aten::special_scaled_modified_bessel_k1" => |c| run::<ScaledK1>(c);
    k_sph_j0 = "aten::special_spherical_bessel_j0" => |c| run::<SphericalJ0>(c);
}

/// exp(-x) I0(x) on [0, 8], in y = x/2 - 2.
const I0E_A: [f64; 30] = [
    -4.41534164647933937950e-18,
    3.33079451882223809783e-17,
    -2.43127984654795469359e-16,
    1.71539128555513303061e-15,
    -1.16853328779934516808e-14,
    7.67618549860493561688e-14,
    -4.85644678311192946090e-13,
    2.95505266312963983461e-12,
    -1.72682629144155570723e-11,
    9.67580903537323691224e-11,
    -5.18979560163526290666e-10,
    2.65982372468238665035e-9,
    -1.30002500998624804212e-8,
    6.04699502254191894932e-8,
    -2.67079385394061173391e-7,
    1.11738753912010371815e-6,
    -4.41673835845875056359e-6,
    1.64484480707288970893e-5,
    -5.75419501008210370398e-5,
    1.88502885095841655729e-4,
    -5.76375574538582365885e-4,
    1.63947561694133579842e-3,
    -4.32430999505057594430e-3,
    1.05464603945949983183e-2,
    -2.37374148058994688156e-2,
    4.93052842396707084878e-2,
    -9.49010970480476444210e-2,
    1.71620901522208775349e-1,
    -3.04682672343198398683e-1,
    6.76795274409476084995e-1,
];

/// exp(-x) sqrt(x) I0(x) on [8, inf), in y = 32/x - 2.
const I0E_B: [f64; 25] = [
    -7.23318048787475395456e-18,
    -4.83050448594418207126e-18,
    4.46562142029675999901e-17,
    3.46122286769746109310e-17,
    -2.82762398051658348494e-16,
    -3.42548561967721913462e-16,
    1.77256013305652638360e-15,
    3.81168066935262242075e-15,
    -9.55484669882830764870e-15,
    -4.15056934728722208663e-14,
    1.54008621752140982691e-14,
    3.85277838274214270114e-13,
    7.18012445138366623367e-13,
    -1.79417853150680611778e-12,
    -1.32158118404477131188e-11,
    -3.14991652796324136454e-11,
    1.18891471078464383424e-11,
    4.94060238822496958910e-10,
    3.39623202570838634515e-9,
    2.26666899049817806459e-8,
    2.04891858946906374183e-7,
    2.89137052083475648297e-6,
    6.88975834691682398426e-5,
    3.36911647825569408990e-3,
    8.04490411014108831608e-1,
];

/// exp(-x) I1(x) / x on [0, 8]; float32 takes the last 17 terms.
const I1E_A: [f64; 29] = [
    2.77791411276104639959e-18,
    -2.11142121435816608115e-17,
    1.55363195773620046921e-16,
    -1.10559694773538630805e-15,
    7.60068429473540693410e-15,
    -5.04218550472791168711e-14,
    3.22379336594557470981e-13,
    -1.98397439776494371520e-12,
    1.17361862988909016308e-11,
    -6.66348972350202774223e-11,
    3.62559028155211703701e-10,
    -1.88724975172282928790e-9,
    9.38153738649577178388e-9,
    -4.44505912879632808065e-8,
    2.00329475355213526229e-7,
    -8.56872026469545474066e-7,
    3.47025130813767847674e-6,
    -1.32731636560394358279e-5,
    4.78156510755005422638e-5,
    -1.61760815825896745588e-4,
    5.12285956168575772895e-4,
    -1.51357245063125314899e-3,
    4.15642294431288815669e-3,
    -1.05640848946261981558e-2,
    2.47264490306265168283e-2,
    -5.29459812080949914269e-2,
    1.02643658689847095384e-1,
    -1.76416518357834055153e-1,
    2.52587186443633654823e-1,
];

/// exp(-x) sqrt(x) I1(x) on [8, inf); float32 takes the last 7 terms.
const I1E_B: [f64; 25] = [
    7.51729631084210481353e-18,
    4.41434832307170791151e-18,
    -4.65030536848935832153e-17,
    -3.20952592199342395980e-17,
    2.96262899764595013876e-16,
    3.30820231092092828324e-16,
    -1.88035477551078244854e-15,
    -3.81440307243700780478e-15,
    1.04202769841288027642e-14,
    4.27244001671195135429e-14,
    -2.10154184277266431302e-14,
    -4.08355111109219731823e-13,
    -7.19855177624590851209e-13,
    2.03562854414708950722e-12,
    1.41258074366137813316e-11,
    3.25260358301548823856e-11,
    -1.89749581235054123450e-11,
    -5.58974346219658380687e-10,
    -3.83538038596423702205e-9,
    -2.63146884688951950684e-8,
    -2.51223623787020892529e-7,
    -3.88256480887769039346e-6,
    -1.10588938762623716291e-4,
    -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
];

/// K0(x) + log(x/2) I0(x) on [0, 2], in y = x^2 - 2.
const K0_A: [f64; 10] = [
    1.37446543561352307156e-16,
    4.25981614279661018399e-14,
    1.03496952576338420167e-11,
    1.90451637722020886025e-9,
    2.53479107902614945675e-7,
    2.28621210311945178607e-5,
    1.26461541144692592338e-3,
    3.59799365153615016266e-2,
    3.44289899924628486886e-1,
    -5.35327393233902768720e-1,
];

/// exp(x) sqrt(x) K0(x) on [2, inf), in y = 8/x - 2.
const K0_B: [f64; 25] = [
    5.30043377268626276149e-18,
    -1.64758043015242134646e-17,
    5.21039150503902756861e-17,
    -1.67823109680541210385e-16,
    5.51205597852431940784e-16,
    -1.84859337734377901440e-15,
    6.34007647740507060557e-15,
    -2.22751332699166985548e-14,
    8.03289077536357521100e-14,
    -2.98009692317273043925e-13,
    1.14034058820847496303e-12,
    -4.51459788337394416547e-12,
    1.85594911495471785253e-11,
    -7.95748924447710747776e-11,
    3.57739728140030116597e-10,
    -1.69753450938905987466e-9,
    8.57403401741422608519e-9,
    -4.66048989768794782956e-8,
    2.76681363944501510342e-7,
    -1.83175552271911948767e-6,
    1.39498137188764993662e-5,
    -1.28495495816278026384e-4,
    1.56988388573005337491e-3,
    -3.14481013119645005427e-2,
    2.44030308206595545468e0,
];

/// x K1(x) - x log(x/2) I1(x) on [0, 2], in y = x^2 - 2.
const K1_A: [f64; 11] = [
    -7.02386347938628759343e-18,
    -2.42744985051936593393e-15,
    -6.66690169419932900609e-13,
    -1.41148839263352776110e-10,
    -2.21338763073472585583e-8,
    -2.43340614156596823496e-6,
    -1.73028895751305206302e-4,
    -6.97572385963986435018e-3,
    -1.22611180822657148235e-1,
    -3.53155960776544875667e-1,
    1.52530022733894777053e0,
];

/// exp(x) sqrt(x) K1(x) on [2, inf), in y = 8/x - 2.
const K1_B: [f64; 25] = [
    -5.75674448366501715755e-18,
    1.79405087314755922667e-17,
    -5.68946255844285935196e-17,
    1.83809354436663880070e-16,
    -6.05704724837331885336e-16,
    2.03870316562433424052e-15,
    -7.01983709041831346144e-15,
    2.47715442448130437068e-14,
    -8.97670518232499435011e-14,
    3.34841966607842919884e-13,
    -1.28917396095102890680e-12,
    5.13963967348173025100e-12,
    -2.12996783842756842877e-11,
    9.21831518760500529508e-11,
    -4.19035475934189648750e-10,
    2.01504975519703286596e-9,
    -1.03457624656780970260e-8,
    5.74108412545004946722e-8,
    -3.50196060308781257119e-7,
    2.40648494783721712015e-6,
    -1.93619797416608296024e-5,
    1.95215518471351631108e-4,
    -2.85781685962277938680e-3,
    1.03923736576817238437e-1,
    2.72062619048444266945e0,
];

/// Whether upstream's build for this machine's capability contracts `a * b + c` into one
/// rounding (its AVX2 and AVX512 builds are compiled with FMA).
trait Fused {
    const ON: bool;
}
struct Contracted;
impl Fused for Contracted {
    const ON: bool = true;
}
struct Separate;
impl Fused for Separate {
    const ON: bool = false;
}

/// `a * b + c` as upstream's build at hand rounds it.
#[inline(always)]
fn madd<A: Real, F: Fused>(a: A, b: A, c: A) -> A {
    if F::ON {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Whether `A` is float32 (the compute type of float32, float16 and bfloat16).
#[inline(always)]
fn single<A: Real>() -> bool {
    std::mem::size_of::<A>() == 4
}

/// Cephes' `chbevl`: sum c[i] T_i(y/2) by Clenshaw's recurrence, `b0 = y * b1 - b2 + c[i]`.
#[inline(always)]
fn chbevl<A: Real, F: Fused>(y: A, c: &[f64]) -> A {
    let (mut b0, mut b1, mut b2) = (A::c(c[0]), A::ZERO, A::ZERO);
    for &ci in &c[1..] {
        b2 = b1;
        b1 = b0;
        b0 = madd::<A, F>(y, b1, -b2) + A::c(ci);
    }
    A::HALF * (b0 - b2)
}

/// The tables `calc_i1`/`calc_i1e` read for `A`.
#[inline(always)]
fn i1e_tables<A: Real>() -> (&'static [f64], &'static [f64]) {
    if single::<A>() {
        (&I1E_A[12..], &I1E_B[18..])
    } else {
        (&I1E_A, &I1E_B)
    }
}

/// One of upstream's scalar special functions of one float argument.
trait Special {
    const NAME: &'static str;
    fn f<A: Real, F: Fused>(x: A) -> A;
}

struct I0;
impl Special for I0 {
    const NAME: &'static str = "i0_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        let x = x.abs();
        let two = A::c(2.0);
        if x <= A::c(8.0) {
            return x.exp() * chbevl::<A, F>(x / two - two, &I0E_A);
        }
        x.exp() * chbevl::<A, F>(A::c(32.0) / x - two, &I0E_B) / x.sqrt()
    }
}

struct I0e;
impl Special for I0e {
    const NAME: &'static str = "i0e_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        let x = x.abs();
        let two = A::c(2.0);
        if x <= A::c(8.0) {
            return chbevl::<A, F>(x / two - two, &I0E_A);
        }
        chbevl::<A, F>(A::c(32.0) / x - two, &I0E_B) / x.sqrt()
    }
}

/// `-out` for a negative argument, as upstream's `(_x < 0) ? -out : out`.
#[inline(always)]
fn odd<A: Real>(x: A, out: A) -> A {
    if x < A::ZERO {
        -out
    } else {
        out
    }
}

struct I1;
impl Special for I1 {
    const NAME: &'static str = "i1_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x0: A) -> A {
        let (x, two, (ta, tb)) = (x0.abs(), A::c(2.0), i1e_tables::<A>());
        let out = if x <= A::c(8.0) {
            x.exp() * x * chbevl::<A, F>(x / two - two, ta)
        } else {
            x.exp() * chbevl::<A, F>(A::c(32.0) / x - two, tb) / x.sqrt()
        };
        odd(x0, out)
    }
}

struct I1e;
impl Special for I1e {
    const NAME: &'static str = "i1e_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x0: A) -> A {
        let (x, two, (ta, tb)) = (x0.abs(), A::c(2.0), i1e_tables::<A>());
        let out = if x <= A::c(8.0) {
            chbevl::<A, F>(x / two - two, ta) * x
        } else {
            chbevl::<A, F>(A::c(32.0) / x - two, tb) / x.sqrt()
        };
        odd(x0, out)
    }
}

// The `modified_bessel_*_forward` family reads the double tables in every type.

struct ModI0;
impl Special for ModI0 {
    const NAME: &'static str = "modified_bessel_i0_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        let (ax, two) = (x.abs(), A::c(2.0));
        if ax <= A::c(8.0) {
            return ax.exp() * chbevl::<A, F>(ax / two - two, &I0E_A);
        }
        ax.exp() * chbevl::<A, F>(A::c(32.0) / ax - two, &I0E_B) / ax.sqrt()
    }
}

struct ModI1;
impl Special for ModI1 {
    const NAME: &'static str = "modified_bessel_i1_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        let (ax, two) = (x.abs(), A::c(2.0));
        let out = if ax <= A::c(8.0) {
            chbevl::<A, F>(ax / two - two, &I1E_A) * ax * ax.exp()
        } else {
            ax.exp() * chbevl::<A, F>(A::c(32.0) / ax - two, &I1E_B) / ax.sqrt()
        };
        odd(x, out)
    }
}

/// The K0/K1 series on [0, 2], whose argument `x * x - 2` is itself contracted.
#[inline(always)]
fn k_small<A: Real, F: Fused>(x: A, c: &[f64]) -> A {
    chbevl::<A, F>(madd::<A, F>(x, x, -A::c(2.0)), c)
}

/// K0 and K1, `scaled` by exp(x) or not, as upstream's four kernels compute them: infinity at
/// 0, NaN below; `small(x)` on (0, 2]; above, the series in 8/x - 2 over sqrt(x), the unscaled
/// form as `exp(-x) * series / sqrt(x)` in that order.
#[inline(always)]
fn k_family<A: Real, F: Fused>(x: A, small: impl Fn(A) -> A, large: &[f64], scaled: bool) -> A {
    if x == A::ZERO {
        return A::INF;
    }
    if x < A::ZERO {
        return A::NAN;
    }
    if x <= A::c(2.0) {
        return if scaled { small(x) * x.exp() } else { small(x) };
    }
    let series = chbevl::<A, F>(A::c(8.0) / x - A::c(2.0), large);
    if scaled {
        series / x.sqrt()
    } else {
        (-x).exp() * series / x.sqrt()
    }
}

/// K1 on (0, 2]: `log(x/2) I1(x) + series / x`, the product fused.
#[inline(always)]
fn k1_small<A: Real, F: Fused>(x: A) -> A {
    let series = k_small::<A, F>(x, &K1_A) / x;
    madd::<A, F>((A::HALF * x).ln(), ModI1::f::<A, F>(x), series)
}

struct ModK0;
impl Special for ModK0 {
    const NAME: &'static str = "modified_bessel_k0_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        // `series - log(x/2) I0(x)`, the product fused (measured against upstream's bits); the
        // unscaled kernel's `std::log(0.5 * x)` takes a double literal, so its log and the
        // difference are double, rounded to A once
        let small = |x: A| {
            let log = (0.5 * x.to_f64()).ln();
            let series = k_small::<A, F>(x, &K0_A).to_f64();
            A::c(madd::<f64, F>(-log, ModI0::f::<A, F>(x).to_f64(), series))
        };
        k_family::<A, F>(x, small, &K0_B, false)
    }
}

struct ScaledK0;
impl Special for ScaledK0 {
    const NAME: &'static str = "scaled_modified_bessel_k0_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        let small = |x: A| {
            let series = k_small::<A, F>(x, &K0_A);
            madd::<A, F>(-(A::HALF * x).ln(), ModI0::f::<A, F>(x), series)
        };
        k_family::<A, F>(x, small, &K0_B, true)
    }
}

struct ModK1;
impl Special for ModK1 {
    const NAME: &'static str = "modified_bessel_k1_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        k_family::<A, F>(x, k1_small::<A, F>, &K1_B, false)
    }
}

struct ScaledK1;
impl Special for ScaledK1 {
    const NAME: &'static str = "scaled_modified_bessel_k1_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        k_family::<A, F>(x, k1_small::<A, F>, &K1_B, true)
    }
}

struct SphericalJ0;
impl Special for SphericalJ0 {
    const NAME: &'static str = "spherical_bessel_j0_cpu";
    #[inline(always)]
    fn f<A: Real, F: Fused>(x: A) -> A {
        if x.is_infinite() {
            return A::ZERO;
        }
        if x.abs() < A::HALF {
            // 1 + x^2 (-1/6 + x^2 (1/120 + ...)): upstream's nesting, each step `c + x2 * inner`
            // contracted; the coefficients are the quotients rounded in A, as its T(-1.0) / T(6.0)
            let x2 = x * x;
            let mut s = A::ONE / A::c(6227020800.0);
            for d in [-39916800.0, 362880.0, -5040.0, 120.0, -6.0] {
                s = madd::<A, F>(x2, s, A::ONE / A::c(d));
            }
            return madd::<A, F>(x2, s, A::ONE);
        }
        x.sin() / x
    }
}

/// The elementwise kernel of `S` into `out` (the core has cast the input to out's float dtype);
/// under an AVX2/AVX512 capability the loop is compiled with FMA, so the contractions above are
/// single instructions.
fn run<S: Special>(c: &mut Call) -> KResult {
    let (out, a) = (c.out(0)?, c.tensor(0)?);
    #[cfg(target_arch = "x86_64")]
    if capability() != Cap::Default {
        // SAFETY: the capability implies avx2 and fma on this machine
        return unsafe { run_fma::<S>(&out, &a) };
    }
    // SAFETY: map1 reads `a` and writes `out` within their views
    unsafe {
        dispatch_float!(out.dtype, S::NAME, T, A => map1(&out, &a, |x: T| {
            T::from_acc(S::f::<A, Separate>(x.to_acc()))
        }))
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_fma<S: Special>(out: &crate::kernel::Tensor, a: &crate::kernel::Tensor) -> KResult {
    dispatch_float!(out.dtype, S::NAME, T, A => map1(out, a, |x: T| {
        T::from_acc(S::f::<A, Contracted>(x.to_acc()))
    }))
}

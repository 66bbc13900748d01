//! The general (non-symmetric) eigenproblem: `linalg_eig` and `_linalg_eigvals` for batches of
//! float32/float64/complex64/complex128 matrices, complex results.
//!
//! Upstream calls LAPACK's `geev`: balance (`gebal`, job 'B': permute to isolate eigenvalues, then
//! scale by powers of two), reduce to Hessenberg form, run the shifted QR algorithm to a (real or
//! complex) Schur form, back-substitute for the eigenvectors of the triangular factor (`trevc`),
//! undo the balancing (`gebak`) and normalise. faer supplies the Hessenberg reduction, the QR
//! algorithm (a port of LAPACK's small-matrix `lahqr` and of the multishift QR with aggressive early
//! deflation for larger ones) and the back-substitution, which starts from `trevc`'s vector (a 1 at
//! the eigenvalue's position; for a real 2x2 block the same choice of component). faer does not
//! balance, so `gebal`/`gebak` are written here: balancing decides the order in which the QR
//! algorithm delivers the eigenvalues (a triangular matrix is only permuted, its eigenvalues come
//! out in the permuted diagonal's order), and the eigenvalues' order is part of upstream's result.
//!
//! `geev`'s normalisation: every eigenvector has unit 2-norm; a complex input's has its component
//! of largest magnitude real and positive; a real input's real eigenvector keeps the sign of the
//! back-substitution, and the pair of a complex-conjugate eigenvalue pair is rotated so that its
//! component of largest magnitude is real (with the sign of that component's real part, as
//! `dlartg` gives it). The signs therefore follow the Schur vectors, which faer's Householder
//! convention makes LAPACK's; they are not otherwise canonical.
//!
//! Every matrix is computed in float64 (complex128) and rounded once to the output's dtype.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self, ComputeEigenvectors};
use faer::{c64, Mat, Par};
use torchnative_backend::abi::TnDtype;

use crate::decomp::batch_offset;
use crate::kernel::{Call, KResult, Tensor};
use crate::{bail, kernels};

kernels! {
    k_linalg_eig = "aten::linalg_eig" => |c| eig(c, true);
    k_linalg_eigvals = "aten::_linalg_eigvals" => |c| eig(c, false);
}

/// Matrix `b` of a `[..., n, n]` tensor of any strides and supported dtype, widened to complex128.
fn read_matrix(t: &Tensor, b: usize, n: usize) -> Mat<c64> {
    let nd = t.ndim();
    let base = batch_offset(t, nd - 2, b);
    let (rs, cs) = (t.stride(nd - 2), t.stride(nd - 1));
    Mat::from_fn(n, n, |i, j| {
        let off = base + i as isize * rs + j as isize * cs;
        // SAFETY: the offset lies within the view, whose dtype is matched here.
        unsafe {
            match t.dtype {
                TnDtype::Float32 => c64::new(t.read::<f32>(off) as f64, 0.0),
                TnDtype::Float64 => c64::new(t.read::<f64>(off), 0.0),
                TnDtype::ComplexFloat => {
                    let [re, im] = t.read::<[f32; 2]>(off);
                    c64::new(re as f64, im as f64)
                }
                _ => {
                    let [re, im] = t.read::<[f64; 2]>(off);
                    c64::new(re, im)
                }
            }
        }
    })
}

/// Writes `v` at element offset `off` of a complex64 or complex128 output.
fn write_complex(t: &Tensor, off: isize, v: c64) {
    // SAFETY: `off` lies within an output the core allocated for this call.
    unsafe {
        match t.dtype {
            TnDtype::ComplexFloat => t.write::<[f32; 2]>(off, [v.re as f32, v.im as f32]),
            _ => t.write::<[f64; 2]>(off, [v.re, v.im]),
        }
    }
}

/// `linalg_eig(A) -> (eigenvalues, eigenvectors)` (`vectors`) or `_linalg_eigvals(A)`; the core
/// has checked the shapes, dtypes and finiteness and allocated complex outputs.
fn eig(c: &mut Call, vectors: bool) -> KResult {
    let a = c.tensor(0)?;
    let w = c.out(0)?;
    let v = if vectors { Some(c.out(1)?) } else { None };
    let nd = a.ndim();
    if nd < 2 || a.size(nd - 1) != a.size(nd - 2) {
        bail!(runtime, "linalg.eig: expected batches of square matrices");
    }
    let real = match a.dtype {
        TnDtype::Float32 | TnDtype::Float64 => true,
        TnDtype::ComplexFloat | TnDtype::ComplexDouble => false,
        other => bail!(
            not_implemented,
            "linalg.eig: the cpu backend takes float32, float64, complex64 and complex128, got {other:?}"
        ),
    };
    for o in std::iter::once(&w).chain(v.as_ref()) {
        if !matches!(o.dtype, TnDtype::ComplexFloat | TnDtype::ComplexDouble) {
            bail!(runtime, "linalg.eig: the outputs must be complex");
        }
    }
    let n = a.size(nd - 1);
    let batch: usize = (0..nd - 2).map(|d| a.size(d)).product();
    for b in 0..batch {
        let m = read_matrix(&a, b, n);
        let (values, vecs) = if real {
            let m = Mat::from_fn(n, n, |i, j| m[(i, j)].re);
            eig_real(m, vectors)?
        } else {
            eig_complex(m, vectors)?
        };
        let wb = batch_offset(&w, nd - 2, b);
        for (i, &x) in values.iter().enumerate() {
            write_complex(&w, wb + i as isize * w.stride(nd - 2), x);
        }
        if let (Some(v), Some(vecs)) = (&v, vecs) {
            let vb = batch_offset(v, nd - 2, b);
            for j in 0..n {
                for i in 0..n {
                    let off = vb + i as isize * v.stride(nd - 2) + j as isize * v.stride(nd - 1);
                    write_complex(v, off, vecs[(i, j)]);
                }
            }
        }
    }
    Ok(())
}

fn no_convergence() -> crate::kernel::KernelError {
    crate::kernel::runtime(
        "linalg.eig: The algorithm failed to converge because the input matrix is ill-conditioned or \
         has too many repeated eigenvalues"
            .to_string(),
    )
}

// --- balancing (LAPACK's gebal and gebak, job 'B') -----------------------------------------------

/// The scalar types balancing runs on: float64 and complex128.
trait Entry: Copy {
    fn is_zero(self) -> bool;
    fn abs(self) -> f64;
    fn scale(self, s: f64) -> Self;
}

impl Entry for f64 {
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    fn scale(self, s: f64) -> Self {
        self * s
    }
}

impl Entry for c64 {
    fn is_zero(self) -> bool {
        self.re == 0.0 && self.im == 0.0
    }
    fn abs(self) -> f64 {
        self.norm()
    }
    fn scale(self, s: f64) -> Self {
        self * s
    }
}

/// What `gebal` leaves besides the balanced matrix: the active block `lo..hi` (0-based,
/// exclusive end) and, per row, the permutation's row index (outside the block) or the scale
/// factor (inside it).
struct Balance {
    lo: usize,
    hi: usize,
    scale: Vec<f64>,
}

fn swap_rows_cols<T: Entry>(a: &mut Mat<T>, i: usize, j: usize, rows_to: usize, cols_from: usize) {
    // columns i and j over rows 0..rows_to, rows i and j over columns cols_from..n
    for r in 0..rows_to {
        let t = a[(r, i)];
        a[(r, i)] = a[(r, j)];
        a[(r, j)] = t;
    }
    for c in cols_from..a.ncols() {
        let t = a[(i, c)];
        a[(i, c)] = a[(j, c)];
        a[(j, c)] = t;
    }
}

/// LAPACK's `gebal` with job 'B' (the 3.11+ formulation): rows whose off-diagonal entries in the
/// active columns are zero are pushed to the bottom, then columns whose off-diagonal entries in the
/// active rows are zero to the left; the remaining block's rows and columns are scaled by powers of
/// two until their 2-norms are within a factor 0.95 of one another.
fn balance<T: Entry>(a: &mut Mat<T>) -> Balance {
    let n = a.nrows();
    let mut scale = vec![1.0; n];
    let (mut k, mut l) = (0usize, n); // active block k..l
    if n == 0 {
        return Balance {
            lo: 0,
            hi: 0,
            scale,
        };
    }
    // rows isolating an eigenvalue, pushed down (the scan goes on below a swap, as in 3.11+)
    let mut noconv = true;
    while noconv {
        noconv = false;
        for i in (0..l).rev() {
            if (0..l).all(|j| j == i || a[(i, j)].is_zero()) {
                scale[l - 1] = i as f64;
                if i != l - 1 {
                    swap_rows_cols(a, i, l - 1, l, k);
                }
                noconv = true;
                if l == 1 {
                    return Balance {
                        lo: 0,
                        hi: 1,
                        scale,
                    };
                }
                l -= 1;
            }
        }
    }
    // columns isolating an eigenvalue, pushed left
    let mut noconv = true;
    while noconv {
        noconv = false;
        let mut j = k;
        while j < l {
            let isolated = (k..l).all(|i| i == j || a[(i, j)].is_zero());
            if isolated {
                scale[k] = j as f64;
                if j != k {
                    swap_rows_cols(a, j, k, l, k);
                }
                noconv = true;
                k += 1;
            }
            j += 1;
        }
    }
    for s in scale.iter_mut().take(l).skip(k) {
        *s = 1.0;
    }
    // scaling of the block k..l
    const SCLFAC: f64 = 2.0;
    const FACTOR: f64 = 0.95;
    // dlamch('S') / dlamch('P')
    let sfmin1 = f64::MIN_POSITIVE / f64::EPSILON;
    let sfmax1 = 1.0 / sfmin1;
    let sfmin2 = sfmin1 * SCLFAC;
    let sfmax2 = 1.0 / sfmin2;
    noconv = true;
    while noconv {
        noconv = false;
        for i in k..l {
            let mut c = (k..l).map(|r| a[(r, i)].abs().powi(2)).sum::<f64>().sqrt();
            let mut r = (k..l).map(|q| a[(i, q)].abs().powi(2)).sum::<f64>().sqrt();
            let mut ca = (0..l).map(|q| a[(q, i)].abs()).fold(0.0, f64::max);
            let mut ra = (k..n).map(|q| a[(i, q)].abs()).fold(0.0, f64::max);
            if c == 0.0 || r == 0.0 {
                continue;
            }
            if (c + ca + r + ra).is_nan() {
                return Balance {
                    lo: k,
                    hi: l,
                    scale,
                };
            }
            let mut g = r / SCLFAC;
            let mut f: f64 = 1.0;
            let s = c + r;
            while c < g && f.max(c).max(ca) < sfmax2 && r.min(g).min(ra) > sfmin2 {
                f *= SCLFAC;
                c *= SCLFAC;
                ca *= SCLFAC;
                r /= SCLFAC;
                g /= SCLFAC;
                ra /= SCLFAC;
            }
            g = c / SCLFAC;
            while g >= r && r.max(ra) < sfmax2 && f.min(c).min(g).min(ca) > sfmin2 {
                f /= SCLFAC;
                c /= SCLFAC;
                g /= SCLFAC;
                ca /= SCLFAC;
                r *= SCLFAC;
                ra *= SCLFAC;
            }
            if c + r >= FACTOR * s {
                continue;
            }
            if f < 1.0 && scale[i] < 1.0 && f * scale[i] <= sfmin1 {
                continue;
            }
            if f > 1.0 && scale[i] > 1.0 && scale[i] >= sfmax1 / f {
                continue;
            }
            scale[i] *= f;
            noconv = true;
            for q in k..n {
                a[(i, q)] = a[(i, q)].scale(1.0 / f);
            }
            for q in 0..l {
                a[(q, i)] = a[(q, i)].scale(f);
            }
        }
    }
    Balance {
        lo: k,
        hi: l,
        scale,
    }
}

/// LAPACK's `gebak` for right eigenvectors: rows of the block scaled back, then the permutation
/// undone (the rows above the block from the bottom up, those below it from the top down).
fn unbalance<T: Entry>(v: &mut Mat<T>, bal: &Balance) {
    let n = v.nrows();
    // a block of one row holds that row's permutation index, not a scale (gebak skips it)
    let scaled = if bal.hi > bal.lo + 1 {
        bal.lo..bal.hi
    } else {
        0..0
    };
    for i in scaled {
        for j in 0..v.ncols() {
            v[(i, j)] = v[(i, j)].scale(bal.scale[i]);
        }
    }
    let order = (0..bal.lo).rev().chain(bal.hi..n);
    for i in order {
        let k = bal.scale[i] as usize;
        if k != i {
            for j in 0..v.ncols() {
                let t = v[(i, j)];
                v[(i, j)] = v[(k, j)];
                v[(k, j)] = t;
            }
        }
    }
}

fn nrm2(x: impl Iterator<Item = f64>) -> f64 {
    // scaled as dnrm2 so that entries near the overflow threshold do not overflow
    let xs: Vec<f64> = x.collect();
    let big = xs.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if big == 0.0 || !big.is_finite() {
        return big;
    }
    big * xs.iter().map(|v| (v / big) * (v / big)).sum::<f64>().sqrt()
}

/// The first index of the largest value (LAPACK's `i?amax` ties).
fn argmax(xs: impl Iterator<Item = f64>) -> usize {
    let (mut best, mut at) = (-1.0, 0);
    for (i, x) in xs.enumerate() {
        if x > best {
            best = x;
            at = i;
        }
    }
    at
}

fn scratch(n: usize, vectors: bool, complex: bool) -> MemBuffer {
    let want = if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    };
    let par = Par::Seq;
    MemBuffer::new(if complex {
        evd::evd_scratch::<c64>(n, ComputeEigenvectors::No, want, par, Default::default())
    } else {
        evd::evd_scratch::<f64>(n, ComputeEigenvectors::No, want, par, Default::default())
    })
}

/// `dgeev`: the eigenvalues in the Schur form's diagonal order (a conjugate pair with the positive
/// imaginary part first) and, when asked, the normalised eigenvectors as complex columns.
fn eig_real(mut a: Mat<f64>, vectors: bool) -> KResult<(Vec<c64>, Option<Mat<c64>>)> {
    let n = a.nrows();
    let bal = balance(&mut a);
    let mut wr = faer::diag::Diag::<f64>::zeros(n);
    let mut wi = faer::diag::Diag::<f64>::zeros(n);
    let mut vr = if vectors {
        Some(Mat::<f64>::zeros(n, n))
    } else {
        None
    };
    let mut mem = scratch(n, vectors, false);
    evd::evd_real(
        a.as_ref(),
        wr.as_mut(),
        wi.as_mut(),
        None,
        vr.as_mut().map(|m| m.as_mut()),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|_| no_convergence())?;
    let values: Vec<c64> = (0..n).map(|i| c64::new(wr[i], wi[i])).collect();
    let Some(mut vr) = vr else {
        return Ok((values, None));
    };
    unbalance(&mut vr, &bal);
    let mut out = Mat::<c64>::zeros(n, n);
    let mut j = 0;
    while j < n {
        if wi[j] == 0.0 {
            let s = 1.0 / nrm2((0..n).map(|i| vr[(i, j)]));
            for i in 0..n {
                out[(i, j)] = c64::new(vr[(i, j)] * s, 0.0);
            }
            j += 1;
            continue;
        }
        // the pair's columns hold the real and imaginary parts of the eigenvector of wr + i wi
        let s = 1.0 / nrm2((0..n).map(|i| vr[(i, j)])).hypot(nrm2((0..n).map(|i| vr[(i, j + 1)])));
        let (re, im): (Vec<f64>, Vec<f64>) =
            (0..n).map(|i| (vr[(i, j)] * s, vr[(i, j + 1)] * s)).unzip();
        let k = argmax((0..n).map(|i| re[i] * re[i] + im[i] * im[i]));
        // dlartg(f, g) as the reference's LAPACK has it (the pre-3.10 form): r = hypot(f, g),
        // negated (with cs and sn) only when |f| > |g| and f < 0
        let (f, g) = (re[k], im[k]);
        let (cs, sn) = if g == 0.0 {
            (1.0, 0.0)
        } else if f == 0.0 {
            (0.0, 1.0)
        } else {
            let d = f.hypot(g);
            let (cs, sn) = (f / d, g / d);
            if f.abs() > g.abs() && cs < 0.0 {
                (-cs, -sn)
            } else {
                (cs, sn)
            }
        };
        for i in 0..n {
            // drot: (x, y) <- (cs x + sn y, cs y - sn x)
            let (x, y) = (re[i], im[i]);
            let (x, y) = if i == k {
                (cs * x + sn * y, 0.0)
            } else {
                (cs * x + sn * y, cs * y - sn * x)
            };
            out[(i, j)] = c64::new(x, y);
            out[(i, j + 1)] = c64::new(x, -y);
        }
        j += 2;
    }
    Ok((values, Some(out)))
}

/// `zgeev`: the eigenvalues in the Schur form's diagonal order and, when asked, the eigenvectors
/// with unit 2-norm and their component of largest magnitude real and positive.
fn eig_complex(mut a: Mat<c64>, vectors: bool) -> KResult<(Vec<c64>, Option<Mat<c64>>)> {
    let n = a.nrows();
    let bal = balance(&mut a);
    let mut w = faer::diag::Diag::<c64>::zeros(n);
    let mut vr = if vectors {
        Some(Mat::<c64>::zeros(n, n))
    } else {
        None
    };
    let mut mem = scratch(n, vectors, true);
    evd::evd_cplx(
        a.as_ref(),
        w.as_mut(),
        None,
        vr.as_mut().map(|m| m.as_mut()),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|_| no_convergence())?;
    let values: Vec<c64> = (0..n).map(|i| w[i]).collect();
    let Some(mut vr) = vr else {
        return Ok((values, None));
    };
    unbalance(&mut vr, &bal);
    for j in 0..n {
        let s = 1.0 / nrm2((0..n).map(|i| vr[(i, j)].norm()));
        let k = argmax((0..n).map(|i| {
            let x = vr[(i, j)] * s;
            x.re * x.re + x.im * x.im
        }));
        let top = vr[(k, j)] * s;
        let phase = top.conj() / top.norm();
        for i in 0..n {
            vr[(i, j)] = vr[(i, j)] * s * phase;
        }
        vr[(k, j)] = c64::new(vr[(k, j)].re, 0.0);
    }
    Ok((values, Some(vr)))
}

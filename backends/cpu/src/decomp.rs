//! Matrix decompositions and solves on faer: Cholesky, LU with partial pivoting, triangular and
//! LU solves, the symmetric eigenproblem, SVD and QR, for batches of float32/float64 matrices.
//!
//! Upstream calls LAPACK (MKL or OpenBLAS); faer is a pure-Rust library of LAPACK's class, so we
//! use it rather than hand-written loops. Every matrix is computed in float64 and rounded once to
//! the output's dtype (float32 results are then closer to the exact answer than LAPACK's float32
//! routines; the agreement tests hold them to upstream's float32 spread). Conventions follow
//! LAPACK where upstream's results depend on them:
//!
//! * LU pivots are LAPACK's `ipiv` (1-based row interchanges, applied in order), `info` the first
//!   zero pivot (1-based), the factorisation carried past it as `getrf` does;
//! * Cholesky's `info` is the order of the first leading minor that is not positive definite,
//!   the factor computed up to it (as `potrf`);
//! * QR's Householder reflectors are LAPACK's (`R`'s diagonal is `-sign(alpha) * norm`);
//! * eigen and singular vectors, which LAPACK leaves free up to sign, are normalised so the entry
//!   of largest magnitude in each column of the eigenvectors (of `U` for SVD, `V` following) is
//!   positive — the convention the core's tests compare by.

use faer::reborrow::{IntoConst, ReborrowMut};
use faer::{Mat, MatMut, MatRef, Side};
use torchnative_backend::abi::TnDtype;

use crate::kernel::{Call, KResult, Tensor};
use crate::{bail, kernels};

kernels! {
    k_cholesky_ex = "aten::linalg_cholesky_ex" => |c| cholesky_ex(c);
    k_lu_factor_ex = "aten::linalg_lu_factor_ex" => |c| lu_factor_ex(c);
    k_lu_solve = "aten::linalg_lu_solve" => |c| lu_solve(c);
    k_solve_triangular = "aten::linalg_solve_triangular" => |c| solve_triangular(c);
    k_eigh = "aten::_linalg_eigh" => |c| eigh(c);
    k_svd = "aten::_linalg_svd" => |c| svd(c);
    k_qr = "aten::linalg_qr" => |c| qr(c);
    k_geqrf = "aten::geqrf" => |c| geqrf(c);
    k_householder_product = "aten::linalg_householder_product" => |c| householder_product(c);
}

/// The matrices of a `[..., rows, cols]` tensor of any strides: element offsets of each batch
/// element (batch dimensions in row-major order).
struct Batch<'t> {
    t: &'t Tensor<'t>,
    offsets: Vec<isize>,
    rows: usize,
    cols: usize,
}

impl<'t> Batch<'t> {
    fn of(t: &'t Tensor<'t>, what: &str) -> KResult<Batch<'t>> {
        let nd = t.ndim();
        if nd < 2 {
            bail!(
                runtime,
                "{what}: expected a tensor with 2 or more dimensions"
            );
        }
        if !matches!(t.dtype, TnDtype::Float32 | TnDtype::Float64) {
            bail!(
                not_implemented,
                "{what}: the cpu backend's decompositions take float32 and float64, got {:?}",
                t.dtype
            );
        }
        let mut offsets = vec![0isize];
        for d in 0..nd - 2 {
            let (n, s) = (t.size(d), t.stride(d));
            offsets = offsets
                .iter()
                .flat_map(|&o| (0..n).map(move |i| o + i as isize * s))
                .collect();
        }
        Ok(Batch {
            t,
            offsets,
            rows: t.size(nd - 2),
            cols: t.size(nd - 1),
        })
    }

    fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Matrix `b` of a float64 tensor as a view of the tensor's own memory (None for float32).
    fn view_f64(&self, b: usize) -> Option<MatRef<'_, f64>> {
        // read only: the writable view's pointer and strides, never written through
        self.view_f64_mut(b).map(IntoConst::into_const)
    }

    /// [`view_f64`](Self::view_f64), writable: for outputs, which the core allocated for this
    /// call and no other view of the call aliases.
    #[allow(clippy::mut_from_ref)]
    fn view_f64_mut(&self, b: usize) -> Option<MatMut<'_, f64>> {
        let nd = self.t.ndim();
        (self.t.dtype == TnDtype::Float64).then(|| {
            // SAFETY: as `view_f64`; the caller writes only outputs.
            unsafe {
                MatMut::from_raw_parts_mut(
                    (self.t.data as *mut f64).offset(self.offsets[b]),
                    self.rows,
                    self.cols,
                    self.t.stride(nd - 2),
                    self.t.stride(nd - 1),
                )
            }
        })
    }

    /// Calls `f(i, j, offset)` for every element of matrix `b`, in the order its memory is read
    /// fastest: where the tensor's rows are contiguous, eight rows at a time (so a column-major
    /// matrix on the other side fills a cache line per column), else column by column.
    fn for_each(&self, b: usize, mut f: impl FnMut(usize, usize, isize)) {
        let nd = self.t.ndim();
        let (rs, cs) = (self.t.stride(nd - 2), self.t.stride(nd - 1));
        let base = self.offsets[b];
        if rs != 1 && cs == 1 {
            for i0 in (0..self.rows).step_by(8) {
                let i1 = (i0 + 8).min(self.rows);
                for j in 0..self.cols {
                    for i in i0..i1 {
                        f(i, j, base + i as isize * rs + j as isize);
                    }
                }
            }
        } else {
            for j in 0..self.cols {
                for i in 0..self.rows {
                    f(i, j, base + i as isize * rs + j as isize * cs);
                }
            }
        }
    }

    /// Matrix `b` widened to float64.
    fn read(&self, b: usize) -> Mat<f64> {
        let mut m = Mat::<f64>::zeros(self.rows, self.cols);
        let f32s = self.t.dtype == TnDtype::Float32;
        let mut out = m.as_mut();
        // SAFETY: the offsets are the view's own elements.
        self.for_each(b, |i, j, off| unsafe {
            *out.rb_mut().get_mut_unchecked(i, j) = if f32s {
                self.t.read::<f32>(off) as f64
            } else {
                self.t.read::<f64>(off)
            };
        });
        m
    }

    /// Writes `m` (rounded to the tensor's dtype) into matrix `b`.
    fn write(&self, b: usize, m: MatRef<'_, f64>) {
        // SAFETY: `m` has the batch's rows and columns.
        self.write_fn(b, |i, j| unsafe { *m.get_unchecked(i, j) });
    }

    /// Writes element `(i, j)` of matrix `b` as `f(i, j)` (rounded to the tensor's dtype).
    fn write_fn(&self, b: usize, f: impl Fn(usize, usize) -> f64) {
        let f32s = self.t.dtype == TnDtype::Float32;
        // SAFETY: as `read`; outputs are tensors the core allocated for this call.
        self.for_each(b, |i, j, off| unsafe {
            let v = f(i, j);
            if f32s {
                self.t.write::<f32>(off, v as f32)
            } else {
                self.t.write::<f64>(off, v)
            }
        });
    }
}

/// A float output vector per batch element (`[..., n]`), or an int32 one.
fn write_vec(t: &Tensor, b: usize, values: impl Iterator<Item = f64>) {
    let nd = t.ndim();
    let len = t.size(nd - 1);
    let batch_off = batch_offset(t, nd - 1, b);
    for (i, v) in values.take(len).enumerate() {
        let off = batch_off + i as isize * t.stride(nd - 1);
        // SAFETY: within the output the core allocated.
        unsafe {
            match t.dtype {
                TnDtype::Float32 => t.write::<f32>(off, v as f32),
                TnDtype::Int32 => t.write::<i32>(off, v as i32),
                _ => t.write::<f64>(off, v),
            }
        }
    }
}

/// Element offset of batch element `b` over the first `nbatch` dimensions (row-major).
pub(crate) fn batch_offset(t: &Tensor, nbatch: usize, mut b: usize) -> isize {
    let mut off = 0isize;
    for d in (0..nbatch).rev() {
        let n = t.size(d).max(1);
        off += (b % n) as isize * t.stride(d);
        b /= n;
    }
    off
}

fn write_int(t: &Tensor, b: usize, v: i32) {
    let off = batch_offset(t, t.ndim(), b);
    // SAFETY: an int32 output with one element per batch element.
    unsafe { t.write::<i32>(off, v) }
}

// --- Cholesky -----------------------------------------------------------------------------------

/// `linalg_cholesky_ex(A, upper, check_errors) -> (L, info)`; the core raises for `check_errors`.
fn cholesky_ex(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let upper = c.bool(1)?;
    let (l_out, info) = (c.out(0)?, c.out(1)?);
    let src = Batch::of(&a, "linalg.cholesky")?;
    let dst = Batch::of(&l_out, "linalg.cholesky")?;
    let n = src.rows;
    for b in 0..src.len() {
        let m = src.read(b);
        // the triangle LAPACK reads, mirrored into a full lower one
        let sym = Mat::from_fn(n, n, |i, j| {
            let (i, j) = if i >= j { (i, j) } else { (j, i) };
            if upper {
                m[(j, i)]
            } else {
                m[(i, j)]
            }
        });
        let (l, code) = match sym.llt(Side::Lower) {
            Ok(f) => (f.L().to_owned(), 0),
            Err(_) => unblocked_cholesky(&sym),
        };
        let l = Mat::from_fn(n, n, |i, j| if i >= j { l[(i, j)] } else { 0.0 });
        if upper {
            dst.write(b, l.transpose());
        } else {
            dst.write(b, l.as_ref());
        }
        write_int(&info, b, code);
    }
    Ok(())
}

/// The factor up to the first leading minor that is not positive definite, and its order (as
/// `potrf` leaves them); only reached when faer reports a failure.
fn unblocked_cholesky(a: &Mat<f64>) -> (Mat<f64>, i32) {
    let n = a.nrows();
    let mut l = Mat::<f64>::zeros(n, n);
    for j in 0..n {
        let d = a[(j, j)] - (0..j).map(|k| l[(j, k)] * l[(j, k)]).sum::<f64>();
        if d.is_nan() || d <= 0.0 {
            return (l, j as i32 + 1);
        }
        l[(j, j)] = d.sqrt();
        for i in j + 1..n {
            let s = a[(i, j)] - (0..j).map(|k| l[(i, k)] * l[(j, k)]).sum::<f64>();
            l[(i, j)] = s / l[(j, j)];
        }
    }
    (l, 0)
}

// --- LU -----------------------------------------------------------------------------------------

/// Factors `packed` in place into LAPACK's packed form (`P A = L U`, L's unit diagonal implied
/// below U) and returns LAPACK's `ipiv` (1-based interchanges); None where a pivot is zero (or
/// NaN): faer divides by it where getrf skips the column's scaling, so the caller factors the
/// matrix again with [`unblocked_lu`].
fn lu_in_place(mut packed: MatMut<'_, f64>) -> Option<Vec<i32>> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::lu::partial_pivoting::factor as lu;
    let (m, n) = (packed.nrows(), packed.ncols());
    let k = m.min(n);
    if k == 0 {
        return Some(vec![]);
    }
    let par = faer::get_global_parallelism();
    let (mut forward, mut inverse) = (vec![0usize; m], vec![0usize; m]);
    let mut mem = MemBuffer::new(lu::lu_in_place_scratch::<usize, f64>(
        m,
        n,
        par,
        Default::default(),
    ));
    lu::lu_in_place(
        packed.rb_mut(),
        &mut forward,
        &mut inverse,
        par,
        MemStack::new(&mut mem),
        Default::default(),
    );
    if (0..k).any(|i| !(packed[(i, i)] != 0.0)) {
        return None;
    }
    // forward[i] = the original row now at position i; replay it as successive swaps
    let mut at: Vec<usize> = (0..m).collect(); // at[pos] = original row at pos
    let mut pos_of: Vec<usize> = (0..m).collect(); // pos_of[row] = its position
    let mut ipiv = Vec::with_capacity(k);
    for i in 0..k {
        let row = forward[i];
        let p = pos_of[row];
        ipiv.push(p as i32 + 1);
        let other = at[i];
        at.swap(i, p);
        pos_of[row] = i;
        pos_of[other] = p;
    }
    Some(ipiv)
}

/// LAPACK's unblocked `getf2`: partial pivoting on the first row of largest magnitude, a zero
/// pivot's column left unscaled and the factorisation carried on; only for singular matrices.
fn unblocked_lu(a: &Mat<f64>) -> (Mat<f64>, Vec<i32>, i32) {
    let (m, n) = (a.nrows(), a.ncols());
    let mut lu = a.clone();
    let (mut ipiv, mut info) = (Vec::with_capacity(m.min(n)), 0);
    for j in 0..m.min(n) {
        let mut p = j;
        for i in j + 1..m {
            if lu[(i, j)].abs() > lu[(p, j)].abs() {
                p = i;
            }
        }
        ipiv.push(p as i32 + 1);
        if lu[(p, j)] != 0.0 {
            if p != j {
                for c in 0..n {
                    let t = lu[(p, c)];
                    lu[(p, c)] = lu[(j, c)];
                    lu[(j, c)] = t;
                }
            }
            let inv = 1.0 / lu[(j, j)];
            for i in j + 1..m {
                lu[(i, j)] *= inv;
            }
        } else if info == 0 {
            info = j as i32 + 1;
        }
        for i in j + 1..m {
            let f = lu[(i, j)];
            if f != 0.0 {
                for c in j + 1..n {
                    lu[(i, c)] -= f * lu[(j, c)];
                }
            }
        }
    }
    (lu, ipiv, info)
}

/// `linalg_lu_factor_ex(A, pivot, check_errors) -> (LU, pivots, info)`.
fn lu_factor_ex(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    if !c.bool(1)? {
        bail!(
            runtime,
            "linalg.lu_factor: LU without pivoting is not implemented on the CPU"
        );
    }
    let (lu, piv, info) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let src = Batch::of(&a, "linalg.lu_factor")?;
    let dst = Batch::of(&lu, "linalg.lu_factor")?;
    let nb = piv.ndim() - 1;
    let separate = a.data != lu.data;
    for b in 0..src.len() {
        // float64: factored in the output's own memory (the core allocates it column-major,
        // as upstream's LAPACK result); float32 in a float64 copy, rounded once
        let fast = match dst.view_f64_mut(b).filter(|_| separate) {
            Some(mut out) => {
                match src.view_f64(b) {
                    Some(v) => out.copy_from(v),
                    None => out.copy_from(src.read(b)),
                }
                lu_in_place(out).map(|ipiv| (ipiv, 0))
            }
            None => {
                let mut m = src.read(b);
                lu_in_place(m.as_mut()).map(|ipiv| {
                    dst.write(b, m.as_ref());
                    (ipiv, 0)
                })
            }
        };
        let (ipiv, code) = fast.unwrap_or_else(|| {
            let (packed, ipiv, code) = unblocked_lu(&src.read(b));
            dst.write(b, packed.as_ref());
            (ipiv, code)
        });
        let off = batch_offset(&piv, nb, b);
        for (i, p) in ipiv.iter().enumerate() {
            // SAFETY: pivots is [..., min(m, n)] int32.
            unsafe { piv.write::<i32>(off + i as isize * piv.stride(nb), *p) };
        }
        write_int(&info, b, code);
    }
    Ok(())
}

/// Solves `L U X = P^T B` in place for one matrix (LAPACK's `getrs`, no transpose).
fn lu_solve_one(lu: MatRef<'_, f64>, ipiv: &[i32], mut x: MatMut<'_, f64>) {
    for (i, &p) in ipiv.iter().enumerate() {
        let p = p as usize - 1;
        if p != i {
            for c in 0..x.ncols() {
                let t = x[(i, c)];
                x[(i, c)] = x[(p, c)];
                x[(p, c)] = t;
            }
        }
    }
    triangular_in_place(lu, x.rb_mut(), false, true);
    triangular_in_place(lu, x, true, false);
}

/// Forward (lower) or back (upper) substitution on faer's blocked kernels, which read only that
/// triangle of `a` (and not its diagonal when `unit`).
fn triangular_in_place(a: MatRef<'_, f64>, x: MatMut<'_, f64>, upper: bool, unit: bool) {
    use faer::linalg::triangular_solve as ts;
    let par = faer::get_global_parallelism();
    match (upper, unit) {
        (false, false) => ts::solve_lower_triangular_in_place(a, x, par),
        (false, true) => ts::solve_unit_lower_triangular_in_place(a, x, par),
        (true, false) => ts::solve_upper_triangular_in_place(a, x, par),
        (true, true) => ts::solve_unit_upper_triangular_in_place(a, x, par),
    }
}

/// `linalg_lu_solve(LU, pivots, B, left, adjoint)`: the kernel for `left` without `adjoint`
/// (the core composes the others); `LU`, `pivots` and `B` arrive broadcast to one batch shape.
fn lu_solve(c: &mut Call) -> KResult {
    let (lu_t, piv, b_t) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    if !c.bool(3)? || c.bool(4)? {
        bail!(
            not_implemented,
            "linalg_lu_solve: the cpu kernel solves A X = B (left, no adjoint)"
        );
    }
    let out = c.out(0)?;
    let (lus, bs, xs) = (
        Batch::of(&lu_t, "linalg.lu_solve")?,
        Batch::of(&b_t, "linalg.lu_solve")?,
        Batch::of(&out, "linalg.lu_solve")?,
    );
    let nb = piv.ndim() - 1;
    // the output overwritten before LU and B are read through would corrupt them
    let separate = out.data != lu_t.data && out.data != b_t.data;
    for b in 0..xs.len() {
        let off = batch_offset(&piv, nb, b);
        // SAFETY: pivots is [..., n] int32 with the same batch shape.
        let ipiv: Vec<i32> = (0..piv.size(nb))
            .map(|i| unsafe { piv.read::<i32>(off + i as isize * piv.stride(nb)) })
            .collect();
        // float64: read in place, solved in the output's own memory
        let lu_copy;
        let lu = match lus.view_f64(b) {
            Some(v) => v,
            None => {
                lu_copy = lus.read(b);
                lu_copy.as_ref()
            }
        };
        match xs.view_f64_mut(b).filter(|_| separate) {
            Some(mut x) => {
                match bs.view_f64(b) {
                    Some(v) => x.copy_from(v),
                    None => x.copy_from(bs.read(b)),
                }
                lu_solve_one(lu, &ipiv, x);
            }
            None => {
                let mut x = bs.read(b);
                lu_solve_one(lu, &ipiv, x.as_mut());
                xs.write(b, x.as_ref());
            }
        }
    }
    Ok(())
}

/// `linalg_solve_triangular(A, B, upper, left, unitriangular)` for `left` (the core transposes
/// the others); `A` and `B` arrive broadcast to one batch shape.
fn solve_triangular(c: &mut Call) -> KResult {
    let (a, bm) = (c.tensor(0)?, c.tensor(1)?);
    let (upper, left, unit) = (c.bool(2)?, c.bool(3)?, c.bool(4)?);
    if !left {
        bail!(
            not_implemented,
            "linalg_solve_triangular: the cpu kernel solves A X = B (left)"
        );
    }
    let out = c.out(0)?;
    let (as_, bs, xs) = (
        Batch::of(&a, "linalg.solve_triangular")?,
        Batch::of(&bm, "linalg.solve_triangular")?,
        Batch::of(&out, "linalg.solve_triangular")?,
    );
    for b in 0..xs.len() {
        let mut x = bs.read(b);
        triangular_in_place(as_.read(b).as_ref(), x.as_mut(), upper, unit);
        xs.write(b, x.as_ref());
    }
    Ok(())
}

// --- eigh, SVD, QR --------------------------------------------------------------------------------

/// Negates every column whose entry of largest magnitude (the first such) is negative; applies
/// the same negation to the matching column of `follow`.
fn normalise_signs(m: &mut Mat<f64>, cols: usize, mut follow: Option<&mut Mat<f64>>) {
    for j in 0..cols {
        let (mut best, mut neg) = (-1.0f64, false);
        for i in 0..m.nrows() {
            let v = m[(i, j)];
            if v.abs() > best {
                best = v.abs();
                neg = v < 0.0;
            }
        }
        if neg {
            for i in 0..m.nrows() {
                m[(i, j)] = -m[(i, j)];
            }
            if let Some(f) = follow.as_deref_mut() {
                for i in 0..f.nrows() {
                    f[(i, j)] = -f[(i, j)];
                }
            }
        }
    }
}

/// `_linalg_eigh(A, UPLO, compute_v) -> (eigenvalues, eigenvectors)`: ascending eigenvalues.
fn eigh(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let lower = c.str(1)? != "U";
    let compute_v = c.bool(2)?;
    let (w_out, v_out) = (c.out(0)?, c.out(1)?);
    let src = Batch::of(&a, "linalg.eigh")?;
    let dst = if compute_v {
        Some(Batch::of(&v_out, "linalg.eigh")?)
    } else {
        None
    };
    let n = src.rows;
    for b in 0..src.len() {
        let m = src.read(b);
        let side = if lower { Side::Lower } else { Side::Upper };
        match &dst {
            Some(dst) => {
                let e = m
                    .self_adjoint_eigen(side)
                    .map_err(|e| crate::kernel::runtime(format!("linalg.eigh: {e:?}")))?;
                write_vec(&w_out, b, (0..n).map(|i| e.S()[i]));
                let mut u = e.U().to_owned();
                normalise_signs(&mut u, n, None);
                dst.write(b, u.as_ref());
            }
            None => {
                let w = m
                    .self_adjoint_eigenvalues(side)
                    .map_err(|e| crate::kernel::runtime(format!("linalg.eigvalsh: {e:?}")))?;
                write_vec(&w_out, b, w.into_iter());
            }
        }
    }
    Ok(())
}

/// `_linalg_svd(A, full_matrices, compute_uv, driver) -> (U, S, Vh)`: descending singular values.
fn svd(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let full = c.bool(1)?;
    let compute_uv = c.bool(2)?;
    let (u_out, s_out, vh_out) = (c.out(0)?, c.out(1)?, c.out(2)?);
    let src = Batch::of(&a, "linalg.svd")?;
    let (m, n) = (src.rows, src.cols);
    let k = m.min(n);
    let dsts = if compute_uv {
        Some((
            Batch::of(&u_out, "linalg.svd")?,
            Batch::of(&vh_out, "linalg.svd")?,
        ))
    } else {
        None
    };
    for b in 0..src.len() {
        let mat = src.read(b);
        if k == 0 {
            if let Some((du, dv)) = &dsts {
                // an empty matrix: U and Vh are identities of their (possibly non-zero) sizes
                du.write(b, Mat::<f64>::identity(du.rows, du.cols).as_ref());
                dv.write(b, Mat::<f64>::identity(dv.rows, dv.cols).as_ref());
            }
            continue;
        }
        let Some((du, dv)) = &dsts else {
            let s = mat
                .singular_values()
                .map_err(|e| crate::kernel::runtime(format!("linalg.svd: {e:?}")))?;
            write_vec(&s_out, b, s.into_iter());
            continue;
        };
        let f = if full { mat.svd() } else { mat.thin_svd() }
            .map_err(|e| crate::kernel::runtime(format!("linalg.svd: {e:?}")))?;
        let s: Vec<f64> = (0..k).map(|i| f.S()[i]).collect();
        let mut u = f.U().to_owned();
        let mut v = f.V().to_owned();
        // only columns with a non-negligible singular value carry a defined direction
        let tiny = s[0] * m.max(n) as f64 * f64::EPSILON;
        let good = s.iter().take_while(|&&x| x > tiny && x > 0.0).count();
        normalise_signs(&mut u, good, Some(&mut v));
        write_vec(&s_out, b, s.into_iter());
        du.write(b, u.as_ref());
        dv.write(b, v.transpose());
    }
    Ok(())
}

/// `linalg_qr(A, mode) -> (Q, R)`; `mode` is "reduced", "complete" or "r" (Q empty).
fn qr(c: &mut Call) -> KResult {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::householder;
    use faer::linalg::qr::no_pivoting::factor as fqr;
    let a = c.tensor(0)?;
    let mode = c.str(1)?.to_string();
    let (q_out, r_out) = (c.out(0)?, c.out(1)?);
    let src = Batch::of(&a, "linalg.qr")?;
    let dr = Batch::of(&r_out, "linalg.qr")?;
    let dq = if mode == "r" {
        None
    } else {
        Some(Batch::of(&q_out, "linalg.qr")?)
    };
    let (m, n) = (src.rows, src.cols);
    for b in 0..src.len() {
        let mat = src.read(b);
        if m == 0 || n == 0 {
            dr.write(b, Mat::<f64>::zeros(dr.rows, dr.cols).as_ref());
            if let Some(dq) = &dq {
                dq.write(b, Mat::<f64>::identity(dq.rows, dq.cols).as_ref());
            }
            continue;
        }
        // faer's blocked Householder QR in place: R on and above the diagonal, the reflectors'
        // vectors below it, their block factors in `coeff` (no copies into a Qr's parts)
        let mut f = mat;
        let k = m.min(n);
        let par = faer::get_global_parallelism();
        let bs = fqr::recommended_block_size::<f64>(m, n);
        let mut coeff = Mat::<f64>::zeros(bs, k);
        fqr::qr_in_place(
            f.as_mut(),
            coeff.as_mut(),
            par,
            MemStack::new(&mut MemBuffer::new(fqr::qr_in_place_scratch::<f64>(
                m,
                n,
                bs,
                par,
                Default::default(),
            ))),
            Default::default(),
        );
        // R is min(m, n) x n; "complete" wants m x n, zero below
        dr.write_fn(b, |i, j| if i <= j && i < k { f[(i, j)] } else { 0.0 });
        if let Some(dq) = &dq {
            // Q's first `cols` columns: the reflectors applied to the identity's
            let cols = dq.cols;
            let basis = Mat::from_fn(m, k, |i, j| match i.cmp(&j) {
                std::cmp::Ordering::Greater => f[(i, j)],
                std::cmp::Ordering::Equal => 1.0,
                std::cmp::Ordering::Less => 0.0,
            });
            let mut q = Mat::<f64>::identity(m, cols);
            householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                basis.as_ref(),
                coeff.as_ref(),
                faer::Conj::No,
                q.as_mut(),
                par,
                MemStack::new(&mut MemBuffer::new(
                    householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                        m, bs, cols,
                    ),
                )),
            );
            dq.write(b, q.as_ref());
        }
    }
    Ok(())
}

// --- LAPACK's Householder QR in its packed form -----------------------------------------------------

/// LAPACK's dlarfg on column `i` of `a` below row `i`: H = I - tau [1 v][1 v]^T maps
/// [alpha x] to [beta 0] with beta = -sign(alpha) * norm; tau = 0 (H = I) when x is zero.
/// Leaves beta at (i, i) and v below it; returns tau.
fn larfg(a: &mut Mat<f64>, i: usize) -> f64 {
    let m = a.nrows();
    let alpha = a[(i, i)];
    let xnorm = (i + 1..m)
        .map(|r| a[(r, i)] * a[(r, i)])
        .sum::<f64>()
        .sqrt();
    if xnorm == 0.0 {
        return 0.0;
    }
    let beta = -alpha.hypot(xnorm).copysign(alpha);
    let tau = (beta - alpha) / beta;
    let scale = 1.0 / (alpha - beta);
    for r in i + 1..m {
        a[(r, i)] *= scale;
    }
    a[(i, i)] = beta;
    tau
}

/// Applies H = I - tau [1 v][1 v]^T from the left to rows i.. of columns `cols` of `q` (`v`
/// holds rows i+1..).
fn apply_reflector(v: &[f64], i: usize, tau: f64, q: &mut Mat<f64>, cols: std::ops::Range<usize>) {
    for j in cols {
        let s = q[(i, j)]
            + v.iter()
                .enumerate()
                .map(|(r, &x)| x * q[(i + 1 + r, j)])
                .sum::<f64>();
        if s != 0.0 {
            let s = s * tau;
            q[(i, j)] -= s;
            for (r, &x) in v.iter().enumerate() {
                q[(i + 1 + r, j)] -= s * x;
            }
        }
    }
}

/// The vector of reflector `i` stored below the diagonal of `h`.
fn reflector(h: &Mat<f64>, i: usize) -> Vec<f64> {
    (i + 1..h.nrows()).map(|r| h[(r, i)]).collect()
}

/// `geqrf(self) -> (a, tau)`: R on and above the diagonal, the reflectors' vectors below it
/// (LAPACK's geqr2, unblocked).
fn geqrf(c: &mut Call) -> KResult {
    let a = c.tensor(0)?;
    let (h_out, tau_out) = (c.out(0)?, c.out(1)?);
    let src = Batch::of(&a, "geqrf")?;
    let dst = Batch::of(&h_out, "geqrf")?;
    let (m, n) = (src.rows, src.cols);
    for b in 0..src.len() {
        let mut h = src.read(b);
        let mut taus = Vec::with_capacity(m.min(n));
        for i in 0..m.min(n) {
            let tau = larfg(&mut h, i);
            taus.push(tau);
            if tau != 0.0 {
                let v = reflector(&h, i);
                apply_reflector(&v, i, tau, &mut h, i + 1..n);
            }
        }
        dst.write(b, h.as_ref());
        write_vec(&tau_out, b, taus.into_iter());
    }
    Ok(())
}

/// `linalg_householder_product(input, tau)`: the first n columns of H_1 ... H_k (LAPACK's
/// org2r), the reflectors' vectors below the diagonal of `input` (m x n, m >= n).
fn householder_product(c: &mut Call) -> KResult {
    let (a, tau) = (c.tensor(0)?, c.tensor(1)?);
    let out = c.out(0)?;
    let src = Batch::of(&a, "linalg.householder_product")?;
    let dst = Batch::of(&out, "linalg.householder_product")?;
    let (m, n) = (src.rows, src.cols);
    let nt = tau.ndim() - 1;
    let k = tau.size(nt);
    for b in 0..src.len() {
        let v = src.read(b);
        let off = batch_offset(&tau, nt, b);
        let mut q = Mat::<f64>::identity(m, n);
        for i in (0..k).rev() {
            // SAFETY: tau is [..., k] of the input's dtype.
            let t = unsafe {
                match tau.dtype {
                    TnDtype::Float32 => tau.read::<f32>(off + i as isize * tau.stride(nt)) as f64,
                    _ => tau.read::<f64>(off + i as isize * tau.stride(nt)),
                }
            };
            if t != 0.0 {
                // columns before i are still those of the identity, which H_i leaves alone
                apply_reflector(&reflector(&v, i), i, t, &mut q, i..n);
            }
        }
        dst.write(b, q.as_ref());
    }
    Ok(())
}

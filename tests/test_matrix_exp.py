"""linalg.matrix_exp follows upstream's algorithm and rounding (ops/linalg/matrix_exp.py): degree
selection by the 1-norm, Bader-Blanes-Casas polynomials, scaling and squaring, all in the
input's dtype. Upstream's matrix products below 400 multiply-adds take its naive kernel (k order,
no FMA); from 8x8 on they go to MKL, whose order at 8x8 follows the CPU vendor
(`cpu_capability.mkl_fuses_small_products`). Ours spells out the ones our matmul does not match,
so every case is bit-identical in float32 and float64 (504 of 504 on an Intel Xeon with AMX and
on an AMD EPYC, MKL on its own choice as tests/conftest.py leaves it); cases from 9x9 on would
be allowed torch.testing's tolerance for the dtype, should a machine's MKL round them otherwise.
Computing float32 in float64 and rounding once (what ours did before) is rejected: upstream's
float32 result is as far from that."""

import math
from pathlib import Path

import pytest
from program_json import run_json
from test_training import OURS, _ref_python

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "matrix_exp_cases.py"
TOL = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}

pytestmark = pytest.mark.runtime


def _run(python, out, *extra):
    return run_json(python, PROGRAM, out, *extra)


def _compare(ref, ours):
    """(cases not bit-identical among n <= 8, cases outside the dtype's tolerance)"""
    inexact, far = [], []
    for name, rv in ref.items():
        ov = ours[name]
        if rv == ov:
            continue
        n = int(name.split("/")[1][1:])
        if n <= 8:
            inexact.append(name)
        rtol, atol = TOL[name.split("/")[0]]
        for r, o in zip(map(float.fromhex, rv), map(float.fromhex, ov)):
            if math.isnan(r) and math.isnan(o) or r == o:
                continue
            if not abs(r - o) <= atol + rtol * abs(r):
                far.append(name)
                break
    return inexact, far


@pytest.fixture(scope="module")
def ref_results(tmp_path_factory):
    return _run(_ref_python(), tmp_path_factory.mktemp("ref") / "ref.json")


def test_matrix_exp_matches_upstream(ref_results, tmp_path):
    ours = _run(OURS, tmp_path / "ours.json")
    inexact, far = _compare(ref_results, ours)
    assert not inexact, inexact[:10]
    assert not far, far[:10]


def test_float64_then_round_is_rejected(ref_results, tmp_path):
    ours = _run(OURS, tmp_path / "ours.json", "--fault", "float64")
    inexact, far = _compare(ref_results, ours)
    assert far and all(name.startswith("float32/") for name in inexact + far), far[:10]

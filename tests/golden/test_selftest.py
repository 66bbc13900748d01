"""Self-test of the golden harness: every comparator must reject every fault it is
responsible for, on synthetic results and on every real upstream result; a comparator that
no fault exercises is itself a failure.  Also: crash/hang recovery, a runtime that cannot
start, and the tolerances being the measured ones."""
import json
import subprocess
import sys

import pytest

from . import compare, faults, harness

T = "torch."


def _t(dtype, shape, data, pytype="torch.Tensor", kind="tensor"):
    return {"kind": kind, "pytype": pytype, "dtype": dtype, "shape": shape,
            "contiguous": True, "data": data}


def _s(value, pytype=None):
    return {"kind": "scalar", "pytype": pytype or f"builtins.{type(value).__name__}",
            "value": value}


NAN, INF = float("nan"), float("inf")
# (options, upstream-like result): one of every kind, dtype family and non-finite value.
SYNTHETIC = {
    "f32": ({}, _t(T + "float32", [2, 3], [0.5, -1.25, 3.0, 1e-7, 2.0, -7.5])),
    "f32_nonfinite": ({}, _t(T + "float32", [4], [NAN, INF, -INF, 1.5])),
    "f64": ({}, _t(T + "float64", [3], [1e-300, 12345.678901234567, -0.001])),
    "f64_exact": ({"exact": True}, _t(T + "float64", [3], [0.1, -0.0, 1 / 3])),
    "f16": ({}, _t(T + "float16", [2], [0.099975586, -3.5])),
    "bf16": ({}, _t(T + "bfloat16", [1, 2], [1.5, -0.0078125])),
    "f32_0dim": ({}, _t(T + "float32", [], [2.5])),
    "i64": ({}, _t(T + "int64", [2, 2], [-7, 0, 3, 2 ** 62])),
    "u8": ({}, _t(T + "uint8", [3], [0, 255, 7])),
    "bool": ({}, _t(T + "bool", [3], [True, False, True])),
    "empty": ({}, _t(T + "float32", [0, 3], [])),
    "ndarray": ({}, _t("float32", [2], [1.0, 2.0], "numpy.ndarray", "ndarray")),
    "float": ({}, _s(0.30000001192092896)),
    "float_exact": ({"exact": True}, _s(0.1)),
    "float_nan": ({}, _s(NAN)),
    "int": ({}, _s(3)),
    "bool_scalar": ({}, _s(True)),
    "str": ({}, _s("tensor([1., 2.])")),
    "none": ({}, _s(None)),
    "np_float": ({}, _s(1.5, "numpy.float32")),
    "size": ({}, {"kind": "size", "pytype": "torch.Size", "items": [2, 3]}),
    "dtype": ({}, {"kind": "dtype", "pytype": "torch.dtype", "name": T + "float32"}),
    "return_types": ({}, {"kind": "seq", "pytype": "torch.return_types.max", "items": [
        _t(T + "float32", [2], [4.0, 6.0]), _t(T + "int64", [2], [1, 0])]}),
    "dict": ({}, {"kind": "dict", "pytype": "builtins.dict", "items": [
        ["'a'", _t(T + "int8", [1], [3])], ["'b'", _s(2.0)]]}),
    "raised": ({}, {"kind": "raised", "type": "builtins.IndexError", "message": "x",
                    "traceback": ""}),
}


def _inject(results, opts_of):
    """Apply every fault to every result; return (n, exercised, applied, misses)."""
    exercised, applied, misses, n = set(), set(), [], 0
    for cid, ref in results.items():
        opts = opts_of(cid)
        same = compare.compare(ref, ref, opts)
        if same is not None:
            misses.append(f"{cid}: identical results rejected: {same}")
        for name, comparator, wrong in faults.faults(ref, opts):
            n += 1
            applied.add(name)
            try:
                got = compare.compare(ref, wrong, opts)
            except Exception as e:  # a comparator that crashes has not rejected anything
                got = f"comparator crashed: {type(e).__name__}: {e}"
            if got is None or isinstance(got, str) or got.comparator != comparator:
                misses.append(f"{cid}: fault {name} must be rejected by [{comparator}], "
                              f"got {got}")
            else:
                exercised.add(comparator)
    return n, exercised, applied, misses


def _check(results, opts_of):
    n, exercised, applied, misses = _inject(results, opts_of)
    assert not misses, f"{len(misses)} of {n} faults not rejected as expected:\n" + \
        "\n".join(misses[:30])
    assert exercised == set(compare.COMPARATORS), \
        f"comparators never exercised: {set(compare.COMPARATORS) - exercised}"
    assert applied == set(faults.FAULT_NAMES), \
        f"faults never applied: {set(faults.FAULT_NAMES) - applied}"
    return n


def test_every_comparator_rejects_its_faults_synthetic():
    _check(SYNTHETIC_RESULTS, lambda k: SYNTHETIC[k][0])


SYNTHETIC_RESULTS = {k: r for k, (_, r) in SYNTHETIC.items()}


@pytest.mark.parametrize("mutation", [f"disable:{c}" for c in compare.COMPARATORS] +
                         [f"loosen:{d}" for d in ("torch.float32", "torch.float64",
                                                  "torch.float16", "torch.bfloat16")])
def test_selftest_fails_on_a_broken_comparator(mutation, monkeypatch):
    """The self-test is itself able to fail: disable one comparator's rejections, or make a
    tolerance 1000x looser, and _check must notice."""
    what, name = mutation.split(":")
    if what == "disable":
        real = compare._reject

        def _reject(comparator, path, message):
            if comparator != name:
                real(comparator, path, message)
        monkeypatch.setattr(compare, "_reject", _reject)
    else:
        atol, rtol = compare.TOLERANCES[name]
        monkeypatch.setitem(compare.TOLERANCES, name, (1000 * atol, 1000 * rtol))
    with pytest.raises(AssertionError):
        _check(SYNTHETIC_RESULTS, lambda k: SYNTHETIC[k][0])


def test_every_comparator_rejects_its_faults_on_upstream_results(ref_batch, cases):
    errors = {k: r for k, r in ref_batch.results.items() if r["kind"] == "harness_error"}
    assert not errors, f"upstream could not run/serialise: {sorted(errors)}"
    n = _check(ref_batch.results, lambda k: cases[k].opts)
    assert n > 10 * len(cases)


def _nudge(r, opts):
    """Every finite float moved by half its tolerance: a difference the comparator must
    accept (shows the tolerance is not stricter than documented)."""
    if r["kind"] == "seq":
        return {**r, "items": [_nudge(x, opts) for x in r["items"]]}
    if r["kind"] == "dict":
        return {**r, "items": [[k, _nudge(x, opts)] for k, x in r["items"]]}
    if r["kind"] == "tensor" and r["dtype"] in compare.FLOAT_DTYPES and not opts.get("exact"):
        atol, rtol = compare.TOLERANCES[r["dtype"]]
        atol, rtol = opts.get("atol", atol), opts.get("rtol", rtol)
        return {**r, "data": [v + 0.5 * (atol + rtol * abs(v)) if abs(v) < INF else v
                              for v in r["data"]]}
    return r


def test_differences_within_tolerance_are_accepted(ref_batch, cases):
    nudged = 0
    for cid, ref in ref_batch.results.items():
        wiggled = _nudge(ref, cases[cid].opts)
        nudged += wiggled != ref
        assert compare.compare(ref, wiggled, cases[cid].opts) is None, cid
    assert nudged > 50


def test_runtime_that_cannot_start_fails_every_case(tmp_path, cases):
    fake_torch = tmp_path / "site" / "torch"
    fake_torch.mkdir(parents=True)
    (fake_torch / "__init__.py").write_text("raise ImportError('no torch._C yet')\n")
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nPYTHONPATH={tmp_path / 'site'} exec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    ids = list(cases)[:3]
    for python in (str(fake), str(tmp_path / "missing" / "python")):
        batch = harness.run_batch(python, ids)
        assert batch.header is None
        for cid in ids:
            r = batch.results[cid]
            assert r["kind"] == "harness_error" and r["stage"] == "startup", r
            assert compare.compare({"kind": "scalar", "pytype": "builtins.int", "value": 1},
                                   r).comparator == "harness"
    assert "no torch._C yet" in harness.run_batch(str(fake), ids[:1]).results[ids[0]]["traceback"]


def test_missing_or_wrong_reference_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "REPO", tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("TORCHNATIVE_REF_PYTHON", raising=False)
    with pytest.raises(harness.SetupError, match="no upstream reference interpreter"):
        harness.ref_python()
    batch = harness.Batch("python")
    batch.header = {"torch": "2.12.0"}
    with pytest.raises(harness.SetupError, match="need 2.13.0"):
        harness.check_reference(batch)


def test_crash_hang_and_unserialisable_are_isolated():
    ids = [f"selftest_cases.{n}" for n in
           ("before", "crash", "after_crash", "hang", "unserialisable", "last")]
    batch = harness.run_batch(harness.ref_python(), ids, modules=["selftest_cases"])
    r = batch.results
    assert r[ids[0]]["data"] == [1, 2]
    assert r[ids[1]]["kind"] == "harness_error" and r[ids[1]]["stage"] == "crash", r[ids[1]]
    assert "exit 7" in r[ids[1]]["error"]
    assert r[ids[2]]["data"] == [3]
    assert r[ids[3]]["kind"] == "harness_error" and r[ids[3]]["stage"] == "timeout"
    assert r[ids[4]]["kind"] == "harness_error" and r[ids[4]]["stage"] == "serialise"
    assert r[ids[5]]["value"] == "done"


def test_wrong_runtime_is_caught_end_to_end(tmp_path, cases):
    """The whole pipeline fails a plausible wrong implementation: upstream torch with
    Tensor.sum off by 1e-3 relative, injected through sitecustomize."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import torch\n_sum = torch.Tensor.sum\n"
        "torch.Tensor.sum = lambda self, *a, **k: _sum(self, *a, **k) * 1.001\n")
    wrong = tmp_path / "python"
    wrong.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {harness.ref_python()} \"$@\"\n")
    wrong.chmod(0o755)
    ids = [c for c in cases if c.startswith("reductions.")]
    ref = harness.run_batch(harness.ref_python(), ids)
    ours = harness.run_batch(str(wrong), ids)
    assert ours.header is not None
    verdicts = {c: compare.compare(ref.results[c], ours.results[c], cases[c].opts) for c in ids}
    caught = {c for c, m in verdicts.items() if m is not None}
    assert {"reductions.sum_all_dims", "reductions.sum_random_float32"} <= caught, verdicts
    assert "reductions.argmax_argmin" not in caught  # untouched ops still agree


def test_tolerances_meet_detection_requirements():
    """Each float tolerance rejects the errors faults.MUST_DETECT says it must."""
    for dtype, (rel, floor) in faults.MUST_DETECT.items():
        atol, rtol = compare.TOLERANCES[dtype]
        assert rel > rtol and rel * floor > atol + rtol * floor, (dtype, atol, rtol)


def test_tolerances_are_measured():
    """compare.TOLERANCES must cover a fresh measurement, and be at most 3x looser."""
    out = subprocess.run([harness.ref_python(), str(harness.HERE / "measure_tolerances.py")],
                         check=True, capture_output=True, text=True).stdout
    for dtype, row in json.loads(out).items():
        for used, measured in zip(compare.TOLERANCES[dtype], row["tolerance"]):
            assert measured <= used <= 3 * measured, (dtype, compare.TOLERANCES[dtype], row)

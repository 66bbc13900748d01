"""Issue 5, items 1, 2 and 5: twenty transformers architectures (tests/programs/transformers_archs.py)
built from small seeded configs, batch of two with left padding, sdpa and eager attention where
the model supports them, run once per interpreter.

Forward: our float32 logits agree with upstream's float32 logits within TOL_MULTIPLE times
upstream's own float32-versus-float64 error on the same weights and inputs (measured per case).
Measured: ours differs from upstream float32 by at most 1.53 times that error (2026-11-29); a 0.1%
error in the activation function moves upstream's own logits by 53 to 5,000 times it, and
test_tolerance_catches_a_0_1_percent_activation_error shows the tolerance rejects it for every case.

generate: 20 new tokens with the KV cache, greedy and seeded sampling (top_k, top_p,
temperature) and beam search (3 beams), give the same tokens as upstream for every decoder.

float64, bfloat16 and float16 (model.to(dtype)): each held to TOL_MULTIPLE times upstream's own
error in that dtype against its float64 run (float64 itself to the float32 tolerance: see
test_float64_logits_agree_with_upstream).

Mixtral runs its experts both ways: a loop over experts ("eager") and transformers' default
grouped_mm (histc + torch._grouped_mm); upstream has no float64 _grouped_mm, so that case's float64
reference is the eager-experts float64 run, the same function of the same weights."""

import ast
import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "transformers_archs.py"
TOL_MULTIPLE = 4

pytestmark = pytest.mark.runtime


def _program_constant(name):
    for node in ast.parse(PROGRAM.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return ast.literal_eval(node.value)
    raise LookupError(name)


ARCHS = _program_constant("ARCHS")
DECODERS = [a for a in ARCHS if a not in _program_constant("ENCODERS")]
SEQ = _program_constant("SEQ")
NEW_TOKENS = _program_constant("NEW_TOKENS")


def _run(python, modes):
    out = subprocess.run([str(python), str(PROGRAM), modes], capture_output=True, text=True, timeout=1200,
                         cwd=str(REPO))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def ours():
    res = _run(REPO / ".venv" / "bin" / "python", "forward32,forward64,forward_bf16,forward_fp16,generate")
    assert "torchnative" in res["torch"]
    return res


@pytest.fixture(scope="module")
def ref():
    res = _run((REPO / "build" / "ref-python").read_text().strip(),
               "forward32,forward64,perturbed,forward_bf16,forward_fp16,generate")
    assert "torchnative" not in res["torch"]
    return res


def _cases(res, mode, arch):
    cases = {k: v for k, v in res[mode].items() if k.split("/")[0] == arch}
    assert cases, f"no {mode} case for {arch}"
    return cases


def _max_diff(a, b):
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def _tolerance(ref, key, mode="forward32"):
    """TOL_MULTIPLE times upstream's own error in `mode`'s dtype, measured against its float64 run."""
    low, f64 = ref[mode][key], ref["forward64"][key]
    assert "error" not in low and "error" not in f64, (low.get("error"), f64.get("error"))
    err = _max_diff(low["values"], f64["values"])
    assert err > 0, f"{key}: {mode} and float64 agree exactly, no error to scale"
    return TOL_MULTIPLE * err


def _check_agreement(ours, ref, mode, arch, tol_mode):
    for key, mine in _cases(ours, mode, arch).items():
        assert "error" not in mine, f"{key}: {mine.get('error')}"
        theirs = ref[mode][key]
        assert (mine["shape"], mine["dtype"]) == (theirs["shape"], theirs["dtype"]), key
        tol = _tolerance(ref, key, tol_mode)
        assert _agrees(mine["values"], theirs["values"], tol), \
            f"{key} {mode}: differs by {_max_diff(mine['values'], theirs['values']):.3g}, tolerance {tol:.3g}"


def _agrees(values, reference, tol):
    return _max_diff(values, reference) <= tol


@pytest.mark.parametrize("arch", ARCHS)
def test_forward_logits_agree_with_upstream(arch, ours, ref):
    _check_agreement(ours, ref, "forward32", arch, "forward32")


@pytest.mark.parametrize("arch", ARCHS)
def test_float64_logits_agree_with_upstream(arch, ours, ref):
    """model.to(torch.float64) on both sides. Models keep float32 islands (rotary tables, Mamba's
    A), so the two float64 runs differ at float32 rounding (up to 2.4e-7, Mamba), not 1e-16:
    the float32 tolerance applies."""
    _check_agreement(ours, ref, "forward64", arch, "forward32")


@pytest.mark.parametrize("mode", ["forward_bf16", "forward_fp16"])
@pytest.mark.parametrize("arch", ARCHS)
def test_reduced_precision_drift_is_upstreams_own(arch, mode, ours, ref):
    """Issue 5 item 5: in bfloat16 and float16 our logits differ from upstream's by one or two
    units in the last place of the dtype (measured: at most 1.33 times upstream's own
    bfloat16/float16-versus-float64 error); held to TOL_MULTIPLE times that error."""
    _check_agreement(ours, ref, mode, arch, mode)


@pytest.mark.parametrize("arch", ARCHS)
def test_tolerance_catches_a_0_1_percent_activation_error(arch, ref):
    for key, perturbed in _cases(ref, "perturbed", arch).items():
        assert "error" not in perturbed, f"{key}: {perturbed.get('error')}"
        assert not _agrees(perturbed["values"], ref["forward32"][key]["values"], _tolerance(ref, key)), key


def test_both_attention_implementations_are_covered(ref):
    attns = {key.split("/")[1] for key in ref["forward32"]}
    assert {"sdpa", "eager"} <= attns
    assert sum(key.endswith("/sdpa") for key in ref["forward32"]) >= 15


@pytest.mark.parametrize("arch", DECODERS)
def test_generate_matches_upstream(arch, ours, ref):
    for key, mine in _cases(ours, "generate", arch).items():
        assert "error" not in mine, f"{key}: {mine.get('error')}"
        theirs = ref["generate"][key]
        for kind in ("greedy", "sampled", "beam"):
            assert all(len(row) == SEQ + NEW_TOKENS for row in theirs[kind]), key
            assert mine[kind] == theirs[kind], f"{key} {kind}: {mine[kind]} != {theirs[kind]}"


def test_sampling_is_not_greedy(ref):
    """The sampled comparison would be vacuous if sampling reproduced greedy decoding."""
    cases = ref["generate"].values()
    assert sum(c["sampled"] != c["greedy"] for c in cases) == len(cases)

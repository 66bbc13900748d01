"""One CPU capability decision, the same on both sides of every comparison
(torchnative_core/cpu_capability.py): under each ATEN_CPU_CAPABILITY value this machine can run,
ours reports what upstream reports (`torch.backends.cpu.get_cpu_capability()`), and the cpu
backend's kernels run that capability (`torchnative_cpu._native.cpu_capability()`). Values
upstream ignores (upper case, unknown) are ignored by ours too. tests/conftest.py pins oneDNN's
ISA and MKL's code path to match; `nox -s other_isa` runs the agreement tests on the lower path."""

import os
import subprocess
from pathlib import Path

import pytest
from torchnative_core import cpu_capability

REPO = Path(__file__).resolve().parents[1]
OURS = str(REPO / ".venv" / "bin" / "python")
PROGRAM = "import torch; print(torch.backends.cpu.get_cpu_capability(), torch._C._get_cpu_capability())"
BACKEND = "import torchnative_cpu._native as n; print(n.cpu_capability())"

pytestmark = pytest.mark.runtime

SETTINGS = [None, "default", "avx2", "avx512", "AVX2", "sse9"]


def _ask(python, program, setting):
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    if setting is not None:
        env["ATEN_CPU_CAPABILITY"] = setting
    r = subprocess.run([python, "-c", program], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split()


@pytest.fixture(scope="module")
def reports():
    ref = (REPO / "build" / "ref-python").read_text().strip()
    order = cpu_capability.ORDER
    runnable = [s for s in SETTINGS if s not in ("default", "avx2", "avx512")
                or order.index(s.upper()) <= order.index(cpu_capability.detected())]
    return {s: (_ask(OURS, PROGRAM, s), _ask(OURS, BACKEND, s), _ask(ref, PROGRAM, s)) for s in runnable}


def test_ours_reports_and_runs_upstreams_capability(reports):
    for setting, (ours, backend, ref) in reports.items():
        assert ours == [ref[0], ref[0]], (setting, ours, ref)
        assert backend == [ref[0]], (setting, backend, ref)


def test_the_override_reaches_both_sides(reports):
    """The check can fail: the AVX2 path differs from the detected one on an AVX-512 machine."""
    if cpu_capability.detected() != "AVX512":
        pytest.skip("only one vector path above default here")
    assert reports["avx2"][2] == ["AVX2", "AVX2"] and reports[None][2] == ["AVX512", "AVX512"]
    assert reports["avx2"][0] != reports[None][0]


def test_the_session_pins_every_path_variable():
    """tests/conftest.py set the pins of the chosen capability: oneDNN capped below AVX512-FP16
    and AMX (paths ours has no counterpart of), MKL left on its own choice (AUTO)."""
    assert os.environ["ATEN_CPU_CAPABILITY"] == cpu_capability.chosen().lower()
    assert os.environ["MKL_CBWR"] == "AUTO"
    cap = cpu_capability._ONEDNN_LEVELS[os.environ["ONEDNN_MAX_CPU_ISA"]]
    assert not cap & {"avx512_core_fp16", "amx", "avx2_vnni_2"}


def test_onednn_reduced_type_choice_follows_the_isa_cap(monkeypatch):
    """Upstream's oneDNN takes bfloat16 from avx512_core on and float16 only with AVX512-FP16 (or
    AVX2-VNNI-2); capped at AVX2 it takes neither, and ours decides the same."""
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert not cpu_capability.onednn_supports("torch.bfloat16")
    assert not cpu_capability.onednn_supports("torch.float16")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    assert not cpu_capability.onednn_supports("torch.float16")
    assert cpu_capability.onednn_supports("torch.bfloat16") == ("avx512_core" in cpu_capability.onednn_isa())

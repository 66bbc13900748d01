"""Test-suite wide configuration.

Tests marked `runtime` run torch programs on torchnative's own `torch._C` (the golden
comparisons with upstream); `make golden` runs just those. `make test` runs everything.
The session pins the CPU instruction-set path of both sides (below)."""

import os

import pytest
from torchnative_core.cpu_capability import reference_env

# Both processes of every comparison (ours, upstream's reference) take one instruction-set path:
# ATen's capability, oneDNN's ISA cap (no AMX, no AVX512-FP16) and MKL on its own choice, set for
# every subprocess the tests start. ATEN_CPU_CAPABILITY=avx2 in the caller's environment runs
# the suite on the AVX2 path (`nox -s other_isa`); torchnative_core/cpu_capability.py says why.
os.environ.update(reference_env())

RUNTIME_TESTS = ("tests/golden/test_golden.py", "test_torch_C_imports_from_our_build__NEEDS_IMPORT_TORCH")


def pytest_configure(config):
    config.addinivalue_line("markers", "runtime: needs `import torch` to work on torchnative's torch._C")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(key in item.nodeid for key in RUNTIME_TESTS):
            item.add_marker(pytest.mark.runtime)

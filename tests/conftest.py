"""Test-suite wide configuration.

Tests marked `runtime` run torch programs on torchnative's own `torch._C` (the golden
comparisons with upstream); `make golden` runs just those. `make test` runs everything."""

import pytest

RUNTIME_TESTS = ("tests/golden/test_golden.py", "test_torch_C_imports_from_our_build__NEEDS_IMPORT_TORCH")


def pytest_configure(config):
    config.addinivalue_line("markers", "runtime: needs `import torch` to work on torchnative's torch._C")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(key in item.nodeid for key in RUNTIME_TESTS):
            item.add_marker(pytest.mark.runtime)

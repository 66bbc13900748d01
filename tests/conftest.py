"""Test-suite wide configuration.

Tests marked `runtime` need `import torch` to succeed on torchnative's own `torch._C`. That is
not true yet (see docs/STATUS.md: the import stops at a named wall), so `make test` — and CI —
deselect them with `-m "not runtime"`; `make golden` runs them and shows exactly where we stand.
The marker is removed from the default run as soon as the import works."""

import pytest

RUNTIME_TESTS = ("tests/golden/test_golden.py", "test_torch_C_imports_from_our_build__NEEDS_IMPORT_TORCH")


def pytest_configure(config):
    config.addinivalue_line("markers", "runtime: needs `import torch` to work on torchnative's torch._C")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(key in item.nodeid for key in RUNTIME_TESTS):
            item.add_marker(pytest.mark.runtime)

"""Session fixtures: each side runs its batch once per pytest session."""
import pytest

from . import harness, registry


@pytest.fixture(scope="session")
def cases():
    return registry.load_all()


@pytest.fixture(scope="session")
def ref_batch(cases):
    """Upstream results for ALL cases (cheap: one interpreter, ~2 s).  A missing or wrong
    reference interpreter raises here, so every dependent test errors -- never skips."""
    batch = harness.run_batch(harness.ref_python(), list(cases))
    harness.check_reference(batch)
    return batch


@pytest.fixture(scope="session")
def our_batch(request, cases):
    """Our results, only for the golden cases this session selected (-k narrows the run). Other
    suites parametrise a `case_id` too (tests/conformance): only golden case ids count."""
    ids = [item.callspec.params["case_id"] for item in request.session.items
           if hasattr(item, "callspec") and item.callspec.params.get("case_id") in cases]
    return harness.run_batch(harness.ours_python(), ids or list(cases))

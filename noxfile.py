"""nox sessions: one per backend, plus lint. They reuse the project build (tools/build.py makes
.venv/) rather than nox-managed environments, because the build owns the vendored upstream tree.

    nox -s cpu          # the test suite on the cpu backend (the default session)
    nox -s lint         # ruff check, cargo clippy (warnings are errors) and rustfmt --check
    nox -s wheels       # the built wheels, not an editable tree, in a clean venv running torch
Backends other than cpu (vulkan, metal, npu) get their sessions with their issues."""

import nox

nox.options.sessions = ["cpu"]
nox.options.default_venv_backend = "none"


@nox.session(tags=["cpu"])
def cpu(session):
    session.run("make", "test", external=True)


@nox.session
def lint(session):
    """ruff comes from requirements/runtime.txt (installed into .venv by tools/build.py); its
    configuration is pyproject.toml's [tool.ruff]."""
    session.run(".venv/bin/python", "-m", "ruff", "check", ".", external=True)
    session.run("cargo", "fmt", "--all", "--", "--check", external=True)
    session.run("cargo", "clippy", "--workspace", "--all-targets", "--", "-D", "warnings", external=True)


@nox.session
def wheels(session):
    """tools/build.py makes the maturin abi3 wheels (core, every backend) and the vendored torch
    wheel; tools/wheel_smoke.py installs them with the root package's wheel into a fresh venv
    and runs a torch program and `torchnative backends list` there."""
    session.run("python3", "tools/build.py", external=True)
    session.run("python3", "tools/wheel_smoke.py", external=True)

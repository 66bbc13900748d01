"""nox sessions: one per backend, plus lint. They reuse the project build (tools/build.py makes
.venv/) rather than nox-managed environments, because the build owns the vendored upstream tree.

    nox -s cpu          # the test suite on the cpu backend (the default session)
    nox -s lint         # ruff check, cargo clippy (warnings are errors) and rustfmt --check
    nox -s wheels       # the wheelhouse, installed alone into a fresh venv per Python, smoke suite there
    nox -s docs         # relative links and quoted tools/tests paths in the Markdown exist
    nox -s dist_stress  # torch.distributed's full stress run (10,000 collectives + 100 MB all_reduce)
    nox -s bench        # the benchmark suite against upstream (benchmarks/suite.py; not a test)
    nox -s other_isa    # the agreement tests on the instruction-set path below the machine's own
    nox -t vulkan       # (metal, npu) a backend's session; skips, saying why, until it is built
"""

import sys
import tomllib
from pathlib import Path

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
    """tools/wheelhouse.py builds build/wheelhouse (our wheels, tags checked, and every dependency for
    each Python this machine has); tools/wheel_smoke.py installs torchnative[gpu,npu] from it alone
    into a fresh venv per Python and runs the smoke suite there (tests/test_wheelhouse.py, part of
    `make test`, runs the same two)."""
    session.run("python3", "tools/build.py", "--ref", external=True)
    session.run("python3", "tools/wheelhouse.py", "--no-build", external=True)
    session.run("python3", "tools/wheel_smoke.py", external=True)


# the tests whose claims depend on the instruction-set path (bit-identity with upstream's vector
# kernels, oneDNN's reduced-type choices, MKL's products, training trajectories)
ISA_AGREEMENT_TESTS = ("tests/test_cpu_capability.py", "tests/test_kernel_agreement.py",
                       "tests/test_activation_agreement.py", "tests/test_flash_attention.py",
                       "tests/test_matrix_exp.py", "tests/test_reduced_kernels.py", "tests/test_training.py",
                       "tests/test_training_kernels.py")


@nox.session
def other_isa(session):
    """CI's run covers the machine's own capability; this one runs the agreement tests with both
    sides pinned one level lower (ATEN_CPU_CAPABILITY=avx2 on an AVX-512 machine, =default on an
    AVX2 one; tests/conftest.py derives oneDNN's and MKL's pins from it), plus the reduced-type
    OpInfo samples. AMX and AVX512-FP16 paths cannot be run this way (docs/STATUS.md)."""
    import subprocess

    other = subprocess.run([".venv/bin/python", "-c", "from torchnative_core.cpu_capability import other_path; "
                            "print(other_path() or '')"], capture_output=True, text=True, check=True).stdout.strip()
    if not other:
        session.skip("this CPU runs only upstream's default capability: there is no other path")
    session.env["ATEN_CPU_CAPABILITY"] = other.lower()
    session.run(".venv/bin/python", "-m", "pytest", "-q", *ISA_AGREEMENT_TESTS, external=True)
    session.run(".venv/bin/python", "-m", "pytest", "-q", "tests/test_opinfo_agreement.py", "-k",
                "reduced_precision", external=True)


@nox.session
def docs(session):
    session.run("python3", "tools/check_docs.py", external=True)


@nox.session
def dist_stress(session):
    """The full stress run of torchnative's process group: 10,000 mixed small collectives, then a
    100 MB all_reduce, every result checked (CI runs the same: tests/distributed/test_process_group.py)."""
    session.env["STRESS_COUNT"] = "10000"
    session.run(".venv/bin/python", "-m", "pytest", "-q", "tests/distributed/test_process_group.py", "-k", "stress",
                external=True)


@nox.session
def bench(session):
    """benchmarks/suite.py: every case of issue 8 on upstream and on torchnative, alternating;
    prints the table and writes its JSON record under docs/bench/. Arguments after `--` go to the
    suite (`nox -s bench -- --quick`)."""
    session.run(".venv/bin/python", "benchmarks/suite.py", *session.posargs, external=True)


def _backend_session(name, path, device_keys):
    def run(session):
        if not (Path(__file__).parent / path / "pyproject.toml").exists():  # (npu has no Cargo.toml)
            session.skip(f"{name}: {path} is not in the repository yet (its issue builds it)")
        session.run("python3", "tools/build.py", external=True)
        session.env["TORCHNATIVE_BACKENDS"] = f"cpu,{name}"
        session.env["TORCHNATIVE_STRICT"] = "1"  # a backend that fails to load fails the session
        # tests/conformance fails (instead of skipping) when these devices cannot run its cases
        session.env["TORCHNATIVE_CONFORMANCE_REQUIRE"] = ",".join(device_keys)
        # -k name: tests/conformance's cases on the device (ids "<device key>-<case>"), its
        # self-test, and tests/test_<name>_*.py
        keys = " or ".join(dict.fromkeys([name, *device_keys]))
        session.run(".venv/bin/python", "-m", "pytest", "-q", "tests", "-k", keys, external=True)

    run.__name__ = name
    run.__doc__ = f"The test suite's {name} cases (the conformance suite on {', '.join(device_keys)} " \
                  f"included) with the {name} backend required to load."
    return nox.session(name=name, tags=[name])(run)


# one session per first-party backend other than cpu, from the single table of plugins
for _p in tomllib.loads((Path(__file__).parent / "torchnative" / "plugins.toml").read_text())["plugin"]:
    if _p["name"] != "cpu":
        setattr(sys.modules[__name__], _p["name"], _backend_session(_p["name"], _p["path"], _p["device_keys"]))


@nox.session
def fuzz(session):
    """The long differential fuzz campaign (tools/fuzz_ops.py; CI runs tests/test_fuzz_ops.py):
    100,000 calls on ours and on upstream, every dtype (complex ones included), differing cases
    appended to the corpus. Pass a seed and a count after `--`: `nox -s fuzz -- 9 20000`."""
    seed, calls = (list(session.posargs) + ["1", "100000"][len(session.posargs):])[:2]
    session.run("python3", "tools/fuzz_ops.py", "run", "--calls", calls, "--seed", seed, "--per-class", "1",
                "--complex", "--corpus", "tests/data/fuzz_corpus.jsonl", "--progress", "5000", external=True)
    session.run("python3", "tools/fuzz_ops.py", "replay", "tests/data/fuzz_corpus.jsonl", external=True)

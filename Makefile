# The two README commands. tools/build.py is incremental: it skips every step whose inputs
# did not change (stamps in build/stamps/), so running these twice costs seconds.
.PHONY: demo test golden wheelhouse clean

demo:
	python3 tools/build.py --ref && .venv/bin/python -m torchnative demo

test:
	python3 tools/build.py --ref && cargo test -q -p torchnative-abi -p torchnative-rng -p torchnative-backend -p torchnative-cpu && .venv/bin/python -m pytest -q tests

# Only the comparisons with upstream (tests/golden), on our runtime.
golden:
	python3 tools/build.py --ref && .venv/bin/python -m pytest -q -m runtime tests

# build/wheelhouse/: our six wheels (native ones manylinux_2_28, abi3) and every dependency of
# torchnative[gpu,npu] for each Python 3.10-3.13 this machine has; `pip install --no-index
# --find-links build/wheelhouse "torchnative[gpu,npu]"` installs from it alone.
wheelhouse:
	python3 tools/wheelhouse.py

# Removes build/ and .venv/ (cargo's target/ and the download cache stay).
clean:
	python3 tools/build.py --clean

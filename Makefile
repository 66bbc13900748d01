# The two README commands. tools/build.py is incremental: it skips every step whose inputs
# did not change (stamps in build/stamps/), so running these twice costs seconds.
.PHONY: demo test golden clean

demo:
	python3 tools/build.py --ref && .venv/bin/python -m torchnative demo

test:
	python3 tools/build.py --ref && cargo test -q -p torchnative-abi -p torchnative-rng -p torchnative-cpu && .venv/bin/python -m pytest -q tests

# Only the comparisons with upstream (tests/golden), on our runtime.
golden:
	python3 tools/build.py --ref && .venv/bin/python -m pytest -q -m runtime tests

# Removes build/ and .venv/ (cargo's target/ and the download cache stay).
clean:
	python3 tools/build.py --clean

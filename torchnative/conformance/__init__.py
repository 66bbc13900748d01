"""The conformance suite, shipped with the library so that any installed backend can be checked:
`torchnative conformance DEVICE` (cli.py) runs every case (cases.py) on DEVICE and on cpu, each in
a subprocess of our runtime (runner.py, batch.py: a crash or hang costs one case), and compares
them within the device's tolerance (tolerances.py, compare.py). The repository's pytest suite
(tests/conformance/) runs the same cases against upstream torch 2.13.0 as well.

Nothing here imports torch except runner.py, in its subprocess; the modules import each other
relatively, so runner.py can load them under the upstream interpreter too (it has no torchnative).
"""

"""The comparators live in the library (torchnative/conformance/compare.py), so that
`torchnative conformance DEVICE` ships them; this name stays for the golden suite."""
import sys

from torchnative.conformance import compare

sys.modules[__name__] = compare

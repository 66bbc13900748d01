"""Per-device, per-family tolerances: compare.compare options for a case on a device.

"exact" means bit-for-bit (NaN positions, signed zeros and infinities included); a pair
(atol, rtol) accepts |ours - upstream| <= atol + rtol * |upstream| elementwise. Integer and
bool results are always compared exactly, whatever the family.

How they were measured: `python tests/conformance/measure.py DEVICE` runs the whole suite on
DEVICE and prints the largest absolute and relative error per family against upstream (the
numbers and the command are in docs/vulkan.md). A tolerance is that measurement times two,
rounded up to one significant digit, and never below the family's detection requirement in
test_conformance_selftest.py (a 1e-4 relative error must always be caught).

cpu: the families where upstream's own result is correctly rounded (data movement,
comparisons, conversions, + - * /) are exact and measured exact; the rest use the golden
harness's measured float32 tolerance (tests/golden/compare.py, docs/golden.md).
"""
from golden.compare import TOLERANCES as GOLDEN

EXACT = "exact"
_F32 = GOLDEN["torch.float32"]  # (7e-6, 6e-6), measured by tests/golden/measure_tolerances.py

TOLERANCES = {
    "cpu": {"exact": EXACT, "arith": EXACT, "math": _F32, "reduction": _F32, "matmul": _F32,
            "nn": _F32},
    # lavapipe (llvmpipe's Vulkan), measured with measure.py (docs/vulkan.md). arith measured
    # bit-exact there (WGSL allows x / y 2.5 ulp: a real GPU may need this loosened, measured on
    # it); math measured (1.7e-6, 1.5e-6), atan/atan2 worst (~12 ulp), the rest within 2 ulp.
    # reduction, matmul, nn: PROVISIONAL (no vulkan kernel for those cases when measured): a
    # relative 1e-5, a tenth of what must always be caught; re-measure when the kernels exist.
    "vulkan": {"exact": EXACT, "arith": EXACT, "math": (4e-6, 3e-6),
               "reduction": (1e-5, 1e-5), "matmul": (1e-5, 1e-5), "nn": (1e-5, 1e-5)},
}
# A device without a measured row (another installed device key) gets vulkan's: GPU-like.
DEFAULT = TOLERANCES["vulkan"]


def options(device, family):
    tol = TOLERANCES.get(device, DEFAULT)[family]
    if tol == EXACT:
        return {"exact": True}
    atol, rtol = tol
    return {"atol": atol, "rtol": rtol}

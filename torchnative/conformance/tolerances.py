"""Per-device, per-family tolerances: compare.compare options for a case on a device.

"exact" means bit-for-bit (NaN positions, signed zeros and infinities included); a pair
(atol, rtol) accepts |ours - upstream| <= atol + rtol * |upstream| elementwise. Integer and
bool results are always compared exactly, whatever the family.

How they were measured: `python tests/conformance/measure.py DEVICE` runs the whole suite on
DEVICE and prints, per family, the (atol, rtol) its cases need against upstream (the numbers and
the command are in docs/vulkan.md). A family measured bit-exact is "exact". Otherwise the
tolerance is twice the measurement (two significant digits, rounded up), but never below the
golden harness's measured float32 tolerance (atol 7e-6, rtol 6e-6: twice upstream's own float32
error against a float64 truth on the same families, tests/golden/measure_tolerances.py): two
correct float32 implementations may differ that much, whatever this suite's few inputs showed.
Every tolerance must still catch a relative error of 1e-4 (test_conformance_selftest.py).

cpu: the families where upstream's own result is correctly rounded (data movement,
comparisons, conversions, + - * /) are exact and measured exact; the rest use the floor.
"""
from .compare import TOLERANCES as GOLDEN

EXACT = "exact"
_F32 = GOLDEN["torch.float32"]  # (7e-6, 6e-6), measured by tests/golden/measure_tolerances.py
FLOOR = _F32

TOLERANCES = {
    "cpu": {"exact": EXACT, "arith": EXACT, "math": _F32, "reduction": _F32, "matmul": _F32,
            "nn": _F32},
    # lavapipe (llvmpipe's Vulkan), measured 2026-11-29 (docs/vulkan.md): + - * / bit-exact (WGSL
    # allows x / y 2.5 ulp: a real GPU may need "arith" loosened, measured on it); measured math
    # (1.7e-6, 1.5e-6: atan/atan2 ~12 ulp, the rest within 2), matmul (3.2e-6, 2.6e-6), nn (2e-7,
    # 2e-7): all under the floor; reduction (5.7e-6, 1.4e-6): atol twice the measurement.
    "vulkan": {"exact": EXACT, "arith": EXACT, "math": _F32, "reduction": (1.2e-5, _F32[1]),
               "matmul": _F32, "nn": _F32},
    # ONNX Runtime 1.32's CPU provider (backends/npu), measured 2026-11-29 (docs/npu.md): exact,
    # + - * / bit-exact; math (2.3e-7, 2.2e-7), reduction (2.4e-6, 1.9e-6), matmul (2.8e-6, 2.7e-6),
    # nn (1.2e-7, 1.2e-7): all under the floor. An NPU provider (QNN, NNAPI) computes in lower
    # precision and needs its own row, measured there.
    "npu": {"exact": EXACT, "arith": EXACT, "math": _F32, "reduction": _F32, "matmul": _F32, "nn": _F32},
}
# A device without a measured row (another installed device key) gets vulkan's: GPU-like.
DEFAULT = TOLERANCES["vulkan"]


def options(device, family):
    tol = TOLERANCES.get(device, DEFAULT)[family]
    if tol == EXACT:
        return {"exact": True}
    atol, rtol = tol
    return {"atol": atol, "rtol": rtol}

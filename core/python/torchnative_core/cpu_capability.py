"""The one decision on which instruction-set path the CPU kernels take, and the environment that
pins upstream's reference process to the same path.

Upstream picks its kernels by instruction set in three places: ATen's dispatch
(`ATEN_CPU_CAPABILITY`: default, avx2, avx512), oneDNN's ISA dispatch (`ONEDNN_MAX_CPU_ISA`:
which also decides whether float16/bfloat16 convolutions go to oneDNN at all) and MKL's code
paths (`MKL_CBWR`). Ours reads the same variables, with upstream's meaning:

- `ATEN_CPU_CAPABILITY` chooses our capability (the cpu backend's lanes in softmax, gelu, SDPA;
  what `torch.backends.cpu.get_cpu_capability()` reports). Values are upstream's, compared as
  upstream compares them (exact, lower case); a value above what this CPU can run is ignored
  (upstream would run instructions the CPU lacks).
- `ONEDNN_MAX_CPU_ISA` caps the ISA of which ours asks "would oneDNN take this type"
  ([`onednn_supports`]).
- `MKL_CBWR` is left to MKL (AUTO); [`mkl_fuses_small_products`] says which order upstream's
  MKL takes for the small products ours spells out step by step (matrix_exp).

The cpu backend (backends/cpu/src/vecmath.rs `capability`) applies the same rule to the same
variable; `torchnative_cpu._native.cpu_capability()` reports its choice, and the tests check that
the two agree. [`reference_env`] is what the test suite sets for both processes, so an
AVX-512/AMX machine's upstream computes the path ours follows.

What cannot be reproduced this way: upstream's AMX and AVX512-FP16 paths (oneDNN's
avx512_core_amx / avx512_core_fp16, MKL's AMX code) have no counterpart in ours; the pinned
environment keeps upstream off them, and on a machine that has them only the pinned comparison
is exact."""

from __future__ import annotations

import functools
import os

ORDER = ("DEFAULT", "AVX2", "AVX512")

# the oneDNN ISA that matches each capability of ours: AVX512_CORE_BF16 is the richest level
# without AVX512-FP16 or AMX (neither has a counterpart in ours); it is what an AVX-512 machine
# without them (this project's AMD EPYC) detects anyway
_ONEDNN_FOR = {"AVX512": "AVX512_CORE_BF16", "AVX2": "AVX2", "DEFAULT": "SSE41"}
# MKL on its own choice (MKL_CBWR=AUTO, what a user's upstream runs): measured side by side, it is
# the setting where upstream's products round as ours do on both machines we have. AMD EPYC Zen 5:
# the CNN training run agrees bit for bit unpinned, and is shifted pinned to AVX2. Intel Xeon
# (AVX-512, AMX): the flash-attention lse agrees on 99.9% of rows unpinned and not under AVX2, and
# matrix_exp's 9x9-12x12 products are bit-identical unpinned; pinned to AVX2, MKL's 8x8 and 9x9
# products take an order that is neither k order fused nor unfused (tests/test_matrix_exp.py).
_MKL_CBWR = "AUTO"

# oneDNN's ISA levels as sets of what each adds (cpu_isa_traits.hpp: each level includes the
# ones it is built on; avx512_core_fp16 includes avx2_vnni_2)
_ONEDNN_LEVELS = {
    "SSE41": {"sse41"},
    "AVX": {"sse41", "avx"},
    "AVX2": {"sse41", "avx", "avx2"},
    "AVX2_VNNI": {"sse41", "avx", "avx2", "avx2_vnni"},
    "AVX2_VNNI_2": {"sse41", "avx", "avx2", "avx2_vnni", "avx2_vnni_2"},
    "AVX512_CORE": {"sse41", "avx", "avx2", "avx512_core"},
    "AVX512_CORE_VNNI": {"sse41", "avx", "avx2", "avx512_core", "avx512_core_vnni"},
    "AVX512_CORE_BF16": {"sse41", "avx", "avx2", "avx512_core", "avx512_core_vnni", "avx512_core_bf16"},
}
_ONEDNN_LEVELS["AVX512_CORE_FP16"] = _ONEDNN_LEVELS["AVX512_CORE_BF16"] | {
    "avx2_vnni", "avx2_vnni_2", "avx512_core_fp16"}
_ONEDNN_LEVELS["AVX10_1_512"] = _ONEDNN_LEVELS["AVX512_CORE_FP16"]
_ONEDNN_LEVELS["AVX512_CORE_AMX"] = _ONEDNN_LEVELS["AVX512_CORE_FP16"] | {"amx"}
_ONEDNN_LEVELS["AVX10_1_512_AMX"] = _ONEDNN_LEVELS["AVX512_CORE_AMX"]
_ONEDNN_LEVELS["AVX512_CORE_AMX_FP16"] = _ONEDNN_LEVELS["AVX512_CORE_AMX"] | {"amx_fp16"}
_ONEDNN_LEVELS["AVX10_1_512_AMX_FP16"] = _ONEDNN_LEVELS["AVX512_CORE_AMX_FP16"]

_AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"}


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset:
    """The kernel's /proc/cpuinfo flags of the first CPU (empty where it can't be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def vendor() -> str:
    """/proc/cpuinfo's vendor_id of the first CPU ("GenuineIntel", "AuthenticAMD"; empty where
    it can't be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def mkl_fuses_small_products() -> bool:
    """Whether upstream's MKL multiplies matrices of 8x8x8 (the smallest it is handed: below 400
    multiply-adds bmm takes its naive kernel) by fused multiply-adds in k order (Intel CPUs, MKL
    on its own choice) or by separate multiplies and adds in k order (other vendors, and its
    COMPATIBLE branch everywhere). Measured with the reference wheel: Intel Xeon (AVX-512, AMX)
    fused for 8x8 to 12x12, float32 and float64; AMD EPYC Zen 5 unfused for 3x3 to 8x8. MKL's
    AVX2 branch on the Intel Xeon takes neither order at 8x8 and 9x9; the test suite leaves MKL
    on its own choice (`reference_env`)."""
    if os.environ.get("MKL_CBWR", "").upper().startswith("COMPATIBLE"):
        return False
    return vendor() == "GenuineIntel" and "fma" in cpu_flags()


def detected() -> str:
    """The capability upstream's dispatch detects here (DispatchStub.cpp: AVX512 with
    avx512vl/bw/dq and FMA, AVX2 with avx2 and FMA)."""
    f = cpu_flags()
    if {"avx2", "fma"} <= f:
        return "AVX512" if _AVX512 <= f else "AVX2"
    return "DEFAULT"


def chosen() -> str:
    """Our capability: `ATEN_CPU_CAPABILITY` (default/avx2/avx512, exact as upstream compares it)
    when this CPU can run it, else the detected one."""
    best = detected()
    want = os.environ.get("ATEN_CPU_CAPABILITY", "")
    if want in ("default", "avx2", "avx512") and ORDER.index(want.upper()) <= ORDER.index(best):
        return want.upper()
    return best


def _onednn_machine() -> set:
    f = cpu_flags()
    have = {"sse41"} if "sse4_1" in f else set()
    if "avx" in f:
        have.add("avx")
    if {"avx2", "fma"} <= f:
        have.add("avx2")
        if "avx_vnni" in f:
            have.add("avx2_vnni")
            if {"avx_ne_convert", "avx_vnni_int8"} <= f:
                have.add("avx2_vnni_2")
    if _AVX512 <= f:
        have.add("avx512_core")
        if "avx512_vnni" in f:
            have.add("avx512_core_vnni")
            if "avx512_bf16" in f:
                have.add("avx512_core_bf16")
                if "avx512_fp16" in f:
                    have.add("avx512_core_fp16")
                    if {"amx_tile", "amx_bf16", "amx_int8"} <= f:
                        have.add("amx")
                        if "amx_fp16" in f:
                            have.add("amx_fp16")
    return have


def onednn_isa() -> set:
    """What oneDNN may use here: the machine's ISA, capped by `ONEDNN_MAX_CPU_ISA` (upstream's
    oneDNN reads it once; an unknown value leaves the machine's ISA)."""
    cap = _ONEDNN_LEVELS.get(os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper())
    have = _onednn_machine()
    return have & cap if cap is not None else have


def onednn_supports(dtype_name: str) -> bool:
    """mkldnn_bf16_device_check / mkldnn_fp16_device_check on x86-64 (ideep's
    has_bf16_type_support: avx512_core or avx2_vnni_2; has_fp16_type_support: avx512_core_fp16
    or avx2_vnni_2), under the ISA cap."""
    isa = onednn_isa()
    if "avx2_vnni_2" in isa:
        return True
    return ("avx512_core" if dtype_name.endswith("bfloat16") else "avx512_core_fp16") in isa


def reference_env(capability: str | None = None) -> dict:
    """The variables that pin upstream to the path ours takes under `capability` (our chosen one
    when None): ATen's capability, oneDNN's ISA cap (no AMX, no AVX512-FP16), MKL on its own
    choice (AUTO: see `_MKL_CBWR`).
    Variables already set in the environment are kept (they pin both sides the same way)."""
    cap = (capability or chosen()).upper()
    want = {"ATEN_CPU_CAPABILITY": cap.lower(), "ONEDNN_MAX_CPU_ISA": _ONEDNN_FOR[cap], "MKL_CBWR": _MKL_CBWR}
    return {k: os.environ.get(k, v) for k, v in want.items()}


def other_path() -> str | None:
    """The capability below the detected one (AVX2 on an AVX-512 machine, DEFAULT on an AVX2
    one): the path a machine's own CI run does not cover; None where there is none."""
    i = ORDER.index(detected())
    return ORDER[i - 1] if i else None

"""`torch._C._cpu._get_cpu_capability()`: the CPU's features, as upstream reports them (it uses
cpuinfo; here the kernel's /proc/cpuinfo flags and sysfs cache sizes are read on Linux)."""

from __future__ import annotations

import os
import platform

# upstream key -> /proc/cpuinfo flag
_FLAGS = {
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4_1": "sse4_1", "sse4_2": "sse4_2",
    "sse4a": "sse4a", "avx": "avx", "avx2": "avx2", "fma3": "fma", "fma4": "fma4", "f16c": "f16c",
    "avx512_f": "avx512f", "avx512_cd": "avx512cd", "avx512_dq": "avx512dq", "avx512_bw": "avx512bw",
    "avx512_vl": "avx512vl", "avx512_ifma": "avx512ifma", "avx512_vbmi": "avx512vbmi", "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg", "avx512_vpopcntdq": "avx512_vpopcntdq", "avx512_vnni": "avx512_vnni",
    "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16", "avx512_vp2intersect": "avx512_vp2intersect",
    "avx512_4vnniw": "avx512_4vnniw", "avx512_4fmaps": "avx512_4fmaps", "avx_vnni": "avx_vnni",
    "avx_vnni_int8": "avx_vnni_int8", "avx_vnni_int16": "avx_vnni_int16", "avx_ne_convert": "avx_ne_convert",
    "amx_bf16": "amx_bf16", "amx_tile": "amx_tile", "amx_int8": "amx_int8", "amx_fp16": "amx_fp16",
    "avx10_1": "avx10_1", "avx10_2": "avx10_2", "aes": "aes", "sha": "sha_ni", "bmi": "bmi1", "bmi2": "bmi2",
    "lzcnt": "abm", "popcnt": "popcnt", "clflush": "clflush", "clflushopt": "clflushopt", "clwb": "clwb",
}


def _cpuinfo():
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return set(), "", 0, 1
    flags, name, sockets = set(), "", set()
    for line in text.splitlines():
        key, _, val = line.partition(":")
        key = key.strip()
        if key == "flags" and not flags:
            flags = set(val.split())
        elif key == "model name" and not name:
            name = val.strip()
        elif key == "physical id":
            sockets.add(val.strip())
    return flags, name, len(sockets) or 1


def _cache(index):
    try:
        with open(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size") as f:
            v = f.read().strip()
        return int(v[:-1]) * 1024 if v.endswith("K") else int(v)
    except (OSError, ValueError):
        return 0


def get_cpu_capability() -> dict:
    flags, name, sockets = _cpuinfo()
    caps = {key: flag in flags for key, flag in _FLAGS.items()}
    logical = os.cpu_count() or 1
    caps.update({
        "architecture": platform.machine(), "cpu_name": name, "num_sockets": sockets,
        "num_logical_cores": logical, "num_physical_cores": logical // (2 if "ht" in flags and logical > 1 else 1),
        "l1d_cache_size": _cache(0), "l2_cache_size": _cache(2),
    })
    return caps


def cpu_capability_name() -> str:
    """`torch._C._get_cpu_capability()`: the vector ISA level the kernels run (the one decision in
    torchnative_core/cpu_capability.py: upstream's detection, lowered by ATEN_CPU_CAPABILITY)."""
    from .. import cpu_capability

    return cpu_capability.chosen()


def install(C) -> None:
    from .placeholders import module_for

    module_for(C, "torch._C._cpu")._get_cpu_capability = get_cpu_capability
    C._get_cpu_capability = cpu_capability_name

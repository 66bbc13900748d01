"""Build flags of `torch._C`, true to what torchnative is: no CUDA, no cuDNN, no MKL/oneDNN, no
LAPACK, no OpenMP. A flag without an answer here makes `import torch._C` fail rather than guess
(the stubs list them; `check_complete` enforces it)."""

BOOL_FLAGS = {
    "_GLIBCXX_USE_CXX11_ABI": True,
    "_has_cuda": False,
    "_has_cudnn": False,
    "_has_cusparselt": False,
    "_has_kleidiai": False,
    "_has_magma": False,
    "_has_mkldnn": False,
    "_has_mkldnn_acl": False,
    "_has_mps": False,
    "_has_xpu": False,
    "has_lapack": False,
    "has_mkl": False,
    "has_openmp": False,
    "has_spectral": False,
}


def check_complete(surface: dict) -> None:
    missing = [
        name
        for name, ann in surface["torch._C"]["variables"].items()
        if ann == "_bool" and name not in BOOL_FLAGS
    ]
    if missing:
        raise ImportError(f"torchnative: build flags without an answer: {missing}")


def install(C) -> None:
    for name, value in BOOL_FLAGS.items():
        setattr(C, name, value)

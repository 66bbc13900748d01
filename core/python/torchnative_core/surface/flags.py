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


def _state_flags(C) -> None:
    """`_get_X`/`_set_X` pairs of global switches, defaulting to upstream's values
    (data/flag_defaults.json, written by tools/gen_flag_defaults.py from the reference build)."""
    import json
    from importlib import resources

    defaults = json.loads(resources.files("torchnative_core.data").joinpath("flag_defaults.json").read_text())["flags"]
    state = dict(defaults)
    for name in defaults:
        if name == "tracing_state":
            continue

        def getter(name=name):
            return state[name]

        def setter(value, name=name):
            state[name] = value

        getter.__name__, setter.__name__ = "_get_" + name, "_set_" + name
        setattr(C, getter.__name__, getter)
        setattr(C, setter.__name__, setter)


def install(C) -> None:
    for name, value in BOOL_FLAGS.items():
        setattr(C, name, value)
    _state_flags(C)

"""`torch._C._export`: the PT2 archive's layout names, which `torch.export.pt2_archive` (and so
`torch.export` and `torch.compile`) reads at import.

The values are upstream's `torch/csrc/export/pt2_archive_constants.h` as torch 2.13.0 exposes
them (`torch._C._export.pt2_archive_constants`, read from the reference environment); an archive
written here must be readable by upstream and the reverse, so they are data, not choices."""

from __future__ import annotations

PT2_ARCHIVE_CONSTANTS = {
    "AOTINDUCTOR_DIR": "data/aotinductor/",
    "ARCHIVE_FORMAT_PATH": "archive_format",
    "ARCHIVE_FORMAT_VALUE": "pt2",
    "ARCHIVE_ROOT_NAME": "package",
    "ARCHIVE_VERSION_PATH": "archive_version",
    "ARCHIVE_VERSION_VALUE": "0",
    "CONSTANTS_CONFIG_FILENAME_FORMAT": "data/constants/{}_constants_config.json",
    "CONSTANTS_DIR": "data/constants/",
    "CONSTANTS_PARAM_CONFIG_FORMAT": "data/constants/{}_model_constants_config.json",
    "CUSTOM_OBJ_FILENAME_PREFIX": "custom_obj_",
    "EXECUTORCH_DIR": "data/executorch/",
    "EXTRA_DIR": "extra/",
    "MODELS_DIR": "models/",
    "MODELS_FILENAME_FORMAT": "models/{}.json",
    "MODULE_INFO_PATH": "extra/module_info.json",
    "MTIA_DIR": "data/mtia",
    "OPAQUE_OBJ_FILENAME_PREFIX": "opaque_obj_",
    "SAMPLE_INPUTS_DIR": "data/sample_inputs/",
    "SAMPLE_INPUTS_FILENAME_FORMAT": "data/sample_inputs/{}.pt",
    "TENSOR_CONSTANT_FILENAME_PREFIX": "tensor_",
    "TS_SAMPLE_INPUTS_FILENAME_FORMAT": "extra/{}.forward.sample_input.pt",
    "WEIGHTS_CONFIG_FILENAME_FORMAT": "data/weights/{}_weights_config.json",
    "WEIGHTS_DIR": "data/weights/",
    "WEIGHTS_PARAM_CONFIG_FORMAT": "data/weights/{}_model_param_config.json",
    "WEIGHT_FILENAME_PREFIX": "weight_",
    "XL_MODEL_WEIGHTS_DIR": "xl_model_weights/",
    "XL_MODEL_WEIGHTS_PARAM_CONFIG_PATH": "xl_model_weights/model_param_config",
}


def _get_max_operator_version():
    # The newest operator version this build reads and writes (upstream's
    # caffe2::serialize::kProducedFileFormatVersion, 10 in torch 2.13.0): torch.export's
    # serializer stamps it into saved programs and checks it on load.
    return 10


def install(C) -> None:
    from .placeholders import module_for

    _get_max_operator_version.__module__ = "torch._C"
    C._get_max_operator_version = _get_max_operator_version

    constants = module_for(C, "torch._C._export.pt2_archive_constants")
    for name, value in PT2_ARCHIVE_CONSTANTS.items():
        setattr(constants, name, value)

"""Every transformers model type, shrunk, on both sides (issue 5 item 7).

    python3 tools/model_sweep.py run [--types a,b] [--cache DIR] [--json OUT] [--write-status]
                                     [--timeout S] [--workers N] [--perturb]

`run` drives two interpreters in subprocess batches: upstream's (build/ref-python) *records*,
ours (.venv/bin/python) *replays*.

record (upstream): for each model type in transformers' CONFIG_MAPPING, the default config is
shrunk generically (hidden sizes, layers, heads, intermediate sizes, vocabulary, image/patch
sizes, audio lengths, nested sub-configs; several shrink levels are tried, smallest first), the
model class (the base model from MODEL_MAPPING, else the first task head that has the type) is
built with seeded weights, dummy inputs are made from its main_input_name and forward signature
(input_ids/attention_mask, decoder_input_ids, pixel_values, input_features, input_values; both
text and pixels when the model needs both), and the forward runs in float32, in float64 (the same
weights: upstream's own rounding error) and, with --perturb, with every activation module's output
scaled by 1.001 (the fault the tolerance must catch). Written with torch.save: config, class,
all parameters and buffers, inputs, outputs.

replay (ours): builds the same class from the same config without running weight initialisation
(the weights are loaded, as from_pretrained would), loads every parameter and buffer, runs the
forward on the same inputs and compares every floating tensor of the output in plain Python numbers.

Outcome per model type:
  agrees                 every output within TOL_MULTIPLE x upstream's float32-vs-float64 error
                         (per output tensor, plus a floor of FLOOR x its largest magnitude; elements
                         upstream computes far apart in the two dtypes, such as fully masked
                         padding rows, each within TOL_MULTIPLE x their own error), or, where
                         upstream cannot run the model in float64, within FIXED_REL x it
  disagrees              forward ran; the largest difference and its tolerance are recorded
  refused                NotImplementedError naming the missing operator
  error                  any other exception on ours (type and message)
  unbuildable            upstream itself cannot build or run the shrunken model (excluded)

Results are cached per model type under --cache (default build/model_sweep), so an interrupted
sweep resumes; a worker that hangs past --timeout or crashes costs only its current model type.
--write-status replaces the block between the model-sweep markers in docs/transformers.md.
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = REPO / ".venv" / "bin" / "python"
BEGIN, END = "<!-- model-sweep:begin -->", "<!-- model-sweep:end -->"
TOL_MULTIPLE = 4  # as tests/test_transformers_archs.py
FLOOR = 1e-6  # relative to the output's largest magnitude: outputs upstream computes exactly in float32 too
FIXED_REL = 1e-5  # where upstream has no float64 run: relative to the output's largest magnitude
MAX_PARAMS = 30_000_000
SEED = 0
BATCH, SEQ = 2, 8

# ---------------------------------------------------------------------------------------------
# shrinking (record side)

HIDDEN = {"hidden_size", "d_model", "n_embd", "embed_dim", "dim", "n_embed", "d_embed", "word_embed_proj_dim",
          "projection_dim", "text_embed_dim", "vision_embed_dim", "model_dim", "embedding_size", "hidden_dim",
          "encoder_hidden_size", "decoder_hidden_size", "emb_dim", "d_hidden", "projection_size", "proj_dim",
          "embedding_dim", "text_hidden_size", "vision_hidden_size", "audio_hidden_size", "output_hidden_size",
          "mm_hidden_size", "hidden_channels", "input_dim", "output_dim", "latent_dim", "d_latents",
          "qformer_hidden_size", "cross_attention_hidden_size", "hidden_act_dim", "num_channels_out",
          "hidden_size_per_layer_input", "attention_hidden_size"}
INTERMEDIATE = {"intermediate_size", "ffn_dim", "n_inner", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "d_inner",
                "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_intermediate_size", "mlp_dim",
                "ff_dim", "expert_intermediate_size", "intermediate_size_mlp", "feed_forward_size", "ffn_hidden_size",
                "encoder_intermediate_size", "dim_feedforward", "encoder_ffn_hidden_size", "decoder_ffn_hidden_size",
                "dense_intermediate_size"}
LAYERS = {"num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
          "num_decoder_layers", "num_encoder_layers", "decoder_num_hidden_layers", "encoder_num_hidden_layers",
          "num_text_layers", "num_vision_layers", "depth", "text_num_hidden_layers", "vision_num_hidden_layers",
          "num_block_records", "num_hidden_groups"}
HEADS = {"num_attention_heads", "n_head", "n_heads", "encoder_attention_heads", "decoder_attention_heads",
         "num_heads", "attention_heads", "num_attention_heads_text", "decoder_num_attention_heads",
         "encoder_num_attention_heads"}
KV_HEADS = {"num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num", "n_head_kv"}
HEAD_DIM = {"head_dim", "kv_channels", "attention_head_dim", "attention_head_size", "qk_rope_head_dim",
            "qk_nope_head_dim", "v_head_dim", "qk_head_dim", "d_kv", "key_value_proj_dim", "head_size", "rotary_dim",
            "rotary_emb_dim"}
LORA = {"kv_lora_rank", "q_lora_rank"}
EXPERTS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "num_routed_experts"}
EXPERTS_PER_TOK = {"num_experts_per_tok", "moe_topk", "top_k", "num_experts_per_token", "moe_k"}
VOCAB = {"vocab_size", "n_vocab", "text_vocab_size", "entity_vocab_size", "vocab_size_per_layer_input",
         "decoder_vocab_size", "target_vocab_size"}
GROUPS = {"n_group", "topk_group", "n_groups", "mamba_n_groups", "num_groups_routing"}
POSITIONS = {"max_position_embeddings", "n_positions", "max_seq_len", "max_sequence_length", "n_ctx",
             "max_target_positions", "max_text_positions"}
LIST_WIDTHS = {"hidden_sizes", "embed_dims", "dims", "hidden_dims", "conv_dim", "embedding_dims", "channels",
               "neck_hidden_sizes", "encoder_hidden_sizes", "decoder_hidden_sizes", "widths", "out_channels",
               "embed_dim_per_stage", "dim_per_stage", "reassemble_hidden_sizes", "hidden_size_per_stage",
               "num_filters", "tdnn_dim", "projection_dims"}
LIST_DEPTHS = {"depths", "num_layers_per_stage", "layers", "num_encoder_blocks", "depths_per_stage", "stage_depths",
               "layer_depths", "num_blocks"}
LIST_HEADS = {"num_heads", "num_attention_heads", "heads", "num_heads_per_stage", "attention_heads"}
SPECIAL_TOKEN = re.compile(r".*_token_id$|.*_token_index$|^(pad|bos|eos|sep|cls|unk|mask)_id$")


def _levels():
    """Shrink levels, smallest first: (hidden, intermediate, heads, kv heads, head_dim, vocab, layers, image)."""
    return [
        dict(hidden=32, inter=64, heads=4, kv=2, head_dim=8, vocab=128, layers=2, image="small"),
        # the same with multimodal rotary sections for models whose code defaults them to a wide head
        dict(hidden=32, inter=64, heads=4, kv=2, head_dim=8, vocab=128, layers=2, image="small", mrope=True),
        dict(hidden=64, inter=128, heads=4, kv=2, head_dim=16, vocab=256, layers=2, image="small"),
        dict(hidden=64, inter=128, heads=4, kv=2, head_dim=16, vocab=256, layers=2, image="default"),
        dict(hidden=None, inter=None, heads=None, kv=None, head_dim=None, vocab=1024, layers=1, image="default"),
    ]


def _shrink_dict(d, lv, depth=0):
    """A shrunken copy of a config's to_dict(); nested sub-config dicts shrink the same way."""
    out = dict(d)
    for k, v in d.items():
        if isinstance(v, dict) and depth < 3 and ("model_type" in v or k.endswith("config")):
            out[k] = _shrink_dict(v, lv, depth + 1)
            continue
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int):
            if k in HIDDEN and lv["hidden"] and v > lv["hidden"]:
                out[k] = lv["hidden"]
            elif k in INTERMEDIATE and lv["inter"] and v > lv["inter"]:
                out[k] = lv["inter"]
            elif k in LAYERS and v > lv["layers"]:
                out[k] = lv["layers"]
            elif k in HEADS and lv["heads"] and v > lv["heads"]:
                out[k] = lv["heads"]
            elif k in KV_HEADS and lv["kv"] and v > lv["kv"]:
                out[k] = lv["kv"]
            elif k in HEAD_DIM and lv["head_dim"] and v > lv["head_dim"]:
                out[k] = lv["head_dim"]
            elif k in LORA and lv["head_dim"] and v > 2 * lv["head_dim"]:
                out[k] = 2 * lv["head_dim"]
            elif k in EXPERTS and v > 4:
                out[k] = 4
            elif k in EXPERTS_PER_TOK and v > 2:
                out[k] = 2
            elif k in GROUPS and v > 1 and lv["heads"]:
                out[k] = 1
            elif k == "mamba_n_heads" and lv["heads"] and v > lv["heads"]:
                out[k] = lv["heads"]
            elif k in VOCAB and v > lv["vocab"]:
                out[k] = lv["vocab"]
            elif k in POSITIONS and v > 4096:
                out[k] = 512
            elif k in ("image_size", "input_size", "img_size") and lv["image"] == "small":
                patch = d.get("patch_size") if isinstance(d.get("patch_size"), int) else 8
                out[k] = max(32, 4 * patch) if v > 4 * patch else v
            elif k == "num_frames" and v > 4:
                out[k] = 4
            elif k in ("max_source_positions",) and v > 64:
                out[k] = 64
            elif k in ("num_mel_bins", "feature_size") and v > 32 and lv["hidden"]:
                out[k] = 32 if k == "num_mel_bins" else v
        elif isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            if k in LIST_DEPTHS:
                out[k] = [min(x, 1) for x in v]
            elif k in LIST_HEADS and lv["heads"]:
                out[k] = [min(x, 2) for x in v]
            elif k in LIST_WIDTHS and lv["hidden"] and max(v) > lv["hidden"]:
                top = max(v)
                out[k] = [max(8, (x * lv["hidden"] * 2 // top) // 4 * 4) for x in v]
            elif k in ("image_size", "input_size") and lv["image"] == "small" and len(v) == 2 and min(v) > 64:
                out[k] = [64, 64]
    # no timm, no downloads; backbones report their last stage
    for k, v in (("use_timm_backbone", False), ("use_pretrained_backbone", False), ("out_features", None),
                 ("out_indices", None)):
        if k in d and d[k] != v:
            out[k] = v
    if "prediction_length" in d and d["prediction_length"] is None:
        out["prediction_length"] = 4
    # lists sized by the layer count (layer_types, block patterns) follow the shrunken count, keeping
    # one layer of each kind (a hybrid model keeps an attention layer); dicts keyed by layer index too
    for lk in LAYERS:
        if lk in d and isinstance(d[lk], int) and out.get(lk) != d[lk]:
            for k, v in d.items():
                if isinstance(v, list) and len(v) == d[lk] and k not in LIST_DEPTHS | LIST_WIDTHS | LIST_HEADS:
                    kinds = []
                    for x in v:
                        if x not in kinds:
                            kinds.append(x)
                    n = max(out[lk], min(len(kinds), 4))
                    out[lk] = n
                    picked = [v.index(x) for x in kinds[:n]]
                    picked += [i for i in range(len(v)) if i not in picked][: n - len(picked)]
                    out[k] = [v[i] for i in sorted(picked)]
                elif isinstance(v, dict) and v and all(str(x).isdigit() for x in v):
                    out[k] = {x: y for x, y in v.items() if int(x) < out[lk]}
    # periodic layer patterns (attention every k layers) fit in the shrunken count
    n_layers = next((out[k] for k in ("num_hidden_layers", "num_layers", "n_layer") if isinstance(out.get(k), int)), None)
    if n_layers:
        for k, v in d.items():
            if isinstance(v, int) and not isinstance(v, bool) and k.endswith("_period") and v > n_layers:
                out[k] = n_layers
            elif isinstance(v, int) and not isinstance(v, bool) and k.endswith("_offset") and "layer" in k and v >= n_layers:
                out[k] = n_layers - 1
    if "kv_lora_rank" in d and isinstance(out.get("num_key_value_heads"), int):  # latent attention: one kv head per head
        out["num_key_value_heads"] = out.get("num_attention_heads", out["num_key_value_heads"])
    if isinstance(out.get("qk_nope_head_dim"), int) and isinstance(out.get("qk_rope_head_dim"), int) and "qk_head_dim" in d:
        out["qk_head_dim"] = out["qk_nope_head_dim"] + out["qk_rope_head_dim"]
    hidden = next((out[k] for k in ("hidden_size", "d_model") if isinstance(out.get(k), int)), None)
    heads = out.get("num_attention_heads") if isinstance(out.get("num_attention_heads"), int) else None
    # state-space blocks: heads x head_dim must cover expand x hidden
    if hidden and isinstance(out.get("expand"), int) and isinstance(out.get("num_heads"), int) and "head_dim" in out:
        out["head_dim"] = hidden * out["expand"] // out["num_heads"]
    if hidden and isinstance(out.get("mamba_n_heads"), int) and "mamba_d_head" in d:
        out["mamba_d_head"] = hidden * (out.get("mamba_expand") or 2) // out["mamba_n_heads"]
    # multimodal rotary sections sum to half the head dimension
    head_dim = out.get("head_dim") if isinstance(out.get("head_dim"), int) else (hidden // heads if hidden and heads else None)
    for rk in ("rope_scaling", "rope_parameters"):
        rope = out.get(rk)
        if head_dim and isinstance(rope, dict) and lv.get("mrope") and "mrope_section" not in rope:
            rope = {**rope, "mrope_section": [0, 0, 0]}
        if head_dim and isinstance(rope, dict) and isinstance(rope.get("mrope_section"), list):
            sec = rope["mrope_section"]
            total = int(head_dim * (rope.get("partial_rotary_factor") or out.get("partial_rotary_factor") or 1)) // 2
            if sum(sec) != total:
                base, rem = divmod(total, len(sec))
                out[rk] = {**rope, "mrope_section": [base + (1 if i < rem else 0) for i in range(len(sec))]}
    vocab = next((out[k] for k in VOCAB if isinstance(out.get(k), int)), None)
    if vocab is not None:
        taken = vocab - 1
        for k, v in list(out.items()):
            if isinstance(v, int) and not isinstance(v, bool) and SPECIAL_TOKEN.match(k) and v >= vocab:
                out[k] = taken
                taken -= 1
            elif isinstance(v, list) and SPECIAL_TOKEN.match(k) and any(isinstance(x, int) and x >= vocab for x in v):
                out[k] = [vocab - 1 - i for i in range(len(v))]
    return out


def _model_class(model_type):
    import transformers
    from transformers.models.auto import modeling_auto as ma

    mappings = ["MODEL_MAPPING_NAMES"] + sorted(k for k in dir(ma) if k.startswith("MODEL_FOR_") and k.endswith("_MAPPING_NAMES"))
    for m in mappings:
        names = getattr(ma, m).get(model_type)
        if names:
            name = names if isinstance(names, str) else names[0]
            return name, getattr(transformers, name)
    # sub-configs (align_text_model, blip_2_vision_model, ...) have no auto mapping: the class named
    # after the config (AlignTextConfig -> AlignTextModel)
    cfg_name = type(transformers.CONFIG_MAPPING[model_type]()).__name__
    for name in (cfg_name.removesuffix("Config") + "Model", cfg_name.removesuffix("Config")):
        cls = getattr(transformers, name, None)
        if isinstance(cls, type) and hasattr(cls, "_from_config"):
            return name, cls
    raise LookupError(f"no model class for {model_type}")


# ---------------------------------------------------------------------------------------------
# inputs (record side)

def _find(cfg, names, default=None):
    """The first of `names` on cfg or on one of its sub-configs (vision first for image keys)."""
    for c in [cfg] + [getattr(cfg, s, None) for s in ("vision_config", "audio_config", "encoder_config", "text_config",
                                                      "encoder", "backbone_config")]:
        if c is None:
            continue
        for n in names:
            v = getattr(c, n, None)
            if v is not None and not isinstance(v, bool):
                return v
    return default


def _image_shape(cfg):
    size = _find(cfg, ["image_size", "input_size", "img_size"], 32)
    if isinstance(size, dict):
        size = [size.get("height", 32), size.get("width", 32)]
    if isinstance(size, (list, tuple)):
        h, w = (size[-2], size[-1]) if len(size) >= 2 else (size[0], size[0])
    else:
        h = w = size
    ch = _find(cfg, ["num_channels", "in_channels", "in_chans", "num_input_channels"], 3)
    if not isinstance(ch, int):
        ch = 3
    return ch, int(h), int(w)


def _candidate_inputs(model, cfg, torch):
    """Input dicts to try, most plausible first."""
    sig = inspect.signature(model.forward).parameters
    g = torch.Generator().manual_seed(1234)
    main = getattr(model, "main_input_name", "input_ids")
    vocab = _find(cfg, ["vocab_size"], 100)
    vocab = vocab if isinstance(vocab, int) else 100
    hi = max(4, min(vocab - 2, 90))
    ids = torch.randint(3, hi, (BATCH, SEQ), generator=g)
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    mask[1, :2] = 0
    text = {"input_ids": ids}
    if "attention_mask" in sig:
        text["attention_mask"] = mask
    ch, h, w = _image_shape(cfg)
    pixels = torch.randn(BATCH, ch, h, w, generator=g)
    feats = _find(cfg, ["num_mel_bins", "feature_size", "input_feat_per_channel", "n_mels"], 80)
    feats = feats if isinstance(feats, int) else 80
    src = _find(cfg, ["max_source_positions"], None)
    frames = 2 * src if isinstance(src, int) else 64
    cands = []
    base = {}
    if "decoder_input_ids" in sig:
        base["decoder_input_ids"] = torch.randint(3, hi, (BATCH, SEQ - 2), generator=g)
    video_frames = _find(cfg, ["num_frames"], None)
    if main == "pixel_values" and isinstance(video_frames, int):  # video: (batch, frames, channels, height, width)
        cands += [{"pixel_values": torch.randn(BATCH, video_frames, ch, h, w, generator=g)}]
    if main == "pixel_values":
        cands += [{"pixel_values": pixels}, {"pixel_values": pixels, **text}]
    elif main == "input_features":
        cands += [{"input_features": torch.randn(BATCH, feats, frames, generator=g)},
                  {"input_features": torch.randn(BATCH, frames, feats, generator=g)}]
    elif main == "input_values":
        cands += [{"input_values": torch.randn(BATCH, 4000, generator=g)},
                  {"input_values": torch.randn(BATCH, feats, frames, generator=g)},
                  {"input_values": torch.randn(BATCH, 1, 4000, generator=g)}]
    elif main in ("input_ids", "inputs_embeds") or main not in sig:
        cands += [dict(text)]
        if "pixel_values" in sig:
            cands += [{**text, "pixel_values": pixels}]
    else:
        cands += [dict(text)]
    if "pixel_values" in sig and main != "pixel_values":
        cands += [{**text, "pixel_values": pixels}]
    out, seen = [], set()
    for c in cands:
        c = {**base, **c}
        sig_ = tuple((k, tuple(v.shape)) for k, v in c.items())
        if sig_ not in seen:
            seen.add(sig_)
            out.append(c)
    return out


def _flat_outputs(out, torch, prefix="out"):
    """Every floating tensor of a model output, by path."""
    res = {}
    if isinstance(out, torch.Tensor):
        if out.is_floating_point():
            res[prefix] = out
    elif isinstance(out, dict) or hasattr(out, "to_tuple"):
        items = out.items() if isinstance(out, dict) else zip(out.keys(), out.to_tuple())
        for k, v in items:
            res.update(_flat_outputs(v, torch, f"{prefix}.{k}"))
    elif isinstance(out, (list, tuple)):
        for i, v in enumerate(out):
            res.update(_flat_outputs(v, torch, f"{prefix}[{i}]"))
    return res


def _is_activation(module):
    mod = type(module).__module__
    return (mod in ("torch.nn.modules.activation", "transformers.activations")
            or type(module).__name__.lower().endswith(("gelu", "activation", "silu", "swish")))


def _forward(model, inputs, torch):
    torch.manual_seed(SEED)
    with torch.no_grad():
        return model(**inputs)


def _to(inputs, dtype, torch):
    return {k: v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in inputs.items()}


class Timeout(Exception):
    pass


def _on_alarm(*_):
    raise Timeout()


def _meta_params(cls, cfg, torch):
    try:
        with torch.device("meta"):
            return sum(p.numel() for p in cls._from_config(cfg).parameters())
    except Exception:  # noqa: BLE001 - some models cannot build on meta: counted after the real build
        return 0


def record_one(model_type, out_dir, perturb):
    import torch
    import transformers

    name, cls = _model_class(model_type)
    default = transformers.CONFIG_MAPPING[model_type]()
    tried = []
    for lv in _levels():
        try:
            d = _shrink_dict(default.to_dict(), lv)
            d.pop("model_type", None)
            d.pop("transformers_version", None)
            cfg = type(default).from_dict(d)
            n = _meta_params(cls, cfg, torch)  # counted before paying for a real build
            if n > MAX_PARAMS:
                tried.append(f"{n} parameters after shrinking")
                continue
            torch.manual_seed(SEED)
            model = cls._from_config(cfg).eval()
        except Exception as e:  # noqa: BLE001 - the next shrink level may build
            tried.append(f"build: {type(e).__name__}: {str(e)[:200]}")
            continue
        n = sum(p.numel() for p in model.parameters())
        if n > MAX_PARAMS:
            tried.append(f"{n} parameters after shrinking")
            continue
        for inputs in _candidate_inputs(model, cfg, torch):
            try:
                out = _flat_outputs(_forward(model, inputs, torch), torch)
            except Exception as e:  # noqa: BLE001 - the next input set may run
                tried.append(f"forward({','.join(inputs)}): {type(e).__name__}: {str(e)[:200]}")
                continue
            if not out:
                tried.append("no floating output")
                continue
            rec = {"model_type": model_type, "class": name, "config": cfg.to_dict(),
                   "attn": getattr(model.config, "_attn_implementation", None), "params": n,
                   "inputs": inputs, "out32": {k: v.detach().clone() for k, v in out.items()},
                   "state": {**{k: v.detach().clone() for k, v in model.named_parameters(remove_duplicate=False)},
                             **{k: v.detach().clone() for k, v in model.named_buffers(remove_duplicate=False)}}}
            try:
                m64 = model.to(torch.float64)
                o64 = _flat_outputs(_forward(m64, _to(inputs, torch.float64, torch), torch), torch)
                rec["out64"] = {k: o64[k].detach().clone() for k in out if k in o64}
                model = model.to(torch.float32)
            except Exception as e:  # noqa: BLE001 - fixed bound instead
                rec["out64_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                torch.manual_seed(SEED)
                model = cls._from_config(cfg).eval()
                model.load_state_dict({k: v for k, v in rec["state"].items()}, strict=False)
            if perturb:
                calls = [0]

                def hook(_m, _i, o):
                    calls[0] += 1
                    return o * 1.001 if isinstance(o, torch.Tensor) else o

                hs = [m.register_forward_hook(hook) for m in model.modules() if _is_activation(m)]
                try:
                    op = _flat_outputs(_forward(model, inputs, torch), torch)
                    if calls[0]:
                        rec["perturbed"] = {k: op[k].detach().clone() for k in out if k in op}
                except Exception:  # noqa: BLE001
                    pass
                for h in hs:
                    h.remove()
            torch.save(rec, out_dir / f"{model_type}.pt")
            return {"status": "recorded", "class": name, "params": n, "inputs": list(inputs),
                    "float64": "out64" in rec, "detail": "; ".join(tried)[-600:]}
    return {"status": "unbuildable", "class": name, "detail": "; ".join(tried)[-900:]}


# ---------------------------------------------------------------------------------------------
# replay (ours)

def _flat_list(t):
    return t.detach().double().reshape(-1).tolist()


WILD = 1e-3  # an element upstream itself computes this far apart in float32 and float64 (relative to the output's scale)


def tolerance(ref32, ref64):
    """(base, per_element): base is TOL_MULTIPLE x upstream's float32-vs-float64 error over the
    well-conditioned elements plus FLOOR x the output's largest magnitude (FIXED_REL x it where
    upstream has no float64 run). Elements upstream itself computes more than WILD x scale apart
    (fully masked padding rows, say) get TOL_MULTIPLE x their own error instead, so one of them
    cannot widen the bound for the rest; non-finite values must match exactly."""
    scale = max((abs(x) for x in ref32 if math.isfinite(x)), default=0.0)
    if ref64 is None:
        return FIXED_REL * max(scale, 1e-3), None
    errs = [abs(a - b) if math.isfinite(a) and math.isfinite(b) else None for a, b in zip(ref32, ref64)]
    wild = WILD * scale
    tame = [e for e in errs if e is not None and e <= wild]
    base = TOL_MULTIPLE * max(tame, default=0.0) + FLOOR * scale
    per = [TOL_MULTIPLE * e if e is not None and e > wild else 0.0 for e in errs]
    return base, per


def _ratio(ref, mine, base, per):
    """The largest |mine - ref| / allowed over the elements (inf where non-finite values differ)."""
    worst, worst_diff = 0.0, 0.0
    for i, (a, b) in enumerate(zip(ref, mine)):
        if not (math.isfinite(a) and math.isfinite(b)):
            if not (a == b or (math.isnan(a) and math.isnan(b))):
                return math.inf, math.inf
            continue
        d = abs(a - b)
        allowed = max(base, per[i]) if per else base
        r = d / allowed if allowed > 0 else (0.0 if d == 0 else math.inf)
        worst, worst_diff = max(worst, r), max(worst_diff, d)
    return worst, worst_diff


def compare(rec_out32, rec_out64, got, torch):
    """(agrees, worst) with worst = (key, diff, tol, ratio, note) of the output furthest from agreeing."""
    worst = None
    for key, ref in rec_out32.items():
        if key not in got:
            return False, (key, math.inf, 0.0, math.inf, "missing output")
        mine = got[key]
        if list(mine.shape) != list(ref.shape) or str(mine.dtype) != str(ref.dtype):
            return False, (key, math.inf, 0.0, math.inf, f"shape/dtype {list(mine.shape)} {mine.dtype}, "
                                                         f"upstream {list(ref.shape)} {ref.dtype}")
        a, b = _flat_list(ref), _flat_list(mine)
        r64 = _flat_list(rec_out64[key]) if rec_out64 is not None and key in rec_out64 else None
        if r64 is not None and len(r64) != len(a):  # a data-dependent shape (keypoints): no float64 counterpart
            r64 = None
        base, per = tolerance(a, r64)
        ratio, diff = _ratio(a, b, base, per)
        if worst is None or ratio > worst[3]:
            worst = (key, diff, base, ratio, "")
    return (worst is None or worst[3] <= 1.0), worst


def _missing_op(msg):
    sys.path.insert(0, str(REPO / "tools"))
    from coverage_report import REFUSAL

    m = REFUSAL.search(msg)
    if m:
        return next(g for g in m.groups() if g).removesuffix(".default")
    m = re.match(r"([\w.]+) is not implemented by torchnative", msg)  # a torch._C function of ours
    if m:
        return m.group(1)
    m = re.search(r"aten[.:]+([\w.]+)", msg)
    return m.group(1) if m else msg[:80]


def replay_one(model_type, rec_path):
    import torch
    import transformers
    from transformers.initialization import no_init_weights

    rec = torch.load(rec_path, weights_only=False)
    cls = getattr(transformers, rec["class"])
    cfg_cls = transformers.CONFIG_MAPPING[model_type]
    d = dict(rec["config"])
    d.pop("model_type", None)
    d.pop("transformers_version", None)
    try:
        cfg = cfg_cls.from_dict(d)  # attention implementations resolve as upstream's did (same transformers)
        torch.manual_seed(SEED)
        with no_init_weights():
            model = cls._from_config(cfg).eval()
        model.tie_weights()  # no_init_weights skips init_weights, which ties
        state = rec["state"]
        own = dict(model.named_parameters(remove_duplicate=False))
        own.update(model.named_buffers(remove_duplicate=False))
        missing = sorted(set(own) - set(state))
        if missing:
            return {"status": "error", "detail": f"parameters upstream did not record: {missing[:5]}"}
        with torch.no_grad():
            for k, t in own.items():
                src = state[k]
                if t.shape != src.shape:
                    return {"status": "error", "detail": f"{k}: shape {list(t.shape)}, upstream {list(src.shape)}"}
                if t.dtype != src.dtype:
                    return {"status": "error", "detail": f"{k}: dtype {t.dtype}, upstream {src.dtype}"}
                t.copy_(src)
        got = _flat_outputs(_forward(model, rec["inputs"], torch), torch)
    except NotImplementedError as e:
        msg = str(e)
        return {"status": "refused", "missing": _missing_op(msg), "detail": msg[:300]}
    except Timeout:
        raise
    except Exception as e:  # noqa: BLE001 - classed as error with its type and message
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if "site-packages/torch/" not in f.filename), "")
        return {"status": "error", "detail": f"{type(e).__name__}: {str(e)[:300]}", "where": where}
    ok, worst = compare(rec["out32"], rec.get("out64"), got, torch)
    res = {"status": "agrees" if ok else "disagrees", "outputs": len(rec["out32"]), "float64": "out64" in rec}
    if worst:
        res.update(worst_output=worst[0], max_diff=worst[1], tolerance=worst[2], ratio=worst[3])
        if worst[4]:
            res["detail"] = worst[4]
    if "perturbed" in rec:
        pok, pworst = compare(rec["out32"], rec.get("out64"), rec["perturbed"], torch)
        res["fault_caught"] = not pok
        if pworst:
            res["fault_ratio"] = pworst[3]
    return res


# ---------------------------------------------------------------------------------------------
# worker: one interpreter, a list of model types, one JSON result file per type

def worker(side, types, cache, timeout, perturb):
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch
    import transformers  # noqa: F401

    torch.set_num_threads(1)
    from transformers.utils import logging

    logging.set_verbosity_error()
    cache = Path(cache)
    rec_dir, res_dir = cache / "ref", cache / side
    res_dir.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGALRM, _on_alarm)
    for mt in types:
        (res_dir / f"{mt}.started").write_text(str(time.time()))
        t0 = time.time()
        signal.alarm(timeout)
        try:
            if side == "ref":
                res = record_one(mt, rec_dir, perturb)
            else:
                res = replay_one(mt, rec_dir / f"{mt}.pt")
        except Timeout:
            res = {"status": "unbuildable" if side == "ref" else "error", "detail": f"timeout after {timeout}s"}
        except NotImplementedError as e:
            res = {"status": "refused", "missing": _missing_op(str(e)), "detail": str(e)[:300]}
        except Exception as e:  # noqa: BLE001
            res = {"status": "unbuildable" if side == "ref" else "error", "detail": f"{type(e).__name__}: {str(e)[:300]}"}
        finally:
            signal.alarm(0)
        res["seconds"] = round(time.time() - t0, 2)
        (res_dir / f"{mt}.json").write_text(json.dumps(res))
        (res_dir / f"{mt}.started").unlink(missing_ok=True)
        print(mt, res["status"], flush=True)


# ---------------------------------------------------------------------------------------------
# driver

def all_types():
    import transformers.models.auto.configuration_auto as ca

    return sorted(ca.CONFIG_MAPPING_NAMES)


def _ref_python():
    p = REPO / "build" / "ref-python"
    if p.exists():
        return p.read_text().strip()
    return str(Path.home() / ".cache" / "torchnative" / "ref-2.13.0" / "bin" / "python")


def _started_at(marker):
    """When a worker began the model of `marker`; now if the worker finished it meanwhile (the
    marker is removed as the model ends, between the listing and the read)."""
    try:
        return float(marker.read_text() or 0)
    except FileNotFoundError:
        return time.time()


def _run_side(side, types, cache, timeout, workers, perturb, python):
    """Run `types` through `workers` subprocesses of `python`, restarting after a crash or hang;
    the type a dead worker was on is recorded as such."""
    res_dir = cache / side
    res_dir.mkdir(parents=True, exist_ok=True)
    todo = [t for t in types if not (res_dir / f"{t}.json").exists()]
    if side == "ours":
        todo = [t for t in todo if (cache / "ref" / f"{t}.pt").exists()]
    env = dict(os.environ, PYTHONPATH=str(REPO / "core" / "python") if side == "ours" else "",
               OMP_NUM_THREADS="1", TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false")
    if side == "ref":
        env.pop("PYTHONPATH")
    while todo:
        chunks = [todo[i::workers] for i in range(workers)]
        procs = []
        for chunk in chunks:
            if not chunk:
                continue
            cmd = [python, str(Path(__file__).resolve()), "worker", side, ",".join(chunk), "--cache", str(cache),
                   "--timeout", str(timeout)] + (["--perturb"] if perturb else [])
            log = open(cache / f"{side}.log", "a")
            procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO)), chunk, log))
        for p, chunk, log in procs:
            # a hard deadline past the per-model alarms, for hangs the alarm cannot interrupt
            deadline = time.time() + (timeout + 30) * len(chunk) + 60
            while p.poll() is None:
                stuck = [s for s in res_dir.glob("*.started") if s.stem in chunk and time.time() - _started_at(s) > timeout + 60]
                if stuck or time.time() > deadline:
                    p.kill()
                    break
                time.sleep(1)
            p.wait()
            log.close()
        for s in list(res_dir.glob("*.started")):
            mt = s.stem
            status = "unbuildable" if side == "ref" else "error"
            (res_dir / f"{mt}.json").write_text(json.dumps({"status": status, "detail": "the worker process died (crash or hang)"}))
            s.unlink()
        todo = [t for t in todo if not (res_dir / f"{t}.json").exists()]


def collect(cache, types):
    results = {}
    for mt in types:
        rp = cache / "ref" / f"{mt}.json"
        if not rp.exists():
            continue
        ref = json.loads(rp.read_text())
        if ref["status"] != "recorded":
            results[mt] = {"status": "unbuildable", "upstream": ref}
            continue
        op = cache / "ours" / f"{mt}.json"
        if not op.exists():
            continue
        ours = json.loads(op.read_text())
        results[mt] = {**ours, "class": ref.get("class"), "params": ref.get("params"), "inputs": ref.get("inputs")}
    return results


STATUSES = ("agrees", "disagrees", "refused", "error", "unbuildable")


def summarize(results):
    counts = collections.Counter(r["status"] for r in results.values())
    blockers = collections.Counter()
    for r in results.values():
        if r["status"] == "refused":
            blockers[f"refused: {r.get('missing')}"] += 1
        elif r["status"] == "error":
            blockers["error: " + re.sub(r"\d+", "N", r.get("detail", ""))[:90]] += 1
    caught = [r.get("fault_caught") for r in results.values() if r["status"] == "agrees" and "fault_caught" in r]
    return counts, blockers, caught


def unbuildable_reason(detail):
    """A coarse class for why upstream could not build or run a shrunken type."""
    parts = [x for x in detail.split("; ") if x]
    if any("timm" in x or "PIL" in x for x in parts):
        return "needs timm or PIL (not installed)"
    if "no model class" in detail:
        return "no model class"
    if parts and all("parameters after shrinking" in x for x in parts):
        return "over 30M parameters after shrinking"
    if any("required positional argument" in x or "You have to specify" in x or "You must specify" in x for x in parts):
        return "forward needs model-specific inputs"
    if any("validat" in x.lower() for x in parts):
        return "config validation rejects the generic shrink"
    if "timeout" in detail or "died" in detail:
        return "timeout or crash"
    return "other exception while building or running"


def status_text(results, command):
    counts, blockers, caught = summarize(results)
    built = sum(counts[s] for s in STATUSES if s != "unbuildable")
    lines = [f"Measured {time.strftime('%Y-%m-%d')} with `{command}`: {len(results)} model types tried, "
             f"{built} built by upstream from a shrunken config.",
             "",
             f"**{counts['agrees']} of {built} agree**; {counts['disagrees']} run but disagree, "
             f"{counts['refused']} refused by name, {counts['error']} error; {counts['unbuildable']} upstream cannot "
             f"build or run shrunken (excluded)."]
    if caught:
        lines.append(f"A 0.1% activation fault (upstream's own run with every activation scaled by 1.001) is rejected "
                     f"for {sum(caught)} of the {len(caught)} agreeing types that have activation modules.")
    reasons = collections.Counter(unbuildable_reason(r.get("upstream", {}).get("detail", ""))
                                  for r in results.values() if r["status"] == "unbuildable")
    if reasons:
        lines += ["", "Upstream cannot build or run shrunken: " + "; ".join(f"{k} ({n})" for k, n in reasons.most_common())]
    if blockers:
        lines += ["", "Blockers (model types blocked): " + "; ".join(f"{k} ({n})" for k, n in blockers.most_common(25))]
    for s in ("agrees", "disagrees", "refused", "error"):
        names = sorted(mt for mt, r in results.items() if r["status"] == s)
        if not names:
            continue
        if s == "disagrees":
            items = [f"{mt} ({results[mt].get('max_diff', 0):.2g} vs {results[mt].get('tolerance', 0):.2g})" for mt in names]
        elif s == "refused":
            items = [f"{mt} ({results[mt].get('missing')})" for mt in names]
        else:
            items = names
        lines += ["", f"{s} ({len(names)}): " + ", ".join(items)]
    return "\n".join(lines)


def run(args):
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    types = [t for t in args.types.split(",") if t] if args.types else all_types_via(OURS)
    t0 = time.time()
    _run_side("ref", types, cache, args.timeout, args.workers, args.perturb, _ref_python())
    _run_side("ours", types, cache, args.timeout, args.workers, args.perturb, str(OURS))
    results = collect(cache, types)
    counts, blockers, caught = summarize(results)
    summary = {"types": len(results), "counts": dict(counts), "seconds": round(time.time() - t0, 1),
               "blockers": blockers.most_common(40)}
    print(json.dumps(summary))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"summary": summary, "results": results}, indent=1, sort_keys=True))
    if args.write_status:
        sys.path.insert(0, str(REPO / "tools"))
        from coverage_report import write_status

        command = "python3 tools/model_sweep.py run --perturb --json docs/bench/model_sweep.json --write-status"
        write_status(status_text(results, command), begin=BEGIN, end=END, heading="transformers model sweep",
                     doc="transformers.md")
    return results


def all_types_via(python):
    out = subprocess.run([str(python), str(Path(__file__).resolve()), "types"], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO / "core" / "python")), check=True)
    return out.stdout.split()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["run", "worker", "types"])
    ap.add_argument("side", nargs="?")
    ap.add_argument("types_arg", nargs="?")
    ap.add_argument("--types", default="")
    ap.add_argument("--cache", default=str(REPO / "build" / "model_sweep"))
    ap.add_argument("--json", default="")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--perturb", action="store_true")
    ap.add_argument("--write-status", action="store_true")
    args = ap.parse_args(argv)
    if args.mode == "types":
        print("\n".join(all_types()))
    elif args.mode == "worker":
        worker(args.side, args.types_arg.split(","), args.cache, args.timeout, args.perturb)
    else:
        args.workers = max(1, min(args.workers, 2))
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

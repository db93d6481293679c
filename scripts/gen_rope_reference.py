#!/usr/bin/env python3
"""Generate the transformers RoPE reference files in tests/rotary/hf/.

The expected values come from transformers' own code: each model's rotary embedding
class (e.g. ``Qwen3RotaryEmbedding(config)``) evaluated under float32 on CPU. The C++
tests read the files; CI does not need transformers.

Two interpreters are involved:

* transformers 5.23.0 + torch 2.15.0 (this process) writes, per case,
  ``<case>.v5.json``     config built with the transformers config class and written by
                         ``save_pretrained`` (``rope_parameters``), semantics "v5";
  ``<case>.legacy.json`` the Hub's older config.json form (``rope_theta`` +
                         ``rope_scaling``), loaded by transformers 5, semantics "v5".
                         The script asserts that it gives exactly the v5 form's values.
* transformers 4.46.3 (run as a subprocess with PYTHONPATH pointing at a ``--target``
  install of it) writes ``<case>.t4.json`` for the legacy configs 4.46 supports,
  semantics "t4.46".

Usage (see tests/rotary/hf/README.md):

    /var/cache/posenc/venv-torch-2.15.0/bin/python scripts/gen_rope_reference.py \\
        --t4-path /var/cache/posenc/t4463

The output is deterministic: rerunning it rewrites identical files. A final pass checks
every file's fields and shapes, and that each table is fl32(att) * cos/sin(fl32(p * w))
within 1 ulp.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "tests" / "rotary" / "hf"

V5_VERSION = "5.23.0"
T4_VERSION = "4.46.3"
TORCH_VERSION = "2.15.0"

BASE_POSITIONS = [0, 1, 2, 7, 100, 1000, 4095]

# --------------------------------------------------------------------------------------
# Real models' configurations, typed as their Hub config.json has them (the "legacy" form:
# rope_theta + rope_scaling). Fields that do not bear on RoPE and would need other
# machinery (quantization_config, auto_map, architectures) are left out.
# --------------------------------------------------------------------------------------

# microsoft/Phi-3-mini-128k-instruct (first release): 48 = (3072/32)/2 factors each.
PHI3_LONG_FACTOR = [
    1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0799999237060547,
    1.2299998998641968, 1.2299998998641968, 1.2999999523162842, 1.4499999284744263,
    1.5999999046325684, 1.6499998569488525, 1.8999998569488525, 2.859999895095825,
    3.68999981880188, 5.419999599456787, 5.489999771118164, 5.489999771118164,
    9.09000015258789, 11.579999923706055, 15.65999984741211, 15.769999504089355,
    15.789999961853027, 18.360000610351562, 21.989999771118164, 23.079999923706055,
    30.009998321533203, 32.35000228881836, 32.590003967285156, 35.56000518798828,
    39.95000457763672, 53.840003967285156, 56.20000457763672, 57.95000457763672,
    59.29000473022461, 59.77000427246094, 59.920005798339844, 61.190006256103516,
    61.96000671386719, 62.50000762939453, 63.3700065612793, 63.48000717163086,
    63.48000717163086, 63.66000747680664, 63.850006103515625, 64.08000946044922,
    64.760009765625, 64.80001068115234, 64.81001281738281, 64.81001281738281,
]
PHI3_SHORT_FACTOR = [
    1.05, 1.05, 1.05, 1.1, 1.1, 1.1500000000000001, 1.2000000000000002, 1.2500000000000002,
    1.3000000000000003, 1.3500000000000003, 1.5000000000000004, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.1000000000000005,
    2.1000000000000005, 2.1000000000000005, 2.1500000000000004, 2.1500000000000004,
    2.3499999999999996, 2.549999999999999, 2.5999999999999988, 2.5999999999999988,
    2.7499999999999982, 2.849999999999998, 2.849999999999998, 2.9499999999999975,
]
assert len(PHI3_LONG_FACTOR) == 48 and len(PHI3_SHORT_FACTOR) == 48

LLAMA2_7B = {
    "attention_bias": False,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 11008,
    "max_position_embeddings": 4096,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": None,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "use_cache": True,
    "vocab_size": 32000,
}


def _with(base: dict, **changes) -> dict:
    d = copy.deepcopy(base)
    d.update(changes)
    return d


def _gpt_oss_layer_types(n: int) -> list[str]:
    return ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(n)]


# Each case: name, the legacy (Hub) config.json, the v5 config's rope_parameters (what
# transformers 5's config class is built with), which 4.46 class (if any) handles the
# legacy form, the seq_len values whose frequencies differ (dynamic, longrope), and
# notes. "text_config": the rope config lives in config["text_config"].
CASES = [
    {
        "name": "llama-2-7b",
        "model": "meta-llama/Llama-2-7b-hf",
        "rule": "default",
        "legacy": LLAMA2_7B,
        "v5_rope": {"rope_type": "default", "rope_theta": 10000.0},
        "t4": "llama",
    },
    {
        "name": "vicuna-7b-v1.5-16k-linear",
        "model": "lmsys/vicuna-7b-v1.5-16k (Llama 2 with linear factor 4)",
        "rule": "linear",
        "legacy": _with(LLAMA2_7B, rope_scaling={"factor": 4.0, "type": "linear"}),
        "v5_rope": {"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0},
        "t4": "llama",
    },
    {
        "name": "llama-2-7b-dynamic",
        "model": "meta-llama/Llama-2-7b-hf with rope_scaling dynamic factor 2 (the documented dynamic-NTK use)",
        "rule": "dynamic",
        "legacy": _with(LLAMA2_7B, rope_scaling={"factor": 2.0, "type": "dynamic"}),
        "v5_rope": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0},
        "t4": "llama",
        # at max_position_embeddings (4096) and below: unscaled; above: NTK base grows with seq_len
        "seq_lens": [4096, 4097, 20000],
    },
    {
        "name": "llama-3.1-8b",
        "model": "meta-llama/Llama-3.1-8B",
        "rule": "llama3",
        "legacy": {
            "attention_bias": False,
            "attention_dropout": 0.0,
            "bos_token_id": 128000,
            "eos_token_id": 128001,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "initializer_range": 0.02,
            "intermediate_size": 14336,
            "max_position_embeddings": 131072,
            "mlp_bias": False,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "rope_theta": 500000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_cache": True,
            "vocab_size": 128256,
        },
        "v5_rope": {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        "t4": "llama",
    },
    {
        "name": "qwen3-8b-yarn",
        "model": "Qwen/Qwen3-8B with the model card's YaRN setting (factor 4, original 32768)",
        "rule": "yarn",
        "legacy": {
            "attention_bias": False,
            "attention_dropout": 0.0,
            "bos_token_id": 151643,
            "eos_token_id": 151645,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "initializer_range": 0.02,
            "intermediate_size": 12288,
            "max_position_embeddings": 40960,
            "max_window_layers": 36,
            "model_type": "qwen3",
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
            },
            "rope_theta": 1000000,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_cache": True,
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        "v5_rope": {
            "rope_type": "yarn",
            "rope_theta": 1000000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
        },
        # 4.46 has no qwen3: its Qwen2 classes take the same fields (Qwen2.5 uses this yarn form)
        "t4": "qwen2",
    },
    {
        "name": "phi-3-mini-128k",
        "model": "microsoft/Phi-3-mini-128k-instruct",
        "rule": "longrope",
        "legacy": {
            "attention_bias": False,
            "attention_dropout": 0.0,
            "bos_token_id": 1,
            "embd_pdrop": 0.0,
            "eos_token_id": 32000,
            "hidden_act": "silu",
            "hidden_size": 3072,
            "initializer_range": 0.02,
            "intermediate_size": 8192,
            "max_position_embeddings": 131072,
            "model_type": "phi3",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "original_max_position_embeddings": 4096,
            "pad_token_id": 32000,
            "resid_pdrop": 0.0,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "long_factor": PHI3_LONG_FACTOR,
                "short_factor": PHI3_SHORT_FACTOR,
                "type": "longrope",
            },
            "rope_theta": 10000.0,
            "sliding_window": 262144,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_cache": True,
            "vocab_size": 32064,
        },
        "v5_rope": {
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "long_factor": PHI3_LONG_FACTOR,
            "short_factor": PHI3_SHORT_FACTOR,
            "original_max_position_embeddings": 4096,
        },
        "t4": "longrope",
        # short regime (2048, 4096 = original), long regime (131072; its positions include 4096)
        "seq_lens": [2048, 4096, 131072],
        "extra_positions": [4096],
    },
    {
        "name": "phi-2",
        "model": "microsoft/phi-2",
        "rule": "default",
        "legacy": {
            "attention_dropout": 0.0,
            "bos_token_id": 50256,
            "embd_pdrop": 0.0,
            "eos_token_id": 50256,
            "hidden_act": "gelu_new",
            "hidden_size": 2560,
            "initializer_range": 0.02,
            "intermediate_size": 10240,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 2048,
            "model_type": "phi",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "partial_rotary_factor": 0.4,
            "qk_layernorm": False,
            "resid_pdrop": 0.1,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "use_cache": True,
            "vocab_size": 51200,
        },
        "v5_rope": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.4},
        "t4": "phi",
    },
    {
        "name": "gpt-oss-20b",
        "model": "openai/gpt-oss-20b",
        "rule": "yarn",
        "legacy": {
            "attention_bias": True,
            "attention_dropout": 0.0,
            "eos_token_id": 200002,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_act": "silu",
            "hidden_size": 2880,
            "initial_context_length": 4096,
            "initializer_range": 0.02,
            "intermediate_size": 2880,
            "layer_types": _gpt_oss_layer_types(24),
            "max_position_embeddings": 131072,
            "model_type": "gpt_oss",
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 24,
            "num_key_value_heads": 8,
            "num_local_experts": 32,
            "output_router_logits": False,
            "pad_token_id": 199999,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "rope_type": "yarn",
                "truncate": False,
            },
            "rope_theta": 150000,
            "router_aux_loss_coef": 0.9,
            "sliding_window": 128,
            "swiglu_limit": 7.0,
            "tie_word_embeddings": False,
            "use_cache": True,
            "vocab_size": 201088,
        },
        "v5_rope": {
            "rope_type": "yarn",
            "rope_theta": 150000.0,
            "factor": 32.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 4096,
        },
        "t4": None,
    },
    {
        "name": "deepseek-v3",
        "model": "deepseek-ai/DeepSeek-V3",
        "rule": "yarn",
        "legacy": {
            "attention_bias": False,
            "attention_dropout": 0.0,
            "aux_loss_alpha": 0.001,
            "bos_token_id": 0,
            "eos_token_id": 1,
            "ep_size": 1,
            "first_k_dense_replace": 3,
            "hidden_act": "silu",
            "hidden_size": 7168,
            "initializer_range": 0.02,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v3",
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_group": 8,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "norm_topk_prob": True,
            "num_attention_heads": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 128,
            "num_nextn_predict_layers": 1,
            "pretraining_tp": 1,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "rms_norm_eps": 1e-06,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
            "rope_theta": 10000,
            "routed_scaling_factor": 2.5,
            "scoring_func": "sigmoid",
            "seq_aux": True,
            "tie_word_embeddings": False,
            "topk_group": 4,
            "topk_method": "noaux_tc",
            "torch_dtype": "bfloat16",
            "use_cache": True,
            "v_head_dim": 128,
            "vocab_size": 129280,
        },
        "v5_rope": {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 40.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
        },
        "t4": None,
    },
    {
        "name": "deepseek-v3-mscale-ratio",
        "model": "DeepSeek-V3 layout with mscale 1.0 / mscale_all_dim 0.707 (synthetic: exercises the ratio; the real model has 1.0/1.0)",
        "rule": "yarn",
        "legacy": None,  # built from deepseek-v3 below
        "v5_rope": {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 40.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
            "original_max_position_embeddings": 4096,
        },
        "t4": None,
    },
    {
        "name": "gemma-3-1b",
        "model": "google/gemma-3-1b-it",
        "rule": "default (per layer type)",
        "legacy": {
            "attention_bias": False,
            "attention_dropout": 0.0,
            "attn_logit_softcapping": None,
            "bos_token_id": 2,
            "eos_token_id": [1, 106],
            "final_logit_softcapping": None,
            "head_dim": 256,
            "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": 1152,
            "initializer_range": 0.02,
            "intermediate_size": 6912,
            "max_position_embeddings": 32768,
            "model_type": "gemma3_text",
            "num_attention_heads": 4,
            "num_hidden_layers": 26,
            "num_key_value_heads": 1,
            "pad_token_id": 0,
            "query_pre_attn_scalar": 256,
            "rms_norm_eps": 1e-06,
            "rope_local_base_freq": 10000,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": 512,
            "sliding_window_pattern": 6,
            "torch_dtype": "bfloat16",
            "use_cache": True,
            "vocab_size": 262144,
        },
        "v5_rope": {
            "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
        "t4": None,
    },
    {
        "name": "gemma-3-4b",
        "model": "google/gemma-3-4b-it (multimodal: the text model's fields are in text_config)",
        "rule": "linear (full_attention) + default (sliding_attention)",
        "text_config": True,
        # The Hub file states only what differs from Gemma3TextConfig's defaults: rope_theta
        # (1e6) and rope_local_base_freq (1e4) are absent and come from the class defaults.
        "legacy": {
            "boi_token_index": 255999,
            "eoi_token_index": 256000,
            "eos_token_id": [1, 106],
            "image_token_index": 262144,
            "initializer_range": 0.02,
            "mm_tokens_per_image": 256,
            "model_type": "gemma3",
            "text_config": {
                "hidden_size": 2560,
                "intermediate_size": 10240,
                "model_type": "gemma3_text",
                "num_hidden_layers": 34,
                "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                "sliding_window": 1024,
            },
            "torch_dtype": "bfloat16",
            "vision_config": {
                "hidden_size": 1152,
                "image_size": 896,
                "intermediate_size": 4304,
                "model_type": "siglip_vision_model",
                "num_attention_heads": 16,
                "num_hidden_layers": 27,
                "patch_size": 14,
                "vision_use_head": False,
            },
        },
        "v5_rope": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
        "t4": None,
    },
    {
        "name": "gemma-4",
        "model": "Gemma 4 text model as transformers 5.23's Gemma4TextConfig defaults describe it "
        "(google/gemma-4-e2b-it layout: head_dim 256, global_head_dim 512, proportional 0.25 on "
        "full_attention), inside Gemma4Config.text_config",
        "rule": "proportional (full_attention) + default (sliding_attention)",
        "text_config": True,
        "legacy": None,  # Gemma 4 was published with rope_parameters only
        "v5_rope": {
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
        "t4": None,
    },
]

# Small synthetic layouts for fields the real models above leave at their defaults.
_PHI2 = next(c for c in CASES if c["name"] == "phi-2")
_SMALL_LLAMA = _with(LLAMA2_7B, hidden_size=1024, num_attention_heads=16, num_key_value_heads=16,
                     num_hidden_layers=2, intermediate_size=2816, max_position_embeddings=16384)
_SHORT24 = [round(1.0 + 0.05 * i, 2) for i in range(24)]
_LONG24 = [round(1.0 + 1.5 * i, 2) for i in range(24)]
CASES += [
    {
        "name": "phi-2-dynamic",
        "model": "microsoft/phi-2 with rope_scaling dynamic factor 2 (synthetic: the NTK exponent "
        "dim/(dim-2) is over the rotated width 32, not head_dim 80)",
        "rule": "dynamic",
        "legacy": _with(_PHI2["legacy"], rope_scaling={"factor": 2.0, "type": "dynamic"}),
        "v5_rope": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0, "partial_rotary_factor": 0.4},
        "t4": "phi",
        "seq_lens": [2048, 2049, 8192],
    },
    {
        "name": "yarn-partial-explicit",
        "model": "synthetic Llama layout (head_dim 64, partial_rotary_factor 0.5) with yarn and every "
        "optional key explicit: attention_factor 0.9, beta_fast 16, beta_slow 2, original 2048 "
        "(max_position_embeddings 16384)",
        "rule": "yarn",
        "legacy": _with(_SMALL_LLAMA, partial_rotary_factor=0.5, rope_theta=50000.0, rope_scaling={
            "rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048,
            "attention_factor": 0.9, "beta_fast": 16.0, "beta_slow": 2.0}),
        "v5_rope": {"rope_type": "yarn", "rope_theta": 50000.0, "partial_rotary_factor": 0.5, "factor": 8.0,
                    "original_max_position_embeddings": 2048, "attention_factor": 0.9, "beta_fast": 16.0,
                    "beta_slow": 2.0},
        "t4": "llama",
    },
    {
        "name": "longrope-partial-factor",
        "model": "synthetic Phi-3 layout (head_dim 64, partial_rotary_factor 0.75: 24 factors) with "
        "longrope and an explicit factor 16 (max/original is 8)",
        "rule": "longrope",
        "legacy": _with(_SMALL_LLAMA, model_type="phi3", max_position_embeddings=32768,
                        original_max_position_embeddings=4096, partial_rotary_factor=0.75,
                        rope_scaling={"type": "longrope", "factor": 16.0, "long_factor": _LONG24,
                                      "short_factor": _SHORT24}),
        "v5_rope": {"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.75,
                    "factor": 16.0, "long_factor": _LONG24, "short_factor": _SHORT24,
                    "original_max_position_embeddings": 4096},
        # 4.46's Phi3Config rejects a longrope rope_scaling with any key but type,
        # short_factor and long_factor
        "t4": None,
        "seq_lens": [4096, 4097],
    },
]

_DS = next(c for c in CASES if c["name"] == "deepseek-v3")
for _c in CASES:
    if _c["name"] == "deepseek-v3-mscale-ratio":
        _c["legacy"] = _with(_DS["legacy"], rope_scaling=dict(_DS["legacy"]["rope_scaling"], mscale_all_dim=0.707))


# --------------------------------------------------------------------------------------
# JSON writing: floats as repr(float) (round-trips exactly); numeric lists on one line.
# --------------------------------------------------------------------------------------


def _scalar(x) -> str:
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"non-finite value {x!r} in reference data")
        return repr(x)
    return json.dumps(x)


def dumps(obj, indent: int = 0) -> str:
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f'{pad}  {json.dumps(k)}: {dumps(v, indent + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if not obj:
            return "[]"
        if all(not isinstance(v, (dict, list)) for v in obj):
            return "[" + ", ".join(_scalar(v) for v in obj) + "]"
        items = [f"{pad}  {dumps(v, indent + 1)}" for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return _scalar(obj)


def write_json(path: Path, obj) -> None:
    path.write_text(dumps(obj) + "\n", encoding="utf-8")


def positions_for(seq_len, extra=()):
    """Positions evaluated for one seq_len: the base set (and the case's extra positions)
    below it, plus seq_len - 1 so that HF's forward (which takes seq_len =
    max(position_ids) + 1) sees exactly this seq_len."""
    if seq_len is None:
        return list(BASE_POSITIONS)
    return sorted({p for p in (*BASE_POSITIONS, *extra) if p < seq_len} | {seq_len - 1})


def f32_list(t) -> list[float]:
    import torch

    assert t.dtype == torch.float32, t.dtype
    return [float(v) for v in t.reshape(-1).tolist()]


def f32_rows(t) -> list[list[float]]:
    import torch

    assert t.dtype == torch.float32, t.dtype
    return [[float(v) for v in row] for row in t.tolist()]


# --------------------------------------------------------------------------------------
# transformers 5.x
# --------------------------------------------------------------------------------------

V5_CLASSES = {
    # model_type: (config module, config class, rotary module, rotary class)
    "llama": ("llama", "LlamaConfig", "LlamaRotaryEmbedding"),
    "qwen3": ("qwen3", "Qwen3Config", "Qwen3RotaryEmbedding"),
    "phi3": ("phi3", "Phi3Config", "Phi3RotaryEmbedding"),
    "phi": ("phi", "PhiConfig", "PhiRotaryEmbedding"),
    "gpt_oss": ("gpt_oss", "GptOssConfig", "GptOssRotaryEmbedding"),
    "deepseek_v3": ("deepseek_v3", "DeepseekV3Config", "DeepseekV3RotaryEmbedding"),
    "gemma3_text": ("gemma3", "Gemma3TextConfig", "Gemma3RotaryEmbedding"),
    "gemma3": ("gemma3", "Gemma3Config", "Gemma3RotaryEmbedding"),
    "gemma4_text": ("gemma4", "Gemma4TextConfig", "Gemma4TextRotaryEmbedding"),
    "gemma4": ("gemma4", "Gemma4Config", "Gemma4TextRotaryEmbedding"),
}


def _v5_module(pkg: str, kind: str):
    import importlib

    return importlib.import_module(f"transformers.models.{pkg}.{kind}_{pkg}")


def _v5_config_class(model_type: str):
    pkg, cfg_name, _ = V5_CLASSES[model_type]
    return getattr(_v5_module(pkg, "configuration"), cfg_name)


def _v5_rotary_class(model_type: str):
    pkg, _, rot_name = V5_CLASSES[model_type]
    return getattr(_v5_module(pkg, "modeling"), rot_name)


def _strip_rope(d: dict) -> dict:
    d = copy.deepcopy(d)
    for k in ("rope_scaling", "rope_theta", "rope_local_base_freq", "partial_rotary_factor", "torch_dtype"):
        d.pop(k, None)
    return d


def build_v5_config(case):
    """The config as transformers 5's config class builds it from rope_parameters."""
    legacy = case["legacy"]
    if case["name"] == "gemma-4":
        Gemma4TextConfig = _v5_config_class("gemma4_text")
        Gemma4Config = _v5_config_class("gemma4")
        text = Gemma4TextConfig(rope_parameters=copy.deepcopy(case["v5_rope"]), global_head_dim=512)
        return Gemma4Config(text_config=text, vision_config=None, audio_config=None)
    if case.get("text_config"):
        top = copy.deepcopy(legacy)
        text_kwargs = _strip_rope(top.pop("text_config"))
        text_kwargs.pop("model_type")
        TextCls = _v5_config_class(legacy["text_config"]["model_type"])
        text = TextCls(rope_parameters=copy.deepcopy(case["v5_rope"]), **text_kwargs)
        Top = _v5_config_class(legacy["model_type"])
        top.pop("model_type")
        top.pop("torch_dtype", None)
        return Top(text_config=text, **top)
    kwargs = _strip_rope(legacy)
    model_type = kwargs.pop("model_type")
    Cls = _v5_config_class(model_type)
    return Cls(rope_parameters=copy.deepcopy(case["v5_rope"]), **kwargs)


def _text(config):
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def v5_evaluate(config, case):
    """Run the model's rotary class on `config` (already loaded from a config.json)."""
    import torch

    text = _text(config)
    model_type = text.model_type
    Rot = _v5_rotary_class(model_type)
    per_layer = model_type in ("gemma3_text", "gemma4_text")
    layer_types = sorted(set(text.layer_types)) if per_layer else [None]
    seq_lens = case.get("seq_lens") or [None]
    layers = {}
    for lt in layer_types:
        evals = []
        rope_type = None
        for S in seq_lens:
            # a fresh module per seq_len: HF's dynamic/longrope update keeps state between calls
            with torch.device("cpu"):
                rot = Rot(config=text)
            rot = rot.to(torch.float32)
            pos = positions_for(S, case.get("extra_positions", ()))
            x = torch.zeros(1, 1, 1, dtype=torch.float32)
            pid = torch.tensor([pos], dtype=torch.int64)
            with torch.no_grad():
                if lt is None:
                    cos, sin = rot(x, pid)
                    inv = rot.inv_freq
                    att = rot.attention_scaling
                    rope_type = rot.rope_type
                else:
                    cos, sin = rot(x, pid, lt)
                    inv = getattr(rot, f"{lt}_inv_freq")
                    att = getattr(rot, f"{lt}_attention_scaling")
                    rope_type = rot.rope_type[lt]
            cos = cos[0]
            sin = sin[0]
            n = inv.shape[0]
            hf_width = cos.shape[-1]
            if hf_width == n:  # gpt-oss returns one copy of each phase; written in the half layout
                cos = torch.cat((cos, cos), dim=-1)
                sin = torch.cat((sin, sin), dim=-1)
            assert cos.shape == (len(pos), 2 * n), (cos.shape, n)
            ev = {
                "seq_len": S,
                "inv_freq": f32_list(inv.to(torch.float32)),
                "attention_scaling": float(att),
                "positions": pos,
                "cos": f32_rows(cos),
                "sin": f32_rows(sin),
            }
            if hf_width == n:
                ev["hf_cos_width"] = hf_width
            evals.append(ev)
        key = "default" if lt is None else lt
        layers[key] = {"rope_type": rope_type, "rotary_dim": 2 * len(evals[0]["inv_freq"]), "evaluations": evals}
    return layers


def v5_init_only(config, case, layer_type=None, seq_len=None):
    """inv_freq as ROPE_INIT_FUNCTIONS computes it for a Python int seq_len (no forward)."""
    import torch
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    text = _text(config)
    rp = text.rope_parameters if layer_type is None else text.rope_parameters[layer_type]
    fn = ROPE_INIT_FUNCTIONS[rp["rope_type"]]
    kw = {} if layer_type is None else {"layer_type": layer_type}
    inv, att = fn(text, torch.device("cpu"), seq_len=seq_len, **kw)
    return inv, att


def load_config_from_json(d: dict):
    from transformers import AutoConfig

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "config.json").write_text(json.dumps(d), encoding="utf-8")
        return AutoConfig.from_pretrained(tmp)


def save_and_read(config) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        config.save_pretrained(tmp)
        return json.loads((Path(tmp) / "config.json").read_text(encoding="utf-8"))


def file_header(case, suffix, semantics, form, version, config_dict, rotary_class):
    model_type = config_dict["model_type"]
    return {
        "case": f"{case['name']}.{suffix}",
        "model_type": model_type,
        "transformers": version,
        "semantics": semantics,
        "form": "v5" if form == "v5" else "legacy",
        "model": case["model"],
        "rule": case["rule"],
        "torch": TORCH_VERSION,
        "rotary_class": rotary_class,
        "rope_config_path": "text_config" if case.get("text_config") else "",
        "config": config_dict,
    }


def same_layers(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def run_v5(out: Path) -> list[dict]:
    import torch
    import transformers

    assert transformers.__version__ == V5_VERSION, transformers.__version__
    assert torch.__version__.split("+")[0] == TORCH_VERSION, torch.__version__
    torch.set_default_dtype(torch.float32)
    summary = []
    for case in CASES:
        cfg_obj = build_v5_config(case)
        v5_dict = save_and_read(cfg_obj)
        cfg_v5 = load_config_from_json(v5_dict)
        # the written file must describe the same config when read back
        assert save_and_read(cfg_v5) == v5_dict, f"{case['name']}: save/load round trip changed config.json"
        layers_v5 = v5_evaluate(cfg_v5, case)
        rot_name = V5_CLASSES[_text(cfg_v5).model_type][2]
        head = file_header(case, "v5", "v5", "v5", V5_VERSION, v5_dict, rot_name)
        doc = dict(head)
        extra = {}
        if case["legacy"] is not None:
            cfg_legacy = load_config_from_json(case["legacy"])
            layers_legacy = v5_evaluate(cfg_legacy, case)
            same = same_layers(layers_v5, layers_legacy)
            assert same, f"{case['name']}: legacy config gives different values than the v5 config"
            extra["legacy_form_identical"] = True
        if case["name"] == "gemma-4":
            # The same model written with `global_head_dim` (the Gemma4TextConfig argument) in
            # place of the `per_layer_config` head_dim overrides that save_pretrained writes.
            alt = copy.deepcopy(v5_dict)
            overrides = alt["text_config"].pop("per_layer_config")
            assert all(v == {"head_dim": 512} for v in overrides.values()), overrides
            alt["text_config"]["global_head_dim"] = 512
            layers_alt = v5_evaluate(load_config_from_json(alt), case)
            assert same_layers(layers_v5, layers_alt), "gemma-4: global_head_dim form differs"
            extra["equivalent_text_config_edit"] = {
                "remove": ["per_layer_config"],
                "add": {"global_head_dim": 512},
                "identical": True,
            }
        doc["layers"] = layers_v5
        doc.update(extra)
        write_json(out / f"{case['name']}.v5.json", doc)
        entry = {"case": case["name"], "files": [f"{case['name']}.v5.json"]}
        if case["legacy"] is not None:
            ldoc = file_header(case, "legacy", "v5", "legacy", V5_VERSION, case["legacy"], rot_name)
            ldoc["layers"] = layers_legacy
            ldoc["legacy_form_identical"] = True
            # What a user gets who loads the legacy file with transformers 5 and saves it
            # again (a fine-tuned checkpoint): rope_parameters with the legacy key spellings
            # kept ("type" beside "rope_type", integer factors). Same values, asserted.
            resaved = save_and_read(cfg_legacy)
            assert same_layers(layers_legacy, v5_evaluate(load_config_from_json(resaved), case)), case["name"]
            ldoc["config_resaved_by_v5"] = resaved
            write_json(out / f"{case['name']}.legacy.json", ldoc)
            entry["files"].append(f"{case['name']}.legacy.json")
        # dynamic: HF's forward computes the NTK base from a tensor seq_len; compare with the
        # plain-Python-int path of the same init function
        if case["rule"] == "dynamic":
            diffs = []
            for ev in layers_v5["default"]["evaluations"]:
                inv_py, _ = v5_init_only(cfg_v5, case, seq_len=ev["seq_len"])
                diffs.append(sum(1 for a, b in zip(f32_list(inv_py), ev["inv_freq"]) if a != b))
            entry["dynamic_forward_vs_int_seq_len_differing_entries"] = diffs
        summary.append(entry)
        print(f"v5: {case['name']}: {', '.join(entry['files'])}", flush=True)
    return summary


# --------------------------------------------------------------------------------------
# transformers 4.46.3 (child process)
# --------------------------------------------------------------------------------------


def run_t4(out: Path) -> list[dict]:
    import torch
    import transformers

    assert transformers.__version__ == T4_VERSION, transformers.__version__
    torch.set_default_dtype(torch.float32)
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    summary = []
    for case in CASES:
        kind = case["t4"]
        if kind is None:
            continue
        legacy = copy.deepcopy(case["legacy"])
        model_type = legacy.pop("model_type")
        seq_lens = case.get("seq_lens") or [None]
        evals = []
        if kind == "longrope":
            # 4.46's rule as modeling_rope_utils._compute_longrope_parameters writes it
            # (selected by seq_len; the rotary modules of 4.46 evaluate it at init only),
            # with the tables formed as LlamaRotaryEmbedding.forward forms them.
            from transformers import Phi3Config

            cfg = Phi3Config(**legacy)
            fn = ROPE_INIT_FUNCTIONS["longrope"]
            rot_name = "modeling_rope_utils._compute_longrope_parameters(config, seq_len)"
            for S in seq_lens:
                inv, att = fn(cfg, torch.device("cpu"), seq_len=S)
                pos = positions_for(S, case.get("extra_positions", ()))
                pid = torch.tensor(pos, dtype=torch.int64)
                freqs = pid[:, None].float() * inv[None, :].float()
                emb = torch.cat((freqs, freqs), dim=-1)
                cos = emb.cos() * att
                sin = emb.sin() * att
                evals.append((S, inv, att, pos, cos, sin))
            rope_type = "longrope"
        else:
            if kind == "llama":
                from transformers import LlamaConfig as C
                from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding as R
            elif kind == "qwen2":
                from transformers import Qwen2Config as C
                from transformers.models.qwen2.modeling_qwen2 import Qwen2RotaryEmbedding as R
            elif kind == "phi":
                from transformers import PhiConfig as C
                from transformers.models.phi.modeling_phi import PhiRotaryEmbedding as R
            else:
                raise AssertionError(kind)
            cfg = C(**legacy)
            rot_name = R.__name__
            for S in seq_lens:
                rot = R(config=cfg)
                pos = positions_for(S, case.get("extra_positions", ()))
                x = torch.zeros(1, 1, 1, dtype=torch.float32)
                pid = torch.tensor([pos], dtype=torch.int64)
                with torch.no_grad():
                    cos, sin = rot(x, pid)
                evals.append((S, rot.inv_freq, rot.attention_scaling, pos, cos[0], sin[0]))
                rope_type = rot.rope_type
        ev_docs = []
        for S, inv, att, pos, cos, sin in evals:
            ev_docs.append(
                {
                    "seq_len": S,
                    "inv_freq": f32_list(inv.to(torch.float32)),
                    "attention_scaling": float(att),
                    "positions": pos,
                    "cos": f32_rows(cos),
                    "sin": f32_rows(sin),
                }
            )
        doc = file_header(case, "t4", "t4.46", "legacy", T4_VERSION, case["legacy"], rot_name)
        if kind == "longrope":
            # 4.46's Phi-3 model did not use the function above but its own
            # Phi3LongRoPEScaledRotaryEmbedding; record whether that class gives transformers
            # 5's values (read from the .legacy.json file the v5 pass wrote).
            from transformers.models.phi3.modeling_phi3 import Phi3LongRoPEScaledRotaryEmbedding

            v5doc = json.loads((out / f"{case['name']}.legacy.json").read_text(encoding="utf-8"))
            same = True
            for ev in v5doc["layers"]["default"]["evaluations"]:
                rot = Phi3LongRoPEScaledRotaryEmbedding(len(ev["inv_freq"]) * 2, cfg)
                with torch.no_grad():
                    cos, sin = rot(torch.zeros(1, 1, 1), torch.tensor([ev["positions"]], dtype=torch.int64))
                same = same and f32_list(rot.inv_freq) == ev["inv_freq"] and f32_rows(cos[0]) == ev["cos"] \
                    and f32_rows(sin[0]) == ev["sin"]
            doc["phi3_model_class_t4_equals_v5"] = bool(same)
        doc["layers"] = {
            "default": {"rope_type": rope_type, "rotary_dim": 2 * len(ev_docs[0]["inv_freq"]), "evaluations": ev_docs}
        }
        write_json(out / f"{case['name']}.t4.json", doc)
        summary.append({"case": case["name"], "files": [f"{case['name']}.t4.json"]})
        print(f"t4: {case['name']}: {case['name']}.t4.json", flush=True)
    return summary


def check_files(out: Path) -> None:
    """Check every written file's shape, and that HF's tables are fl32(att) * cos/sin of the
    f32 phase fl32(p * inv_freq) in the half layout: within 1 ulp of max(1, att) (torch's
    f32 cos/sin and the f32 product by att are each within half an ulp or so). Also print how
    far they are from att * cos/sin of the exact phase p * inv_freq, the rounding of the
    f32 phase, which grows with p."""
    import numpy as np

    required = ["case", "model_type", "transformers", "semantics", "form", "config", "layers"]
    for f in sorted(out.glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        assert all(k in d for k in required), f
        assert d["case"] == f.name[: -len(".json")], (d["case"], f.name)
        assert d["semantics"] in ("v5", "t4.46") and d["form"] in ("v5", "legacy"), f
        worst_f32, worst_exact = 0.0, 0.0
        for L in d["layers"].values():
            for e in L["evaluations"]:
                inv = np.array(e["inv_freq"], dtype=np.float64)
                assert np.all(inv.astype(np.float32).astype(np.float64) == inv), f
                assert L["rotary_dim"] == 2 * inv.size, f
                pos = np.array(e["positions"], dtype=np.float64)
                att = e["attention_scaling"]
                ph32 = (pos.astype(np.float32)[:, None] * inv.astype(np.float32)[None, :]).astype(np.float64)
                exact = pos[:, None] * inv[None, :]  # exact: f32 * integer < 2^53
                unit = float(np.spacing(np.float32(max(1.0, att))))
                for key, fn in (("cos", np.cos), ("sin", np.sin)):
                    got = np.array(e[key], dtype=np.float64)
                    assert got.shape == (pos.size, 2 * inv.size), (f, key, got.shape)
                    # torch multiplies the f32 table by the Python float att rounded to f32
                    ref32 = np.concatenate([fn(ph32)] * 2, axis=1) * float(np.float32(att))
                    refx = np.concatenate([fn(exact)] * 2, axis=1) * att
                    worst_f32 = max(worst_f32, float(np.max(np.abs(got - ref32))) / unit)
                    worst_exact = max(worst_exact, float(np.max(np.abs(got - refx))))
        assert worst_f32 <= 1.0, (f.name, worst_f32)
        print(f"check {f.name}: tables vs att*cos(fl32(p*w)) {worst_f32:.2f} ulp; "
              f"vs att*cos(p*w) {worst_exact:.3g}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    ap.add_argument("--t4-path", type=Path, default=Path("/var/cache/posenc/t4463"),
                    help="a `pip install --target` directory holding transformers 4.46.3")
    ap.add_argument("--t4-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-t4", action="store_true", help="skip the transformers 4.46.3 files")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

    if args.t4_only:
        run_t4(args.out)
        return 0

    for stale in args.out.glob("*.json"):  # the set of cases decides the set of files
        stale.unlink()
    summary = run_v5(args.out)
    for entry in summary:
        if "dynamic_forward_vs_int_seq_len_differing_entries" in entry:
            print(f"{entry['case']}: inv_freq entries where forward (tensor seq_len) differs from "
                  f"the init function with an int seq_len, per evaluation: "
                  f"{entry['dynamic_forward_vs_int_seq_len_differing_entries']}")
    if not args.no_t4:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(args.t4_path)
        env["TRANSFORMERS_VERBOSITY"] = "error"
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--t4-only", "--out", str(args.out)],
                       env=env, check=True)
    check_files(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

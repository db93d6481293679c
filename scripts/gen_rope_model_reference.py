#!/usr/bin/env python3
"""Generate the per-model RoPE reference files in tests/rotary/hf/models/.

A sibling of gen_rope_reference.py for the model types whose transformers code decides more than
the rope dict: NoPE layers (Llama 4, SmolLM3, Qwen3-Next's linear-attention layers), position-
dependent query scales (Llama 4's attention temperature tuning, Ministral 3's
llama_4_scaling_beta), partial rotary under the default rule (GLM-4.5, Qwen3-Next), head_dim and
rope_theta class defaults, Hunyuan's ntk_alpha, the DeepSeek / Kimi K2 yarn family (beta_fast ==
beta_slow), Apertus, Seed-OSS, Granite, OLMo 3.

Each case is the rope-related part of a real model's config.json (typed here: no network), loaded
by the transformers 5.23 configuration class of its model_type; the expected values come from
transformers' own code under torch 2.15 on CPU:

* per layer type: the model's ``*RotaryEmbedding(config)`` inv_freq (float32) and
  attention_scaling;
* per layer index: whether the layer applies RoPE (``config.no_rope_layers[i]``, which the
  attention reads as ``use_rope``; a ``linear_attention`` layer has no rotary embedding);
* query scales at a list of positions: ``get_llama_4_attn_scale`` (Ministral 3) called as the
  attention calls it, and Llama 4's temperature tuning as ``Llama4TextAttention.forward``
  computes it (the expression is inline there; it is copied below verbatim).

Usage:

    /var/cache/posenc/venv-torch-2.15.0/bin/python scripts/gen_rope_model_reference.py
    /var/cache/posenc/venv-torch-2.15.0/bin/python scripts/gen_rope_model_reference.py --census

``--census`` writes tests/rotary/hf/model_types.txt instead: every model type of transformers'
CONFIG_MAPPING_NAMES whose configuration class, built from its defaults, carries
``rope_parameters`` (the configs whose attention applies RoPE), with its configuration class,
its models/ directory and a category: ``multi-axis`` when the rope dict has ``mrope_section`` or
the model's modeling files mention mrope / get_rope_index (M-RoPE, handled by mrope_config.hpp),
``non-text`` when the model type or class names another modality (NON_TEXT below), else
``text``. tests/rotary/models.test.cpp holds every ``text`` entry to posenc's table: a row in
rotary::model_rules or one in rotary::refused_model_types.

The output is deterministic: rerunning it rewrites identical files.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import sys
import warnings
from pathlib import Path

import torch
import transformers

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "tests" / "rotary" / "hf" / "models"
QUERY_POSITIONS = [0, 1, 2, 8190, 8191, 8192, 16383, 16384, 65535, 100000, 1048575, 10000000]

# (module, config class, rotary class) per model type
CLASSES = {
    "llama4_text": ("llama4", "Llama4TextConfig", "Llama4TextRotaryEmbedding"),
    "smollm3": ("smollm3", "SmolLM3Config", "SmolLM3RotaryEmbedding"),
    "glm4_moe": ("glm4_moe", "Glm4MoeConfig", "Glm4MoeRotaryEmbedding"),
    "qwen3_next": ("qwen3_next", "Qwen3NextConfig", "Qwen3NextRotaryEmbedding"),
    "ministral3": ("ministral3", "Ministral3Config", "Ministral3RotaryEmbedding"),
    "deepseek_v3": ("deepseek_v3", "DeepseekV3Config", "DeepseekV3RotaryEmbedding"),
    "deepseek_v2": ("deepseek_v2", "DeepseekV2Config", "DeepseekV2RotaryEmbedding"),
    "deepseek_v32": ("deepseek_v32", "DeepseekV32Config", "DeepseekV32RotaryEmbedding"),
    "hunyuan_v1_moe": ("hunyuan_v1_moe", "HunYuanMoEV1Config", "HunYuanMoEV1RotaryEmbedding"),
    "hunyuan_v1_dense": ("hunyuan_v1_dense", "HunYuanDenseV1Config", "HunYuanDenseV1RotaryEmbedding"),
    "seed_oss": ("seed_oss", "SeedOssConfig", "SeedOssRotaryEmbedding"),
    "apertus": ("apertus", "ApertusConfig", "ApertusRotaryEmbedding"),
    "granite": ("granite", "GraniteConfig", "GraniteRotaryEmbedding"),
    "olmo3": ("olmo3", "Olmo3Config", "Olmo3RotaryEmbedding"),
    "gemma3n_text": ("gemma3n", "Gemma3nTextConfig", "Gemma3nRotaryEmbedding"),
    "mixtral": ("mixtral", "MixtralConfig", "MixtralRotaryEmbedding"),
    "olmoe": ("olmoe", "OlmoeConfig", "OlmoeRotaryEmbedding"),
    "flex_olmo": ("flex_olmo", "FlexOlmoConfig", "FlexOlmoRotaryEmbedding"),
    "olmo_hybrid": ("olmo_hybrid", "OlmoHybridConfig", "OlmoHybridRotaryEmbedding"),
    "glm4_moe_lite": ("glm4_moe_lite", "Glm4MoeLiteConfig", "Glm4MoeLiteRotaryEmbedding"),
    "glm_moe_dsa": ("glm_moe_dsa", "GlmMoeDsaConfig", "GlmMoeDsaRotaryEmbedding"),
    "helium": ("helium", "HeliumConfig", "HeliumRotaryEmbedding"),
    "glm4": ("glm4", "Glm4Config", "Glm4RotaryEmbedding"),
    "glm": ("glm", "GlmConfig", "GlmRotaryEmbedding"),
}

LLAMA4_SCOUT_TEXT = {
    "attention_bias": False,
    "attention_chunk_size": 8192,
    "attn_scale": 0.1,
    "attn_temperature_tuning": True,
    "floor_scale": 8192,
    "head_dim": 128,
    "hidden_size": 5120,
    "interleave_moe_layer_step": 1,
    "max_position_embeddings": 10485760,
    "model_type": "llama4_text",
    "no_rope_layers": [],
    "num_attention_heads": 40,
    "num_hidden_layers": 48,
    "num_key_value_heads": 8,
    "rope_scaling": {
        "factor": 16.0,
        "high_freq_factor": 1.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "use_qk_norm": True,
}

CASES = [
    {
        "name": "gemma-3n-e4b",
        "model": "google/gemma-3n-E4B-it (text_config)",
        "config": {
            "model_type": "gemma3n",
            "text_config": {
                "head_dim": 256,
                "hidden_size": 2048,
                "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
                "max_position_embeddings": 32768,
                "model_type": "gemma3n_text",
                "num_attention_heads": 8,
                "num_hidden_layers": 35,
                "num_key_value_heads": 2,
                "rope_local_base_freq": 10000.0,
                "rope_scaling": None,
                "rope_theta": 1000000.0,
            },
        },
    },
    {
        "name": "llama-4-scout",
        "model": "meta-llama/Llama-4-Scout-17B-16E (text_config)",
        "config": {"model_type": "llama4", "text_config": LLAMA4_SCOUT_TEXT},
    },
    {
        "name": "llama-4-maverick",
        "model": "meta-llama/Llama-4-Maverick-17B-128E (text_config)",
        "config": {
            "model_type": "llama4",
            "text_config": dict(
                LLAMA4_SCOUT_TEXT,
                interleave_moe_layer_step=2,
                max_position_embeddings=1048576,
                rope_scaling=None,
                use_qk_norm=False,
            ),
        },
    },
    {
        "name": "llama-4-no-tuning-interval-3",
        "model": "Llama 4 text config with attn_temperature_tuning false and no_rope_layer_interval 3",
        "config": dict(LLAMA4_SCOUT_TEXT, attn_temperature_tuning=False, no_rope_layer_interval=3,
                       num_hidden_layers=10, rope_scaling=None),
    },
    {
        "name": "smollm3-3b",
        "model": "HuggingFaceTB/SmolLM3-3B",
        "config": {
            "hidden_size": 2048,
            "max_position_embeddings": 65536,
            "model_type": "smollm3",
            "no_rope_layer_interval": 4,
            "no_rope_layers": [int((i + 1) % 4 != 0) for i in range(36)],
            "num_attention_heads": 16,
            "num_hidden_layers": 36,
            "num_key_value_heads": 4,
            "rope_scaling": None,
            "rope_theta": 5000000.0,
            "use_sliding_window": False,
        },
    },
    {
        "name": "smollm3-interval",
        "model": "SmolLM3 config without no_rope_layers (the interval decides) and without rope_theta",
        "config": {
            "hidden_size": 2048,
            "max_position_embeddings": 65536,
            "model_type": "smollm3",
            "no_rope_layer_interval": 3,
            "num_attention_heads": 16,
            "num_hidden_layers": 12,
            "num_key_value_heads": 4,
        },
    },
    {
        "name": "glm-4.5",
        "model": "zai-org/GLM-4.5",
        "config": {
            "head_dim": 128,
            "hidden_size": 5120,
            "max_position_embeddings": 131072,
            "model_type": "glm4_moe",
            "num_attention_heads": 96,
            "num_hidden_layers": 92,
            "num_key_value_heads": 8,
            "partial_rotary_factor": 0.5,
            "rope_scaling": None,
            "rope_theta": 1000000,
        },
    },
    {
        "name": "glm-4.5-default-partial",
        "model": "GLM-4.5 config without partial_rotary_factor and head_dim (class defaults: 0.5, derived)",
        "config": {
            "hidden_size": 4096,
            "max_position_embeddings": 131072,
            "model_type": "glm4_moe",
            "num_attention_heads": 32,
            "num_hidden_layers": 46,
            "num_key_value_heads": 8,
            "rope_theta": 1000000,
        },
    },
    {
        "name": "qwen3-next-80b-a3b",
        "model": "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "config": {
            "full_attention_interval": 4,
            "head_dim": 256,
            "hidden_size": 2048,
            "max_position_embeddings": 262144,
            "model_type": "qwen3_next",
            "num_attention_heads": 16,
            "num_hidden_layers": 48,
            "num_key_value_heads": 2,
            "partial_rotary_factor": 0.25,
            "rope_scaling": None,
            "rope_theta": 10000000,
        },
    },
    {
        "name": "ministral-3-8b",
        "model": "mistralai/Ministral-3-8B-Instruct-2512 (text_config)",
        "config": {
            "model_type": "mistral3",
            "text_config": {
                "head_dim": 128,
                "hidden_size": 4096,
                "max_position_embeddings": 262144,
                "model_type": "ministral3",
                "num_attention_heads": 32,
                "num_hidden_layers": 34,
                "num_key_value_heads": 8,
                "rope_parameters": {
                    "beta_fast": 32.0,
                    "beta_slow": 1.0,
                    "factor": 16.0,
                    "llama_4_scaling_beta": 0.1,
                    "mscale": 1.0,
                    "mscale_all_dim": 1.0,
                    "original_max_position_embeddings": 16384,
                    "max_position_embeddings": 262144,
                    "rope_theta": 1000000.0,
                    "rope_type": "yarn",
                },
            },
        },
    },
    {
        "name": "kimi-k2",
        "model": "moonshotai/Kimi-K2-Instruct (model_type kimi_k2, read as deepseek_v3)",
        "as": "deepseek_v3",
        "config": {
            "hidden_size": 7168,
            "kv_lora_rank": 512,
            "max_position_embeddings": 131072,
            "model_type": "kimi_k2",
            "num_attention_heads": 64,
            "num_hidden_layers": 61,
            "num_key_value_heads": 64,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "rope_scaling": {
                "beta_fast": 1.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
            "rope_theta": 50000.0,
            "v_head_dim": 128,
        },
    },
    {
        "name": "deepseek-v3.2",
        "model": "deepseek-ai/DeepSeek-V3.2",
        "config": {
            "hidden_size": 7168,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v32",
            "num_attention_heads": 128,
            "num_hidden_layers": 61,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
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
        },
    },
    {
        "name": "deepseek-v2-lite",
        "model": "deepseek-ai/DeepSeek-V2-Lite",
        "config": {
            "hidden_size": 2048,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v2",
            "num_attention_heads": 16,
            "num_hidden_layers": 27,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 0.707,
                "mscale_all_dim": 0.707,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
            "rope_theta": 10000,
        },
    },
    {
        "name": "hunyuan-a13b",
        "model": "tencent/Hunyuan-A13B-Instruct",
        "config": {
            "head_dim": 128,
            "hidden_size": 4096,
            "max_position_embeddings": 32768,
            "model_type": "hunyuan_v1_moe",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rope_scaling": {
                "alpha": 1000.0,
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 1.0,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "type": "dynamic",
            },
            "rope_theta": 10000.0,
        },
    },
    {
        "name": "seed-oss-36b",
        "model": "ByteDance-Seed/Seed-OSS-36B-Instruct",
        "config": {
            "head_dim": 128,
            "hidden_size": 5120,
            "max_position_embeddings": 524288,
            "model_type": "seed_oss",
            "num_attention_heads": 80,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rope_scaling": {"rope_type": "default"},
            "rope_theta": 10000000.0,
        },
    },
    {
        "name": "apertus-8b",
        "model": "swiss-ai/Apertus-8B-2509",
        "config": {
            "hidden_size": 4096,
            "max_position_embeddings": 65536,
            "model_type": "apertus",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rope_scaling": {
                "factor": 8.0,
                "high_freq_factor": 4.0,
                "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "rope_theta": 12000000,
        },
    },
    {
        "name": "granite-3.3-8b",
        "model": "ibm-granite/granite-3.3-8b-instruct",
        "config": {
            "hidden_size": 4096,
            "max_position_embeddings": 131072,
            "model_type": "granite",
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "rope_scaling": None,
            "rope_theta": 10000000.0,
        },
    },
]


# model types added with the census (scripts/gen_rope_model_reference.py --census): a config shaped
# like a published one where its rope fields are known, else one built on the class's defaults
# (rope_theta, head_dim / qk_rope_head_dim and layer_types left out so that the class decides them)
CASES += [
    {
        "name": "mixtral-8x7b",
        "model": "mistralai/Mixtral-8x7B-v0.1",
        "config": {
            "hidden_size": 4096,
            "max_position_embeddings": 32768,
            "model_type": "mixtral",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rope_theta": 1000000.0,
        },
    },
    {
        "name": "mixtral-defaults",
        "model": "Mixtral config without rope_theta and head_dim (class defaults: 1e6, derived)",
        "config": {"hidden_size": 2048, "model_type": "mixtral", "num_attention_heads": 16, "num_hidden_layers": 4},
    },
    {
        "name": "olmoe-1b-7b",
        "model": "allenai/OLMoE-1B-7B-0924",
        "config": {
            "hidden_size": 2048,
            "max_position_embeddings": 4096,
            "model_type": "olmoe",
            "num_attention_heads": 16,
            "num_hidden_layers": 16,
            "num_key_value_heads": 16,
            "rope_scaling": None,
            "rope_theta": 10000.0,
        },
    },
    {
        "name": "flex-olmo-defaults",
        "model": "FlexOlmo config without rope_theta and head_dim (class defaults: 500000, derived)",
        "config": {"hidden_size": 4096, "model_type": "flex_olmo", "num_attention_heads": 32, "num_hidden_layers": 32},
    },
    {
        "name": "olmo-hybrid-defaults",
        "model": "OLMo Hybrid config without layer_types and rope_theta (every 4th layer full attention, 10000)",
        "config": {"hidden_size": 2048, "model_type": "olmo_hybrid", "num_attention_heads": 16, "num_hidden_layers": 10},
    },
    {
        "name": "olmo-hybrid-3-layers",
        "model": "OLMo Hybrid config with 3 layers and no layer_types (the last layer full attention), llama3 rule",
        "config": {
            "hidden_size": 2048,
            "model_type": "olmo_hybrid",
            "num_attention_heads": 16,
            "num_hidden_layers": 3,
            "max_position_embeddings": 65536,
            "rope_parameters": {
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        },
    },
    {
        "name": "glm4-moe-lite-defaults",
        "model": "GLM-4.7-Flash-shaped config without qk_rope_head_dim and rope_theta (class defaults: 64, 10000)",
        "config": {"hidden_size": 2048, "model_type": "glm4_moe_lite", "num_attention_heads": 20, "num_hidden_layers": 47},
    },
    {
        "name": "glm4-moe-lite-partial",
        "model": "glm4_moe_lite config with partial_rotary_factor 0.5 in rope_parameters (its default rule reads it), rope_interleave false",
        "config": {
            "hidden_size": 2048,
            "model_type": "glm4_moe_lite",
            "num_attention_heads": 20,
            "num_hidden_layers": 4,
            "qk_rope_head_dim": 64,
            "rope_interleave": False,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "partial_rotary_factor": 0.5},
        },
    },
    {
        "name": "helium-defaults",
        "model": "Helium config without rope_theta and head_dim (class defaults: 100000, 128)",
        "config": {"hidden_size": 2048, "model_type": "helium", "num_attention_heads": 16, "num_hidden_layers": 4},
    },
    {
        "name": "glm-4-9b",
        "model": "config shaped like THUDM/glm-4-9b-chat-hf (partial_rotary_factor 0.5, interleaved pairs)",
        "config": {
            "head_dim": 128,
            "hidden_size": 4096,
            "max_position_embeddings": 131072,
            "model_type": "glm4",
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 2,
            "partial_rotary_factor": 0.5,
            "rope_theta": 10000.0,
        },
    },
    {
        "name": "glm-partial",
        "model": "glm config (GLM-4 first generation) with partial_rotary_factor 0.5, interleaved pairs",
        "config": {
            "head_dim": 128,
            "hidden_size": 4096,
            "model_type": "glm",
            "num_attention_heads": 32,
            "num_hidden_layers": 4,
            "num_key_value_heads": 2,
            "partial_rotary_factor": 0.5,
            "rope_theta": 10000.0,
        },
    },
    {
        "name": "glm-moe-dsa-defaults",
        "model": "glm_moe_dsa config without qk_rope_head_dim and rope_theta (class defaults: 64, 10000)",
        "config": {"hidden_size": 6144, "model_type": "glm_moe_dsa", "num_attention_heads": 64, "num_hidden_layers": 4},
    },
    {
        "name": "glm-moe-dsa-head-dim",
        "model": "glm_moe_dsa config with head_dim 128 and no qk_rope_head_dim (the class replaces head_dim by qk_rope_head_dim, 64)",
        "config": {
            "head_dim": 128,
            "hidden_size": 6144,
            "model_type": "glm_moe_dsa",
            "num_attention_heads": 64,
            "num_hidden_layers": 4,
            "rope_theta": 1000000.0,
        },
    },
]


def text_of(config: dict) -> dict:
    return config.get("text_config", config)


def load(case: dict):
    cfg = copy.deepcopy(text_of(case["config"]))
    model_type = case.get("as", cfg["model_type"])
    module, config_cls, rotary_cls = CLASSES[model_type]
    cmod = importlib.import_module(f"transformers.models.{module}.configuration_{module}")
    mmod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    cfg.pop("model_type")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = getattr(cmod, config_cls)(**cfg)
    return config, mmod, getattr(mmod, rotary_cls)


def rotary_of(config, cls, layer_type):
    import inspect

    if "layer_type" in inspect.signature(cls.__init__).parameters:
        return cls(config, layer_type=layer_type)
    return cls(config)


def rope_type_of(rot, rp, lt, nested) -> str:
    t = getattr(rot, "rope_type", None)
    if isinstance(t, dict):  # one rotary module for every layer type (Gemma 3n)
        t = t[lt]
    return t or (rp[lt] if nested else rp)["rope_type"]


def f32_list(t: torch.Tensor) -> list[float]:
    return [float(x) for x in t.detach().to(torch.float32).reshape(-1).tolist()]


def generate(case: dict) -> dict:
    config, mmod, cls = load(case)
    layer_types = list(getattr(config, "layer_types", None) or [])
    rp = config.rope_parameters
    nested = [lt for lt in rp if lt in layer_types] if isinstance(rp, dict) and layer_types else []
    layers = {}
    for lt in nested or ["default"]:
        rot = rotary_of(config, cls, None if lt == "default" else lt)
        inv = rot.inv_freq if hasattr(rot, "inv_freq") else getattr(rot, f"{lt}_inv_freq")
        scaling = rot.attention_scaling if hasattr(rot, "attention_scaling") else getattr(rot, f"{lt}_attention_scaling")
        layers[lt] = {
            "rope_type": rope_type_of(rot, rp, lt, nested),
            "rotary_dim": 2 * inv.numel(),
            "inv_freq": f32_list(inv),
            "attention_scaling": float(scaling),
        }
    out = {
        "name": case["name"],
        "model": case["model"],
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "config": case["config"],
        "layers": layers,
    }
    n = config.num_hidden_layers
    rope_layers = None
    if getattr(config, "no_rope_layers", None) is not None:
        rope_layers = [bool(config.no_rope_layers[i]) for i in range(n)]  # the attention's use_rope
    if "linear_attention" in layer_types:
        rope_layers = [(rope_layers[i] if rope_layers else True) and layer_types[i] != "linear_attention" for i in range(n)]
    out["rope_layers"] = rope_layers
    pos = torch.tensor(QUERY_POSITIONS, dtype=torch.int64)
    query = None
    if text_of(case["config"])["model_type"] == "llama4_text" and config.attn_temperature_tuning:
        # Llama4TextAttention.forward, transformers 5.23 (inline there): positions = arange + past_seen_tokens
        positions = pos
        attn_scales = torch.log1p(torch.floor((positions.float() + 1.0) / config.floor_scale)) * config.attn_scale + 1.0
        query = {"nope_layers_only": True, "values": f32_list(attn_scales)}
    elif hasattr(mmod, "get_llama_4_attn_scale"):
        # Ministral3Attention.forward: get_llama_4_attn_scale(position_ids, beta, original_max_position_embeddings)
        s = mmod.get_llama_4_attn_scale(
            pos[None, :],
            config.rope_parameters.get("llama_4_scaling_beta"),
            config.rope_parameters.get("original_max_position_embeddings"),
        )
        query = {"nope_layers_only": False, "values": f32_list(s)}
    if query is not None:
        query["positions"] = QUERY_POSITIONS
    out["query_scale"] = query
    # the pair layout of the model's rotation: Llama 4 rotates (2i, 2i + 1) as complex numbers
    import inspect

    # DeepSeek-style MLA calls apply_rotary_pos_emb_interleave when config.rope_interleave is true;
    # GLM-MoE-DSA's attention (GlmMoeDsaAttention) calls it unconditionally and has no apply_rotary_pos_emb
    fn = getattr(mmod, "apply_rotary_emb", None) or getattr(mmod, "apply_rotary_pos_emb", None)
    if fn is None:
        attn = inspect.getsource(getattr(mmod, cls.__name__.replace("RotaryEmbedding", "Attention")).forward)
        out["interleaved"] = "apply_rotary_pos_emb_interleave(" in attn and "rope_interleave" not in attn
    else:
        # Llama 4 rotates (2i, 2i + 1) as complex numbers; GLM and Helium repeat each cos/sin twice
        # and rotate_half the pairs (x[..., 0::2], x[..., 1::2])
        out["interleaved"] = any(t in inspect.getsource(fn) for t in ("view_as_complex", "repeat_interleave(2")) or (
            hasattr(mmod, "apply_rotary_pos_emb_interleave") and bool(getattr(config, "rope_interleave", False))
        )
    return out


# a model type or configuration class naming a modality other than text (the census's non-text)
NON_TEXT = re.compile(
    r"vision|audio|video|speech|tts|asr|dit|codec|mimi|encoder|patcher|tracker|sam|dinov|vit|loftr|eomt|"
    r"diariz|transcribe|phonon|pixtral|mlcd|kyutai|moonshine|esm|timesfm|csm_depth|pe_",
    re.I,
)


def census() -> list[tuple[str, str, str, str]]:
    """(model_type, config class, models/ directory, category) of every model type with rope_parameters."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    rows = []
    for mt, cname in sorted(CONFIG_MAPPING_NAMES.items()):
        try:
            cls = CONFIG_MAPPING[mt]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rp = getattr(cls(), "rope_parameters", None)
        except Exception:  # a class that cannot be built from its defaults (a composite needing sub-configs)
            continue
        if rp is None:
            continue
        mod = importlib.import_module(cls.__module__)
        d = Path(mod.__file__).parent
        src = "".join(f.read_text() for f in sorted(d.glob("modeling_*.py")))
        if "mrope_section" in str(rp) or "mrope" in src or "get_rope_index" in src:
            cat = "multi-axis"
        elif NON_TEXT.search(mt + " " + cname):
            cat = "non-text"
        else:
            cat = "text"
        rows.append((mt, cname, d.name, cat))
    return rows


def write_census() -> int:
    rows = census()
    path = OUT_DIR.parent / "model_types.txt"
    lines = [
        "# Model types of transformers " + transformers.__version__ + " whose configuration carries rope_parameters,",
        "# written by scripts/gen_rope_model_reference.py --census: model_type, configuration class,",
        "# models/ directory, category (text | multi-axis | non-text). Read by tests/rotary/models.test.cpp.",
    ]
    lines += [" ".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    cats = {c: sum(r[3] == c for r in rows) for c in ("text", "multi-axis", "non-text")}
    print(f"{path}: {len(rows)} model types, {cats}")
    return 0


def main() -> int:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    if "--census" in sys.argv[1:]:
        return write_census()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        data = generate(case)
        path = OUT_DIR / f"{case['name']}.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        lt = ", ".join(f"{k}: {v['rope_type']} dim {v['rotary_dim']} att {v['attention_scaling']}" for k, v in data["layers"].items())
        nope = data["rope_layers"]
        print(f"{case['name']}: {lt}; NoPE layers {[i for i, r in enumerate(nope) if not r] if nope else None}; "
              f"query {data['query_scale']['values'][:6] if data['query_scale'] else None}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

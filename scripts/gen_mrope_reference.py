#!/usr/bin/env python3
"""Generate the M-RoPE reference files in tests/rotary/mrope/ from transformers 5.23.

For each vision-language model (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4.1V, ERNIE 4.5-VL) the
script uses transformers' own code, with a text config shaped like the real model's (head_dim,
rope_theta, mrope_section, partial_rotary_factor; no Hub access, no weights):

* ``get_rope_index`` of the model class (called on a stand-in ``self`` holding the config and
  the class's ``get_vision_position_ids``) on crafted text + image + video inputs, two sequences,
  the second left-padded (attention_mask): ``position_ids.npy`` [3, batch, seq] and
  ``deltas.npy`` [batch];
* the rotary embedding class's ``recomposition_frequencies`` (which pair takes which axis) applied
  to cos/sin evaluated in float64 with float64 frequencies (the modules themselves compute in
  float32: the frequency permutation a module applies, ERNIE's, is read off its float32 inv_freq
  and applied to the float64 one): ``cos.npy``, ``sin.npy`` [batch, seq, rotary_dim], at
  ``positions.npy`` (position_ids, the second sequence moved by a large offset);
* the model's ``apply_rotary_pos_emb`` on float64 q [batch, 1, seq, head_dim] (values exactly
  representable in float32; stored as float32 ``q.npy``): ``q_rot.npy`` (k takes the same
  arithmetic in every one of these functions; the tests rotate k from q's data; the files stay
  under 1 MB together);
* the module's own float32 forward (transformers' real arithmetic) for the first sequence's
  first 8 tokens: ``cos_f32.npy``, ``sin_f32.npy`` [8, rotary_dim].

HunYuan-VL (``hunyuan_vl``: xdrope, four axes, rope_type "xdrope" with alpha, images only) is
written by ``hunyuan_vl()`` into ``hunyuan_vl/`` with the same files (position ids [4, batch, seq];
cos/sin its split-half tables) and is not listed in ``models.txt``, whose models the three-axis
tests read; tests/rotary/xdrope.test.cpp reads it.

``config.json`` is the model's full configuration class (text_config, vision_config) as
transformers serializes it, for rotary::load_mrope_config. ``meta.json`` holds the inputs (token types, mask, grids, seconds per grid), the model's
constants and the layout. Usage:

    $(scripts/torch-venv.sh)/bin/python scripts/gen_mrope_reference.py

The output is deterministic (fixed seed).
"""

from __future__ import annotations

import functools
import json
import pathlib
import types

import numpy as np
import torch

from transformers import Ernie4_5_VLMoeConfig, Glm4vConfig, Qwen2_5_VLConfig, Qwen2VLConfig, Qwen3VLConfig
from transformers.models.ernie4_5_vl_moe import modeling_ernie4_5_vl_moe as m_ernie
from transformers.models.ernie4_5_vl_moe.configuration_ernie4_5_vl_moe import Ernie4_5_VLMoeTextConfig
from transformers.models.glm4v import modeling_glm4v as m_glm
from transformers.models.glm4v.configuration_glm4v import Glm4vTextConfig
from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as m_q25
from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLTextConfig
from transformers.models.qwen2_vl import modeling_qwen2_vl as m_q2
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
from transformers.models.qwen3_vl import modeling_qwen3_vl as m_q3
from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "rotary" / "mrope"
SEQ = 24
LARGE_OFFSET = 123_456_789  # added to every axis of the second sequence for the cos/sin/q/k data


def text_config(cls, head_dim, theta, section, heads, partial=None, interleaved=None):
    rp = {"rope_type": "default", "rope_theta": theta, "mrope_section": section}
    if partial is not None:
        rp["partial_rotary_factor"] = partial
    if interleaved is not None:
        rp["mrope_interleaved"] = interleaved
    return cls(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads,
               head_dim=head_dim, rope_parameters=rp)


# name, modules, text config (as the real model's), vision constants, layout
MODELS = [
    dict(name="qwen2_vl", full=Qwen2VLConfig, mod=m_q2, model=m_q2.Qwen2VLModel, rot=m_q2.Qwen2VLRotaryEmbedding,
         cfg=text_config(Qwen2VLTextConfig, 128, 1000000.0, [16, 24, 24], 28),
         vision=dict(spatial_merge_size=2), layout="half", style="sections", split_frames=False),
    dict(name="qwen2_5_vl", full=Qwen2_5_VLConfig, mod=m_q25, model=m_q25.Qwen2_5_VLModel, rot=m_q25.Qwen2_5_VLRotaryEmbedding,
         cfg=text_config(Qwen2_5_VLTextConfig, 128, 1000000.0, [16, 24, 24], 28),
         vision=dict(spatial_merge_size=2, tokens_per_second=2), layout="half", style="sections",
         split_frames=False),
    dict(name="qwen3_vl", full=Qwen3VLConfig, mod=m_q3, model=m_q3.Qwen3VLModel, rot=m_q3.Qwen3VLTextRotaryEmbedding,
         cfg=text_config(Qwen3VLTextConfig, 128, 5000000.0, [24, 20, 20], 32, interleaved=True),
         vision=dict(spatial_merge_size=2), layout="half", style="interleaved", split_frames=True),
    dict(name="glm4v", full=Glm4vConfig, mod=m_glm, model=m_glm.Glm4vModel, rot=m_glm.Glm4vTextRotaryEmbedding,
         cfg=text_config(Glm4vTextConfig, 128, 10000.0, [8, 12, 12], 32, partial=0.5),
         vision=dict(spatial_merge_size=2), layout="interleaved", style="sections", split_frames=True),
    dict(name="ernie4_5_vl_moe", full=Ernie4_5_VLMoeConfig, mod=m_ernie, model=m_ernie.Ernie4_5_VLMoeModel,
         rot=m_ernie.Ernie4_5_VLMoeTextRotaryEmbedding,
         cfg=text_config(Ernie4_5_VLMoeTextConfig, 128, 500000.0, [22, 22, 20], 20),
         vision=dict(spatial_merge_size=2, temporal_merge_size=2), layout="interleaved", style="ernie",
         split_frames=False),
]


def build_inputs(m):
    """Token types, attention mask and grids of two sequences of SEQ tokens: the first with text, an
    image, text, a video and text; the second left-padded with text, an image and text."""
    sm = m["vision"]["spatial_merge_size"]
    tm = m["vision"].get("temporal_merge_size", 1)
    image_grids = [(1, 4, 6), (1, 2, 4)]
    video_grids = [(2, 4, 4)]

    def tokens(grid, video):
        t = grid[0] // (tm if video else 1)
        return t * (grid[1] // sm) * (grid[2] // sm)

    rows, masks = [], []
    # sequence 0
    types_ = [0, 0] + [1] * tokens(image_grids[0], False) + [0, 0]
    if m["split_frames"]:  # one grid per frame, a timestamp text token before each frame
        for _ in range(video_grids[0][0]):
            types_ += [0] + [2] * tokens((1,) + video_grids[0][1:], True)
    else:
        types_ += [2] * tokens(video_grids[0], True)
    types_ += [0] * (SEQ - len(types_))
    assert len(types_) == SEQ
    rows.append(types_)
    masks.append([1] * SEQ)
    # sequence 1: three padding tokens, text, an image, text
    body = [0] * 4 + [1] * tokens(image_grids[1], False) + [0] * 3
    pad = SEQ - len(body)
    rows.append([0] * pad + body)
    masks.append([0] * pad + [1] * len(body))
    seconds = [1.3333333730697632] if m["name"] == "qwen2_5_vl" else None
    return rows, masks, image_grids, video_grids, seconds


def rope_index(m, rows, masks, image_grids, video_grids, seconds):
    vision = types.SimpleNamespace(**m["vision"])
    config = types.SimpleNamespace(vision_config=vision, text_config=m["cfg"])
    self = types.SimpleNamespace(config=config)
    self.get_vision_position_ids = functools.partial(m["model"].get_vision_position_ids, self)
    input_ids = torch.ones(len(rows), SEQ, dtype=torch.long)
    kwargs = dict(
        input_ids=input_ids,
        mm_token_type_ids=torch.tensor(rows, dtype=torch.int32),
        image_grid_thw=torch.tensor(image_grids, dtype=torch.long),
        video_grid_thw=torch.tensor(video_grids, dtype=torch.long),
        attention_mask=torch.tensor(masks, dtype=torch.long),
    )
    if seconds is not None:
        kwargs["second_per_grid_ts"] = torch.tensor(seconds, dtype=torch.float32)
    pos, deltas = m["model"].get_rope_index(self, **kwargs)
    return pos, deltas.reshape(-1)


def exact_inv_freq(m, rot):
    """float64 frequencies in the module's order: theta^(-2k/dim) in float64, permuted as the
    module's float32 inv_freq is permuted from the plain float32 formula (ERNIE's pre-rotation)."""
    cfg = m["cfg"]
    theta = cfg.rope_parameters["rope_theta"]
    dim = int(cfg.head_dim * cfg.rope_parameters.get("partial_rotary_factor", 1.0))
    plain32 = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
    plain64 = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    mod32 = rot.inv_freq
    perm = [int((plain32 == v).nonzero()[0, 0]) for v in mod32]
    assert sorted(perm) == list(range(len(perm)))
    return plain64[perm], dim


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(20260522)
    index = []
    for m in MODELS:
        d = OUT / m["name"]
        d.mkdir(exist_ok=True)
        rows, masks, image_grids, video_grids, seconds = build_inputs(m)
        pos, deltas = rope_index(m, rows, masks, image_grids, video_grids, seconds)
        rot = m["rot"](m["cfg"])
        inv64, rotary_dim = exact_inv_freq(m, rot)
        positions = pos.clone()
        positions[:, 1, :] += LARGE_OFFSET
        freqs = positions[..., None].to(torch.float64) * inv64  # [3, batch, seq, pairs]
        cos = rot.recomposition_frequencies(freqs.cos() * rot.attention_scaling)
        sin = rot.recomposition_frequencies(freqs.sin() * rot.attention_scaling)
        head_dim = m["cfg"].head_dim
        q = torch.randn(2, 1, SEQ, head_dim).to(torch.float32).to(torch.float64)
        q_rot, k_rot = m["mod"].apply_rotary_pos_emb(q, q.clone(), cos, sin)
        assert torch.equal(q_rot, k_rot)
        # transformers' own float32 forward, first sequence, first 8 tokens
        x = torch.zeros(1, dtype=torch.float32)
        cos32, sin32 = rot(x, pos[:, :1, :8])
        np.save(d / "position_ids.npy", pos.numpy().astype(np.int64))
        np.save(d / "deltas.npy", deltas.numpy().astype(np.int64))
        np.save(d / "positions.npy", positions.numpy().astype(np.int64))
        np.save(d / "cos.npy", cos.numpy().astype(np.float64))
        np.save(d / "sin.npy", sin.numpy().astype(np.float64))
        np.save(d / "q.npy", q.numpy().astype(np.float32))
        np.save(d / "q_rot.npy", q_rot.numpy().astype(np.float64))
        np.save(d / "cos_f32.npy", cos32[0].float().numpy())
        np.save(d / "sin_f32.npy", sin32[0].float().numpy())
        meta = dict(
            model_type=m["name"],
            head_dim=head_dim,
            rotary_dim=rotary_dim,
            rope_theta=m["cfg"].rope_parameters["rope_theta"],
            mrope_section=m["cfg"].rope_parameters["mrope_section"],
            style=m["style"],
            layout=m["layout"],
            attention_scaling=rot.attention_scaling,
            spatial_merge_size=m["vision"]["spatial_merge_size"],
            temporal_merge_size=m["vision"].get("temporal_merge_size", 1),
            tokens_per_second=m["vision"].get("tokens_per_second", 0),
            split_video_frames=m["split_frames"],
            mm_token_type_ids=rows,
            attention_mask=masks,
            image_grid_thw=[list(g) for g in image_grids],
            video_grid_thw=[list(g) for g in video_grids],
            second_per_grid_ts=seconds or [],
            large_offset=LARGE_OFFSET,
            batch=2,
            seq=SEQ,
        )
        full = m["full"](text_config=m["cfg"].to_dict(), vision_config=dict(m["vision"]))
        (d / "config.json").write_text(full.to_json_string())
        (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        index.append(m["name"])
        print(m["name"], "deltas", deltas.tolist(), "positions max", int(pos.max()))
    (OUT / "models.txt").write_text("\n".join(index) + "\n")
    hunyuan_vl()


def hunyuan_vl():
    """HunYuan-VL's files (see the module docstring): the model's get_rope_index, rotary module and
    apply_rotary_pos_emb, with a text config shaped like HunyuanOCR's (head_dim 128, rope_theta
    10000, rope_type xdrope with alpha 1000, xdrope_section [16, 16, 16, 16])."""
    from transformers import HunYuanVLConfig
    from transformers.models.hunyuan_vl import modeling_hunyuan_vl as m_hy
    from transformers.models.hunyuan_vl.configuration_hunyuan_vl import HunYuanVLTextConfig

    torch.manual_seed(20261128)
    d = OUT / "hunyuan_vl"
    d.mkdir(exist_ok=True)
    head_dim, theta, alpha, section = 128, 10000.0, 1000.0, [16, 16, 16, 16]
    cfg = HunYuanVLTextConfig(hidden_size=head_dim * 8, num_attention_heads=8, num_key_value_heads=8,
                              head_dim=head_dim, rope_parameters={"rope_type": "xdrope", "rope_theta": theta,
                                                                  "alpha": alpha, "factor": 1.0,
                                                                  "xdrope_section": section})
    vision = dict(spatial_merge_size=2)
    image_grids = [(1, 4, 6), (1, 2, 4), (1, 4, 4)]  # merged (h', w'): (2, 3), (1, 2), (2, 2)

    def tokens(g):
        return (g[1] // 2) * (g[2] // 2 + 1)

    row0 = [0, 0] + [1] * (tokens(image_grids[0]) + 2) + [0, 0] + [1] * tokens(image_grids[1])
    row0 += [0] * (SEQ - len(row0))
    body = [0] * 4 + [1] * (tokens(image_grids[2]) + 2) + [0] * 3
    pad = SEQ - len(body)
    rows = [row0, [0] * pad + body]
    masks = [[1] * SEQ, [0] * pad + [1] * len(body)]
    full = HunYuanVLConfig(text_config=cfg.to_dict(), vision_config=vision)
    self = types.SimpleNamespace(config=full)
    self.get_vision_position_ids = functools.partial(m_hy.HunYuanVLModel.get_vision_position_ids, self)
    pos, deltas = m_hy.HunYuanVLModel.get_rope_index(
        self, input_ids=torch.ones(2, SEQ, dtype=torch.long), mm_token_type_ids=torch.tensor(rows, dtype=torch.int32),
        image_grid_thw=torch.tensor(image_grids, dtype=torch.long),
        attention_mask=torch.tensor(masks, dtype=torch.long))
    deltas = deltas.reshape(-1)
    rot = m_hy.HunYuanVLRotaryEmbedding(full.text_config)
    assert rot.rope_type == "ntk_alpha"
    base = theta * alpha ** (head_dim / (head_dim - 2))  # transformers' ntk_alpha base, a Python float
    inv64 = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    positions = pos.clone()
    positions[:, 1, :] += LARGE_OFFSET
    freqs = positions[..., None].to(torch.float64) * inv64  # [4, batch, seq, pairs]
    cos = rot.recomposition_frequencies(freqs.cos() * rot.attention_scaling)
    sin = rot.recomposition_frequencies(freqs.sin() * rot.attention_scaling)
    q = torch.randn(2, 1, SEQ, head_dim).to(torch.float32).to(torch.float64)
    # HunYuan-VL's apply_rotary_pos_emb computes in float32 (q.float(), cos.float()): the float64
    # reference is its formula q * cos + rotate_half(q) * sin, with the model's rotate_half, in float64
    q_rot = q * cos[:, None] + m_hy.rotate_half(q) * sin[:, None]
    q32, _ = m_hy.apply_rotary_pos_emb(q, q.clone(), cos, sin)
    assert float((q32 - q_rot).abs().max()) < 1e-5
    cos32, sin32 = rot(torch.zeros(1, dtype=torch.float32), pos[:, :1, :8])
    np.save(d / "position_ids.npy", pos.numpy().astype(np.int64))
    np.save(d / "deltas.npy", deltas.numpy().astype(np.int64))
    np.save(d / "positions.npy", positions.numpy().astype(np.int64))
    np.save(d / "cos.npy", cos.numpy().astype(np.float64))
    np.save(d / "sin.npy", sin.numpy().astype(np.float64))
    np.save(d / "q.npy", q.numpy().astype(np.float32))
    np.save(d / "q_rot.npy", q_rot.numpy().astype(np.float64))
    np.save(d / "cos_f32.npy", cos32[0].float().numpy())
    np.save(d / "sin_f32.npy", sin32[0].float().numpy())
    meta = dict(model_type="hunyuan_vl", head_dim=head_dim, rotary_dim=head_dim, rope_theta=theta, alpha=alpha,
                ntk_alpha_base=base, mrope_section=section, style="xdrope", layout="half",
                attention_scaling=rot.attention_scaling, spatial_merge_size=2, mm_token_type_ids=rows,
                attention_mask=masks, image_grid_thw=[list(g) for g in image_grids], large_offset=LARGE_OFFSET,
                batch=2, seq=SEQ)
    (d / "config.json").write_text(full.to_json_string())
    (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print("hunyuan_vl deltas", deltas.tolist(), "positions max", int(pos.max()))


if __name__ == "__main__":
    main()

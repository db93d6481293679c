"""Multi-axis RoPE (M-RoPE of vision-language models) over torch.ops.posenc.axes_*.

Pair k of the rotated part of each head turns by position_ids[axis[k]] * omega_k, omega_k the
exact frequency of the config's rule. ``axis`` [2, pairs] is HunYuan-VL's split-half xdrope: the
pair's first column a takes angle A = position_ids[axis[0, k]] * omega_k, its second b angle
B = position_ids[axis[1, k]] * omega_k, a' = a cos A - b sin A, b' = b cos B + a sin B (not a
rotation where A != B; the backward is the map's transpose). Frequencies travel as float64 ``freqs`` [pairs, 2, 3]: each
pair's long double inv_freq and its low part inv_freq_lo, each split into three non-overlapping
doubles whose sum is exact (or a plain float64 [pairs], each frequency a double), so nothing is
rounded between the C++ loader and the kernels.
"""
import json

import torch
from torch import nn

from ._ops import _on_mesh
from .rotary import config_json

_P = torch.ops.posenc


def _ids(position_ids):
    return position_ids.contiguous()  # int64 or int32 (the op converts; other dtypes are refused there)


def axes_cos_sin(position_ids, freqs, axis, attention_factor: float = 1.0, dtype=torch.float32,
                 duplicated: bool = True):
    """(cos, sin), each [*position_ids.shape[1:], width]: attention_factor * cos/sin of
    position_ids[axis[k]] * omega_k; width 2 * pairs in HF's [c | c] layout (duplicated) or pairs."""
    freqs, axis = _on_mesh(position_ids, freqs, axis)
    return _P.axes_cos_sin(_ids(position_ids), freqs, axis, float(attention_factor), dtype, bool(duplicated))


def axes_rope(x, position_ids, freqs, axis, attention_factor: float = 1.0, layout: str = "half"):
    """The rotated copy of x [B, H, S, D] (position_ids [A, B, S] or [A, S]) or ragged [T, H, D]
    (position_ids [A, T]). Differentiable: the backward is the inverse rotation (negated positions)."""
    ids, freqs, axis = _on_mesh(x, _ids(position_ids), freqs, axis)
    return _P.axes_rope(x, ids, freqs, axis, float(attention_factor), layout, False)


def axes_rope_(x, position_ids, freqs, axis, attention_factor: float = 1.0, layout: str = "half"):
    """axes_rope in place (x's head_dim contiguous); recorded by autograd when x needs grad."""
    ids, freqs, axis = _on_mesh(x, _ids(position_ids), freqs, axis)
    if torch.is_grad_enabled() and x.requires_grad:
        return x.copy_(_P.axes_rope(x, ids, freqs, axis, float(attention_factor), layout, False))
    _P.axes_rope_(x, ids, freqs, axis, float(attention_factor), layout, False)
    return x


def hunyuan_rope_index(mm_token_type_ids, image_grid_thw=None, attention_mask=None, axes: int = 4,
                       spatial_merge_size: int = 2):
    """HunYuan-VL's get_rope_index: (position_ids int64 [axes, B, S], rope_deltas int64 [B, 1]) from
    mm_token_type_ids [B, S] (1 image), image_grid_thw [n, 3] and attention_mask [B, S]; axes is
    len(mrope_section) (the last three: width, height, image index)."""
    return _P.hunyuan_rope_index(mm_token_type_ids, image_grid_thw, attention_mask, int(axes), int(spatial_merge_size))


def get_rope_index(mm_token_type_ids, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                   second_per_grid_ts=None, spatial_merge_size: int = 2, temporal_merge_size: int = 1,
                   split_video_frames: bool = False, tokens_per_second: float = 0.0):
    """transformers' get_rope_index of the M-RoPE models: (position_ids int64 [3, B, S], rope_deltas
    int64 [B, 1]) from mm_token_type_ids [B, S] (0 text, 1 image, 2 video), the grids [n, 3] (t, h, w)
    in the order their token groups appear, attention_mask [B, S] (masked tokens get 0) and
    second_per_grid_ts [videos]. MultiAxisRotaryEmbedding.get_rope_index fills the model constants."""
    return _P.get_rope_index(mm_token_type_ids, image_grid_thw, video_grid_thw, attention_mask, second_per_grid_ts,
                             int(spatial_merge_size), int(temporal_merge_size), bool(split_video_frames),
                             float(tokens_per_second))


class _AxesModule(nn.Module):
    """cos/sin and the rotation of a module holding freqs, axis, attention_factor and layout (the
    multi-axis modules' shared calls)."""

    def cos_sin(self, position_ids, dtype=torch.float32, duplicated: bool = True):
        return axes_cos_sin(position_ids, self.freqs, self.axis, self.attention_factor, dtype, duplicated)

    def forward(self, q, k=None, position_ids=None):
        qo = axes_rope(q, position_ids, self.freqs, self.axis, self.attention_factor, self.layout)
        return qo, (None if k is None else axes_rope(k, position_ids, self.freqs, self.axis, self.attention_factor,
                                                      self.layout))

    def apply_(self, q, k=None, position_ids=None):
        axes_rope_(q, position_ids, self.freqs, self.axis, self.attention_factor, self.layout)
        if k is not None:
            axes_rope_(k, position_ids, self.freqs, self.axis, self.attention_factor, self.layout)
        return q, k


class MultiAxisRotaryEmbedding(_AxesModule):
    """M-RoPE of a vision-language model from its config (a transformers config object, a
    config.json dict or its JSON text): Qwen2-VL, Qwen2.5-VL, Qwen3-VL (and -MoE), GLM-4.1V/4.5V,
    ERNIE 4.5-VL, HunYuan-VL (xdrope: ``axis`` [2, pairs], len(mrope_section) axes), read by posenc's
    C++ ``load_mrope_config``.

    ``cos_sin(position_ids [3, B, S], dtype)`` -> (cos, sin) [B, S, rotary_dim] in HF's [c | c]
    layout with every pair at its own axis' position (what Qwen2-VL/2.5-VL/3-VL's text rotary
    modules return); ``forward(q, k, position_ids)`` rotated copies, ``apply_(q, k, position_ids)``
    in place (q, k [B, H, S, D] or ragged [T, H, D] with position_ids [3, T]);
    ``get_rope_index(mm_token_type_ids, ...)`` the model's position ids.
    """

    def __init__(self, config):
        super().__init__()
        self.config_text = config_json(config)
        (freqs, axis, af, hd, interleaved, section, style, sms, tms, split,
         tps) = _P.mrope_config(self.config_text)
        layout = "interleaved" if interleaved else "half"
        style = ("sections", "interleaved", "ernie", "xdrope")[int(style)]
        model_type = json.loads(self.config_text).get("model_type")
        self.register_buffer("freqs", freqs, persistent=False)
        self.register_buffer("axis", axis, persistent=False)
        self.attention_factor, self.head_dim, self.layout = float(af), int(hd), layout
        self.rotary_dim = 2 * int(freqs.shape[0])
        self.mrope_section, self.style, self.model_type = list(section), style, model_type
        self.spatial_merge_size, self.temporal_merge_size = int(sms), int(tms)
        self.split_video_frames, self.tokens_per_second = bool(split), float(tps)

    def extra_repr(self):
        return "model_type=%s, head_dim=%d, rotary_dim=%d, style=%s, mrope_section=%s, layout=%s" % (
            self.model_type, self.head_dim, self.rotary_dim, self.style, self.mrope_section, self.layout)

    def get_rope_index(self, mm_token_type_ids, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       second_per_grid_ts=None):
        if self.style == "xdrope":  # HunYuan-VL: images only, one axis per mrope_section entry
            if video_grid_thw is not None:
                raise ValueError("posenc: get_rope_index: video_grid_thw: expected None for hunyuan_vl (images only), "
                                 "got a tensor")
            return hunyuan_rope_index(mm_token_type_ids, image_grid_thw, attention_mask, len(self.mrope_section),
                                      self.spatial_merge_size)
        return get_rope_index(mm_token_type_ids, image_grid_thw, video_grid_thw, attention_mask, second_per_grid_ts,
                              self.spatial_merge_size, self.temporal_merge_size, self.split_video_frames,
                              self.tokens_per_second)

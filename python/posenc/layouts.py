"""The multi-axis RoPE of diffusion transformers and vision encoders over torch.ops.posenc.

Each model's exact frequencies and int64 positions come from posenc's C++ (rotary/axes/diffusion.hpp,
rotary/axes/vision.hpp) through ``torch.ops.posenc.axes_layout_frequencies`` and
``axes_layout_positions``; cos/sin through ``axes_cos_sin``, the rotation through ``axes_rope`` /
``axes_rope_`` (python/posenc/multiaxis.py). Every table is the correctly rounded cos/sin of the exact
angle position * omega.

Two kinds of callers:

* the modules named after the peers' (``FluxPosEmbed``, ``WanRotaryPosEmbed``,
  ``HunyuanVideoRotaryPosEmbed``, ``QwenEmbedRope``) take the peer's arguments and return its
  layout, so that they can stand in for diffusers 0.42's module of the same name;
* the functions of the vision towers (``qwen_vl_vision_cos_sin``, ``pixtral_vision_cos_sin``,
  ``llama4_vision_freqs_ci``, ``dinov3_cos_sin``) return what transformers 5.23's rotary module
  of the tower returns;

and ``AxesRope`` for applying a model's RoPE to q and k in place.
"""
import torch
from torch import nn

from .multiaxis import _AxesModule, axes_cos_sin, axes_rope, axes_rope_

_P = torch.ops.posenc

#: The pair layout each model rotates: interleaved (columns 2k, 2k + 1) or half (k, k + d/2).
MODEL_LAYOUT = {
    "nd": "interleaved",
    "flux": "interleaved",
    "wan": "interleaved",
    "hunyuan_video": "interleaved",
    "qwen_image": "interleaved",
    "qwen_vl_vision": "half",
    "pixtral_vision": "half",
    "llama4_vision": "interleaved",
    "dinov3": "half",
}


def _ints(values, name):
    out = []
    for i, v in enumerate(values):
        if isinstance(v, torch.Tensor):
            v = v.item()
        if isinstance(v, bool) or int(v) != v:
            raise ValueError("posenc: %s[%d]: expected an integer, got %r" % (name, i, v))
        out.append(int(v))
    return out


def axes_frequencies(model: str, sizes=(), theta: float = 0.0):
    """(freqs float64 [pairs, 2, 3], axis int64 [pairs]) of a model's multi-axis RoPE, exact.

    sizes: 'nd' axes_dim (theta required); 'flux', 'hunyuan_video', 'qwen_image' axes_dim (empty: the
    model's (16, 56, 56)); 'wan', 'qwen_vl_vision' [head_dim]; 'pixtral_vision', 'llama4_vision'
    [head_dim] or empty (64, 88); 'dinov3' [head_dim, grid_h, grid_w]. theta 0: the model's own."""
    return _P.axes_layout_frequencies(str(model), _ints(sizes, "sizes"), float(theta))


def axes_positions(model: str, sizes=(), grids=()):
    """A model's int64 positions [A, tokens] as a list of tensors (see axes_layout_positions in
    python/src/multiaxis.cpp): 'flux' [text_tokens, height, width]; 'grid3d' [frames, height, width];
    'wan' [latent_frames, latent_height, latent_width (, p_t, p_h, p_w (, max_seq_len))];
    'hunyuan_video' [latent_frames, latent_height, latent_width (, patch_size (, patch_size_t))];
    'qwen_image' [text_tokens (, scale_rope)] with grids [(frames, height, width), ...]: [image, text];
    'qwen_vl_vision' [(spatial_merge_size)] with grids [(t, h, w), ...]; 'qwen2_5_vl_window'
    [(spatial_merge_size (, window_size (, patch_size)))] with grids: [window_index,
    cu_window_seqlens, token_order]; 'pixtral_vision' grids [(1, h, w), ...]; 'llama4_vision'
    [(side)]; 'dinov3' [grid_h, grid_w]."""
    flat = []
    for g in grids:
        flat.extend(g.tolist() if isinstance(g, torch.Tensor) else g)
    return list(_P.axes_layout_positions(str(model), _ints(sizes, "sizes"), _ints(flat, "grids")))


def _check_device(t, name):
    if t.device.type != "cpu":
        raise ValueError("posenc: %s: expected a CPU tensor, got device '%s' (this build of posenc's ops is CPU-only)"
                         % (name, t.device))


class AxesRope(_AxesModule):
    """A model's multi-axis RoPE: its exact frequencies (``freqs``, ``axis`` buffers) and pair layout.

    ``AxesRope("flux")``, ``AxesRope("wan", [128])``, ``AxesRope("nd", [16, 56, 56], theta=10000)``
    (sizes and theta as in :func:`axes_frequencies`). ``positions(sizes, grids)`` the model's
    positions; ``cos_sin(position_ids, dtype, duplicated)`` the tables; ``forward(q, k,
    position_ids)`` rotated copies and ``apply_(q, k, position_ids)`` in place, q and k
    [B, H, S, D] (position_ids [A, S] or [A, B, S]) or ragged [T, H, D] (position_ids [A, T]); a
    [B, S, H, D] tensor (diffusers' layout) goes in as ``x.transpose(1, 2)``."""

    def __init__(self, model: str, sizes=(), theta: float = 0.0, attention_factor: float = 1.0):
        super().__init__()
        if model not in MODEL_LAYOUT:
            raise ValueError("posenc: AxesRope: model: expected one of %s, got %r" % (sorted(MODEL_LAYOUT), model))
        freqs, axis = axes_frequencies(model, sizes, theta)
        self.register_buffer("freqs", freqs, persistent=False)
        self.register_buffer("axis", axis, persistent=False)
        self.model, self.layout = model, MODEL_LAYOUT[model]
        self.attention_factor = float(attention_factor)
        self.rotary_dim = 2 * int(freqs.shape[0])

    def extra_repr(self):
        return "model=%s, rotary_dim=%d, layout=%s" % (self.model, self.rotary_dim, self.layout)

    def positions(self, sizes=(), grids=()):
        model = "grid3d" if self.model == "nd" else self.model
        return axes_positions(model, sizes, grids)


def _interleaved(position_ids, freqs, axis, dtype):
    """cos/sin [tokens, 2 pairs] with each value twice in a row (diffusers' repeat_interleave_real)."""
    c, s = axes_cos_sin(position_ids, freqs, axis, 1.0, dtype, False)
    return c.repeat_interleave(2, dim=-1), s.repeat_interleave(2, dim=-1)


def _complex(position_ids, freqs, axis):
    """complex64 [tokens, pairs]: cos + i sin (diffusers' and transformers' polar form)."""
    c, s = axes_cos_sin(position_ids, freqs, axis, 1.0, torch.float32, False)
    return torch.complex(c, s)


# ---- diffusion transformers (diffusers 0.42) -----------------------------------------------------


def flux_ids(text_tokens: int, height: int, width: int):
    """FLUX's ids int64 [text_tokens + height width, 3]: txt_ids (zeros), then the image's patches
    (0, i, j) row-major (FluxPipeline; height and width in patches: 1024 px -> 64)."""
    return axes_positions("flux", [text_tokens, height, width])[0].t()


class FluxPosEmbed(nn.Module):
    """diffusers' FluxPosEmbed(theta, axes_dim) from posenc's exact tables: forward(ids [N, A])
    -> (cos, sin) float32 [N, sum(axes_dim)], each value twice in a row. ids must hold integers
    (FLUX's are float32 integers); FluxPosEmbed itself computes in float64 and rounds, which gives
    the same bits (python/tests/test_layouts.py at 1024 x 1024)."""

    def __init__(self, theta: float = 10000.0, axes_dim=(16, 56, 56)):
        super().__init__()
        self.theta, self.axes_dim = theta, list(axes_dim)
        freqs, axis = axes_frequencies("nd", self.axes_dim, float(theta))
        self.register_buffer("freqs", freqs, persistent=False)
        self.register_buffer("axis", axis, persistent=False)

    def forward(self, ids):
        _check_device(ids, "FluxPosEmbed: ids")
        if ids.dim() != 2 or ids.shape[1] != len(self.axes_dim):
            raise ValueError("posenc: FluxPosEmbed: ids: expected [tokens, %d] (one column per axis), got shape %s"
                             % (len(self.axes_dim), tuple(ids.shape)))
        pos = ids.long()
        if ids.is_floating_point() and not torch.equal(pos.to(ids.dtype), ids):
            raise ValueError("posenc: FluxPosEmbed: ids: expected integer positions, got non-integer values")
        return _interleaved(pos.t(), self.freqs, self.axis, torch.float32)


class WanRotaryPosEmbed(nn.Module):
    """diffusers' WanRotaryPosEmbed(attention_head_dim, patch_size, max_seq_len, theta):
    forward(hidden_states [B, C, F, H, W]) -> (cos, sin) float32 [1, tokens, 1, attention_head_dim]
    over the (F / p_t, H / p_h, W / p_w) patch grid, each value twice in a row."""

    def __init__(self, attention_head_dim: int, patch_size=(1, 2, 2), max_seq_len: int = 1024,
                 theta: float = 10000.0):
        super().__init__()
        self.attention_head_dim, self.patch_size = int(attention_head_dim), tuple(patch_size)
        self.max_seq_len, self.theta = int(max_seq_len), float(theta)
        freqs, axis = axes_frequencies("wan", [self.attention_head_dim], self.theta)
        self.register_buffer("freqs", freqs, persistent=False)
        self.register_buffer("axis", axis, persistent=False)

    def positions(self, frames: int, height: int, width: int):
        """int64 [3, tokens] of latents frames x height x width."""
        return axes_positions("wan", [frames, height, width, *self.patch_size, self.max_seq_len])[0]

    def forward(self, hidden_states):
        if hidden_states.dim() != 5:
            raise ValueError("posenc: WanRotaryPosEmbed: hidden_states: expected [batch, channels, frames, height, "
                             "width], got shape %s" % (tuple(hidden_states.shape),))
        c, s = _interleaved(self.positions(*hidden_states.shape[2:]), self.freqs, self.axis, torch.float32)
        return c[None, :, None, :], s[None, :, None, :]


class HunyuanVideoRotaryPosEmbed(nn.Module):
    """diffusers' HunyuanVideoRotaryPosEmbed(patch_size, patch_size_t, rope_dim, theta):
    forward(hidden_states [B, C, F, H, W]) -> (cos, sin) float32 [tokens, sum(rope_dim)], each value
    twice in a row. diffusers computes these in float32 (frequencies and phases); posenc's are the
    exact values rounded once (docs/errata.md)."""

    def __init__(self, patch_size: int = 2, patch_size_t: int = 1, rope_dim=(16, 56, 56), theta: float = 256.0):
        super().__init__()
        self.patch_size, self.patch_size_t, self.rope_dim = int(patch_size), int(patch_size_t), list(rope_dim)
        self.theta = float(theta)
        freqs, axis = axes_frequencies("hunyuan_video", self.rope_dim, self.theta)
        self.register_buffer("freqs", freqs, persistent=False)
        self.register_buffer("axis", axis, persistent=False)

    def positions(self, frames: int, height: int, width: int):
        return axes_positions("hunyuan_video", [frames, height, width, self.patch_size, self.patch_size_t])[0]

    def forward(self, hidden_states):
        if hidden_states.dim() != 5:
            raise ValueError("posenc: HunyuanVideoRotaryPosEmbed: hidden_states: expected [batch, channels, frames, "
                             "height, width], got shape %s" % (tuple(hidden_states.shape),))
        return _interleaved(self.positions(*hidden_states.shape[2:]), self.freqs, self.axis, torch.float32)


class QwenEmbedRope(nn.Module):
    """diffusers' QwenEmbedRope(theta, axes_dim, scale_rope) (Qwen-Image's MSRoPE):
    forward(video_fhw, device=None, max_txt_seq_len) -> (vid_freqs complex64 [image tokens, pairs],
    txt_freqs complex64 [max_txt_seq_len, pairs]). video_fhw as diffusers takes it: a list over the
    batch whose first entry is used, each entry one (frames, height, width) in patches or a list of
    them (Qwen-Image-Edit's several images; image k's frame axis starts at k)."""

    def __init__(self, theta: float = 10000.0, axes_dim=(16, 56, 56), scale_rope: bool = False):
        super().__init__()
        self.theta, self.axes_dim, self.scale_rope = float(theta), list(axes_dim), bool(scale_rope)
        freqs, axis = axes_frequencies("qwen_image", self.axes_dim, self.theta)
        self.register_buffer("freqs", freqs, persistent=False)
        self.register_buffer("axis", axis, persistent=False)

    def positions(self, video_fhw, max_txt_seq_len):
        if isinstance(video_fhw, list):
            video_fhw = video_fhw[0]
        if not isinstance(video_fhw, list):
            video_fhw = [video_fhw]
        return axes_positions("qwen_image", [int(max_txt_seq_len), int(self.scale_rope)], video_fhw)

    def forward(self, video_fhw, device=None, max_txt_seq_len=None):
        if max_txt_seq_len is None:
            raise ValueError("posenc: QwenEmbedRope: max_txt_seq_len: expected the text length, got None")
        if device is not None and torch.device(device).type != "cpu":
            raise ValueError("posenc: QwenEmbedRope: device: expected a CPU device, got '%s' (this build of posenc's "
                             "ops is CPU-only)" % (device,))
        image, text = self.positions(video_fhw, max_txt_seq_len)
        return _complex(image, self.freqs, self.axis), _complex(text, self.freqs, self.axis)


# ---- vision encoders (transformers 5.23) ---------------------------------------------------------


def _grid_list(grid_thw, name):
    if isinstance(grid_thw, torch.Tensor):
        if grid_thw.dim() != 2 or grid_thw.shape[1] != 3:
            raise ValueError("posenc: %s: grid_thw: expected [grids, 3] (t, h, w), got shape %s"
                             % (name, tuple(grid_thw.shape)))
        return grid_thw.tolist()
    return [list(g) for g in grid_thw]


def qwen_vl_vision_positions(grid_thw, spatial_merge_size: int = 2):
    """int64 [2, tokens]: the (row, column) of Qwen2-VL / 2.5-VL / 3-VL vision tokens in
    transformers' get_vision_position_ids order (merge blocks row-major, patches inside them)."""
    return axes_positions("qwen_vl_vision", [spatial_merge_size], _grid_list(grid_thw, "qwen_vl_vision_positions"))[0]


def qwen_vl_vision_cos_sin(grid_thw, head_dim: int, spatial_merge_size: int = 2, theta: float = 10000.0,
                           dtype=torch.float32):
    """(cos, sin) [tokens, head_dim] in [c | c] layout: what Qwen2.5-VL's / Qwen3-VL's vision rotary
    embedding returns for get_vision_position_ids(grid_thw, spatial_merge_size) (head_dim: 80 for
    Qwen2-VL / 2.5-VL, 72 for Qwen3-VL). transformers forms it in float32; posenc's are exact."""
    freqs, axis = axes_frequencies("qwen_vl_vision", [head_dim], theta)
    return axes_cos_sin(qwen_vl_vision_positions(grid_thw, spatial_merge_size), freqs, axis, 1.0, dtype, True)


def qwen2_5_vl_window_index(grid_thw, spatial_merge_size: int = 2, window_size: int = 112, patch_size: int = 14):
    """(window_index int64 [merged units], cu_window_seqlens int32): transformers'
    get_vision_window_index of Qwen2.5-VL's vision tower (windows of window_size px)."""
    wi, cu, _ = axes_positions("qwen2_5_vl_window", [spatial_merge_size, window_size, patch_size],
                               _grid_list(grid_thw, "qwen2_5_vl_window_index"))
    return wi, cu


def pixtral_vision_cos_sin(patch_grids, head_dim: int = 64, theta: float = 10000.0, dtype=torch.float32):
    """(cos, sin) [tokens, head_dim] in [c | c] layout of Pixtral / Mistral 3's vision tower for
    images of patch_grids [(h, w), ...] patches (each image row-major, concatenated): rows turn the
    even frequencies theta^(-2k/d), columns the odd ones."""
    freqs, axis = axes_frequencies("pixtral_vision", [head_dim], theta)
    pos = axes_positions("pixtral_vision", [], [(1, int(h), int(w)) for h, w in patch_grids])[0]
    return axes_cos_sin(pos, freqs, axis, 1.0, dtype, True)


def llama4_vision_freqs_ci(side: int = 24, head_dim: int = 88, theta: float = 10000.0):
    """complex64 [side^2 + 1, 1, head_dim / 2]: Llama 4's vision freqs_ci (patch (row, column) at
    (column + 1, row + 1), the class token last at angle 0; 336 px / 14 = 24 a side)."""
    freqs, axis = axes_frequencies("llama4_vision", [head_dim], theta)
    return _complex(axes_positions("llama4_vision", [side])[0], freqs, axis)[:, None, :]


def dinov3_cos_sin(grid_h: int, grid_w: int, head_dim: int = 64, theta: float = 100.0, dtype=torch.float32):
    """(cos, sin) [grid_h grid_w, head_dim] in [c | c] layout: DINOv3's RoPE of the patch tokens at
    inference (no coordinate augmentation), rows then columns."""
    freqs, axis = axes_frequencies("dinov3", [head_dim, grid_h, grid_w], theta)
    return axes_cos_sin(axes_positions("dinov3", [grid_h, grid_w])[0], freqs, axis, 1.0, dtype, True)

#!/usr/bin/env python3
"""Generate python/tests/data/multiaxis_layouts.npz: the multi-axis RoPE of diffusion transformers
(diffusers 0.42.1) and vision encoders (transformers 5.23.0) as their own modules return it, for
python/tests/test_layouts.py (posenc.layouts against the peers, through torch.ops.posenc).

For each case the file holds, under the prefix ``<case>/``:

* ``ids``: the positions the peer builds, int64 [A, tokens] (row a = coordinate a of every token;
  diffusers' and transformers' ids are the transpose);
* ``rows``: sampled token rows, and ``cos``/``sin`` (or ``re``/``im`` of a complex peer): the
  peer's float32 output of those rows, in the peer's layout;
* ``sha_cos``/``sha_sin`` (FLUX and Wan, at their real grid sizes): the SHA-256 of the peer's whole
  float32 output, so that a test can check every value bit for bit without the file holding them
  (FLUX 1024 x 1024: 4608 x 128 values, Wan 480p: 32760 x 128);
* ``q``/``q_out`` where a rotation is sampled: random float32 q of the sampled rows and the
  peer's own rotation of it.

Usage (nothing is added to the venv; diffusers lives in its own --target directory):

    PYTHONPATH=/var/cache/posenc/diffusers-0.42 \\
        /var/cache/posenc/venv-torch-2.15.0/bin/python scripts/gen_layouts_reference.py

Rerunning it writes the same arrays (the zip entries' timestamps differ), about 60 kB.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "python", "tests", "data", "multiaxis_layouts.npz")


def sha(t: torch.Tensor) -> np.ndarray:
    a = np.ascontiguousarray(t.detach().contiguous().numpy())
    return np.array(hashlib.sha256(a.tobytes()).hexdigest())


class Cases:
    def __init__(self):
        self.arrays = {}

    def put(self, case: str, **kv):
        for k, v in kv.items():
            if isinstance(v, torch.Tensor):
                v = v.detach().numpy()
            self.arrays[f"{case}/{k}"] = np.asarray(v)


def flux(c: Cases):
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline

    # FluxPipeline at 1024 x 1024: vae_scale_factor 8, latents packed 2 x 2 -> 64 x 64 patches; 512 T5 tokens.
    img_ids = FluxPipeline._prepare_latent_image_ids(1, 64, 64, "cpu", torch.float32)
    txt_ids = torch.zeros(512, 3, dtype=torch.float32)
    ids = torch.cat((txt_ids, img_ids), dim=0)  # FluxTransformer2DModel.forward
    with torch.no_grad():
        cos, sin = FluxPosEmbed(theta=10000, axes_dim=[16, 56, 56])(ids)
    assert cos.dtype == torch.float32 and cos.shape == (4608, 128), (cos.dtype, cos.shape)
    rows = np.array([0, 511, 512, 513, 576, 2600, 4607])
    g = torch.Generator().manual_seed(11)
    q = torch.randn(1, len(rows), 2, 128, generator=g)  # [B, S, H, D], diffusers' attention layout
    from diffusers.models.embeddings import apply_rotary_emb

    q_out = apply_rotary_emb(q, (cos[rows], sin[rows]), sequence_dim=1)
    c.put("flux_1024", ids=ids.long().T.contiguous(), rows=rows, cos=cos[rows], sin=sin[rows], sha_cos=sha(cos),
          sha_sin=sha(sin), q=q, q_out=q_out)


def wan(c: Cases):
    from diffusers.models.transformers.transformer_wan import WanRotaryPosEmbed

    # Wan 2.1 T2V 14B: head_dim 128, patch (1, 2, 2), max_seq_len 1024; 81 frames at 480 x 832 ->
    # latents [16, 21, 60, 104] -> 21 x 30 x 52 patches.
    rope = WanRotaryPosEmbed(128, (1, 2, 2), 1024, 10000.0)
    with torch.no_grad():
        cos, sin = rope(torch.zeros(1, 1, 21, 60, 104))
    assert cos.dtype == torch.float32 and cos.shape == (1, 32760, 1, 128), (cos.dtype, cos.shape)
    f, h, w = torch.meshgrid(torch.arange(21), torch.arange(30), torch.arange(52), indexing="ij")
    ids = torch.stack([f.reshape(-1), h.reshape(-1), w.reshape(-1)])
    rows = np.array([0, 51, 52, 1560, 17000, 32759])
    g = torch.Generator().manual_seed(12)
    q = torch.randn(1, len(rows), 2, 128, generator=g)  # [B, S, H, D]
    # WanAttnProcessor's apply_rotary_emb: x.unflatten(-1, (-1, 2)) pairs, cos[..., 0::2], sin[..., 1::2]
    x1, x2 = q.unflatten(-1, (-1, 2)).unbind(-1)
    cr, sr = cos[:, rows][..., 0::2], sin[:, rows][..., 1::2]
    q_out = torch.empty_like(q)
    q_out[..., 0::2] = x1 * cr - x2 * sr
    q_out[..., 1::2] = x1 * sr + x2 * cr
    c.put("wan_480p_81", ids=ids, rows=rows, cos=cos[0, rows, 0], sin=sin[0, rows, 0], sha_cos=sha(cos),
          sha_sin=sha(sin), q=q, q_out=q_out)


def hunyuan(c: Cases):
    from diffusers.models.transformers.transformer_hunyuan_video import HunyuanVideoRotaryPosEmbed

    # HunyuanVideo: patch 2, patch_t 1, rope_axes_dim (16, 56, 56), theta 256; 33 frames at 320 x 512
    # -> latents [16, 9, 40, 64] -> 9 x 20 x 32 patches. The module computes in float32.
    rope = HunyuanVideoRotaryPosEmbed(2, 1, [16, 56, 56], 256.0)
    with torch.no_grad():
        cos, sin = rope(torch.zeros(1, 1, 9, 40, 64))
    t, h, w = torch.meshgrid(torch.arange(9), torch.arange(20), torch.arange(32), indexing="ij")
    ids = torch.stack([t.reshape(-1), h.reshape(-1), w.reshape(-1)])
    rows = np.array([0, 31, 32, 640, 3000, 5759])
    c.put("hunyuan_video_320x512x33", ids=ids, rows=rows, cos=cos[rows], sin=sin[rows])


def qwen_image(c: Cases):
    from diffusers.models.transformers.transformer_qwenimage import QwenEmbedRope

    # Qwen-Image: axes_dims_rope (16, 56, 56), theta 10000, scale_rope; a 1024 x 1024 image (64 x 64
    # patches) and a 768 x 1280 one (48 x 80) in one call (Qwen-Image-Edit), 77 text tokens.
    rope = QwenEmbedRope(theta=10000, axes_dim=[16, 56, 56], scale_rope=True)
    shapes = [(1, 64, 64), (1, 48, 80)]
    with torch.no_grad():
        vid, txt = rope([shapes], max_txt_seq_len=77)
    ids = []
    for idx, (fr, h, w) in enumerate(shapes):
        F, H, W = torch.meshgrid(torch.arange(idx, idx + fr), torch.arange(h) - (h - h // 2),
                                 torch.arange(w) - (w - w // 2), indexing="ij")
        ids.append(torch.stack([F.reshape(-1), H.reshape(-1), W.reshape(-1)]))
    m = max(max(h // 2, w // 2) for _, h, w in shapes)
    t = torch.arange(m, m + 77)
    rows = np.array([0, 32, 2080, 4096, 4096 + 1919, 4096 + 3839])
    trows = np.array([0, 76])
    c.put("qwen_image_2img", ids=torch.cat(ids, dim=1), text_ids=torch.stack([t, t, t]), rows=rows, trows=trows,
          re=vid[rows].real, im=vid[rows].imag, text_re=txt[trows].real, text_im=txt[trows].imag,
          shape=np.array(vid.shape), text_shape=np.array(txt.shape))


def qwen_vl(c: Cases):
    from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLVisionConfig
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLVisionRotaryEmbedding
    from transformers.vision_utils import get_vision_position_ids, get_vision_window_index

    # Qwen2.5-VL-7B's vision tower: 1280 wide, 16 heads (head_dim 80), spatial_merge_size 2, window 112,
    # patch 14. An image of 476 x 644 px (34 x 46 patches), a video of 2 temporal patches at 252 x 336 px.
    cfg = Qwen2_5_VLVisionConfig(hidden_size=1280, num_heads=16)
    rope = Qwen2_5_VLVisionRotaryEmbedding(cfg)
    grid = torch.tensor([[1, 34, 46], [2, 18, 24]])
    pos = get_vision_position_ids(grid, 2)  # [tokens, 2]
    win, cu = get_vision_window_index(grid, 2, 112, 14)
    with torch.no_grad():
        cos, sin = rope(torch.zeros(1), pos)
    rows = np.array([0, 1, 2, 3, 4, 100, 1563, 1564, pos.shape[0] - 1])
    c.put("qwen2_5_vl_vision", grid=grid, ids=pos.T.contiguous(), window_index=win, cu_window_seqlens=cu,
          rows=rows, cos=cos[rows], sin=sin[rows], shape=np.array(cos.shape))


def pixtral(c: Cases):
    from transformers.models.pixtral.configuration_pixtral import PixtralVisionConfig
    from transformers.models.pixtral.modeling_pixtral import PixtralVisionRotaryEmbedding

    # Pixtral-12B / Mistral Small 3.1 vision: head_dim 64, theta 10000, patch 16; images of 512 x 768 px
    # (32 x 48 patches) and 160 x 96 px (10 x 6).
    cfg = PixtralVisionConfig()
    rope = PixtralVisionRotaryEmbedding(cfg)
    ids = []
    for h, w in [(32, 48), (10, 6)]:
        hh, ww = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        ids.append(torch.stack([hh.flatten(), ww.flatten()], dim=-1))
    pos = torch.cat(ids, dim=0)
    with torch.no_grad():
        cos, sin = rope(torch.zeros(1), pos)
    rows = np.array([0, 1, 47, 48, 1535, 1536, 1595])
    c.put("pixtral_vision", ids=pos.T.contiguous(), rows=rows, cos=cos[rows], sin=sin[rows], shape=np.array(cos.shape))


def llama4(c: Cases):
    from transformers.models.llama4.configuration_llama4 import Llama4VisionConfig
    from transformers.models.llama4.modeling_llama4 import Llama4VisionRotaryEmbedding

    # Llama 4 Scout / Maverick vision: 1408 wide, 16 heads (head_dim 88), image 336, patch 14: 24 x 24
    # patches and the class token last.
    cfg = Llama4VisionConfig(hidden_size=1408, num_attention_heads=16, image_size=336, patch_size=14)
    with torch.no_grad():
        fc = Llama4VisionRotaryEmbedding(cfg)(torch.zeros(1))  # [577, 1, 44] complex64
    rows = np.array([0, 1, 23, 24, 300, 575, 576])
    c.put("llama4_vision", rows=rows, re=fc[rows].real, im=fc[rows].imag, shape=np.array(fc.shape))


def dinov3(c: Cases):
    from transformers.models.dinov3_vit.configuration_dinov3_vit import DINOv3ViTConfig
    from transformers.models.dinov3_vit.modeling_dinov3_vit import DINOv3ViTRopePositionEmbedding

    # DINOv3 ViT-S/16: head_dim 64, rope_theta 100; a 224 x 320 image: 14 x 20 patches.
    cfg = DINOv3ViTConfig()
    rope = DINOv3ViTRopePositionEmbedding(cfg).eval()
    with torch.no_grad():
        cos, sin = rope(torch.zeros(1, 3, 224, 320))
    rows = np.array([0, 1, 19, 20, 140, 279])
    c.put("dinov3_vits16", rows=rows, cos=cos[rows], sin=sin[rows], shape=np.array(cos.shape))


def main():
    import diffusers
    import transformers

    assert diffusers.__version__ == "0.42.1", diffusers.__version__
    assert transformers.__version__ == "5.23.0", transformers.__version__
    torch.set_num_threads(1)
    c = Cases()
    c.put("versions", diffusers=np.array(diffusers.__version__), transformers=np.array(transformers.__version__),
          torch=np.array(torch.__version__.split("+")[0]))
    for gen in (flux, wan, hunyuan, qwen_image, qwen_vl, pixtral, llama4, dinov3):
        gen(c)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    np.savez_compressed(OUT, **c.arrays)
    print(f"{os.path.relpath(OUT, ROOT)}: {os.path.getsize(OUT)} bytes, {len(c.arrays)} arrays")


if __name__ == "__main__":
    main()

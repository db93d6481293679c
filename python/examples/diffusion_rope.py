"""FLUX's and Wan's RoPE from posenc: the positions the pipelines build, the exact cos/sin tables
in diffusers' layout, and the rotation applied in place to q and k of diffusers' [B, S, H, D]."""
import torch

from posenc import layouts

# FLUX.1 at 1024 x 1024 px: 64 x 64 patches (VAE factor 8, latents packed 2 x 2) after 512 text tokens
ids = layouts.flux_ids(512, 64, 64)                        # int64 [4608, 3], FluxPipeline's ids
cos, sin = layouts.FluxPosEmbed(10000, [16, 56, 56])(ids)  # float32 [4608, 128], FluxPosEmbed's layout

torch.manual_seed(0)
q = torch.randn(1, ids.shape[0], 2, 128)                   # [B, S, H, D], diffusers' attention layout
k = torch.randn(1, ids.shape[0], 2, 128)
# diffusers' apply_rotary_emb (use_real_unbind_dim=-1): x cos + rotate(x) sin, neighbouring columns paired
x1, x2 = q.unflatten(-1, (-1, 2)).unbind(-1)
q_diffusers = q * cos[:, None] + torch.stack([-x2, x1], -1).flatten(-2) * sin[:, None]

rope = layouts.AxesRope("flux")                            # axes_dim (16, 56, 56), theta 10000, interleaved
rope.apply_(q.transpose(1, 2), k.transpose(1, 2), ids.t())  # in place, through [B, H, S, D] views
print("FLUX: %d tokens, max |posenc - diffusers' formula| = %.1e" % (ids.shape[0], (q - q_diffusers).abs().max()))

# Wan 2.1 at 480 x 832 px, 81 frames: latents 21 x 60 x 104, patches (1, 2, 2) -> 21 x 30 x 52 tokens
wan = layouts.WanRotaryPosEmbed(128, (1, 2, 2), 1024)
cos, sin = wan(torch.zeros(1, 16, 21, 60, 104))            # float32 [1, 32760, 1, 128], diffusers' layout
pos = wan.positions(21, 60, 104)                           # int64 [3, 32760]: (frame, row, column)
print("Wan: %d tokens, the last at (frame, row, column) %s" % (pos.shape[1], tuple(pos[:, -1].tolist())))

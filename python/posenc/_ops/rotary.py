"""1-D RoPE: apply_rotary / apply_rotary_ (rope_rotate) and rope / rope_ (any frequencies;
posenc.RotaryEmbedding builds them from a config) over torch.ops.posenc (rotary.cpp)."""
from typing import Optional

import torch

from ._common import _P, _on_mesh


def _rope_opts(positions, head_dim, rotary_dim, layout, base, first_position, position_step):
    if positions is not None:
        positions = positions.to(torch.float64).contiguous()
    return (positions, int(head_dim), int(rotary_dim), layout, float(base), float(first_position), float(position_step))


def apply_rotary(x: torch.Tensor, positions: Optional[torch.Tensor] = None, head_dim: int = 0, rotary_dim: int = 0,
                 layout: str = "interleaved", base: float = 10000.0, first_position: float = 0.0,
                 position_step: float = 1.0) -> torch.Tensor:
    """RoPE: the rotated copy of x [..., L, heads * head_dim]; row i at position
    first_position + i * position_step (or positions[i]); head_dim 0 = the whole row is one head;
    rotary_dim 0 = head_dim. Differentiable (twice, too)."""
    opts = _rope_opts(positions, head_dim, rotary_dim, layout, base, first_position, position_step)
    return _P.rope_rotate(x, *_on_mesh(x, opts[0]), *opts[1:])


def apply_rotary_(x: torch.Tensor, positions: Optional[torch.Tensor] = None, head_dim: int = 0, rotary_dim: int = 0,
                  layout: str = "interleaved", base: float = 10000.0, first_position: float = 0.0,
                  position_step: float = 1.0) -> torch.Tensor:
    """RoPE applied to x in place (x must be contiguous); recorded by autograd when x needs grad."""
    opts = _rope_opts(positions, head_dim, rotary_dim, layout, base, first_position, position_step)
    opts = _on_mesh(x, opts[0]) + opts[1:]
    if torch.is_grad_enabled() and x.requires_grad:
        return x.copy_(_P.rope_rotate(x, *opts))  # recorded by autograd (the rotation saves nothing of x)
    _P.rope_rotate_(x, *opts)
    return x


def _xpos_args(xpos):
    """xpos: None/False (off), True (torchscale's gamma 0.4, scale_base 512, center 0) or a dict
    with any of gamma, scale_base, center."""
    if xpos is None or xpos is False:
        return (False, 0.4, 512.0, 0.0)
    d = {} if xpos is True else dict(xpos)
    unknown = set(d) - {"gamma", "scale_base", "center"}
    if unknown:
        raise ValueError("posenc: rope: xpos: expected keys gamma, scale_base, center, got %s" % sorted(unknown))
    return (True, float(d.get("gamma", 0.4)), float(d.get("scale_base", 512.0)), float(d.get("center", 0.0)))


def _rope_args(x, position_ids, cu_seqlens, offsets, qk_layout):
    if qk_layout not in ("bhsd", "bshd"):
        raise ValueError("posenc: rope: qk_layout: expected 'bhsd' ([batch, heads, seq, head_dim]) or 'bshd' "
                         "([batch, seq, heads, head_dim]), got %r" % (qk_layout,))
    v = x.transpose(1, 2) if x.dim() == 4 and qk_layout == "bshd" else x
    if position_ids is not None:
        if v.dim() == 4 and position_ids.dim() == 1:
            position_ids = position_ids.expand(v.shape[0], position_ids.shape[0])
        position_ids = position_ids.contiguous()
    if cu_seqlens is not None:
        cu_seqlens = cu_seqlens.contiguous()
    if offsets is not None:
        offsets = offsets.contiguous()
    return v, position_ids, cu_seqlens, offsets


def rope(x: torch.Tensor, inv_freq: torch.Tensor, attention_factor: float = 1.0,
         position_ids: Optional[torch.Tensor] = None, cu_seqlens: Optional[torch.Tensor] = None,
         offsets: Optional[torch.Tensor] = None, layout: str = "half", key: bool = False, qk_layout: str = "bhsd",
         xpos=None) -> torch.Tensor:
    """The rotated copy of q or k (key=True: the key side of xPos). x: [B, H, S, D] ("bhsd"), [B, S, H, D]
    ("bshd") or ragged [T, H, D]; positions offsets[b] + s, or per token position_ids ([B, S] / [S]
    dense, [T] ragged); ragged sequences by cu_seqlens [B + 1]. inv_freq: float64 [rotary_dim / 2], or
    [rotary_dim / 2, 2, 3], the exact frequencies of RotaryEmbedding.freqs (the first rotary_dim
    channels of each head turn); cos/sin scaled by attention_factor. Differentiable
    (any order: the backward is the transposed rotation, the same op)."""
    v, p, c, o = _rope_args(x, position_ids, cu_seqlens, offsets, qk_layout)
    inv_freq, p, c, o = _on_mesh(x, inv_freq, p, c, o)
    y = _P.rope(v, inv_freq, float(attention_factor), p, c, o, layout, bool(key), False, *_xpos_args(xpos))
    return y.transpose(1, 2) if x.dim() == 4 and qk_layout == "bshd" else y


def rope_(x: torch.Tensor, inv_freq: torch.Tensor, attention_factor: float = 1.0,
          position_ids: Optional[torch.Tensor] = None, cu_seqlens: Optional[torch.Tensor] = None,
          offsets: Optional[torch.Tensor] = None, layout: str = "half", key: bool = False, qk_layout: str = "bhsd",
          xpos=None) -> torch.Tensor:
    """rope() in place on x's own memory (any strides with head_dim contiguous); returns x. Recorded
    by autograd when x needs a gradient."""
    if torch.is_grad_enabled() and x.requires_grad:
        return x.copy_(rope(x, inv_freq, attention_factor, position_ids, cu_seqlens, offsets, layout, key, qk_layout,
                            xpos))
    v, p, c, o = _rope_args(x, position_ids, cu_seqlens, offsets, qk_layout)
    inv_freq, p, c, o = _on_mesh(x, inv_freq, p, c, o)
    _P.rope_(v, inv_freq, float(attention_factor), p, c, o, layout, bool(key), False, *_xpos_args(xpos))
    return x

"""1-D RoPE: apply_rotary / apply_rotary_ (rope_rotate), rope / rope_ (any frequencies;
posenc.RotaryEmbedding builds them from a config), and rope_decode / rope_decode_ with the shared
table cache's rope_cache_* over torch.ops.posenc (rotary.cpp)."""
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


def _decode_args(q, k, position_ids, qk_layout):
    if qk_layout not in ("bhsd", "bshd"):
        raise ValueError("posenc: rope: qk_layout: expected 'bhsd' ([batch, heads, seq, head_dim]) or 'bshd' "
                         "([batch, seq, heads, head_dim]), got %r" % (qk_layout,))
    t = q.dim() == 4 and qk_layout == "bshd"
    vq = q.transpose(1, 2) if t else q
    vk = k.transpose(1, 2) if t and k is not None and k.dim() == 4 else k
    if position_ids is not None and vq.dim() == 4 and position_ids.dim() == 1:
        position_ids = position_ids.expand(vq.shape[0], position_ids.shape[0])
    return t, vq, vk, position_ids


def rope_decode(q: torch.Tensor, k: Optional[torch.Tensor], inv_freq: torch.Tensor, attention_factor: float = 1.0,
                position_ids: Optional[torch.Tensor] = None, cu_seqlens: Optional[torch.Tensor] = None,
                offsets: Optional[torch.Tensor] = None, layout: str = "half", qk_layout: str = "bhsd"):
    """(rope(q), rope(k, key=True)) without xPos, bitwise their result, in one call (k may be None:
    then (rope(q), None)), with decode steps (one token per sequence: dense [B, H, 1, D], ragged
    single tokens) gathered from posenc's shared table of exact coefficients
    (posenc::rotary::decode_cache, see rope_cache_info); any other call is rope() itself. Not
    differentiable: for inference (RotaryEmbedding takes rope() when a gradient is needed)."""
    t, vq, vk, p = _decode_args(q, k, position_ids, qk_layout)
    out = _P.rope_decode(vq, vk, inv_freq, float(attention_factor), p, cu_seqlens, offsets, layout)
    if t:
        out = [y.transpose(1, 2) for y in out]
    return out[0], (out[1] if k is not None else None)


def rope_decode_(q: torch.Tensor, k: Optional[torch.Tensor], inv_freq: torch.Tensor, attention_factor: float = 1.0,
                 position_ids: Optional[torch.Tensor] = None, cu_seqlens: Optional[torch.Tensor] = None,
                 offsets: Optional[torch.Tensor] = None, layout: str = "half", qk_layout: str = "bhsd"):
    """rope_decode() in place on q's and k's own memory; returns (q, k)."""
    _, vq, vk, p = _decode_args(q, k, position_ids, qk_layout)
    _P.rope_decode_(vq, vk, inv_freq, float(attention_factor), p, cu_seqlens, offsets, layout)
    return q, k


def rope_cache_info() -> dict:
    """What posenc's shared RoPE table cache holds: tables (sets of frequencies with a table),
    keys (sets remembered: a table is made the second time a set is asked for), bytes (of all
    tables), builds (tables made or grown since the last clear)."""
    t, k, b, n = _P.rope_cache_info()
    return {"tables": int(t), "keys": int(k), "bytes": int(b), "builds": int(n)}


def rope_cache_clear() -> None:
    """Drop every table of the shared RoPE cache (a call using one keeps it until it returns)."""
    _P.rope_cache_clear()


def rope_cache_limits(max_positions: Optional[int] = None, max_bytes: Optional[int] = None,
                      max_tables: Optional[int] = None) -> dict:
    """Set the bounds of the shared RoPE cache (None: unchanged) and return them: max_positions
    (rows of a table at most, default 2^17; a position at or past it takes the exact
    per-position path), max_bytes (all tables, default 1 GiB), max_tables (sets of frequencies
    remembered, default 64, least recently used first out)."""
    m = lambda v: -1 if v is None else int(v)  # noqa: E731
    p, b, t = _P.rope_cache_limits(m(max_positions), m(max_bytes), m(max_tables))
    return {"max_positions": int(p), "max_bytes": int(b), "max_tables": int(t)}

"""ALiBi: alibi_slopes, alibi_bias and alibi_add over torch.ops.posenc (alibi.cpp)."""
from typing import Optional

import torch

from ._common import _P, _dtype, _on_mesh


def alibi_slopes(heads: int) -> torch.Tensor:
    """The authors' slopes m_h (float64 [heads]): 2^(-8 (h+1) / n) for n a power of two, else the
    interleaving of get_slopes."""
    return _P.alibi_slopes(int(heads))


def alibi_bias(slopes: torch.Tensor, q_len: int, k_len: int, q_offset: int = 0, form: str = "relative",
               causal_mask: bool = False, dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """The bias [heads, q_len, k_len]: query row i at position q_offset + i, key column j at j; form
    'relative' (-m (i - j)), 'key_position' (m j: BLOOM, fairseq) or 'symmetric' (-m |i - j|);
    causal_mask writes -inf where j > i."""
    return _P.alibi_bias(slopes, int(q_len), int(k_len), int(q_offset), form, bool(causal_mask), _dtype(dtype))


def alibi_add(scores: torch.Tensor, slopes: torch.Tensor, q_offsets: Optional[torch.Tensor] = None,
              form: str = "relative", causal_mask: bool = False, inplace: bool = False) -> torch.Tensor:
    """scores [B, H, q_len, k_len] plus the ALiBi bias (query row r of sequence b at q_offsets[b] + r;
    None: k_len - q_len, the queries are the last keys). Differentiable in scores (out of place)."""
    if q_offsets is not None:
        q_offsets = q_offsets.contiguous()
    slopes, q_offsets = _on_mesh(scores, slopes, q_offsets)
    if inplace and not (torch.is_grad_enabled() and scores.requires_grad):
        _P.alibi_add_(scores, slopes, q_offsets, form, bool(causal_mask))
        return scores
    y = _P.alibi_add(scores, slopes, q_offsets, form, bool(causal_mask))
    return scores.copy_(y) if inplace else y

"""Sinusoidal tables: sinusoidal_table and rope_tables over torch.ops.posenc (sinusoidal.cpp)."""
from typing import Optional

import torch

from ._common import _P, _dtype


def sinusoidal_table(L: int, d: int, layout: str = "interleaved", spacing: str = "two_k_over_d", base: float = 10000.0,
                     first_position: float = 0.0, position_step: float = 1.0, zero_pad_odd: bool = False,
                     positions: Optional[torch.Tensor] = None, dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """The [L, d] sinusoidal table: row i = PE(first_position + i * position_step) (or positions[i]).
    layout 'interleaved' (eq. 6: sin, cos, sin, ...) or 'half' ([sin | cos], fairseq/tensor2tensor);
    spacing 'two_k_over_d' (w_k = base^(-2k/d)) or 'k_over_half_minus_one' (fairseq)."""
    return _P.sinusoidal_table(int(L), int(d), layout, spacing, float(base), float(first_position), float(position_step),
                               bool(zero_pad_odd), positions, _dtype(dtype))


def rope_tables(L: int, rotary_dim: int, base: float = 10000.0, first_position: float = 0.0, position_step: float = 1.0,
                positions: Optional[torch.Tensor] = None, dtype: Optional[torch.dtype] = None):
    """(cos, sin), each [L, rotary_dim // 2]: angle of row i, column k = x_i * base^(-2k / rotary_dim)."""
    return _P.rope_tables(int(L), int(rotary_dim), float(base), float(first_position), float(position_step), positions,
                          _dtype(dtype))

"""Fake kernels of the sinusoidal table ops (sinusoidal.cpp)."""
import torch

from ._common import register


@register("sinusoidal_table")
def _sinusoidal_table(L, d, layout="interleaved", spacing="two_k_over_d", base=10000.0, first_position=0.0,
                      position_step=1.0, zero_pad_odd=False, positions=None, dtype=torch.float64):
    rows = positions.shape[0] if positions is not None else L
    return torch.empty((rows, d), dtype=dtype)


@register("rope_tables")
def _rope_tables(L, rotary_dim, base=10000.0, first_position=0.0, position_step=1.0, positions=None,
                 dtype=torch.float64):
    rows = positions.shape[0] if positions is not None else L
    return torch.empty((rows, rotary_dim // 2), dtype=dtype), torch.empty((rows, rotary_dim // 2), dtype=dtype)

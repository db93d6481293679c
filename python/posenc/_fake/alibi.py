"""Fake kernels of the ALiBi ops (alibi.cpp)."""
import torch

from ._common import register


@register("alibi_slopes")
def _alibi_slopes(heads):
    return torch.empty((heads,), dtype=torch.float64)


@register("alibi_bias")
def _alibi_bias(slopes, q_len, k_len, q_offset=0, form="relative", causal_mask=False, dtype=torch.float32):
    return torch.empty((slopes.shape[0], q_len, k_len), dtype=dtype)


@register("alibi_add")
def _alibi_add(scores, *args):
    return torch.empty_like(scores, memory_format=torch.contiguous_format)


@register("alibi_add_")
def _alibi_add_(scores, *args):
    return None

"""Fake kernels of the 1-D rotary ops (rotary.cpp)."""
import torch

from ._common import register


@register("rope_rotate")
def _rope_rotate(x, *args):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@register("rope_rotate_")
def _rope_rotate_(x, *args):
    return None


@register("rope")
def _rope(x, inv_freq, *args):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@register("rope_")
def _rope_(x, inv_freq, *args):
    return None


@register("rope_decode")
def _rope_decode(q, k, inv_freq, *args):
    return [torch.empty_like(t, memory_format=torch.contiguous_format) for t in ((q,) if k is None else (q, k))]


@register("rope_decode_")
def _rope_decode_(q, k, inv_freq, *args):
    return None


@register("rope_decode_cos_sin")
def _rope_decode_cos_sin(position_ids, inv_freq, attention_factor=1.0, dtype=torch.float32):
    return _rope_cos_sin(position_ids, inv_freq, attention_factor, dtype)


@register("rope_frequencies")
def _rope_frequencies(config_json, seq_len=0, layer_type=None, semantics="transformers_5",
                      longrope_rule="init_function", exact=False):
    # no tensor input: the sizes come from the config, so ask the real kernel outside fake mode
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        inv, af, hd, rd, dep = torch.ops.posenc.rope_frequencies(config_json, seq_len, layer_type, semantics,
                                                                 longrope_rule, exact)
    return torch.empty(inv.shape, dtype=inv.dtype), af, hd, rd, dep


@register("rope_frequencies_at")
def _rope_frequencies_at(positions, config_json, pairs, layer_type=None, semantics="transformers_5",
                         longrope_rule="init_function"):
    # the values depend on max(positions); the shape is [pairs, 2, 3] whatever they are
    return positions.new_empty((pairs, 2, 3), dtype=torch.float64)


@register("rope_cos_sin")
def _rope_cos_sin(position_ids, inv_freq, attention_factor=1.0, dtype=torch.float32):
    shape = tuple(position_ids.shape) + (2 * inv_freq.shape[0],)
    return torch.empty(shape, dtype=dtype), torch.empty(shape, dtype=dtype)

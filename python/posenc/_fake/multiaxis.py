"""Fake kernels of the multi-axis RoPE ops (multiaxis.cpp)."""
import torch

from ._common import register


@register("mrope_config")
def _mrope_config(config_json):
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        out = torch.ops.posenc.mrope_config(config_json)
    return (torch.empty(out[0].shape, dtype=out[0].dtype), torch.empty(out[1].shape, dtype=out[1].dtype)) + tuple(out[2:])


@register("axes_cos_sin")
def _axes_cos_sin(position_ids, freqs, axis, attention_factor=1.0, dtype=torch.float32, duplicated=True):
    shape = tuple(position_ids.shape[1:]) + ((2 if duplicated else 1) * freqs.shape[0],)
    return torch.empty(shape, dtype=dtype), torch.empty(shape, dtype=dtype)


@register("axes_rope")
def _axes_rope(x, position_ids, freqs, axis, *args):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@register("axes_rope_")
def _axes_rope_(x, position_ids, freqs, axis, *args):
    return None


@register("get_rope_index")
def _get_rope_index(mm_token_type_ids, *args):
    B, S = mm_token_type_ids.shape
    return (torch.empty((3, B, S), dtype=torch.int64), torch.empty((B, 1), dtype=torch.int64))


@register("hunyuan_rope_index")
def _hunyuan_rope_index(mm_token_type_ids, image_grid_thw=None, attention_mask=None, axes=4, spatial_merge_size=2):
    B, S = mm_token_type_ids.shape
    return (torch.empty((axes, B, S), dtype=torch.int64), torch.empty((B, 1), dtype=torch.int64))


def _run_real(name, *args):
    """The real op on its (non-tensor) arguments: the outputs' shapes depend on their values."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        return getattr(torch.ops.posenc, name)(*args)


@register("axes_layout_frequencies")
def _axes_layout_frequencies(model, sizes=(), theta=0.0):
    out = _run_real("axes_layout_frequencies", model, sizes, theta)
    return tuple(torch.empty(t.shape, dtype=t.dtype) for t in out)


@register("axes_layout_positions")
def _axes_layout_positions(model, sizes=(), grids=()):
    out = _run_real("axes_layout_positions", model, sizes, grids)
    return [torch.empty(t.shape, dtype=t.dtype) for t in out]

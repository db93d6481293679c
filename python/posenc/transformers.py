"""posenc's exact RoPE inside a transformers (5.x) model.

``patch_rotary(model)`` finds the model's rotary embedding modules (every submodule with an
``inv_freq`` buffer or per-layer-type ``<layer_type>_inv_freq`` buffers and a
``forward(x, position_ids[, layer_type])`` returning (cos, sin), as Llama, Qwen3, Phi-3, Gemma 3,
gpt-oss and most decoder models have) and replaces their forward by posenc's: the frequencies of
the config's rule for that layer type from posenc's C++ loader (posenc::rotary::load_config on the
config's JSON), the angle position * inv_freq reduced exactly, cos/sin rounded once to the model's
dtype. transformers forms the same angle in float32 (position * float32 inv_freq), which at
position 2^20 is off by up to ~2^20 * 2^-24 = 1/16 rad; posenc's is exact at any position.
The attention code is untouched (it keeps applying cos/sin with its own apply_rotary_pos_emb).
"""
import types

import torch

from .rotary import RotaryEmbedding, config_json


def _text_config(model):
    cfg = model.config
    return getattr(cfg, "get_text_config", lambda: cfg)()


def rotary_modules(model):
    """(name, module, [layer types]) of the rotary embedding modules of a transformers model."""
    out = []
    for name, mod in model.named_modules():
        bufs = dict(mod.named_buffers(recurse=False))
        if "inv_freq" in bufs:
            out.append((name, mod, [None]))
        else:
            lts = sorted(b[: -len("_inv_freq")] for b in bufs if b.endswith("_inv_freq") and "original" not in b)
            if lts:
                out.append((name, mod, lts))
    return out


def patch_rotary(model, semantics: str = "transformers_5"):
    """Replace the rotary embedding of `model` by posenc's exact one (in place); returns the model.
    The replaced modules keep a `posenc` dict {layer_type: (RotaryEmbedding, duplicated)}; `unpatch_rotary`
    restores transformers' forward."""
    text = config_json(_text_config(model))
    mods = rotary_modules(model)
    if not mods:
        raise ValueError("posenc: patch_rotary: no rotary embedding module (a submodule with an inv_freq buffer) in %s"
                         % type(model).__name__)
    for _, mod, lts in mods:
        if not hasattr(mod, "_posenc_original_forward"):
            mod._posenc_original_forward = mod.forward
        mod.posenc = {}
        for lt in lts:
            rot = RotaryEmbedding(text, layer_type=lt, semantics=semantics)
            # the width transformers' module returns: rotary_dim ([c | c], rotate_half) or rotary_dim / 2 (gpt-oss)
            with torch.no_grad():
                probe = (torch.zeros(1), torch.zeros(1, 1, dtype=torch.long)) + (() if lt is None else (lt,))
                width = mod._posenc_original_forward(*probe)[0].shape[-1]
            if width not in (rot.rotary_dim, rot.rotary_dim // 2):
                raise ValueError("posenc: patch_rotary: %s returns cos/sin of width %d, expected rotary_dim = %d or "
                                 "rotary_dim / 2 from the config" % (type(mod).__name__, width, rot.rotary_dim))
            mod.posenc[lt] = (rot, width == rot.rotary_dim)

        def forward(self, x, position_ids, layer_type=None, **kwargs):
            rot, duplicated = self.posenc[layer_type] if layer_type in self.posenc else next(iter(self.posenc.values()))
            cos, sin = rot.cos_sin(position_ids.to("cpu"), dtype=x.dtype)
            if not duplicated:
                h = rot.rotary_dim // 2
                cos, sin = cos[..., :h].contiguous(), sin[..., :h].contiguous()
            return cos.to(x.device), sin.to(x.device)

        mod.forward = types.MethodType(forward, mod)
    return model


def unpatch_rotary(model):
    """Undo patch_rotary."""
    for _, mod, _ in rotary_modules(model):
        if hasattr(mod, "_posenc_original_forward"):
            mod.forward = mod._posenc_original_forward
            del mod._posenc_original_forward
            del mod.posenc
    return model

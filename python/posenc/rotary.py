"""RoPE from a transformers config: the rules, per layer type, come from posenc's C++ loader
(posenc::rotary::load_config on the config's JSON text); nothing about them is re-implemented here."""
import json
from typing import Optional

import torch
from torch import nn

from . import _ops

_P = torch.ops.posenc


def config_json(config) -> str:
    """The JSON text of a transformers config: a JSON string, a dict (a config.json as loaded), or
    a PretrainedConfig (its to_dict(); a multimodal config's text_config is read by the loader)."""
    if isinstance(config, str):
        return config
    if isinstance(config, dict):
        return json.dumps(config)
    if hasattr(config, "to_dict"):
        return json.dumps(config.to_dict(), default=str)
    raise TypeError("posenc: config: expected a transformers config, a dict or a JSON string, got %s"
                    % type(config).__name__)


def rope_frequencies(config, seq_len: int = 0, layer_type: Optional[str] = None, semantics: str = "transformers_5",
                     longrope_rule: str = "init_function"):
    """(inv_freq float64 [rotary_dim / 2], attention_factor, head_dim, rotary_dim, depends_on_seq_len)
    of a config's RoPE for a sequence of seq_len tokens (0: not given, the value at initialisation)."""
    return _P.rope_frequencies(config_json(config), int(seq_len), layer_type, semantics, longrope_rule)


def layer_types(config, semantics: str = "transformers_5"):
    """The layer types the config has a RoPE plan for (["default"] when it is not per layer type)."""
    return list(_P.rope_layer_types(config_json(config), semantics))


class RotaryEmbedding(nn.Module):
    """RoPE of one attention layer type of a transformers model, from its config.

    ``config``: a transformers config object, a config.json dict or its JSON text, v5
    ``rope_parameters`` (flat or per layer type) or legacy ``rope_theta`` / ``rope_scaling``, every
    rule (default, linear, dynamic, yarn, longrope, llama3, ...). ``layer_type`` picks a plan of a
    per-layer-type config (Gemma 3: "full_attention", "sliding_attention"); None: the single plan or
    full_attention. ``layout``: "half" (rotate_half pairs (k, k + rotary_dim/2), HF) or
    "interleaved" ((2k, 2k+1)); partial rotary: only the first rotary_dim channels of each head turn.

    ``forward(q, k=None, position_ids=None, cu_seqlens=None, offsets=None, qk_layout="bhsd")``
    returns rotated copies; ``apply_(...)`` rotates in place. q, k: [B, H, S, D] ("bhsd"), [B, S, H, D]
    ("bshd") or ragged [T, H, D] with cu_seqlens [B + 1] (and offsets [B]) or position_ids [T];
    dense position_ids are [B, S] or [S]. q and k may have different head counts (GQA). Rules whose
    frequencies depend on the sequence length (dynamic, longrope) use seq_len = max(position_ids) + 1
    as transformers does (or the largest offset + length), read from the tensors inside posenc's op
    ``rope_frequencies_at`` (never as a Python number), so every rule compiles with
    ``torch.compile(fullgraph=True, dynamic=True)`` without a graph break. Tensors bf16/f16/f32/f64;
    the angle of each position is exact (reduced in long double, the frequencies carried as
    ``freqs``: float64 [rotary_dim / 2, 2, 3], inv_freq and its low part each as a sum of three
    doubles) and cos/sin are formed in f64 (f32 for bf16/f16).

    Without xPos and without a gradient to record, calls go through ``rope_decode`` /
    ``rope_decode_``: a decode step (one token per sequence) gathers its coefficients from
    posenc's table shared by every module and call with the same frequencies (made once, grown
    by doubling, thread-safe), bitwise the per-position result; see ``posenc.rope_cache_info``.
    """

    def __init__(self, config, layer_type: Optional[str] = None, layout: str = "half",
                 semantics: str = "transformers_5", longrope_rule: str = "init_function", xpos=None):
        super().__init__()
        self.config_text = config_json(config)
        self.layer_type, self.semantics, self.longrope_rule = layer_type, semantics, longrope_rule
        inv, af, hd, rd, dep = _P.rope_frequencies(self.config_text, 0, layer_type, semantics, longrope_rule)
        self.register_buffer("inv_freq", inv, persistent=False)
        exact = _P.rope_frequencies(self.config_text, 0, layer_type, semantics, longrope_rule, True)[0]
        self.register_buffer("freqs", exact, persistent=False)
        self.pairs = int(inv.numel())
        self.attention_factor, self.head_dim, self.rotary_dim = float(af), int(hd), int(rd)
        self.depends_on_seq_len = bool(dep)
        self.layout = layout
        self.xpos = xpos
        self._by_len = {}

    def extra_repr(self):
        return "head_dim=%d, rotary_dim=%d, attention_factor=%g, layout=%s, layer_type=%s" % (
            self.head_dim, self.rotary_dim, self.attention_factor, self.layout, self.layer_type)

    def frequencies(self, seq_len: int = 0):
        """(inv_freq, attention_factor) for a sequence of seq_len tokens."""
        if not self.depends_on_seq_len or seq_len <= 0:
            return self.inv_freq, self.attention_factor
        if seq_len not in self._by_len:
            inv, af, _, _, _ = _P.rope_frequencies(self.config_text, int(seq_len), self.layer_type, self.semantics,
                                                   self.longrope_rule)
            self._by_len[seq_len] = (inv, float(af))
        return self._by_len[seq_len]

    def _positions(self, q, position_ids, cu_seqlens, offsets, qk_layout):
        """An int64 tensor whose largest element + 1 is the sequence length the frequencies are for
        (tensor operations only: no Python number is taken from a tensor)."""
        if position_ids is not None:
            return position_ids
        if q.dim() == 3:
            if cu_seqlens is None:
                return torch.arange(q.shape[0])
            last = cu_seqlens[1:] - cu_seqlens[:-1] - 1
            return (last + offsets if offsets is not None else last).clamp_min(0)
        S = q.shape[2] if qk_layout == "bhsd" else q.shape[1]
        return (offsets + (S - 1)).clamp_min(0) if offsets is not None else torch.arange(S)

    def _freqs(self, positions):
        """The exact frequencies (float64 [pairs, 2, 3]) for seq_len = max(positions) + 1."""
        if not self.depends_on_seq_len:
            return self.freqs
        return _P.rope_frequencies_at(positions, self.config_text, self.pairs, self.layer_type, self.semantics,
                                      self.longrope_rule)

    def _call(self, inplace, q, k, position_ids, cu_seqlens, offsets, qk_layout):
        inv = self._freqs(self._positions(q, position_ids, cu_seqlens, offsets, qk_layout)
                          if self.depends_on_seq_len else None)
        af = self.attention_factor
        if (self.xpos is None and not _ops._is_dtensor(q)
                and not (torch.is_grad_enabled() and (q.requires_grad or (k is not None and k.requires_grad)))):
            # inference: q and k in one call; decode steps gather from the shared table (bitwise
            # rope's result); DTensors take rope / rope_, the ops with sharding rules
            f = _ops.rope_decode_ if inplace else _ops.rope_decode
            return f(q, k, inv, af, position_ids, cu_seqlens, offsets, self.layout, qk_layout)
        f = _ops.rope_ if inplace else _ops.rope
        kw = dict(position_ids=position_ids, cu_seqlens=cu_seqlens, offsets=offsets, layout=self.layout,
                  qk_layout=qk_layout, xpos=self.xpos)
        qo = f(q, inv, af, **kw)
        ko = None if k is None else f(k, inv, af, key=True, **kw)
        return qo, ko

    def forward(self, q, k=None, position_ids=None, cu_seqlens=None, offsets=None, qk_layout: str = "bhsd"):
        return self._call(False, q, k, position_ids, cu_seqlens, offsets, qk_layout)

    def apply_(self, q, k=None, position_ids=None, cu_seqlens=None, offsets=None, qk_layout: str = "bhsd"):
        return self._call(True, q, k, position_ids, cu_seqlens, offsets, qk_layout)

    def cos_sin(self, position_ids, dtype=torch.float32):
        """(cos, sin), each [*position_ids.shape, rotary_dim] in HF's [c | c] layout (what
        transformers' rotary embeddings return), exact and rounded once to dtype: integer positions
        gathered from posenc's shared cos/sin rows of the frequencies and dtype (bitwise the
        per-position values; see posenc.rope_cache_info). DTensor positions take rope_cos_sin, the
        op with sharding rules (posenc.distributed)."""
        freqs = self._freqs(position_ids)
        if _ops._is_dtensor(position_ids):
            return _P.rope_cos_sin(position_ids, *_ops._on_mesh(position_ids, freqs), self.attention_factor, dtype)
        return _P.rope_decode_cos_sin(position_ids, freqs, self.attention_factor, dtype)

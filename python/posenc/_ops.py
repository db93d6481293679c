"""autograd.Functions and nn.Modules over torch.ops.posenc.* (see the package docstring)."""
import math
from typing import Optional, Sequence, Tuple, Union

import torch
from torch import nn

_P = torch.ops.posenc

_ACTIVATIONS = {
    "relu": lambda: nn.ReLU(inplace=True),  # the reference code's nn.ReLU(inplace=True)
    "tanh": nn.Tanh,
    "gelu": nn.GELU,
    "softplus": nn.Softplus,
    "identity": nn.Identity,
}


def _compiling():
    c = getattr(torch, "compiler", None)
    return bool(c is not None and hasattr(c, "is_compiling") and c.is_compiling())


# ---- FLOATER ------------------------------------------------------------------------------------

def _floater_cfg(delta, substeps, activation, time_input, scheme, gradient, adjoint_substeps, threads):
    if gradient not in ("backprop", "adjoint"):
        raise ValueError("posenc: FloaterEncoder: gradient: expected 'backprop' (exact discrete gradient) or "
                         "'adjoint' (continuous adjoint), got %r" % (gradient,))
    if activation not in _ACTIVATIONS:
        raise ValueError("posenc: FloaterEncoder: activation: expected one of %s, got %r"
                         % (", ".join(sorted(_ACTIVATIONS)), activation))
    t1, t2 = (time_input, time_input) if isinstance(time_input, bool) else tuple(time_input)
    return dict(delta=float(delta), substeps=int(substeps), activation=activation, time1=bool(t1), time2=bool(t2),
                scheme=scheme, gradient=gradient, adjoint_substeps=int(adjoint_substeps), threads=int(threads))


def floater_table(w1, b1, w2, b2, p0, L: int, delta: float = 0.01, substeps: int = 5, activation: str = "relu",
                  time_input=(True, True), scheme: str = "rk4", gradient: str = "backprop", adjoint_substeps: int = 0,
                  threads: int = 0):
    """The FLOATER table [L, N, d] of p' = W2 [act(W1 [p; t] + b1); t] + b2 from p(0) = p0 [N, d]
    at t_i = i * delta, with `substeps` steps of `scheme` per interval. w1/w2 are nn.Linear weights
    with the time column last (or without it where time_input is False). Differentiable in every
    tensor; backward by posenc's exact discrete backprop or the continuous adjoint."""
    cfg = _floater_cfg(delta, substeps, activation, time_input, scheme, gradient, adjoint_substeps, threads)
    return _floater_op(int(L), cfg, w1, b1, w2, b2, p0)


def _floater_op(L, cfg, w1, b1, w2, b2, p0):
    return _P.floater_table(w1, b1, w2, b2, p0, L, cfg["delta"], cfg["substeps"], cfg["activation"], cfg["time1"],
                            cfg["time2"], cfg["scheme"], cfg["threads"], cfg["gradient"], cfg["adjoint_substeps"])


class _LinearT(nn.Module):
    """The reference code's Linear_t: nn.Linear(in + 1, out) applied to [x; t] (time column last)."""

    def __init__(self, in_f, out_f, time=True):
        super().__init__()
        self.time = time
        self.linear = nn.Linear(in_f + (1 if time else 0), out_f)
        nn.init.xavier_normal_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, t, x):
        if self.time:
            x = torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device) * t], dim=-1)
        return self.linear(x)


class _FlowFunc(nn.Module):
    """The dynamics h(t, p) with the reference module's layout: layers = [Linear_t, act, Linear_t]
    (so its parameters are layers.0.linear.* and layers.2.linear.*). Its forward(t, p) is plain
    PyTorch, e.g. for torchdiffeq; FloaterEncoder never calls it."""

    def __init__(self, d, hidden, activation, time1, time2):
        super().__init__()
        self.layers = nn.Sequential(_LinearT(d, hidden, time1), _ACTIVATIONS[activation](), _LinearT(hidden, d, time2))

    def forward(self, t, x):
        return self.layers[2](t, self.layers[1](self.layers[0](t, x)))


class FloaterEncoder(nn.Module):
    """FLOATER position encodings (Liu et al., ICML 2020) as a module.

    Parameters are laid out and named as the reference code's encoder, so its state_dict entries
    load unchanged: ``proj_flow.layers.0.linear.weight`` [hidden, d + 1], ``...0.linear.bias``
    [hidden], ``proj_flow.layers.2.linear.weight`` [d, hidden + 1], ``...2.linear.bias`` [d] and
    ``proj_bias`` [*blocks, d] (the reference: [3, n_layers, d]).

    ``forward(L)`` returns the table [L, *blocks, d] (row i = p(i * delta), row 0 = proj_bias).
    Backward runs posenc's exact discrete backprop (``gradient="backprop"``) or the continuous
    adjoint (``gradient="adjoint"``, ``adjoint_substeps`` steps per interval, 0 = ``substeps``).
    In eval mode with no gradient needed, the table is cached: a shorter request is a slice and a
    longer one integrates only the new intervals (bitwise equal to a fresh computation); each call
    returns a copy, and the cache is dropped when a parameter changes (in place or replaced).
    """

    def __init__(self, d: int, hidden: Optional[int] = None, blocks: Union[int, Sequence[int]] = 1,
                 activation: str = "relu", delta: float = 0.01, substeps: int = 5, scheme: str = "rk4",
                 time_input=(True, True), gradient: str = "backprop", adjoint_substeps: int = 0, threads: int = 0):
        super().__init__()
        hidden = d if hidden is None else hidden
        self.cfg = _floater_cfg(delta, substeps, activation, time_input, scheme, gradient, adjoint_substeps, threads)
        self.d, self.hidden = int(d), int(hidden)
        self.blocks = (int(blocks),) if isinstance(blocks, int) else tuple(int(b) for b in blocks)
        self.proj_flow = _FlowFunc(self.d, self.hidden, activation, self.cfg["time1"], self.cfg["time2"])
        self.proj_bias = nn.Parameter(torch.empty(self.blocks + (self.d,)))
        if len(self.proj_bias.shape) >= 2:
            nn.init.xavier_uniform_(self.proj_bias)  # the reference's reset_parameters
        else:
            nn.init.zeros_(self.proj_bias)
        self._cache = None

    def extra_repr(self):
        c = self.cfg
        return "d=%d, hidden=%d, blocks=%s, activation=%s, delta=%g, substeps=%d, scheme=%s, gradient=%s" % (
            self.d, self.hidden, self.blocks, c["activation"], c["delta"], c["substeps"], c["scheme"], c["gradient"])

    def _tensors(self):
        l1, l2 = self.proj_flow.layers[0].linear, self.proj_flow.layers[2].linear
        return l1.weight, l1.bias, l2.weight, l2.bias, self.proj_bias.reshape(-1, self.d)

    def forward(self, L: int) -> torch.Tensor:
        L = int(L)
        ts = self._tensors()
        shape = (L,) + tuple(self.proj_bias.shape)
        needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in ts)
        if self.training or needs_grad or _compiling():
            self._cache = None
            return _floater_op(L, self.cfg, *ts).view(shape)
        params = (self.proj_flow.layers[0].linear.weight, self.proj_flow.layers[0].linear.bias,
                  self.proj_flow.layers[2].linear.weight, self.proj_flow.layers[2].linear.bias, self.proj_bias)
        key = tuple((p.data_ptr(), p._version, p.dtype, tuple(p.shape)) for p in params) + (tuple(sorted(self.cfg.items())),)
        with torch.no_grad():
            if self._cache is None or self._cache[0] != key:
                table, state = _P.floater_forward(*[t.detach().contiguous() for t in ts], L, self.cfg["delta"],
                                                  self.cfg["substeps"], self.cfg["activation"], self.cfg["time1"],
                                                  self.cfg["time2"], self.cfg["scheme"], self.cfg["threads"])
                self._cache = (key, state, table)
            elif L > self._cache[2].shape[0]:
                self._cache = (key, self._cache[1], _P.floater_extend(self._cache[1], L))
            return self._cache[2][:L].clone().view(shape)  # a copy: in-place use cannot corrupt the cache

    def train(self, mode: bool = True):
        self._cache = None
        return super().train(mode)

    def load_reference_state_dict(self, state_dict, prefix: str = "encoder.", flow: str = "proj_flow",
                                  bias: str = "proj_bias", strict: bool = True):
        """Load the FLOATER tensors of a whole reference (fairseq) model's state_dict: the entries
        ``<prefix><flow>.layers.{0,2}.linear.{weight,bias}`` and ``<prefix><bias>``; everything
        else is ignored. E.g. prefix="decoder.", flow="proj_flow_selfattn",
        bias="proj_bias_selfattn" for the decoder's self-attention flow."""
        own = {}
        for k, v in state_dict.items():
            if k.startswith(prefix + flow + "."):
                own["proj_flow." + k[len(prefix + flow) + 1:]] = v
            elif k == prefix + bias:
                own["proj_bias"] = v
        missing = {"proj_flow.layers.0.linear.weight", "proj_flow.layers.0.linear.bias",
                   "proj_flow.layers.2.linear.weight", "proj_flow.layers.2.linear.bias", "proj_bias"} - set(own)
        if missing:
            raise KeyError("posenc: FloaterEncoder.load_reference_state_dict: missing %s (prefix %r)"
                           % (", ".join(sorted(prefix + m.replace("proj_flow", flow).replace("proj_bias", bias)
                                               for m in missing)), prefix))
        return self.load_state_dict(own, strict=strict)


# ---- sinusoidal and rotary ----------------------------------------------------------------------

def _dtype(dtype):
    return torch.get_default_dtype() if dtype is None else dtype


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
    return _P.rope_rotate(x, *_rope_opts(positions, head_dim, rotary_dim, layout, base, first_position, position_step))


def apply_rotary_(x: torch.Tensor, positions: Optional[torch.Tensor] = None, head_dim: int = 0, rotary_dim: int = 0,
                  layout: str = "interleaved", base: float = 10000.0, first_position: float = 0.0,
                  position_step: float = 1.0) -> torch.Tensor:
    """RoPE applied to x in place (x must be contiguous); recorded by autograd when x needs grad."""
    opts = _rope_opts(positions, head_dim, rotary_dim, layout, base, first_position, position_step)
    if torch.is_grad_enabled() and x.requires_grad:
        return x.copy_(_P.rope_rotate(x, *opts))  # recorded by autograd (the rotation saves nothing of x)
    _P.rope_rotate_(x, *opts)
    return x


# ---- RoPE with any frequencies (posenc.RotaryEmbedding builds them from a config) ------------------

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


# ---- ALiBi -------------------------------------------------------------------------------------------

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
    if inplace and not (torch.is_grad_enabled() and scores.requires_grad):
        _P.alibi_add_(scores, slopes, q_offsets, form, bool(causal_mask))
        return scores
    y = _P.alibi_add(scores, slopes, q_offsets, form, bool(causal_mask))
    return scores.copy_(y) if inplace else y


# ---- TUPE ------------------------------------------------------------------------------------------

def tupe_bias(pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, relative_attention_bias, n: int, heads: int,
              cls: str = "reference", scale: str = "reference", num_buckets: int = 32, max_distance: int = 128,
              ln_eps: float = 1e-5) -> torch.Tensor:
    """TUPE's positional term [heads, n, n] with the reference code's semantics: LayerNorm on the
    position rows, untied q/k projections (nn.Linear layout [out, in]), scale 1/sqrt(2 d/H)
    ('reference') or 1/sqrt(2 d) ('paper'), T5 relative buckets when relative_attention_bias
    [num_buckets + 1, heads] is given (TUPE-R), and the [CLS] reset ('reference') or none ('off').
    q_bias / k_bias / relative_attention_bias may be None. Differentiable in every tensor."""
    return _P.tupe_bias(pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, relative_attention_bias, int(n),
                        int(heads), cls, scale, int(num_buckets), int(max_distance), float(ln_eps))


class TUPEPositionalBias(nn.Module):
    """TUPE's positional term, shared by all layers, named as the reference code's
    TransformerSentenceEncoder: ``pos.weight`` [max_len + 1, d] (one extra row for the [CLS]
    reset), ``pos_ln.{weight,bias}``, ``pos_q_linear.*``, ``pos_k_linear.*`` and, for TUPE-R,
    ``relative_attention_bias.weight`` [num_buckets + 1, heads]. forward(n) -> [heads, n, n].
    Initialisation as init_bert_params: N(0, 0.02) weights and embeddings, zero biases."""

    def __init__(self, d: int, heads: int, max_len: int, relative: bool = True, cls: str = "reference",
                 scale: str = "reference", num_buckets: int = 32, max_distance: int = 128, ln_eps: float = 1e-5,
                 bias: bool = True):
        super().__init__()
        self.heads, self.cls, self.scale = int(heads), cls, scale
        self.num_buckets, self.max_distance = int(num_buckets), int(max_distance)
        self.pos = nn.Embedding(max_len + (1 if cls == "reference" else 0), d)
        self.pos_ln = nn.LayerNorm(d, eps=ln_eps)
        self.pos_q_linear = nn.Linear(d, d, bias=bias)
        self.pos_k_linear = nn.Linear(d, d, bias=bias)
        self.relative_attention_bias = nn.Embedding(num_buckets + 1, heads) if relative else None
        for m in (self.pos, self.pos_q_linear, self.pos_k_linear, self.relative_attention_bias):
            if m is not None:
                nn.init.normal_(m.weight, 0.0, 0.02)
        for m in (self.pos_q_linear, self.pos_k_linear):
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    _NAMES = ("pos", "pos_ln", "pos_q_linear", "pos_k_linear", "relative_attention_bias")

    def load_reference_state_dict(self, state_dict, prefix: str = "decoder.sentence_encoder.", strict: bool = True):
        """Load the positional tensors of a whole reference (guolinke/TUPE, fairseq) model's
        state_dict: BertModel keeps its BertEncoder as `decoder`, whose TransformerSentenceEncoder
        is `sentence_encoder`; everything else in the dict is ignored."""
        own = {k[len(prefix):]: v for k, v in state_dict.items()
               if k.startswith(prefix) and k[len(prefix):].split(".")[0] in self._NAMES}
        return self.load_state_dict(own, strict=strict)

    def forward(self, n: int) -> torch.Tensor:
        rel = None if self.relative_attention_bias is None else self.relative_attention_bias.weight
        return tupe_bias(self.pos.weight, self.pos_ln.weight, self.pos_ln.bias, self.pos_q_linear.weight,
                         self.pos_q_linear.bias, self.pos_k_linear.weight, self.pos_k_linear.bias, rel, n, self.heads,
                         self.cls, self.scale, self.num_buckets, self.max_distance, self.pos_ln.eps)


# ---- T5 buckets ------------------------------------------------------------------------------------

def relative_position_bucket(n: int, num_buckets: int = 32, max_distance: int = 128,
                             bidirectional: bool = True) -> torch.Tensor:
    """[n, n] int64: element (i, j) is the T5 bucket of j - i (key minus query), as TUPE's code."""
    return _P.relative_position_bucket(int(n), int(num_buckets), int(max_distance), bool(bidirectional))


def t5_bias(table: torch.Tensor, n: int, num_buckets: int = 32, max_distance: int = 128,
            bidirectional: bool = True) -> torch.Tensor:
    """bias[h, i, j] = table[bucket(j - i), h] for table [rows >= num_buckets, heads]; differentiable."""
    return _P.t5_bias(table, int(n), int(num_buckets), int(max_distance), bool(bidirectional))


# ---- Toeplitz ----------------------------------------------------------------------------------------

def toeplitz_matmul(b: torch.Tensor, x: torch.Tensor, m: Optional[int] = None) -> torch.Tensor:
    """B X for the m x n Toeplitz matrix B_ij = b_{j-i}, b = [b_{-(m-1)}, ..., b_{n-1}] (length
    m + n - 1; m defaults to n, i.e. 2n - 1 values), x [n, k] or [n]. O(k P log P) by FFT.
    Differentiable in b and x (twice, too)."""
    vec = x.dim() == 1
    xx = x.unsqueeze(1) if vec else x
    m = xx.shape[0] if m is None else int(m)
    y = _P.toeplitz_matmul(b, xx, m)
    return y.squeeze(1) if vec else y

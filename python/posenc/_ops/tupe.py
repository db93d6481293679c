"""TUPE: tupe_bias and TUPEPositionalBias over torch.ops.posenc.tupe_bias (tupe.cpp)."""
import torch
from torch import nn

from ._common import _P


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

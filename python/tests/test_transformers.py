"""posenc.transformers.patch_rotary on small randomly initialised transformers 5 models built from
real configs (tests/rotary/hf/*.v5.json: the configs as transformers 5.23 writes them; layers,
hidden size, heads, experts and vocabulary shrunk, rope parameters and head_dim kept). No weights
are downloaded.

Reference: the same model in float64 whose rotary embedding returns cos/sin of the float64 angle
position * inv_freq (posenc's float64 frequencies of the config's rule, evaluated by torch in
float64: angle error <= 2^20 * 2^-53 ~ 1e-10 rad at position 2^20). transformers forms the angle
in float32 (error up to ulp(2^20) / 2 = 2^-4 rad there); posenc forms it exactly."""
import json
import os

import pytest
import torch

import posenc
import posenc.transformers as pt

transformers = pytest.importorskip("transformers")

HF_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "rotary", "hf")
CASES = {"llama": "llama-3.1-8b", "qwen3": "qwen3-8b-yarn", "phi3": "phi-3-mini-128k", "gemma3": "gemma-3-4b",
         "gpt_oss": "gpt-oss-20b"}


def tiny_config(case):
    with open(os.path.join(HF_DIR, CASES[case] + ".v5.json")) as f:
        cfg = json.load(f)["config"]
    cfg = dict(cfg.get("text_config", cfg))
    for k in ("quantization_config", "architectures", "transformers_version", "auto_map", "dtype", "torch_dtype"):
        cfg.pop(k, None)
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    cfg.update(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, intermediate_size=32,
               vocab_size=64, hidden_size=2 * head_dim if "head_dim" not in cfg else 32, pad_token_id=0,
               bos_token_id=1, eos_token_id=2)
    if "head_dim" in cfg:
        cfg["head_dim"] = head_dim
    if "layer_types" in cfg:  # keep one layer of each type the model has
        types = sorted(set(cfg["layer_types"]), reverse=True)
        cfg["layer_types"] = (types * 2)[:2]
    if "num_local_experts" in cfg:
        cfg.update(num_local_experts=2, num_experts_per_tok=1, experts_per_token=1)
    model_type = cfg.pop("model_type")
    return transformers.AutoConfig.for_model(model_type, **cfg)


def build(case, dtype=torch.float32):
    torch.manual_seed(0)
    cfg = tiny_config(case)
    kw = {"experts_implementation": "eager"} if hasattr(cfg, "num_local_experts") else {}
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager", **kw)
    return model.to(dtype).eval()


def float64_reference(model):
    """model in float64, each rotary module returning cos/sin of the float64 angle."""
    m = model.double()
    text = posenc.rotary.config_json(pt._text_config(m))
    for _, mod, lts in pt.rotary_modules(m):
        width = {}
        for lt in lts:
            probe = (torch.zeros(1), torch.zeros(1, 1, dtype=torch.long)) + (() if lt is None else (lt,))
            width[lt] = mod.forward(*probe)[0].shape[-1]

        def forward(self, x, position_ids, layer_type=None, _w=width, _text=text):
            rot = posenc.RotaryEmbedding(_text, layer_type=layer_type)
            seq = int(position_ids.max()) + 1 if rot.depends_on_seq_len else 0
            inv, af = rot.frequencies(seq)
            ang = position_ids.double()[..., None] * inv
            if _w[layer_type] == 2 * inv.shape[0]:
                ang = torch.cat([ang, ang], -1)
            return torch.cos(ang) * af, torch.sin(ang) * af

        import types
        mod.forward = types.MethodType(forward, mod)
    return m


def logits(model, ids, pos):
    with torch.no_grad():
        return model(input_ids=ids, position_ids=pos, use_cache=False).logits.double()


@pytest.fixture(scope="module")
def results():
    out = {}
    for case in CASES:
        torch.manual_seed(1)
        ids = torch.randint(3, 64, (2, 12))
        short = torch.arange(12).expand(2, 12)
        far = short + 2 ** 20
        hf = build(case)
        ref = float64_reference(build(case))
        res = {}
        for name, pos in (("short", short), ("far", far)):
            res[name + "_hf"] = logits(hf, ids, pos)
            res[name + "_ref"] = logits(ref, ids, pos)
        pt.patch_rotary(hf)
        for name, pos in (("short", short), ("far", far)):
            res[name + "_posenc"] = logits(hf, ids, pos)
        pt.unpatch_rotary(hf)
        res["short_unpatched"] = logits(hf, ids, short)
        out[case] = res
    return out


def dist(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize("case", list(CASES))
def test_drop_in_short_positions_agree_with_hf(case, results):
    r = results[case]
    # Positions 0..11: transformers' float32 angle and inv_freq are within a few ulp of the exact
    # ones (<= 11 * 2^-23 rad), so both runs are the same float32 computation up to rounding:
    # 1e-5 relative to the largest logit (measured: see docs/pytorch.md, ~1e-7).
    assert dist(r["short_posenc"], r["short_hf"]) < 1e-5
    assert dist(r["short_posenc"], r["short_ref"]) < 1e-5
    assert torch.equal(r["short_unpatched"], r["short_hf"])  # unpatch_rotary restores transformers' forward


@pytest.mark.parametrize("case", list(CASES))
def test_drop_in_far_positions_closer_to_float64(case, results):
    r = results[case]
    d_hf, d_posenc = dist(r["far_hf"], r["far_ref"]), dist(r["far_posenc"], r["far_ref"])
    print("%s: position 2^20: |HF - f64| = %.3g, |posenc - f64| = %.3g (relative to max |logit|)" % (case, d_hf, d_posenc))
    # posenc's error stays at float32 rounding of the rest of the model (as at short positions);
    # transformers' float32 angle is off by up to 2^-4 rad there
    assert d_posenc < 1e-5
    assert d_posenc * 10 < d_hf

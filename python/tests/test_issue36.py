"""Compiled rules without graph breaks, one device per call, float64 exact through Python, and the
arguments errors name (issue 36).

References: eager posenc (the compiled graphs must give the eager output to the bit: the same ops
run in both), mpmath at 200 bits (the float64 rotations), the authors' get_slopes (ALiBi)."""
import json
import math
import os
import subprocess
import sys

import pytest
import torch

import posenc
import posenc.transformers as pt

F64 = torch.float64


def llama_dynamic_config():
    return {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1,
            "head_dim": 32, "max_position_embeddings": 64,
            "rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0}}


def phi3_longrope_config():
    pairs = 16
    return {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 4096, "original_max_position_embeddings": 256,
            "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                                "short_factor": [1.0 + 0.05 * k for k in range(pairs)],
                                "long_factor": [2.0 + 0.5 * k for k in range(pairs)]}}


# ---- 1. every rule compiles without a graph break ---------------------------------------------------

def _explain(fn, *args):
    torch._dynamo.reset()
    return torch._dynamo.explain(fn)(*args)


@pytest.mark.parametrize("config", [llama_dynamic_config(), phi3_longrope_config()], ids=["dynamic", "longrope"])
def test_seq_len_rules_compile_without_breaks(config):
    rot = posenc.RotaryEmbedding(config)
    assert rot.depends_on_seq_len

    def f(q, k, pos):
        return rot(q, k, position_ids=pos)

    torch.manual_seed(0)
    q, k = torch.randn(1, 2, 5, 32), torch.randn(1, 1, 5, 32)
    for start in (3, 1000):  # short and long: the two frequency sets of longrope, dynamic scaled or not
        pos = torch.arange(start, start + 5)[None]
        assert _explain(f, q, k, pos).graph_break_count == 0
        torch._dynamo.reset()
        cf = torch.compile(f, fullgraph=True, dynamic=True)
        qe, ke = f(q, k, pos)
        qc, kc = cf(q, k, pos)
        assert torch.equal(qc, qe) and torch.equal(kc, ke)
        # and the eager values are those of the frequencies for seq_len = max + 1
        inv, af = rot.frequencies(start + 5)
        assert torch.allclose(qe, posenc.rope(q, inv, af, position_ids=pos), rtol=0, atol=1e-6)
    # one compiled function serves both lengths (the choice is made inside the op, not in a guard)
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, dynamic=True)
    for start in (3, 1000, 7, 5000):
        pos = torch.arange(start, start + 5)[None]
        assert torch.equal(cf(q, k, pos)[0], f(q, k, pos)[0])
    # decode steps (one token per sequence: the shared table's path, grown inside the op) compile
    # without a break too, bitwise eager, on both sides of the original length
    qd, kd = torch.randn(3, 2, 1, 32), torch.randn(3, 1, 1, 32)
    posd = torch.tensor([[4], [60], [9]])
    assert _explain(f, qd, kd, posd).graph_break_count == 0
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, dynamic=True)
    for top in (60, 300, 5000, 40):
        posd = torch.tensor([[top], [top // 2], [1]])
        for _ in range(2):  # the second call of a set of frequencies makes its table
            qc, kc = cf(qd, kd, posd)
        qe, ke = f(qd, kd, posd)
        assert torch.equal(qc, qe) and torch.equal(kc, ke)
    # the attention factor does not depend on seq_len (the op carries a constant one)
    afs = {float(posenc.rope_frequencies(config, s)[1]) for s in (1, 100, 256, 257, 4096, 100000)}
    assert afs == {rot.attention_factor}


def _hf_model(config):
    transformers = pytest.importorskip("transformers")
    cfg = dict(config)
    cfg.update(num_hidden_layers=1, intermediate_size=32, vocab_size=64, pad_token_id=0, bos_token_id=1,
               eos_token_id=2)
    mt = cfg.pop("model_type")
    torch.manual_seed(0)
    m = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(mt, **cfg),
                                                      attn_implementation="eager")
    return m.eval()


@pytest.mark.parametrize("config", [phi3_longrope_config(), llama_dynamic_config()], ids=["phi3", "llama_dynamic"])
def test_patched_model_compiles_without_breaks(config):
    model = pt.patch_rotary(_hf_model(config))
    ids = torch.randint(3, 64, (1, 6))

    def f(ids, pos):
        return model(input_ids=ids, position_ids=pos, use_cache=False).logits

    with torch.no_grad():
        for start in (0, 300):  # phi3: 300 + 6 > original_max_position_embeddings 256: long factors
            pos = torch.arange(start, start + 6)[None]
            assert _explain(f, ids, pos).graph_break_count == 0
            torch._dynamo.reset()
            out = torch.compile(f, fullgraph=True, dynamic=True)(ids, pos)
            ref = f(ids, pos)
            assert torch.allclose(out, ref, rtol=0, atol=1e-5), (out - ref).abs().max()


# ---- 2. one device per call ------------------------------------------------------------------------

def test_meta_beside_cpu_raises():
    rot = posenc.RotaryEmbedding(llama_dynamic_config())
    q = torch.randn(1, 2, 3, 32)
    pos = torch.arange(3)[None]
    with pytest.raises((ValueError, RuntimeError), match=r"inv_freq: expected the device of x \(cpu\), got meta"):
        posenc.rope(q, rot.inv_freq.to("meta"), position_ids=pos)
    with pytest.raises((ValueError, RuntimeError), match=r"position_ids: expected the device of x \(cpu\), got meta"):
        posenc.rope(q, rot.inv_freq, position_ids=pos.to("meta"))
    with pytest.raises((ValueError, RuntimeError), match=r"inv_freq: expected the device of x \(cpu\), got meta"):
        posenc.rope_(q, rot.inv_freq.to("meta"), position_ids=pos)
    scores = torch.randn(1, 4, 3, 3)
    with pytest.raises((ValueError, RuntimeError), match=r"slopes: expected the device of scores \(cpu\), got meta"):
        posenc.alibi_add(scores, posenc.alibi_slopes(4).to("meta"))
    with pytest.raises((ValueError, RuntimeError), match=r"inv_freq: expected the device of position_ids"):
        torch.ops.posenc.rope_cos_sin(pos, rot.inv_freq.to("meta"))
    # all on meta stays a shape computation
    y = posenc.rope(q.to("meta"), rot.inv_freq.to("meta"), position_ids=pos.to("meta"))
    assert y.device.type == "meta" and y.shape == q.shape


# ---- 3. float64 exact through Python ---------------------------------------------------------------

def test_float64_rotation_within_one_ulp_of_exact_phase_near_2_24():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    cfg = {"hidden_size": 64, "num_attention_heads": 2, "head_dim": 32, "rope_theta": 500000.0,
           "max_position_embeddings": 1 << 25}
    rot = posenc.RotaryEmbedding(cfg)
    theta, d = mpmath.mpf(500000), 32
    pos = torch.tensor([[(1 << 24) - 3, (1 << 24) - 1, 1 << 24, (1 << 24) + 5]])
    q = torch.zeros(1, 1, 4, d, dtype=F64)
    q[..., : d // 2] = 1.0  # x = (1, 0) in every pair: the rotation gives (cos, sin) of the phase
    y = rot(q, position_ids=pos)[0]
    worst = 0.0
    for s in range(pos.shape[1]):
        n = int(pos[0, s])
        for k in range(d // 2):
            ang = n * theta ** (-mpmath.mpf(2 * k) / d)  # the exact phase (of the exact frequency)
            for got, ref in ((y[0, 0, s, k].item(), mpmath.cos(ang)), (y[0, 0, s, k + d // 2].item(), mpmath.sin(ang))):
                err = abs(mpmath.mpf(got) - ref) / math.ulp(float(ref))
                worst = max(worst, float(err))
    assert worst <= 1.0, worst
    # cos_sin through Python: the same exact phase
    c, s_ = rot.cos_sin(pos, dtype=F64)
    n = int(pos[0, 2])
    for k in range(d // 2):
        ang = n * theta ** (-mpmath.mpf(2 * k) / d)
        assert abs(mpmath.mpf(c[0, 2, k].item()) - mpmath.cos(ang)) <= math.ulp(float(mpmath.cos(ang)))
        assert abs(mpmath.mpf(s_[0, 2, k].item()) - mpmath.sin(ang)) <= math.ulp(float(mpmath.sin(ang)))


def test_exact_frequencies_sum_to_the_long_double_and_its_low_part():
    rot = posenc.RotaryEmbedding({"hidden_size": 64, "num_attention_heads": 2, "rope_theta": 10000.0})
    assert rot.freqs.shape == (16, 2, 3) and rot.freqs.dtype == F64
    # the leading double is the float64 inv_freq the module has always exposed
    assert torch.equal(rot.freqs[:, 0, 0], rot.inv_freq)
    # the parts do not overlap: each is below half an ulp of the one before
    hi = rot.freqs[:, 0]
    nz = hi[:, 1] != 0
    assert bool((hi[nz, 1].abs() <= torch.tensor([math.ulp(v) / 2 for v in hi[nz, 0].tolist()], dtype=F64)).all())


# ---- 4. messages naming the right thing ------------------------------------------------------------

def test_huge_position_ids_named():
    q = torch.randn(1, 2, 2, 8)
    inv = torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=F64)
    with pytest.raises(ValueError, match=r"rope_: position_ids: expected positions <= 2\^53 - 1 \(exact in a double\), "
                       r"got 4611686018427387904 at index 1"):
        posenc.rope(q, inv, position_ids=torch.tensor([[0, 1 << 62]]))


def test_integer_scores_named():
    with pytest.raises(TypeError, match=r"alibi_add_: scores: expected dtype"):
        posenc.alibi_add(torch.zeros(1, 2, 3, 3, dtype=torch.int64), posenc.alibi_slopes(2))


def test_patch_rotary_without_config():
    with pytest.raises(TypeError, match="has no transformers config"):
        pt.patch_rotary(torch.nn.Linear(2, 2))


def test_import_without_warnings_and_numpy_declared():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-W", "error", "-c", "import posenc, posenc.transformers"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # torch itself warns "Failed to initialize NumPy" when numpy is missing: numpy is declared
    setup = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "setup.py")
    with open(setup) as f:
        assert '"numpy"' in f.read()


def test_alibi_slopes_correctly_rounded_and_get_slopes_statement(get_slopes):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200

    for n in range(1, 33):
        p = 2 ** math.floor(math.log2(n))
        exps = [mpmath.mpf(8) * (h + 1) / p for h in range(p)] + [mpmath.mpf(8) * (2 * h + 1) / (2 * p)
                                                                   for h in range(n - p)]
        exact = [float(mpmath.mpf(2) ** -e) for e in exps]  # rounded once to the nearest double
        got = posenc.alibi_slopes(n).tolist()
        assert got == exact, n
        ulps = max(abs(a - b) / math.ulp(a) for a, b in zip(got, get_slopes(n)))
        if n <= 9:
            assert ulps == 0, n  # bit for bit with get_slopes
        elif n <= 16:
            assert 1 <= ulps <= 6, (n, ulps)  # what docs/pytorch.md states

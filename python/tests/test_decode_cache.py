"""Decode steps from posenc's shared table (issue 36): RotaryEmbedding's decode steps (one token per
sequence) gather their coefficients from posenc::rotary::decode_cache, and every value they give is
bit for bit what the exact per-position path gives (torch.ops.posenc.rope_ with the exact
frequencies of rope_frequencies_at: the second method), in f32, f16, bf16 and f64, for every rule,
dense and ragged, in place and not; under concurrency from Python threads and several modules;
within the cache's bounds; compiled without a graph break."""
import math
import threading

import pytest
import torch

import posenc

P = torch.ops.posenc
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def llama31_config(heads=4, kv=2, head_dim=64):
    return {"model_type": "llama", "hidden_size": heads * head_dim, "num_attention_heads": heads,
            "num_key_value_heads": kv, "head_dim": head_dim, "max_position_embeddings": 131072,
            "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 8192}}


def rule_configs():
    base = {"hidden_size": 128, "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096}
    pairs = 32
    rules = {
        "default": {"rope_type": "default", "rope_theta": 10000.0},
        "linear": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
        "dynamic": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0},
        "yarn": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 8.0, "original_max_position_embeddings": 512},
        "longrope": {"rope_type": "longrope", "rope_theta": 10000.0, "original_max_position_embeddings": 256,
                     "short_factor": [1.0 + 0.05 * k for k in range(pairs)],
                     "long_factor": [2.0 + 0.5 * k for k in range(pairs)]},
        "llama3": llama31_config()["rope_parameters"],
    }
    out = {}
    for name, rp in rules.items():
        c = dict(base, rope_parameters=rp)
        if name == "longrope":
            c["original_max_position_embeddings"] = 256
        out[name] = c
    return out


def exact(rot, x, pos, key=False, **kw):
    """The exact per-position path on a copy: rope_ with the exact frequencies for seq_len = max + 1."""
    y = x.clone()
    freqs = P.rope_frequencies_at(pos, rot.config_text, rot.pairs, rot.layer_type, rot.semantics, rot.longrope_rule)
    P.rope_(y, freqs, rot.attention_factor, kw.get("position_ids"), kw.get("cu_seqlens"), kw.get("offsets"),
            rot.layout, key)
    return y


def bits_equal(a, b):
    """The same dtype, shape and bytes (NaN payloads and signed zeros included)."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8),
                                                                     b.contiguous().view(torch.uint8))


@pytest.fixture(autouse=True)
def fresh_cache():
    posenc.rope_cache_clear()
    yield
    posenc.rope_cache_clear()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_decode_steps_bitwise_the_exact_path(dtype):
    torch.manual_seed(0)
    rot = posenc.RotaryEmbedding(llama31_config())
    B = 7
    pos = torch.randint(0, 100000, (B, 1))
    pos[0, 0], pos[1, 0] = 0, 131071
    q, k = torch.randn(B, 4, 1, 64, dtype=dtype), torch.randn(B, 2, 1, 64, dtype=dtype)
    qe, ke = exact(rot, q, pos, position_ids=pos), exact(rot, k, pos, key=True, position_ids=pos)
    for step in range(2):  # the first call registers the frequencies, the second makes the table
        qd, kd = rot(q, k, position_ids=pos)
        assert bits_equal(qd, qe) and bits_equal(kd, ke), step
    assert posenc.rope_cache_info()["tables"] == 1
    # in place, offsets instead of position_ids, [B, S, H, D] views
    qi, ki = q.clone(), k.clone()
    rot.apply_(qi, ki, offsets=pos[:, 0])
    assert bits_equal(qi, qe) and bits_equal(ki, ke)
    qb = q.transpose(1, 2).contiguous()
    assert bits_equal(rot(qb, position_ids=pos, qk_layout="bshd")[0].transpose(1, 2), qe)
    # ragged single tokens: position_ids [T], or cu_seqlens of length-1 sequences and offsets
    qr = q[:, :, 0].contiguous()
    assert bits_equal(rot(qr, position_ids=pos[:, 0])[0], qe[:, :, 0])
    cu = torch.arange(B + 1)
    assert bits_equal(rot(qr, cu_seqlens=cu, offsets=pos[:, 0])[0], qe[:, :, 0])
    # one position for the batch, [1] (expanded to [B, 1]: stride 0) and an expanded [B, 1] view
    one = pos[3]
    qs = exact(rot, q, one.expand(B, 1).contiguous(), position_ids=one.expand(B, 1).contiguous())
    assert bits_equal(rot(q, position_ids=one)[0], qs)
    assert bits_equal(rot(q, position_ids=one[None].expand(B, 1))[0], qs)
    # the same positions through the dense path with seq > 1 (prefill): rope_ itself
    qp = torch.randn(2, 4, 9, 64, dtype=dtype)
    pp = torch.randint(0, 5000, (2, 9))
    assert bits_equal(rot(qp, position_ids=pp)[0], exact(rot, qp, pp, position_ids=pp))


@pytest.mark.parametrize("rule", list(rule_configs()))
def test_every_rule_bitwise(rule):
    torch.manual_seed(1)
    rot = posenc.RotaryEmbedding(rule_configs()[rule])
    for top in (200, 3000, 20000):  # below and above the original lengths (dynamic, longrope, yarn)
        pos = torch.randint(0, top, (5, 1))
        for dtype in (torch.float32, torch.bfloat16, torch.float64):
            q = torch.randn(5, 2, 1, 64, dtype=dtype)
            e = exact(rot, q, pos, position_ids=pos)
            for _ in range(2):
                assert bits_equal(rot(q, position_ids=pos)[0], e), (rule, top, dtype)


def test_float64_decode_within_one_ulp_of_the_exact_phase():
    """x = (1, 0) in every pair, so the rotation is (cos, sin) of the phase: within 1 ulp of mpmath's
    exact phase (test_issue36's check) at positions under the cap (from the table) and near 2^24
    (past the cap: the exact path), and bitwise the uncached op."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    d = 32
    rot = posenc.RotaryEmbedding({"hidden_size": 64, "num_attention_heads": 2, "head_dim": d,
                                  "rope_theta": 500000.0, "max_position_embeddings": 1 << 25})
    theta = mpmath.mpf(500000)
    pos = torch.tensor([[(1 << 17) - 1], [100003], [(1 << 24) - 1], [(1 << 24) - 77]])
    q = torch.zeros(4, 1, 1, d, dtype=torch.float64)
    q[..., : d // 2] = 1.0
    under, past = pos[:2], pos[2:]  # a call whose largest position is past the cap takes the exact path whole
    for _ in range(2):
        y = torch.cat([rot(q[:2], position_ids=under)[0], rot(q[2:], position_ids=past)[0]])
    assert posenc.rope_cache_info()["tables"] == 1  # the positions under the cap came from a table
    assert bits_equal(y, exact(rot, q, pos, position_ids=pos))
    worst = 0.0
    for b in range(4):
        n = int(pos[b, 0])
        for k in range(d // 2):
            ang = n * theta ** (-mpmath.mpf(2 * k) / d)
            for got, ref in ((y[b, 0, 0, k].item(), mpmath.cos(ang)), (y[b, 0, 0, k + d // 2].item(), mpmath.sin(ang))):
                worst = max(worst, float(abs(mpmath.mpf(got) - ref) / math.ulp(float(ref))))
    assert worst <= 1.0, worst


def test_threads_and_modules_share_one_table_and_match_the_exact_path():
    """Four Python threads (the op releases the GIL), each with its own module of the same config,
    decode at positions that grow the table while the others read it: every result bitwise the
    exact path's; one table for the config (per coefficient kind)."""
    cfg = llama31_config()
    mods = [posenc.RotaryEmbedding(cfg) for _ in range(4)]
    errors = []

    def worker(t):
        try:
            g = torch.Generator().manual_seed(t)
            for step in range(40):
                top = 64 << (step % 12)  # 64 .. 131072: growth from every thread
                pos = torch.randint(0, top, (6, 1), generator=g)
                q = torch.randn(6, 4, 1, 64, generator=g)
                got = mods[t].apply_(q.clone(), position_ids=pos)[0]
                if not bits_equal(got, exact(mods[t], q, pos, position_ids=pos)):
                    errors.append((t, step))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append((t, repr(e)))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    info = posenc.rope_cache_info()
    assert info["tables"] == 1 and info["keys"] == 1
    assert info["bytes"] == 131072 * 64 * 8  # rows (2^17, the cap) x (cos, sin of 32 pairs) x double


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cos_sin_and_patched_modules_bitwise(dtype):
    """RotaryEmbedding.cos_sin (what patch_rotary's modules return) gathers integer positions from
    the shared cos/sin rows: bitwise rope_cos_sin, the per-position op, for decode and prefill."""
    rot = posenc.RotaryEmbedding(llama31_config())
    for pos in (torch.tensor([[5000], [0], [131071], [77]]), torch.arange(300)[None], torch.tensor([[1 << 20]])):
        for _ in range(2):
            c, s = rot.cos_sin(pos, dtype=dtype)
        ce, se = P.rope_cos_sin(pos, rot.freqs, rot.attention_factor, dtype)
        assert bits_equal(c, ce) and bits_equal(s, se)
    assert posenc.rope_cache_info()["tables"] == 1  # 2^20 is past the cap: no table beyond 2^17 rows
    transformers = pytest.importorskip("transformers")
    import posenc.transformers as pt
    cfg = dict(llama31_config(heads=2, kv=1, head_dim=32), num_hidden_layers=1, intermediate_size=32,
               vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    cfg.pop("model_type")
    model = pt.patch_rotary(transformers.AutoModelForCausalLM.from_config(
        transformers.AutoConfig.for_model("llama", **cfg), attn_implementation="eager").eval())
    mod = model.model.rotary_emb
    x = torch.zeros(2, 1, 8, dtype=dtype)
    pos = torch.tensor([[4000], [9]])
    rot2 = next(iter(mod.posenc.values()))[0]
    for _ in range(2):
        c, s = mod(x, pos)
    ce, se = P.rope_cos_sin(pos, rot2.freqs, rot2.attention_factor, dtype)
    assert bits_equal(c, ce) and bits_equal(s, se)


def test_cache_bounds_and_clear():
    rot = posenc.RotaryEmbedding(llama31_config())
    old = posenc.rope_cache_limits()
    try:
        lim = posenc.rope_cache_limits(max_positions=1024)
        assert lim["max_positions"] == 1024
        q = torch.randn(3, 4, 1, 64)
        for pos in (torch.tensor([[5], [700], [3]]), torch.tensor([[5], [1024], [90000]])):
            e = exact(rot, q, pos, position_ids=pos)
            for _ in range(2):
                assert bits_equal(rot(q, position_ids=pos)[0], e)
        info = posenc.rope_cache_info()
        assert info["tables"] == 1 and info["bytes"] == 1024 * 64 * 8  # never past the cap
        posenc.rope_cache_limits(max_bytes=0)  # no new table: the exact path, same bits
        posenc.rope_cache_clear()
        assert posenc.rope_cache_info() == {"tables": 0, "keys": 0, "bytes": 0, "builds": 0}
        pos = torch.tensor([[9], [10], [11]])
        for _ in range(3):
            assert bits_equal(rot(q, position_ids=pos)[0], exact(rot, q, pos, position_ids=pos))
        assert posenc.rope_cache_info()["tables"] == 0
        with pytest.raises(ValueError, match="max_tables"):
            posenc.rope_cache_limits(max_tables=0)
        with pytest.raises(ValueError, match="max_positions"):
            posenc.rope_cache_limits(max_positions=-5)
    finally:
        posenc.rope_cache_limits(**old)


def test_bad_input_named():
    rot = posenc.RotaryEmbedding(llama31_config())
    q = torch.randn(2, 4, 1, 64)
    with pytest.raises(ValueError, match="position_ids"):
        rot(q, position_ids=torch.tensor([[3], [-1]]))
    with pytest.raises(ValueError, match="position_ids"):
        rot(q, position_ids=torch.tensor([[3, 4, 5]]))
    with pytest.raises(TypeError, match="dtype"):
        rot(q.to(torch.int32), position_ids=torch.tensor([[3], [4]]))


def test_gradients_still_recorded():
    """A q that needs a gradient goes through the differentiable rope (not the table op)."""
    rot = posenc.RotaryEmbedding(llama31_config())
    q = torch.randn(2, 4, 1, 64, dtype=torch.float64, requires_grad=True)
    pos = torch.tensor([[3], [900]])
    y = rot(q, position_ids=pos)[0]
    y.square().sum().backward()
    # the rotation is orthogonal: d/dq sum(y^2) = 2 q (within f64 rounding of R^T R)
    assert torch.allclose(q.grad, 2 * q.detach() * rot.attention_factor ** 2, rtol=0, atol=1e-12)


def test_compiled_decode_step_has_no_graph_break_and_is_bitwise_eager():
    rot = posenc.RotaryEmbedding(llama31_config())

    def f(q, k, pos):
        return rot(q, k, position_ids=pos)

    q, k = torch.randn(3, 4, 1, 64), torch.randn(3, 2, 1, 64)
    torch._dynamo.reset()
    assert torch._dynamo.explain(f)(q, k, torch.tensor([[1], [2], [3]])).graph_break_count == 0
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, dynamic=True)
    for top in (10, 5000, 100000):  # growth inside the op, one compiled graph
        pos = torch.randint(0, top, (3, 1))
        qc, kc = cf(q, k, pos)
        assert bits_equal(qc, exact(rot, q, pos, position_ids=pos))
        assert bits_equal(kc, exact(rot, k, pos, key=True, position_ids=pos))

// SPDX-License-Identifier: MIT
// rotary::load_config against transformers' own output: every tests/rotary/hf/*.json file (written
// by scripts/gen_rope_reference.py with transformers 5.23.0 and 4.46.3; format in its README)
// holds a real model's config.json and, per layer type and sequence length, HF's float32
// inv_freq, attention scaling and cos/sin tables. Checked here:
//  - inv_freq within 4 float32 ulp of HF's (HF forms base ** (2k/d) in float32: the float32
//    exponent 2k/d and torch's float32 pow each add up to a few ulp; posenc's are exact to ~1e-18);
//  - the attention scaling equal to HF's within 1 double ulp (HF evaluates the same double
//    expression in Python; posenc evaluates it in the same order in double, so the two agree
//    bitwise unless the C library's log differs by an ulp; the count of bitwise-equal values is
//    printed);
//  - the float32 cos/sin tables within the error of HF's own float32 evaluation: HF rounds the
//    phase p * w_hf to float32 (<= 1 ulp of the phase counted) from its own float32 w_hf (which
//    differs from posenc's by |dw|, so p |dw| more), then float32 cos/sin and the product by the
//    attention scaling (2^-21 of the scaling covers both and posenc's own 0.5 ulp);
//  - the v5 (rope_parameters) and legacy (rope_theta + rope_scaling) config of each model give the
//    same plan (rule, rotary_dim, inv_freq bitwise, attention factor);
//  - the mutated-key test: every key of a reference config that can change a frequency, renamed,
//    given another value, or added where the rule does not read it, either gives a config_error /
//    invalid_argument or the plan transformers would give (for a changed value inside a rope dict:
//    exactly the loaded plan's rule with that field set, by this test's own key -> field map;
//    elsewhere: a changed plan, or the same one only where transformers does not read the key):
//    0 silent wrong loads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <variant>
#include <set>
#include <string>
#include <vector>

#include <posenc/rotary/config.hpp>
#include <posenc/rotary/table.hpp>

#include "rotary/hf_json.hpp"

namespace pr = posenc::rotary;
namespace fs = std::filesystem;
using rope_test::jnode;

#ifndef POSENC_HF_REFERENCE_DIR
#error "POSENC_HF_REFERENCE_DIR must name tests/rotary/hf"
#endif

namespace {

std::vector<fs::path> reference_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(POSENC_HF_REFERENCE_DIR))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

pr::load_options options_of(const jnode& file) {
  pr::load_options o;
  const auto sem = pr::parse_semantics(file.find("semantics")->text);
  REQUIRE(sem.has_value());
  o.semantics = *sem;
  return o;
}

double ulp_f32(double x) {
  const float f = std::abs(static_cast<float>(x));
  return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()) - f);
}

double ulp_f64(double x) {
  const double a = std::abs(x);
  return std::nextafter(a, std::numeric_limits<double>::infinity()) - a;
}

const pr::plan& plan_of(const pr::model_config& m, const std::string& layer) {
  if (layer == "default") {
    REQUIRE(m.layers.size() == 1);
    return *m.layers.front().plan;
  }
  return m.plan_for(layer);
}

/// Everything a plan gives for the sequence lengths that matter: (seq_len, inv_freq, attention).
struct signature {
  std::string rule;
  std::size_t rotary_dim = 0;
  std::vector<std::pair<std::vector<long double>, double>> at;
  bool operator==(const signature&) const = default;
};

signature signature_of(const pr::plan& p, const std::vector<std::size_t>& seq_lens) {
  signature s{std::string(p.rope_type()), p.rotary_dim(), {}};
  for (std::size_t n : seq_lens) {
    const auto f = p.frequencies(n);
    s.at.emplace_back(std::vector<long double>(f.inv_freq.begin(), f.inv_freq.end()), f.attention_factor);
  }
  return s;
}

std::map<std::string, signature> signatures(const pr::model_config& m, const std::vector<std::size_t>& seq_lens) {
  std::map<std::string, signature> out;
  for (const auto& l : m.layers) out[l.layer_type] = signature_of(*l.plan, seq_lens);
  return out;
}

std::vector<std::size_t> seq_lens_of(const jnode& file) {
  std::vector<std::size_t> out{0};
  for (const auto& [lt, layer] : file.find("layers")->members)
    for (const auto& e : layer.find("evaluations")->items)
      if (!e.find("seq_len")->is_null()) out.push_back(static_cast<std::size_t>(e.find("seq_len")->as_double()));
  return out;
}

}  // namespace

TEST_CASE("transformers reference files: inv_freq, attention scaling and float32 tables") {
  const auto files = reference_files();
  REQUIRE(files.size() >= 10);
  std::size_t cases = 0, freqs = 0, entries = 0, att_exact = 0, att_total = 0;
  double worst_w_ulp = 0, worst_table = 0;  // worst inv_freq distance (f32 ulp); worst table error / bound
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    const jnode file = rope_test::parse_file(path);
    const std::string config = file.find("config")->str();
    const pr::model_config m = pr::load_config(config, options_of(file));
    ++cases;
    for (const auto& entry : file.find("layers")->members) {
      const std::string& lt = entry.first;
      const jnode& layer = entry.second;
      CAPTURE(lt);
      const pr::plan& p = plan_of(m, lt);
      CHECK(p.rope_type() == layer.find("rope_type")->text);
      CHECK(p.rotary_dim() == static_cast<std::size_t>(layer.find("rotary_dim")->as_double()));
      for (const auto& e : layer.find("evaluations")->items) {
        const std::size_t seq = e.find("seq_len")->is_null() ? 0 : static_cast<std::size_t>(e.find("seq_len")->as_double());
        CAPTURE(seq);
        const pr::frequencies f = p.frequencies(seq);
        const auto& hw = e.find("inv_freq")->items;
        REQUIRE(hw.size() == f.inv_freq.size());
        for (std::size_t k = 0; k < hw.size(); ++k) {
          const double h = hw[k].as_double();
          const double d = std::abs(static_cast<double>(f.inv_freq[k]) - h);
          const double u = h == 0 ? 0.0 : d / ulp_f32(h);
          worst_w_ulp = std::max(worst_w_ulp, u);
          CHECK_MESSAGE((h == 0 ? f.inv_freq[k] == 0 : u <= 4.0), "inv_freq[", k, "] = ", static_cast<double>(f.inv_freq[k]),
                        ", HF ", h, " (", u, " f32 ulp)");
          ++freqs;
        }
        const double ha = e.find("attention_scaling")->as_double();
        CHECK_MESSAGE(std::abs(f.attention_factor - ha) <= ulp_f64(ha), "attention ", f.attention_factor, " vs HF ", ha);
        att_exact += f.attention_factor == ha;
        ++att_total;
        // tables: the positions as HF evaluated them, in HF's half ("duplicated") layout
        const auto& pos = e.find("positions")->items;
        const auto& hc = e.find("cos")->items;
        const auto& hs = e.find("sin")->items;
        REQUIRE(hc.size() == pos.size());
        const std::size_t w = pr::table_width(f, pr::table_layout::duplicated), m2 = f.inv_freq.size();
        std::vector<float> c(w), s(w);
        for (std::size_t i = 0; i < pos.size(); ++i) {
          const auto x = static_cast<std::uint64_t>(pos[i].as_double());
          pr::fill_table<float>(f, x, 1, c.data(), s.data(), w, pr::table_layout::duplicated);
          REQUIRE(hc[i].items.size() == w);
          for (std::size_t j = 0; j < w; ++j) {
            const std::size_t k = j % m2;
            const double wh = hw[k].as_double();
            const double phase = static_cast<double>(x) * wh;
            const double bound = ha * (static_cast<double>(x) * std::abs(static_cast<double>(f.inv_freq[k]) - wh) +
                                       ulp_f32(phase)) +
                                 0x1p-21 * ha;
            const double ec = std::abs(static_cast<double>(c[j]) - hc[i].items[j].as_double());
            const double es = std::abs(static_cast<double>(s[j]) - hs[i].items[j].as_double());
            worst_table = std::max(worst_table, std::max(ec, es) / bound);
            if (ec > bound || es > bound)
              CHECK_MESSAGE(false, "position ", x, " column ", j, ": cos ", c[j], " vs HF ", hc[i].items[j].as_double(),
                            ", sin ", s[j], " vs HF ", hs[i].items[j].as_double(), " (bound ", bound, ")");
            ++entries;
          }
        }
      }
    }
  }
  MESSAGE(cases, " reference files, ", freqs, " inv_freq (worst ", worst_w_ulp, " f32 ulp), ", entries,
          " cos/sin entries (worst ", worst_table, " of the bound), attention scaling bitwise equal in ", att_exact,
          " of ", att_total);
}

TEST_CASE("the v5 and the legacy config.json of each model give the same plan") {
  std::size_t pairs = 0;
  for (const auto& path : reference_files()) {
    const std::string name = path.filename().string();
    const auto dot = name.find(".v5.json");
    if (dot == std::string::npos) continue;
    const fs::path legacy = path.parent_path() / (name.substr(0, dot) + ".legacy.json");
    if (!fs::exists(legacy)) continue;
    CAPTURE(name);
    const jnode a = rope_test::parse_file(path), b = rope_test::parse_file(legacy);
    const auto ma = pr::load_config(a.find("config")->str(), options_of(a));
    const auto mb = pr::load_config(b.find("config")->str(), options_of(b));
    const auto seq = seq_lens_of(a);
    CHECK(signatures(ma, seq) == signatures(mb, seq));
    ++pairs;
  }
  CHECK(pairs >= 8);
  MESSAGE(pairs, " models with both forms");
}

namespace {

struct mutation_counts {
  std::size_t tried = 0, errors = 0, changed = 0, unchanged_as_hf = 0;
};

enum class outcome { error, changed, unchanged };

outcome try_load(const jnode& config, const pr::load_options& opt, const std::map<std::string, signature>& base,
                 const std::vector<std::size_t>& seq) {
  try {
    const auto m = pr::load_config(config.str(), opt);
    return signatures(m, seq) == base ? outcome::unchanged : outcome::changed;
  } catch (const pr::config_error&) {
    return outcome::error;
  } catch (const posenc::invalid_argument&) {
    return outcome::error;
  }
}

/// A value of the same kind that differs: numbers scaled by 5/4 (integers + a quarter, at least 1),
/// booleans negated, number lists with the first entry scaled.
jnode other_value(const jnode& v) {
  if (v.type == posenc::io::json::kind::boolean) return jnode::boolean(!v.b);
  if (v.type == posenc::io::json::kind::array && !v.items.empty() && v.items[0].is_number()) {
    jnode a = v;
    a.items[0] = jnode::number(v.items[0].as_double() * 1.25);
    return a;
  }
  if (!v.is_number()) return v;
  const double x = v.as_double();
  if (v.text.find_first_of(".eE") == std::string::npos) return jnode::number(std::floor(x + std::max(1.0, std::floor(x / 4))));
  return jnode::number(x * 1.25);
}

/// The RoPE parameter objects of a config (path from the config root, the object), and the root
/// of the model fields (text_config when present).
std::vector<std::pair<std::vector<std::string>, const jnode*>> rope_objects(const jnode& model, std::vector<std::string> at) {
  std::vector<std::pair<std::vector<std::string>, const jnode*>> out;
  for (const char* k : {"rope_parameters", "rope_scaling"}) {
    const jnode* p = model.find(k);
    if (p == nullptr || !p->is_object()) continue;
    auto here = at;
    here.emplace_back(k);
    const bool nested = std::any_of(p->members.begin(), p->members.end(), [](const auto& mbr) {
      return mbr.second.is_object() && mbr.first.size() > 10 && mbr.first.ends_with("_attention");
    });
    if (!nested) {
      out.emplace_back(here, p);
    } else {
      for (const auto& [lt, v] : p->members) {
        auto there = here;
        there.push_back(lt);
        if (v.is_object()) out.emplace_back(there, &v);
      }
    }
  }
  return out;
}

jnode* at_path(jnode& root, const std::vector<std::string>& path) {
  jnode* p = &root;
  for (const auto& k : path) p = p->find(k);
  return p;
}

/// Keys of a RoPE parameter object whose change transformers 5 does not see (with the reason);
/// the test requires these to leave the plan unchanged, and every other change to show.
bool hf_ignores(const std::string& file, const jnode& obj, const std::string& key) {
  const jnode* type = obj.find("rope_type");
  if (type == nullptr) type = obj.find("type");
  const std::string t = type ? type->text : "default";
  // Phi3Config's top-level original_max_position_embeddings overrides rope_parameters' own
  if (key == "original_max_position_embeddings" && file.starts_with("phi-3")) return true;
  // transformers 4.46's yarn takes its range from max_position_embeddings, not from rope_scaling
  if (key == "original_max_position_embeddings" && t == "yarn" && file.find(".t4.") != std::string::npos) return true;
  // the dynamic rule reads max_position_embeddings, never original_max_position_embeddings
  if (key == "original_max_position_embeddings" && t == "dynamic") return true;
  // an explicit attention_factor makes mscale / mscale_all_dim irrelevant; mscale and
  // mscale_all_dim are used together only (DeepSeek's 1.0 / 1.0: both scaled by 5/4 still differ)
  if ((key == "mscale" || key == "mscale_all_dim") && obj.find("attention_factor") != nullptr) return true;
  // the default rule of Llama, Qwen3, gpt-oss, DeepSeek and Gemma ignores partial_rotary_factor
  if (key == "partial_rotary_factor" && t == "default" && !file.starts_with("phi-")) return true;
  return false;
}

/// The plan transformers would give after rope dict key `key` takes value v: the loaded plan's
/// context and rule with that one field set, by this test's own map from transformers' key names
/// to the fields (so the loader's reading of the key is what is checked; the rules' arithmetic is
/// checked against the reference data above). nullopt: the changed configuration is invalid.
std::optional<pr::plan> expected_after(const pr::plan& base, const std::string& key, const jnode& v, bool hf_ignored) {
  if (hf_ignored) return base;
  pr::rope_context c = base.context();
  pr::rule r = base.rule();
  const double x = v.is_number() ? v.as_double() : 0.0;
  const auto list = [&](std::vector<double>& out) {
    out.clear();
    for (const auto& i : v.items) out.push_back(i.as_double());
  };
  if (key == "rope_theta") {
    c.theta = x;
  } else if (key == "partial_rotary_factor") {
    c.partial_rotary_factor = x;
  } else {
    std::visit(
        [&](auto& rr) {
          using R = std::remove_cvref_t<decltype(rr)>;
          if constexpr (requires { rr.factor; })
            if (key == "factor") rr.factor = x;
          if constexpr (requires { rr.attention_factor; })
            if (key == "attention_factor") rr.attention_factor = x;
          if constexpr (requires { rr.original_max_position_embeddings; })
            if (key == "original_max_position_embeddings") rr.original_max_position_embeddings = static_cast<std::size_t>(x);
          if constexpr (std::is_same_v<R, pr::rules::yarn>) {
            if (key == "beta_fast") rr.beta_fast = x;
            if (key == "beta_slow") rr.beta_slow = x;
            if (key == "mscale") rr.mscale = x;
            if (key == "mscale_all_dim") rr.mscale_all_dim = x;
            if (key == "truncate") rr.truncate = v.b;
          }
          if constexpr (std::is_same_v<R, pr::rules::longrope>) {
            if (key == "short_factor") list(rr.short_factor);
            if (key == "long_factor") list(rr.long_factor);
          }
          if constexpr (std::is_same_v<R, pr::rules::llama3>) {
            if (key == "low_freq_factor") rr.low_freq_factor = x;
            if (key == "high_freq_factor") rr.high_freq_factor = x;
          }
        },
        r);
  }
  try {
    return pr::plan(c, r);
  } catch (const posenc::invalid_argument&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("mutated-key test: every frequency-relevant key renamed, changed or added -> config_error or the right change") {
  mutation_counts n;
  std::vector<std::string> silent;
  // keys any rule reads, to add where a rule does not read them
  std::set<std::string> all_keys{"rope_theta", "partial_rotary_factor"};
  pr::rule_list::any([&]<class R>(std::type_identity<R>) {
    for (auto k : R::keys) all_keys.insert(std::string(k));
    return false;
  });
  for (const auto& path : reference_files()) {
    const jnode file = rope_test::parse_file(path);
    const std::string name = path.filename().string();
    CAPTURE(name);
    const pr::load_options opt = options_of(file);
    const jnode& config = *file.find("config");
    const bool text = config.find("text_config") != nullptr;
    const std::vector<std::string> model_at = text ? std::vector<std::string>{"text_config"} : std::vector<std::string>{};
    const jnode& model = text ? *config.find("text_config") : config;
    const auto seq = seq_lens_of(file);
    const pr::model_config base_config = pr::load_config(config.str(), opt);
    const auto base = signatures(base_config, seq);
    struct {
      const pr::model_config& m;
      [[nodiscard]] std::string main_plan_layer() const {
        return m.layers.size() == 1 ? m.layers.front().layer_type : std::string("full_attention");
      }
      [[nodiscard]] const pr::plan& plan(const std::string& lt) const { return m.plan_for(lt); }
    } const base_model{base_config};
    const auto record = [&](outcome o, bool may_be_unchanged, const std::string& what) {
      ++n.tried;
      if (o == outcome::error) ++n.errors;
      else if (o == outcome::changed && !may_be_unchanged) ++n.changed;
      else if (o == outcome::unchanged && may_be_unchanged) ++n.unchanged_as_hf;
      else silent.push_back(name + ": " + what + (o == outcome::changed ? " (changed, transformers' would not)" : " (ignored)"));
    };
    // a key of a rope dict set to v: an error, or exactly the plan transformers would give
    const auto check_value = [&](const std::vector<std::string>& where, const jnode& obj, const std::string& key,
                                 const jnode& v, const std::string& what) {
      jnode c = config;
      at_path(c, where)->set(key, v);
      const bool nested = where.back() != "rope_parameters" && where.back() != "rope_scaling";
      const std::string layer = nested ? where.back() : base_model.main_plan_layer();
      const auto expected = expected_after(base_model.plan(layer), key, v, hf_ignores(name, obj, key));
      ++n.tried;
      try {
        const auto m = pr::load_config(c.str(), opt);
        auto want = base;
        if (expected) want[layer] = signature_of(*expected, seq);
        if (!expected || signatures(m, seq) != want)
          silent.push_back(name + ": " + what +
                           (expected ? " (not the plan transformers gives)" : " (loaded an invalid configuration)"));
        else if (want == base)
          ++n.unchanged_as_hf;
        else
          ++n.changed;
      } catch (const pr::config_error&) {
        ++n.errors;
      } catch (const posenc::invalid_argument&) {
        ++n.errors;
      }
    };
    // 1. inside each rope_parameters / rope_scaling object
    for (const auto& [where, obj] : rope_objects(model, model_at)) {
      std::string w;
      for (const auto& s : where) w += s + ".";
      for (const auto& [key, value] : obj->members) {
        {  // renamed: an unknown key (and the original one absent)
          jnode c = config;
          at_path(c, where)->rename(key, key + "_x");
          record(try_load(c, opt, base, seq), false, "renamed " + w + key);
        }
        if (key == "rope_type" || key == "type") continue;
        check_value(where, *obj, key, other_value(value), "changed " + w + key);
      }
      const jnode* type = obj->find("rope_type");
      if (type == nullptr) type = obj->find("type");
      const std::string t = type ? type->text : "default";
      for (const auto& key : all_keys) {
        if (obj->find(key) != nullptr || key == "short_factor" || key == "long_factor") continue;
        if (key == "rope_theta" || key == "partial_rotary_factor" || pr::rule_accepts_key(t, key)) {
          // added where the rule reads it: the plan transformers would give with it
          static const std::map<std::string, double> value{
              {"rope_theta", 12345.0}, {"partial_rotary_factor", 0.5}, {"factor", 3.0},
              {"attention_factor", 1.5}, {"beta_fast", 24.0}, {"beta_slow", 2.0}, {"mscale", 2.0},
              {"mscale_all_dim", 0.5}, {"original_max_position_embeddings", 2048.0}, {"low_freq_factor", 2.0},
              {"high_freq_factor", 8.0}};
          const jnode v = key == "truncate" ? jnode::boolean(false) : jnode::number(value.at(key));
          check_value(where, *obj, key, v, "added " + w + key);
        } else {  // added where the rule does not read it: an error
          jnode c = config;
          at_path(c, where)->set(key, jnode::number(2.0));
          record(try_load(c, opt, base, seq), false, "added " + w + key);
        }
      }
    }
    // 2. the model fields that decide the width or theta: renamed (absent) -> an error or, where
    // transformers would take the same value from elsewhere, the same plan; another value -> an
    // error or a change, unless transformers does not read the field for this config
    // Gemma's config classes default head_dim to 256 (never hidden_size / num_attention_heads)
    const jnode* mt = model.find("model_type");
    const bool has_head_dim = (model.find("head_dim") != nullptr && !model.find("head_dim")->is_null()) ||
                              (mt != nullptr && mt->text.starts_with("gemma"));
    const bool has_qk_rope = model.find("qk_rope_head_dim") != nullptr;
    for (const char* key : {"rope_theta", "partial_rotary_factor", "head_dim", "qk_rope_head_dim", "hidden_size",
                            "num_attention_heads", "max_position_embeddings", "original_max_position_embeddings",
                            "rope_local_base_freq", "global_head_dim", "layer_types", "model_type", "per_layer_config"}) {
      const jnode* v = model.find(key);
      if (v == nullptr || v->is_null()) continue;
      const std::string k = key;
      {
        jnode c = config;
        at_path(c, model_at)->rename(k, k + "_x");
        const outcome o = try_load(c, opt, base, seq);
        // absent, the same value comes from elsewhere: head_dim from qk_rope_head_dim or
        // hidden/heads, hidden/heads when head_dim is given, max/original where a rule does not read them
        ++n.tried;
        if (o == outcome::error) ++n.errors;
        else if (o == outcome::unchanged) ++n.unchanged_as_hf;
        else silent.push_back(name + ": renamed " + k + " (changed without an error)");
      }
      if (!v->is_number()) continue;
      jnode c = config;
      at_path(c, model_at)->set(k, other_value(*v));
      const outcome o = try_load(c, opt, base, seq);
      const bool unused = ((k == "hidden_size" || k == "num_attention_heads") && (has_head_dim || has_qk_rope)) ||
                          (k == "head_dim" && has_qk_rope) || k == "max_position_embeddings" ||
                          k == "original_max_position_embeddings";
      ++n.tried;
      if (o == outcome::error) ++n.errors;
      else if (o == outcome::changed) ++n.changed;
      else if (unused) ++n.unchanged_as_hf;
      else silent.push_back(name + ": changed " + k + " (ignored)");
    }
    // 3. RoPE keys that the loader does not read, at the top level
    for (const char* key : {"rotary_pct", "rotary_emb_base", "rope_ratio", "rotary_dim", "rope_scaling_factor"}) {
      jnode c = config;
      at_path(c, model_at)->set(key, jnode::number(0.5));
      record(try_load(c, opt, base, seq), false, std::string("added ") + key);
    }
  }
  for (const auto& s : silent) MESSAGE("silent: ", s);
  CHECK(silent.empty());
  MESSAGE(n.tried, " mutations: ", n.errors, " errors, ", n.changed, " changed plans, ", n.unchanged_as_hf,
          " unchanged where transformers does not read the key; ", silent.size(), " silent");
}

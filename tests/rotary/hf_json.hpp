// SPDX-License-Identifier: MIT
// A small mutable JSON tree for the transformers reference tests: read a document with
// posenc::io::json, edit keys and values, write it back as text for rotary::load_config.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/io/json.hpp>

namespace rope_test {

struct jmember;

struct jnode {
  posenc::io::json::kind type = posenc::io::json::kind::null;
  bool b = false;
  std::string text;             // number literal or string contents
  std::vector<jnode> items;     // array
  std::vector<jmember> members;  // object, in file order

  static jnode from(const posenc::io::json::value& v);
  static jnode number(double x);
  static jnode boolean(bool x);
  [[nodiscard]] bool is_object() const { return type == posenc::io::json::kind::object; }
  [[nodiscard]] bool is_number() const { return type == posenc::io::json::kind::number; }
  [[nodiscard]] bool is_null() const { return type == posenc::io::json::kind::null; }
  [[nodiscard]] double as_double() const { return std::stod(text); }
  [[nodiscard]] const jnode* find(std::string_view k) const;
  jnode* find(std::string_view k);
  void set(std::string_view k, jnode v);
  void rename(std::string_view from_key, std::string to_key);
  void write(std::string& out) const;
  [[nodiscard]] std::string str() const {
    std::string s;
    write(s);
    return s;
  }
};

struct jmember {
  std::string first;
  jnode second;
};

inline jnode jnode::from(const posenc::io::json::value& v) {
  jnode n;
  n.type = v.type();
  n.b = n.type == posenc::io::json::kind::boolean && v.boolean();
  n.text = std::string(v.text());
  v.for_each_item([&](const posenc::io::json::value& x) { n.items.push_back(from(x)); });
  v.for_each_member(
      [&](std::string_view k, const posenc::io::json::value& x) { n.members.push_back({std::string(k), from(x)}); });
  return n;
}
inline jnode jnode::number(double x) {
  jnode n;
  n.type = posenc::io::json::kind::number;
  std::ostringstream os;
  os.precision(17);
  os << x;
  n.text = os.str();
  return n;
}
inline jnode jnode::boolean(bool x) {
  jnode n;
  n.type = posenc::io::json::kind::boolean;
  n.b = x;
  return n;
}
inline const jnode* jnode::find(std::string_view k) const {
  for (const auto& m : members)
    if (m.first == k) return &m.second;
  return nullptr;
}
inline jnode* jnode::find(std::string_view k) {
  for (auto& m : members)
    if (m.first == k) return &m.second;
  return nullptr;
}
inline void jnode::set(std::string_view k, jnode v) {
  if (jnode* p = find(k)) *p = std::move(v);
  else members.push_back({std::string(k), std::move(v)});
}
inline void jnode::rename(std::string_view from_key, std::string to_key) {
  for (auto& m : members)
    if (m.first == from_key) m.first = to_key;
}
inline void jnode::write(std::string& out) const {
  using K = posenc::io::json::kind;
  switch (type) {
    case K::null: out += "null"; break;
    case K::boolean: out += b ? "true" : "false"; break;
    case K::number: out += text; break;
    case K::string: posenc::io::json::write_string(out, text); break;
    case K::array:
      out += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        items[i].write(out);
      }
      out += ']';
      break;
    case K::object:
      out += '{';
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i) out += ',';
        posenc::io::json::write_string(out, members[i].first);
        out += ':';
        members[i].second.write(out);
      }
      out += '}';
      break;
  }
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline jnode parse_file(const std::filesystem::path& p) {
  const std::string text = read_text(p);
  const auto doc = posenc::io::json::parse(text, [&](std::size_t off, std::string_view msg) {
    throw std::runtime_error(p.string() + ": bad JSON at " + std::to_string(off) + ": " + std::string(msg));
  });
  return jnode::from(doc.root());
}

}  // namespace rope_test

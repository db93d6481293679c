// SPDX-License-Identifier: MIT
// A small deflate (RFC 1951) and zlib (RFC 1950) compressor, as the PNG writer needs: LZ77 over a
// 32 KiB window with hash chains and one-step lazy matching, then per block the smallest of a
// dynamic-Huffman, a fixed-Huffman and a stored encoding (so the output is at most 6 bytes per
// 32768 symbols, plus one, larger than the input). Huffman code lengths are limited to 15 bits (7 for the
// code-length code) by halving the frequencies until the tree fits. Compression only; any inflater
// (zlib, a browser) reads the output. Standard library and posenc's errors only. Part of the posenc_figures target
// (the PNG writer of the examples' figures), never installed with posenc's headers.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>

namespace posenc::figures {

/// Effort of the LZ77 match search.
struct deflate_options {
  /// Candidates examined per position along the hash chain, in [1, 4096]: more finds longer
  /// matches, more slowly (zlib's level 6 uses 128, level 9 4096).
  std::size_t max_chain = 128;
  /// One-step lazy matching: a match is deferred when the next position starts a longer one.
  bool lazy = true;
};

namespace detail {

/// Adler-32 of zlib (RFC 1950).
class adler32 {
 public:
  void update(const std::byte* p, std::size_t n) noexcept {
    constexpr std::uint32_t mod = 65521;
    while (n > 0) {
      const std::size_t chunk = std::min<std::size_t>(n, 5552);  // largest run without uint32 overflow
      for (std::size_t i = 0; i < chunk; ++i) {
        m_a += std::to_integer<std::uint32_t>(p[i]);
        m_b += m_a;
      }
      m_a %= mod;
      m_b %= mod;
      p += chunk;
      n -= chunk;
    }
  }
  [[nodiscard]] std::uint32_t value() const noexcept { return (m_b << 16) | m_a; }

 private:
  std::uint32_t m_a = 1, m_b = 0;
};

/// Bits written least-significant first, as deflate stores them.
class bit_writer {
 public:
  explicit bit_writer(std::vector<std::byte>& out) : m_out(out) {}
  void put(std::uint32_t bits, unsigned n) {
    m_acc |= static_cast<std::uint64_t>(bits) << m_n;
    m_n += n;
    while (m_n >= 8) {
      m_out.push_back(static_cast<std::byte>(m_acc & 0xFFu));
      m_acc >>= 8;
      m_n -= 8;
    }
  }
  /// A Huffman code: deflate sends it most-significant bit first.
  void put_code(std::uint32_t code, unsigned len) {
    std::uint32_t r = 0;
    for (unsigned i = 0; i < len; ++i) r |= ((code >> i) & 1u) << (len - 1 - i);
    put(r, len);
  }
  void align() {
    if (m_n > 0) put(0, 8 - m_n);
  }

 private:
  std::vector<std::byte>& m_out;
  std::uint64_t m_acc = 0;
  unsigned m_n = 0;
};

inline constexpr std::array<std::uint16_t, 29> len_base = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                                           31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
inline constexpr std::array<std::uint8_t, 29> len_extra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
inline constexpr std::array<std::uint16_t, 30> dist_base = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                                            33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                                            1025, 1537, 2049, 3073, 4097, 6145,  8193,  12289, 16385, 24577};
inline constexpr std::array<std::uint8_t, 30> dist_extra = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                            6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/// The order in which the code-length code's lengths are sent (RFC 1951 3.2.7).
inline constexpr std::array<std::uint8_t, 19> clen_order = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

inline unsigned len_code(unsigned len) noexcept {  // 3..258 -> index into len_base
  unsigned i = 28;
  while (len_base[i] > len) --i;
  return i;
}
inline unsigned dist_code(unsigned dist) noexcept {  // 1..32768 -> index into dist_base
  unsigned i = 29;
  while (dist_base[i] > dist) --i;
  return i;
}

/// Huffman code lengths of at most max_len bits for the given frequencies. Every code built here
/// is complete (a lone used symbol gets a partner), which every inflater accepts.
inline std::vector<std::uint8_t> huffman_lengths(std::vector<std::uint64_t> freq, unsigned max_len) {
  const std::size_t n = freq.size();
  std::vector<std::uint8_t> len(n, 0);
  std::size_t used = 0;
  for (auto f : freq) used += f > 0 ? 1 : 0;
  for (std::size_t s = 0; used < 2 && s < n; ++s)
    if (freq[s] == 0) {
      freq[s] = 1;
      ++used;
    }
  for (;;) {
    // Nodes: leaves 0..n-1, then internal nodes; parent links give each leaf's depth.
    std::vector<std::size_t> parent(2 * n, 0);
    using item = std::pair<std::uint64_t, std::size_t>;
    std::priority_queue<item, std::vector<item>, std::greater<>> q;
    for (std::size_t s = 0; s < n; ++s)
      if (freq[s] > 0) q.emplace(freq[s], s);
    std::size_t next = n;
    while (q.size() > 1) {
      const auto a = q.top();
      q.pop();
      const auto b = q.top();
      q.pop();
      parent[a.second] = next;
      parent[b.second] = next;
      q.emplace(a.first + b.first, next++);
    }
    const std::size_t root = next - 1;
    unsigned longest = 0;
    for (std::size_t s = 0; s < n; ++s) {
      if (freq[s] == 0) {
        len[s] = 0;
        continue;
      }
      unsigned d = 0;
      for (std::size_t v = s; v != root; v = parent[v]) ++d;
      len[s] = static_cast<std::uint8_t>(d);
      longest = std::max(longest, d);
    }
    if (longest <= max_len) return len;
    for (auto& f : freq)
      if (f > 0) f = (f + 1) / 2;  // flatten the distribution and rebuild
  }
}

/// Canonical codes (RFC 1951 3.2.2) of the given lengths.
inline std::vector<std::uint32_t> canonical_codes(const std::vector<std::uint8_t>& len) {
  std::array<std::uint32_t, 16> count{}, next{};
  for (auto l : len) ++count[l];
  count[0] = 0;
  std::uint32_t code = 0;
  for (unsigned bits = 1; bits < 16; ++bits) {
    code = (code + count[bits - 1]) << 1;
    next[bits] = code;
  }
  std::vector<std::uint32_t> codes(len.size(), 0);
  for (std::size_t s = 0; s < len.size(); ++s)
    if (len[s] != 0) codes[s] = next[len[s]]++;
  return codes;
}

struct lz_symbol {
  std::uint16_t litlen;  // 0..255 literal, 3..258 match length (dist > 0)
  std::uint16_t dist;    // 0 for a literal
};

class deflater {
 public:
  deflater(std::span<const std::byte> in, const deflate_options& opt) : m_in(in), m_opt(opt) {}

  void run(std::vector<std::byte>& out) {
    bit_writer bw(out);
    const std::size_t n = m_in.size();
    std::vector<std::int64_t> head(hash_size, -1);
    std::vector<std::int64_t> prev(window, -1);
    auto hash_at = [&](std::size_t i) {
      return ((std::to_integer<std::size_t>(m_in[i]) << 10) ^ (std::to_integer<std::size_t>(m_in[i + 1]) << 5) ^
              std::to_integer<std::size_t>(m_in[i + 2])) &
             (hash_size - 1);
    };
    auto insert = [&](std::size_t i) {
      if (i + 2 >= n) return;
      const std::size_t h = hash_at(i);
      prev[i & (window - 1)] = head[h];
      head[h] = static_cast<std::int64_t>(i);
    };
    auto find = [&](std::size_t i) -> std::pair<unsigned, unsigned> {
      if (i + 2 >= n) return {0, 0};
      const std::size_t limit = std::min<std::size_t>(max_match, n - i);
      unsigned best = 0, best_dist = 0;
      std::int64_t cand = head[hash_at(i)];
      std::int64_t last = static_cast<std::int64_t>(i);
      for (std::size_t chain = 0; chain < m_opt.max_chain && cand >= 0 && cand < last; ++chain) {
        const auto c = static_cast<std::size_t>(cand);
        if (i - c > window) break;
        if (m_in[c + best] == m_in[i + best]) {
          std::size_t l = 0;
          while (l < limit && m_in[c + l] == m_in[i + l]) ++l;
          if (l > best) {
            best = static_cast<unsigned>(l);
            best_dist = static_cast<unsigned>(i - c);
            if (l == limit) break;
          }
        }
        last = cand;
        cand = prev[c & (window - 1)];
      }
      return best >= min_match ? std::pair{best, best_dist} : std::pair{0u, 0u};
    };

    std::size_t block_start = 0;
    std::size_t i = 0;
    while (i < n) {
      auto [len, dist] = find(i);
      insert(i);
      if (len > 0 && m_opt.lazy && len < 32 && i + 1 < n) {
        const auto next = find(i + 1);
        if (next.first > len) {
          literal(i);
          ++i;
          if (m_syms.size() >= block_symbols) flush(bw, block_start, i, false);
          continue;
        }
      }
      if (len > 0) {
        m_syms.push_back({static_cast<std::uint16_t>(len), static_cast<std::uint16_t>(dist)});
        for (std::size_t k = 1; k < len; ++k) insert(i + k);
        i += len;
      } else {
        literal(i);
        ++i;
      }
      if (m_syms.size() >= block_symbols) flush(bw, block_start, i, false);
    }
    flush(bw, block_start, n, true);
    bw.align();
  }

 private:
  static constexpr std::size_t window = 32768, hash_size = 1u << 15, min_match = 3, max_match = 258;
  static constexpr std::size_t block_symbols = 1u << 15;

  void literal(std::size_t i) { m_syms.push_back({std::to_integer<std::uint16_t>(m_in[i]), 0}); }

  /// Emit the symbols gathered for the input bytes [start, end) as one block (or stored blocks).
  void flush(bit_writer& bw, std::size_t& start, std::size_t end, bool final) {
    std::vector<std::uint64_t> lf(286, 0), df(30, 0);
    for (const auto& s : m_syms) {
      if (s.dist == 0) {
        ++lf[s.litlen];
      } else {
        ++lf[257 + len_code(s.litlen)];
        ++df[dist_code(s.dist)];
      }
    }
    lf[256] = 1;
    const auto ll = huffman_lengths(lf, 15);
    const auto dl = huffman_lengths(df, 15);
    std::size_t nlit = 286, ndist = 30;
    while (nlit > 257 && ll[nlit - 1] == 0) --nlit;
    while (ndist > 1 && dl[ndist - 1] == 0) --ndist;
    // Run-length code of the concatenated lengths (16: repeat previous 3-6, 17: zeros 3-10, 18: zeros 11-138).
    std::vector<std::uint8_t> all(ll.begin(), ll.begin() + static_cast<std::ptrdiff_t>(nlit));
    all.insert(all.end(), dl.begin(), dl.begin() + static_cast<std::ptrdiff_t>(ndist));
    std::vector<std::pair<std::uint8_t, std::uint8_t>> rle;  // (symbol, extra value)
    for (std::size_t k = 0; k < all.size();) {
      std::size_t run = 1;
      while (k + run < all.size() && all[k + run] == all[k]) ++run;
      if (all[k] == 0 && run >= 3) {
        const std::size_t r = std::min<std::size_t>(run, 138);
        if (r >= 11) rle.emplace_back(18, static_cast<std::uint8_t>(r - 11));
        else rle.emplace_back(17, static_cast<std::uint8_t>(r - 3));
        k += r;
      } else if (all[k] != 0 && run >= 4) {
        rle.emplace_back(all[k], 0);
        const std::size_t r = std::min<std::size_t>(run - 1, 6);
        rle.emplace_back(16, static_cast<std::uint8_t>(r - 3));
        k += 1 + r;
      } else {
        rle.emplace_back(all[k], 0);
        ++k;
      }
    }
    std::vector<std::uint64_t> cf(19, 0);
    for (const auto& [sym, extra] : rle) ++cf[sym];
    const auto cl = huffman_lengths(cf, 7);
    std::size_t nclen = 19;
    while (nclen > 4 && cl[clen_order[nclen - 1]] == 0) --nclen;

    // Sizes in bits of the three encodings of this block.
    auto body_bits = [&](const std::vector<std::uint8_t>& litl, const std::vector<std::uint8_t>& distl) {
      std::uint64_t bits = litl[256];
      for (const auto& s : m_syms) {
        if (s.dist == 0) {
          bits += litl[s.litlen];
        } else {
          const unsigned lc = len_code(s.litlen), dc = dist_code(s.dist);
          bits += litl[257 + lc] + len_extra[lc] + distl[dc] + dist_extra[dc];
        }
      }
      return bits;
    };
    std::vector<std::uint8_t> fixed_l(288, 8), fixed_d(30, 5);
    std::fill(fixed_l.begin() + 144, fixed_l.begin() + 256, std::uint8_t{9});
    std::fill(fixed_l.begin() + 256, fixed_l.begin() + 280, std::uint8_t{7});
    std::uint64_t dyn = 3 + 14 + 3 * nclen + body_bits(ll, dl);
    for (const auto& [sym, extra] : rle) dyn += cl[sym] + (sym == 16 ? 2 : sym == 17 ? 3 : sym == 18 ? 7 : 0);
    const std::uint64_t fix = 3 + body_bits(fixed_l, fixed_d);
    const std::size_t raw = end - start;
    const std::uint64_t stored = 8 * (raw + 5 * (raw / 65535 + 1)) + 7;

    if (stored < dyn && stored < fix) {
      for (std::size_t at = start;;) {
        const std::size_t len = std::min<std::size_t>(65535, end - at);
        const bool last = final && at + len == end;
        bw.put(last ? 1u : 0u, 1);
        bw.put(0, 2);
        bw.align();
        bw.put(static_cast<std::uint32_t>(len), 16);
        bw.put(static_cast<std::uint32_t>(~len & 0xFFFFu), 16);
        for (std::size_t k = 0; k < len; ++k) bw.put(std::to_integer<std::uint32_t>(m_in[at + k]), 8);
        at += len;
        if (at == end) break;
      }
    } else if (fix <= dyn) {
      bw.put(final ? 1u : 0u, 1);
      bw.put(1, 2);
      body(bw, fixed_l, fixed_d);
    } else {
      bw.put(final ? 1u : 0u, 1);
      bw.put(2, 2);
      bw.put(static_cast<std::uint32_t>(nlit - 257), 5);
      bw.put(static_cast<std::uint32_t>(ndist - 1), 5);
      bw.put(static_cast<std::uint32_t>(nclen - 4), 4);
      for (std::size_t k = 0; k < nclen; ++k) bw.put(cl[clen_order[k]], 3);
      const auto cc = canonical_codes(cl);
      for (const auto& [sym, extra] : rle) {
        bw.put_code(cc[sym], cl[sym]);
        if (sym == 16) bw.put(extra, 2);
        else if (sym == 17) bw.put(extra, 3);
        else if (sym == 18) bw.put(extra, 7);
      }
      body(bw, ll, dl);
    }
    m_syms.clear();
    start = end;
  }

  void body(bit_writer& bw, const std::vector<std::uint8_t>& litl, const std::vector<std::uint8_t>& distl) {
    const auto lc = canonical_codes(litl), dc = canonical_codes(distl);
    for (const auto& s : m_syms) {
      if (s.dist == 0) {
        bw.put_code(lc[s.litlen], litl[s.litlen]);
      } else {
        const unsigned l = len_code(s.litlen), d = dist_code(s.dist);
        bw.put_code(lc[257 + l], litl[257 + l]);
        bw.put(s.litlen - len_base[l], len_extra[l]);
        bw.put_code(dc[d], distl[d]);
        bw.put(s.dist - dist_base[d], dist_extra[d]);
      }
    }
    bw.put_code(lc[256], litl[256]);
  }

  std::span<const std::byte> m_in;
  deflate_options m_opt;
  std::vector<lz_symbol> m_syms;
};

inline void check_deflate_options(const deflate_options& opt, std::string_view where) {
  posenc::detail::require(opt.max_chain >= 1 && opt.max_chain <= 4096, where, "max_chain must be in [1, 4096], got ",
                          opt.max_chain);
}

}  // namespace detail

/// The raw deflate stream (RFC 1951) of `data`. Throws posenc::invalid_argument for max_chain
/// outside [1, 4096].
[[nodiscard]] inline std::vector<std::byte> deflate_bytes(std::span<const std::byte> data,
                                                          const deflate_options& opt = {}) {
  detail::check_deflate_options(opt, "deflate_bytes");
  std::vector<std::byte> out;
  out.reserve(data.size() / 4 + 64);
  detail::deflater(data, opt).run(out);
  return out;
}

/// The zlib stream (RFC 1950: header, deflate stream, Adler-32) of `data`, as PNG's IDAT holds.
/// Throws posenc::invalid_argument for max_chain outside [1, 4096].
[[nodiscard]] inline std::vector<std::byte> zlib_bytes(std::span<const std::byte> data, const deflate_options& opt = {}) {
  detail::check_deflate_options(opt, "zlib_bytes");
  std::vector<std::byte> out;
  out.reserve(data.size() / 4 + 64);
  out.push_back(std::byte{0x78});  // CM = 8 (deflate), CINFO = 7 (32 KiB window)
  out.push_back(std::byte{0x9C});  // FLEVEL = 2 (default), no dictionary; 0x789C is a multiple of 31
  detail::deflater(data, opt).run(out);
  detail::adler32 ad;
  ad.update(data.data(), data.size());
  const std::uint32_t a = ad.value();
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::byte>((a >> s) & 0xFFu));
  return out;
}

}  // namespace posenc::figures

// SPDX-License-Identifier: MIT
// Generate a FLOATER position table (L = 512 positions) with the reference settings and save it
// as a NumPy .npy file: floater_table.npy, shape [L, d] (load it with numpy.load).
//
// Usage: floater_table [d] [L]   (default d = 64, L = 512; the paper's setting is d = 512)
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>

#include <posenc/floater.hpp>
#include <posenc/io/npy.hpp>

int main(int argc, char** argv) {
  const std::size_t d = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const std::size_t L = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 512;
  try {
    // [floater-table]
    namespace fl = posenc::floater;
    std::mt19937_64 rng(2020);
    fl::mlp<float> h(d);                 // h(t, p) = W2 [relu(W1 [p; t] + b1); t] + b2, hidden = d
    fl::init_xavier_normal(h, rng);      // the reference initialisation
    const posenc::table<float> p0 = fl::xavier_uniform<float>({1, d}, rng);  // one block's p(0)
    fl::encoder<float> enc(h, p0);       // reference: Delta = 0.01, RK 3/8, 5 substeps
    const posenc::table<float> P = enc.block_table(0, L);  // L x d, row i = p(i * Delta)
    const std::size_t shape[] = {L, d};
    posenc::io::write_npy<float>("floater_table.npy", std::span<const float>(P.data(), P.size()), shape);
    // [floater-table]

    // sanity: the file reads back bit for bit, row 0 is p(0), the table is finite
    const auto back = posenc::io::read_npy<float>("floater_table.npy");
    bool ok = back.shape == std::vector<std::size_t>{L, d} && P.allFinite() && P.row(0) == p0.row(0);
    for (std::size_t i = 0; ok && i < back.size(); ++i) ok = back.data[i] == P.data()[i];
    std::printf("floater_table: wrote floater_table.npy [%zu, %zu]; |P| max %.4f; P[%zu][0] = %.6f; %s\n", L, d,
                static_cast<double>(P.cwiseAbs().maxCoeff()), L - 1, static_cast<double>(P(static_cast<Eigen::Index>(L - 1), 0)),
                ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const posenc::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

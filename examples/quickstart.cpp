// SPDX-License-Identifier: MIT
// Quickstart: FLOATER position encodings. A learned ODE dp/dt = h(t, p) (an MLP) generates the
// encodings p(t_i), t_i = i * Delta, for 3 blocks that share the dynamics and differ in p(0);
// asking for a longer table integrates only the new intervals. (The ODE toolkit underneath:
// examples/ode_integrate.cpp and examples/ode_adaptive.cpp.)
#include <cstdio>
#include <random>

#include <posenc/floater.hpp>

int main() {
  // [quickstart-floater]
  namespace fl = posenc::floater;
  std::mt19937_64 rng(42);
  fl::mlp<float> h(64);                                                    // h(t, p) = W2 [relu(W1 [p; t] + b1); t] + b2
  fl::init_xavier_normal(h, rng);                                          // reference initialisation
  fl::encoder<float> floater(h, fl::xavier_uniform<float>({3, 64}, rng));  // 3 blocks, Delta = 0.01, RK 3/8
  const posenc::table<float> P = floater.block_table(2, 128);              // block 2: 128 positions x 64
  floater.extend(1024);                                                    // longer inputs: only new intervals
  // [quickstart-floater]
  // The extension did not change the first 128 positions (same steps: bitwise equal).
  const bool ok = P.allFinite() && floater.size() == 1024 && floater.block_table(2, 128) == P;
  std::printf("FLOATER block 2: %ld x %ld, P[127][0] = %.6f; cached %zu positions: %s\n", static_cast<long>(P.rows()),
              static_cast<long>(P.cols()), static_cast<double>(P(127, 0)), floater.size(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

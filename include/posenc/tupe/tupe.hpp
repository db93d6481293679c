// SPDX-License-Identifier: MIT
// TUPE (Ke, He & Liu, ICLR 2021): the untied positional correlation
//   v_h = s (LN(P) U_h^Q + c_h^Q)(LN(P) U_h^K + c_h^K)^T  (+ b_{j-i} for TUPE-R)
// with the [CLS] reset, computed with the semantics of the reference code (guolinke/TUPE,
// TransformerSentenceEncoder): LayerNorm with affine on P, nn.Linear projections with bias,
// per-head scale 1/sqrt(2 d/H) applied to the queries, one extra position row whose (0,0)
// correlation resets the [CLS] row, T5 buckets with the extra buckets num_buckets/2 and
// num_buckets for the [CLS] row and column. Forward, a per-length cache shared by all layers,
// and the gradients of a scalar loss with respect to every parameter of the positional term.
#pragma once

#include <posenc/tupe/forward.hpp>   // IWYU pragma: export
#include <posenc/tupe/backward.hpp>  // IWYU pragma: export
#include <posenc/tupe/cache.hpp>     // IWYU pragma: export

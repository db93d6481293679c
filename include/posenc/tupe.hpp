// SPDX-License-Identifier: MIT
// TUPE: untied positional correlation, T5 relative buckets and the [CLS] reset (Ke, He & Liu,
// ICLR 2021), with the semantics of the released code. See docs/tupe.md.
#pragma once

#include <posenc/tupe/relative_bucket.hpp>  // IWYU pragma: export
#include <posenc/tupe/tupe.hpp>             // IWYU pragma: export
#include <posenc/tupe/attention.hpp>   // IWYU pragma: export

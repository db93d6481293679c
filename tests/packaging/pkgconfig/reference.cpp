// SPDX-License-Identifier: MIT
// The __cplusplus of a plain program at the same -std, without posenc: what std.cpp must print.
#include <cstdio>
int main() { std::printf("__cplusplus=%ld\n", static_cast<long>(__cplusplus)); }

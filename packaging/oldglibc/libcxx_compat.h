// Forced into every C++ file of the glibc 2.28 build (packaging/oldglibc/
// zig.cmake): what the code takes from libstdc++ that LLVM's libc++ (zig's)
// does not have.
//
// std::bitset::_Find_first() is a libstdc++ extension, used once, in
// parser/match/fast_layout_compile.cc, on a std::bitset<256> holding exactly
// one bit. `b._Find_first()` becomes `b.to_string().rfind('1') ^ 255`: bit i
// is character 255 - i of to_string(), and 255 - p == p ^ 255 for p < 256.
// Right for a one-bit bitset<256> only: replace the call with portable code in
// parser/ and delete this.
#pragma once
// nlohmann/json 3.11.2 under C++20 with libc++ declares only the three-way
// comparison operators, and `std::string == json` (parser/format_check.cc)
// then finds no operator; its C++17 operators compare the same way.
#ifndef JSON_HAS_THREE_WAY_COMPARISON
#define JSON_HAS_THREE_WAY_COMPARISON 0
#endif
#if defined(_LIBCPP_VERSION) || defined(__clang__)
#include <bitset>
#define _Find_first() to_string().rfind('1') ^ 255
#endif

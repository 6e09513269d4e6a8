// Forced into every C++ file of the glibc 2.28 build (packaging/oldglibc/
// zig.cmake): what the code takes from libstdc++ that LLVM's libc++ (zig's)
// does not have. (std::bitset::_Find_first, a libstdc++ extension, was
// replaced in parser/match/fast_layout_compile.cc by portable code.)
#pragma once
// nlohmann/json 3.11.2 under C++20 with libc++ declares only the three-way
// comparison operators, and `std::string == json` then finds no operator; its
// C++17 operators compare the same way.
#ifndef JSON_HAS_THREE_WAY_COMPARISON
#define JSON_HAS_THREE_WAY_COMPARISON 0
#endif

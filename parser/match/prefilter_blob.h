// prefilter_blob.h: FormatSet's Hyperscan literal database, compiled at run time
// or taken from a blob serialized at build time. The built-in format files'
// database is compiled once by parser/match/tools/gen_prefilter_blob.cc and embedded
// (rather than compiled on every start: bench/RESULTS.md); a run uses it only
// when its fingerprint says it was built from the same literals, Hyperscan and
// CPU features as the database the run would compile.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct hs_database;

namespace tpt::prefilter {

// Everything hs_compile_lit_multi's output depends on: the literals with
// their flags (ids are their indices), the mode, hs_version() and the CPU
// (tune + features) Hyperscan compiles for. Exact, not a hash.
std::string Fingerprint(const std::vector<std::string>& literals, const std::vector<unsigned>& flags);

// Compiles the literals in block mode for this CPU; id i is literals[i].
StatusOr<hs_database*> Compile(const std::vector<std::string>& literals, const std::vector<unsigned>& flags);

// A blob: magic, CRC-32, fingerprint and the serialized database.
StatusOr<std::string> Serialize(const hs_database* db, std::string_view fingerprint);

// The database in `blob` when its fingerprint is `fingerprint` and Hyperscan
// accepts its bytes; null otherwise (other literals, Hyperscan or CPU, or
// damaged bytes). The caller owns the result (hs_free_database).
hs_database* Deserialize(std::string_view blob, std::string_view fingerprint);

// The blob of the built-in format files made by the build; empty when the
// build could not make one (then the database is compiled at run time).
std::string_view EmbeddedBlob();

}  // namespace tpt::prefilter

// prefilter_blob.cc: see prefilter_blob.h.
#include "parser/match/prefilter_blob.h"

#include <hs/hs.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tpt::prefilter {

namespace {

constexpr std::string_view kMagic = "TPTHSDB1";

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// CRC-32 of the blob past its magic and checksum: Hyperscan's own check
// leaves the database's padding out.
uint64_t Checksum(std::string_view rest) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!rest.empty()) {
    uInt n = static_cast<uInt>(std::min<size_t>(rest.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(rest.data()), n);
    rest.remove_prefix(n);
  }
  return crc;
}

uint64_t GetU64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

}  // namespace

std::string Fingerprint(const std::vector<std::string>& literals, const std::vector<unsigned>& flags) {
  hs_platform_info_t platform{};
  std::string fp = "hyperscan ";
  fp += hs_version();
  fp += '\n';
  if (hs_populate_platform(&platform) == HS_SUCCESS) {
    fp += "tune " + std::to_string(platform.tune) + " features " + std::to_string(platform.cpu_features);
  } else {
    fp += "platform unknown";  // the compile uses the same probe; no blob was made this way
  }
  fp += "\nblock literals " + std::to_string(literals.size()) + '\n';
  for (size_t i = 0; i < literals.size(); ++i) {
    fp += std::to_string(flags[i]) + ' ' + std::to_string(literals[i].size()) + ' ';
    fp += literals[i];
    fp += '\n';
  }
  return fp;
}

StatusOr<hs_database*> Compile(const std::vector<std::string>& literals, const std::vector<unsigned>& flags) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  std::vector<unsigned> ids;
  for (size_t i = 0; i < literals.size(); ++i) {
    ptrs.push_back(literals[i].data());
    lens.push_back(literals[i].size());
    ids.push_back(static_cast<unsigned>(i));
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(ptrs.data(), flags.data(), ids.data(), lens.data(), static_cast<unsigned>(literals.size()),
                           HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    std::string why = err && err->message ? err->message : "unknown error";
    hs_free_compile_error(err);
    return InternalError("building the literal prefilter (Hyperscan) failed: " + why);
  }
  return db;
}

StatusOr<std::string> Serialize(const hs_database* db, std::string_view fingerprint) {
  char* bytes = nullptr;
  size_t length = 0;
  if (db == nullptr || hs_serialize_database(db, &bytes, &length) != HS_SUCCESS) {
    return InternalError("serializing the literal prefilter (Hyperscan) failed");
  }
  std::string rest;
  PutU64(&rest, fingerprint.size());
  rest += fingerprint;
  rest.append(bytes, length);
  std::free(bytes);  // hs_serialize_database allocates with the misc allocator: malloc by default
  std::string blob(kMagic);
  PutU64(&blob, Checksum(rest));
  return blob + rest;
}

hs_database* Deserialize(std::string_view blob, std::string_view fingerprint) {
  if (blob.size() < kMagic.size() + 16 || blob.substr(0, kMagic.size()) != kMagic) return nullptr;
  blob.remove_prefix(kMagic.size());
  uint64_t crc = GetU64(blob);
  blob.remove_prefix(8);
  if (crc != Checksum(blob)) return nullptr;
  uint64_t fp_size = GetU64(blob);
  blob.remove_prefix(8);
  if (fp_size > blob.size() || blob.substr(0, fp_size) != fingerprint) return nullptr;
  blob.remove_prefix(fp_size);
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(blob.data(), blob.size(), &db) != HS_SUCCESS) return nullptr;
  return db;
}

}  // namespace tpt::prefilter

// file_loaders_fuzzer: libFuzzer entry over the small-file loader (issue #33,
// base/read_file.h) and the JSON it feeds.
//   make -C build-fuzz file_loaders_fuzzer
//   build-fuzz/parser/fuzz/file_loaders_fuzzer -max_total_time=300
// The first byte picks the file's cap (1 byte .. 64 KiB) and whether the
// path is a regular file, a directory or a FIFO (never blocking); the rest is
// the file's bytes. ReadSmallFile must return them whole or an error, never
// more than the cap, and the GPU catalog parser must take any text.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "parser/fuzz/fuzz_dir.h"
#include "base/read_file.h"
#include "memory/memory_model.h"

namespace {

const std::string& Dir() { return tpt::fuzz::PrivateDir("tpt-loaders-fuzz"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t cap = size_t{1} << (data[0] & 15);
  const int kind = (data[0] >> 4) % 3;  // 0 file, 1 directory, 2 FIFO
  const std::string path = Dir() + "/x.json";
  if (kind == 0) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return 0;
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  } else if (kind == 1) {
    ::mkdir(path.c_str(), 0700);
  } else {
    ::mkfifo(path.c_str(), 0600);
  }
  auto text = tpt::ReadSmallFile(path, cap, "a fuzz file");
  if (kind == 1) ::rmdir(path.c_str());
  else ::unlink(path.c_str());
  if (text.ok()) {
    if (kind != 0 || text->size() > cap || text->size() != size - 1) std::abort();
    (void)tpt::memory::ParseGpuCatalog(*text, "x.json");
  } else if (kind == 0 && size - 1 <= cap) {
    std::abort();  // a small regular file must be read
  }
  return 0;
}

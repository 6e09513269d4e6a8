// archive_fuzzer: libFuzzer entry over the archive reader (issue #33).
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTPT_FUZZ=ON
//   make -C build-fuzz archive_fuzzer
//   build-fuzz/parser/fuzz/archive_fuzzer -max_total_time=300
// The first byte picks the archive's name (zip, tar, tar.gz, tar.xz,
// tar.zst, tar.bz2: libarchive detects the filter, the name picks tar); the
// rest is written to a file in a private folder, listed (ListArchive), and
// every member is opened and read through the BlockReader with a small
// --max-input-bytes, so a bomb stops. Nothing may crash, leak or hang.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "parser/fuzz/fuzz_dir.h"
#include "parser/reader.h"

namespace {

const std::string& Dir() { return tpt::fuzz::PrivateDir("tpt-archive-fuzz"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kNames[] = {"a.zip", "a.tar", "a.tar.gz", "a.tar.xz", "a.tar.zst", "a.tar.bz2"};
  const std::string path = Dir() + "/" + kNames[data[0] % 6];
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  tpt::SetExpandedByteBudget(4u << 20);
  auto listing = tpt::ListArchive(path);
  if (listing) {
    for (const std::string& m : listing->members) {
      auto in = tpt::OpenInput(m);
      if (!in.ok()) continue;
      tpt::BlockReader reader(in->source.get(), 4096, 1024);
      tpt::Block b;
      for (int blocks = 0; blocks < 4096; ++blocks) {
        auto more = reader.Next(&b);
        if (!more.ok() || !*more) break;
      }
    }
  }
  ::unlink(path.c_str());
  return 0;
}

// read_whole.cc: see read_whole.h.
#include "parser/read_whole.h"

namespace tpt {

Status ReadWhole(ByteSource* source, size_t max_bytes, std::string* out) {
  char buf[1 << 16];
  while (true) {
    auto n = source->Read(buf, sizeof buf);
    if (!n.ok()) return n.status();
    if (*n == 0) return OkStatus();
    out->append(buf, *n);
    if (out->size() > max_bytes) return InvalidArgumentError("more than " + std::to_string(max_bytes) + " bytes");
  }
}

}  // namespace tpt

// no_fast_code.cc: no compiled fast layouts. Linked into the generators
// (gen_fast_code writes the real table from the interpreter's programs) and
// copied in its place when the build cannot run gen_fast_code: every layout
// is then interpreted, with the same results.
#include "parser/match/fast_layout.h"

namespace tpt::fast_layout_code {

const Entry* Entries(size_t* count) {
  *count = 0;
  return nullptr;
}

}  // namespace tpt::fast_layout_code

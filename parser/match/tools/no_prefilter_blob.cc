// no_prefilter_blob.cc: no embedded literal database. Linked into
// gen_prefilter_blob (which makes the real one) and copied in its place when
// the build cannot run it: the database is then compiled at run time.
#include "parser/match/prefilter_blob.h"

namespace tpt::prefilter {

std::string_view EmbeddedBlob() { return {}; }

}  // namespace tpt::prefilter

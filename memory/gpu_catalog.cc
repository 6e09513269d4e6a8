// gpu_catalog.cc: the GPU catalog (gpu_catalog.json, embedded at build time by
// tpt_embed, cmake/Embed.cmake) and name lookup.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/embedded.h"
#include "base/read_file.h"
#include "memory/memory_model.h"

namespace tpt::generated {
extern const EmbeddedFile kGpuCatalog[];
extern const size_t kGpuCatalogCount;
}  // namespace tpt::generated

namespace tpt::memory {

namespace {

// memory/gpu_catalog.json, compiled in (tpt_embed in memory/CMakeLists.txt).
const char* BuiltinCatalogText() { return generated::kGpuCatalog[0].text; }

// "NVIDIA H100 80GB-HBM3" -> "nvidiah10080gbhbm3".
std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

Status Bad(std::string_view source, const std::string& path, const std::string& what) {
  return InvalidArgumentError(std::string(source) + ": " + path + ": " + what +
                              " (each entry: {\"name\", \"aliases\": [..], \"memory_gib\": >0, \"arch\", \"sm\": >0, "
                              "\"interconnect\": \"nvlink\"|\"pcie\", optionally \"unified_memory\": true|false, "
                              "\"pcie_peer_access\": true|false, \"nvidia_smi_mib\": N, \"wddm_mib\": N, \"memory_gib_low\": GiB with "
                              "\"memory_low_when\": \"...\"})");
}

}  // namespace

StatusOr<std::vector<GpuInfo>> ParseGpuCatalog(std::string_view json_text, std::string_view source) {
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgumentError(std::string(source) + ": not valid JSON; check the syntax");
  if (!doc.is_object() || !doc.contains("gpus") || !doc["gpus"].is_array()) {
    return Bad(source, "/gpus", "missing or not an array");
  }
  std::vector<GpuInfo> out;
  std::map<std::string, size_t> seen;  // normalized name -> entry
  const auto& gpus = doc["gpus"];
  for (size_t i = 0; i < gpus.size(); ++i) {
    const auto& g = gpus[i];
    std::string path = "/gpus/" + std::to_string(i);
    if (!g.is_object()) return Bad(source, path, "not an object");
    GpuInfo info;
    if (!g.contains("name") || !g["name"].is_string() || g["name"].get<std::string>().empty()) {
      return Bad(source, path + "/name", "missing or not a non-empty string");
    }
    info.name = g["name"].get<std::string>();
    // A name is printed in plan headers and reports: no control characters
    // (an escape sequence in a catalog would reach the terminal raw).
    auto has_control = [](const std::string& n) {
      return std::any_of(n.begin(), n.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    };
    if (has_control(info.name)) return Bad(source, path + "/name", "holds a control character (an escape sequence?)");
    if (g.contains("aliases")) {
      if (!g["aliases"].is_array()) return Bad(source, path + "/aliases", "not an array of strings");
      for (size_t k = 0; k < g["aliases"].size(); ++k) {
        const auto& a = g["aliases"][k];
        if (!a.is_string() || a.get<std::string>().empty()) {
          return Bad(source, path + "/aliases/" + std::to_string(k), "not a non-empty string");
        }
        if (has_control(a.get<std::string>())) {
          return Bad(source, path + "/aliases/" + std::to_string(k), "holds a control character (an escape sequence?)");
        }
        info.aliases.push_back(a.get<std::string>());
      }
    }
    if (!g.contains("memory_gib") || !g["memory_gib"].is_number() || !(g["memory_gib"].get<double>() >= 1) ||
        !(g["memory_gib"].get<double>() <= 16384)) {
      return Bad(source, path + "/memory_gib", "missing or not a number of GiB from 1 to 16384");
    }
    info.memory_bytes = g["memory_gib"].get<double>() * kGiB;
    if (!g.contains("arch") || !g["arch"].is_string()) return Bad(source, path + "/arch", "missing or not a string");
    info.arch = g["arch"].get<std::string>();
    if (!g.contains("sm") || !g["sm"].is_number_integer() || g["sm"].get<int>() <= 0) {
      return Bad(source, path + "/sm", "missing or not an integer > 0 (e.g. 90 for Hopper)");
    }
    info.sm = g["sm"].get<int>();
    if (!g.contains("interconnect") || !g["interconnect"].is_string() ||
        (g["interconnect"] != "nvlink" && g["interconnect"] != "pcie")) {
      return Bad(source, path + "/interconnect", "missing or not \"nvlink\" or \"pcie\"");
    }
    info.interconnect = g["interconnect"].get<std::string>();
    if (g.contains("unified_memory")) {
      if (!g["unified_memory"].is_boolean()) return Bad(source, path + "/unified_memory", "not true or false");
      info.unified_memory = g["unified_memory"].get<bool>();
    }
    if (g.contains("pcie_peer_access")) {
      if (!g["pcie_peer_access"].is_boolean()) return Bad(source, path + "/pcie_peer_access", "not true or false");
      info.pcie_peer_access = g["pcie_peer_access"].get<bool>();
    }
    if (g.contains("nvidia_smi_mib")) {
      const auto& n = g["nvidia_smi_mib"];
      if (!n.is_number_integer() || !(n.get<double>() * 1024 * 1024 > info.memory_bytes)) {
        return Bad(source, path + "/nvidia_smi_mib", "not an integer MiB above memory_gib (nvidia-smi's total)");
      }
      info.nvidia_smi_mib = n.get<int64_t>();
    }
    if (g.contains("wddm_mib")) {
      const auto& n = g["wddm_mib"];
      if (!n.is_number_integer() || !(n.get<double>() * 1024 * 1024 >= info.memory_bytes)) {
        return Bad(source, path + "/wddm_mib", "not an integer MiB at or above memory_gib (the total Windows and WSL2 report)");
      }
      info.wddm_mib = n.get<int64_t>();
    }
    if (g.contains("memory_gib_low") || g.contains("memory_low_when")) {
      const auto& lo = g.value("memory_gib_low", nlohmann::json());
      if (!lo.is_number() || !(lo.get<double>() > 0) || !(lo.get<double>() * kGiB < info.memory_bytes)) {
        return Bad(source, path + "/memory_gib_low", "not a number of GiB below memory_gib (the lower total some hosts report)");
      }
      if (!g.contains("memory_low_when") || !g["memory_low_when"].is_string() ||
          g["memory_low_when"].get<std::string>().empty()) {
        return Bad(source, path + "/memory_low_when", "missing: say on which hosts the card reports memory_gib_low");
      }
      info.memory_bytes_low = lo.get<double>() * kGiB;
      info.memory_low_when = g["memory_low_when"].get<std::string>();
    }
    std::vector<std::string> names = info.aliases;
    names.push_back(info.name);
    for (const auto& n : names) {
      auto [it, fresh] = seen.emplace(Normalize(n), i);
      if (!fresh && it->second != i) {
        return Bad(source, path, "name or alias '" + n + "' is already used by another entry");
      }
    }
    out.push_back(std::move(info));
  }
  if (out.empty()) return Bad(source, "/gpus", "is empty");
  return out;
}

std::string_view EmbeddedGpuCatalogJson() { return BuiltinCatalogText(); }

const GpuInfo* GpuByNvidiaSmiTotal(double bytes) {
  const GpuInfo* found = nullptr;
  for (const GpuInfo& g : GpuCatalog()) {
    if (g.nvidia_smi_mib <= 0 || static_cast<double>(g.nvidia_smi_mib) * 1024 * 1024 != bytes) continue;
    if (found != nullptr && found->memory_bytes != g.memory_bytes) return nullptr;
    found = &g;
  }
  return found;
}

namespace {

std::vector<GpuInfo>& MutableCatalog() {
  static std::vector<GpuInfo>* catalog = [] {
    auto parsed = ParseGpuCatalog(BuiltinCatalogText(), "memory/gpu_catalog.json (embedded)");
    // A broken embedded catalog is caught by gpu_catalog_test; at run time degrade to empty.
    return new std::vector<GpuInfo>(parsed.ok() ? std::move(*parsed) : std::vector<GpuInfo>{});
  }();
  return *catalog;
}

}  // namespace

const std::vector<GpuInfo>& GpuCatalog() { return MutableCatalog(); }

StatusOr<std::vector<GpuInfo>> MergeGpuCatalog(const std::vector<GpuInfo>& base, const std::vector<GpuInfo>& user,
                                               std::string_view source) {
  std::vector<GpuInfo> merged = base;
  std::vector<bool> replaced(base.size(), false);
  for (size_t i = 0; i < user.size(); ++i) {
    const GpuInfo& g = user[i];
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    std::optional<size_t> hit;
    for (size_t k = 0; k < base.size(); ++k) {
      std::vector<std::string> theirs = base[k].aliases;
      theirs.push_back(base[k].name);
      bool same = false;
      for (const auto& a : names)
        for (const auto& b : theirs) same = same || Normalize(a) == Normalize(b);
      if (!same) continue;
      if (hit) {
        return Bad(source, "/gpus/" + std::to_string(i),
                   "'" + g.name + "' names two built-in GPUs (" + base[*hit].name + ", " + base[k].name +
                       "); give it the names of one");
      }
      hit = k;
    }
    if (hit && replaced[*hit]) {
      return Bad(source, "/gpus/" + std::to_string(i), "'" + g.name + "' replaces " + base[*hit].name + " a second time");
    }
    if (hit) {
      replaced[*hit] = true;
      merged[*hit] = g;
    } else {
      merged.push_back(g);
    }
  }
  return merged;
}

Status LoadGpuCatalogFile(const std::string& path) {
  auto text = ReadSmallFile(path, 16u << 20, "a GPU catalog (a small JSON file)");
  if (!text.ok()) return text.status();
  auto user = ParseGpuCatalog(*text, path);
  if (!user.ok()) return user.status();
  auto merged = MergeGpuCatalog(MutableCatalog(), *user, path);
  if (!merged.ok()) return merged.status();
  MutableCatalog() = std::move(*merged);
  return OkStatus();
}

std::string DefaultGpuCatalogPath() {
  if (const char* env = std::getenv("TPTRIAGE_GPU_CATALOG"); env != nullptr && *env != '\0') return env;
  std::string dir;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::string(home) + "/.config";
  } else {
    return "";
  }
  std::string path = dir + "/tptriage/gpus.json";
  std::ifstream probe(path);
  return probe ? path : "";
}

Status LoadUserGpuCatalog(const std::string& flag) {
  static bool loaded = false;
  if (loaded) return OkStatus();
  const std::string path = flag.empty() ? DefaultGpuCatalogPath() : flag;
  if (path.empty()) return OkStatus();
  Status st = LoadGpuCatalogFile(path);
  if (st.ok()) {
    loaded = true;
    return st;
  }
  // Say where the path came from when the user did not type it.
  const char* env = std::getenv("TPTRIAGE_GPU_CATALOG");
  if (flag.empty() && env != nullptr && *env != '\0') {
    return Status(st.code(), "TPTRIAGE_GPU_CATALOG=" + st.message() + " (unset the variable or fix the file)");
  }
  if (flag.empty()) return Status(st.code(), st.message() + " (the default GPU catalog path; move it away or fix it)");
  return st;
}

namespace {

// Where model tokens begin and end in Normalize(s): edge[p] is true between
// text[p-1] and text[p] when a separator was dropped there, when either side is
// punctuation ("(", "/", "."), and at both ends. "NVIDIA RTX A4000" ->
// "nvidiartxa4000" with edges at 0, 6, 9, 14.
struct Tokens {
  std::string text;
  std::vector<bool> edge;
};

Tokens Tokenize(std::string_view s) {
  Tokens t;
  t.edge.push_back(true);
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_' || c == '\t') {
      t.edge.back() = true;
      continue;
    }
    const bool alnum = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (!alnum) t.edge.back() = true;
    t.text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    t.edge.push_back(!alnum);
  }
  t.edge.back() = true;
  return t;
}

// Words that, right after a model number, name another card: "RTX 4070 Ti" is not the
// 4070, "RTX 4090 Laptop GPU" has 16 GB, not 24, "RTX 5090 D v2" has 24 GB, not 32.
// A catalog name that holds the word itself ("4070 ti") is matched whole, past it.
bool IsVariantWord(std::string_view w) {
  static constexpr std::string_view kWords[] = {"ti", "super", "d", "v2", "laptop", "mobile", "max", "xt", "xtx"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

// `name` (normalized) lies in `key` at `at` on whole tokens and no variant word follows.
bool WholeTokenMatch(const Tokens& key, size_t at, size_t len) {
  const size_t end = at + len;
  if (!key.edge[at] || !key.edge[end]) return false;
  size_t next = end;  // the next token, past punctuation
  while (next < key.text.size() && !std::isalnum(static_cast<unsigned char>(key.text[next]))) ++next;
  if (next == key.text.size()) return true;
  size_t stop = next + 1;
  while (!key.edge[stop]) ++stop;  // edge[size] is true
  return !IsVariantWord(std::string_view(key.text).substr(next, stop - next));
}

// How much of a card a normalized name tells: its length less a leading vendor or
// product-line word ("nvidia", "geforce", ...), so "h20 141gb" (8) is more specific than
// "nvidia h20" (3) inside "NVIDIA H20 141GB".
size_t Specificity(std::string_view nn) {
  static constexpr std::string_view kVendors[] = {"nvidia", "geforce", "tesla", "quadro", "amd", "instinct"};
  size_t stripped = 0;
  for (bool again = true; again;) {
    again = false;
    for (std::string_view v : kVendors) {
      if (nn.substr(stripped).starts_with(v)) {
        stripped += v.size();
        again = true;
      }
    }
  }
  return nn.size() - stripped;
}

}  // namespace

StatusOr<GpuInfo> FindGpu(std::string_view name) {
  const std::string key = Normalize(name);
  if (key.empty()) return InvalidArgumentError("GPU name is empty; give a name like H100, H200, L4 or A100-40G");
  const Tokens tokens = Tokenize(name);
  // A longer device string ("NVIDIA H100 80GB HBM3") that holds a known name on whole
  // model tokens: the most specific such name, so "h100pcie" beats "h100". A name that ends or
  // starts inside a model number ("a40" in "RTX A4000", "h20" in "GH200") or is followed
  // by a variant word ("4070" in "4070 Ti") is another card: no match, never a guess.
  const GpuInfo* best = nullptr;
  std::pair<size_t, size_t> best_score{0, 0};  // (specificity, length)
  for (const auto& g : GpuCatalog()) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const auto& n : names) {
      std::string nn = Normalize(n);
      if (nn == key) return g;
      const std::pair<size_t, size_t> score{Specificity(nn), nn.size()};
      if (nn.empty() || score <= best_score) continue;
      for (size_t at = tokens.text.find(nn); at != std::string::npos; at = tokens.text.find(nn, at + 1)) {
        if (WholeTokenMatch(tokens, at, nn.size())) {
          best = &g, best_score = score;
          break;
        }
      }
    }
  }
  if (best) return *best;
  // The first names of the catalog (a merged catalog may hold thousands).
  constexpr size_t kNamesShown = 40;
  std::string known;
  const auto& all = GpuCatalog();
  for (size_t i = 0; i < all.size() && i < kNamesShown; ++i) known += (known.empty() ? "" : ", ") + all[i].name;
  if (all.size() > kNamesShown) known += " and " + std::to_string(all.size() - kNamesShown) + " more";
  return NotFoundError("GPU '" + std::string(name) + "' is not in the catalog; known: " + known +
                       ". Give its memory with --gpu-mem instead (e.g. --gpu-mem 94GiB), or add it to a "
                       "--gpu-catalog file");
}

}  // namespace tpt::memory

namespace tpt::memory {

std::string GpuAmbiguity(std::string_view name) {
  // Names that cover parts with different memory: what was assumed, and the other choices.
  static constexpr struct {
    const char* key;
    const char* text;
  } kAmbiguous[] = {
      {"a100", "A100 SXM 80GB (A100 also comes with 40 GB: --gpu A100-40G)"},
      {"nvidiaa100", "A100 SXM 80GB (A100 also comes with 40 GB: --gpu A100-40G)"},
      {"h100", "H100 SXM 80GB (H100 NVL has 94 GB: --gpu H100-NVL)"},
      {"h20", "H20 96GB (H20 also comes with 141 GB: --gpu H20-141G)"},
      {"v100", "V100 SXM2 16GB (V100 also comes with 32 GB: --gpu V100-32G)"},
      {"gb200", "GB200 186GB per GPU (HBM3e; the Grace CPU memory is not counted)"},
      {"gh200", "GH200 96GB (GH200 also comes with 144 GB HBM3e: --gpu GH200-144G)"},
      {"rtxpro6000", "RTX PRO 6000 Blackwell 96GB (the older RTX 6000 Ada has 48 GB: --gpu RTX-6000-Ada)"},
      {"mi300", "MI300X 192GB (MI300A shares 128 GB with the CPU)"},
  };
  std::string key;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (const auto& a : kAmbiguous) {
    if (key == a.key) return a.text;
  }
  return "";
}

std::string GpuFormFactorOpen(std::string_view name) {
  std::string key;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (key.rfind("nvidia", 0) == 0) key = key.substr(6);
  if (key.rfind("a100", 0) != 0 || key.find("sxm") != std::string::npos || key.find("pcie") != std::string::npos) {
    return "";
  }
  auto g = FindGpu(name);
  if (!g.ok() || g->name.find("A100 SXM") != 0) return "";
  return std::string(kGpuFormFactorOpen) + ": A100 " + (g->name.find("40GB") != std::string::npos ? "40" : "80") +
         " GB also comes as a PCIe card; NCCL's channels on an NVSwitch board are not priced (--gpu A100-SXM4-" +
         (g->name.find("40GB") != std::string::npos ? "40" : "80") + "GB prices them)";
}

}  // namespace tpt::memory

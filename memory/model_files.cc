// model_files.cc: a model's files -> ModelConfig (model_config.h LoadModel): the folder
// or its config.json, a Hugging Face cache folder (refs/main -> snapshots/<rev>), the
// quantization files beside config.json, and the weights' total from
// model.safetensors.index.json or a single model.safetensors.
#include <filesystem>
#include <fstream>

#include "base/read_file.h"
#include "base/strings.h"
#include "memory/model_config_internal.h"

namespace tpt::memory {

namespace fs = std::filesystem;
using internal::Count;
using internal::json;
using internal::ParseQuant;
using internal::ReadJsonFile;
using internal::ReadVisionProcessorFiles;

namespace {

// A Hugging Face cache folder: `models--org--name/` (refs/main names the snapshot; a
// lone snapshot is taken when there is no ref) or `models--org--name/snapshots/` itself.
// Any other directory is returned as it is.
StatusOr<fs::path> FollowHfCache(const fs::path& dir, std::vector<std::string>* notes) {
  std::error_code ec;
  if (fs::exists(dir / "config.json", ec)) return dir;
  fs::path root = dir;
  if (dir.filename() == "snapshots") root = dir.parent_path();
  const fs::path snaps = root / "snapshots";
  if (!fs::is_directory(snaps, ec)) return dir;
  std::string rev, how;
  for (const char* ref : {"main", "master"}) {
    if (fs::exists(root / "refs" / ref, ec)) {
      auto text = ReadSmallFile((root / "refs" / ref).string(), 4096, "a Hugging Face cache ref");
      if (!text.ok()) return InvalidArgumentError("--model: " + text.status().message());
      rev = std::string(Trim(*text));
      how = std::string("refs/") + ref;
      break;
    }
  }
  if (rev.empty()) {
    std::vector<std::string> all;
    for (const auto& e : fs::directory_iterator(snaps, ec)) {
      if (e.is_directory(ec)) all.push_back(e.path().filename().string());
    }
    if (all.size() != 1) {
      std::string list;
      for (const auto& r : all) list += (list.empty() ? "" : ", ") + r;
      return InvalidArgumentError("--model " + dir.string() + ": a Hugging Face cache folder with " +
                                  std::to_string(all.size()) + " snapshots and no refs/main (" +
                                  (list.empty() ? "none" : list) + "); give the snapshot folder");
    }
    rev = all.front();
    how = "the only snapshot";
  }
  const fs::path snap = snaps / rev;
  if (!fs::exists(snap / "config.json", ec)) {
    return InvalidArgumentError("--model " + dir.string() + ": " + how + " names snapshot " + rev +
                                ", which has no config.json (is the download complete?)");
  }
  notes->push_back("Hugging Face cache: snapshot " + rev + " (" + how + ")");
  return snap;
}

// The weights' bytes of a single-file checkpoint: model.safetensors is an 8-byte
// little-endian header length, the JSON header, then the tensors.
std::optional<double> SafetensorsBytes(const fs::path& file) {
  std::ifstream f(file, std::ios::binary);
  unsigned char len[8];
  if (!f.read(reinterpret_cast<char*>(len), 8)) return std::nullopt;
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | len[i];
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec || header > size || size - header < 8 + 1024) return std::nullopt;  // a Git LFS pointer, or damaged
  return static_cast<double>(size - 8 - header);
}

// Tensor names that only quantized checkpoints have (scales, packed weights).
std::string QuantizedTensor(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    for (const char* marker : {".weight_scale", ".qweight", ".weight_packed", ".scales", ".weight_scale_inv"}) {
      if (n.find(marker) != std::string::npos) return n;
    }
  }
  return "";
}

// A link whose target is gone: a Hugging Face cache snapshot links its files into
// ../../blobs/, and an interrupted download or a pruned cache leaves the link behind.
bool BrokenLink(const fs::path& p) {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(p, ec)) && !fs::exists(p, ec);
}

Status BrokenLinkError(const fs::path& p) {
  std::error_code ec;
  return InvalidArgumentError("--model: " + p.string() + " is a link to " + fs::read_symlink(p, ec).string() +
                              ", which does not exist (a Hugging Face cache whose blob is missing: is the download "
                              "complete?)");
}

}  // namespace

StatusOr<ModelConfig> LoadModel(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) {
    return InvalidArgumentError("--model " + path +
                                ": no such file or directory (give a local model directory or its config.json; "
                                "nothing is downloaded)");
  }
  std::vector<std::string> found;
  fs::path dir = p, config = p;
  // The index or a weights file named instead of the folder: its folder's config.json.
  const std::string given = p.filename().string();
  if (!fs::is_directory(p, ec) && given != "config.json" &&
      (given == "model.safetensors.index.json" || p.extension() == ".safetensors")) {
    if (!fs::exists(p.parent_path() / "config.json", ec)) {
      return InvalidArgumentError("--model " + path + ": a weights file whose folder has no config.json; give the "
                                  "model folder (config.json is what plan reads)");
    }
    found.push_back("--model names " + given + ": its folder's config.json is read");
    p = p.parent_path();
  }
  if (fs::is_directory(p, ec)) {
    if (BrokenLink(p / "config.json")) return BrokenLinkError(p / "config.json");
    auto snap = FollowHfCache(p, &found);
    if (!snap.ok()) return snap.status();
    dir = *snap;
    config = dir / "config.json";
    if (!fs::exists(config, ec)) {
      return InvalidArgumentError("--model " + path + ": the directory has no config.json");
    }
  } else {
    dir = p.parent_path();
  }
  auto j = ReadJsonFile(config);
  if (!j.ok()) return InvalidArgumentError("--model: " + j.status().message());
  auto m = ParseModelConfig(*j, config.string());
  if (!m.ok()) return m.status();
  m->notes.insert(m->notes.begin(), found.begin(), found.end());
  if (!m->quant.method.empty() || !m->quant.unsupported.empty()) m->quant.source = config.string() + " quantization_config";
  // ModelOpt writes its quantization into hf_quant_config.json next to config.json;
  // AutoGPTQ/AutoAWQ into quantize_config.json (vLLM's get_quant_config reads both).
  if (m->quant.method.empty() && m->quant.unsupported.empty()) {
    for (const char* name : {"hf_quant_config.json", "quantize_config.json", "quant_config.json"}) {
      if (!fs::exists(dir / name, ec)) continue;
      auto hq = ReadJsonFile(dir / name);
      if (!hq.ok()) return InvalidArgumentError("--model: " + hq.status().message());
      json qc = *hq;
      if (std::string(name) == "hf_quant_config.json") {
        if (!qc.contains("quantization") || !qc["quantization"].is_object()) {
          return InvalidArgumentError("--model: " + (dir / name).string() +
                                      " has no \"quantization\" object (a ModelOpt export writes "
                                      "{\"quantization\": {\"quant_algo\": ...}})");
        }
        qc["quant_method"] = "modelopt";
      }
      ParseQuant(qc, *m);
      m->quant.source = (dir / name).string();
      break;
    }
  }
  TPT_RETURN_IF_ERROR(ReadVisionProcessorFiles(dir, *m));
  fs::path index = dir / "model.safetensors.index.json";
  if (BrokenLink(index)) return BrokenLinkError(index);
  if (fs::exists(index, ec)) {
    auto ij = ReadJsonFile(index);
    if (!ij.ok()) return InvalidArgumentError("--model: " + ij.status().message());
    if (auto meta = ij->find("metadata"); meta != ij->end() && meta->is_object()) {
      auto ts = Count(*meta, {"total_size"}, index.string(), "metadata.");
      if (!ts.ok()) return ts.status();
      if (*ts) m->index_total_bytes = static_cast<double>(**ts);
    }
    if (auto wm = ij->find("weight_map"); wm != ij->end() && wm->is_object()) {
      for (const auto& [name, file] : wm->items()) m->tensor_names.push_back(name);
    }
    if (!m->tensor_names.empty()) {
      bool has_lm_head = false;
      for (const auto& n : m->tensor_names) {
        if (n.find("lm_head.weight") != std::string::npos) has_lm_head = true;
      }
      if (!m->tied_known) {
        m->tied_embeddings = !has_lm_head;
        m->tied_known = true;
        m->notes.push_back(std::string("tied embeddings from the index: ") + (has_lm_head ? "lm_head present" : "no lm_head"));
      }
    }
    if (!m->index_total_bytes) m->notes.push_back(index.string() + " has no metadata.total_size: weights from the config");
  } else if (fs::exists(dir / "model.safetensors", ec)) {
    if (auto b = SafetensorsBytes(dir / "model.safetensors")) {
      m->index_total_bytes = *b;
      m->notes.push_back("weights: model.safetensors holds " + FormatGiB(*b) + " of tensors");
    }
  }
  if (m->quant.method.empty() && m->quant.unsupported.empty()) {
    if (std::string t = QuantizedTensor(m->tensor_names); !t.empty()) {
      return InvalidArgumentError("--model " + path + ": the index has quantized tensors (" + t +
                                  ") but neither config.json's quantization_config nor hf_quant_config.json/"
                                  "quantize_config.json says the scheme; add the checkpoint's quantization file");
    }
  }
  if (!m->quant.unsupported.empty() && !m->index_total_bytes) {
    return InvalidArgumentError("--model " + path + ": " + m->quant.source + " names " + m->quant.unsupported +
                                ", which tptriage cannot price, and there is no model.safetensors.index.json total; "
                                "give --weights-per-rank");
  }
  if (!m->tied_known) {
    m->notes.push_back(std::string("tie_word_embeddings not in config.json: ") +
                       (m->tied_embeddings ? "tied" : "untied") + " assumed (the model class default)");
  }
  return m;
}

}  // namespace tpt::memory

// python_repr.cc: ParsePythonKv and CopyKnownServerArgs (python_repr.h).
#include "parser/python_repr.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "base/strings.h"
#include "parser/text_clean.h"

namespace tpt {

namespace {

class PyReprParser {
 public:
  explicit PyReprParser(std::string_view s) : s_(s) {}

  nlohmann::json ParseTop() {
    SkipSpace();
    if (Peek() == '{') {
      ++i_;
      return ParseDictBody('}');
    }
    // A dict body whose opening brace the pattern left out ("'model': 'm', ...}"):
    // a quoted key followed by a colon.
    if (Peek() == '\'' || Peek() == '"') {
      size_t save = i_;
      nlohmann::json key;
      bool dict = ParseValue(&key, ":") && (SkipSpace(), Peek() == ':');
      i_ = save;
      if (dict) return ParseDictBody('}');
    }
    // Name(...) around kwargs: "ServerArgs(a=1, ...)" or "Namespace(a=1)".
    size_t save = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    if (i_ < s_.size() && s_[i_] == '(' && i_ > save) {
      ++i_;
    } else {
      i_ = save;
    }
    return ParseKwargs();
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Done() const { return i_ >= s_.size() || depth_ > 64; }

  nlohmann::json ParseKwargs() {
    nlohmann::json out = nlohmann::json::object();
    while (!Done()) {
      SkipSpace();
      size_t k0 = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.' ||
                                s_[i_] == '-')) {
        ++i_;
      }
      std::string key(s_.substr(k0, i_ - k0));
      SkipSpace();
      if (key.empty() || Peek() != '=') {
        // Not a pair (e.g. "..." abbreviation): skip to the next top-level comma.
        if (!SkipToComma()) break;
        continue;
      }
      ++i_;
      nlohmann::json value;
      if (!ParseValue(&value, ",)")) break;
      out[key] = std::move(value);
      SkipSpace();
      if (Peek() == ',') {
        ++i_;
      } else {
        break;
      }
    }
    return out;
  }

  nlohmann::json ParseDictBody(char close) {
    nlohmann::json out = nlohmann::json::object();
    ++depth_;
    while (!Done()) {
      SkipSpace();
      if (Peek() == close) {
        ++i_;
        break;
      }
      size_t before = i_;
      nlohmann::json key;
      if (!ParseValue(&key, ":")) break;
      SkipSpace();
      if (Peek() != ':') {
        if (!SkipToComma()) break;
        continue;
      }
      ++i_;
      nlohmann::json value;
      if (!ParseValue(&value, std::string(",") + close)) break;
      out[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(value);
      SkipSpace();
      if (Peek() == ',') ++i_;
      if (i_ == before) break;
    }
    --depth_;
    return out;
  }

  bool SkipToComma() {
    int nest = 0;
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '(' || c == '[' || c == '{') ++nest;
      if (c == ')' || c == ']' || c == '}') {
        if (nest == 0) return false;
        --nest;
      }
      if (c == ',' && nest == 0) return true;
    }
    return false;
  }

  bool ParseValue(nlohmann::json* out, std::string_view stops) {
    SkipSpace();
    if (Done()) return false;
    char c = Peek();
    if (c == '\'' || c == '"') {
      ++i_;
      std::string v;
      while (i_ < s_.size() && s_[i_] != c) {
        if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
        v.push_back(s_[i_++]);
      }
      if (i_ >= s_.size()) return false;  // cut string
      ++i_;
      *out = SanitizeUtf8(v);
      return true;
    }
    if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      ++i_;
      ++depth_;
      nlohmann::json arr = nlohmann::json::array();
      while (!Done()) {
        SkipSpace();
        if (Peek() == close) {
          ++i_;
          --depth_;
          *out = std::move(arr);
          return true;
        }
        size_t before = i_;
        nlohmann::json v;
        if (!ParseValue(&v, std::string(",") + close)) return false;
        arr.push_back(std::move(v));
        SkipSpace();
        if (Peek() == ',') {
          ++i_;
        } else if (i_ == before || Peek() != close) {
          return false;  // "[1 2]", "[)": not a list we can read (fuzzer: no progress looped forever)
        }
      }
      return false;
    }
    if (c == '{') {
      ++i_;
      *out = ParseDictBody('}');
      return true;
    }
    // Bare token up to a stop char at nesting 0 (handles "Foo(a=1)" and enum reprs).
    size_t v0 = i_;
    int nest = 0;
    while (i_ < s_.size()) {
      char d = s_[i_];
      if (nest == 0 && stops.find(d) != std::string_view::npos) break;
      if (d == '(' || d == '[' || d == '{' || d == '<') ++nest;
      if (d == ')' || d == ']' || d == '}' || d == '>') {
        if (nest == 0) break;
        --nest;
      }
      ++i_;
    }
    std::string_view tok = Trim(s_.substr(v0, i_ - v0));
    if (tok == "None") *out = nullptr;
    else if (tok == "True") *out = true;
    else if (tok == "False") *out = false;
    else if (auto iv = ToIntStrict(tok)) *out = *iv;
    else if (auto dv = ToDoubleStrict(tok)) *out = *dv;
    else *out = SanitizeUtf8(tok);
    return true;
  }

  static std::optional<int64_t> ToIntStrict(std::string_view s) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
    return std::nullopt;
  }
  static std::optional<double> ToDoubleStrict(std::string_view s) {
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
    return std::nullopt;
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

nlohmann::json ParsePythonKv(std::string_view text) { return PyReprParser(text).ParseTop(); }

void CopyKnownServerArgs(const nlohmann::json& args, nlohmann::json* fields) {
  // key in the repr -> canonical field name (parser/EVENTS.md server_args).
  static const std::pair<const char*, const char*> kKeys[] = {
      {"model", "model"},
      {"model_path", "model"},
      {"tp_size", "tp_size"},
      {"tensor_parallel_size", "tp_size"},
      {"pp_size", "pp_size"},
      {"pipeline_parallel_size", "pp_size"},
      {"dp_size", "dp_size"},
      {"data_parallel_size", "dp_size"},
      {"ep_size", "ep_size"},
      {"expert_parallel_size", "ep_size"},
      {"mem_fraction_static", "mem_fraction_static"},
      {"gpu_memory_utilization", "gpu_memory_utilization"},
      {"cuda_graph_max_bs", "cuda_graph_max_bs"},
      {"cuda_graph_bs", "cuda_graph_bs"},
      {"disable_cuda_graph", "disable_cuda_graph"},
      {"disable_custom_all_reduce", "disable_custom_all_reduce"},
      {"enable_custom_all_reduce", "enable_custom_all_reduce"},
      {"kv_cache_dtype", "kv_cache_dtype"},
      {"context_length", "context_length"},
      {"max_model_len", "max_model_len"},
      {"max_num_seqs", "max_num_seqs"},
      {"max_num_batched_tokens", "max_num_batched_tokens"},
      {"speculative_algorithm", "speculative_algorithm"},
      {"quantization", "quantization"},
      {"dtype", "dtype"},
      {"enforce_eager", "enforce_eager"},
      {"chunked_prefill_size", "chunked_prefill_size"},
      {"max_running_requests", "max_running_requests"},
      {"attention_backend", "attention_backend"},
      {"max_total_tokens", "max_total_tokens"},
      {"enable_dp_attention", "enable_dp_attention"},
  };
  if (!args.is_object()) return;
  for (const auto& [from, to] : kKeys) {
    auto it = args.find(from);
    if (it == args.end() || it->is_null()) continue;
    if (!fields->contains(to)) (*fields)[to] = *it;
  }
}

}  // namespace tpt

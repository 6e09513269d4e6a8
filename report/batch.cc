// batch.cc: listing runs and the thread pool with a progress bar.
#include "report/batch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "parser/reader.h"

namespace tpt::report {

namespace fs = std::filesystem;

StatusOr<std::vector<RunInput>> ListRuns(const std::string& dir, std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    return NotFoundError("--runs " + dir + ": no such directory; give a directory with one subdirectory or log file per run");
  }
  // An archive of runs (a .zip of CI logs): each top-level folder or file is a run.
  if (auto archive = fs::is_directory(dir, ec) ? std::nullopt : ListArchive(dir)) {
    if (!archive->error.empty() && archive->members.empty()) return DataLossError("--runs " + archive->error);
    // "zip -r ci.zip ci/" wraps the runs in one folder: the runs are inside it.
    std::string base = archive->archive + "/";
    std::vector<RunInput> runs;
    for (;;) {
      runs.clear();
      bool all_in_folders = true;
      for (const std::string& m : archive->members) {  // sorted: one run's files are together
        const std::string rel = m.substr(base.size());
        const size_t slash = rel.find('/');
        all_in_folders = all_in_folders && slash != std::string::npos;
        const std::string top = rel.substr(0, slash);
        if (runs.empty() || runs.back().name != top) runs.push_back({top, base + top});
      }
      if (runs.size() != 1 || !all_in_folders) break;
      base = runs[0].path + "/";
    }
    if (runs.empty()) return NotFoundError("--runs " + dir + ": the archive holds no runs; put one folder or log file per run in it");
    // A file and a folder of one name ("a" and "a/rank0.log"): one path names
    // both, and reads the file; the folder's logs are said to be left out.
    std::set<std::string> files, folders;
    for (const std::string& m : archive->members) {
      const std::string rel = m.substr(base.size());
      const size_t slash = rel.find('/');
      (slash == std::string::npos ? files : folders).insert(rel.substr(0, slash));
    }
    for (const std::string& name : files) {
      if (folders.count(name) && skipped != nullptr) {
        skipped->push_back(name + ": the archive holds a file and a folder of this name; the run reads the file, the "
                                  "folder's logs were left out (unpack it and rename one)");
      }
    }
    return runs;
  }
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgumentError("--runs " + dir + ": not a directory; give a directory with one subdirectory or log file per run");
  }
  std::vector<RunInput> runs;
  fs::directory_iterator it(dir, ec);
  if (ec) return NotFoundError("--runs " + dir + ": cannot list it (" + ec.message() + ")");
  const fs::path root = fs::canonical(dir, ec);
  std::vector<std::pair<std::string, fs::path>> links;  // (name, where it points)
  std::vector<fs::path> real;                           // entries that are not links
  auto skip = [&](const std::string& why) {
    if (skipped != nullptr) skipped->push_back(why);
  };
  for (const fs::directory_entry& e : it) {
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code type_ec;
    if (e.is_symlink(type_ec)) {
      // A link is a run only when it leads to one: not into a loop, not back
      // to DIR or a folder above it (that would hold every run again).
      std::error_code link_ec;
      fs::path target = fs::canonical(e.path(), link_ec);
      if (link_ec) {
        skip(name + ": a symbolic link that does not resolve (" + link_ec.message() + "); left out");
        continue;
      }
      auto [end, _] = std::mismatch(target.begin(), target.end(), root.begin(), root.end());
      if (!root.empty() && end == target.end()) {
        skip(name + ": a symbolic link to " + target.string() + ", which holds --runs " + dir +
             " itself; left out (it would hold every run again)");
        continue;
      }
      links.emplace_back(name, target);
    } else {
      real.push_back(fs::canonical(e.path(), type_ec));
    }
    if (!e.is_directory(type_ec) && !e.is_regular_file(type_ec)) continue;
    runs.push_back({name, e.path().string()});
  }
  // A link to another entry of DIR is that run again.
  for (const auto& [name, target] : links) {
    if (std::find(real.begin(), real.end(), target) == real.end()) continue;
    skip(name + ": a symbolic link to " + target.filename().string() + ", a run already in --runs " + dir +
         "; left out (analysed once)");
    runs.erase(std::remove_if(runs.begin(), runs.end(), [&](const RunInput& r) { return r.name == name; }), runs.end());
  }
  std::sort(runs.begin(), runs.end(), [](const RunInput& a, const RunInput& b) { return a.name < b.name; });
  if (runs.empty()) {
    return NotFoundError("--runs " + dir + ": holds no runs; put one subdirectory or log file per run in it");
  }
  return runs;
}

namespace {

class ProgressBar {
 public:
  ProgressBar(FILE* out, size_t total, double after_s)
      : out_(out != nullptr && isatty(fileno(out)) ? out : nullptr),
        total_(total),
        after_s_(after_s),
        start_(std::chrono::steady_clock::now()) {}

  void Tick(size_t done) {
    if (out_ == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < after_s_ && done < total_) return;
    if (!drawn_ && done == total_ && elapsed < after_s_) return;  // short work: stay silent
    if (done < total_ && elapsed - last_draw_s_ < 0.1) return;     // at most 10 redraws a second
    last_draw_s_ = elapsed;
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * done / std::max<size_t>(1, total_));
    std::fprintf(out_, "\r[%.*s%*s] %zu/%zu runs %.1fs", filled, "##############################", kWidth - filled, "",
                 done, total_, elapsed);
    if (done == total_) std::fputc('\n', out_);
    std::fflush(out_);
    drawn_ = true;
  }

 private:
  FILE* out_;
  size_t total_;
  double after_s_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  bool drawn_ = false;
  double last_draw_s_ = -1;
};

}  // namespace

std::vector<RunResult> AnalyzeInParallel(const std::vector<RunInput>& inputs, const BatchOptions& options,
                                         const std::function<RunResult(const RunInput&)>& analyze) {
  std::vector<RunResult> results(inputs.size());
  size_t jobs = options.jobs > 0 ? static_cast<size_t>(options.jobs) : std::thread::hardware_concurrency();
  jobs = std::clamp<size_t>(jobs, 1, std::max<size_t>(1, inputs.size()));
  std::atomic<size_t> next{0}, done{0};
  ProgressBar bar(options.progress, inputs.size(), options.progress_after_s);
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < inputs.size();) {
      try {
        results[i] = analyze(inputs[i]);
      } catch (const std::exception& e) {
        results[i] = RunResult{};
        results[i].error = inputs[i].path + ": analysis failed (" + e.what() + "); this is a tptriage bug, please report it";
      }
      if (results[i].name.empty()) results[i].name = inputs[i].name;
      if (!results[i].error.empty()) results[i].exit_code = kExitUsage;
      bar.Tick(done.fetch_add(1) + 1);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace tpt::report

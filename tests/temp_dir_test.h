// temp_dir_test.h: a test fixture with a fresh folder of its own, removed
// after the test, and helpers to write and read files in it.
//
//   class Hostile : public tpt::test::TempDirTest {};
//   TEST_F(Hostile, X) { std::string p = Write("a/b.log", "text"); ... Read(p) ... }
//
// RemoveAtExit(dir): a folder a test file shares between its tests, removed when
// the process's tests end (ctest runs each test in a process of its own).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace tpt::test {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tpt-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string Write(const std::string& name, const std::string& data) const {
    std::filesystem::create_directories(std::filesystem::path(Path(name)).parent_path());
    std::ofstream(Path(name), std::ios::binary) << data;
    return Path(name);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

class RemoveDirAtExit : public ::testing::Environment {
 public:
  explicit RemoveDirAtExit(std::filesystem::path dir) : dir_(std::move(dir)) {}
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::filesystem::path dir_;
};

inline ::testing::Environment* RemoveAtExit(const std::filesystem::path& dir) {
  return ::testing::AddGlobalTestEnvironment(new RemoveDirAtExit(dir));
}

}  // namespace tpt::test

//===- AtomicFileTest.cpp - Nothing half-written, nothing left behind -----===//
//
// Issue #16: killing tipack left a temporary file of up to 2.5 GB beside the
// output that nothing removed.
//
//===----------------------------------------------------------------------===//
#include "ti/Support/AtomicFile.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

class AtomicFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ti-atomic-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir;
};

TEST_F(AtomicFileTest, ASignalWhileWritingRemovesTheTemporaryFile) {
  for (int signal : {SIGTERM, SIGINT}) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ti::AtomicFileWriter writer;
      if (!writer.open((dir / "out.bin").string()).empty() || !writer.write("half", 4).empty()) ::_exit(3);
      std::raise(signal);
      ::_exit(4); // not reached: the handler ends the process with the signal
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), signal);
    EXPECT_EQ(names(), std::vector<std::string>{}) << "signal " << signal;
  }
}

TEST_F(AtomicFileTest, TheNextWriterRemovesTheTemporariesOfDeadWriters) {
  // A pid that no process has (pids stay below 2^22 on Linux).
  std::string dead = "out.bin.tmp.4194304.abcdef";
  std::string alive = "out.bin.tmp." + std::to_string(::getpid()) + ".ghijkl";
  std::string other = "out.bin.tmp.notapid", unrelated = "other.bin.tmp.4194304.abcdef";
  for (const std::string &name : {dead, alive, other, unrelated}) std::ofstream(dir / name) << "x";
  ASSERT_EQ(ti::writeFileAtomically((dir / "out.bin").string(), "whole"), "");
  std::vector<std::string> expected = {"other.bin.tmp.4194304.abcdef", "out.bin", alive, other};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names(), expected);

  ti::AtomicFileWriter writer;
  std::ofstream(dir / dead) << "x";
  ASSERT_EQ(writer.open((dir / "out.bin").string()), "");
  EXPECT_FALSE(fs::exists(dir / dead));
}

} // namespace

#include "common/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

namespace kubex::common {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kubex-file-io-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

unsigned file_mode(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST_F(FileIoTest, WritesAndReadsBackBinaryContentWithExactMode) {
  std::string data("key\0material\n\xff", 14);
  ASSERT_TRUE(write_file_atomic(path("tls.key"), data, 0600));
  auto back = read_file(path("tls.key"));
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(*back, data);
  EXPECT_EQ(file_mode(path("tls.key")), 0600u);

  ASSERT_TRUE(write_file_atomic(path("tls.crt"), "cert", 0644));
  EXPECT_EQ(file_mode(path("tls.crt")), 0644u);
}

TEST_F(FileIoTest, ReplacesExistingFileAndLeavesNoTemporaries) {
  ASSERT_TRUE(write_file_atomic(path("config"), std::string(100000, 'a'), 0644));
  ASSERT_TRUE(write_file_atomic(path("config"), "short", 0600));
  EXPECT_EQ(*read_file(path("config")), "short");
  EXPECT_EQ(file_mode(path("config")), 0600u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "config");
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(FileIoTest, EmptyContentAndRelativeDirectories) {
  ASSERT_TRUE(write_file_atomic(path("empty"), "", 0644));
  EXPECT_EQ(*read_file(path("empty")), "");
}

TEST_F(FileIoTest, ErrorsNameThePath) {
  auto missing = read_file(path("nope"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(path("nope")), std::string::npos) << missing.error().str();
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos) << missing.error().str();

  auto no_dir = write_file_atomic(path("missing-dir/file"), "x", 0644);
  ASSERT_FALSE(no_dir);
  EXPECT_NE(no_dir.error().message.find("missing-dir/file"), std::string::npos) << no_dir.error().str();

  EXPECT_FALSE(read_file(dir_.string()));  // a directory
  EXPECT_FALSE(write_file_atomic(dir_.string() + "/", "x", 0644));

  // Renaming onto a directory fails and leaves no temporary behind.
  fs::create_directory(dir_ / "sub");
  EXPECT_FALSE(write_file_atomic(path("sub"), "x", 0644));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace kubex::common

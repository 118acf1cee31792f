// Report outputs on a shared machine: every rule of OutputPlan, from the checks before a run to
// the all-or-none commit and a killed commit.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include <fmt/format.h>

#include "runner/core/diagnostics.hpp"
#include "runner/execute/backend.hpp"
#include "runner/report/output_file.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;
namespace fs = std::filesystem;

namespace {

// A fresh folder for one test, removed after it.
struct Scratch {
  Scratch() {
    static int count = 0;
    dir = fs::temp_directory_path() / fmt::format("streamlab_outputs_{}_{}", ::getpid(), count++);
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  fs::path dir;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The names in `dir`, sorted: to see that nothing but the targets is left there.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The CommandLineError a plan throws, or "".
std::string problems_of(std::vector<OutputRequest> requests,
                        const std::vector<InputFile>& inputs = {}) {
  try {
    OutputPlan plan(std::move(requests), inputs);
    return "";
  } catch (const CommandLineError& e) {
    return e.what();
  }
}

// The names of the files created in `dir` while `action` ran (inotify), to see the temporaries
// that a commit creates and removes.
std::vector<std::string> created_in(const fs::path& dir, const std::function<void()>& action) {
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::inotify_add_watch(fd, dir.c_str(), IN_CREATE) >= 0);
  action();
  std::vector<std::string> names;
  alignas(inotify_event) char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    for (char* p = buffer; p < buffer + n;) {
      auto* event = reinterpret_cast<inotify_event*>(p);
      if (event->len > 0) names.emplace_back(event->name);
      p += sizeof(inotify_event) + event->len;
    }
  }
  ::close(fd);
  return names;
}

}  // namespace

TEST_CASE(
    "outputs: a report is written whole, replaces the old one, and leaves nothing beside it") {
  Scratch s;
  write_text(s / "r.json", "old");
  OutputPlan plan({{"--json", s / "r.json"}, {"--csv", s / "r.csv"}}, {});
  CHECK_FALSE(plan.writes_stdout());
  plan.commit({"new json", "new csv"});
  CHECK(read_text(s / "r.json") == "new json");
  CHECK(read_text(s / "r.csv") == "new csv");
  CHECK(listing(s.dir) == std::vector<std::string>{"r.csv", "r.json"});
  // A relative spelling resolves to the same folder.
  auto relative = fs::relative(s.dir / "r.json", fs::current_path()).string();
  OutputPlan({{"--json", relative}}, {}).commit({"again"});
  CHECK(read_text(s / "r.json") == "again");
}

TEST_CASE("outputs: a new report gets the mode of a new file, 0666 less the umask") {
  Scratch s;
  mode_t old = ::umask(027);
  OutputPlan({{"--json", s / "r.json"}}, {}).commit({"x"});
  ::umask(old);
  struct stat st;
  REQUIRE(::stat((s / "r.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("outputs: a symlink at the target is refused and its destination left alone") {
  Scratch s;
  write_text(s / "victim", "precious");
  fs::create_symlink(s / "victim", s / "r.json");
  fs::create_symlink(s / "nowhere", s / "dangling.json");
  std::string why = problems_of({{"--json", s / "r.json"}});
  CHECK(why ==
        fmt::format(
            "--json {}: not a regular file (a symbolic link); streamlab writes reports only to "
            "regular files or - (stdout)",
            s / "r.json"));
  CHECK(problems_of({{"--json", s / "dangling.json"}}).find("(a symbolic link)") !=
        std::string::npos);
  CHECK(read_text(s / "victim") == "precious");
  CHECK_FALSE(fs::exists(s / "nowhere"));
}

TEST_CASE("outputs: a FIFO is refused without opening it, so nothing blocks") {
  Scratch s;
  REQUIRE(::mkfifo((s / "r.json").c_str(), 0600) == 0);
  ::alarm(10);  // opening the FIFO would block forever: end the test instead
  std::string why = problems_of({{"--json", s / "r.json"}});
  ::alarm(0);
  CHECK(why.find("not a regular file (a FIFO)") != std::string::npos);
}

TEST_CASE("outputs: a device is refused") {
  CHECK(problems_of({{"--csv", "/dev/null"}}) ==
        "--csv /dev/null: not a regular file (a character device); streamlab writes reports only "
        "to regular "
        "files or - (stdout)");
}

TEST_CASE("outputs: a directory is refused, and so is a path that names a folder") {
  Scratch s;
  fs::create_directories(s.dir / "sub");
  CHECK(problems_of({{"--html", s / "sub"}}).find("not a regular file (a folder)") !=
        std::string::npos);
  CHECK(problems_of({{"--html", s / "sub/"}}).find("names a folder; give a file name") !=
        std::string::npos);
  CHECK(problems_of({{"--html", s / "sub/.."}}).find("names a folder; give a file name") !=
        std::string::npos);
}

TEST_CASE("outputs: a read-only file is refused, for root too") {
  Scratch s;
  write_text(s / "r.json", "theirs");
  fs::permissions(s / "r.json",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  CHECK(problems_of({{"--json", s / "r.json"}}) ==
        fmt::format("--json {}: a read-only file; streamlab replaces only files you may write",
                    s / "r.json"));
  CHECK(read_text(s / "r.json") == "theirs");
}

TEST_CASE("outputs: a missing folder is refused before the run") {
  Scratch s;
  CHECK(problems_of({{"--json", s / "out/r.json"}}) ==
        fmt::format("--json {}: its folder '{}' does not exist", s / "out/r.json", s / "out"));
  write_text(s / "file", "");
  CHECK(problems_of({{"--json", s / "file/r.json"}}).find("' is not a directory") !=
        std::string::npos);
}

TEST_CASE("outputs: a folder we may not write to is refused") {
  Scratch s;
  fs::create_directories(s.dir / "ro");
  fs::permissions(s.dir / "ro", fs::perms::owner_read | fs::perms::owner_exec |
                                    fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  std::string expected =
      fmt::format("--json {}: its folder '{}' is not writable by us (Permission denied)",
                  s / "ro/r.json", s / "ro");
  if (::geteuid() != 0) {
    CHECK(problems_of({{"--json", s / "ro/r.json"}}) == expected);
  } else {
    // Root writes anywhere: ask as the user nobody, in a child process.
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      bool ok = ::setgid(65534) == 0 && ::setuid(65534) == 0 &&
                problems_of({{"--json", s / "ro/r.json"}}) == expected;
      ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  fs::permissions(s.dir / "ro", fs::perms::owner_all);
}

TEST_CASE("outputs: one path named twice is refused, however it is spelled") {
  Scratch s;
  fs::create_directories(s.dir / "x");
  CHECK(problems_of({{"--json", s / "a.json"}, {"--html", s / "a.json"}}) ==
        fmt::format("--html {}: also the path of --json", s / "a.json"));
  CHECK(problems_of({{"--json", s / "a.json"}, {"--csv", s / "./x/../a.json"}}) ==
        fmt::format("--csv {}: also the path of --json", s / "./x/../a.json"));
  auto relative = fs::relative(s.dir / "a.json", fs::current_path()).string();
  CHECK(problems_of({{"--json", s / "a.json"}, {"--trace", relative}})
            .find("also the path of --json") != std::string::npos);
  // A hard link is the same file under another name.
  write_text(s / "a.json", "");
  fs::create_hard_link(s / "a.json", s / "b.json");
  CHECK(problems_of({{"--json", s / "a.json"}, {"--csv", s / "b.json"}})
            .find("also the path of --json") != std::string::npos);
}

TEST_CASE("outputs: stdout at most once") {
  CHECK(problems_of({{"--json", "-"}, {"--csv", "-"}}) ==
        "--csv -: also the output of --json; only one report can go to - (stdout)");
  CHECK(OutputPlan({{"--json", "-"}}, {}).writes_stdout());
}

TEST_CASE("outputs: no report replaces the experiment file") {
  Scratch s;
  write_text(s / "exp.yaml", "name: e\n");
  fs::create_hard_link(s / "exp.yaml", s / "linked.yaml");
  fs::create_symlink(s / "exp.yaml", s / "alias.yaml");
  std::vector<InputFile> inputs = {{"the experiment file", s / "exp.yaml"}};
  CHECK(problems_of({{"--json", s / "exp.yaml"}}, inputs) ==
        fmt::format(
            "--json {}: that is the experiment file; a report never replaces a file the run reads",
            s / "exp.yaml"));
  CHECK(problems_of({{"--json", s / "linked.yaml"}}, inputs).find("that is the experiment file") !=
        std::string::npos);
  // Through a symlink to it, the input is the file the link names.
  CHECK(problems_of({{"--json", s / "exp.yaml"}}, {{"the experiment file", s / "alias.yaml"}})
            .find("that is the experiment file") != std::string::npos);
  CHECK(read_text(s / "exp.yaml") == "name: e\n");
}

TEST_CASE("outputs: every problem is reported, one line each") {
  Scratch s;
  std::string why = problems_of({{"--json", s / "missing/r.json"},
                                 {"--csv", "/dev/null"},
                                 {"--trace", "-"},
                                 {"--html", "-"}});
  CHECK(std::count(why.begin(), why.end(), '\n') == 2);
  CHECK(why.find("does not exist\nstreamlab: error: --csv /dev/null: not a regular file") !=
        std::string::npos);
  CHECK(why.find("\nstreamlab: error: --html -: also the output of --trace") != std::string::npos);
}

TEST_CASE("outputs: all or none: a failure on the second report leaves the first untouched") {
  Scratch a, b;
  write_text(a / "r.json", "old");
  OutputPlan plan({{"--json", a / "r.json"}, {"--csv", b / "r.csv"}}, {});
  fs::remove_all(b.dir);  // the second folder disappears during the run
  std::string expected =
      fmt::format("--csv {}: cannot create a temporary in its folder", b / "r.csv");
  CHECK_THROWS_WITH_AS(plan.commit({"new", "new"}), doctest::Contains(expected.c_str()), RunError);
  CHECK(read_text(a / "r.json") == "old");
  CHECK(listing(a.dir) == std::vector<std::string>{"r.json"});
  fs::create_directories(b.dir);
}

TEST_CASE("outputs: a target that became a FIFO after the checks is not replaced, nor any other") {
  Scratch s;
  write_text(s / "r.json", "old");
  OutputPlan plan({{"--json", s / "r.json"}, {"--csv", s / "r.csv"}}, {});
  REQUIRE(::mkfifo((s / "r.csv").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(
      plan.commit({"new", "new"}),
      doctest::Contains(
          "r.csv: it became a FIFO after streamlab checked it; no report was written"),
      RunError);
  CHECK(read_text(s / "r.json") == "old");
  CHECK(listing(s.dir) == std::vector<std::string>{"r.csv", "r.json"});
}

TEST_CASE("outputs: temporaries have unpredictable names beside their target") {
  Scratch s;
  OutputPlan plan({{"--json", s / "r.json"}}, {});
  auto first = created_in(s.dir, [&] { plan.commit({"1"}); });
  auto second = created_in(s.dir, [&] {
    OutputPlan({{"--json", s / "r.json"}}, {}).commit({"2"});
  });
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  std::regex pattern(R"(\.r\.json\.[A-Za-z0-9]{6})");
  CHECK(std::regex_match(first[0], pattern));
  CHECK(std::regex_match(second[0], pattern));
  CHECK(first[0] != second[0]);
  CHECK(first[0] != fmt::format("r.json.tmp-{}", ::getpid()));
  CHECK(listing(s.dir) == std::vector<std::string>{"r.json"});
}

TEST_CASE("outputs: a commit killed by SIGTERM leaves no temporary, and the signal still ends it") {
  Scratch s;
  OutputPlan plan({{"--json", s / "r.json"}}, {});
  std::vector<std::string> texts = {
      std::string(size_t(256) << 20, 'x')};  // long enough to be caught writing
  int watch = ::inotify_init1(IN_CLOEXEC);
  REQUIRE(watch >= 0);
  REQUIRE(::inotify_add_watch(watch, s.dir.c_str(), IN_CREATE) >= 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGTERM, SIG_DFL);  // not doctest's handler, which would report a crash
    plan.commit(texts);
    ::_exit(0);
  }
  pollfd p{watch, POLLIN, 0};
  bool created = ::poll(&p, 1, 10000) == 1;
  ::kill(child, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  ::close(watch);
  CHECK(created);
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(listing(s.dir).empty());
}

TEST_CASE("outputs: the previous signal handlers are back after a commit") {
  Scratch s;
  auto old_hup = std::signal(SIGHUP, SIG_IGN);  // as under nohup
  struct sigaction before {
  }, now{};
  ::sigaction(SIGTERM, nullptr, &before);  // doctest's own, or the default
  OutputPlan({{"--json", s / "r.json"}}, {}).commit({"x"});
  ::sigaction(SIGHUP, nullptr, &now);
  CHECK((now.sa_handler == SIG_IGN));
  ::sigaction(SIGTERM, nullptr, &now);
  CHECK((now.sa_handler == before.sa_handler));
  std::signal(SIGHUP, old_hup);
}

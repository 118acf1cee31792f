// The files an experiment names (docs/safety.md: graders run experiments students wrote): what
// safe_file reads and refuses, what a user kernel may include, and where NVRTC's errors in those
// files are shown. Cases that need a symlink, a FIFO or a folder layout make them in a temporary
// folder; those that compile skip (with a message) where NVRTC is not installed.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "ops/user_kernel.hpp"
#include "runner/core/bounded_child.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/safe_file.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system's temporary one, removed afterwards.
class TempFolder {
 public:
  TempFolder() {
    static int count = 0;
    path_ =
        fs::temp_directory_path() / fmt::format("streamlab_kernel_files_{}_{}", getpid(), count++);
    fs::remove_all(path_);
    fs::create_directories(path_);
    real_ = fs::canonical(path_).string();
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  std::string file(const std::string& rel) const { return (path_ / rel).string(); }
  const std::string& real() const { return real_; }  // the folder's realpath, as messages name it
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel, std::ios::binary) << text;
  }
  void link(const std::string& rel, const std::string& target) const {
    fs::create_directories((path_ / rel).parent_path());
    fs::create_symlink(target, path_ / rel);
  }
  void fifo(const std::string& rel) const { REQUIRE(mkfifo(file(rel).c_str(), 0600) == 0); }

 private:
  fs::path path_;
  std::string real_;
};

// An experiment with one kernel `k(float* x)` whose source is `source` (a YAML block) or `file:`.
std::string experiment(const std::string& source_or_file, bool is_file = false) {
  std::string kernel;
  if (is_file) {
    kernel = "    file: " + source_or_file + "\n";
  } else {
    kernel = "    source: |\n";
    size_t at = 0;
    while (at <= source_or_file.size()) {
      size_t end = std::min(source_or_file.find('\n', at), source_or_file.size());
      kernel += "      " + source_or_file.substr(at, end - at) + "\n";
      at = end + 1;
    }
  }
  return "name: u\nstreams: {s1: {}}\nkernels:\n  k:\n" + kernel +
         "    params: [x: inout float32]\nbuffers:\n  d: {type: float32, count: 32, memory: "
         "device}\nops:\n"
         "  - launch: {kernel: k, grid: [1], block: [32], stream: s1, args: {x: d}}\n";
}

const char* kKernel = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = FACTOR; }";

// The error message of loading `path`, "" when it loads.
std::string load_errors(const std::string& path) {
  try {
    load_file(path);
    return "";
  } catch (const InvalidExperiment& e) {
    return e.what();
  }
}

// The diagnostics of an inline kernel's source, given in a YAML double-quoted scalar so that any
// byte can be written.
std::string source_diagnostics(const std::string& source) {
  std::string quoted;
  for (char c : source) {
    if (c == '\\' || c == '"') quoted += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      quoted += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      quoted += c;
  }
  return diagnostics_of("name: u\nkernels:\n  k:\n    source: \"" + quoted +
                        "\"\n    params: []\nops: []\n");
}

}  // namespace

TEST_CASE("safe files: a name in the experiment's folder is read, `..` that stays inside too") {
  TempFolder t;
  t.write("exp.yaml", "");
  t.write("kernels/a.cu", "A");
  t.write("b.h", "B");
  t.link("alias.h", "b.h");
  std::string exp = t.file("exp.yaml");
  CHECK(read_in_experiment_folder(exp, "kernels/a.cu").text == "A");
  CHECK(read_in_experiment_folder(exp, "kernels/../b.h").text == "B");
  CHECK(read_in_experiment_folder(exp, "../b.h", "kernels").text ==
        "B");                                                    // relative to a header's folder
  CHECK(read_in_experiment_folder(exp, "alias.h").text == "B");  // a link inside the folder
  // The experiment's folder reached through a link: the files are still in it.
  t.link("via", t.real() + "/kernels");
  t.write("kernels/exp.yaml", "");
  CHECK(read_in_experiment_folder(t.file("via/exp.yaml"), "a.cu").text == "A");

  CHECK(path_in_folder("kernels", "../common/x.h") == "common/x.h");
  CHECK(path_in_folder("", "./a//b/./c") == "a/b/c");
  CHECK(path_in_folder("a/b", "../../c") == "c");
  CHECK(path_in_folder("a", "../../c") == std::nullopt);
  CHECK(path_in_folder("", "/etc/passwd") == std::nullopt);
  CHECK(folder_of("exp.yaml") == ".");
  CHECK(folder_of("/e.yaml") == "/");
  CHECK(folder_of("a/b/e.yaml") == "a/b");
}

TEST_CASE("safe files: absolute paths, `..` out of the folder and links out of it are refused") {
  TempFolder t;
  t.write("exp.yaml", "");
  t.write("outside.h", "secret");
  t.write("lab/exp.yaml", "");
  t.link("lab/link.h", "/etc/passwd");
  t.link("lab/etc", "/etc");
  t.link("lab/up.h", "../outside.h");
  std::string exp = t.file("lab/exp.yaml");
  CHECK(read_in_experiment_folder(exp, "/etc/passwd").refusal ==
        "is an absolute path; name a file in the experiment's folder, relative to it (absolute "
        "paths are not allowed)");
  CHECK(read_in_experiment_folder(exp, "../outside.h").refusal ==
        fmt::format("is outside the experiment's folder '{}' (files an experiment names must lie "
                    "in its folder or "
                    "below it)",
                    t.file("lab")));
  std::string out = "outside the experiment's folder '" + t.real() +
                    "/lab' (files an experiment names must lie in "
                    "its folder or below it, symbolic links followed)";
  CHECK(read_in_experiment_folder(exp, "link.h").refusal == "leads to '/etc/passwd', " + out);
  CHECK(read_in_experiment_folder(exp, "etc/passwd").refusal == "leads to '/etc/passwd', " + out);
  CHECK(read_in_experiment_folder(exp, "up.h").refusal ==
        "leads to '" + t.real() + "/outside.h', " + out);
  CHECK(read_in_experiment_folder(exp, "up.h").text.empty());
  CHECK(read_in_experiment_folder(exp, "").refusal == "names no file");
  CHECK(read_in_experiment_folder(exp, std::string("a\0b", 3)).refusal ==
        "has a control character in its name");
  FileRead missing = read_in_experiment_folder(exp, "nope.cu");
  CHECK(missing.refusal == "cannot be read: No such file or directory");
  CHECK(missing.error == ENOENT);
}

TEST_CASE(
    "safe files: a FIFO, a device, a folder or a file over the limit is refused, without "
    "blocking") {
  TempFolder t;
  t.write("exp.yaml", "");
  t.fifo("pipe.cu");
  t.write("kernels/a.cu", "");
  t.link("null.cu", "/dev/null");
  t.write("limit.cu", std::string(static_cast<size_t>(limits::kSourceFileBytes), 'x'));
  t.write("over.cu", std::string(static_cast<size_t>(limits::kSourceFileBytes) + 1, 'x'));
  std::string exp = t.file("exp.yaml");
  auto start = std::chrono::steady_clock::now();
  CHECK(read_in_experiment_folder(exp, "pipe.cu").refusal == "is not a regular file (a FIFO)");
  CHECK(read_experiment_file(t.file("pipe.cu")).refusal == "is not a regular file (a FIFO)");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(read_in_experiment_folder(exp, "kernels").refusal == "is not a regular file (a folder)");
  CHECK(read_in_experiment_folder(exp, "null.cu")
            .refusal.starts_with("leads to '/dev/null', outside"));
  CHECK(read_experiment_file("/dev/null").refusal == "is not a regular file (a character device)");
  CHECK(read_experiment_file(t.file("kernels")).refusal == "is not a regular file (a folder)");
  CHECK(read_in_experiment_folder(exp, "limit.cu").text.size() ==
        static_cast<size_t>(limits::kSourceFileBytes));
  CHECK(read_in_experiment_folder(exp, "over.cu").refusal == "is larger than 1 MiB");
  fs::resize_file(t.file("exp.yaml"),
                  limits::kExperimentFileBytes + 1);  // sparse: no 16 MiB written
  CHECK(read_experiment_file(t.file("exp.yaml")).refusal == "is larger than 16 MiB");
  CHECK(read_experiment_file(t.file("nope.yaml")).error == ENOENT);
}

TEST_CASE(
    "safe files: the experiment file must be a regular file, and load says which problem it has") {
  TempFolder t;
  t.fifo("exp.yaml");
  CHECK(load_errors(t.file("exp.yaml")) == t.file("exp.yaml") +
                                               ": error: the experiment file is not a regular file "
                                               "(a FIFO)\n");
  CHECK(load_errors(t.real()) ==
        t.real() + ": error: the experiment file is not a regular file (a folder)\n");
}

TEST_CASE(
    "kernel files: a kernel's file may lie in the experiment's folder or below, not elsewhere") {
  TempFolder t;
  t.write("lab/kernels/k.cu", "#define FACTOR 2.0f\n" + std::string(kKernel) + "\n");
  t.write("lab/ok.yaml", experiment("kernels/k.cu", true));
  t.write("lab/abs.yaml", experiment(t.file("lab/kernels/k.cu"), true));
  t.write("lab/up.yaml", experiment("../lab/kernels/k.cu", true));
  t.link("lab/link.cu", "/etc/passwd");
  t.write("lab/link.yaml", experiment("link.cu", true));
  t.fifo("lab/pipe.cu");
  t.write("lab/pipe.yaml", experiment("pipe.cu", true));
  CHECK(load_errors(t.file("lab/ok.yaml")) == "");
  CHECK(load_errors(t.file("lab/abs.yaml")).find("is an absolute path") != std::string::npos);
  CHECK(load_errors(t.file("lab/up.yaml")) ==
        fmt::format("{}:5:11: error: kernel 'k': file '../lab/kernels/k.cu' is outside the "
                    "experiment's folder '{}' "
                    "(files an experiment names must lie in its folder or below it)\n"
                    "    5 |     file: ../lab/kernels/k.cu\n"
                    "      |           ^\n",
                    t.file("lab/up.yaml"), t.file("lab")));
  CHECK(load_errors(t.file("lab/link.yaml"))
            .find("file 'link.cu' leads to '/etc/passwd', outside the experiment's "
                  "folder") != std::string::npos);
  CHECK(
      load_errors(t.file("lab/pipe.yaml")).find("file 'pipe.cu' is not a regular file (a FIFO)") !=
      std::string::npos);
}

TEST_CASE(
    "kernel files: includes are read from the experiment's folder, relative to the including "
    "file") {
  TempFolder t;
  t.write("inc/a.h", "#pragma once\n#include \"b.h\"\n");  // inc/b.h, beside a.h
  t.write("inc/b.h", "#define FACTOR 2.0f\n");
  t.write("kernels/k.cu", "#include \"../inc/a.h\"\n" + std::string(kKernel) + "\n");
  t.write("inline.yaml", experiment("#include \"inc/a.h\"\n#include \"./inc/../inc/a.h\"\n" +
                                    std::string(kKernel)));
  t.write("file.yaml", experiment("kernels/k.cu", true));
  for (const char* name : {"inline.yaml", "file.yaml"}) {
    INFO(name);
    REQUIRE(load_errors(t.file(name)) == "");
    try {
      auto images = compile_user_kernels(load_file(t.file(name)), "compute_75");
      REQUIRE(images.size() == 1);
      CHECK(images[0].find(".entry k") != std::string::npos);
    } catch (const RunError& err) {
      MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
    }
  }
}

TEST_CASE(
    "kernel files: a kernel in a file of its own compiles to a cubin, as a run on an H100 or H200 "
    "asks") {
  Experiment e = load_file((source_dir() / "tests/data/user_kernel_file.yaml").string());
  try {
    auto images = compile_user_kernels(e, "sm_90");
    REQUIRE(images.size() == 1);
    CHECK(
        images[0].starts_with("\x7f"
                              "ELF"));
  } catch (const RunError& err) {
    MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
  }
}

TEST_CASE(
    "kernel files: a header that leads out of the folder is refused at load, at its line in the "
    "file") {
  TempFolder t;
  t.link("kernels/secret.h", "/etc/passwd");
  t.write("kernels/k.cu", "// a kernel in a file of its own\n#include \"secret.h\"\n" +
                              std::string(kKernel) + "\n");
  t.write("exp.yaml", experiment("kernels/k.cu", true));
  CHECK(
      load_errors(t.file("exp.yaml")) ==
      fmt::format(
          "{}:2:10: error: kernel 'k': included file 'secret.h' leads to '/etc/passwd', outside "
          "the "
          "experiment's folder '{}' (files an experiment names must lie in its folder or below it, "
          "symbolic links followed)\n"
          "    2 | #include \"secret.h\"\n"
          "      |          ^\n",
          t.file("kernels/k.cu"), t.real()));
  // In a header: the header's line, and the header's echo.
  t.write("inc/a.h", "#pragma once\n\n#include \"../kernels/secret.h\"\n");
  t.write("nested.yaml", experiment("#include \"inc/a.h\"\n" + std::string(kKernel)));
  CHECK(load_errors(t.file("nested.yaml"))
            .starts_with(t.file("inc/a.h") +
                         ":3:10: error: kernel 'k': included file '../kernels/secret.h' leads to "
                         "'/etc/passwd'"));
  CHECK(load_errors(t.file("nested.yaml")).find("    3 | #include \"../kernels/secret.h\"\n") !=
        std::string::npos);
  t.fifo("inc/pipe.h");
  t.write("pipe.yaml", experiment("#include \"inc/pipe.h\"\n" + std::string(kKernel)));
  CHECK(load_errors(t.file("pipe.yaml"))
            .find("included file 'inc/pipe.h' is not a regular file (a FIFO)") !=
        std::string::npos);
}

TEST_CASE(
    "kernel files: at most limits::kIncludedFiles headers, each of at most kSourceFileBytes") {
  TempFolder t;
  std::string all;
  for (int i = 0; i <= limits::kIncludedFiles; ++i) {
    t.write(fmt::format("h/{}.h", i), "");
    all += fmt::format("#include \"h/{}.h\"\n", i);
  }
  t.write("many.yaml", experiment(all + kKernel));
  std::string one_more = fmt::format(
      "kernel 'k': included file 'h/{0}.h' is one more than the {0} files a kernel "
      "may include",
      limits::kIncludedFiles);
  CHECK(load_errors(t.file("many.yaml")).find(one_more) != std::string::npos);
  t.write("big.h", std::string(static_cast<size_t>(limits::kSourceFileBytes) + 1, ' '));
  t.write("big.yaml", experiment("#include \"big.h\"\n" + std::string(kKernel)));
  CHECK(load_errors(t.file("big.yaml")).find("included file 'big.h' is larger than 1 MiB") !=
        std::string::npos);
  // A file that repeats a refused include: 20 diagnostics, then a count of the rest.
  std::string repeated;
  for (int i = 0; i < 1000; ++i) repeated += "#include \"big.h\"\n";
  t.write("repeated.yaml", experiment(repeated + kKernel));
  std::string errors = load_errors(t.file("repeated.yaml"));
  size_t count = 0;
  for (size_t at = errors.find(": error: "); at != std::string::npos;
       at = errors.find(": error: ", at + 1))
    ++count;
  CHECK(count == 21);
  CHECK(errors.find("kernel 'k': 980 more problems in this file, not shown") != std::string::npos);
}

TEST_CASE("kernel files: the scanner reads a source as the preprocessor does") {
  auto says = [](const std::string& source, const std::string& what) {
    std::string d = source_diagnostics(source);
    INFO(d);
    return d.find(what) != std::string::npos;
  };
  const std::string absolute = "included file '/x' is an absolute path";
  CHECK(says("#inc\\\nlude \"/x\"", absolute));         // lines joined
  CHECK(says("%:include \"/x\"", absolute));            // a digraph of #
  CHECK(says("/* a\n*/ # include \"/x\"", absolute));   // after a comment that spans lines
  CHECK(says("# /* a\n */ include \"/x\"", absolute));  // a comment inside the directive
  CHECK(says("char c = 'a /* ;\n#include \"/x\"\n*/", absolute));  // an unterminated literal ends
  CHECK(says("const char* s = \"a /* ;\n#include \"/x\"\n*/",
             absolute));                                    // with its line, as in NVRTC
  CHECK(says("LR\"d(\n)d\" \n#include \"/x\"", absolute));  // after a raw string
  // Bytes an experiment file may not hold (load refuses them in its YAML) reach the scanner from a
  // kernel file.
  auto file_says = [](const std::string& source, const std::string& what) {
    TempFolder t;
    t.write("k.cu", source);
    t.write("exp.yaml", experiment("k.cu", true));
    std::string d = load_errors(t.file("exp.yaml"));
    INFO(d);
    return d.find(what) != std::string::npos;
  };
  CHECK(file_says("\xef\xbb\xbf#include \"/x\"", absolute));  // bytes outside ASCII: not a token
  CHECK(says("int \xc3\xa9__has_include;", "'__has_include' is not allowed"));
  CHECK(says("x;\r#include \"/x\"",
             "a control character (0x0d) in the source"));  // a lone carriage return
  CHECK(file_says(std::string("x;\0y", 4), "a control character (0x00) in the source"));
  CHECK(says("/* no end", "this /* comment has no end"));
  CHECK(says("R\"12345678901234567(x)12345678901234567\"",
             "a raw string's delimiter must be at most 16"));
  CHECK(says("#include \"a.h", "the file name needs its closing \" on the same line"));
  CHECK(says("#if 0\n#include <cstdio>\n#endif",
             "#include <cstdio>: NVRTC provides no headers"));  // no #if evaluated
  CHECK(source_diagnostics("const char* s = R\"x(\n#include \"/x\"\n)x\";") ==
        "");  // inside a raw string
  CHECK(source_diagnostics("const char* s = u8R\"(\n# include <x>\n)\";") == "");
  CHECK(source_diagnostics("const char* s = R\"x(a)\\\nx\";\n#include \"/x\"\n)x\";") ==
        "");  // no joined
              // lines in a raw string
  CHECK(source_diagnostics("int a = 1'0; /* '\n#include \"/x\"\n*/") ==
        "");  // a digit separator, a comment
  CHECK(source_diagnostics("// #include \"/x\" \\\n#include \"/y\"") ==
        "");  // a // comment joined to the next line
  CHECK(source_diagnostics(
            "#define S(x) #x\n#define CAT(a, b) a##b\n#pragma once\n#\n#line 3\n# 4 \"f\"\n"
            "#error it's") == "");
  CHECK(source_diagnostics("int has_include, __hasx, __h2, _x, __has_includes;") ==
        "");  // no prefix of __has_include
}

TEST_CASE(
    "kernel files: NVRTC's errors in a header name it and its line; a #line naming another file "
    "shows no line") {
  TempFolder t;
  t.write("inc/a.h", "#pragma once\n__device__ float factor() { return nope; }\n");
  t.write("exp.yaml",
          experiment("#include \"inc/a.h\"\n#define FACTOR factor()\n" + std::string(kKernel)));
  t.write("line.yaml",
          experiment("#line 1 \"/etc/passwd\"\n__device__ int f() { return undefined_zz; }\n"
                     "#define FACTOR 1.0f\n" +
                     std::string(kKernel)));
  auto header_error = compile_errors(load_file(t.file("exp.yaml")));
  if (!header_error) return;
  CHECK(*header_error == t.file("inc/a.h") +
                             ":2:36: error: in kernel 'k': identifier \"nope\" is undefined\n"
                             "    2 | __device__ float factor() { return nope; }\n"
                             "      |                                    ^\n");
  CHECK(compile_errors(load_file(t.file("line.yaml"))) ==
        t.file("line.yaml") +
            ":4:3: error: in kernel 'k' (at line 1 of '/etc/passwd', which names no file of the "
            "kernel): identifier \"undefined_zz\" is undefined\n"
            "    4 |   k:\n"
            "      |   ^\n");
}

TEST_CASE("kernel files: long lines and long runs of spaces compile or fail without std::regex") {
  // std::regex recursed once per character here, and overflowed the stack.
  std::string spaces(300000, ' ');
  std::string name(100000, 'q');
  Experiment far = load_string(
      experiment("extern \"C\" __global__ void k" + spaces + "(float* x) { x[0] = 1; }"),
      "far.yaml");
  Experiment unnamed =
      load_string(experiment("__device__ int k" + spaces + "; extern \"C\" __global__ void j() {}"),
                  "unnamed.yaml");
  Experiment long_error = load_string(
      experiment("extern \"C\" __global__ void k(float* x) { x[0] = " + name + "; }"), "long.yaml");
  try {
    CHECK(compile_user_kernels(far, "compute_75").size() == 1);
    CHECK_THROWS_WITH_AS(compile_user_kernels(unnamed, "compute_75"),
                         doctest::Contains("the source defines no __global__ function named 'k'"),
                         InvalidExperiment);
    CHECK_THROWS_WITH_AS(
        compile_user_kernels(long_error, "compute_75"),
        doctest::Contains("long.yaml:6:55: error: in kernel 'k': identifier \"qqqq"),
        InvalidExperiment);
  } catch (const RunError& err) {
    MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
  }
}

TEST_CASE("kernel files: diagnostics show lines of the experiment's folder only") {
  TempFolder t;
  t.write("exp.yaml", "name: x\n");
  t.write("k.cu", "one\ntwo\n");
  Diagnostics d;
  d.error({t.file("k.cu"), 2, 1}, "in k.cu");
  d.error({"/etc/passwd", 1, 1}, "elsewhere");
  d.error({t.file("../x"), 1, 1}, "above");
  CHECK(format_with_kernel_sources(d, t.file("exp.yaml"), "name: x\n") ==
        t.file("k.cu") +
            ":2:1: error: in k.cu\n    2 | two\n      | ^\n"
            "/etc/passwd:1:1: error: elsewhere\n" +
            t.file("../x") + ":1:1: error: above\n");
  Diagnostics relative;  // an experiment named without a folder: every path looks relative to it
  relative.error({"/etc/passwd", 1, 1}, "elsewhere");
  CHECK(format_with_kernel_sources(relative, "exp.yaml", "") ==
        "/etc/passwd:1:1: error: elsewhere\n");
}

// g++ says __SANITIZE_ADDRESS__, clang __has_feature (which g++ cannot parse in the same #if).
#if defined(__SANITIZE_ADDRESS__)
#define STREAMLAB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STREAMLAB_TEST_ASAN 1
#endif
#endif
#ifndef STREAMLAB_TEST_ASAN
#define STREAMLAB_TEST_ASAN 0
#endif

// Compiling runs in a bounded child (runner/core/bounded_child.hpp): what it returns comes back
// whole, an exception as its text, and a child over a bound is stopped and said to be.
TEST_CASE("kernel files: the compiler's child process returns its output, or why it was stopped") {
  std::string big(3 << 20, 'x');  // more than one pipe buffer
  ChildResult ok = run_bounded([&] { return big; }, {64 << 20, 10, 8 << 20});
  CHECK(ok.outcome == ChildResult::ok);
  CHECK(ok.bytes == big);
  ChildResult threw =
      run_bounded([]() -> std::string { throw RunError("nvrtcCreateProgram failed"); },
                  {64 << 20, 10, 1 << 20});
  CHECK(threw.outcome == ChildResult::failed);
  CHECK(threw.why == "nvrtcCreateProgram failed");
  ChildResult chatty = run_bounded([&] { return big; }, {64 << 20, 10, 1 << 20});
  CHECK(chatty.outcome == ChildResult::bounded);
  CHECK(chatty.why == "it sent back more than 1 MiB");
  ChildResult spun = run_bounded(
      [] {
        for (std::atomic<uint64_t> i = 0;; i.fetch_add(1, std::memory_order_relaxed)) {
        }
        return std::string();
      },
      {64 << 20, 1, 1 << 20});
  CHECK(spun.outcome == ChildResult::bounded);
  // On a loaded machine the spinning child gets less than half a core, and the wall-clock bound
  // (twice the CPU bound) stops it first: also a bound, and said as one.
  if (spun.why == "it took longer than 2 s")
    MESSAGE("the machine was too busy for the CPU bound to come first: stopped by the clock");
  else
    CHECK(spun.why == "it ran longer than 1 s of CPU time");
  ChildResult slept = run_bounded(
      [] {
        ::sleep(30);
        return std::string();
      },
      {64 << 20, 1, 1 << 20});
  CHECK(slept.why == "it took longer than 2 s");
#if STREAMLAB_TEST_ASAN
  MESSAGE(
      "skipped the memory bound: AddressSanitizer reserves its heap up front, so RLIMIT_DATA does "
      "not see it grow");
#else
  ChildResult grew = run_bounded(
      [] {
        std::vector<std::string> chunks;
        for (int i = 0; i < 64; ++i) chunks.emplace_back(16 << 20, 'y');  // 1 GiB, touched
        return std::string();
      },
      {256 << 20, 10, 1 << 20});
  CHECK(grew.outcome == ChildResult::bounded);
  CHECK(grew.why == "it needed more than 256 MiB of memory");
#endif
}

// Past the cap on the kernels' sources nothing more is read, and the cap is said once; the kernels
// after it are still declared, so their launches give no false "unknown kernel".
TEST_CASE("kernel files: the sources' cap stops reading, is said once, and leaves kernels declared") {
  TempFolder t;
  std::string includes;
  for (int i = 0; i < 17; ++i) {
    t.write(fmt::format("h{}.h", i), std::string(limits::kSourceFileBytes - 16, ' ') + "\n");
    includes += fmt::format("#include \"h{}.h\"\n", i);
  }
  t.write("k.cu", includes + kKernel + "\n");
  std::string yaml = "name: u\nkernels:\n";
  for (int k = 0; k < 4; ++k)
    yaml += fmt::format("  k{}:\n    file: k.cu\n    params: [x: inout float32]\n", k);
  yaml += "buffers:\n  d: {type: float32, count: 32, memory: device}\nops:\n"
          "  - launch: {kernel: k3, grid: [1], block: [32], args: {x: d}}\n";
  t.write("exp.yaml", yaml);
  std::string errors = load_errors(t.file("exp.yaml"));
  CHECK(errors.starts_with(t.file("exp.yaml") +
                           ":3:3: error: kernel 'k0': the kernels' sources and the files they "
                           "include come to more than 16777216 bytes in all"));
  CHECK(errors.find("error:") == errors.rfind("error:"));  // one error, no "unknown kernel 'k3'"
}

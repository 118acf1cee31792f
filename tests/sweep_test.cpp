// Sweeps: the points a sweep makes, the YAML section and the command line's --sweep/--plot/--set,
// and the SHA-256 a run's provenance records for its file.
#include <doctest/doctest.h>

#include "runner/core/diagnostics.hpp"
#include "runner/core/sha256.hpp"
#include "runner/execute/backend.hpp"
#include "runner/load/load.hpp"

using namespace streamlab;

namespace {

const char* kSwept = R"yaml(name: swept
params: {N: 1024, K: 4, C: N/K}
sweep:
  params: {K: [1, 2, "2*K"], N: [512, N]}
  plot: ["duration(in)"]
streams: {s: {}}
buffers: {d: {type: float32, count: N, memory: device}}
ops:
  - memsetAsync: {id: in, dst: {buffer: d, count: C}, value: 0, stream: s}
)yaml";

std::vector<int64_t> values_of(const SweepSpec& spec, size_t axis) { return spec.axes.at(axis).values; }

}  // namespace

TEST_CASE("sweep: the points are the axes' product, the last axis fastest") {
  std::vector<SweepAxis> axes = {{"A", {1, 2}, {}}, {"B", {10, 20, 30}, {}}};
  auto points = sweep_points(axes);
  REQUIRE(points.size() == 6);
  CHECK(points[0] == SweepPoint{{"A", 1}, {"B", 10}});
  CHECK(points[1] == SweepPoint{{"A", 1}, {"B", 20}});
  CHECK(points[3] == SweepPoint{{"A", 2}, {"B", 10}});
  CHECK(points[5] == SweepPoint{{"A", 2}, {"B", 30}});
  CHECK(sweep_points({}).size() == 1);  // no axis: the one run
}

TEST_CASE("sweep: the YAML section's values are expressions of the params declared before") {
  Experiment e = load_string(kSwept, "swept.yaml");
  REQUIRE(e.sweep.axes.size() == 2);
  CHECK(e.sweep.axes[0].name == "K");
  CHECK(values_of(e.sweep, 0) == std::vector<int64_t>{1, 2, 8});
  CHECK(values_of(e.sweep, 1) == std::vector<int64_t>{512, 1024});
  REQUIRE(e.sweep.plots.size() == 1);
  CHECK(e.sweep.plots[0].text == "duration(in)");
}

TEST_CASE("sweep: --sweep replaces the file's sweep, --set pins one of its axes") {
  Experiment e = load_string(kSwept, "swept.yaml");
  SweepSpec file = sweep_from_args(e, {}, {}, {});
  CHECK(file.axes.size() == 2);
  CHECK(file.plots.size() == 1);

  SweepSpec pinned = sweep_from_args(e, {}, {}, {"K=2"});
  REQUIRE(pinned.axes.size() == 1);
  CHECK(pinned.axes[0].name == "N");
  CHECK(sweep_from_args(e, {}, {}, {"K=2", "N=64"}).empty());  // every axis pinned: one run

  SweepSpec cli = sweep_from_args(e, {"C=(2+2),16", "N=N/2,N"}, {"duration(in) * 2"}, {"K=1"});
  REQUIRE(cli.axes.size() == 2);
  CHECK(cli.axes[0].name == "C");
  CHECK(values_of(cli, 0) == std::vector<int64_t>{4, 16});
  CHECK(values_of(cli, 1) == std::vector<int64_t>{512, 1024});
  REQUIRE(cli.plots.size() == 1);
  CHECK(cli.plots[0].text == "duration(in) * 2");  // --plot replaces the file's plots
  CHECK(sweep_from_args(e, {"C=1,2"}, {}, {}).plots.size() == 1);  // without --plot, the file's
}

TEST_CASE("sweep: a command-line sweep that cannot run says what is wrong") {
  Experiment e = load_string(kSwept, "swept.yaml");
  auto message = [&](std::vector<std::string> sweeps, std::vector<std::string> plots,
                     std::vector<std::string> sets) -> std::string {
    try {
      sweep_from_args(e, sweeps, plots, sets);
    } catch (const CommandLineError& err) {
      return err.what();
    }
    return "";
  };
  CHECK(message({"Q=1,2"}, {}, {}) == "--sweep Q=1,2: the experiment has no param 'Q' (params: N, K, C)");
  CHECK(message({"KK=1"}, {}, {}).find("did you mean 'K'?") != std::string::npos);
  CHECK(message({"K=1,1"}, {}, {}) == "--sweep K: the value 1 is given twice");
  CHECK(message({"K=1", "K=2"}, {}, {}) == "--sweep K=2: param 'K' is swept twice");
  CHECK(message({"K="}, {}, {}) == "--sweep K=: expected NAME=V1,V2,... (e.g. --sweep K=1,2,4,8)");
  CHECK(message({"K=1,X"}, {}, {}).rfind("--sweep K: value 'X': unknown parameter 'X'", 0) == 0);
  CHECK(message({"K=1,2"}, {}, {"K=4"}) ==
        "--sweep K=1,2: param 'K' is also given by --set; sweep it or set it");
  CHECK(message({"K=1"}, {"duration(nope)"}, {}).rfind("--plot duration(nope): column 10: unknown op 'nope'", 0) == 0);
  std::string many = "K=1";
  for (int i = 2; i <= 1025; ++i) many += "," + std::to_string(i);
  CHECK(message({many}, {}, {}) == "--sweep K: more than 1024 values");
  std::string half = "K=1", other = "N=1";
  for (int i = 2; i <= 40; ++i) half += "," + std::to_string(i), other += "," + std::to_string(i);
  CHECK(message({half, other}, {}, {}) ==
        "--sweep: the sweep has more than 1024 points; a sweep runs at most 1024");

  Experiment plain = load_string("name: plain\nops: [{deviceSynchronize: {}}]\n", "plain.yaml");
  CHECK(sweep_from_args(plain, {}, {}, {}).empty());
  try {
    sweep_from_args(plain, {}, {"1"}, {});
    FAIL("--plot without a sweep was accepted");
  } catch (const CommandLineError& err) {
    CHECK(std::string(err.what()).rfind("--plot: only with a sweep", 0) == 0);
  }
}

TEST_CASE("sweep: a --set that fails is reported once, not again at every use of its param") {
  LoadOptions options;
  options.overrides = {{"K", "1,2"}};
  try {
    load_string(R"yaml(name: cascade
params: {K: 4}
streams: {s: {}}
buffers: {d: {type: float32, count: 64, memory: device}}
ops:
  - memsetAsync: {id: "m[K-1]", dst: d, value: 0, stream: s}
expect:
  - "duration(m[K-1]) > 0"
)yaml",
                "cascade.yaml", options);
    FAIL("accepted");
  } catch (const InvalidExperiment& err) {
    std::string what = err.what();
    CHECK(what.find("--set K=1,2: unexpected ',' in expression; to run over several values, --sweep K=1,2") !=
          std::string::npos);
    CHECK(what.find("unknown parameter 'K'") == std::string::npos);
  }
}

TEST_CASE("sha256: the FIPS 180-4 examples, across block boundaries") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK(sha256_hex(std::string(55, 'x')) != sha256_hex(std::string(56, 'x')));  // padding's edge
}

TEST_CASE("provenance: the driver version of either kernel module's version line") {
  using streamlab::nvidia_driver_version;
  CHECK(nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 "
                              "09:55:41 UTC 2025") == "580.95.05");
  CHECK(nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  "
                              "Release Build  (dvs-builder@U22-I3-AF03-09-1)  Tue Sep 23 09:55:41 UTC 2025") ==
        "580.95.05");
  CHECK(nvidia_driver_version("") == "");
  CHECK(nvidia_driver_version("NVRM version: unknown") == "");
}

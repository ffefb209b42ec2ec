// `ridge profile` as a user runs it: help, every refusal (one line, exit 2, nothing written), the
// missing GPU (exit 3), and a real run whose JSON adds up: every layer's analytic FLOPs as
// `ridge summary` gives them, totals the sums of their rows, ratios measured over analytic, and
// exit 0 exactly when counts were read (4, with one line saying why, when the machine has none).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cli.h"
#include "json.h"
#include "profile/perf_events.h"
#include "roofline/probes/cuda/probes.h"

using namespace clitest;

namespace {
void refused(const std::string& args, const std::string& part) {
    CAPTURE(args);
    Run r = clitest::ridge(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find(part) != std::string::npos, r.err);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
}  // namespace

TEST_CASE("profile --help describes the command and its exit statuses") {
    Run r = clitest::ridge("profile --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("usage: ridge profile NET") != std::string::npos);
    CHECK(r.out.find("status is 4") != std::string::npos);
    CHECK(r.out.find("--cold-cache") != std::string::npos);
}

TEST_CASE("profile refuses bad input before running anything") {
    refused("profile resnet81", "unknown net 'resnet81'");
    refused("profile resnet18 --mode fit", "unknown mode 'fit'");
    refused("profile resnet18 --precision bf16", "needs --device cuda");
    refused("profile resnet18 --batch 0", "--batch");
    refused("profile googlenet --res 8", "minimum resolution");
    refused("profile resnet18 --format xml", "unknown format 'xml'");
    refused("profile resnet18 --bogus", "--bogus");
    refused("profile resnet18 --device cuda --no-winograd", "--no-winograd is for the CPU's oneDNN executor");
    fs::path dir = scratch() / "profile_dir";
    fs::create_directories(dir);
    refused("profile resnet18 --out '" + dir.string() + "'", "it is a directory");
    refused("profile resnet18 --out /nonexistent-folder/p.csv", "no folder '/nonexistent-folder'");
}

TEST_CASE("profile --device cuda without a device says so and exits 3") {
    if (!ridge::probe::gpu::unavailable_reason().empty()) {
        Run r = clitest::ridge("profile resnet18 --device cuda");
        CHECK(r.code == 3);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("ridge profile: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

// --no-winograd reaches the executor as `ridge bench`'s does: resnet18's 3x3 stride-1 convs run
// oneDNN's Winograd kernels on AVX-512 and kernels/simd's winograd3x3 below (inference), and with
// the flag neither. The header and the JSON say which ran.
TEST_CASE("profile --no-winograd runs every conv direct and says so") {
    for (bool winograd : {true, false}) {
        CAPTURE(winograd);
        Run r = clitest::ridge(std::string("profile resnet18 --repeat 1 --warmup 0 --format json") +
                               (winograd ? "" : " --no-winograd"));
        REQUIRE((r.code == 0 || r.code == 4));
        testjson::Value j = testjson::parse(r.out);
        CHECK(j["winograd"].text == (winograd ? "yes" : "no"));
        int rows = 0;
        for (const auto& row : j["rows"].items) rows += row["impl"].text.find("wino") != std::string::npos;
        CHECK((rows > 0) == winograd);
    }
    Run t = clitest::ridge("profile resnet18 --res 32 --repeat 1 --warmup 0 --no-winograd");
    REQUIRE((t.code == 0 || t.code == 4));
    CHECK(t.out.find(", no Winograd)") != std::string::npos);
}

TEST_CASE("a training profile's JSON adds up, with or without counters") {
    fs::path out = scratch() / "profile.json";
    Run r = clitest::ridge("profile resnet18 --res 32 --batch 2 --mode train --repeat 1 --warmup 0 --format json --out '" +
                  out.string() + "'");
    REQUIRE((r.code == 0 || r.code == 4));
    testjson::Value j = testjson::parse(slurp(out));
    bool measured = j["counters"]["measured"].text == "yes";
    CHECK(measured == (r.code == 0));
    if (measured) CHECK(r.err.empty());
    else CHECK(r.err.rfind("ridge profile: no counts: ", 0) == 0);
    CHECK(j["model"].text == "resnet18");
    CHECK(j["mode"].text == "train");
    CHECK(j["batch"].i64() == 2);

    // The analytic columns are the model's: the same numbers `ridge summary` gives per layer.
    Run s = clitest::ridge("summary resnet18 --res 32 --batch 2 --format json");
    REQUIRE(s.code == 0);
    testjson::Value sj = testjson::parse(s.out);
    std::map<std::string, long long> fwd, bwd;
    for (const auto& l : sj["layers"].items) {
        fwd[l["name"].text] = l["fwd_flops"].i64();
        bwd[l["name"].text] = l["dgrad_flops"].i64() + l["wgrad_flops"].i64();
    }
    std::map<std::string, long long> seen_fwd, seen_bwd;
    long long analytic = 0, counted = 0;
    for (const auto& row : j["rows"].items) {
        CAPTURE(row["layer"].text);
        CAPTURE(row["phase"].text);
        long long a = row["analytic_flops"].i64();
        analytic += a;
        if (row["phase"].text == "fwd") seen_fwd[row["layer"].text] += a;
        else if (row["phase"].text != "loss") seen_bwd[row["layer"].text] += a;
        if (row["type"].text == "conv2d") CHECK(row["impl"].text.find(':') != std::string::npos);
        CHECK(row.has("measured_flops") == measured);
        if (measured) {
            counted += row["measured_flops"].i64();
            if (a > 0) CHECK(row["ratio"].num() == doctest::Approx(double(row["measured_flops"].i64()) / double(a)));
        }
    }
    for (const auto& [name, f] : fwd) {
        CAPTURE(name);
        CHECK(seen_fwd[name] == f);
        CHECK(seen_bwd[name] == bwd[name]);
    }
    CHECK(j["total"]["analytic_flops"].i64() == analytic);
    CHECK(j["total"]["rows"].i64() == (long long)j["rows"].items.size());
    long long by_type = 0;
    for (const auto& t : j["by_type"].items) by_type += t["analytic_flops"].i64();
    CHECK(by_type == analytic);
    if (measured) {
        CHECK(j["total"]["measured_flops"].i64() == counted);
        // Every conv row counted what its implementation is expected to, within 5 %, or its why
        // column accounts for the excess.
        for (const auto& row : j["rows"].items)
            if (row["type"].text == "conv2d") {
                CAPTURE(row["layer"].text);
                CAPTURE(row["phase"].text);
                double m = double(row["measured_flops"].i64()), e = double(row["expected_flops"].i64());
                bool explained = false;
                for (const auto& w : row["why"].items) explained = explained || w.text.find("excess over expected") == 0;
                CHECK((std::abs(m / e - 1) <= 0.05 || explained));
            }
    }
}

TEST_CASE("without hardware counters: the table still, one line saying why, exit 4") {
    // The two refusals a user meets: a kernel that forbids counting, and one with no counters. A
    // host with no FLOP events for its CPU stops before asking the kernel, for its own reason.
    std::string host_why;
    const bool host_counts = ridge::profile::open_cpu_counters(&host_why) != nullptr;
    for (auto [refusal, why] : {std::pair<std::string, std::string>{"EACCES", "perf_event_paranoid is"},
                                {"ENOENT", "exposes no hardware performance counters"}}) {
        CAPTURE(refusal);
        fs::path out = scratch() / "no_counters.json", err = scratch() / "no_counters.err";
        fs::remove(out);
        std::string cmd = std::string("'") + RIDGE_WITHOUT_PERF_EVENTS + "' " + refusal + " '" + RIDGE_CLI +
                          "' profile resnet18 --res 32 --batch 1 --repeat 1 --warmup 0 --format json --out '" +
                          out.string() + "' 2>'" + err.string() + "'";
        int status = std::system(cmd.c_str());
        REQUIRE(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 4);
        std::string e = slurp(err);
        CHECK(std::count(e.begin(), e.end(), '\n') == 1);
        CHECK_MESSAGE(e.rfind("ridge profile: no counts: ", 0) == 0, e);
        if (host_counts) CHECK_MESSAGE(e.find(why) != std::string::npos, e);
        else CHECK_MESSAGE(e.find(host_why) != std::string::npos, e);
        testjson::Value j = testjson::parse(slurp(out));
        CHECK(j["counters"]["measured"].text != "yes");
        REQUIRE(!j["rows"].items.empty());
        long long analytic = 0;
        for (const auto& row : j["rows"].items) {
            CHECK(!row.has("measured_flops"));
            if (row["type"].text == "conv2d") CHECK(row["impl"].text.find(':') != std::string::npos);
            analytic += row["analytic_flops"].i64();
        }
        CHECK(analytic == j["total"]["analytic_flops"].i64());
        CHECK(analytic > 0);
    }
}

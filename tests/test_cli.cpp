// The ridge CLI as a user runs it: outputs parse and add up, every error path prints one line on
// stderr, exits 2 and writes nothing.
#include <doctest/doctest.h>

#include <algorithm>

#include "cli.h"
#include "json.h"
#include "skip.h"

using namespace clitest;

namespace {
const char* additive[] = {"params", "macs", "fwd_flops", "dgrad_flops", "wgrad_flops", "param_bytes",
                          "activation_bytes", "fwd_traffic_bytes", "bwd_traffic_bytes"};
}  // namespace

TEST_CASE("ridge list names the 31 nets") {
    Run r = ridge("list");
    CHECK(r.code == 0);
    CHECK(lines(r.out) == 31);
    CHECK(r.out.find("resnet50") != std::string::npos);
    CHECK(r.out.find("vit_b_16") != std::string::npos);
}

TEST_CASE("--help everywhere") {
    for (std::string c : {"--help", "help", "list --help", "summary --help", "zoo --help", "explain --help", "summary -h",
                          "report --help", "train --help"}) {
        CAPTURE(c);
        Run r = ridge(c);
        CHECK(r.code == 0);
        CHECK(r.out.find("usage: ridge") != std::string::npos);
        CHECK(r.err.empty());
    }
    check_usage_error("", "missing command: list, summary, zoo, explain, bench, train, profile, roofline or report");
}

TEST_CASE("summary json parses, has the documented shape and its totals are the sums of its layers") {
    for (std::string net : {"resnet50", "mobilenet_v2", "vit_b_16", "densenet121"}) {
        CAPTURE(net);
        Run r = ridge("summary " + net + " --format json --batch 3");
        REQUIRE(r.code == 0);
        testjson::Value j = testjson::parse(r.out);
        CHECK(j["model"].text == net);
        CHECK(j["batch"].i64() == 3);
        CHECK(j["input"].items.size() == 3);
        CHECK(j["dtype"].text == "fp32");
        const testjson::Value& t = j["totals"];
        for (const char* k : {"params", "macs", "fwd_flops", "dgrad_flops", "wgrad_flops", "activation_bytes",
                              "saved_bytes", "fwd_traffic_bytes", "bwd_traffic_bytes", "train_memory_bytes"})
            CHECK_MESSAGE(t.has(k), k);
        for (const char* k : additive) {
            CAPTURE(k);
            long long layers = 0, types = 0;
            for (const auto& L : j["layers"].items) layers += L[k].i64();
            for (const auto& T : j["by_type"].items) types += T[k].i64();
            CHECK(layers == t[k].i64());
            CHECK(types == t[k].i64());
        }
    }
    testjson::Value r50 = testjson::parse(ridge("summary resnet50 --format json").out);
    CHECK(r50["totals"]["macs"].i64() == 4089184256LL);
    CHECK(r50["totals"]["params"].i64() == 25557032LL);
    CHECK(r50["input"].items[1].i64() == 224);
}

TEST_CASE("summary csv: one header, equal column counts, a total row with exact integers") {
    Run r = ridge("summary resnet50 --format csv --dtype bf16");
    REQUIRE(r.code == 0);
    std::istringstream in(r.out);
    std::string line, header;
    std::getline(in, header);
    auto columns = [](const std::string& s) { return std::count(s.begin(), s.end(), ',') + 1; };
    std::string total;
    int rows = 0;
    while (std::getline(in, line)) {
        CHECK(columns(line) == columns(header));
        if (line.starts_with("total,")) total = line;
        ++rows;
    }
    CHECK(rows > 100);
    CHECK(total.find(",25557032,4089184256,") != std::string::npos);
    CHECK(r.out.find("\ntype,conv,,conv,,") != std::string::npos);  // per-type rows name their category
}

TEST_CASE("summary table fits a 100-column terminal") {
    for (std::string net : {"resnet50", "efficientnet_b7", "inception_v3", "vit_b_16"}) {
        CAPTURE(net);
        Run r = ridge("summary " + net + " --batch 256");
        REQUIRE(r.code == 0);
        std::istringstream in(r.out);
        std::string line;
        size_t widest = 0;
        while (std::getline(in, line)) widest = std::max(widest, line.size());
        CHECK(widest <= 100);
    }
}

TEST_CASE("zoo: csv row per net, json with layers parses") {
    Run csv = ridge("zoo --format csv");
    REQUIRE(csv.code == 0);
    CHECK(lines(csv.out) == 32);
    Run json = ridge("zoo --format json --layers --dtype fp16 --batch 2");
    REQUIRE(json.code == 0);
    testjson::Value j = testjson::parse(json.out);
    CHECK(j["nets"].items.size() == 31);
    CHECK(j["dtype"].text == "fp16");
    for (const auto& n : j["nets"].items) CHECK(n["layers"].items.size() > 5);
    Run table = ridge("zoo");
    CHECK(table.code == 0);
    CHECK(lines(table.out) == 34);
}

TEST_CASE("explain substitutes the numbers into the formulas") {
    Run r = ridge("explain resnet50 layer3.0.conv2");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("N*K*P*Q*C/G*R*S") != std::string::npos);
    CHECK(r.out.find("1*256*14*14*256*3*3") != std::string::npos);
    CHECK(r.out.find("115,605,504") != std::string::npos);
    Run first = ridge("explain resnet50 conv1 --batch 2");
    CHECK(first.out.find("needs no gradient") != std::string::npos);
}

TEST_CASE("--out writes the file whole, and nothing on error") {
    fs::path target = scratch() / "r50.json";
    Run ok = ridge("summary resnet50 --format json --out '" + target.string() + "'");
    CHECK(ok.code == 0);
    CHECK(ok.out.empty());
    CHECK(testjson::parse(slurp(target))["model"].text == "resnet50");
    fs::path bad = scratch() / "never.json";
    Run err = ridge("summary resnet50 --batch 0 --format json --out '" + bad.string() + "'");
    CHECK(err.code == 2);
    CHECK_FALSE(fs::exists(bad));
    check_usage_error("zoo --out /nonexistent-dir/zoo.csv", "cannot write '/nonexistent-dir/zoo.csv'");
    // A target that cannot be renamed over fails after the temp file was written: it must go.
    fs::path dir = scratch() / "a_directory";
    fs::create_directories(dir);
    check_usage_error("zoo --format csv --out '" + dir.string() + "'", "it is a directory");
    check_usage_error("zoo --format csv --out '" + scratch().string() + "/'", "it is a directory");
    for (const auto& e : fs::recursive_directory_iterator(scratch()))
        CHECK_MESSAGE(e.path().string().find(".tmp.") == std::string::npos, e.path().string());
}

TEST_CASE("--out writes through a symlink instead of replacing it") {
    fs::path link = scratch() / "link.csv", real = scratch() / "real.csv";
    fs::create_symlink("real.csv", link);
    CHECK(ridge("zoo --format csv --out '" + link.string() + "'").code == 0);
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    CHECK(lines(slurp(real)) == 32);
}

TEST_CASE("a failed write to standard output is an error [may skip]") {
    if (!fs::exists("/dev/full")) return testskip::skip("no /dev/full to write to");
    int status = std::system((std::string("'") + RIDGE_CLI + "' list >/dev/full 2>/dev/null").c_str());
    CHECK(WEXITSTATUS(status) == 2);
}

TEST_CASE("bad input: one line on stderr, exit 2, nothing on stdout") {
    check_usage_error("summary resnet5", "unknown net 'resnet5'; closest: resnet50");
    check_usage_error("summary vgg16 --batch 0", "--batch must be a positive integer, got '0'");
    check_usage_error("summary vgg16 --batch -3", "--batch must be a positive integer, got '-3'");
    check_usage_error("summary vgg16 --batch 2x", "--batch must be a positive integer, got '2x'");
    check_usage_error("summary vgg16 --batch 100000", "--batch 100000 is above the limit of 65536");
    check_usage_error("summary vgg16 --res 16", "16x16 is below vgg16's minimum resolution of 32x32");
    check_usage_error("summary inception_v3 --res 74x80", "74x80 is below inception_v3's minimum resolution of 75x75");
    check_usage_error("summary vgg16 --res 0x5", "--res must be H or HxW with positive integers, got '0x5'");
    check_usage_error("summary vgg16 --res big", "--res must be H or HxW");
    check_usage_error("summary vgg16 --dtype fp8", "unknown dtype 'fp8' (fp32, fp16 or bf16)");
    check_usage_error("summary vgg16 --format xml", "unknown format 'xml' (table, csv, json)");
    check_usage_error("summary vgg16 --bach 2", "unknown option '--bach'");
    check_usage_error("summary vgg16 --batch", "--batch needs a value N");
    check_usage_error("summary", "missing argument");
    check_usage_error("summary vgg16 resnet50", "unexpected argument");
    check_usage_error("zoo --layers", "--layers needs --format csv or json");
    check_usage_error("zoo --dtype int8", "unknown dtype 'int8'");
    check_usage_error("explain resnet50 layer3.0.cnv2", "resnet50 has no layer 'layer3.0.cnv2'; closest: layer3.0.conv2");
    check_usage_error("explain resnet50", "missing argument");
    check_usage_error("sumary resnet50", "unknown command 'sumary'; closest: summary");
    check_usage_error("summary vgg16 -b 3", "unknown option '-b'");
    check_usage_error("summary vgg16 --batch 99999999999999999999", "is above the limit of 65536");
    check_usage_error("summary vit_b_16 --batch 65536 --res 4096", "a count exceeds 64 bits");
    check_usage_error("summary vit_b_16 --res 100", "input 100x100 is not a whole number of 16x16 patches");
    check_usage_error("summary googlenet --res 14", "14x14 is below googlenet's minimum resolution of 15x15");
}

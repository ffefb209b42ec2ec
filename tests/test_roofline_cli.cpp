// `ridge roofline` as a user runs it: every subcommand's help, the three output formats, numbers
// that agree with the roofline rule and with `ridge summary`, and one line + exit 2 for each kind
// of bad input (unknown chip with the closest names, bad kind, malformed database).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "cli.h"
#include "json.h"
#include "spawn.h"

namespace {
using namespace clitest;

double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }
}  // namespace

TEST_CASE("roofline --help everywhere") {
    for (std::string c : {"roofline --help", "roofline help", "roofline chips --help", "roofline measure --help",
                          "roofline place --help", "roofline place -h", "--help"}) {
        CAPTURE(c);
        Run r = ridge(c);
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        CHECK(r.out.find(c == "--help" ? "roofline" : "usage: ridge roofline") != std::string::npos);
    }
}

TEST_CASE("roofline chips: table, csv with a kind column, json; --kind filters") {
    Run t = ridge("roofline chips");
    REQUIRE(t.code == 0);
    CHECK(t.out.find("NVIDIA H100 SXM5 80GB") != std::string::npos);
    CHECK(t.out.find("TFLOP/s") != std::string::npos);
    CHECK(t.out.find("GB/s") != std::string::npos);
    std::istringstream in(t.out);
    for (std::string line; std::getline(in, line);) CHECK(line.size() <= 100);

    Run c = ridge("roofline chips --format csv");
    REQUIRE(c.code == 0);
    CHECK(c.out.starts_with("name,kind,vendor,year,fp64_tflops,fp32_tflops,tf32_tflops,fp16_tflops,int8_tops,"));
    int rows = lines(c.out) - 1;
    CHECK(rows >= 24);

    Run g = ridge("roofline chips --kind gpu --format csv");
    REQUIRE(g.code == 0);
    std::istringstream gin(g.out);
    std::string line;
    std::getline(gin, line);
    int gpus = 0;
    while (std::getline(gin, line)) {
        CHECK(line.find(",gpu,") != std::string::npos);
        ++gpus;
    }
    CHECK(gpus >= 6);

    Run j = ridge("roofline chips --format json");
    REQUIRE(j.code == 0);
    testjson::Value v = testjson::parse(j.out);
    CHECK(v["count"].i64() == rows);
    REQUIRE(v["chips"].items.size() == size_t(rows));
    for (const auto& chip : v["chips"].items) {
        CAPTURE(chip["name"].text);
        CHECK(chip["source"].text.starts_with("http"));
        CHECK(chip["peak_tflops"].fields.size() >= 1);
        // Every peak, dense and sparse, with its own source; the derived ones with their arithmetic.
        REQUIRE(chip["peaks"].items.size() >= chip["peak_tflops"].fields.size());
        for (const auto& k : chip["peaks"].items) {
            CHECK(k["source"].text.starts_with("http"));
            CHECK(k.has("derivation") == k["derived"].b);
        }
    }
    // Apple M1: the bandwidth follows from LPDDR4X-4266 on a 128-bit bus, and says so.
    for (const auto& chip : v["chips"].items)
        if (chip["name"].text == "Apple M1") {
            CHECK(rel(chip["mem_bw_gbs"].num(), 68.256) < 1e-9);
            CHECK(chip["mem_bw_derivation"].text.find("4.266") != std::string::npos);
        }
}

TEST_CASE("roofline chips --precision: one precision's peaks, sources and ridges; the rest named") {
    Run all = ridge("roofline chips --format json");
    REQUIRE(all.code == 0);
    testjson::Value db = testjson::parse(all.out);
    int64_t with_bf16 = 0;
    for (const auto& chip : db["chips"].items) with_bf16 += chip["peak_tflops"].has("bf16");

    Run t = ridge("roofline chips --precision bf16");
    REQUIRE(t.code == 0);
    CHECK(t.err.empty());
    CHECK(t.out.find("chips with a dense bf16 peak (TFLOP/s)") != std::string::npos);
    CHECK(t.out.find("Google TPU v4") != std::string::npos);
    CHECK(t.out.find("Left out, no dense bf16 peak in the database") != std::string::npos);
    std::istringstream in(t.out);
    for (std::string line; std::getline(in, line);) CHECK(line.size() <= 100);

    Run j = ridge("roofline chips --precision bf16 --format json");
    REQUIRE(j.code == 0);
    testjson::Value v = testjson::parse(j.out);
    CHECK(v["precision"].text == "bf16");
    CHECK(v["count"].i64() == with_bf16);
    CHECK(v["count"].i64() + int64_t(v["left_out"].items.size()) == db["count"].i64());
    for (const auto& chip : v["chips"].items) {
        REQUIRE(chip["peaks"].items.size() == 1);
        CHECK(chip["peaks"].items[0]["precision"].text == "bf16");
        CHECK(chip["peaks"].items[0]["density"].text == "dense");
    }

    Run c = ridge("roofline chips --precision int8 --sparse --kind gpu --format csv");
    REQUIRE(c.code == 0);
    CHECK(c.out.starts_with("name,kind,vendor,year,precision,density,peak_tflops,peak_derivation,"));
    // H100: 3957.8 sparse int8 TOP/s over 3350 GB/s.
    CHECK(c.out.find("NVIDIA H100 SXM5 80GB,gpu,NVIDIA,2022,int8,sparse,3957.8,") != std::string::npos);
}

TEST_CASE("roofline place: each layer on the roof, totals equal ridge summary's") {
    Run r = ridge("roofline place resnet50 --chip h100 --dtype fp16 --batch 8 --format json");
    REQUIRE(r.code == 0);
    testjson::Value j = testjson::parse(r.out);
    CHECK(j["chip"].text == "NVIDIA H100 SXM5 80GB");
    CHECK(j["precision"].text == "fp16");
    double peak = j["peak_flops"].num(), bw = j["bandwidth_bytes_per_s"].num();
    CHECK(rel(peak, 989.4e12) < 1e-5);
    CHECK(rel(bw, 3350e9) < 1e-5);
    CHECK(rel(j["ridge_flop_per_byte"].num(), peak / bw) < 1e-5);
    long long flops = 0, bytes = 0;
    int memory = 0, compute = 0;
    for (const auto& L : j["layers"].items) {
        CAPTURE(L["name"].text);
        flops += L["fwd_flops"].i64();
        bytes += L["fwd_traffic_bytes"].i64();
        if (L["bound"].text == "none") continue;
        double I = L["intensity_flop_per_byte"].num();
        CHECK(rel(I, double(L["fwd_flops"].i64()) / double(L["fwd_traffic_bytes"].i64())) < 1e-5);
        CHECK(rel(L["attainable_flops"].num(), std::min(peak, bw * I)) < 1e-5);
        CHECK(L["bound"].text == (I < peak / bw ? "memory" : "compute"));
        (L["bound"].text == "memory" ? memory : compute)++;
    }
    CHECK(memory > 0);  // at batch 8 on an H100 the batchnorms and activations are
    CHECK(j["totals"]["fwd_flops"].i64() == flops);
    CHECK(j["totals"]["fwd_traffic_bytes"].i64() == bytes);
    testjson::Value s = testjson::parse(ridge("summary resnet50 --dtype fp16 --batch 8 --format json").out);
    CHECK(s["totals"]["fwd_flops"].i64() == flops);
    CHECK(s["totals"]["fwd_traffic_bytes"].i64() == bytes);

    Run csv = ridge("roofline place resnet50 --chip \"NVIDIA A100 SXM4 80GB\" --dtype tf32 --format csv");
    REQUIRE(csv.code == 0);
    CHECK(csv.out.starts_with("net,chip,dtype,level,layer,kind,fwd_flops,fwd_traffic_bytes,"));
    CHECK(csv.out.find("\nresnet50,NVIDIA A100 SXM4 80GB,tf32,DRAM,(net),net,") != std::string::npos);
    CHECK(lines(csv.out) == int(j["layers"].items.size()) + 2);

    Run t = ridge("roofline place mobilenet_v2 --chip \"TPU v5e\" --dtype bf16");
    REQUIRE(t.code == 0);
    CHECK(t.out.find("ridge point") != std::string::npos);
    CHECK(t.out.find("memory-bound") != std::string::npos);

    // --precision picks the peak apart from the bytes: int8 on fp16 tensors, the sparse fp8 figure.
    Run i8 = ridge("roofline place resnet50 --chip h100 --dtype fp16 --precision int8 --format json");
    REQUIRE(i8.code == 0);
    testjson::Value q = testjson::parse(i8.out);
    CHECK(q["precision"].text == "int8");
    CHECK(q["dtype"].text == "fp16");
    CHECK(rel(q["peak_flops"].num(), 1978.9e12) < 1e-9);
    Run sp = ridge("roofline place resnet50 --chip h100 --precision fp8 --sparse --format json");
    REQUIRE(sp.code == 0);
    CHECK(rel(testjson::parse(sp.out)["peak_flops"].num(), 3957.8e12) < 1e-9);
    CHECK(testjson::parse(sp.out)["density"].text == "sparse");
}

TEST_CASE("roofline place --chip this measures the machine first") {
    // One run: the probes stream gigabytes where the L3 reads as large (508 MiB on the Zen 5 VM).
    // Its table lists every level measured (DRAM as STREAM's triad) and the roof at the one asked.
    Run r = ridge("roofline place resnet18 --chip this --level l1");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("on this machine (") != std::string::npos);
    auto number = [&](const std::string& pattern) {
        std::smatch m;
        return std::regex_search(r.out, m, std::regex(pattern)) ? std::stod(m[1]) : -1.0;
    };
    const double peak = number("fp32 FMA ([0-9.]+) GFLOP/s"), l1 = number(" L1 ([0-9.]+) GB/s");
    CHECK(peak > 1);
    CHECK(l1 > 0.1);
    CHECK(number("DRAM ([0-9.]+) GB/s \\(DRAM = STREAM triad\\)") > 0.1);
    CHECK(number("roof: [0-9.]+ GFLOP/s and ([0-9.]+) GB/s") == l1);
}

TEST_CASE("roofline measure --device cpu: the documented JSON keys, within the theoretical peak") {
    fs::path out = scratch() / "measured.json";
    Run r = ridge("roofline measure --device cpu --quick --format json --out '" + out.string() + "'");
    REQUIRE(r.code == 0);
    CHECK(r.out.empty());
    testjson::Value j = testjson::parse(slurp(out));
    for (const char* k : {"fp32_gflops", "fp32_theoretical_gflops", "triad_gbs", "memcpy_gbs", "measured_clock_mhz"})
        CHECK_MESSAGE(j[k].num() > 0, k);
    // The datasheet line: at the model's max boost when roofline/cpu_clocks.csv knows the model,
    // else at the reported clock and marked a lower bound (this VM says just "AMD EPYC").
    if (j.has("datasheet_clock")) {
        bool lower = j["datasheet_lower_bound"].b;
        CHECK(j["datasheet_clock"].text.find(lower ? "a lower bound" : "the max boost") != std::string::npos);
        if (lower) CHECK(j["datasheet_clock_mhz"].num() == doctest::Approx(j["reported_clock_mhz"].num()));
        CHECK(rel(j["fp32_datasheet_gflops"].num(),
                  j["fp32_theoretical_gflops"].num() * j["datasheet_clock_mhz"].num() / j["measured_clock_mhz"].num()) < 1e-5);
    }
    CHECK(j["fp32_gflops"].num() <= 1.1 * j["fp32_theoretical_gflops"].num());
    REQUIRE(j["plateaus"].items.size() >= 2);
    CHECK(j["plateaus"].items.front()["level"].text == "L1");
    CHECK(j["plateaus"].items.back()["level"].text == "DRAM");
    CHECK(j["sweep"].items.size() >= 10);
    Run t = ridge("roofline measure --quick");
    REQUIRE(t.code == 0);
    CHECK(t.out.find("theoretical at the measured clock") != std::string::npos);
    CHECK(t.out.find("memcpy") != std::string::npos);
}

TEST_CASE("roofline measure --device cuda: one line and exit 3 without a device") {
    Run r = ridge("roofline measure --device cuda --quick --format json");
    if (r.code == 3) {
        CHECK(r.out.empty());
        CHECK(lines(r.err) == 1);
        CHECK(r.err.find("ridge roofline measure: ") == 0);
        CHECK(r.err.find("no CUDA device is available") != std::string::npos);
    } else {
        REQUIRE(r.code == 0);  // a GPU is present: the probes ran
        testjson::Value j = testjson::parse(r.out);
        CHECK(j["fp32_gflops"].num() > 0);
    }
}

TEST_CASE("roofline errors: one line on stderr, exit 2, nothing written") {
    check_usage_error("roofline", "ridge roofline: missing command: chips, measure or place");
    check_usage_error("roofline chip", "unknown command 'chip'; closest: chips");
    check_usage_error("roofline chips --kind tpu", "ridge roofline chips: unknown kind 'tpu' (cpu, gpu, asic, soc, fpga)");
    check_usage_error("roofline chips --format xml", "unknown format 'xml'");
    check_usage_error("roofline chips --chips /nonexistent.csv", "/nonexistent.csv:0: field '(file)': cannot be read");
    check_usage_error("roofline place resnet50", "--chip NAME is required");
    check_usage_error("roofline place resnet50 --chip H10x", "unknown chip 'H10x'; closest: ");
    check_usage_error("roofline place resnet50 --chip nvidia", "chips: NVIDIA Grace CPU Superchip, NVIDIA H100 SXM5 80GB");
    check_usage_error("roofline place resnet5 --chip h100", "unknown net 'resnet5'; closest: resnet50");
    check_usage_error("roofline place resnet50 --chip \"TPU v4\"",
                      "Google TPU v4 has no fp32 peak in the database (it has: bf16, int8)");
    check_usage_error("roofline place resnet50 --chip \"Stratix 10 NX\" --precision int8",
                      "Intel Stratix 10 NX 2100 has no dram bandwidth in the database");
    check_usage_error("roofline chips --precision fp12",
                      "ridge roofline chips: unknown precision 'fp12' (fp64, fp32, tf32, fp16, bf16, fp8, int8)");
    check_usage_error("roofline place resnet50 --chip h100 --precision bfloat16", "unknown precision 'bfloat16'");
    check_usage_error("roofline chips --sparse", "--sparse needs --precision P");
    check_usage_error("roofline place resnet50 --chip h100 --level l2", "has no l2 bandwidth (it has: DRAM)");
    check_usage_error("roofline place resnet50 --chip h100 --dtype int4", "unknown dtype 'int4'");
    check_usage_error("roofline place resnet50 --chip h100 --batch 0", "--batch must be a positive integer");
    check_usage_error("roofline measure --device gpu", "unknown device 'gpu' (cpu, cuda)");
    check_usage_error("roofline place resnet50 --chip this --dtype bf16", "this machine has no bf16 peak");
    check_usage_error("roofline place resnet50 --chip this --precision fp32 --sparse", "this machine has no sparse fp32 peak");
    // Before: the file was ignored, even a missing one, and the place printed with exit 0.
    check_usage_error("roofline place resnet50 --chip this --chips /nonexistent.csv",
                      "--chips does not apply to --chip this (this machine is measured)");
    check_usage_error("roofline measure --device cuda --threads 2", "--threads applies to --device cpu only");
    check_usage_error("roofline measure --frob", "unknown option '--frob'");

    // A malformed database names its file, line and field; the peaks file is read beside the chips file.
    fs::path dir = scratch() / "bad";
    fs::create_directories(dir);
    auto header_of = [](const std::string& path) {
        std::istringstream in(slurp(path));
        for (std::string line; std::getline(in, line);)
            if (!line.starts_with("#")) return line;
        return std::string();
    };
    {
        std::ofstream f(dir / "chips.csv");
        f << header_of(RIDGE_CHIPS_CSV) << "\n"
          << "Fine,gpu,Acme,2022,100,,,,,https://example.com,,\n"
          << "Broken,gpu,Acme,2022,fast,,,,,https://example.com,,\n";
    }
    check_usage_error("roofline chips --chips '" + (dir / "chips.csv").string() + "'",
                      (dir / "peaks.csv").string() + ":0: field '(file)': cannot be read");
    {
        std::ofstream f(dir / "peaks.csv");
        f << header_of((fs::path(RIDGE_CHIPS_CSV).parent_path() / "peaks.csv").string()) << "\n"
          << "Fine,fp32,dense,10,2 * 5,,https://example.com,\n";
    }
    check_usage_error("roofline chips --chips '" + (dir / "chips.csv").string() + "'",
                      (dir / "chips.csv").string() + ":3: field 'mem_bw_gbs': 'fast' is not a number");
    CHECK(!fs::exists(scratch() / "never.txt"));
    check_usage_error("roofline chips --kind tpu --out '" + (scratch() / "never.txt").string() + "'", "unknown kind");
    CHECK(!fs::exists(scratch() / "never.txt"));
}

namespace {
// A shipped data file's header line, for hand-made databases.
std::string header_line(const fs::path& path) {
    std::istringstream in(slurp(path.string()));
    for (std::string line; std::getline(in, line);)
        if (!line.starts_with("#")) return line;
    return "";
}

std::string chips_header() { return header_line(RIDGE_CHIPS_CSV); }

// A database of its own folder: `chips` (written raw, after the header unless it brings its own)
// and a peaks.csv beside it, as load_chips reads them. Returns the chips file's path.
fs::path database(const std::string& name, const std::string& chips, const std::string& peaks,
                  bool with_header = true) {
    fs::path dir = scratch() / name;
    fs::create_directories(dir);
    std::ofstream(dir / "chips.csv") << (with_header ? chips_header() + "\n" : "") << chips;
    std::ofstream(dir / "peaks.csv") << header_line(fs::path(RIDGE_CHIPS_CSV).parent_path() / "peaks.csv") << "\n"
                                     << peaks;
    return dir / "chips.csv";
}

spawn::Result chips(const fs::path& file, const std::string& format = "table") {
    spawn::Options o;
    o.timeout_s = 30;
    return spawn::run({RIDGE_CLI, "roofline", "chips", "--chips", file.string(), "--format", format}, o);
}

void check_refused(const spawn::Result& r, const std::string& says) {
    CHECK(!r.timed_out);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(spawn::lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(says) != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find('\x1b') == std::string::npos, r.err);
}

// A chip with a 100 GB/s memory (its notes field last, so text appended to the row lands there),
// and its fp32 peak for peaks.csv.
const std::string fine_row = "Fine,gpu,Acme,2022,100,,,,,https://example.com,,";
const std::string fine_peak = "Fine,fp32,dense,10,,,https://example.com,\n";
}  // namespace

TEST_CASE("roofline chips: endless and oversized chip files are refused at a size cap, quickly") {
    check_refused(chips("/dev/zero"), "/dev/zero:0: field '(file)': is larger than 1 MiB");
    std::string comments;
    for (int i = 0; i < 1100; ++i) comments += "# " + std::string(1000, 'x') + "\n";
    check_refused(chips(database("big", comments + fine_row + "\n", fine_peak)), "is larger than 1 MiB");
    fs::path line = database("longline", fine_row + std::string(20000, 'y') + "\n", fine_peak);
    check_refused(chips(line), "chips.csv:2: field '(line)': is longer than 16384 bytes");
    check_refused(chips(scratch()), "it is a directory");
    // A fifo nobody writes reads as empty instead of waiting for a writer.
    fs::path fifo = database("fifo", "", "").parent_path() / "chips.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_refused(chips(fifo), "no header line");
}

TEST_CASE("roofline chips: a byte order mark is skipped; control bytes and non-UTF-8 are refused, never printed") {
    fs::path bom = database("bom", "\xEF\xBB\xBF" + chips_header() + "\n" + fine_row + "\n", fine_peak, false);
    spawn::Result r = chips(bom, "csv");
    CHECK_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("\nFine,gpu,Acme,2022,") != std::string::npos);

    fs::path esc = database("esc", "Fi\x1b]0;owned\x07ne" + fine_row.substr(4) + "\n", fine_peak);
    check_refused(chips(esc), "esc/chips.csv:2: field 'name': holds a control character (0x1b)");
    fs::path c1 = database("c1", fine_row + "note \xc2\x9b" + "31m\n", fine_peak);
    check_refused(chips(c1), "c1/chips.csv:2: field 'notes': holds a control character (0x9b)");
    fs::path latin1 = database("latin1", "Caf\xe9" + fine_row.substr(4) + "\n", fine_peak);
    check_refused(chips(latin1), "latin1/chips.csv:2: field 'name': is not UTF-8 (byte 0xe9)");
    fs::path head = database("head", "name,ki\x01nd\n", "", false);
    check_refused(chips(head), "head/chips.csv:1: field 'column 2': holds a control character (0x01)");
    // UTF-8 names are fine, and a file name with control bytes is quoted as text.
    std::string utf_name = "R\xc3\xa9seau \xe7\xbd\x91";
    fs::path utf = database("utf", utf_name + fine_row.substr(4) + "\n", utf_name + fine_peak.substr(4));
    spawn::Result u = chips(utf);
    CHECK_MESSAGE(u.code == 0, u.err);
    check_refused(chips(scratch() / "no\x1b[2Jsuch.csv"), "no\\x1b[2Jsuch.csv:0: field '(file)': cannot be read");
}

TEST_CASE("roofline chips --format json: a ridge point beyond double range is null, not 0") {
    fs::path f = database("extreme", "Extreme,gpu,Acme,2022,1e-300,,,,,https://example.com,,\n",
                          "Extreme,fp32,dense,1e300,,,https://example.com,\n");
    spawn::Result r = chips(f, "json");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    testjson::Value v = testjson::parse(r.out);
    const testjson::Value& c = v["chips"].items.at(0);
    CHECK(c["peak_tflops"]["fp32"].num() == 1e300);
    CHECK(c["ridge_flop_per_byte"]["fp32"].kind == testjson::Value::Kind::null);
}

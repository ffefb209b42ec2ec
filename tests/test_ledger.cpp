// The ledgers: locked appends that keep every row when runs overlap and keep the file the user's
// (mode, hard links), destinations refused before any work, and the revision recorded with each
// row taken from the build, never from running git.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <regex>
#include <set>
#include <thread>

#include "bench/env.h"
#include "bench/ledger.h"
#include "bench/ledger_schema.h"
#include "bench/usage_error.h"
#include "engine/shape.h"
#include "cli.h"
#include "spawn.h"

using namespace clitest;

namespace {
fs::path fresh(const std::string& name) {
    fs::path p = scratch() / "ledger" / name;
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

std::vector<std::string> rows_of(const fs::path& p) {
    std::vector<std::string> rows;
    std::istringstream in(slurp(p));
    for (std::string line; std::getline(in, line);) rows.push_back(line);
    return rows;
}

// resnet18 at 32x32 on the reference kernels, one untimed-warm-up-free step: a fraction of a second.
std::vector<std::string> tiny_bench(std::vector<std::string> more) {
    std::vector<std::string> a = {RIDGE_CLI, "bench", "resnet18", "--res", "32", "--backend", "reference", "--no-layers",
                                  "--warmup", "0", "--repeat", "1", "--quiet"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

void check_refused(const spawn::Result& r, const std::string& says) {
    CHECK(r.code == 2);
    CHECK(!r.timed_out);
    CHECK(r.out.empty());
    CHECK(spawn::lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(says) != std::string::npos, r.err);
}
}  // namespace

TEST_CASE("append_csv_rows: the header once, rows after it, another header refused, a torn row closed") {
    fs::path d = fresh("unit");
    fs::path p = d / "sub" / "dir" / "m.csv";  // missing folders are made
    ridge::bench::append_csv_rows(p.string(), "a,b", {"1,2"});
    ridge::bench::append_csv_row(p.string(), "a,b", "3,4");
    CHECK(slurp(p) == "a,b\n1,2\n3,4\n");
    CHECK_THROWS_WITH_AS(ridge::bench::append_csv_row(p.string(), "a,c", "7,8"), doctest::Contains("other columns"),
                         ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(ridge::bench::append_csv_row(p.string(), "a", "7"), doctest::Contains("other columns"),
                         ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(ridge::bench::append_csv_row(p.string(), "a,b,c", "7,8,9"), doctest::Contains("other columns"),
                         ridge::bench::UsageError);
    CHECK(slurp(p) == "a,b\n1,2\n3,4\n");
    // A writer killed in the middle of a row left no newline: the next row starts on its own line.
    std::ofstream(p, std::ios::app) << "5,";
    ridge::bench::append_csv_row(p.string(), "a,b", "6,7");
    CHECK(slurp(p) == "a,b\n1,2\n3,4\n5,\n6,7\n");
    // An empty file (touched by hand) gets the header.
    fs::path e = d / "empty.csv";
    std::ofstream{e};
    ridge::bench::append_csv_row(e.string(), "x", "1");
    CHECK(slurp(e) == "x\n1\n");
    CHECK(ridge::bench::csv_cell("AMD EPYC, 2 cores") == "\"AMD EPYC, 2 cores\"");
    CHECK(ridge::bench::csv_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(ridge::bench::csv_cell("plain") == "plain");
}

TEST_CASE("append_csv_rows: appenders at the same time keep every row") {
    // Each thread opens the file itself, as separate processes do: flock holds between them.
    fs::path p = fresh("threads") / "m.csv";
    constexpr int threads = 8, each = 60;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < each; ++i) ridge::bench::append_csv_row(p.string(), "thread,row", std::to_string(t) + "," + std::to_string(i));
        });
    for (auto& t : pool) t.join();
    std::vector<std::string> rows = rows_of(p);
    REQUIRE(rows.size() == size_t(1 + threads * each));
    CHECK(rows[0] == "thread,row");
    std::set<std::string> unique(rows.begin() + 1, rows.end());
    CHECK(unique.size() == size_t(threads * each));
    for (int t = 0; t < threads; ++t) CHECK(unique.count(std::to_string(t) + "," + std::to_string(each - 1)) == 1);
}

TEST_CASE("append_csv_rows keeps the ledger's mode, owner and hard links: it appends in place") {
    fs::path d = fresh("links");
    fs::path p = d / "m.csv", link = d / "link.csv";
    ridge::bench::append_csv_row(p.string(), "h", "1");
    REQUIRE(::chmod(p.c_str(), 0640) == 0);
    fs::create_hard_link(p, link);
    struct stat before, after;
    REQUIRE(::stat(p.c_str(), &before) == 0);
    ridge::bench::append_csv_row(p.string(), "h", "2");
    REQUIRE(::stat(p.c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);
    CHECK((after.st_mode & 07777) == 0640);
    CHECK(after.st_nlink == 2);
    CHECK(slurp(link) == "h\n1\n2\n");
    // Through a symlink: the file it names grows, the link stays a link.
    fs::path sym = d / "sym.csv";
    fs::create_symlink(p, sym);
    ridge::bench::append_csv_row(sym.string(), "h", "3");
    CHECK(fs::is_symlink(sym));
    CHECK(slurp(link) == "h\n1\n2\n3\n");
}

TEST_CASE("check_csv_ledger: refuses up front what append_csv_rows would fail on, creating nothing") {
    fs::path d = fresh("check");
    using ridge::bench::check_csv_ledger;
    CHECK_NOTHROW(check_csv_ledger((d / "new.csv").string(), "h"));
    CHECK_NOTHROW(check_csv_ledger((d / "a" / "b" / "new.csv").string(), "h"));
    CHECK(fs::is_empty(d));  // neither the file nor its folders, nor the probe
    CHECK_THROWS_WITH_AS(check_csv_ledger("/proc/x", "h"), doctest::Contains("'/proc/x'"), ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_csv_ledger(d.string(), "h"), doctest::Contains("it is a directory"), ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_csv_ledger("", "h"), doctest::Contains("empty"), ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_csv_ledger("/dev/null", "h"), doctest::Contains("not a regular file"),
                         ridge::bench::UsageError);
    fs::path file = d / "file";
    std::ofstream(file) << "h\n";
    CHECK_NOTHROW(check_csv_ledger(file.string(), "h"));
    CHECK_THROWS_WITH_AS(check_csv_ledger(file.string(), "other"), doctest::Contains("other columns"),
                         ridge::bench::UsageError);
    CHECK_THROWS_AS(check_csv_ledger((file / "under.csv").string(), "h"), ridge::bench::UsageError);
    fs::path fifo = d / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_AS(check_csv_ledger(fifo.string(), "h"), ridge::bench::UsageError);
    CHECK_THROWS_AS(ridge::bench::append_csv_row(fifo.string(), "h", "1"), ridge::bench::UsageError);
    if (::geteuid() != 0) {  // root writes anywhere
        fs::path ro = d / "ro";
        fs::create_directories(ro);
        fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
        CHECK_THROWS_AS(check_csv_ledger((ro / "x.csv").string(), "h"), ridge::bench::UsageError);
        fs::permissions(ro, fs::perms::owner_all);
    }
}

TEST_CASE("same_file: one inode, or one path once resolved") {
    fs::path d = fresh("same");
    fs::path a = d / "a.csv";
    std::ofstream(a) << "x\n";
    fs::create_directories(d / "sub");
    fs::create_symlink(a, d / "sym");
    fs::create_hard_link(a, d / "hard");
    using ridge::bench::same_file;
    CHECK(same_file(a.string(), a.string()));
    CHECK(same_file(a.string(), (d / "sub" / ".." / "a.csv").string()));
    CHECK(same_file(a.string(), (d / "sym").string()));
    CHECK(same_file(a.string(), (d / "hard").string()));
    CHECK(same_file((d / "new.csv").string(), (d / "." / "sub" / ".." / "new.csv").string()));
    CHECK(!same_file(a.string(), (d / "b.csv").string()));
    CHECK(!same_file((d / "new.csv").string(), (d / "new2.csv").string()));
}

TEST_CASE("ridge bench: six runs at once on one ledger keep all six rows") {
    fs::path d = fresh("bench6");
    fs::path ledger = d / "ledger.csv";
    spawn::Result first = spawn::run(tiny_bench({"--ledger", ledger.string(), "--format", "csv"}));
    REQUIRE_MESSAGE(first.code == 0, first.err);
    // A ledger with history (80,000 rows, 11 MB): rewriting it whole, as ridge once did, takes long
    // enough that runs finishing close together overwrote each other's rows (6 runs kept 1 here).
    std::vector<std::string> start = rows_of(ledger);
    REQUIRE(start.size() == 2);
    {
        std::ofstream f(ledger, std::ios::app);
        for (int i = 1; i < 80000; ++i) f << start[1] << "\n";
    }
    constexpr int runs = 6;
    std::vector<std::unique_ptr<spawn::Child>> children;
    for (int i = 0; i < runs; ++i)
        children.push_back(std::make_unique<spawn::Child>(
            tiny_bench({"--seed", std::to_string(i + 1), "--ledger", ledger.string(), "--format", "csv"})));
    for (auto& c : children) {
        spawn::Result r = c->wait();
        CHECK_MESSAGE(r.code == 0, r.err);
    }
    std::vector<std::string> rows = rows_of(ledger);
    REQUIRE(rows.size() == size_t(1 + 80000 + runs));
    CHECK(rows[0] == ridge::bench::ledger_header());
    CHECK(rows[0] == start[0]);
    ridge::bench::LedgerFile f = ridge::bench::read_ledger_file(ledger.string());
    REQUIRE(f.rows.size() == size_t(80000 + runs));
    std::set<std::string> seeds;
    for (size_t i = 0; i < f.rows.size(); ++i) {
        const ridge::bench::LedgerRecord& r = f.rows[i];
        CAPTURE(i);
        CHECK(r.get("net") == "resnet18");
        CHECK(r.get("device") == "cpu");
        CHECK(r.get("backend") == "reference");
        CHECK(r.get("mode") == "infer");
        CHECK(r.get("batch") == "1");
        CHECK(r.get("height") == "32");
        if (i >= 80000) seeds.insert(r.get("seed"));  // the six runs', after the history
    }
    CHECK(seeds == std::set<std::string>{"1", "2", "3", "4", "5", "6"});
}

TEST_CASE("ridge bench refuses an output that is the ledger, in one line, before running") {
    fs::path d = fresh("same_cli");
    fs::path ledger = d / "ledger.csv";
    spawn::Result first = spawn::run(tiny_bench({"--ledger", ledger.string(), "--format", "csv"}));
    REQUIRE_MESSAGE(first.code == 0, first.err);
    std::string kept = slurp(ledger);
    REQUIRE(spawn::lines(kept) == 2);
    fs::create_symlink(ledger, d / "sym.csv");
    fs::create_directories(d / "sub");
    for (const std::string& out :
         {ledger.string(), (d / "sym.csv").string(), (d / "sub" / ".." / "ledger.csv").string()}) {
        CAPTURE(out);
        check_refused(spawn::run(tiny_bench({"--out", out, "--ledger", ledger.string()})), "are the same file");
        check_refused(spawn::run(tiny_bench({"--json", out, "--ledger", ledger.string()})), "are the same file");
        CHECK(slurp(ledger) == kept);
    }
    // Neither exists yet, but both names lead to one file.
    check_refused(spawn::run(tiny_bench({"--out", (d / "x.csv").string(), "--ledger", (d / "sub" / ".." / "x.csv").string()})),
                  "are the same file");
    check_refused(spawn::run(tiny_bench({"--out", (d / "o").string(), "--json", (d / "o").string(), "--no-ledger"})),
                  "are the same file");
    CHECK(!fs::exists(d / "x.csv"));
    CHECK(!fs::exists(d / "o"));
}

TEST_CASE("ridge bench checks every destination before it runs, and writes nothing when one is wrong") {
    fs::path d = fresh("late");
    fs::path out = d / "o.json", ledger = d / "ledger.csv";
    check_refused(spawn::run(tiny_bench({"--out", out.string(), "--ledger", "/proc/x"})), "'/proc/x'");
    check_refused(spawn::run(tiny_bench({"--out", out.string(), "--json", "/proc/x/j.json", "--no-ledger"})),
                  "cannot write '/proc/x/j.json'");
    check_refused(spawn::run(tiny_bench({"--out", (d / "nodir" / "o.json").string(), "--ledger", ledger.string()})),
                  "does not exist");
    check_refused(spawn::run(tiny_bench({"--out", d.string(), "--ledger", ledger.string()})), "it is a directory");
    check_refused(spawn::run(tiny_bench({"--out", out.string(), "--ledger", d.string() + "/"})), "it is a directory");
    // A fifo that nothing reads would block the run's end forever: refused at the start.
    fs::path fifo = d / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    spawn::Options quick;
    quick.timeout_s = 60;
    check_refused(spawn::run(tiny_bench({"--out", fifo.string(), "--no-ledger"}), quick), "pipe that nothing reads");
    // A ledger with other columns is refused before the run, not after it.
    std::ofstream(ledger) << "some,other,columns\n1,2,3\n";
    check_refused(spawn::run(tiny_bench({"--out", out.string(), "--ledger", ledger.string()})), "other columns");
    CHECK(slurp(ledger) == "some,other,columns\n1,2,3\n");
    CHECK(!fs::exists(out));
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(d)) left.insert(e.path().filename().string());
    CHECK(left == std::set<std::string>{"fifo", "ledger.csv"});
}

TEST_CASE("the ledger's revision is the build's: ridge never runs git") {
    std::string rev = ridge::bench::build_revision();
    CHECK(std::regex_match(rev, std::regex("[0-9a-f]{12}(\\+dirty)?|unknown")));
    // A git first on PATH that leaves a mark if anything runs it.
    fs::path d = fresh("git");
    fs::path bin = d / "bin", mark = d / "git-ran";
    fs::create_directories(bin);
    std::ofstream(bin / "git") << "#!/bin/sh\ntouch '" << mark.string() << "'\necho 0123456789ab\n";
    fs::permissions(bin / "git", fs::perms::owner_all);
    spawn::Options o;
    o.env = {"PATH=" + bin.string() + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")};
    fs::path ledger = d / "ledger.csv";
    spawn::Result r = spawn::run(tiny_bench({"--ledger", ledger.string(), "--format", "json"}), o);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(!fs::exists(mark));
    std::vector<std::string> rows = rows_of(ledger);
    REQUIRE(rows.size() == 2);
    CHECK(ridge::bench::read_ledger_file(ledger.string()).rows.at(0).get("git") == rev);
    CHECK(r.out.find("\"git\": \"" + rev + "\"") != std::string::npos);
}

// The one schema: every kind of row has the same columns; older ledgers are read into them.
TEST_CASE("the ledger schema: every column documented in README with its unit") {
    std::string readme = slurp(fs::path(RIDGE_TEST_DATA) / ".." / ".." / "README.md");
    for (const ridge::bench::LedgerColumn& c : ridge::bench::ledger_columns()) {
        CAPTURE(c.name);
        std::string line = ridge::cat("| `", c.name, "` | ", c.unit.empty() ? std::string_view("") : c.unit, " |");
        if (c.unit.empty()) line = ridge::cat("| `", c.name, "` |  |");
        CHECK(readme.find(line) != std::string::npos);
    }
    ridge::bench::LedgerRow row;
    CHECK_THROWS_AS(row.set("no_such_column", "1"), std::logic_error);
    row.set("data", "a,\"b\"");
    CHECK(row.csv().find(",\"a,\"\"b\"\"\",") != std::string::npos);
}

TEST_CASE("older ledgers are read into the schema: the bench CPU ledger as ridge bench wrote it") {
    // Two rows of a real results/ledger.csv from before the schema (tests/data/compare/README.md).
    ridge::bench::LedgerFile f = ridge::bench::read_ledger_file(RIDGE_TEST_DATA "/compare/old_bench_cpu.csv");
    CHECK(f.format == ridge::bench::LedgerFormat::bench_cpu_v1);
    REQUIRE(f.rows.size() == 2);
    const ridge::bench::LedgerRecord& r = f.rows[0];
    CHECK(r.line == 2);
    CHECK(r.get("kind") == "bench");
    CHECK(r.get("precision") == "fp32");
    CHECK(r.get("net") == "shufflenet_v2_x1_0");  // was "model"
    CHECK(r.get("date") == "2026-11-22T16:42:06Z");
    CHECK(r.get("threads") == "2");
    CHECK(r.get("warmup_iters") == "3");   // was "warmup"
    CHECK(r.get("iters") == "20");         // was "repeat"
    CHECK(r.get("step_median_ms") == "0.16727");
    CHECK(r.get("step_min_ms") == "0.15867");
    CHECK(r.get("step_iqr_ms") == "0.0422418");
    CHECK(r.get("clock_mhz") == "2600");
    CHECK(r.get("onednn") == "2.6.3");
    CHECK(r.get("host").empty());  // not recorded then
    CHECK(r.get("flops_per_step").empty());
}

TEST_CASE("older ledgers: the GPU bench ledger's clock and memory are the GPU's; the train ledger's FLOPs") {
    std::string gpu =
        "date,git,model,device,backend,mode,precision,cuda_graph,batch,height,width,warmup,repeat,median_ms,min_ms,"
        "iqr_ms,images_per_s,gflops,bwd_fwd_time,update_ms,gpu,sms,clock_mhz,memory_clock_mhz,memory_bytes,driver,cuda,"
        "cudnn,cublas,cpu,compiler\n"
        "2026-01-01T00:00:00Z,abc,resnet50,cuda,cudnn,infer,tf32,1,64,224,224,3,20,20.5,20,0.4,3121.95,,0,0,"
        "\"NVIDIA H100, PCIe\",114,1755,1593,85000000000,550.54,12.4,9.1.0,12.4.5,AMD EPYC,g++ 12\n";
    ridge::bench::LedgerFile f = ridge::bench::parse_ledger(gpu, "gpu.csv");
    CHECK(f.format == ridge::bench::LedgerFormat::bench_cuda_v1);
    REQUIRE(f.rows.size() == 1);
    const ridge::bench::LedgerRecord& r = f.rows[0];
    CHECK(r.get("gpu") == "NVIDIA H100, PCIe");
    CHECK(r.get("gpu_sms") == "114");
    CHECK(r.get("gpu_clock_mhz") == "1755");
    CHECK(r.get("gpu_memory_clock_mhz") == "1593");
    CHECK(r.get("gpu_memory_bytes") == "85000000000");
    CHECK(r.get("clock_mhz").empty());
    CHECK(r.get("memory_bytes").empty());
    CHECK(r.get("precision") == "tf32");
    CHECK(r.get("cuda_graph") == "1");
    CHECK(r.get("kind") == "bench");

    // The training ledger before the schema: train_flops_per_step is now flops_per_step.
    std::string header;
    for (const char* c :
         {"label", "run", "runs", "started", "date", "git", "host", "device", "backend", "net", "batch", "height", "width",
          "precision", "iters", "warmup_iters", "workers", "threads", "data", "classes", "train_images", "lr", "momentum",
          "weight_decay", "seed", "elapsed_s", "images_per_s", "step_median_ms", "step_iqr_ms", "step_min_ms",
          "data_wait_share", "first_loss", "last_loss", "val_images", "val_top1", "undecodable", "wall_s", "user_s",
          "sys_s", "peak_rss_bytes", "peak_device_bytes", "planned_bytes", "predicted_train_bytes",
          "train_flops_per_step", "train_bytes_per_step", "gflops", "roof_peak_gflops", "roof_bandwidth_gbs",
          "roof_gflops", "roof_fraction", "os", "kernel", "cpu", "isa", "onednn_isa", "cores", "clock_mhz",
          "clock_max_mhz", "memory_bytes", "compiler", "onednn", "runtime_env", "gpu", "gpu_memory_bytes", "driver",
          "cuda", "cudnn", "cublas", "command"})
        header += (header.empty() ? "" : ",") + std::string(c);
    std::vector<std::string> cells(69);  // every field empty but three
    cells[0] = "r_run1";
    cells[43] = "123456";  // train_flops_per_step
    cells[44] = "789";     // train_bytes_per_step
    std::string row;
    for (size_t i = 0; i < cells.size(); ++i) row += (i ? "," : "") + cells[i];
    f = ridge::bench::parse_ledger(header + "\n" + row + "\n" + "cut,short\n", "metrics.csv");
    CHECK(f.format == ridge::bench::LedgerFormat::train_v2);
    REQUIRE(f.rows.size() == 1);
    CHECK(f.torn_rows == 1);
    CHECK(f.rows[0].get("label") == "r_run1");
    CHECK(f.rows[0].get("flops_per_step") == "123456");
    CHECK(f.rows[0].get("bytes_per_step") == "789");
    CHECK(f.rows[0].get("kind") == "train");
    CHECK(f.rows[0].get("mode") == "train");
}

TEST_CASE("a ledger of an unknown schema is refused in one line; appending to an older one says what it is") {
    CHECK_THROWS_WITH_AS(ridge::bench::parse_ledger("a,b\n1,2\n", "x.csv"), doctest::Contains("unknown schema"),
                         ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(ridge::bench::parse_ledger("", "x.csv"), doctest::Contains("empty"), ridge::bench::UsageError);
    fs::path d = fresh("old");
    fs::path old = d / "ledger.csv";
    fs::copy_file(RIDGE_TEST_DATA "/compare/old_bench_cpu.csv", old);
    std::string before = slurp(old);
    CHECK_THROWS_WITH_AS(ridge::bench::append_csv_row(old.string(), ridge::bench::ledger_header(), "x"),
                         doctest::Contains("older ridge bench CPU ledger"), ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(ridge::bench::check_csv_ledger(old.string(), ridge::bench::ledger_header()),
                         doctest::Contains("ridge compare still reads it"), ridge::bench::UsageError);
    CHECK(slurp(old) == before);
    spawn::Result r = spawn::run(tiny_bench({"--ledger", old.string()}));
    check_refused(r, "older ridge bench CPU ledger");
    CHECK(slurp(old) == before);
}

TEST_CASE("older ledgers: the one schema before its winograd and tail_loss columns keeps each row's kind") {
    // The current header less the two columns, a row of each kind.
    std::string header, bench_row, train_row;
    for (const ridge::bench::LedgerColumn& c : ridge::bench::ledger_columns()) {
        if (c.name == "winograd" || c.name == "tail_loss") continue;
        const bool first = header.empty();
        header += std::string(first ? "" : ",") + std::string(c.name);
        bench_row += (first ? "" : ",") + std::string(c.name == "kind" ? "bench" : c.name == "net" ? "resnet18" : "");
        train_row += (first ? "" : ",") + std::string(c.name == "kind" ? "train" : c.name == "last_loss" ? "0.25" : "");
    }
    ridge::bench::LedgerFile f = ridge::bench::parse_ledger(header + "\n" + bench_row + "\n" + train_row + "\n", "l.csv");
    CHECK(f.format == ridge::bench::LedgerFormat::schema_v1);
    REQUIRE(f.rows.size() == 2);
    CHECK(f.rows[0].get("kind") == "bench");
    CHECK(f.rows[0].get("net") == "resnet18");
    CHECK(f.rows[0].get("winograd").empty());
    CHECK(f.rows[1].get("kind") == "train");
    CHECK(f.rows[1].get("last_loss") == "0.25");
    CHECK(f.rows[1].get("tail_loss").empty());
    // ridge appends only in the current schema, and says so.
    fs::path old = scratch() / "schema_v1.csv";
    std::ofstream(old) << header << "\n" << bench_row << "\n";
    Run r = clitest::ridge("bench resnet18 --res 32 --backend reference --warmup 0 --repeat 1 --no-layers --quiet --ledger '" +
                           old.string() + "'");
    CHECK(r.code == 2);
    CHECK(r.err.find("before its winograd and tail_loss columns") != std::string::npos);
    CHECK(slurp(old) == header + "\n" + bench_row + "\n");
}

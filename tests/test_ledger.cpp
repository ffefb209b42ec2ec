// The ledgers: locked appends that keep every row when runs overlap and keep the file the user's
// (mode, hard links), destinations refused before any work, and the revision recorded with each
// row taken from the build, never from running git.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <regex>
#include <set>
#include <thread>

#include "bench/args.h"
#include "bench/env.h"
#include "bench/ledger.h"
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
    ridge::cli::append_csv_rows(p.string(), "a,b", {"1,2"});
    ridge::cli::append_csv_row(p.string(), "a,b", "3,4");
    CHECK(slurp(p) == "a,b\n1,2\n3,4\n");
    CHECK_THROWS_WITH_AS(ridge::cli::append_csv_row(p.string(), "a,c", "7,8"), doctest::Contains("other columns"),
                         ridge::cli::UsageError);
    CHECK_THROWS_WITH_AS(ridge::cli::append_csv_row(p.string(), "a", "7"), doctest::Contains("other columns"),
                         ridge::cli::UsageError);
    CHECK_THROWS_WITH_AS(ridge::cli::append_csv_row(p.string(), "a,b,c", "7,8,9"), doctest::Contains("other columns"),
                         ridge::cli::UsageError);
    CHECK(slurp(p) == "a,b\n1,2\n3,4\n");
    // A writer killed in the middle of a row left no newline: the next row starts on its own line.
    std::ofstream(p, std::ios::app) << "5,";
    ridge::cli::append_csv_row(p.string(), "a,b", "6,7");
    CHECK(slurp(p) == "a,b\n1,2\n3,4\n5,\n6,7\n");
    // An empty file (touched by hand) gets the header.
    fs::path e = d / "empty.csv";
    std::ofstream{e};
    ridge::cli::append_csv_row(e.string(), "x", "1");
    CHECK(slurp(e) == "x\n1\n");
    CHECK(ridge::cli::csv_cell("AMD EPYC, 2 cores") == "\"AMD EPYC, 2 cores\"");
    CHECK(ridge::cli::csv_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(ridge::cli::csv_cell("plain") == "plain");
}

TEST_CASE("append_csv_rows: appenders at the same time keep every row") {
    // Each thread opens the file itself, as separate processes do: flock holds between them.
    fs::path p = fresh("threads") / "m.csv";
    constexpr int threads = 8, each = 60;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < each; ++i) ridge::cli::append_csv_row(p.string(), "thread,row", std::to_string(t) + "," + std::to_string(i));
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
    ridge::cli::append_csv_row(p.string(), "h", "1");
    REQUIRE(::chmod(p.c_str(), 0640) == 0);
    fs::create_hard_link(p, link);
    struct stat before, after;
    REQUIRE(::stat(p.c_str(), &before) == 0);
    ridge::cli::append_csv_row(p.string(), "h", "2");
    REQUIRE(::stat(p.c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);
    CHECK((after.st_mode & 07777) == 0640);
    CHECK(after.st_nlink == 2);
    CHECK(slurp(link) == "h\n1\n2\n");
    // Through a symlink: the file it names grows, the link stays a link.
    fs::path sym = d / "sym.csv";
    fs::create_symlink(p, sym);
    ridge::cli::append_csv_row(sym.string(), "h", "3");
    CHECK(fs::is_symlink(sym));
    CHECK(slurp(link) == "h\n1\n2\n3\n");
}

TEST_CASE("check_csv_ledger: refuses up front what append_csv_rows would fail on, creating nothing") {
    fs::path d = fresh("check");
    using ridge::cli::check_csv_ledger;
    CHECK_NOTHROW(check_csv_ledger((d / "new.csv").string(), "h"));
    CHECK_NOTHROW(check_csv_ledger((d / "a" / "b" / "new.csv").string(), "h"));
    CHECK(fs::is_empty(d));  // neither the file nor its folders, nor the probe
    CHECK_THROWS_WITH_AS(check_csv_ledger("/proc/x", "h"), doctest::Contains("'/proc/x'"), ridge::cli::UsageError);
    CHECK_THROWS_WITH_AS(check_csv_ledger(d.string(), "h"), doctest::Contains("it is a directory"), ridge::cli::UsageError);
    CHECK_THROWS_WITH_AS(check_csv_ledger("", "h"), doctest::Contains("empty"), ridge::cli::UsageError);
    CHECK_THROWS_WITH_AS(check_csv_ledger("/dev/null", "h"), doctest::Contains("not a regular file"),
                         ridge::cli::UsageError);
    fs::path file = d / "file";
    std::ofstream(file) << "h\n";
    CHECK_NOTHROW(check_csv_ledger(file.string(), "h"));
    CHECK_THROWS_WITH_AS(check_csv_ledger(file.string(), "other"), doctest::Contains("other columns"),
                         ridge::cli::UsageError);
    CHECK_THROWS_AS(check_csv_ledger((file / "under.csv").string(), "h"), ridge::cli::UsageError);
    fs::path fifo = d / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_AS(check_csv_ledger(fifo.string(), "h"), ridge::cli::UsageError);
    CHECK_THROWS_AS(ridge::cli::append_csv_row(fifo.string(), "h", "1"), ridge::cli::UsageError);
    if (::geteuid() != 0) {  // root writes anywhere
        fs::path ro = d / "ro";
        fs::create_directories(ro);
        fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
        CHECK_THROWS_AS(check_csv_ledger((ro / "x.csv").string(), "h"), ridge::cli::UsageError);
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
    using ridge::cli::same_file;
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
    CHECK(rows.size() == size_t(1 + 80000 + runs));
    CHECK(rows[0] == start[0]);
    for (size_t i = 1; i < rows.size(); ++i)
        if (rows[i].find(",resnet18,cpu,reference,infer,1,32,32,") == std::string::npos) FAIL_CHECK("row " << i << ": " << rows[i]);
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
    std::string rev = ridge::cli::build_revision();
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
    CHECK(rows[1].substr(rows[1].find(',') + 1).starts_with(rev + ","));
    CHECK(r.out.find("\"git\": \"" + rev + "\"") != std::string::npos);
}

// Generated hostile input, thousands of cases per run: argument vectors for every command (flags,
// values, hostile paths, huge numbers, empty strings, unicode, control bytes) and malformed chip
// files. Every case must end on its own (no signal, no hang: each run is killed past its time
// limit), and every refusal must be one line on stderr, nothing on stdout, exit 2, with nothing
// left in the folder the run writes to.
//
// The generator is seeded: the same cases run every time (RIDGE_FUZZ_SEED picks others,
// RIDGE_FUZZ_SCALE multiplies the counts), and a failing case is printed whole. Commands that do
// long work (bench, report, train, profile, roofline measure) always get an argument that makes
// them refuse before any work, placed where nothing after it can take it back; roofline place never
// gets `--chip this` (which measures the machine).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <typeinfo>

#include "bench/format.h"
#include "cli.h"
#include "cli/bench_cmd.h"
#include "cli/net_arg.h"
#include "cli/report_cmd.h"
#include "json.h"
#include "roofline/chips.h"
#include "spawn.h"

using namespace clitest;

namespace {

// A whole number from least to most, or the run stops with one line: stoull read
// RIDGE_FUZZ_SCALE=0.5 as 0, and the test then passed without running a case; a scale past 107374
// wraps the counts (int(20000 * scale)) the same way.
uint64_t env_number(const char* name, uint64_t fallback, uint64_t least, uint64_t most) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end || errno || !std::isdigit(static_cast<unsigned char>(v[0])) || n < least || n > most) {
        std::fprintf(stderr, "test_fuzz: %s=%s is not a whole number from %llu to %llu\n", name, v,
                     static_cast<unsigned long long>(least), static_cast<unsigned long long>(most));
        std::exit(2);
    }
    return n;
}
const uint64_t seed = env_number("RIDGE_FUZZ_SEED", 20261122, 0, UINT64_MAX - 3);  // seed + 3 is used
const uint64_t scale = env_number("RIDGE_FUZZ_SCALE", 1, 1, 10000);

// The runs of ridge, sanitized: the first half of the same generated cases. A sanitized ridge
// starts in ~60 ms of CPU against under 10 (ASan registers 180,000 globals, 155,000 of them
// UBSan's check records), and its 1800 runs made test_fuzz 280 s of CI's sanitized 443 s of tests
// under ctest -j2 (2-core Zen 5, 2026-12-01). The Release build runs every case for exits,
// messages and files; the in-process fuzz of the parser and the chip-file reader runs in full
// under the sanitizers.
#ifdef RIDGE_SANITIZED
constexpr int spawned_share = 2;
#else
constexpr int spawned_share = 1;
#endif

struct Gen {
    std::mt19937_64 rng;
    explicit Gen(uint64_t s) : rng(s) {}
    size_t below(size_t n) { return size_t(rng() % n); }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    template <class T>
    const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
};

// Text that is hard on a parser or a terminal.
std::string hostile_text(Gen& g) {
    static const std::vector<std::string> pool = {
        "", " ", "-", "--", "---", "=", ",", ",,", "x", "\xc3\xa9", "r\xc3\xa9sum\xc3\xa9", "\xe7\xbd\x91\xe7\xbb\x9c",
        "\xf0\x9f\x98\x80", "\xff\xfe", "\xc0\xaf", "\xed\xa0\x80", "\x1b[31m", "\x1b]0;title\x07", "\r", "\n", "a\nb",
        "\t", std::string("nul\0byte", 8), "\x7f", "\xc2\x9b" "2J", "%s%n%x", "$(touch PWNED)", "`touch PWNED`",
        "';touch PWNED;'", "\"", "'", "\\", "*", "?", "~", "..", ".", "/", "//", std::string(5000, 'A'),
        "\xe2\x80\xae" "gnp.exe", "NaN", "inf", "-inf", "null", "true", "{}", "[]"};
    std::string s = g.pick(pool);
    if (g.chance(0.3)) s += g.pick(pool);
    return s;
}

std::string number_text(Gen& g) {
    static const std::vector<std::string> pool = {
        "0", "1", "2", "3", "7", "8", "16", "32", "33", "64", "224", "255", "-1", "-0", "+1", "01", "1.5", "1e3", "0x10",
        " 1", "1 ", "1,2", "1,,2", ",1", "1,", "2,2", "1,2,3,4,5,6,7,8", "4096", "65536", "1000000", "2147483647",
        "2147483648", "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551616",
        "99999999999999999999999999", "-9223372036854775808", "\xef\xbc\x91", "\xd9\xa1", "1x1", "32x32", "224x224",
        "0x0", "1x", "x1", "16x9999999", "99999x99999", "3x-3", "32X32", "nan", "inf"};
    return g.pick(pool);
}

struct Paths {
    fs::path root;  // the runs' working folder; everything they may write lands here
    std::vector<std::string> pool;
};

// Destinations: new names, names of things already there (a folder, a fifo nobody reads, a
// symlink loop), impossible places, and names with spaces, quotes and shell syntax.
Paths make_paths(const std::string& name) {
    Paths p;
    p.root = scratch() / name;
    fs::remove_all(p.root);
    fs::create_directories(p.root / "dir");
    std::ofstream(p.root / "existing.txt") << "keep\n";
    std::ofstream(p.root / "chips.csv") << slurp(RIDGE_CHIPS_CSV);
    std::ofstream(p.root / "peaks.csv") << slurp(ridge::roofline::peaks_path(RIDGE_CHIPS_CSV));
    ::mkfifo((p.root / "fifo").c_str(), 0600);
    fs::create_symlink("loop_b", p.root / "loop_a");
    fs::create_symlink("loop_a", p.root / "loop_b");
    fs::create_symlink("nowhere/x", p.root / "dangling");
    fs::create_symlink("existing.txt", p.root / "link.txt");
    p.pool = {"out.txt", "o.json", "new dir/with space.txt", "dir", "dir/", "dir/inner.csv", "existing.txt", "fifo",
              "loop_a", "dangling", "link.txt", "missing/x.txt", "existing.txt/x", "chips.csv", "./o.csv",
              "dir/../o2.csv", "it's \"quoted\" $(x) `y`.txt", "-", "", "/proc/x", "/proc/x/y", "/dev/full",
              "/dev/null", "/nonexistent/dir/file", "/", "\xe7\xbd\x91.txt", "\x1b[2J.txt", "a\nb.txt",
              std::string(300, 'n') + ".txt", "results/ledger.csv"};
    return p;
}

struct Snapshot {
    std::map<std::string, std::pair<uintmax_t, int64_t>> files;  // relative path: size, mtime (ns)
    bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const fs::path& root) {
    Snapshot s;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        struct stat st;
        if (::lstat(it->path().c_str(), &st) != 0) continue;
        // A folder's own size and time move when a file is tried in it and removed: not compared.
        bool dir = S_ISDIR(st.st_mode);
        s.files[it->path().lexically_relative(root).string()] = {
            dir ? 0 : uintmax_t(st.st_size), dir ? 0 : int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    }
    return s;
}

const std::vector<std::string> nets = {"resnet18", "mobilenet_v2", "vit_b_16", "googlenet", "squeezenet1_0",
                                       "efficientnet_b7", "inception_v3", "alexnet", "densenet121", "resnet5",
                                       "RESNET18", "nosuchnet"};
const std::vector<std::string> layers = {"conv1", "layer3.0.conv2", "fc", "features.0", "classifier", "encoder",
                                         "nosuch", "layer1.0"};
const std::vector<std::string> options = {
    "--batch", "--res", "--dtype", "--format", "--out", "--layers", "--device", "--backend", "--precision",
    "--cuda-graph", "--mode", "--threads", "--warmup", "--repeat", "--no-layers", "--seed", "--json", "--ledger",
    "--no-ledger", "--quiet", "--kind", "--chips", "--chip", "--level", "--quick", "--nets", "--batches",
    "--train-batch", "--layer-net", "--full", "--help", "-h", "--", "-", "--frob", "-x", "--batch=", "--out=",
    "--format=json", "--res=32", "--chip=h100", "--dtype=bf16", "--sparse", "--precision=int8"};
const std::map<std::string, std::vector<std::string>> choices = {
    {"--format", {"table", "csv", "json", "xml", "JSON", ""}},
    {"--dtype", {"fp32", "fp16", "bf16", "tf32", "int8", "fp64"}},
    {"--device", {"cpu", "cuda", "gpu", "tpu"}},
    {"--backend", {"onednn", "reference", "cudnn", "magic"}},
    {"--precision", {"fp32", "tf32", "fp16", "bf16", "fp64", "fp8", "int8", "fp4"}},
    {"--mode", {"infer", "train", "fly"}},
    {"--kind", {"cpu", "gpu", "asic", "soc", "fpga", "tpu"}},
    {"--chip", {"h100", "H100", "nvidia", "TPU v4", "Apple M1", "a100", "", "nosuch chip", "epyc"}},
    {"--level", {"dram", "l1", "l2", "l3", "l4"}}};

std::string value_for(Gen& g, const std::string& opt, const Paths& paths) {
    if (opt == "--out" || opt == "--json" || opt == "--ledger" || opt == "--chips") {
        if (opt == "--chips" && g.chance(0.3)) return g.pick(std::vector<std::string>{"chips.csv", "/dev/zero", "fifo"});
        return g.pick(paths.pool);
    }
    if (auto it = choices.find(opt); it != choices.end() && g.chance(0.7)) return g.pick(it->second);
    if (opt == "--nets" || opt == "--layer-net") return g.chance(0.5) ? g.pick(nets) : g.pick(nets) + "," + g.pick(nets);
    int r = int(g.below(10));
    return r < 6 ? number_text(g) : r < 8 ? hostile_text(g) : g.pick(paths.pool);
}

struct Case {
    std::vector<std::string> args;  // after the program name
    bool may_run = true;            // false: a refusal argument was placed first
    std::string format;             // the --format asked for, when the test knows it
};

// A command, its positionals, then options and values; commands that work long get a refusal.
Case make_case(Gen& g, const Paths& paths) {
    Case c;
    std::vector<std::string>& a = c.args;
    int kind = int(g.below(16));
    switch (kind) {
        case 0: a = {"list"}; break;
        case 1: case 2: a = {"summary", g.pick(nets)}; break;
        case 3: a = {"zoo"}; break;
        case 4: a = {"explain", g.pick(nets), g.pick(layers)}; break;
        case 5: case 6: a = {"roofline", "chips"}; break;
        case 7: case 8: a = {"roofline", "place", g.pick(nets)}; break;
        case 9: a = {"bench", "--repeat", "0", g.pick(nets)}; c.may_run = false; break;
        case 10: a = {"report", "--frob"}; c.may_run = false; break;
        case 11: a = {"roofline", "measure", "--threads", "0"}; c.may_run = false; break;
        case 13: a = {"train", "--frob", g.pick(nets)}; c.may_run = false; break;
        case 14: a = {"profile", "--frob", g.pick(nets)}; c.may_run = false; break;
        case 12: a = {g.chance(0.5) ? "roofline" : g.pick(std::vector<std::string>{"", "lst", "-h", "help", "--version", "\x1b[31m"})}; break;
        default: a = {}; break;
    }
    if (kind == 15 && g.chance(0.5)) return c;
    int n = int(g.below(7));
    for (int i = 0; i < n; ++i) {
        int r = int(g.below(10));
        if (r < 7) {
            std::string opt = g.pick(options);
            a.push_back(opt);
            if (g.chance(0.9) && opt.starts_with("--") && opt.find('=') == std::string::npos) a.push_back(value_for(g, opt, paths));
        } else if (r < 8) {
            a.push_back(g.pick(options) + "=" + value_for(g, "--out", paths));
        } else if (r < 9) {
            a.push_back(hostile_text(g));
        } else {
            a.push_back(number_text(g));
        }
    }
    // --chip this measures the machine for seconds: never generated, not even through '='.
    for (std::string& s : a)
        if (s == "this" || s == "--chip=this") s = "h100";
    return c;
}

std::string shown(const std::vector<std::string>& a) {
    std::string s = "ridge";
    for (const std::string& x : a) s += " '" + ridge::bench::printable(x) + "'";
    return s;
}

bool clean_text(const std::string& s) {
    for (char c : s)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) return false;
    return true;
}

struct Tally {
    std::map<int, int> codes;
    int runs = 0;
};

// Checks what every run must hold: it ended on its own with 0, 2 or 3, nothing raw reached the
// terminal, and a refusal is one line on stderr, nothing on stdout and nothing changed in its folder.
void check_result(const Case& c, const spawn::Result& r, const Snapshot& before, const Paths& paths, Tally& tally) {
    ++tally.runs;
    ++tally.codes[r.signal ? -r.signal : r.timed_out ? -1000 : r.code];
    std::string what = shown(c.args);
    CAPTURE(what);
    CHECK_MESSAGE(!r.timed_out, "hung: " << what);
    CHECK_MESSAGE(r.signal == 0, "killed by signal " << r.signal << ": " << what << "\n" << r.err);
    CHECK_MESSAGE((r.code == 0 || r.code == 2 || r.code == 3), "exit " << r.code << ": " << what << "\n" << r.err);
    CHECK_MESSAGE(clean_text(r.err), "raw control bytes on stderr: " << what);
    if (r.code == 0) {
        CHECK_MESSAGE(clean_text(r.out), "raw control bytes on stdout: " << what);
        if (c.format == "json") CHECK_NOTHROW(testjson::parse(r.out));
    } else {
        CHECK_MESSAGE(spawn::lines(r.err) == 1, "stderr is not one line: " << what << "\n" << r.err);
        CHECK_MESSAGE(r.out.empty(), "stdout on a refusal: " << what);
        CHECK_MESSAGE(snapshot(paths.root) == before, "a refusal changed the folder: " << what);
    }
    if (!c.may_run) {
        // A refusal placed first: only a help request or a missing device may end otherwise.
        bool help = std::find(c.args.begin(), c.args.end(), "--help") != c.args.end() ||
                    std::find(c.args.begin(), c.args.end(), "-h") != c.args.end();
        CHECK_MESSAGE((r.code == 2 || r.code == 3 || (help && r.code == 0)), "ran: " << what);
    }
}

// Puts the working folder back as make_paths left it: whatever a successful run wrote is removed.
void restore(const Paths& paths, const Snapshot& pristine) {
    for (const auto& [rel, meta] : snapshot(paths.root).files)
        if (!pristine.files.count(rel)) fs::remove_all(paths.root / rel);
    std::ofstream(paths.root / "existing.txt") << "keep\n";
    std::ofstream(paths.root / "chips.csv") << slurp(RIDGE_CHIPS_CSV);
    std::ofstream(paths.root / "peaks.csv") << slurp(ridge::roofline::peaks_path(RIDGE_CHIPS_CSV));
}

// Runs generated cases, one per worker folder at a time so both cores stay busy while each run's
// writes land in a folder of its own. Always the same cases, however loaded the machine: a run is
// killed after 30 s (a hang fails its case), and ctest's TIMEOUT bounds the whole test.
template <class MakeCase>
std::string drive(const std::string& name, int cases, MakeCase make) {
    const int workers = 2;
    std::vector<Paths> roots;
    std::vector<Snapshot> pristine;
    for (int w = 0; w < workers; ++w) {
        roots.push_back(make_paths(name + "." + std::to_string(w)));
        pristine.push_back(snapshot(roots.back().root));
    }
    Tally tally;
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    int done = 0;
    while (done < cases) {
        std::vector<Case> batch;
        std::vector<Snapshot> before;
        std::vector<std::unique_ptr<spawn::Child>> runs;
        for (int w = 0; w < workers && done < cases; ++w, ++done) {
            batch.push_back(make(roots[size_t(w)]));
            before.push_back(snapshot(roots[size_t(w)].root));
            std::vector<std::string> argv = {RIDGE_CLI};
            argv.insert(argv.end(), batch.back().args.begin(), batch.back().args.end());
            spawn::Options o;
            o.cwd = roots[size_t(w)].root.string();
            o.timeout_s = 30;
            // Every eighth run starts as a user's does. The others skip two costs of a sanitized
            // start that the checks here do not need: ridge's second start to choose how OpenMP
            // threads wait (bench/omp_wait.h; skipped when GOMP_SPINCOUNT is set) and LeakSanitizer's
            // scan at exit (the last detect_leaks in ASAN_OPTIONS wins), so a leak on some path shows
            // in one run of eight. Sanitized on the 2-core Zen 5, the 300 chip-file runs took 53 s
            // with both and 20 s without.
            if (done % 8 != 0) {
                const char* asan = std::getenv("ASAN_OPTIONS");
                o.env = {"GOMP_SPINCOUNT=2000", std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":detect_leaks=0"};
            }
            runs.push_back(std::make_unique<spawn::Child>(argv, o));
        }
        for (size_t w = 0; w < runs.size(); ++w) {
            spawn::Result r = runs[w]->wait();
            check_result(batch[w], r, before[w], roots[w], tally);
            restore(roots[w], pristine[w]);
        }
    }
    std::string codes;
    for (const auto& [code, n] : tally.codes) codes += " " + std::to_string(code) + ":" + std::to_string(n);
    return std::to_string(done) + " runs in " + std::to_string(int(elapsed())) +
           " s; exit codes (negative: a signal)" + codes;
}

// ---- chip files -------------------------------------------------------------------------------

std::string mutate(Gen& g, std::string text) {
    static const std::vector<std::string> cells = {
        "", "0", "-1", "nan", "inf", "-inf", "1e309", "1e-320", "0x1p4", "1e300", "1e-300", "\xef\xbc\x91\xef\xbc\x92",
        "1,5", "\"", "\"\"", "\"a\"\"b\"", "gpu", "cpu", "tpu", "1969", "2101", "2022", "99999999999999999999",
        "http://x", "ftp://x", "\x1b[31m", "\xc2\x85", "\xff", "a\rb", " ", "#"};
    int steps = 1 + int(g.below(4));
    for (int s = 0; s < steps; ++s) {
        size_t at = text.empty() ? 0 : g.below(text.size() + 1);
        switch (g.below(12)) {
            case 0: if (!text.empty() && at < text.size()) text[at] = char(g.below(256)); break;
            case 1: text.insert(at, 1, char(g.below(32))); break;
            case 2: text.insert(at, hostile_text(g)); break;
            case 3: text.erase(at, g.below(200)); break;
            case 4: text.resize(at); break;
            case 5: text.insert(at, g.chance(0.5) ? "," : "\""); break;
            case 6: text.insert(at, g.pick(cells)); break;
            case 7: {  // a cell replaced
                size_t comma = text.find(',', at);
                if (comma == std::string::npos) break;
                size_t end = text.find_first_of(",\n", comma + 1);
                text.replace(comma + 1, (end == std::string::npos ? text.size() : end) - comma - 1, g.pick(cells));
                break;
            }
            case 8: {  // a line doubled (duplicate names, a second header)
                size_t b = text.rfind('\n', at == 0 ? 0 : at - 1), e = text.find('\n', at);
                b = b == std::string::npos ? 0 : b + 1;
                text.insert(b, text.substr(b, (e == std::string::npos ? text.size() : e + 1) - b));
                break;
            }
            case 9: text.insert(0, "\xEF\xBB\xBF"); break;
            case 10: {  // CRLF endings
                std::string crlf;
                for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
                text = crlf;
                break;
            }
            default: text.insert(at, std::string(g.chance(0.1) ? 20000 : 300, char('a' + g.below(26)))); break;
        }
    }
    return text;
}

// A chips file and the peaks file read beside it.
struct Database {
    std::string chips, peaks;
};

Database full_database() {
    return {slurp(RIDGE_CHIPS_CSV), slurp(ridge::roofline::peaks_path(RIDGE_CHIPS_CSV))};
}

// The first four chips and their peaks: small files, so a mutation is a larger part of them.
Database small_database() {
    Database full = full_database(), small;
    std::vector<std::string> names;
    std::istringstream chips(full.chips), peaks(full.peaks);
    std::string line;
    bool header = false;
    while (std::getline(chips, line) && names.size() < 4) {
        small.chips += line + "\n";
        if (line.starts_with("#")) continue;
        if (header) names.push_back(line.substr(0, line.find(',')));
        header = true;
    }
    header = false;
    while (std::getline(peaks, line)) {
        bool keep = line.starts_with("#") || !header;
        if (!line.starts_with("#")) header = true;
        for (const std::string& n : names) keep = keep || line.starts_with(n + ",");
        if (keep) small.peaks += line + "\n";
    }
    return small;
}

// One or both files of a database mutated.
Database mutate(Gen& g, Database d) {
    switch (g.below(3)) {
        case 0: d.chips = mutate(g, d.chips); break;
        case 1: d.peaks = mutate(g, d.peaks); break;
        default: d.chips = mutate(g, d.chips); d.peaks = mutate(g, d.peaks); break;
    }
    return d;
}

}  // namespace

TEST_CASE("fuzz: the argument parser and its typed readers, in process: a value or one UsageError") {
    Gen g(seed + 3);
    Paths paths = make_paths("fuzz_parse");
    int parsed = 0, refused = 0, built = 0;
    const int cases = int(20000 * scale);
    for (int i = 0; i < cases; ++i) {
        const ridge::cli::Command& cmd = g.chance(0.7) ? ridge::cli::bench_cmd : ridge::cli::report_cmd;
        // Mostly the command's own options with values of their kind, some of anything.
        std::vector<std::string> args;
        if (g.chance(0.8)) args.push_back(g.pick(nets));
        for (int n = int(g.below(8)); n > 0; --n) {
            if (g.chance(0.15)) {
                args.push_back(g.chance(0.5) ? hostile_text(g) : g.pick(options));
                continue;
            }
            const ridge::cli::Option& o = cmd.options[g.below(cmd.options.size())];
            std::string name(o.name);
            if (o.value.empty() || g.chance(0.03)) {
                args.push_back(name);
            } else if (g.chance(0.1)) {
                args.push_back(name + "=" + value_for(g, name, paths));
            } else {
                args.push_back(name);
                args.push_back(value_for(g, name, paths));
            }
        }
        CAPTURE(i);
        // Each reader either returns or throws one UsageError; anything else is a defect.
        auto read = [&](auto&& f) {
            try {
                f();
                return true;
            } catch (const ridge::bench::UsageError& e) {
                ++refused;
                CHECK(std::string(e.what()).starts_with("ridge "));
                return false;
            } catch (const ridge::CountOverflow&) {
                return false;
            } catch (const std::exception& e) {
                FAIL(shown(args) << ": " << typeid(e).name() << ": " << ridge::bench::printable(e.what()));
                return false;
            }
        };
        ridge::cli::Args a;
        if (!read([&] { a = ridge::cli::parse(cmd, args); }) || a.help) continue;
        ++parsed;
        for (const ridge::cli::Option& o : cmd.options) {
            read([&] { a.positive(o.name, 1, int64_t(1) << 40); });
            read([&] { a.non_negative(o.name, 0, 100000); });
            read([&] { a.positive_list(o.name, {1}, ridge::cli::max_batch); });
            read([&] { a.choice(o.name, "infer", {"infer", "train"}); });
        }
        read([&] { a.dtype(); });
        if (a.has("--res")) read([&] { a.resolution(ridge::cli::max_res); });
        if (cmd.positionals == 1 && read([&] { ridge::cli::net_arg(a); }))
            built += read([&] { ridge::cli::build_for(a, ridge::cli::net_arg(a), 1); });
    }
    MESSAGE("seed " << seed + 3 << ": " << cases << " argument vectors, " << parsed << " parsed, " << refused
                    << " refusals from the readers, " << built << " nets built");
    CHECK(parsed > 0);
    CHECK(built > 0);
}

TEST_CASE("fuzz: the chip-file parser refuses malformed files with one clean line, or returns clean chips") {
    Gen g(seed);
    const Database full = full_database(), small = small_database();
    int parsed = 0, refused = 0;
    const int cases = int(20000 * scale);
    for (int i = 0; i < cases; ++i) {
        Database d = mutate(g, g.chance(0.5) ? small : full);
        try {
            std::vector<ridge::roofline::Chip> chips = ridge::roofline::parse_chips(d.chips, "fuzz.csv", d.peaks, "peaks.csv");
            ++parsed;
            for (const auto& c : chips) {
                for (const std::string* s : {&c.name, &c.vendor, &c.mem_type, &c.source, &c.mem_source, &c.notes})
                    CHECK_MESSAGE(ridge::bench::printable(*s) == *s, "case " << i << ": a field with raw bytes");
                for (const auto& k : c.peaks) {
                    for (const std::string* s : {&k.derivation, &k.engine, &k.source, &k.notes})
                        CHECK_MESSAGE(ridge::bench::printable(*s) == *s, "case " << i << ": a peak field with raw bytes");
                    CHECK((std::isfinite(k.tflops) && k.tflops > 0));
                }
            }
        } catch (const ridge::roofline::ChipFileError& e) {
            ++refused;
            std::string m = e.what();
            CHECK_MESSAGE(ridge::bench::printable(m) == m, "case " << i << ": " << ridge::bench::printable(m));
            CHECK((m.starts_with("fuzz.csv:") || m.starts_with("peaks.csv:")));
        } catch (const std::exception& e) {
            FAIL("case " << i << ": " << typeid(e).name() << ": " << ridge::bench::printable(e.what()));
        }
    }
    MESSAGE("seed " << seed << ": " << cases << " mutated chip files, " << parsed << " parsed, " << refused << " refused");
    CHECK(parsed > 0);
    CHECK(refused > 0);
}

TEST_CASE("fuzz: roofline chips and place on malformed chip files") {
    Gen g(seed + 1);
    const Database full = full_database(), small = small_database();
    const std::vector<std::string> formats = {"table", "csv", "json"};
    std::string summary = drive("fuzz_chips", int(300 * scale) / spawned_share, [&](const Paths& paths) {
        // In a folder of its own: the peaks file is read from beside the chips file.
        Database d = mutate(g, g.chance(0.5) ? small : full);
        fs::create_directories(paths.root / "mutated");
        std::ofstream(paths.root / "mutated" / "chips.csv", std::ios::binary | std::ios::trunc) << d.chips;
        std::ofstream(paths.root / "mutated" / "peaks.csv", std::ios::binary | std::ios::trunc) << d.peaks;
        Case c;
        c.format = g.pick(formats);
        c.args = g.chance(0.6) ? std::vector<std::string>{"roofline", "chips", "--chips", "mutated/chips.csv", "--format", c.format}
                               : std::vector<std::string>{"roofline", "place", "resnet18", "--chip",
                                                          g.pick(choices.at("--chip")), "--chips", "mutated/chips.csv",
                                                          "--format", c.format};
        return c;
    });
    MESSAGE("seed " << seed + 1 << ", mutated chip files: " << summary);
}

TEST_CASE("fuzz: generated command lines end on their own, and every refusal is one line, exit 2, nothing written") {
    Gen g(seed + 2);
    std::string summary =
        drive("fuzz_argv", int(1500 * scale) / spawned_share, [&](const Paths& paths) { return make_case(g, paths); });
    MESSAGE("seed " << seed + 2 << ", command lines: " << summary);
}

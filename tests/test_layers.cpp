// The house's layers: every #include "..." from one of the project's folders to another points
// down the rank table below (a folder includes only folders of lower rank, so two folders of one
// rank never include each other and no cycle can form), and every folder's CMakeLists.txt builds
// only that folder's own sources. The table is the architecture: a change that needs an include
// upwards has to change the table here, in plain sight, with README's Layout section.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Ranked from the actual includes: engine is the vocabulary everything speaks; kernels, netdefs
// and the chip database use only the engine; the executors sit on the kernels, the probes on the
// kernels' checked-call macro; bench times executors; profile and train sit on bench (its
// environment, statistics, formats and ledgers); report on everything it studies; the command
// line on top. A subfolder belongs to the longest folder named here.
const std::map<std::string, int> ranks = {
    {"engine", 0},
    {"kernels", 1},  {"netdefs", 1},  {"roofline", 1},
    {"engine/backend", 2},  {"roofline/probes", 2},
    {"bench", 3},  {"train/data", 3},
    {"profile", 4},  {"train", 4},
    {"report", 5},
    {"cli", 6},
};

// Headers the build writes (build/generated/), not in the tree.
const std::set<std::string> generated = {"ridge_revision.h"};

// The folder of `ranks` a path (relative to the tree) belongs to; "" for none.
std::string layer_of(const std::string& path) {
    std::string best;
    for (const auto& [folder, rank] : ranks)
        if (path.rfind(folder + "/", 0) == 0 && folder.size() > best.size()) best = folder;
    return best;
}

bool is_source(const fs::path& p) {
    std::string e = p.extension().string();
    return e == ".h" || e == ".cpp" || e == ".cu" || e == ".cuh";
}

std::string read(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct Include {
    std::string from, to;  // paths relative to the tree
};

// Every #include "..." of the project's sources, resolved as the compiler does (the tree's root
// is the include path; a name beside the including file also resolves). Names that resolve
// nowhere and are not generated are returned in `unresolved`, so an include the parser cannot
// place fails the test rather than being skipped.
struct Includes {
    std::vector<std::string> files;
    std::vector<Include> edges;
    std::vector<std::string> unresolved;
};

Includes scan(const fs::path& root) {
    static const std::regex include_line(R"re(^[ \t]*#[ \t]*include[ \t]*"([^"]+)")re");
    Includes in;
    for (const auto& [folder, rank] : ranks) {
        if (folder.find('/') != std::string::npos || !fs::is_directory(root / folder)) continue;
        for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
            if (!e.is_regular_file() || !is_source(e.path())) continue;
            std::string from = fs::relative(e.path(), root).generic_string();
            in.files.push_back(from);
            std::istringstream text(read(e.path()));
            std::string line;
            std::smatch m;
            while (std::getline(text, line)) {
                if (!std::regex_search(line, m, include_line)) continue;
                std::string name = m[1];
                if (fs::exists(root / name)) in.edges.push_back({from, fs::path(name).lexically_normal().generic_string()});
                else if (fs::exists(e.path().parent_path() / name))
                    in.edges.push_back({from, fs::relative(e.path().parent_path() / name, root).lexically_normal().generic_string()});
                else if (!generated.count(name)) in.unresolved.push_back(from + ": " + name);
            }
        }
    }
    std::sort(in.files.begin(), in.files.end());
    return in;
}

// The includes that do not point to a folder of lower rank, as messages.
std::vector<std::string> upward(const std::vector<Include>& edges) {
    std::vector<std::string> bad;
    for (const Include& e : edges) {
        std::string a = layer_of(e.from), b = layer_of(e.to);
        if (a.empty() || b.empty()) {
            bad.push_back(e.from + " includes " + e.to + ": a folder the rank table does not name");
            continue;
        }
        if (a != b && ranks.at(b) >= ranks.at(a))
            bad.push_back(e.from + " includes " + e.to + ": " + a + " (rank " + std::to_string(ranks.at(a)) +
                          ") may include only lower ranks, " + b + " is rank " + std::to_string(ranks.at(b)));
    }
    return bad;
}

// A cycle in a graph given as edges, as "a -> b -> a"; empty when there is none.
std::string find_cycle(const std::map<std::string, std::set<std::string>>& graph) {
    std::map<std::string, int> state;  // 0 unvisited, 1 on the path, 2 done
    std::vector<std::string> path;
    std::string found;
    auto visit = [&](auto&& self, const std::string& n) -> bool {
        state[n] = 1;
        path.push_back(n);
        if (auto it = graph.find(n); it != graph.end())
            for (const std::string& m : it->second) {
                if (state[m] == 1) {
                    auto start = std::find(path.begin(), path.end(), m);
                    for (auto p = start; p != path.end(); ++p) found += *p + " -> ";
                    found += m;
                    return true;
                }
                if (state[m] == 0 && self(self, m)) return true;
            }
        path.pop_back();
        state[n] = 2;
        return false;
    };
    for (const auto& [n, next] : graph)
        if (state[n] == 0 && visit(visit, n)) return found;
    return "";
}

std::map<std::string, std::set<std::string>> folder_graph(const std::vector<Include>& edges) {
    std::map<std::string, std::set<std::string>> g;
    for (const Include& e : edges) {
        std::string a = layer_of(e.from), b = layer_of(e.to);
        if (a != b) g[a].insert(b);
    }
    return g;
}

std::map<std::string, std::set<std::string>> file_graph(const std::vector<Include>& edges) {
    std::map<std::string, std::set<std::string>> g;
    for (const Include& e : edges) g[e.from].insert(e.to);
    return g;
}

// The sources a CMakeLists.txt names in add_library, add_executable and target_sources.
std::vector<std::string> cmake_sources(const std::string& text) {
    std::string code;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) code += line.substr(0, line.find('#')) + "\n";
    static const std::regex command(R"re(\b(add_library|add_executable|target_sources)\s*\(([^)]*)\))re");
    static const std::regex source(R"re([^\s"]+\.(cpp|cu|c|cc)\b)re");
    std::vector<std::string> out;
    for (auto c = std::sregex_iterator(code.begin(), code.end(), command); c != std::sregex_iterator(); ++c) {
        std::string args = (*c)[2];
        for (auto s = std::sregex_iterator(args.begin(), args.end(), source); s != std::sregex_iterator(); ++s)
            out.push_back((*s)[0]);
    }
    return out;
}

}  // namespace

TEST_CASE("the rank table catches what it is meant to catch") {
    SUBCASE("an include upwards") {
        std::vector<std::string> bad = upward({{"bench/stats.cpp", "cli/args.h"}});
        REQUIRE(bad.size() == 1);
        CHECK(bad[0].find("bench (rank 3) may include only lower ranks, cli is rank 6") != std::string::npos);
    }
    SUBCASE("an include between two folders of one rank") {
        CHECK(upward({{"train/ledger.cpp", "profile/profile.h"}}).size() == 1);
        CHECK(upward({{"kernels/cpu/conv2d.cpp", "netdefs/zoo.h"}}).size() == 1);
    }
    SUBCASE("includes downwards and within a folder") {
        CHECK(upward({{"cli/ridge.cpp", "report/study.h"}, {"engine/backend/cudnn/plan.h", "kernels/cuda/check.h"},
                      {"report/figures/zoo.cpp", "report/figures.h"}, {"engine/ops/conv2d.h", "engine/shape.h"}})
                  .empty());
    }
    SUBCASE("a subfolder is ranked by the longest folder the table names") {
        CHECK(layer_of("engine/backend/onednn/plan.cpp") == "engine/backend");
        CHECK(layer_of("engine/ops/norm.h") == "engine");
        CHECK(layer_of("train/data/loader.h") == "train/data");
        CHECK(layer_of("tests/test_zoo.cpp").empty());
    }
    SUBCASE("a cycle") {
        CHECK(find_cycle({{"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}}) == "a -> b -> c -> a");
        CHECK(find_cycle({{"a", {"b", "c"}}, {"b", {"c"}}}).empty());
    }
    SUBCASE("the sources of a CMakeLists.txt") {
        CHECK(cmake_sources("add_library(x STATIC a.cpp ../b/c.cpp) # d.cpp\ntarget_sources(x PRIVATE\n  e/f.cu)\n") ==
              std::vector<std::string>{"a.cpp", "../b/c.cpp", "e/f.cu"});
    }
}

TEST_CASE("includes point down the rank table, and the folders form no cycle") {
    fs::path root = RIDGE_SOURCE_DIR;
    Includes in = scan(root);
    // The scan sees the tree: each ranked top folder has sources and the engine's own includes.
    REQUIRE(in.files.size() > 100);
    REQUIRE(std::count_if(in.edges.begin(), in.edges.end(),
                          [](const Include& e) { return e.from == "engine/op.h" && e.to == "engine/ops/conv2d.h"; }) == 1);
    CHECK_MESSAGE(in.unresolved.empty(), "includes that resolve to no file: " << in.unresolved.front());
    for (const std::string& bad : upward(in.edges)) FAIL_CHECK(bad);
    std::string cycle = find_cycle(folder_graph(in.edges));
    CHECK_MESSAGE(cycle.empty(), "folders include each other: " << cycle);
    std::string file_cycle = find_cycle(file_graph(in.edges));
    CHECK_MESSAGE(file_cycle.empty(), "files include each other (#pragma once hides it): " << file_cycle);
}

TEST_CASE("every folder with sources is ranked") {
    fs::path root = RIDGE_SOURCE_DIR;
    for (const auto& e : fs::directory_iterator(root)) {
        std::string name = e.path().filename().string();
        // Tests sit on everything; build folders and hidden ones hold no sources of ridge's own.
        if (!e.is_directory() || name == "tests" || name.rfind("build", 0) == 0 || name[0] == '.') continue;
        bool has_sources = false;
        for (const auto& f : fs::recursive_directory_iterator(e.path()))
            if (f.is_regular_file() && is_source(f.path())) has_sources = true;
        if (has_sources) CHECK_MESSAGE(ranks.count(name) == 1, name << "/ holds sources but has no rank in tests/test_layers.cpp");
    }
}

TEST_CASE("each folder's CMakeLists.txt builds only its own sources") {
    fs::path root = RIDGE_SOURCE_DIR;
    CHECK_MESSAGE(cmake_sources(read(root / "CMakeLists.txt")).empty(),
                  "the top CMakeLists.txt builds sources: each belongs in its folder's CMakeLists.txt");
    for (const auto& [folder, rank] : ranks)
        CHECK_MESSAGE(fs::exists(root / folder / "CMakeLists.txt"), folder << "/ has no CMakeLists.txt of its own");
    for (const auto& [folder, rank] : ranks) {
        if (folder.find('/') != std::string::npos) continue;
        for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
            if (e.path().filename() != "CMakeLists.txt") continue;
            fs::path dir = fs::relative(e.path().parent_path(), root);
            std::string own = layer_of(dir.generic_string() + "/x");
            for (const std::string& src : cmake_sources(read(e.path()))) {
                std::string where = (dir / src).lexically_normal().generic_string();
                CHECK_MESSAGE((src.find("..") == std::string::npos && src[0] != '/' && src[0] != '$' && layer_of(where) == own),
                              dir.generic_string() << "/CMakeLists.txt builds " << src << ", which is not in " << own << "/");
            }
        }
    }
}

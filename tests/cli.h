#pragma once
// Running the ridge CLI from a test as a user would: arguments in, exit code and both streams out.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace clitest {
struct Run {
    int code;
    std::string out, err;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// A private directory for outputs, removed when the tests end.
struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("ridge_cli_test." + std::to_string(::getpid()));
    Scratch() { fs::create_directories(dir); }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};
inline fs::path scratch() {
    static Scratch s;
    return s.dir;
}

inline Run ridge(const std::string& args) {
    fs::path out = scratch() / "stdout", err = scratch() / "stderr";
    std::string cmd = std::string("'") + RIDGE_CLI + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

inline int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

inline void check_usage_error(const std::string& args, const std::string& says) {
    CAPTURE(args);
    Run r = ridge(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(says) != std::string::npos, r.err);
}
}  // namespace clitest

#pragma once
// Running the ridge CLI from a test as a user would: arguments in, exit code and both streams out.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

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

// A ridge started without a shell, its arguments exactly as given, in folder cwd (empty: the
// test's own), for tests that must signal it while it runs or look at what it leaves in cwd.
struct Child {
    pid_t pid = -1;
    fs::path out, err;
};

inline Child start(const std::vector<std::string>& args, const fs::path& cwd = {}) {
    static int n = 0;
    Child c;
    c.out = scratch() / ("child_stdout." + std::to_string(n));
    c.err = scratch() / ("child_stderr." + std::to_string(n++));
    std::vector<std::string> all = {RIDGE_CLI};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // Default dispositions: a test runner that ignores SIGINT must not make ridge ignore it.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawn(&c.pid, argv[0], &fa, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    REQUIRE_MESSAGE(rc == 0, "cannot start ", RIDGE_CLI);
    return c;
}

// Whether it is still running (it is reaped when it has ended).
inline bool running(Child& c, int* status = nullptr) {
    int st = 0;
    pid_t r = ::waitpid(c.pid, &st, WNOHANG);
    if (r == 0) return true;
    if (status) *status = st;
    return false;
}

// Waits for it at most limit_s seconds (a bound on a hung run, not a timing check: past it the run
// is killed and the test fails). code is the exit status, or 128 + the signal it died of, as a
// shell reports it.
inline Run finish(Child& c, int limit_s) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
    int st = 0;
    while (running(c, &st)) {
        if (std::chrono::steady_clock::now() > end) {
            ::kill(c.pid, SIGKILL);
            ::waitpid(c.pid, &st, 0);
            FAIL("ridge did not end within ", limit_s, " s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    return {code, slurp(c.out), slurp(c.err)};
}

inline Run run(const std::vector<std::string>& args, const fs::path& cwd = {}, int limit_s = 600) {
    Child c = start(args, cwd);
    return finish(c, limit_s);
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

#include "bench/spawn.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <string_view>
#include <sys/wait.h>

#include "bench/interrupt.h"

extern char** environ;

namespace ridge::bench {

namespace {
// posix_spawn's attributes and file actions, destroyed however run_program returns.
struct Spawn {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    Spawn() {
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_init(&actions);
    }
    ~Spawn() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
};
}  // namespace

int run_program(const std::vector<std::string>& argv, const RunOptions& opt) {
    Spawn s;
    // Its own group, so a terminal's ^C reaches ridge alone and ridge decides what to stop; default
    // dispositions and an empty mask, so the group can be killed whatever ridge inherited.
    sigset_t defaults, none;
    sigemptyset(&defaults);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&defaults, sig);
    sigemptyset(&none);
    posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&s.attr, 0);
    posix_spawnattr_setsigdefault(&s.attr, &defaults);
    posix_spawnattr_setsigmask(&s.attr, &none);
    if (!opt.cwd.empty()) posix_spawn_file_actions_addchdir_np(&s.actions, opt.cwd.c_str());
    posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
    if (opt.shown != RunOptions::Shown::all) posix_spawn_file_actions_addopen(&s.actions, 1, "/dev/null", O_WRONLY, 0);
    if (opt.shown == RunOptions::Shown::nothing) posix_spawn_file_actions_adddup2(&s.actions, 1, 2);

    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    for (char** e = environ; *e; ++e) {
        std::string_view var(*e);
        auto named = [&](const std::string& n) { return var.size() > n.size() && var[n.size()] == '=' && var.substr(0, n.size()) == n; };
        if (std::none_of(opt.unset.begin(), opt.unset.end(), named)) env.push_back(*e);
    }
    env.push_back(nullptr);
    pid_t pid;
    if (posix_spawnp(&pid, args[0], &s.actions, &s.attr, args.data(), env.data()) != 0) return 127;
    set_interrupt_child(pid);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    set_interrupt_child(0);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 127;
}

}  // namespace ridge::bench

#pragma once
// Running the ridge CLI from a test without a shell: an argument vector (any bytes at all), extra
// environment, an address-space limit, both streams captured, and a time limit after which the
// child's process group is killed, so a hang fails one check instead of stopping the suite.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace spawn {

struct Options {
    double timeout_s = 60;
    std::vector<std::string> env;          // "NAME=value": added, or replacing this process's NAME
    std::optional<rlim_t> address_space;   // RLIMIT_AS of the child, bytes
    std::string cwd;                       // empty: this process's
};

struct Result {
    int code = -1;           // exit status; -1 when killed by a signal
    int signal = 0;          // the signal that ended it, 0 if it exited
    bool timed_out = false;  // killed by the time limit
    std::string out, err;
};

class Child {
public:
    Child(const std::vector<std::string>& argv, const Options& o = {}) : opts_(o) {
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) {
            std::string kv(*e);
            bool replaced = false;
            for (const std::string& add : o.env)
                replaced = replaced || kv.substr(0, kv.find('=') + 1) == add.substr(0, add.find('=') + 1);
            if (!replaced) env.push_back(kv);
        }
        env.insert(env.end(), o.env.begin(), o.env.end());
        // Everything the child touches after fork is prepared here: only async-signal-safe calls there.
        std::vector<char*> args, envp;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
        envp.push_back(nullptr);
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
        start_ = std::chrono::steady_clock::now();
        if (!o.address_space) {
            spawn_without_copy(args, envp, out[1], err[1]);
        } else if ((pid_ = ::fork()) == 0) {
            ::setpgid(0, 0);
            int in = ::open("/dev/null", O_RDONLY);
            ::dup2(in, 0);
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
            if (o.address_space) {
                struct rlimit r = {*o.address_space, *o.address_space};
                ::setrlimit(RLIMIT_AS, &r);
            }
            ::execve(args[0], args.data(), envp.data());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        fd_[0] = out[0];
        fd_[1] = err[0];
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        if (pid_ > 0 && !reaped_) {
            ::kill(-pid_, SIGKILL);
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        for (int fd : fd_)
            if (fd >= 0) ::close(fd);
    }

    Result wait() {
        Result r;
        if (pid_ < 0) {
            r.err = failure_;
            return r;
        }
        auto deadline = start_ + std::chrono::duration<double>(opts_.timeout_s);
        std::string* sink[2] = {&r.out, &r.err};
        while (fd_[0] >= 0 || fd_[1] >= 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                r.timed_out = true;
                ::kill(-pid_, SIGKILL);
                ::kill(pid_, SIGKILL);
                break;
            }
            pollfd p[2];
            int n = 0, which[2];
            for (int i = 0; i < 2; ++i)
                if (fd_[i] >= 0) p[n] = {fd_[i], POLLIN, 0}, which[n++] = i;
            if (::poll(p, nfds_t(n), int(std::min<long long>(left.count(), 1000))) < 0 && errno != EINTR) break;
            for (int k = 0; k < n; ++k) {
                if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                char buf[65536];
                ssize_t got = ::read(fd_[which[k]], buf, sizeof buf);
                if (got > 0) {
                    sink[which[k]]->append(buf, size_t(got));
                } else if (got == 0 || errno != EINTR) {
                    ::close(fd_[which[k]]);
                    fd_[which[k]] = -1;
                }
            }
        }
        // Both streams are closed (or the time is up); the process may still be on its way out.
        int status = 0;
        while (true) {
            pid_t w = ::waitpid(pid_, &status, WNOHANG);
            if (w == pid_ || (w < 0 && errno != EINTR)) break;
            if (!r.timed_out && std::chrono::steady_clock::now() > deadline) {
                r.timed_out = true;
                ::kill(-pid_, SIGKILL);
                ::kill(pid_, SIGKILL);
            }
            ::usleep(1000);
        }
        reaped_ = true;
        if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
        return r;
    }

private:
    // posix_spawn, which glibc runs with CLONE_VM|CLONE_VFORK: nothing of this process's memory is
    // copied. A fork copies the page tables of all of it, and a sanitized test process maps a lot:
    // under ASan on a 2-core Zen 3, test_fuzz's 1800 runs took 237 s with fork (251 s of system
    // time) and 187 s with this. RLIMIT_AS has no spawn attribute: such a child is still forked.
    void spawn_without_copy(std::vector<char*>& args, std::vector<char*>& envp, int out, int err) {
        posix_spawn_file_actions_t acts;
        posix_spawnattr_t attr;
        posix_spawn_file_actions_init(&acts);
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        if (!opts_.cwd.empty()) posix_spawn_file_actions_addchdir_np(&acts, opts_.cwd.c_str());
        posix_spawn_file_actions_addopen(&acts, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&acts, out, 1);
        posix_spawn_file_actions_adddup2(&acts, err, 2);
        const int rc = ::posix_spawn(&pid_, args[0], &acts, &attr, args.data(), envp.data());
        posix_spawn_file_actions_destroy(&acts);
        posix_spawnattr_destroy(&attr);
        if (rc != 0) {
            pid_ = -1;
            // The file actions' errors come back here too: a folder that cannot be entered reads
            // as ENOENT, so it is named beside the program.
            failure_ = std::string("spawn: ") + args[0] + (opts_.cwd.empty() ? "" : " in " + opts_.cwd) + ": " +
                       std::strerror(rc);
        }
    }

    Options opts_;
    std::string failure_ = "spawn: fork failed";
    pid_t pid_ = -1;
    int fd_[2] = {-1, -1};
    bool reaped_ = false;
    std::chrono::steady_clock::time_point start_;
};

inline Result run(const std::vector<std::string>& argv, const Options& o = {}) { return Child(argv, o).wait(); }

inline int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

}  // namespace spawn

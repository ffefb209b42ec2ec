#include "bench/interrupt.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ridge::bench {

namespace {

constexpr int handled[] = {SIGINT, SIGTERM, SIGHUP};

// Fixed storage: the handler may not allocate. A slot is filled before `used` is set, and `used`
// is cleared before the slot is reused, so the handler never reads a half-written path.
struct Slot {
    char path[PATH_MAX];
    char created_from[PATH_MAX];
    volatile sig_atomic_t used;
};
constexpr int max_slots = 4;
Slot slots[max_slots];

volatile sig_atomic_t child_group = 0;
pid_t main_tid = 0;
bool stderr_is_tty = false;
std::atomic<bool> handling{false};

void say(const char* s) {
    size_t n = std::strlen(s);
    while (n > 0) {
        ssize_t w = ::write(2, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= size_t(w);
    }
}

struct linux_dirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[256];  // really as long as d_reclen says
};

// Removes name (relative to dirfd) and, when it is a folder, everything in it; symbolic links are
// removed, never followed. readdir would allocate, so the entries are read with getdents64.
// Returns whether name is gone.
bool remove_tree(int dirfd, const char* name, int depth) {
    if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return true;
    if ((errno != EISDIR && errno != EPERM) || depth > 32) return false;
    int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    alignas(linux_dirent64) char buf[4096];
    // Entries removed while reading may shift the rest, so read again from the start until a
    // pass finds nothing left to remove.
    for (bool removed = true; removed;) {
        removed = false;
        ::lseek(fd, 0, SEEK_SET);
        for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;) {
            for (long off = 0; off < n;) {
                auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
                off += d->d_reclen;
                if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
                removed |= remove_tree(fd, d->d_name, depth + 1);
            }
        }
    }
    ::close(fd);
    return ::unlinkat(dirfd, name, AT_REMOVEDIR) == 0;
}

// Removes the parents of path up to created_from while they are empty (rmdir refuses otherwise).
void remove_created_parents(const char* path, const char* created_from) {
    if (created_from[0] == '\0') return;
    char dir[PATH_MAX];
    std::strcpy(dir, path);
    for (;;) {
        char* slash = std::strrchr(dir, '/');
        if (!slash || slash == dir) return;
        *slash = '\0';
        if (::rmdir(dir) != 0) return;
        if (std::strcmp(dir, created_from) == 0) return;
    }
}

const char* signal_name(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
    }
    return "a signal";
}

extern "C" void on_interrupt(int sig) {
    if (::syscall(SYS_gettid) != main_tid) {
        // The main thread may be writing into the folders to remove: let it stop and clean up.
        ::syscall(SYS_tgkill, ::getpid(), main_tid, sig);
        for (;;) ::pause();
    }
    if (handling.exchange(true)) return;

    if (pid_t g = child_group; g > 0) {
        // ridge is a child subreaper, so the group's grandchildren (gnuplot under make) are
        // reparented here when make dies, and waiting for the whole group waits for them too:
        // nothing still writes into the folders removed below.
        ::kill(-g, SIGKILL);
        while (::waitpid(-g, nullptr, 0) > 0 || errno == EINTR) {}
    }
    const char* outermost = nullptr;
    for (int i = max_slots - 1; i >= 0; --i) {
        if (!slots[i].used) continue;
        remove_tree(AT_FDCWD, slots[i].path, 0);
        remove_created_parents(slots[i].path, slots[i].created_from);
        outermost = slots[i].path;
    }
    if (stderr_is_tty) say("\r\033[K");
    say("ridge: interrupted by ");
    say(signal_name(sig));
    if (outermost) {
        say("; removed the unfinished ");
        say(outermost);
    }
    say("\n");

    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers() {
    main_tid = pid_t(::syscall(SYS_gettid));
    stderr_is_tty = ::isatty(2) != 0;
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int s : handled) sigaddset(&sa.sa_mask, s);
    for (int s : handled) {
        struct sigaction old {};
        if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        ::sigaction(s, &sa, nullptr);
    }
}

RemovedOnInterrupt::RemovedOnInterrupt(const std::string& path, const std::string& created_from) {
    namespace fs = std::filesystem;
    std::string p = fs::absolute(path).lexically_normal().string();
    std::string c = created_from.empty() ? "" : fs::absolute(created_from).lexically_normal().string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    while (c.size() > 1 && c.back() == '/') c.pop_back();
    if (p.size() >= PATH_MAX || c.size() >= PATH_MAX) throw std::length_error("path too long: " + p);
    slot_ = -1;
    for (int i = 0; i < max_slots; ++i)
        if (!slots[i].used) {
            slot_ = i;
            break;
        }
    if (slot_ < 0) throw std::logic_error("more than 4 paths registered to remove on an interrupt");
    std::memcpy(slots[slot_].path, p.c_str(), p.size() + 1);
    std::memcpy(slots[slot_].created_from, c.c_str(), c.size() + 1);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    slots[slot_].used = 1;
}

void RemovedOnInterrupt::release() {
    if (slot_ >= 0) slots[slot_].used = 0;
    slot_ = -1;
}

void set_interrupt_child(pid_t group) { child_group = group; }

}  // namespace ridge::bench

// Runs a command as on a machine without hardware counters, whatever this one has: a seccomp
// filter makes perf_event_open fail with the errno given, then the command is executed in its
// place. EACCES is what an unprivileged process meets under perf_event_paranoid 3; ENOENT what a
// virtual machine without a virtual PMU answers. The filter stays across exec, so ridge's own re-exec of
// itself keeps it. Used by test_profile_cli to reach `ridge profile`'s no-counter path (exit 4)
// on hosts where counting works.
//
//   without_perf_events EACCES|ENOENT PROGRAM [ARG...]
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
    int refusal = 0;
    if (argc >= 3 && std::strcmp(argv[1], "EACCES") == 0) refusal = EACCES;
    if (argc >= 3 && std::strcmp(argv[1], "ENOENT") == 0) refusal = ENOENT;
    if (refusal == 0) {
        std::fprintf(stderr, "usage: without_perf_events EACCES|ENOENT PROGRAM [ARG...]\n");
        return 2;
    }
#if defined(__x86_64__)
    constexpr unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr unsigned arch = AUDIT_ARCH_AARCH64;
#else
#error "without_perf_events: add this architecture's AUDIT_ARCH value"
#endif
    // A foreign architecture's system call numbers mean other calls: those are refused outright.
    const sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned(refusal) & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof program / sizeof program[0]), const_cast<sock_filter*>(program)};
    // Without no_new_privs an unprivileged process may not install a filter.
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        std::fprintf(stderr, "without_perf_events: cannot install the filter: %s\n", std::strerror(errno));
        return 125;
    }
    execv(argv[2], argv + 2);
    std::fprintf(stderr, "without_perf_events: cannot run %s: %s\n", argv[2], std::strerror(errno));
    return 127;
}

#pragma once
// An interrupted ridge (SIGINT, SIGTERM, SIGHUP) leaves nothing half-written. The handler kills the
// program ridge is running (make, gnuplot) together with everything that program started, removes
// what is registered below, says so in one line on stderr and dies of the same signal, so a shell
// sees 128 + its number. It runs on the main thread (a signal that lands on another thread is sent
// on to it) and uses only async-signal-safe calls.
#include <string>
#include <sys/types.h>

namespace ridge::bench {

// Called once from main, before any other thread exists. A signal that ridge's parent left ignored
// (nohup, a background job of a script) stays ignored.
void install_interrupt_handlers();

// While it lives, an interrupt removes path (a file, or a folder with everything in it) and then
// each folder from path's parent up to and including created_from that is left empty: the parents
// made for it (created_from empty: none). Registrations nest; the innermost is removed first.
class RemovedOnInterrupt {
public:
    explicit RemovedOnInterrupt(const std::string& path, const std::string& created_from = "");
    ~RemovedOnInterrupt() { release(); }
    RemovedOnInterrupt(const RemovedOnInterrupt&) = delete;
    RemovedOnInterrupt& operator=(const RemovedOnInterrupt&) = delete;
    void release();  // path is in its final place (or gone): an interrupt leaves it alone

private:
    int slot_;
};

// The process group of the program ridge is waiting for (its pid, see spawn.h); 0 for none.
void set_interrupt_child(pid_t group);

}  // namespace ridge::bench

// What a run may allocate: the least of MemAvailable, the cgroup limits over the process (v2 and
// v1, less the group's use) and RLIMIT_AS, read from files the tests write (the parser) and from a
// real child under a real RLIMIT_AS (the refusal, one line, exit 2, before anything is allocated).
#include <doctest/doctest.h>

#include "bench/env.h"
#include "cli.h"
#include "spawn.h"

using namespace clitest;

namespace {
constexpr int64_t GiB = int64_t(1) << 30, MiB = int64_t(1) << 20;

struct FakeProc {
    fs::path dir;
    ridge::bench::MemorySources src;
    explicit FakeProc(const std::string& name) : dir(scratch() / "memory" / name) {
        fs::remove_all(dir);
        fs::create_directories(dir / "cgroup");
        src.meminfo = (dir / "meminfo").string();
        src.self_cgroup = (dir / "self_cgroup").string();
        src.cgroup_root = (dir / "cgroup").string();
        src.self_status = (dir / "status").string();
    }
    void write(const std::string& rel, const std::string& text) const {
        fs::path p = dir / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }
};
}  // namespace

TEST_CASE("memory budget: MemAvailable alone") {
    FakeProc f("meminfo");
    f.write("meminfo", "MemTotal:       24684096 kB\nMemFree:         1000 kB\nMemAvailable:   23981392 kB\n");
    f.write("self_cgroup", "0::/\n");
    ridge::bench::MemoryBudget b = ridge::bench::memory_budget(f.src);
    CHECK(b.bytes == int64_t(23981392) * 1024);
    CHECK(b.limit == "MemAvailable");
    CHECK(b.mem_available == b.bytes);
}

TEST_CASE("memory budget: cgroup v2 memory.max of the group or an ancestor, less its use but not its page cache") {
    FakeProc f("v2");
    f.write("meminfo", "MemAvailable:   8000000 kB\n");
    f.write("self_cgroup", "0::/user.slice/job\n");
    f.write("cgroup/user.slice/job/memory.max", "max\n");  // the group itself: no limit
    f.write("cgroup/user.slice/job/memory.current", "12345\n");
    f.write("cgroup/user.slice/memory.max", "4294967296\n");  // 4 GiB over it
    f.write("cgroup/user.slice/memory.current", "1073741824\n");
    f.write("cgroup/user.slice/memory.stat", "anon 100\nfile 600000000\ninactive_file 536870912\nactive_file 3\n");
    ridge::bench::MemoryBudget b = ridge::bench::memory_budget(f.src);
    CHECK(b.bytes == 4 * GiB - (GiB - GiB / 2));  // 3.5 GiB
    CHECK(b.limit.find("memory.max") != std::string::npos);
    CHECK(b.limit.find("4096 MiB") != std::string::npos);
    CHECK(b.mem_available == int64_t(8000000) * 1024);

    SUBCASE("a tighter limit below wins") {
        f.write("cgroup/user.slice/job/memory.max", "1073741824\n");
        f.write("cgroup/user.slice/job/memory.current", "268435456\n");
        CHECK(ridge::bench::memory_budget(f.src).bytes == GiB - GiB / 4);
    }
    SUBCASE("use above the limit leaves nothing, never a negative budget") {
        f.write("cgroup/user.slice/memory.current", "9000000000\n");
        f.write("cgroup/user.slice/memory.stat", "inactive_file 0\n");
        CHECK(ridge::bench::memory_budget(f.src).bytes == 0);
    }
    SUBCASE("without a readable use, the limit itself") {
        fs::remove(f.dir / "cgroup/user.slice/memory.current");
        CHECK(ridge::bench::memory_budget(f.src).bytes == 4 * GiB);
    }
    SUBCASE("MemAvailable below every limit wins") {
        f.write("meminfo", "MemAvailable:   1024 kB\n");
        ridge::bench::MemoryBudget m = ridge::bench::memory_budget(f.src);
        CHECK(m.bytes == MiB);
        CHECK(m.limit == "MemAvailable");
    }
}

TEST_CASE("memory budget: cgroup v1 memory.limit_in_bytes; v1's 'unlimited' is not a limit") {
    FakeProc f("v1");
    f.write("meminfo", "MemAvailable:   23981392 kB\n");
    f.write("self_cgroup", "9:name=systemd:/\n4:cpu,memory:/docker/abc\n1:cpu:/\n0::/\n");
    f.write("cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
    f.write("cgroup/memory/docker/abc/memory.usage_in_bytes", "60604416\n");
    f.write("cgroup/memory/docker/memory.limit_in_bytes", "2147483648\n");
    f.write("cgroup/memory/docker/memory.usage_in_bytes", "1610612736\n");
    f.write("cgroup/memory/docker/memory.stat", "cache 1\ninactive_file 7\ntotal_inactive_file 536870912\n");
    f.write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    ridge::bench::MemoryBudget b = ridge::bench::memory_budget(f.src);
    CHECK(b.bytes == 2 * GiB - (GiB + GiB / 2 - GiB / 2));  // 1 GiB
    CHECK(b.limit.find("memory.limit_in_bytes") != std::string::npos);
}

TEST_CASE("memory budget: RLIMIT_AS less the address space in use; nothing readable is unknown") {
    FakeProc f("rlimit");
    f.write("meminfo", "MemAvailable:   23981392 kB\n");
    f.write("status", "Name:\tridge\nVmPeak:\t  999999 kB\nVmSize:\t  524288 kB\n");
    f.src.address_space_limit = 2 * GiB;
    ridge::bench::MemoryBudget b = ridge::bench::memory_budget(f.src);
    CHECK(b.bytes == 2 * GiB - 512 * MiB);
    CHECK(b.limit.find("RLIMIT_AS") != std::string::npos);
    f.src.address_space_limit = 256 * MiB;  // below what is already mapped
    CHECK(ridge::bench::memory_budget(f.src).bytes == 0);

    FakeProc none("none");
    ridge::bench::MemoryBudget u = ridge::bench::memory_budget(none.src);
    CHECK(u.bytes == -1);
    CHECK(u.mem_available == -1);
}

TEST_CASE("ridge bench under ulimit -v: refused with both numbers and the limit, exit 2, not an allocation failure") {
#ifdef RIDGE_SANITIZED
    // AddressSanitizer reserves terabytes of address space for its shadow memory, so no sanitized
    // process starts under an RLIMIT_AS at all; the parser above still runs.
    MESSAGE("skipped under the sanitizers: a sanitized ridge cannot start under RLIMIT_AS");
#else
    spawn::Options o;
    o.address_space = rlim_t(3 * GiB);
    o.timeout_s = 120;
    // vgg16 training at batch 32 needs 4.3 GB, more than all of 3 GiB. (Batch 8, 2.7 GB, was refused
    // only while ridge started with libcublasLt mapped; without it, it fits, and runs.)
    spawn::Result r = spawn::run({RIDGE_CLI, "bench", "vgg16", "--mode", "train", "--batch", "32", "--no-ledger", "--quiet"}, o);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(spawn::lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find("at batch 32 needs") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("RLIMIT_AS (ulimit -v, 3072 MiB)") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("MemAvailable") != std::string::npos, r.err);
    // What fits under the same limit runs.
    spawn::Result small = spawn::run({RIDGE_CLI, "bench", "resnet18", "--res", "32", "--backend", "reference", "--no-layers",
                                      "--warmup", "0", "--repeat", "1", "--no-ledger", "--quiet", "--format", "csv"},
                                     o);
    CHECK_MESSAGE(small.code == 0, small.err);
#endif
}

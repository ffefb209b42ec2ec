// Text that leaves ridge: JSON (no NaN or infinity, which JSON cannot spell, and no bytes that
// are not UTF-8), one-line error messages whatever bytes a user typed, and output destinations
// checked before a run.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cmath>
#include <limits>
#include <set>

#include "bench/format.h"
#include "bench/usage_error.h"
#include "cli.h"
#include "json.h"

using namespace clitest;
using ridge::bench::json_quote;
using ridge::bench::printable;

TEST_CASE("Json writes NaN and infinities as null, finite numbers as before") {
    ridge::bench::Json j;
    j.begin_object()
        .field("nan", std::nan(""))
        .field("inf", std::numeric_limits<double>::infinity())
        .field("ninf", -std::numeric_limits<double>::infinity())
        .field("x", 1.5)
        .field("big", 1e300)
        .end_object();
    std::string s = j.str();
    CHECK(s == "{\n  \"nan\": null,\n  \"inf\": null,\n  \"ninf\": null,\n  \"x\": 1.5,\n  \"big\": 1e+300\n}\n");
    testjson::Value v = testjson::parse(s);
    CHECK(v["nan"].kind == testjson::Value::Kind::null);
    CHECK(v["x"].num() == 1.5);
}

TEST_CASE("json_quote: control characters escaped, bytes that are not UTF-8 replaced") {
    CHECK(json_quote("plain") == "\"plain\"");
    CHECK(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(json_quote("a\nb\tc\x1b[31m") == "\"a\\nb\\u0009c\\u001b[31m\"");
    CHECK(json_quote(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
    CHECK(json_quote("\x7f") == "\"\\u007f\"");
    CHECK(json_quote("\xc2\x9b") == "\"\\u009b\"");             // C1 CSI: a terminal acts on it
    CHECK(json_quote("r\xc3\xa9sum\xc3\xa9") == "\"r\xc3\xa9sum\xc3\xa9\"");  // UTF-8 stays
    CHECK(json_quote("\xe7\xbd\x91\xf0\x9f\x98\x80") == "\"\xe7\xbd\x91\xf0\x9f\x98\x80\"");
    CHECK(json_quote("a\xff" "b") == "\"a\\ufffdb\"");
    CHECK(json_quote("\xc0\xaf") == "\"\\ufffd\\ufffd\"");      // overlong '/'
    CHECK(json_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // a UTF-16 surrogate
    CHECK(json_quote("\xe2\x82") == "\"\\ufffd\\ufffd\"");      // cut short
}

TEST_CASE("printable: one line of text whatever the bytes") {
    CHECK(printable("unknown net 'x'") == "unknown net 'x'");
    CHECK(printable("a\nb") == "a\\x0ab");
    CHECK(printable("\x1b[2J") == "\\x1b[2J");
    CHECK(printable("\r\t") == "\\x0d\\x09");
    CHECK(printable("\xc2\x9b" "1m") == "\\xc2\\x9b1m");
    CHECK(printable("\xff") == "\\xff");
    CHECK(printable("caf\xc3\xa9 \xe7\xbd\x91") == "caf\xc3\xa9 \xe7\xbd\x91");
}

TEST_CASE("check_output: what write_output would fail on is refused before any work, leaving nothing") {
    fs::path d = scratch() / "check_output";
    fs::remove_all(d);
    fs::create_directories(d);
    using ridge::bench::check_output;
    CHECK_NOTHROW(check_output(""));
    CHECK_NOTHROW(check_output("-"));
    CHECK_NOTHROW(check_output((d / "new.txt").string()));
    CHECK_NOTHROW(check_output((d / "with spaces and 'quotes' $(x).txt").string()));
    CHECK(fs::is_empty(d));
    std::ofstream(d / "old.txt") << "x";
    CHECK_NOTHROW(check_output((d / "old.txt").string()));
    CHECK_NOTHROW(check_output("/dev/null"));
    CHECK_THROWS_WITH_AS(check_output(d.string()), doctest::Contains("it is a directory"), ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_output(d.string() + "/"), doctest::Contains("it is a directory"), ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_output((d / "missing" / "x.txt").string()), doctest::Contains("does not exist"),
                         ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_output((d / "old.txt" / "x.txt").string()), doctest::Contains("cannot write"),
                         ridge::bench::UsageError);
    CHECK_THROWS_WITH_AS(check_output("/proc/x"), doctest::Contains("cannot write '/proc/x'"), ridge::bench::UsageError);
    fs::path fifo = d / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH_AS(check_output(fifo.string()), doctest::Contains("pipe that nothing reads"), ridge::bench::UsageError);
    // Symlinks: to a new file in a folder that exists (fine), into a missing folder, in a loop.
    fs::create_symlink("new_target.txt", d / "to_new");
    CHECK_NOTHROW(check_output((d / "to_new").string()));
    fs::create_symlink("missing/x.txt", d / "dangling");
    CHECK_THROWS_WITH_AS(check_output((d / "dangling").string()), doctest::Contains("does not exist"),
                         ridge::bench::UsageError);
    fs::create_symlink("loop_b", d / "loop_a");
    fs::create_symlink("loop_a", d / "loop_b");
    CHECK_THROWS_AS(check_output((d / "loop_a").string()), ridge::bench::UsageError);
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(d)) left.insert(e.path().filename().string());
    CHECK(left == std::set<std::string>{"fifo", "old.txt", "to_new", "dangling", "loop_a", "loop_b"});
}

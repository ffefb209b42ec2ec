// What ridge promises about the files it writes and the programs it runs: outputs appear whole
// through a temp file no one can predict (a planted link is never followed) and keep a sensible
// mode; gnuplot gets titles as text, never as commands; programs get their arguments verbatim,
// never through a shell.
#include <doctest/doctest.h>

#include <set>
#include <sys/stat.h>

#include "bench/format.h"
#include "bench/spawn.h"
#include "cli.h"
#include "report/figures.h"

namespace {

ridge::bench::RunOptions in(const fs::path& dir) {
    ridge::bench::RunOptions o;
    o.cwd = dir.string();
    return o;
}

mode_t mode_of(const fs::path& p) {
    struct stat st;
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

std::set<std::string> names_in(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
}

}  // namespace

TEST_CASE("write_output: a link planted at the old predictable temp name is not followed") {
    fs::path dir = clitest::scratch() / "planted";
    fs::create_directories(dir);
    fs::path out = dir / "o.json", victim = dir / "victim";
    std::ofstream(victim) << "precious\n";
    // The name ridge used to write through before renaming: <out>.tmp.<pid>.
    fs::path planted = out.string() + ".tmp." + std::to_string(::getpid());
    fs::create_symlink(victim, planted);
    ridge::bench::write_output(out.string(), "{}\n");
    CHECK(clitest::slurp(victim) == "precious\n");
    CHECK(clitest::slurp(out) == "{}\n");
    CHECK(fs::is_symlink(planted));
    CHECK(names_in(dir) == std::set<std::string>{"o.json", "victim", planted.filename().string()});
}

TEST_CASE("write_output: a new file gets 0666 less the umask, an existing one keeps its mode") {
    fs::path dir = clitest::scratch() / "modes";
    fs::create_directories(dir);
    mode_t umask = ::umask(022);
    ::umask(umask);
    fs::path fresh = dir / "fresh.csv";
    ridge::bench::write_output(fresh.string(), "a\n");
    CHECK(mode_of(fresh) == (0666 & ~umask));
    fs::path kept = dir / "kept.csv";
    std::ofstream(kept) << "old\n";
    fs::permissions(kept, fs::perms(0640));
    ridge::bench::write_output(kept.string(), "new\n");
    CHECK(mode_of(kept) == 0640);
    CHECK(clitest::slurp(kept) == "new\n");
    CHECK(names_in(dir) == std::set<std::string>{"fresh.csv", "kept.csv"});
}

TEST_CASE("gp_quote: backticks, quotes, backslashes and newlines reach gnuplot as text, never run") {
    fs::path dir = clitest::scratch() / "gp_quote";
    fs::create_directories(dir);
    const std::string hostile = "chip `touch RAN` \"x\" \\ 'y'\n@z $(touch RAN) \x01;";
    std::ofstream(dir / "title.gpv") << "title = " << ridge::report::gp_quote(hostile) << "\n";
    std::ofstream(dir / "print.gp") << "load 'title.gpv'\nset print 'printed'\nprint title\n";
    CHECK(ridge::bench::run_program({"gnuplot", "print.gp"}, in(dir)) == 0);
    CHECK(clitest::slurp(dir / "printed") == hostile + "\n");
    CHECK_FALSE(fs::exists(dir / "RAN"));
}

TEST_CASE("run_program: arguments arrive verbatim, never through a shell; the exit status comes back") {
    fs::path dir = clitest::scratch() / "spawn";
    fs::create_directories(dir);
    const std::string name = "a b';touch PWNED;echo '$(touch MADE)`touch TICKED`";
    CHECK(ridge::bench::run_program({"touch", name}, in(dir)) == 0);
    CHECK(names_in(dir) == std::set<std::string>{name});
    CHECK(ridge::bench::run_program({"false"}) == 1);
    CHECK(ridge::bench::run_program({"sh", "-c", "kill -TERM $$"}) == 128 + SIGTERM);
    CHECK(ridge::bench::run_program({"ridge-no-such-program"}) == 127);
}

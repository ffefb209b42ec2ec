// The data of the latency, spearman, throughput, fwdbwd and pies figures, written from the
// fixture study and read back, against the fixture's own runs and analyses computed here
// independently of the writers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <unistd.h>

#include "cli.h"
#include "dat.h"
#include "report/figures/figures.h"
#include "report/spearman.h"
#include "study_fixture.h"

using namespace ridge::report;

namespace {

using dat::Block;

std::vector<Block> read_dat(const fs::path& p) { return dat::read(p, dat::Split::set); }

double num(const std::string& s) { return std::stod(s); }

struct Written {
    fs::path dir;
    std::map<std::string, Figure> figures;
    explicit Written(const Study& s, const std::string& tag) {
        dir = fs::temp_directory_path() / ("ridge_figures_b." + std::to_string(::getpid()) + "." + tag);
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (auto writer : {latency_figures, spearman_figures, throughput_figures, fwdbwd_figures, pies_figures})
            for (Figure& f : writer(s, dir.string())) figures[f.name] = f;
    }
    ~Written() { fs::remove_all(dir); }
    fs::path dat(const std::string& name) const { return dir / (name + ".dat"); }
    std::string gpv(const std::string& name) const { return clitest::slurp(dir / (name + ".gpv")); }
};

std::string device_of(const std::string& shown) { return shown == "GPU" ? "cuda" : "cpu"; }

// The checks of one figure, run on the fixture with GPU runs and on the one without: each gets
// the study, its written figures and whether it has GPU runs.
template <typename Check>
void with_and_without_gpu(Check check) {
    for (bool gpu : {true, false}) {
        CAPTURE(gpu);
        Study s = fixture::study(gpu);
        Written w(s, gpu ? "gpu" : "cpu");
        check(s, w, gpu);
    }
}

}  // namespace

TEST_CASE("figure data of the fixture, with and without GPU") {
    SUBCASE("every figure has its data, a caption and a file") {
        with_and_without_gpu([](const Study&, Written& w, bool) {
            for (const char* name : {"latency-flops", "latency-params", "spearman", "throughput", "fwdbwd", "pies"}) {
                INFO(name);
                REQUIRE(w.figures.count(name));
                CHECK(w.figures[name].missing.empty());
                CHECK_FALSE(w.figures[name].caption.empty());
                CHECK(fs::exists(w.dat(name)));
            }
        });
    }

    SUBCASE("throughput: batch / median step time, a block per device and net") {
        with_and_without_gpu([](const Study& s, Written& w, bool gpu) {
            std::vector<Block> blocks = read_dat(w.dat("throughput"));
            CHECK(blocks.size() == s.nets.size() * (gpu ? 2 : 1));
            for (const Block& b : blocks) {
                std::istringstream head(b.comments.at(0).substr(2));
                std::string shown, net;
                head >> shown >> net;
                CHECK((shown == "CPU" || (gpu && shown == "GPU")));
                CHECK(b.rows.size() == s.batches.size());
                for (const auto& row : b.rows) {
                    int64_t batch = std::stoll(row.at(0));
                    const Run* r = s.run_of(device_of(shown), net, ridge::Mode::infer, batch);
                    REQUIRE(r);
                    CHECK(num(row.at(1)) == doctest::Approx(double(batch) / r->step.median).epsilon(1e-8));
                }
            }
            CHECK(w.gpv("throughput").find(gpu ? "hasgpu = 1" : "hasgpu = 0") != std::string::npos);
        });
    }

    SUBCASE("latency: batch-1 FLOPs and params against the step median in ms") {
        with_and_without_gpu([](const Study& s, Written& w, bool gpu) {
            for (const char* name : {"latency-flops", "latency-params"}) {
                INFO(name);
                bool flops = std::string(name) == "latency-flops";
                std::vector<Block> blocks = read_dat(w.dat(name));
                // A block per device and batch, then the labels.
                REQUIRE(blocks.size() == s.batches.size() * (gpu ? 2 : 1) + 1);
                for (size_t i = 0; i + 1 < blocks.size(); ++i) {
                    // "# CPU batch 4", after the file's heading in the first block.
                    const std::vector<std::string>& cs = blocks[i].comments;
                    auto it = std::find_if(cs.begin(), cs.end(), [](const std::string& c) {
                        return c.rfind("# CPU ", 0) == 0 || c.rfind("# GPU ", 0) == 0;
                    });
                    REQUIRE(it != cs.end());
                    std::istringstream head(it->substr(2));
                    std::string shown, word;
                    int64_t batch = 0;
                    head >> shown >> word >> batch;
                    CHECK((shown == "CPU" || (gpu && shown == "GPU")));
                    CHECK(blocks[i].rows.size() == s.nets.size());
                    for (const auto& row : blocks[i].rows) {
                        const Run* r = s.run_of(device_of(shown), row.at(0), ridge::Mode::infer, batch);
                        REQUIRE(r);
                        // The run's own analysis, scaled to one image: FLOPs scale with the
                        // batch, params do not.
                        double x = flops ? double(r->a.totals.fwd_flops) / double(batch) / 1e9
                                         : double(r->a.totals.params) / 1e6;
                        CHECK(num(row.at(1)) == doctest::Approx(x).epsilon(1e-8));
                        CHECK(num(row.at(2)) == doctest::Approx(r->step.median * 1e3).epsilon(1e-8));
                    }
                }
                CHECK(blocks.back().rows.size() == s.nets.size());
            }
        });
    }

    SUBCASE("fwdbwd: measured time ratios and the analytic FLOPs ratio from the layers") {
        with_and_without_gpu([](const Study& s, Written& w, bool gpu) {
            std::vector<Block> blocks = read_dat(w.dat("fwdbwd"));
            REQUIRE(blocks.size() == 1);
            CHECK(blocks[0].rows.size() == s.nets.size());
            for (const auto& row : blocks[0].rows) {
                const Run* c = s.run_of("cpu", row.at(0), ridge::Mode::train, s.train_batch);
                REQUIRE(c);
                int64_t fwd = 0, bwd = 0;
                for (const ridge::LayerCost& l : c->a.layers) {
                    fwd += l.c.fwd_flops;
                    bwd += l.c.dgrad_flops + l.c.wgrad_flops;
                }
                CHECK(num(row.at(1)) == doctest::Approx(double(bwd) / double(fwd)).epsilon(1e-8));
                CHECK(num(row.at(2)) == doctest::Approx(c->bwd.median / c->fwd.median).epsilon(1e-8));
                if (gpu) {
                    const Run* g = s.run_of("cuda", row.at(0), ridge::Mode::train, s.train_batch);
                    REQUIRE(g);
                    CHECK(num(row.at(3)) == doctest::Approx(g->bwd.median / g->fwd.median).epsilon(1e-8));
                } else {
                    CHECK(row.at(3) == "NaN");
                }
            }
        });
    }

    SUBCASE("pies: six pies whose shares sum to 100 %, contiguous, thin ones merged") {
        with_and_without_gpu([](const Study& s, Written& w, bool) {
            std::vector<Block> blocks = read_dat(w.dat("pies"));
            REQUIRE(blocks.size() == 6);
            for (const Block& b : blocks) {
                double sum = 0;
                int thin = 0;
                for (const auto& row : b.rows) {
                    CHECK(num(row.at(2)) == doctest::Approx(sum).epsilon(1e-8));
                    double share = num(row.at(1));
                    sum += share;
                    thin += share < 3 && std::stoi(row.at(0)) != ridge::category_count;
                }
                CHECK(sum == doctest::Approx(100).epsilon(1e-8));
                CHECK(thin <= 1);  // a lone thin slice keeps its name; two or more become "other"
            }
            // The forward FLOPs pie (the third), recomputed from the analysis's per-type totals.
            const Run* r = s.layer_run();
            REQUIRE(r);
            std::map<int, double> share;
            for (const auto& row : blocks[2].rows) share[std::stoi(row.at(0))] = num(row.at(1));
            int64_t total = r->a.totals.fwd_flops;
            for (const ridge::TypeTotals& t : r->a.by_type) {
                double p = 100.0 * double(t.c.fwd_flops) / double(total);
                if (p >= 3) CHECK(share.at(int(t.category)) == doctest::Approx(p).epsilon(1e-8));
            }
            // The forward latency pie (the first): conv's share of the summed layer medians.
            double conv = 0, all = 0;
            for (size_t i = 0; i < r->layers.size(); ++i) {
                all += r->layers[i].fwd.median;
                if (r->a.layers[i].category == ridge::Category::conv) conv += r->layers[i].fwd.median;
            }
            CHECK(num(blocks[0].rows.at(0).at(0)) == 0);
            CHECK(num(blocks[0].rows.at(0).at(1)) == doctest::Approx(100 * conv / all).epsilon(1e-8));
        });
    }

    SUBCASE("spearman: the matrix of spearman_matrix, symmetric with 1 on the diagonal") {
        with_and_without_gpu([](const Study& s, Written& w, bool gpu) {
            RankMatrix m = spearman_matrix(s);
            std::vector<Block> blocks = read_dat(w.dat("spearman"));
            REQUIRE(blocks.size() == 1);
            size_t q = gpu ? 6 : 5;
            REQUIRE(blocks[0].rows.size() == q * q);
            for (const auto& row : blocks[0].rows) {
                size_t i = std::stoul(row.at(0)), j = std::stoul(row.at(1));
                CHECK(num(row.at(2)) == doctest::Approx(m.rho.at(i).at(j)).epsilon(1e-8));
                if (i == j) CHECK(row.at(3) == "1.00");
            }
            CHECK((w.gpv("spearman").find("GPU latency") != std::string::npos) == gpu);
        });
    }
}

TEST_CASE("figures without their data are left out with a reason and no file") {
    Study s = fixture::study(false);
    std::erase_if(s.runs, [](const Run& r) { return r.mode == ridge::Mode::train; });
    s.nets = {"resnet18", "alexnet"};
    Written w(s, "missing");
    for (const char* name : {"fwdbwd", "pies", "spearman"}) {
        INFO(name);
        CHECK_FALSE(w.figures[name].missing.empty());
        CHECK_FALSE(fs::exists(w.dat(name)));
    }
    CHECK(w.figures["throughput"].missing.empty());
    CHECK(read_dat(w.dat("throughput")).size() == 2);
}

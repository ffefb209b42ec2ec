#include "report/figures.h"

#include "bench/format.h"
#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> write_figure_data(const Study& s, const std::string& data_dir) {
    using Writer = std::vector<Figure> (*)(const Study&, const std::string&);
    const Writer writers[] = {chips_figures,      zoo_figures,      overlay_figures,
                              latency_figures,    spearman_figures, throughput_figures,
                              measured_figures,   fwdbwd_figures,   pies_figures};
    std::vector<Figure> all;
    for (Writer w : writers)
        for (Figure& f : w(s, data_dir)) all.push_back(std::move(f));
    return all;
}

void write_data(const std::string& data_dir, const std::string& name, const std::string& dat,
                const std::string& gpv) {
    cli::write_output(data_dir + "/" + name + ".dat", dat);
    cli::write_output(data_dir + "/" + name + ".gpv", gpv);
}

std::string gp_quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace ridge::report

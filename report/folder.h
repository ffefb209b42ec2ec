#pragma once
// Where `ridge report` writes. The destination is checked before the study (check_destination);
// the report is written into a fresh folder beside it (ReportFolder, made with mkdtemp before the
// study, so a place ridge cannot write is refused at once) and put in its place when complete. A
// folder already there is replaced only if ridge report wrote it (it holds the marker file
// .ridge-report) or it is empty: anything else is refused, and never touched.
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "bench/interrupt.h"

namespace ridge::report {

inline constexpr const char* marker_file = ".ridge-report";

// The destination without trailing slashes. A bench::UsageError naming the problem when it is '.',
// '..' or '/', holds the current folder, is a symbolic link, a file, a mount point or a folder
// ridge did not write, or a file stands where one of its parents should be.
std::filesystem::path check_destination(const std::string& out);

// The finished report could not be put in place (something else appeared there during the study);
// it was kept where it was written, which the message names.
struct NotPlaced : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ReportFolder {
public:
    // Creates dest's missing parents and a new folder beside dest; a bench::UsageError when that
    // fails (no permission, read-only file system). An interrupt removes both (interrupt.h).
    explicit ReportFolder(std::filesystem::path dest);
    ~ReportFolder();  // unless committed: removes the folder and the parents it created
    ReportFolder(const ReportFolder&) = delete;
    ReportFolder& operator=(const ReportFolder&) = delete;

    const std::filesystem::path& dir() const { return dir_; }

    // Writes the marker and puts the folder in dest's place: by swapping the two names where the
    // file system can (no moment without a report), else by two renames; the previous report is
    // then removed. NotPlaced when dest is no longer replaceable.
    void commit();

private:
    std::filesystem::path dest_, dir_, created_from_;
    std::unique_ptr<bench::RemovedOnInterrupt> guard_;
    bool done_ = false;
};

}  // namespace ridge::report

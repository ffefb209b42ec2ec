#include "train/data/folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/shape.h"

namespace ridge::data {

namespace fs = std::filesystem;

namespace {

bool image_name(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

bool hidden(const fs::path& p) { return p.filename().string().starts_with("."); }

// Opens and closes the file: what a worker will do later, so a file that would fail then
// (permissions, a dangling link, a folder with an image's name) is refused before the run.
void check_readable(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw DataError(cat(path, " cannot be read: ", std::strerror(errno)));
    struct stat st {};
    bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd);
    if (!regular) throw DataError(cat(path, " cannot be read: not a regular file"));
}

}  // namespace

ImageFolder scan_image_folder(const std::string& dir, const std::vector<std::string>* expected) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw DataError(cat(dir, ": no such folder"));
    if (!fs::is_directory(dir, ec)) throw DataError(cat(dir, ": not a folder"));
    ImageFolder f;
    f.root = dir;
    fs::directory_iterator it(dir, ec);
    if (ec) throw DataError(cat(dir, ": cannot be listed: ", ec.message()));
    bool any = false;
    for (const fs::directory_entry& e : it) {
        any = true;
        if (!hidden(e.path()) && e.is_directory(ec)) f.classes.push_back(e.path().filename().string());
    }
    if (!any) throw DataError(cat(dir, " is empty (expected one folder of images per class)"));
    if (f.classes.empty()) throw DataError(cat(dir, " has no class folders (expected ", dir, "/<class>/*.jpg)"));
    std::sort(f.classes.begin(), f.classes.end());
    if (expected && *expected != f.classes) {
        std::string diff;
        for (const std::string& c : *expected)
            if (!std::binary_search(f.classes.begin(), f.classes.end(), c)) {
                diff = cat("it lacks class '", c, "'");
                break;
            }
        if (diff.empty())
            for (const std::string& c : f.classes)
                if (std::find(expected->begin(), expected->end(), c) == expected->end()) {
                    diff = cat("it has class '", c, "' that training has not");
                    break;
                }
        throw DataError(cat(dir, " does not have the training set's ", expected->size(), " classes: ", diff));
    }

    for (size_t label = 0; label < f.classes.size(); ++label) {
        fs::path cdir = fs::path(dir) / f.classes[label];
        std::vector<std::pair<std::string, std::string>> found;  // (folder, name): torchvision's order
        fs::recursive_directory_iterator e(cdir, fs::directory_options::follow_directory_symlink, ec);
        if (ec) throw DataError(cat(cdir.string(), ": cannot be listed: ", ec.message()));
        for (; e != fs::recursive_directory_iterator(); e.increment(ec)) {
            if (hidden(e->path())) {
                if (e->is_directory(ec)) e.disable_recursion_pending();
                continue;
            }
            if (e->is_directory(ec) || !image_name(e->path())) continue;
            found.emplace_back(e->path().parent_path().string(), e->path().filename().string());
        }
        if (ec) throw DataError(cat(cdir.string(), ": cannot be listed: ", ec.message()));
        if (found.empty()) throw DataError(cat(cdir.string(), " has no images (.jpg, .jpeg or .png files)"));
        std::sort(found.begin(), found.end());
        for (const auto& [folder, name] : found) {
            std::string path = (fs::path(folder) / name).string();
            check_readable(path);
            f.samples.push_back({path, int32_t(label)});
        }
        f.per_class.push_back(int64_t(found.size()));
    }
    return f;
}

Dataset scan_dataset(const std::string& dir, bool val) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw DataError(cat(dir, ": no such folder"));
    if (!fs::is_directory(dir, ec)) throw DataError(cat(dir, ": not a folder"));
    if (fs::directory_iterator(dir, ec) == fs::directory_iterator())
        throw DataError(cat(dir, " is empty (expected ", dir, "/train/<class>/*.jpg)"));
    fs::path train = fs::path(dir) / "train";
    if (!fs::is_directory(train, ec))
        throw DataError(cat(dir, " has no train/ folder (expected ", dir, "/train/<class>/*.jpg)"));
    Dataset d;
    d.train = scan_image_folder(train.string());
    if (val) {
        fs::path v = fs::path(dir) / "val";
        if (!fs::is_directory(v, ec))
            throw DataError(cat("--val: ", dir, " has no val/ folder (expected ", dir, "/val/<class>/*.jpg)"));
        d.val = scan_image_folder(v.string(), &d.train.classes);
    }
    return d;
}

}  // namespace ridge::data

#include "report/folder.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/format.h"
#include "bench/usage_error.h"
#include "engine/shape.h"

namespace fs = std::filesystem;

namespace ridge::report {

namespace {

bool written_by_ridge(const fs::path& dir) {
    struct stat st;
    return ::lstat((dir / marker_file).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool empty_folder(const fs::path& dir) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    return !ec && it == fs::directory_iterator();
}

// Ridge wrote it, or there is nothing in it to lose.
bool replaceable(const fs::path& dir) { return written_by_ridge(dir) || empty_folder(dir); }

// Whether inner is outer or lies inside it (both absolute and without symbolic links).
bool within(const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (const fs::path& o : outer) {
        if (i == inner.end() || *i != o) return false;
        ++i;
    }
    return true;
}

// Removes the folders from `from` up to and including `top` while they are empty.
void remove_empty_up_to(fs::path from, const fs::path& top) {
    if (top.empty()) return;
    for (fs::path q = std::move(from); !q.empty(); q = q.parent_path()) {
        if (::rmdir(q.c_str()) != 0 || q == top) return;
    }
}

std::string temp_sibling(const fs::path& dest, const char* what) {
    fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
    return (parent / (dest.filename().string().substr(0, 200) + what + "XXXXXX")).string();
}

}  // namespace

fs::path check_destination(const std::string& out) {
    auto refuse = [&](const std::string& why) { return bench::UsageError(cat("ridge report: --out '", out, "' ", why)); };
    if (out.empty()) throw bench::UsageError("ridge report: --out is empty");
    std::string s = out;
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    fs::path dest(s);
    std::string name = dest.filename().string();
    const char* own = "; the report needs a folder of its own (such as results/mine)";
    if (s == "/") throw refuse(cat("is the root folder", own));
    if (name == "." || name == "..") throw refuse(cat("ends in '", name, "', a folder that holds others", own));

    struct stat st;
    if (::lstat(dest.c_str(), &st) != 0) {
        if (errno == ENOTDIR) throw refuse("cannot be made: one of its parents is a file");
        if (errno != ENOENT) throw refuse(cat("cannot be looked at: ", std::strerror(errno)));
        return dest;
    }
    if (S_ISLNK(st.st_mode)) throw refuse("is a symbolic link; name the folder itself");
    if (!S_ISDIR(st.st_mode)) throw refuse("exists and is not a folder");
    if (!replaceable(dest))
        throw refuse(cat("exists and was not written by ridge report (it has no ", marker_file,
                         "); it is left as it is: remove it or name another folder"));
    struct stat up;
    if (::stat((dest / "..").c_str(), &up) == 0 && up.st_dev != st.st_dev)
        throw refuse("is a mount point; name a folder inside it");
    // Replacing it moves it aside, which would pull the current folder away from under ridge.
    std::error_code ec;
    fs::path cwd = fs::current_path(ec), real = fs::canonical(dest, ec);
    if (!ec && within(cwd, real)) throw refuse(cat("holds the current folder", own));
    return dest;
}

ReportFolder::ReportFolder(fs::path dest) : dest_(std::move(dest)) {
    fs::path parent = dest_.parent_path().empty() ? fs::path(".") : dest_.parent_path();
    std::error_code ec;
    for (fs::path q = parent; !q.empty() && !fs::exists(fs::symlink_status(q, ec)); q = q.parent_path())
        created_from_ = q;
    fs::create_directories(parent, ec);
    if (ec) {
        remove_empty_up_to(parent, created_from_);
        throw bench::UsageError(cat("ridge report: cannot make the folder '", parent.string(), "': ", ec.message()));
    }
    std::string dir = temp_sibling(dest_, ".partial.");
    if (!::mkdtemp(dir.data())) {
        int err = errno;
        remove_empty_up_to(parent, created_from_);
        throw bench::UsageError(cat("ridge report: cannot write in '", parent.string(), "': ", std::strerror(err)));
    }
    dir_ = dir;
    guard_ = std::make_unique<bench::RemovedOnInterrupt>(dir_.string(), created_from_.string());
    // mkdtemp's 0700 would make the report private; it gets what mkdir would have given it.
    ::chmod(dir_.c_str(), mode_t(bench::new_file_mode(0777)));
    fs::create_directory(dir_ / "data");
}

ReportFolder::~ReportFolder() {
    if (done_) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
    remove_empty_up_to(dir_.parent_path(), created_from_);
}

void ReportFolder::commit() {
    bench::write_output((dir_ / marker_file).string(),
                      "Written by `ridge report`, which replaces this folder when told to write here again.\n");
    auto kept = [&](const std::string& why) {
        done_ = true;
        guard_.reset();
        return NotPlaced(cat("ridge report: ", why, "; the finished report is in '", dir_.string(), "'"));
    };
    auto failed = [&](const fs::path& p) { return kept(cat("cannot put it at '", p.string(), "': ", std::strerror(errno))); };

    struct stat st;
    if (::lstat(dest_.c_str(), &st) != 0) {
        // RENAME_NOREPLACE: a folder that appeared meanwhile is not replaced unseen.
        if (::renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, dest_.c_str(), RENAME_NOREPLACE) != 0 &&
            !((errno == EINVAL || errno == ENOSYS) && ::rename(dir_.c_str(), dest_.c_str()) == 0))
            throw failed(dest_);
        done_ = true;
        guard_.reset();
        return;
    }
    if (!S_ISDIR(st.st_mode) || !replaceable(dest_))
        throw kept(cat("'", dest_.string(), "' appeared during the study and was not written by ridge report"));

    fs::path old = dir_;
    if (::renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, dest_.c_str(), RENAME_EXCHANGE) != 0) {
        if (errno != EINVAL && errno != ENOSYS) throw failed(dest_);
        // This file system cannot swap two names: move the old report aside, then the new one in.
        std::string aside = temp_sibling(dest_, ".old.");
        if (!::mkdtemp(aside.data())) throw failed(aside);
        if (::rename(dest_.c_str(), aside.c_str()) != 0) {
            ::rmdir(aside.c_str());
            throw failed(dest_);
        }
        if (::rename(dir_.c_str(), dest_.c_str()) != 0) {
            int err = errno;
            ::rename(aside.c_str(), dest_.c_str());
            errno = err;
            throw failed(dest_);
        }
        old = aside;
    }
    done_ = true;
    std::error_code ec;
    fs::remove_all(old, ec);
    if (ec) std::cerr << "ridge report: the previous report, moved to '" << old.string() << "', could not be removed: " << ec.message() << "\n";
    guard_.reset();
}

}  // namespace ridge::report

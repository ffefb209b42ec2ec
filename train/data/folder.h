#pragma once
// The ImageFolder layout: DIR/<class>/**/*.jpg|*.jpeg|*.png, classes the sorted names of the
// sub-folders (hidden ones skipped), each class's files found recursively and sorted as
// torchvision's make_dataset sorts them (by folder, then name); extensions matched without case.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ridge::data {

// A problem with the user's data: one line naming the folder or file; nothing has run yet.
struct DataError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Sample {
    std::string path;
    int32_t label = 0;
};

struct ImageFolder {
    std::string root;
    std::vector<std::string> classes;
    std::vector<Sample> samples;
    std::vector<int64_t> per_class;  // images in each class
};

// Refuses, with a DataError: a missing folder or one that is not a folder, an empty one, one
// without class folders, a class without images, and an image file that cannot be opened for
// reading (every file is opened once; nothing is read). `classes`, when given, must be the
// folder's classes exactly (a validation set against its training set).
ImageFolder scan_image_folder(const std::string& dir, const std::vector<std::string>* classes = nullptr);

// The training and (with `val`) validation folders of --data DIR: DIR/train and DIR/val.
struct Dataset {
    ImageFolder train, val;
};
Dataset scan_dataset(const std::string& dir, bool val);

}  // namespace ridge::data

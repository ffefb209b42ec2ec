#pragma once
// Tensor shapes and element types. Shapes are plain vectors, batch first: (N,C,H,W) for images,
// (N,T,D) for token sequences. Nothing here allocates tensor data.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "(1,64,56,56)"

enum class DType { fp32, fp16, bf16 };
int64_t dtype_bytes(DType t);
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view s);

// A network that cannot be built: the message names the layer, its input shapes and the rule.
struct BuildError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A count beyond 64 bits: the batch or resolution asked for is too large to count exactly.
struct CountOverflow : std::runtime_error {
    using std::runtime_error::runtime_error;
};
int64_t checked_mul(int64_t a, int64_t b);  // throws CountOverflow
int64_t checked_add(int64_t a, int64_t b);

// Thrown by an op's shape rule; the graph adds the layer name and input shapes.
struct ShapeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Builds a string from streamable parts; g++ 12 has no std::format.
template <class... Parts>
std::string cat(const Parts&... parts);

}  // namespace ridge

#include <sstream>
template <class... Parts>
std::string ridge::cat(const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
}

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

// Text from outside (a file, the command line) is checked with these before it reaches a
// terminal or a JSON file. The length of the well-formed UTF-8 sequence at s[i] (1 to 4 bytes;
// overlong forms and surrogates are not well formed), or 0 when the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i);
// Whether the code point at s[i] (of utf8_length n) is a C0 or C1 control character or DEL,
// which a terminal would act on instead of showing.
bool is_control(std::string_view s, size_t i, size_t n);

}  // namespace ridge

#include <sstream>
template <class... Parts>
std::string ridge::cat(const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
}

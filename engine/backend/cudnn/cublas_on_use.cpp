// The cuBLAS entry points the executor calls, each opening libcublas on its first use.
//
// Linked directly, libcublas pulls in libcublasLt, whose initializers run when any ridge process
// starts, GPU or not: `ridge list` took 0.18 s, 86 % of its 51,000 page faults in libcublasLt, on
// a 2-core Zen 4 VM (perf record -e page-faults), and every CLI test and fuzz case paid that. Opened
// here instead, the library loads when a cudnn executor is made or cuBLAS's version is read, that
// is, only on a machine with a GPU. Each function has cuBLAS's own declaration (cublas_api.h), so a
// signature that drifts from the library's will not compile.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

namespace {

struct Library {
    void* handle = nullptr;
    std::string error;
};

const Library& cublas() {
    static const Library lib = [] {
        Library l;
        l.handle = dlopen(RIDGE_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!l.handle) {
            const char* e = dlerror();
            l.error = std::string("cannot open ") + RIDGE_CUBLAS_LIBRARY + ": " + (e ? e : "unknown error");
            // The toolkit moved since the build: the loader's own search (LD_LIBRARY_PATH, ld.so.conf).
            const char* soname = std::strrchr(RIDGE_CUBLAS_LIBRARY, '/');
            l.handle = dlopen(soname ? soname + 1 : RIDGE_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        }
        return l;
    }();
    return lib;
}

// The first function the library lacks, for cublasGetStatusString to name.
std::atomic<const char*> missing{nullptr};

// The library's definition of the function `name`, of type F (the one declared here).
template <class F>
F* resolve(const char* name) {
    static_assert(std::is_function_v<F>);
    const Library& lib = cublas();
    if (!lib.handle) return nullptr;
    F* f = reinterpret_cast<F*>(dlsym(lib.handle, name));
    const char* none = nullptr;
    if (!f) missing.compare_exchange_strong(none, name);
    return f;
}

}  // namespace

// A call that cannot reach the library fails as cuBLAS does when it is not set up; the checked-call
// macro then prints cublasGetStatusString's text, which names the file that would not open.
#define RIDGE_CUBLAS_FORWARD(name, ...)                         \
    static auto* const f = resolve<decltype(name)>(#name);      \
    return f ? f(__VA_ARGS__) : CUBLAS_STATUS_NOT_INITIALIZED

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) { RIDGE_CUBLAS_FORWARD(cublasCreate_v2, handle); }

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) { RIDGE_CUBLAS_FORWARD(cublasDestroy_v2, handle); }

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    RIDGE_CUBLAS_FORWARD(cublasSetStream_v2, handle, stream);
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
    RIDGE_CUBLAS_FORWARD(cublasSetWorkspace_v2, handle, workspace, bytes);
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
    RIDGE_CUBLAS_FORWARD(cublasGetProperty, type, value);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void* beta, void* C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    // C++ also sees cublas_api.h's inline overload taking a cudaDataType compute type; this is the C one.
    using Self = cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                const void*, cudaDataType, int, long long, const void*, cudaDataType, int, long long,
                                const void*, void*, cudaDataType, int, long long, int, cublasComputeType_t,
                                cublasGemmAlgo_t);
    [[maybe_unused]] Self* const declared = &cublasGemmStridedBatchedEx;  // Self is the header's C declaration
    static auto* const f = resolve<Self>("cublasGemmStridedBatchedEx");
    return f ? f(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
                 ldc, strideC, batchCount, computeType, algo)
             : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char* cublasGetStatusString(cublasStatus_t status) {
    const Library& lib = cublas();
    if (!lib.handle) return lib.error.c_str();
    static const std::string lacks = std::string(RIDGE_CUBLAS_LIBRARY) + " has no ";
    static thread_local std::string text;
    if (const char* name = missing.load()) return (text = lacks + name).c_str();
    static auto* const f = resolve<decltype(cublasGetStatusString)>("cublasGetStatusString");
    return f ? f(status) : (text = lacks + "cublasGetStatusString").c_str();
}

}  // extern "C"

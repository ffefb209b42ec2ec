#pragma once
// oneDNN's C++ API throws dnnl::error; the few C calls ridge makes return a status instead.
// RIDGE_DNNL_CHECK turns a failed one into an exception naming the call, file and line; the
// executor adds the layer it was planning or running.
#include <oneapi/dnnl/dnnl.h>

#include <stdexcept>
#include <string>

#define RIDGE_DNNL_CHECK(expr)                                                                      \
    do {                                                                                            \
        dnnl_status_t ridge_status_ = (expr);                                                       \
        if (ridge_status_ != dnnl_success)                                                          \
            throw std::runtime_error(std::string("oneDNN call ") + #expr + " failed with status " + \
                                     std::to_string(int(ridge_status_)) + " at " + __FILE__ + ":" + \
                                     std::to_string(__LINE__));                                     \
    } while (0)

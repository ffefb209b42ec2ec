# The standard headers most sources include, parsed once per build instead of once per source.
# report/compare.cpp compiled in 10.2 s, in 8.2 with them precompiled; tests/test_report.cpp in 5.7
# and 3.3. The Release build from scratch took 7 min 7 s and 7 min 16 s, against about 8 min 40
# before; the sanitized CI build's compiles 893 CPU-seconds against 1025 (GCC 12, 2-core Zen 3).
#
# One header serves every C++ target (REUSE_FROM), and GCC uses it only where the compile agrees
# with the one that made it: the same optimization level and, for the macros it records, the same
# definitions. `-fopenmp` defines _OPENMP, so every C++ target compiles with it when OpenMP is
# used at all; sources without OpenMP pragmas compile the same, and only what links OpenMP links
# libgomp. Where a compile differs anyway, GCC reads the headers as text: slower, never wrong.
#
# Every source still includes what it uses: a build with -DRIDGE_PCH=OFF compiles each source
# with only its own includes.
function(ridge_precompile_std_headers)
  # The header is compiled for a target of its own, whose one source is empty (written here, so
  # that cmake/ holds no source for tests/test_layers.cpp to rank).
  set(empty ${PROJECT_BINARY_DIR}/generated/ridge_std_pch.cpp)
  file(CONFIGURE OUTPUT ${empty} CONTENT "// ridge_std_pch's source: its precompiled header is all it makes\n")
  add_library(ridge_std_pch OBJECT ${empty})
  target_precompile_headers(ridge_std_pch PRIVATE
    <algorithm> <array> <atomic> <charconv> <chrono> <cmath> <cstdint> <cstdio> <cstdlib> <cstring> <filesystem>
    <fstream> <functional> <iostream> <limits> <map> <memory> <numeric> <optional> <set> <sstream> <stdexcept>
    <string> <string_view> <thread> <utility> <variant> <vector>)
  set(openmp_flags)
  if(TARGET OpenMP::OpenMP_CXX)
    set(openmp_flags ${OpenMP_CXX_FLAGS})
    separate_arguments(openmp_flags)
    target_compile_options(ridge_std_pch PRIVATE ${openmp_flags})
  endif()

  # libstdc++ 12 turns three warnings off around std::char_traits with diagnostic pragmas
  # (bits/char_traits.h), and GCC 12 drops those pragmas from a precompiled header: std::string's
  # operator+ then drew bogus memcpy-bound warnings in 24 sources. Off for the targets using it.
  set(quiet)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    set(quiet -Wno-stringop-overflow -Wno-stringop-overread -Wno-array-bounds)
  endif()

  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(t STREQUAL "ridge_std_pch" OR NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
        continue()
      endif()
      # C++ sources only: the CUDA targets' host code goes through nvcc.
      get_target_property(all_sources ${t} SOURCES)
      set(sources ${all_sources})
      list(FILTER sources EXCLUDE REGEX "\\.(cpp|h)$")
      if(sources)
        continue()
      endif()
      target_compile_options(${t} PRIVATE ${openmp_flags} ${quiet})
      target_precompile_headers(${t} REUSE_FROM ridge_std_pch)
      # A source with instruction-set flags of its own (the roofline probes' kernels) could not use
      # the header; it parses its includes.
      get_target_property(target_dir ${t} SOURCE_DIR)
      foreach(src IN LISTS all_sources)
        cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${target_dir})
        get_source_file_property(options ${src} TARGET_DIRECTORY ${t} COMPILE_OPTIONS)
        if(options MATCHES "(^|;)-m")
          set_source_files_properties(${src} TARGET_DIRECTORY ${t} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
        endif()
      endforeach()
    endforeach()
  endwhile()
endfunction()

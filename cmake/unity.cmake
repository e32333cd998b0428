# cmake/unity.cmake: unity (jumbo) builds for CI's build directories (issue 38): build/ (.ci/run),
# build-asan/ and build-tsan/ (scripts/sanitize.sh). Included at the end of project() with
# -DCMAKE_PROJECT_INCLUDE=<this file>; a plain configure does not include it. A unity source
# #includes several .cpp files, so the headers they share (doctest, fmt, Boost.Hana, cufuse's
# own) are parsed, and their inline functions compiled, once per batch instead of once per
# file: on the 2-core CI machine the library's 148 batchable files take 230 s of CPU instead of
# ~720 at -O0 with ASan+UBSan (and 290 s at -O3), a group of 7 test files 18 s instead of 54
# (-O0 ASan+UBSan) or 64 (-O3). The GPU tests likewise (CUFUSE_UNITY_GPU_TEST_GROUPS: 250 s of
# CPU at -O3 file by file on CI).
#
# The library (cufuse, cufuse_cli_core): batches of CUFUSE_UNITY_BATCH files in source order.
# Files with their own compile options or definitions (eval_bytecode.cpp, dist/nccl.cpp,
# dist/mpi.cpp) and the CUDA source stay out (CMake's rule). So a file-local helper (anonymous
# namespace or `static`) of a library .cpp may share neither name and signature nor a better
# overload with another file's: give it a distinct name (as dump_state, compaction_require).
#
# The CPU tests (cufuse_tests): their file-local helpers share names across files (run,
# check_close, count_of, ...), so only the groups below are compiled together: files whose
# file-scope names (and those of the test headers they include) neither collide nor are used
# by a later file of the group, and whose `using namespace` of a test helper namespace has no
# file after it. A file in no group (main.cpp, a new file, the dist tests, which change often)
# compiles alone. A build error "redefinition of ..." or "call of overloaded ... is ambiguous"
# in a unity_*.cxx names the helper: rename it, or take its file out of its group here.
set(CUFUSE_UNITY_BATCH 16 CACHE STRING "library .cpp files per unity source (cmake/unity.cmake)")
option(CUFUSE_UNITY_TESTS "compile the CPU tests in the groups of cmake/unity.cmake" ON)

set(CUFUSE_UNITY_TEST_GROUPS
  "bytecode cli_complex cli_corpus cli_limits cli_precompile core_fusion fft_half indexing_masks"
  "bytecode_rows cli_complex_linalg compiler complex_codegen context core_codegen core_inplace core_inplace_lazy"
  "cli_indexing complex core_long_programs core_loop core_views env fuse io_corpus"
  "cli_inplace cli_sorting disk_cache runtime startup"
  "cli_parser complex_linalg"
  "cli_report cli_statistics complex_linalg_oracle"
  "cli_surface core_loop_shapes core_param_space core_promotion core_reduce fuse_indexing io_oracle"
  "core_cse core_inplace_fuzzfound fft indexing indexing_oracle"
  "disk_cache_faults manipulation_cli"
  "fuzz indexing_writes manipulation_oracle"
  "io_interop library_linalg manipulation_random plan_rules reliability streams typed_rules"
  "library_plans library_signal manipulation tiered"
  "library_values op_rows precompile ptx_patterns scalar_forms size_checks statistics_codegen statistics_oracle"
  "surface surface_oracle"
  "threads typed"
)
# The GPU tests (cufuse_gpu_tests, compiled on CI but run on the GPU machine) the same way:
# groups of files that share no file-scope name (found by compiling them together).
set(CUFUSE_UNITY_GPU_TEST_GROUPS
  "complex dist elementwise fft fft_half fuse"
  "fuzz graph_launch io library reduce"
  "reduce_layouts runtime signal statistics tiered"
  "complex_linalg indexing typed"
  "manipulation streams"
  "sorting user_kernel"
)

# Test target `target` compiled in the groups `groups` (a list of space-separated stems; the
# file of stem S is <prefix>S<suffix>), each group a unity source named <label>_<n>.
function(cufuse_unity_test_groups target groups prefix suffix label)
  if(NOT CUFUSE_UNITY_TESTS OR NOT TARGET ${target})
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set(n 0)
  foreach(group IN LISTS groups)
    math(EXPR n "${n} + 1")
    string(REPLACE " " ";" stems "${group}")
    list(TRANSFORM stems REPLACE "^(.+)$" "${prefix}\\1${suffix}")
    set_source_files_properties(${stems} DIRECTORY "${PROJECT_SOURCE_DIR}/tests"
      PROPERTIES UNITY_GROUP "${label}_${n}")
  endforeach()
endfunction()

function(cufuse_unity_setup)
  foreach(t cufuse cufuse_cli_core)
    if(TARGET ${t})
      set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
        UNITY_BUILD_BATCH_SIZE ${CUFUSE_UNITY_BATCH})
    endif()
  endforeach()
  cufuse_unity_test_groups(cufuse_tests "${CUFUSE_UNITY_TEST_GROUPS}" "${PROJECT_SOURCE_DIR}/tests/test_" ".cpp" tests)
  cufuse_unity_test_groups(cufuse_gpu_tests "${CUFUSE_UNITY_GPU_TEST_GROUPS}" "${PROJECT_SOURCE_DIR}/tests/gpu/test_"
                           "_gpu.cpp" gpu_tests)
endfunction()
# At the end of the top-level CMakeLists.txt, once the targets exist.
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL cufuse_unity_setup)

# tests/cli_bad_inputs.cmake: registers tests/cli_bad_inputs.sh (cufuse-dump-kernels on bad,
# deep and huge inputs: a clear error each, never a crash or hang) as the CTest case cli_bad_inputs.
if(TARGET cufuse-dump-kernels)
  add_test(NAME cli_bad_inputs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_bad_inputs.sh $<TARGET_FILE:cufuse-dump-kernels>)
  set_tests_properties(cli_bad_inputs PROPERTIES TIMEOUT 600
    ENVIRONMENT "CUFUSE_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/kernel-cache;CUDA_CACHE_DISABLE=1")
endif()

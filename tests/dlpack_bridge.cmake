# tests/dlpack_bridge.cmake: libcufuse_dlpack_bridge (tests/dlpack_bridge/bridge.cpp), the C-ABI
# shared library scripts/dlpack_check.py loads with ctypes to exchange DLPack capsules with
# NumPy (CTest `oracle_dlpack_numpy`, host tensors) and, on the GPU machine, PyTorch, CuPy and
# JAX (scripts/gpu-check.sh's dlpack step).
if(DLPACK_INCLUDE_DIR)
  add_library(cufuse_dlpack_bridge SHARED ${CMAKE_CURRENT_SOURCE_DIR}/dlpack_bridge/bridge.cpp)
  target_link_libraries(cufuse_dlpack_bridge PRIVATE cufuse)
  target_include_directories(cufuse_dlpack_bridge PRIVATE ${DLPACK_INCLUDE_DIR})
  set_target_properties(cufuse_dlpack_bridge PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  add_dependencies(cufuse_tests cufuse_dlpack_bridge)
  if(Python3_Interpreter_FOUND)
    add_test(NAME oracle_dlpack_numpy
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/dlpack_check.py
              --lib $<TARGET_FILE:cufuse_dlpack_bridge> --frameworks numpy)
  endif()
endif()

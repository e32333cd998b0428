# tests/numpy_oracles.cmake: the NumPy oracles of issues 30 and 33, one function for all. For a
# name N (indexing, manipulation, surface, sorting, statistics, complex, fft, complex_linalg), test `oracle_N_cases` runs
# tests/oracle/gen_N.py (python3 with numpy>=2 and ml_dtypes) into <build>/tests/oracle_N before `unit_N_oracle`
# (CTest fixture `cufuse_N_oracle`), which finds the cases through CUFUSE_<N>_ORACLE_DIR.
# Without Python the unit test still runs and fails, saying how to generate the cases.
# (The reference evaluator's oracle, tests/oracle.cmake, and the file formats',
# tests/io_oracle.cmake, take other arguments and steps.)
function(cufuse_numpy_oracle name)
  string(TOUPPER ${name} upper)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/oracle_${name})
  if(NOT TEST unit_${name}_oracle)  # a build of an explicit few test files
    return()
  endif()
  if(Python3_Interpreter_FOUND)
    add_test(NAME oracle_${name}_cases
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_${name}.py --out ${dir})
    set_tests_properties(oracle_${name}_cases PROPERTIES FIXTURES_SETUP cufuse_${name}_oracle)
    set_property(TEST unit_${name}_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_${name}_oracle)
  else()
    message(WARNING "python3 not found: tests/oracle/gen_${name}.py's cases are not generated, "
                    "and unit_${name}_oracle will fail")
  endif()
  set_property(TEST unit_${name}_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_${upper}_ORACLE_DIR=${dir}")
  set_property(TEST unit_${name}_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_REFERENCE_COMPILE=${CUFUSE_ORACLE_REFERENCE_COMPILE}")
endfunction()

cufuse_numpy_oracle(indexing)      # advanced indexing, masks, scatters
cufuse_numpy_oracle(manipulation)  # joining, splitting, rearranging
cufuse_numpy_oracle(surface)       # creation, printing, testing helpers
cufuse_numpy_oracle(sorting)       # sort, search, sets, order statistics
cufuse_numpy_oracle(statistics)    # bincount, histograms, moments, differences
cufuse_numpy_oracle(complex)       # complex dtypes: ops, casts, reductions, repr
cufuse_numpy_oracle(fft)           # numpy.fft: transforms, helpers, errors
cufuse_numpy_oracle(complex_linalg)  # complex matmul/einsum/dot/vdot and numpy.linalg

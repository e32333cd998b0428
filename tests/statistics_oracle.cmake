# tests/statistics_oracle.cmake: the NumPy oracle of issue 33's statistics (bincount,
# histograms, moments, differences). Test `oracle_statistics_cases` runs
# tests/oracle/gen_statistics.py (python3 with numpy>=2) into <build>/tests/oracle_statistics before
# `unit_statistics_oracle` (CTest fixture `cufuse_statistics_oracle`), which finds the
# cases through CUFUSE_STATISTICS_ORACLE_DIR.
set(CUFUSE_STATISTICS_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/oracle_statistics)
if(TEST unit_statistics_oracle)
  if(Python3_Interpreter_FOUND)
    add_test(NAME oracle_statistics_cases
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_statistics.py
              --out ${CUFUSE_STATISTICS_ORACLE_DIR})
    set_tests_properties(oracle_statistics_cases PROPERTIES FIXTURES_SETUP cufuse_statistics_oracle)
    set_property(TEST unit_statistics_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_statistics_oracle)
  else()
    message(WARNING "python3 not found: tests/oracle/gen_statistics.py's cases are not generated, "
                    "and unit_statistics_oracle will fail")
  endif()
  set_property(TEST unit_statistics_oracle APPEND PROPERTY ENVIRONMENT
               "CUFUSE_STATISTICS_ORACLE_DIR=${CUFUSE_STATISTICS_ORACLE_DIR}")
endif()

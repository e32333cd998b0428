# tests/sorting_oracle.cmake: the NumPy oracle of issue 33's sorting, searching, sets and order
# statistics. Test `oracle_sorting_cases` runs tests/oracle/gen_sorting.py (python3 with numpy>=2
# and ml_dtypes) into <build>/tests/oracle_sorting before `unit_sorting_oracle` (CTest fixture
# `cufuse_sorting_oracle`), which finds the cases through CUFUSE_SORTING_ORACLE_DIR.
set(CUFUSE_SORTING_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/oracle_sorting)
if(Python3_Interpreter_FOUND)
  add_test(NAME oracle_sorting_cases
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_sorting.py --out ${CUFUSE_SORTING_ORACLE_DIR})
  set_tests_properties(oracle_sorting_cases PROPERTIES FIXTURES_SETUP cufuse_sorting_oracle)
  set_property(TEST unit_sorting_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_sorting_oracle)
else()
  message(WARNING "python3 not found: tests/oracle/gen_sorting.py's cases are not generated, "
                  "and unit_sorting_oracle will fail")
endif()
set_property(TEST unit_sorting_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_SORTING_ORACLE_DIR=${CUFUSE_SORTING_ORACLE_DIR}")

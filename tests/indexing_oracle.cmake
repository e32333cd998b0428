# tests/indexing_oracle.cmake: the NumPy oracle of issue 30's advanced indexing, masks and
# scatters. Test `oracle_indexing_cases` runs tests/oracle/gen_indexing.py (python3 with numpy>=2
# and ml_dtypes) into <build>/tests/oracle_indexing before `unit_indexing_oracle` (CTest fixture
# `cufuse_indexing_oracle`), which finds the cases through CUFUSE_INDEXING_ORACLE_DIR.
set(CUFUSE_INDEXING_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/oracle_indexing)
if(Python3_Interpreter_FOUND)
  add_test(NAME oracle_indexing_cases
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_indexing.py --out ${CUFUSE_INDEXING_ORACLE_DIR})
  set_tests_properties(oracle_indexing_cases PROPERTIES FIXTURES_SETUP cufuse_indexing_oracle)
  set_property(TEST unit_indexing_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_indexing_oracle)
else()
  message(WARNING "python3 not found: tests/oracle/gen_indexing.py's cases are not generated, "
                  "and unit_indexing_oracle will fail")
endif()
set_property(TEST unit_indexing_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_INDEXING_ORACLE_DIR=${CUFUSE_INDEXING_ORACLE_DIR}")

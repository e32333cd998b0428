# tests/manipulation_oracle.cmake: the NumPy oracle of issue 30's joining, splitting and
# rearranging functions. Test `oracle_manipulation_cases` runs tests/oracle/gen_manipulation.py
# (python3 with numpy>=2 and ml_dtypes) into <build>/tests/oracle_manipulation before
# `unit_manipulation_oracle` (CTest fixture `cufuse_manipulation_oracle`), which finds the
# cases through CUFUSE_MANIPULATION_ORACLE_DIR.
set(CUFUSE_MANIPULATION_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/oracle_manipulation)
if(TEST unit_manipulation_oracle)
  if(Python3_Interpreter_FOUND)
    add_test(NAME oracle_manipulation_cases
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_manipulation.py
              --out ${CUFUSE_MANIPULATION_ORACLE_DIR})
    set_tests_properties(oracle_manipulation_cases PROPERTIES FIXTURES_SETUP cufuse_manipulation_oracle)
    set_property(TEST unit_manipulation_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_manipulation_oracle)
  else()
    message(WARNING "python3 not found: tests/oracle/gen_manipulation.py's cases are not generated, "
                    "and unit_manipulation_oracle will fail")
  endif()
  set_property(TEST unit_manipulation_oracle APPEND PROPERTY ENVIRONMENT
               "CUFUSE_MANIPULATION_ORACLE_DIR=${CUFUSE_MANIPULATION_ORACLE_DIR}")
endif()

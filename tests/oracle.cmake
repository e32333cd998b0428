# tests/oracle.cmake: the NumPy oracle of the reference evaluator. Test `oracle_cases`
# runs tests/oracle/gen_cases.py (python3 with numpy>=2 and ml_dtypes; scipy for the
# convolve2d/correlate2d cases, skipped without it) into
# <build>/tests/oracle before the oracle unit tests (CTest fixture `cufuse_oracle`), and
# `unit_reference_oracle` finds the cases through CUFUSE_ORACLE_DIR. Without Python the unit tests still run and
# the oracle tests fail, saying how to generate the cases.
set(CUFUSE_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/oracle)
if(Python3_Interpreter_FOUND)
  add_test(NAME oracle_cases
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_cases.py
            --src ${PROJECT_SOURCE_DIR} --out ${CUFUSE_ORACLE_DIR})
  set_tests_properties(oracle_cases PROPERTIES FIXTURES_SETUP cufuse_oracle)
  set_property(TEST unit_reference_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_oracle)
else()
  message(WARNING "python3 not found: the NumPy oracle cases (tests/oracle/gen_cases.py) are not generated, "
                  "and the reference oracle tests will fail")
endif()
set_property(TEST unit_reference_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_ORACLE_DIR=${CUFUSE_ORACLE_DIR}")
set_property(TEST unit_reference_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_REFERENCE_COMPILE=${CUFUSE_ORACLE_REFERENCE_COMPILE}")

# tests/surface_oracle.cmake: the NumPy oracle of issue 30's creation, printing and testing
# functions. Test `oracle_surface_cases` runs tests/oracle/gen_surface.py (python3 with numpy>=2
# and ml_dtypes) into <build>/tests/oracle_surface before `unit_surface_oracle` (CTest fixture
# `cufuse_surface_oracle`), which finds the cases through CUFUSE_SURFACE_ORACLE_DIR.
set(CUFUSE_SURFACE_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/oracle_surface)
if(Python3_Interpreter_FOUND)
  add_test(NAME oracle_surface_cases
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/gen_surface.py --out ${CUFUSE_SURFACE_ORACLE_DIR})
  set_tests_properties(oracle_surface_cases PROPERTIES FIXTURES_SETUP cufuse_surface_oracle)
  set_property(TEST unit_surface_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_surface_oracle)
else()
  message(WARNING "python3 not found: tests/oracle/gen_surface.py's cases are not generated, "
                  "and unit_surface_oracle will fail")
endif()
set_property(TEST unit_surface_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_SURFACE_ORACLE_DIR=${CUFUSE_SURFACE_ORACLE_DIR}")

# tests/io_oracle.cmake: the NumPy oracle of the file formats. `oracle_io_cases` runs
# tests/oracle/io_cases.py gen (NumPy writes), then unit_io_oracle (tests/test_io_oracle.cpp)
# reads those files and writes its own, then `oracle_io_check` runs io_cases.py check
# (NumPy reads cufuse's files and compares them with np.save's bytes). CTest fixtures order them.
set(CUFUSE_IO_ORACLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/io_oracle)
set_property(TEST unit_io_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_IO_ORACLE_DIR=${CUFUSE_IO_ORACLE_DIR}")
if(Python3_Interpreter_FOUND)
  add_test(NAME oracle_io_cases
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/io_cases.py gen --out ${CUFUSE_IO_ORACLE_DIR})
  set_tests_properties(oracle_io_cases PROPERTIES FIXTURES_SETUP cufuse_io_oracle)
  set_property(TEST unit_io_oracle APPEND PROPERTY FIXTURES_REQUIRED cufuse_io_oracle)
  set_property(TEST unit_io_oracle APPEND PROPERTY FIXTURES_SETUP cufuse_io_oracle_files)
  add_test(NAME oracle_io_check
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/oracle/io_cases.py check --out ${CUFUSE_IO_ORACLE_DIR})
  set_tests_properties(oracle_io_check PROPERTIES FIXTURES_REQUIRED "cufuse_io_oracle;cufuse_io_oracle_files")
else()
  message(WARNING "python3 not found: the NumPy oracle of the file formats (tests/oracle/io_cases.py) does not run")
endif()
set_property(TEST unit_io_oracle APPEND PROPERTY ENVIRONMENT "CUFUSE_REFERENCE_COMPILE=${CUFUSE_ORACLE_REFERENCE_COMPILE}")

# tests/consumer.cmake: installs the built cufuse into a scratch prefix and builds and runs
# tests/consumer against it with find_package(cufuse).
set(CUFUSE_CONSUMER_DIR ${CMAKE_CURRENT_BINARY_DIR}/consumer)
add_test(NAME find_package_consumer
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/consumer
    -DWORK=${CUFUSE_CONSUMER_DIR} -DGENERATOR=${CMAKE_GENERATOR}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.cmake)
set_tests_properties(find_package_consumer PROPERTIES TIMEOUT 600)

# tests/layers.cmake: the layer order of the library's folders (docs/ARCHITECTURE.md, "Layers"),
# checked over the #include lines by scripts/check_layers.py: an include that runs up the
# order, or between two folders of one layer, fails unit_layers.
if(Python3_Interpreter_FOUND)
  add_test(NAME unit_layers COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_layers.py ${PROJECT_SOURCE_DIR})
else()
  message(STATUS "Python 3 not found: unit_layers (the include-order check) is not registered")
endif()

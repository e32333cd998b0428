// tests/main.cpp: doctest's main for the suite that runs without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

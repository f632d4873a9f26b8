// The Catch2 (v2) main of the unit tests: every testsuite/unit/test_*.cpp links into one binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

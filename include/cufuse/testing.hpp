// cufuse/testing.hpp: comparing arrays as NumPy does: allclose, array_equal, and
// numpy.testing's assert_allclose / assert_array_equal, which throw cufuse::AssertionError
// with NumPy's message (the header, the count of mismatched elements, the first mismatches
// with their indices, the largest absolute and relative differences among them, the arrays'
// reprs; shapes, nan and inf location mismatches).
//
// The comparison is one fused lazy reduction over the operands' producers (their expressions
// are not materialized first); only a few scalars are read back, and the details of a failure
// (a handful of small reductions and element reads) only when it fails.
#pragma once
#include <string>

#include "cufuse/array.hpp"

namespace cufuse {

// NumPy's allclose: all(|a - b| <= atol + rtol * |b|) (with b converted to a float dtype, the
// tolerance computed in it, infinities equal to themselves, NaNs equal only with equal_nan).
// a and b broadcast (a ValueError naming the shapes when they do not).
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool allclose(const Array& a, const Scalar& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// Same shape and all elements equal (NaNs equal each other with equal_nan).
bool array_equal(const Array& a, const Array& b, bool equal_nan = false);

namespace testing {
// numpy.testing.assert_allclose: the shapes must be equal (or one of them 0-d); NaNs must be at
// the same places (equal_nan) and infinities at the same places with the same signs.
void assert_allclose(const Array& actual, const Array& desired, double rtol = 1e-7, double atol = 0,
                     bool equal_nan = true, const std::string& err_msg = "");
void assert_allclose(const Array& actual, const Scalar& desired, double rtol = 1e-7, double atol = 0,
                     bool equal_nan = true, const std::string& err_msg = "");
// numpy.testing.assert_array_equal (NaNs compare equal to NaNs).
void assert_array_equal(const Array& actual, const Array& desired, const std::string& err_msg = "");
void assert_array_equal(const Array& actual, const Scalar& desired, const std::string& err_msg = "");
}  // namespace testing

}  // namespace cufuse

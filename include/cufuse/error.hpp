// cufuse/error.hpp: the one exception family of cufuse.
// Every failure a user can cause or meet throws a cufuse::Error (or a kind of it)
// whose message names what was wrong: the shapes, dtypes, axes or values involved.
#pragma once
#include <stdexcept>
#include <string>
#include "cufuse/enum_names.hpp"

namespace cufuse {

// Each kind of error and the name of its exception class.
#define CUFUSE_ERROR_KINDS(X)                                                                                      \
  X(Value, "ValueError")                /* a bad value: shape mismatch, bad axis, bad argument */                  \
  X(Type, "TypeError")                  /* a dtype an op cannot take, a bad cast */                                \
  X(Index, "IndexError")                /* an index or axis out of range */                                        \
  X(Overflow, "OverflowError")          /* a scalar that does not fit the dtype it must become */                  \
  X(OutOfMemory, "OutOfMemoryError")    /* the device pool could not serve an allocation */                        \
  X(NoDevice, "NoDeviceError")          /* no CUDA device or driver where one is needed */                         \
  X(Compile, "CompileError")            /* NVRTC rejected generated or user source */                              \
  X(Cuda, "CudaError")                  /* a CUDA runtime / library call failed */                                 \
  X(NotSupported, "NotSupportedError")  /* a valid request this build cannot serve */                              \
  X(Internal, "InternalError")          /* a bug in cufuse: please report */                                       \
  X(Assertion, "AssertionError")        /* a cufuse::testing check failed (assert_allclose, assert_array_equal) */
enum class ErrorKind { CUFUSE_ERROR_KINDS(CUFUSE_ENUMERATOR) };
// "ValueError", "TypeError", ...
inline const char* error_kind_name(ErrorKind k) { return CUFUSE_ENUM_NAME(CUFUSE_ERROR_KINDS, k); }

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

#define CUFUSE_DEFINE_ERROR(Name, Kind) \
  class Name : public Error {           \
   public:                              \
    explicit Name(const std::string& what) : Error(ErrorKind::Kind, what) {} \
  };
CUFUSE_DEFINE_ERROR(ValueError, Value)
CUFUSE_DEFINE_ERROR(TypeError, Type)
CUFUSE_DEFINE_ERROR(IndexError, Index)
CUFUSE_DEFINE_ERROR(OverflowError, Overflow)
CUFUSE_DEFINE_ERROR(OutOfMemoryError, OutOfMemory)
CUFUSE_DEFINE_ERROR(NoDeviceError, NoDevice)
CUFUSE_DEFINE_ERROR(CudaError, Cuda)
CUFUSE_DEFINE_ERROR(NotSupportedError, NotSupported)
CUFUSE_DEFINE_ERROR(InternalError, Internal)
CUFUSE_DEFINE_ERROR(AssertionError, Assertion)  // cufuse/testing.hpp
#undef CUFUSE_DEFINE_ERROR

// NVRTC failure: carries the compiler log and the path where the source was saved.
class CompileError : public Error {
 public:
  CompileError(const std::string& what, std::string log, std::string source_path)
      : Error(ErrorKind::Compile, what), log_(std::move(log)), source_path_(std::move(source_path)) {}
  const std::string& log() const noexcept { return log_; }
  const std::string& source_path() const noexcept { return source_path_; }

 private:
  std::string log_, source_path_;
};

}  // namespace cufuse

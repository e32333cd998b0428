// cufuse/cufuse.hpp: everything of the public API.
#pragma once
#include "cufuse/array.hpp"
#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/error.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/memory.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/scalar.hpp"
#include "cufuse/shape.hpp"
#include "cufuse/stream.hpp"

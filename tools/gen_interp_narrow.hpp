// tools/gen_interp_narrow.hpp: the narrow core's text (tools/gen_interp_narrow.cpp), for the
// interpreter's build-time generator (tools/gen_interp.cpp).
#pragma once
#include <string>

// cfn_exec and cfn_run over codegen/bytecode_ops.hpp's narrow codes; uses the general core's
// cfi_offset, so it follows that core in interp_core.inc.
std::string narrow_core_text();

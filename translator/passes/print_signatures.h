// Signatures as SystemTap's printsig methods write them: `a:long [string, long]`,
// `foo:long (n:long)`, `kernel.trace("syscalls:sys_enter_openat") /* <- syscall.openat */`.
#pragma once

#include <string>

#include "driver/session.h"

namespace ukstap::passes {

std::string vardecl_signature(const ast::Vardecl& v);
std::string function_signature(const ast::Function& f);
std::string probe_signature(const DerivedProbe& p);

// Elaborates the probes of `files` into s (pass 2 minus the final checks of pass2_elaborate);
// returns the number of errors. Used by pass 2 and by -L.
int elaborate_probes(Session& s, const std::vector<ast::StapFile*>& files, bool optimize = false);

}  // namespace ukstap::passes

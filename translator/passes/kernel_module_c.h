// Embedded C written for SystemTap's kernel-module backend. ukstap compiles `%{ %}` as BPF C
// (vmlinux.h, CO-RE) and as user-space C; code that names the module's probe context
// (CONTEXT->), the kernel's `current` task or a kernel-only header compiles in neither, and
// clang's "'current' undeclared" would not say why. Such code is found before pass 4.
#pragma once

#include <string>

namespace ukstap::passes {

// What in `code` only a kernel module has ("current->", "CONTEXT->", "<linux/sched.h>"), or ""
// when nothing is found. Comments and string literals are ignored; a header counts when
// /usr/include (the user-space headers, which the native side may include) does not have it.
std::string kernel_module_only_use(const std::string& code);

// The one-line error for such code: "embedded C needs SystemTap's kernel-module backend ...".
std::string kernel_module_c_message(const std::string& what);

}  // namespace ukstap::passes

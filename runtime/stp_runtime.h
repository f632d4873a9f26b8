/* ukstap runtime: the ONLY include of generated code (runtime/README.md).
 * Selects the BPF implementation (clang -target bpf, -D__UKSTAP_BPF__) or the native one
 * (-D__UKSTAP_NATIVE__); both provide the same API names with the same semantics. */
#ifndef STP_RUNTIME_H
#define STP_RUNTIME_H

#if defined(__UKSTAP_BPF__) || defined(__bpf__)
# include "bpf/stp_bpf.h"
#else
# include "native/stp_native.h"
#endif

#endif /* STP_RUNTIME_H */

/* ukstap runtime: what the native module (module.so) exports to the loader.
 *
 * The loader (loader/run.cpp) dlopen()s module.so and binds these symbols with dlsym;
 * the definitions live in runtime/native/stp_native_core.h (compiled into module.so, which
 * includes the runtime once). Plain C, also included by the C++ loader.
 *
 * Order of calls by the loader:
 *   stp_native_abi_version()            must equal STP_NATIVE_ABI_VERSION
 *   stp_native_set_output(fn, ctx)      where records go (the loader's decoder, same as the ring buffer)
 *   stp_native_configure(&cfg)          a copy of the BPF .rodata stp_config
 *   stp_native_register_map(name, fd, shared, value_size)   once per map of the BPF object, by the
 *                                       name libbpf reports; `shared` is the mmap of a
 *                                       BPF_F_MMAPABLE map (or libbpf's .bss/.data mapping), else NULL
 *   stp_native_set_probe(pp, pn, func)  then stp_probe_<id>(NULL)   for every native probe run
 *   stp_native_set_input(text)          before an input probe's run: the text it delivers
 *   stp_native_skipped()                at the end
 */
#ifndef STP_NATIVE_ABI_H
#define STP_NATIVE_ABI_H

#include <stdint.h>

#define STP_NATIVE_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

struct stp_config;
struct stp_context;

typedef void (*stp_native_output_fn)(void *ctx, const void *records, unsigned long len);

typedef int (*stp_native_abi_version_fn)(void);
typedef void (*stp_native_set_output_fn)(stp_native_output_fn fn, void *ctx);
typedef void (*stp_native_configure_fn)(const struct stp_config *cfg);
typedef int (*stp_native_register_map_fn)(const char *name, int fd, void *shared,
                                          unsigned long value_size);
typedef void (*stp_native_set_probe_fn)(const char *pp, const char *pn, const char *func);
typedef void (*stp_native_set_input_fn)(const char *text);
typedef int (*stp_native_probe_fn)(struct stp_context *c); /* stp_probe_<id> */

#ifdef __cplusplus
}
#endif

#endif /* STP_NATIVE_ABI_H */

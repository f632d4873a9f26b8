/* ukstap runtime, BPF side: kernel memory for the native side. Begin, end and timer probes run
 * in ukstap's own process, which cannot read a kernel address a kernel probe stored (SystemTap's
 * interrupt/interrupts-by-dev.stp reads kernel_string(dev_name) in a timer probe). The native
 * runtime runs this BPF_PROG_TYPE_SYSCALL program with BPF_PROG_TEST_RUN (native/stp_native_tapset.h,
 * stp_n_kread): the context carries the address, the size and the mode in and the helper's
 * return code out; the bytes come back through a one-entry array map, since the verifier does
 * not take the context as a helper's destination. Never attached. */
#ifndef STP_BPF_KREAD_H
#define STP_BPF_KREAD_H

struct stp_kread_args {
  __u64 addr;
  __u32 size; /* at most STP_MAXSTRINGLEN */
  __u32 str;  /* 1: bpf_probe_read_kernel_str, 0: bpf_probe_read_kernel */
  __s64 rc;
};
struct stp_kread_bytes {
  char b[STP_MAXSTRINGLEN];
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct stp_kread_bytes);
} stp_kread_buf SEC(".maps");

SEC("syscall") int stp_kread_prog(struct stp_kread_args *a)
{
  __u32 zero = 0;
  __u32 n = a->size;
  struct stp_kread_bytes *b = bpf_map_lookup_elem(&stp_kread_buf, &zero);
  if (!b) return 0;
  if (n > STP_MAXSTRINGLEN) n = STP_MAXSTRINGLEN;
  if (a->str)
    a->rc = bpf_probe_read_kernel_str(b->b, n, (const void *)a->addr);
  else
    a->rc = bpf_probe_read_kernel(b->b, n, (const void *)a->addr);
  return 0;
}

#endif

/* ukstap BPF runtime: reading kernel memory through vmlinux.h's types ($p->member, @cast).
 *
 * The translator (translator/btf/kernel_access.cpp) writes an lvalue such as
 * `((struct task_struct *)(unsigned long)(p))->mm` and these macros read it through
 * __builtin_preserve_access_index: clang records the member accesses as CO-RE relocations, so
 * libbpf moves the offsets to the kernel the program loads on. A fault reads as 0 / "", as
 * SystemTap's kernel_long/kernel_string would fail softly in a probe that checks nothing. */
#ifndef STP_BPF_KTYPES_H
#define STP_BPF_KTYPES_H

/* An integer, enum or pointer member: its bytes (little-endian) widened to int64_t, sign
 * extended when the kernel's type is signed (decided from BTF by the translator). */
#define STP_KREAD_INT(lv, is_signed)                                                      \
  ({                                                                                      \
    uint64_t u__ = 0;                                                                     \
    const int sz__ = sizeof(lv) < 8 ? sizeof(lv) : 8;                                     \
    bpf_probe_read_kernel(&u__, sz__, (const void *)__builtin_preserve_access_index(&(lv))); \
    (is_signed) && sz__ < 8 ? (int64_t)(u__ << (64 - 8 * sz__)) >> (64 - 8 * sz__)        \
                            : (int64_t)u__;                                               \
  })

/* A char array member as a string: at most the array's length (a full array has no NUL of its
 * own) and at most STP_MAXSTRINGLEN - 1 characters. */
#define STP_KREAD_CHARS(dst, lv)                                                          \
  do {                                                                                    \
    const int n__ = sizeof(lv) < STP_MAXSTRINGLEN ? sizeof(lv) : STP_MAXSTRINGLEN - 1;    \
    if (bpf_probe_read_kernel((dst), n__, (const void *)__builtin_preserve_access_index(&(lv))) < 0) \
      (dst)[0] = '\0';                                                                  \
    (dst)[n__] = '\0';                                                                    \
  } while (0)

/* `$next_comm[i]` with i known only at run time: a character of a char array field of the
 * record (offset off), read through the record's address as a number (a variable offset on
 * the context pointer is refused by the verifier); the translator checks 0 <= i < size. */
static __always_inline int64_t stp__tp_char(void *rec, int off, int64_t i)
{
  int8_t ch = 0;
  unsigned long base = stp__launder((uint64_t)(unsigned long)rec);
  bpf_probe_read_kernel(&ch, 1, (const void *)(base + off + i));
  return ch;
}
#define STP_TP_CHAR(c, off, i) stp__tp_char(STP__TPREC, (off), (i))

#endif

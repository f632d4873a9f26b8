/* ukstap BPF runtime: `s =~ "re"` in a kernel-side probe. The translator compiles the regular
 * expression into a DFA (translator/codegen/regex_dfa.h) and emits its three tables:
 *   NAME_cls[256]   the byte class of each byte,
 *   NAME_next[]     NSTATES x NCLS: the state after a byte of a class,
 *   NAME_flags[]    bit 0: matched (whatever follows); bit 1: matched if the string ends here.
 * The match is one bounded loop over at most MAXSTRINGLEN bytes of the string; every table
 * index is checked against the table's size (constants after inlining) for the verifier. */
#ifndef STP_BPF_REGEX_H
#define STP_BPF_REGEX_H

static __always_inline int64_t stp__dfa_match(const char *s, const volatile uint8_t *cls,
                                              const volatile uint16_t *next,
                                              const volatile uint8_t *flags,
                                              uint32_t nstates, uint32_t ncls)
{
  uint32_t st = 0, i;
  if (flags[0] & 1)
    return 1;
  for (i = 0; i < STP_MAXSTRINGLEN; i++) {
    uint8_t ch = (uint8_t)s[i & STP_STR_MASK];
    uint32_t idx;
    if (!ch)
      break;
    idx = st * ncls + cls[ch];
    asm volatile("" : "+r"(idx));
    if (idx >= nstates * ncls)
      return 0;
    st = next[idx];
    /* The tables are constants: clang knows every entry is < nstates and would drop the check
     * the verifier needs. The empty asm hides the value from it. */
    asm volatile("" : "+r"(st));
    if (st >= nstates)
      return 0;
    if (flags[st] & 1)
      return 1;
  }
  asm volatile("" : "+r"(st));
  if (st >= nstates)
    return 0;
  return (flags[st] & 2) ? 1 : 0;
}

#define stp_regex_dfa(c, s, NAME) \
  stp__dfa_match((s), NAME##_cls, NAME##_next, NAME##_flags, NAME##_NSTATES, NAME##_NCLS)

#endif /* STP_BPF_REGEX_H */

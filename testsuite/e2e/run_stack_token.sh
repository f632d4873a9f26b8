#!/bin/bash
# Deferred tokens (runtime/common/stp_stack_abi.h): what the BPF module and the native module put
# in a sprint_*/symname string is the documented hash, computed again from its description by
# stack_token_check.py; the value-only tokens (symname, sprint_kstack_id) are equal in kernel
# and native probes. A token is cut out of its string in embedded C (only a whole token is
# expanded when printed). Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/stack_token_check.py"

P="$T_TMP/getppid"
printf '#include <unistd.h>\nint main(void) { return getppid() > 0 ? 0 : 1; }\n' > "$P.c"
t_build "the test program" gcc -O2 -o "$P" "$P.c" || { t_done; exit; }

# MAXSTRINGLEN 512: ubacktrace() holds every pc of the short stack whose token is checked.
# tok() reads the token's 16 hex digits in embedded C (-g): a script's substr() of a token is a
# pass-2 error (passes/symbol_tokens.h), C of the script's own is trusted to mean it.
TOKENS='
function tok:string (s:string) %{
	int i;
	for (i = 0; i < 16 && STAP_ARG_s[i + 1] && STAP_ARG_s[i + 2]; i++)
		STAP_RETVALUE[i] = STAP_ARG_s[i + 2];
	STAP_RETVALUE[i] = 0;
%}
probe syscall.getppid {
  if (pid() == target())
    printf("bpf %d K=%s U=%s I=%s S=%s B=%s\n%s\n", pid(), tok(symname(0x1234)),
           tok(usymname(0x1234)), tok(sprint_kstack_id(7)), tok(sprint_ustack("0x1 0x2")),
           tok(sprint_ubacktrace()), ubacktrace())
}
probe begin {
  printf("native K=%s U=%s I=%s S=%s\n", tok(symname(0x1234)), tok(usymname(0x1234)),
         tok(sprint_kstack_id(7)), tok(sprint_ustack("0x1 0x2")))
}'
t "tokens: run" 0 '*' '' -- "$UKSTAP" -g -D MAXSTRINGLEN=512 -o "$T_TMP/tok.out" -e "$TOKENS" -c "$P"
t "tokens: BPF and native tokens = the documented hash" 0 '' '' -- $CHECK "$T_TMP/tok.out" 512
t "tokens: symname/sprint_kstack_id give one token in kernel and native probes" 0 '' '' -- bash -c "
  n=\$(grep '^native ' '$T_TMP/tok.out' | grep -o 'K=[0-9a-f]* \|I=[0-9a-f]* ')
  b=\$(grep '^bpf ' '$T_TMP/tok.out' | grep -o 'K=[0-9a-f]* \|I=[0-9a-f]* ')
  [ -n \"\$n\" ] && [ \"\$n\" = \"\$b\" ]"
t_done

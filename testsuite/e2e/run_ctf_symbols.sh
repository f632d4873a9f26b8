#!/bin/bash
# Symbols for the ecosystem (issue 18): a --ctf trace carries LTTng-UST's statedump events
# (lttng_ust_statedump:bin_info, build_id, debug_link) and one ukstap:callstack_user_frame event
# per user frame, so `babeltrace2 --debug-info` resolves every user frame itself
# (ctf-writer/statedump.h).
#
# One ukstap run of testsuite/e2e/progs/ctf_sym_prog.c (its own frames, a dlopen'd library's, a
# dlopen'd library deleted before its frames are traced, raw code mapped from a non-ELF file).
# Truths: binutils' nm (names and offsets of the program's and the library's functions), the
# trace's own lists of files (no statedump event for the vanished and the non-ELF file), and
# babeltrace2's exit status and stderr. Root only; under CI=true not being root is a failure.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
PROGS="$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs"
CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/ctf_symbols_check.py"

P="$T_TMP/ctf_sym_prog" L="$T_TMP/libctf_sym_plugin.so" G="$T_TMP/gone.so" B="$T_TMP/blob.bin"
FLAGS="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"
t_build ctf_sym_prog gcc $FLAGS -o "$P" "$PROGS/ctf_sym_prog.c" -ldl || { t_done; exit; }
t_build ctf_sym_plugin gcc $FLAGS -fPIC -shared -o "$L" "$PROGS/ctf_sym_plugin.c" || { t_done; exit; }
cp "$L" "$G"
# x86-64 code that is no ELF file: mov $SYS_getppid,%eax; syscall; ret
printf '\xb8\x6e\x00\x00\x00\x0f\x05\xc3' > "$B"

D="$T_TMP/trace"
t "run: ukstap --ctf" 0 '' '' -- \
  "$UKSTAP" --ctf="$D" -e 'probe syscall.getppid { if (pid() == target()) print_ubacktrace() }' \
  -c "$P $L $G $B"
t "babeltrace2 --debug-info reads the trace without a word on stderr" 0 '*' '' -- \
  bash -c "babeltrace2 --debug-info --debug-info-full-path '$D' > '$T_TMP/bt.txt'"
t "frames of the program and the dlopen'd library = nm's functions; no statedump event for the vanished and the non-ELF file" 0 '~frames checked against nm' '' -- \
  $CHECK "$T_TMP/bt.txt" "$P" "$L" "$G" "$B"
t_done

#!/bin/bash
# The unwind-table cache is keyed by a file's content, not by its build-id alone
# (unwind-tables/table_cache.h). A build-id is whatever the linker was told: a tiny program
# linked with `-Wl,--build-id=0x<libc's build-id>`, traced once, had its few-row table cached as
# libc's, and every later run cut libc stacks short.
#
# Truth: readelf's build-ids (the decoy really claims libc's), and the traced program's own
# libunwind backtrace (testsuite/e2e/progs/ustack_prog.c, ustack_check.py exact): every frame,
# through libc down to _start.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/ustack_check.py"
PROGS="$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs"
GETPPID='probe syscall.getppid { if (pid() == target()) print_ubacktrace() }'

P="$T_TMP/ustack_nofp" D="$T_TMP/decoy"
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: *//p'; }
t_build "the test program" gcc -O2 -g -fomit-frame-pointer -o "$P" "$PROGS/ustack_prog.c" -lunwind -ldl -lpthread || { t_done; exit; }
LIBC=$(ldd "$P" | awk '$1 ~ /^libc\.so/ { print $3 }')
LIBC_ID=$(build_id "$LIBC")
printf '#include <unistd.h>\nint main(void) { return getppid() < 0; }\n' > "$T_TMP/decoy.c"
t_build "the decoy" gcc -O2 -Wl,--build-id=0x"$LIBC_ID" -o "$D" "$T_TMP/decoy.c" || { t_done; exit; }
t "the decoy claims libc's build-id ($LIBC)" 0 '' '' -- \
  bash -c "[ -n '$LIBC_ID' ] && [ \"\$(readelf -n '$D' | sed -n 's/.*Build ID: *//p')\" = '$LIBC_ID' ]"

# fdes_ok ERR FILE: ukstap's -v coverage line of FILE counts readelf's FDEs of FILE.
fdes_ok() {
  local want got
  want=$(readelf -wf "$2" | grep -c ' FDE cie=')
  got=$(grep -F "Pass 5: $2: " "$1" | sed -n 's/.*, \([0-9]*\) FDEs$/\1/p')
  [ "$got" = "$want" ] || { echo "$2: $got FDEs in ukstap's table, readelf counts $want"; return 1; }
}
export -f fdes_ok

# The decoy first, alone (its table is compiled and cached), then libc's real users.
t "the decoy traced (its table compiled and cached)" 0 '~^ 0x' '' -- \
  "$UKSTAP" -d "$D" -e "$GETPPID" -c "$D"
"$UKSTAP" -v -o "$T_TMP/chain.out" -d "$P" --ldd -e "$GETPPID" -c "$P chain" > "$T_TMP/chain.prog" 2> "$T_TMP/chain.err"
t "then a stack through libc: libc's table has libc's FDEs" 0 '' '' -- fdes_ok "$T_TMP/chain.err" "$LIBC"
t "then a stack through libc: every frame = libunwind's, to _start" 0 '' '' -- \
  $CHECK exact "$T_TMP/chain.out" "$T_TMP/chain.prog"

# And the other way round: libc's table cached first, then the decoy still gets its own.
export XDG_CACHE_HOME="$T_TMP/cache2"
"$UKSTAP" -o "$T_TMP/c2.out" -d "$P" --ldd -e "$GETPPID" -c "$P chain" > "$T_TMP/c2.prog" 2> /dev/null
"$UKSTAP" -v -d "$D" -e "$GETPPID" -c "$D" > /dev/null 2> "$T_TMP/decoy2.err"
t "libc cached first: the decoy's table has the decoy's FDEs" 0 '' '' -- fdes_ok "$T_TMP/decoy2.err" "$D"
t "libc cached first: libc's still has libc's" 0 '' '' -- fdes_ok "$T_TMP/decoy2.err" "$LIBC"

t_done

#!/bin/bash
# usymfile/usymline/usymfileline (user addresses, DWARF line tables in the symbolizer) and
# symfile/symline/symfileline (kernel addresses: no line tables here, so the hex address).
#
# Truth: addr2line -e BIN ADDR and gdb's `info line *ADDR` on a program built here with -g
# (-no-pie: a run-time address is the file's address); SystemTap's documented fallback (the
# tapset reference: "the hex string representation of the address") for addresses without line
# information: _start (crt1.o has no DWARF), an unmapped address, any kernel address. One ukstap
# run serves every check. Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

P="$T_TMP/fileline_prog"
cat > "$T_TMP/fileline_prog.c" <<'C'
volatile long sink;
__attribute__((noinline)) void work(long n) {
  for (long i = 0; i < n; i++)
    sink += i;
  sink *= 3;
}
int main(void) { work(10); return 0; }
C
t_build "the test program" gcc -g -O0 -no-pie -o "$P" "$T_TMP/fileline_prog.c" || { t_done; exit; }
START=$(printf '0x%x' "0x$(nm "$P" | awk '$3 == "_start" { print $1 }')")

# Per address: ADDR|usymfileline|usymfile|usymline, addresses spread over work()'s lines, then
# _start and an unmapped address; the kernel family on a kernel text address last.
t "run" 0 '' '' -- "$UKSTAP" -o "$T_TMP/fl.out" -e '
probe process("'"$P"'").function("work") {
  a = uaddr()
  show(a); show(a + 0x12); show(a + 0x27); show(a + 0x36); show(a + 0x4d)
  show($1)
  show(16)
  k = 0xffffffff81000010
  printf("K|%s|%s|%s|%d\n", symfileline(k), symfile(k), symline(k), strtol(symfileline(k), 16) == k)
  exit()
}
function show(x) { printf("%x|%s|%s|%s\n", x, usymfileline(x), usymfile(x), usymline(x)) }' \
  "$START" -c "$P"

# The expected lines from addr2line (discriminators dropped; "??" = unknown -> the address).
want() {
  while IFS='|' read -r addr rest; do
    [ "$addr" = K ] && continue
    loc=$(addr2line -e "$P" "0x$addr" | sed 's/ (discriminator [0-9]*)$//')
    case $loc in
      \?\?:*|*:0|*:\?) h="0x$addr"; echo "$addr|$h|$h|$h" ;;
      *) echo "$addr|$loc|${loc%:*}|${loc##*:}" ;;
    esac
  done < "$T_TMP/fl.out"
}
t "usymfileline/usymfile/usymline = addr2line's FILE:LINE, FILE, LINE (0x… when unknown)" 0 '' '' -- \
  bash -c "diff <(grep -v '^K|' '$T_TMP/fl.out') <($(declare -f want); P='$P' T_TMP='$T_TMP' want)"
t "the work() addresses have lines, _start and an unmapped address do not" 0 '' '' -- \
  bash -c "[ \$(grep -c '|$T_TMP/fileline_prog.c:[0-9]*|' '$T_TMP/fl.out') = 5 ] &&
           grep -q '^${START#0x}|$START|$START|$START\$' '$T_TMP/fl.out' && grep -q '^10|0x10|0x10|0x10\$' '$T_TMP/fl.out'"
# gdb's line table reading agrees on every line number (an independent DWARF reader).
gdb_lines() {
  local cmds=()
  while IFS='|' read -r addr fl f l; do
    [ "$addr" = K ] || [ "${l#0x}" != "$l" ] || cmds+=(-ex "info line *0x$addr")
  done < "$T_TMP/fl.out"
  gdb -q -batch -nx "${cmds[@]}" "$P" 2>/dev/null | sed -n 's/^Line \([0-9]*\) of .*/\1/p'
}
t "usymline = gdb's info line" 0 '' '' -- \
  bash -c "diff <(awk -F'|' '\$4 !~ /^0x/ && \$1 != \"K\" { print \$4 }' '$T_TMP/fl.out') <($(declare -f gdb_lines); P='$P' T_TMP='$T_TMP' gdb_lines)"
t "symfileline/symfile/symline of a kernel address: the address (no kernel line tables)" 0 \
  $'K|0xffffffff81000010|0xffffffff81000010|0xffffffff81000010|1\n' '' -- bash -c "grep '^K|' '$T_TMP/fl.out'"
t_done

#!/bin/bash
# usymname() and the other symbolizing functions return placeholders replaced when printed
# (passes/symbol_tokens.h). Reading one as text is a pass-2 error (testsuite/parse-errors/
# symtoken_*.stp); the uses that print it must keep printing the name. Truth: the names readelf
# gives the libc function that makes the getdents64 syscall (__getdents64 and its alias
# getdents64, one address). Root; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

# The symbols at getdents64's address, in libc and in its separate debuginfo (by build-id), when
# installed: what ukstap's symbolizer may choose from.
libc=$(ldd /bin/ls | awk '/libc\.so/ {print $3}')
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
syms() { readelf -Ws "$1" 2>/dev/null | awk '$4 == "FUNC" {print $2, $8}' | sed 's/@.*//'; }
addr=$(syms "$libc" | awk '$2 == "getdents64" {print $1; exit}')
names=$({ syms "$libc"; syms "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"; } |
  awk -v a="$addr" '$1 == a {print $2}' | sort -u | paste -sd'|')
"$UKSTAP" -o "$T_TMP/sym.out" -e '
  global byval, bykey
  probe syscall.getdents { if (pid() == target()) {
    name = usymname(uaddr())
    printf("printf %s\n", usymname(uaddr()))
    log("log " . name)
    byval[1] = sprintf("%s", name)
    bykey[name] = 1
    if (name != "") println("nonempty ", name)
    exit()
  } }
  probe end { println("value ", byval[1]); foreach (k in bykey) println("key ", k) }' \
  -c /bin/ls > /dev/null 2> "$T_TMP/sym.err"
rc=$?
t "printed, logged, kept in a variable, an array value and key: the run" 0 '' '' -- bash -c "cat '$T_TMP/sym.err' >&2; exit $rc"
t "each use prints the libc symbol ($names)" 0 '' '' -- bash -c "
  for w in printf log nonempty value key; do
    grep -qxE \"\$w ($names)\" '$T_TMP/sym.out' || { echo \"no '\$w NAME' line\"; cat < '$T_TMP/sym.out'; exit 1; }
  done"
t_done

#!/bin/bash
# C++ names (issue 17): demangled by default in script texts and profiles; --no-demangle keeps
# the ELF symbol table's names (SystemTap's output), --demangle is the default said explicitly.
#
# Truth: binutils' nm (the ELF names) and c++filt (the demangler binutils ships, libiberty's:
# not the one ukstap calls) on progs/cxx_names.cpp, whose frames are a namespace's class
# template's member function and operator() taking a std::string.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
X="$T_TMP/cxx_names"
t_build cxx_names g++ -O2 -o "$X" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/cxx_names.cpp" || { t_done; exit; }
# The program's own frames as nm names them (raw) and as c++filt demangles those.
nm "$X" | awk '$3 ~ /^_ZN6shapes/ {print $3}' | sort > "$T_TMP/nm.raw"
c++filt < "$T_TMP/nm.raw" > "$T_TMP/nm.demangled"
[ "$(wc -l < "$T_TMP/nm.raw")" = 2 ] || { echo "FAIL: nm finds no shapes:: symbols"; cat "$T_TMP/nm.raw"; T_FAILED=1; }

SCRIPT='probe syscall.getppid { if (pid() == target()) { print_ubacktrace(); println("name: ", usymname(ustack(1))) } }'
# names FILE: the function names of cxx_names's own frames in a print_ubacktrace() text, in order
names() { sed -n 's/^ 0x[0-9a-f]* : \(.*\)+0x[0-9a-f]*\/0x[0-9a-f]* \[.*\/cxx_names\]$/\1/p' "$1"; }
export -f names

t "script texts: --no-demangle (SystemTap's ELF names)" 0 '' '' -- "$UKSTAP" --no-demangle -o "$T_TMP/raw.out" -c "$X 0" -e "$SCRIPT"
t "script texts: demangled by default" 0 '' '' -- "$UKSTAP" -o "$T_TMP/dem.out" -c "$X 0" -e "$SCRIPT"
t "script texts: --demangle is the default" 0 '' '' -- "$UKSTAP" --demangle -o "$T_TMP/dem2.out" -c "$X 0" -e "$SCRIPT"
t "--no-demangle: the stack's shapes:: frames are nm's names (spin, then operator())" 0 '' '' -- bash -c "
  names '$T_TMP/raw.out' | grep '^_ZN6shapes' > '$T_TMP/raw.names'
  [ \"\$(sort '$T_TMP/raw.names')\" = \"\$(cat '$T_TMP/nm.raw')\" ] || { cat '$T_TMP/raw.out'; exit 1; }"
t "default: every frame of cxx_names is c++filt of the --no-demangle run's frame" 0 '' '' -- bash -c "
  names '$T_TMP/raw.out' | c++filt > '$T_TMP/want'; names '$T_TMP/dem.out' > '$T_TMP/got'
  [ -s '$T_TMP/got' ] && cmp -s '$T_TMP/want' '$T_TMP/got' || { diff '$T_TMP/want' '$T_TMP/got'; exit 1; }"
t "default: usymname() of the caller is c++filt's name of spin" 0 '' '' -- bash -c "
  grep -Fxq \"name: \$(grep spin '$T_TMP/nm.demangled')\" '$T_TMP/dem.out' &&
  grep -Fxq \"name: \$(grep 4spin '$T_TMP/nm.raw')\" '$T_TMP/raw.out' || { cat '$T_TMP/dem.out' '$T_TMP/raw.out'; exit 1; }"

# --profile: folded stacks; a demangled name keeps its spaces (the count is after the last one).
t "--profile: demangled by default, nm -C's names, count after the last space" 0 '' '' -- bash -c "
  '$UKSTAP' --profile=499 -o '$T_TMP/p.folded' -c '$X 0.5' &&
  grep -Fq \";\$(grep 'operator()' '$T_TMP/nm.demangled');\$(grep '::spin' '$T_TMP/nm.demangled')\" '$T_TMP/p.folded' &&
  ! grep -q '_ZN6shapes' '$T_TMP/p.folded' && ! grep -qvE ' [0-9]+\$' '$T_TMP/p.folded' || { cat '$T_TMP/p.folded'; exit 1; }"
t "--profile --no-demangle: nm's names" 0 '' '' -- bash -c "
  '$UKSTAP' --profile=499 --no-demangle -o '$T_TMP/r.folded' -c '$X 0.3' &&
  grep -Fq \";\$(grep 'clE' '$T_TMP/nm.raw');\$(grep 4spin '$T_TMP/nm.raw')\" '$T_TMP/r.folded' || { cat '$T_TMP/r.folded'; exit 1; }"
t "--demangle: the same frames as the default" 0 '' '' -- bash -c "
  names '$T_TMP/dem2.out' > '$T_TMP/got2'; [ -s '$T_TMP/got2' ] && cmp -s '$T_TMP/got' '$T_TMP/got2'"
t "--help names both options" 0 '~--no-demangle' '' -- "$UKSTAP" --help
t_done

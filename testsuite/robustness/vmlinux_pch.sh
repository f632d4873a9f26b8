#!/bin/bash
# vmlinux.h precompiled (loader/vmlinux_pch.h): pass 4 makes a clang PCH of vmlinux.h beside it
# in the cache once the cache holds two modules besides the one being compiled, and its BPF
# compiles start from it. The module must be the same bytes as without it, a damaged PCH must
# cost nothing but a recompile (no message, no failure), concurrent runs making it at once must
# all succeed, and a user's -D flag (a name vmlinux.h might use) compiles without it.
#
# Truths: find(1) for what is in the cache (and its mode), cmp(1) against the same script
# compiled in a fresh cache (its first module: no PCH), the compiler's command line (-vv).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

P=$T_TMP/p
script() { echo "probe syscall.$1 { printf(\"%d\\n\", pid()) }"; }
pchs() { find "$1/ukstap/vmlinux" -name '*.pch' -printf "$2" 2> /dev/null; }
# obj CACHE SCRIPT: the .bpf.o of SCRIPT in CACHE (-p4 prints its path; the module is cached)
obj() { XDG_CACHE_HOME=$1 "$UKSTAP" -p4 -e "$2"; }
# same_as_fresh OBJECT SCRIPT: OBJECT is the bytes of SCRIPT compiled in a cache of no other
# module (so without a PCH; the module is removed after, vmlinux.h stays)
same_as_fresh() {
  local o; o=$(obj "$T_TMP/q" "$2") && cmp "$1" "$o" && rm -r "$(dirname "$o")"
}

for sc in getppid getuid; do obj "$P" "$(script $sc)" > /dev/null; done
t "a cache of two modules has no PCH" 0 '' '' -- test -z "$(pchs "$P" %p)"

# --- the third and fourth module, at once: both make the PCH, both succeed --------------------
for sc in getgid getegid; do obj "$P" "$(script $sc)" > "$T_TMP/$sc.path" 2> "$T_TMP/$sc.err" & done
rcs=; for job in $(jobs -p); do wait "$job"; rcs+="$? "; done
t "two concurrent compiles that make the PCH: both succeed, nothing on stderr" 0 '' '' -- bash -c "
  [ '$rcs' = '0 0 ' ] && cat '$T_TMP/getgid.err' '$T_TMP/getegid.err' | { ! grep . >&2; }"
t "then the cache has one PCH, a private file" 0 $'-rw-------\n' '' -- pchs "$P" '%M\n'
for sc in getgid getegid; do
  t "syscall.$sc's object, compiled with the PCH = compiled in a fresh cache (cmp)" 0 '' '' -- \
    same_as_fresh "$(cat "$T_TMP/$sc.path")" "$(script $sc)"
done
t "a fifth module is compiled with it (-vv: -include-pch)" 0 '*' "~ -include-pch $(pchs "$P" %p) " -- \
  env XDG_CACHE_HOME="$P" "$UKSTAP" -vv -p4 -e "$(script geteuid)"
t "... but not with a user's -D flag" 0 '*' '~^Running .*clang' -- \
  env XDG_CACHE_HOME="$P" "$UKSTAP" -vv -p4 -D UKSTAP_TEST=1 -e "$(script gettid)"
cp "$T_TMP/err" "$T_TMP/dflag.err"
t "... (no -include-pch there)" 1 '' '' -- grep -- -include-pch "$T_TMP/dflag.err"

# --- a damaged PCH: the compile is done again without it, silently, and the PCH goes ----------
PCH=$(pchs "$P" %p)
head -c 4096 /dev/urandom > "$PCH"
t "with a damaged PCH: compiles, nothing on stderr" 0 '~/stap_.*\.bpf\.o$' '' -- obj "$P" "$(script sync)"
t "... the same bytes as in a fresh cache" 0 '' '' -- same_as_fresh "$(cat "$T_TMP/out")" "$(script sync)"
t "... and the damaged PCH is gone" 0 '' '' -- test ! -e "$PCH"

# --- vmlinux.h made again: the PCH made from the old one goes with it ---------------------------
# (clang checks a PCH's header by size only: another bpftool's output of the same size would be
# served the old declarations). Truth: find(1), the PCH's inode before and after. A hard link
# outside the cache holds the old inode, so a new PCH cannot be given its number again (ext4
# reuses a freed inode at once, and the new PCH has the same name).
obj "$P" "$(script setsid)" > /dev/null  # a new module: a PCH again
old=$(pchs "$P" '%i')
ln "$(pchs "$P" %p)" "$T_TMP/old.pch"
VH=$(dirname "$(pchs "$P" %p)")/vmlinux.h
rm "$VH"
t "vmlinux.h removed: the next compile makes it again and succeeds" 0 '~/stap_.*\.bpf\.o$' '' -- obj "$P" "$(script fsync)"
t "... and no PCH older than it is left (the old one was inode $old)" 0 '' '' -- \
  bash -c "[ -n '$old' ] && [ -e '$VH' ] && ! find '$(dirname "$VH")' -name '*.pch' -inum '$old' | grep . &&
    ! find '$(dirname "$VH")' -name '*.pch' ! -newer '$VH' | grep ."
t_done

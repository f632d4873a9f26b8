#!/bin/bash
# One cache shared by runs that compile the same script at the same time (two users' shells, a
# test suite's parallel scripts): the module compiles to the same bytes whatever the run
# (loader/compile.cpp maps the working directory and the temporary source out of the debug
# info), so the files concurrent runs install are the same and no interleaving of their renames
# leaves a module.sum that does not match the objects beside it. Before, each run's objects
# named its own working directory and temporary directory: a record from one run beside an
# object from another made every later run warn "not using the cached module" and compile again.
#
# Truths: sha256sum(1) and cmp(1) of the objects, the record's hashes against sha256sum's.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

# A kernel probe and a native one: a BPF object and a native module both.
SCRIPT='global n; probe syscall.getppid { n++ } probe begin { printf("hi %d\n", n * 0); exit() }'
mkdir -p "$T_TMP/w1" "$T_TMP/w2"

# --- the same script from two working directories, into two caches: the same bytes --------------
(cd "$T_TMP/w1" && XDG_CACHE_HOME="$T_TMP/c1" "$UKSTAP" -p4 -e "$SCRIPT" > "$T_TMP/p1" 2> "$T_TMP/p1.err")
(cd "$T_TMP/w2" && XDG_CACHE_HOME="$T_TMP/c2" "$UKSTAP" -p4 -e "$SCRIPT" > "$T_TMP/p2" 2> "$T_TMP/p2.err")
D1=$(dirname "$(cat "$T_TMP/p1")") D2=$(dirname "$(cat "$T_TMP/p2")")
t "two runs compiled the module (a BPF object and a native module each)" 0 '' '' -- bash -c "
  cd '$D1' && ls *.bpf.o *.so > /dev/null && cd '$D2' && ls *.bpf.o *.so > /dev/null"
for ext in bpf.o so; do
  t "the .$ext of two runs in other directories: the same bytes" 0 '' '' -- bash -c "
    cd '$D1' && for f in *.$ext; do cmp \"\$f\" '$D2'/\"\$f\" || exit; done"
done

# --- four runs compiling it into one empty cache at once, then a fifth ---------------------------
C=$T_TMP/shared
pids=()
for i in 1 2 3 4; do
  mkdir -p "$T_TMP/r$i"
  (cd "$T_TMP/r$i" && XDG_CACHE_HOME="$C" exec "$UKSTAP" -p4 -e "$SCRIPT" > "$T_TMP/r$i.out" 2> "$T_TMP/r$i.err") &
  pids+=($!)
done
rcs=
for p in "${pids[@]}"; do wait "$p"; rcs+="$? "; done
t "four concurrent compiles into one cache: all succeed, nothing on stderr" 0 '' '' -- bash -c "
  [ '$rcs' = '0 0 0 0 ' ] && cat '$T_TMP'/r[1-4].err | { ! grep . >&2; }"
t "the record's hashes are the objects' (sha256sum)" 0 '' '' -- bash -c "
  sum=\$(ls '$C'/ukstap/*/module.sum) && d=\$(dirname \"\$sum\") &&
  tail -n +2 \"\$sum\" | (cd \"\$d\" && sha256sum --quiet -c -)"
t "a fifth run uses the cached module, without a warning" 0 $'hi 0\n' '~^Pass 4: using cached .*\.so$' -- \
  env XDG_CACHE_HOME="$C" "$UKSTAP" -v -e "$SCRIPT"
cp "$T_TMP/err" "$T_TMP/fifth.err"
t "... and says nothing else but its passes" 0 '' '' -- bash -c "! grep -v '^Pass [1-5]' '$T_TMP/fifth.err' >&2"
t_done

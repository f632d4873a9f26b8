#!/bin/bash
# `make installcheck`: the INSTALLED ukstap runs a small end-to-end smoke from an empty
# directory, with the source and build trees out of its reach.
#
#   UKSTAP=BINDIR/ukstap UKSTAP_PKGDATADIR=DIR UKSTAP_HIDE="SRCDIR BUILDDIR" bash smoke.sh
#
# The trees are taken away two ways, so that a binary that still read them would fail:
# - hidden: every ukstap run happens in a private mount namespace where an empty tmpfs is
#   mounted over each UKSTAP_HIDE directory (the installed bin and data directories are bound
#   back when they lie inside one, as under `make distcheck`, whose prefix is inside its tree);
# - watched: `strace -f -e trace=%file` of a run from pass 1 to pass 5, checked for any path
#   under a UKSTAP_HIDE directory that is not an installed one.
# Truths: the begin probe's text, `ls /` run on its own (the -c target's output), ls's entry
# point _start as the last frame of its stacks (what the e2e ls test checks), the object file
# pass 4 names existing and being a BPF ELF object (file(1)).
# Root only for the BPF runs (skipped visibly outside CI, a failure under CI=true, as in e2e).
. "$(dirname "$0")/../e2e-lib.sh"

: "${UKSTAP_PKGDATADIR:?the installed data directory (tapset/, runtime/)}"
: "${UKSTAP_HIDE:=}"
# Absolute, normalised (strace prints such paths), each once, parents first.
UKSTAP_HIDE=$(for h in $UKSTAP_HIDE; do realpath -m "$h"; done | LC_ALL=C sort -u | tr '\n' ' ')
# The installed binary must find its data by itself: no override from the environment.
unset UKSTAP_TAPSET UKSTAP_RUNTIME
export XDG_CACHE_HOME="$T_TMP/cache"   # every pass 4 compiles: no module from another run
BINDIR=$(dirname "$UKSTAP")
EMPTY="$T_TMP/cwd"
mkdir -p "$EMPTY"

t "the installed binary exists and is executable" 0 '' '' -- test -x "$UKSTAP"
t "the installed runtime has no loader sources or build files" 0 '' '' -- bash -c "
  cd '$UKSTAP_PKGDATADIR/runtime' && ! find . -type f ! -name '*.h' | grep ."
t "the installed runtime has the headers the generated program includes" 0 '' '' -- \
  test -f "$UKSTAP_PKGDATADIR/runtime/stp_runtime.h"

# in_place CMD ARGS...: runs CMD in the empty directory, in a mount namespace where the trees
# are hidden (when the machine allows namespaces: not in every container).
HIDING=no
if [ "$(id -u)" = 0 ] && [ -n "$UKSTAP_HIDE" ] && unshare -m true 2> /dev/null; then HIDING=yes; fi
in_place() {
  if [ $HIDING = no ]; then (cd "$EMPTY" && exec "$@"); return; fi
  UKSTAP_KEEP="$BINDIR $UKSTAP_PKGDATADIR" UKSTAP_HIDE="$UKSTAP_HIDE" STASH="$T_TMP/stash" EMPTY="$EMPTY" \
    unshare -m --propagation private bash -c '
      set -e
      i=0
      for k in $UKSTAP_KEEP; do mkdir -p "$STASH/$i"; mount --bind "$k" "$STASH/$i"; i=$((i + 1)); done
      for h in $UKSTAP_HIDE; do [ -d "$h" ] && mount -t tmpfs -o size=64k,mode=755 ukstap-hidden "$h"; done
      i=0
      for k in $UKSTAP_KEEP; do mkdir -p "$k"; mount --bind "$STASH/$i" "$k"; i=$((i + 1)); done
      cd "$EMPTY"
      exec "$@"' in_place "$@"
}
echo "# trees hidden from the runs: $HIDING${UKSTAP_HIDE:+ ($UKSTAP_HIDE)}"
if [ $HIDING = yes ]; then
  for h in $UKSTAP_HIDE; do
    t "hidden from the runs: $h" 0 '' '' -- in_place test ! -e "$h/tapsets" -a ! -e "$h/ukstap"
  done
  t "the installed data is still there in the runs" 0 '' '' -- in_place test -x "$UKSTAP" -a -d "$UKSTAP_PKGDATADIR/tapset"
fi

t "--version names the configured version" 0 "~^.*${UKSTAP_VERSION:-}" '*' -- in_place "$UKSTAP" --version
t "pass 2 finds the installed tapsets (syscall.getdents)" 0 '~^syscall\.getdents$' '' -- \
  in_place "$UKSTAP" -l 'syscall.getdents'

# pass 4 with the installed runtime: the native module (a begin probe) and a BPF object.
t "-p4: a begin probe compiles to a native module" 0 '~\.so$' '' -- \
  in_place "$UKSTAP" -p4 -e 'probe begin { println("x") }'
t "-p4: a syscall probe compiles to a BPF object" 0 '~\.bpf\.o$' '' -- \
  in_place "$UKSTAP" -p4 -e 'global n; probe syscall.getdents { n++ } probe end { println(n) }'
obj=$(in_place "$UKSTAP" -p4 -e 'global n; probe syscall.getdents { n++ } probe end { println(n) }' 2> /dev/null)
t "-p4: the named object is an eBPF ELF object" 0 '~eBPF' '' -- file -b "$obj"

t_require_root || { t_done; exit; }

t "begin probe prints" 0 $'hello from the installed ukstap\n' '' -- \
  in_place "$UKSTAP" -e 'probe begin { println("hello from the installed ukstap"); exit() }'

# The seed example (README): a syscall probe on the -c target.
ls / > "$T_TMP/ls.truth"
t "syscall probe with -c 'ls /': the target's output is ls's own" 0 "$(cat "$T_TMP/ls.truth")"$'\n' '' -- \
  in_place "$UKSTAP" -o "$T_TMP/seed.out" \
    -e 'probe syscall.getdents { if (pid() == target()) printf("%s %s\n", pn(), argstr) }' -c 'ls /'
t "syscall probe with -c 'ls /': getdents of the target reported" 0 '' '' -- \
  grep -qE '^syscall\.getdents [0-9]+, 0x' "$T_TMP/seed.out"

# The user stack of ls (stripped, no frame pointers): the installed unwinder runtime.
t "print_ubacktrace -d /bin/ls --ldd -c 'ls /': runs" 0 "$(cat "$T_TMP/ls.truth")"$'\n' '' -- \
  in_place "$UKSTAP" -o "$T_TMP/ls.out" -d /bin/ls --ldd \
    -e 'probe syscall.getdents { if (pid() == target()) { log(pn()); print_ubacktrace() } }' -c 'ls /'
t "print_ubacktrace: every stack ends at ls's _start" 0 '' '' -- bash -c "
  n=\$(grep -c '^syscall.getdents\$' '$T_TMP/ls.out')
  last=\$(awk '/^syscall/ {if (prev) print prev; prev=\"\"; next} {prev=\$0} END {print prev}' '$T_TMP/ls.out' |
         grep -cE ' : _start\+0x[0-9a-f]+/0x[0-9a-f]+ \[(/usr)?/bin/ls\]\$')
  [ \"\$n\" -ge 1 ] && [ \"\$last\" = \"\$n\" ] || { echo \"n=\$n last=\$last\"; cat '$T_TMP/ls.out'; exit 1; }"

# Watched: passes 1-5 (tapsets, runtime headers, clang, load, run) open nothing of the trees.
if command -v strace > /dev/null && [ -n "$UKSTAP_HIDE" ]; then
  rm -rf "$XDG_CACHE_HOME"
  # -s 4096: strace cuts strings (execve's arguments among them) at 32 characters by default, and
  # a cut path under the tree is no installed path: CI's distcheck failed on such a fragment.
  t "strace: a run from pass 1 to pass 5" 0 '~^watched$' '' -- \
    in_place strace -f -qq -s 4096 -e trace=%file -o "$T_TMP/strace.out" "$UKSTAP" \
      -e 'global n; probe syscall.getdents { n++ } probe begin { println("watched") } probe timer.ms(1) { exit() }'
  t "strace: it read the installed tapsets and runtime" 0 '' '' -- bash -c "
    grep -q '\"$UKSTAP_PKGDATADIR/tapset/' '$T_TMP/strace.out' &&
    grep -q '\"$UKSTAP_PKGDATADIR/runtime/' '$T_TMP/strace.out'"
  # Allowed inside a tree: the installed directories, and their parents themselves (resolving
  # the installed path walks them when the prefix is inside the tree, as under distcheck).
  tree_paths() {  # the absolute paths strace saw that are in a tree and not allowed
    local keep=() d h p
    for d in "$BINDIR" "$UKSTAP_PKGDATADIR"; do
      d=$(realpath -m "$d"); keep+=("$d/*")
      while [ "$d" != / ]; do keep+=("$d"); d=$(dirname "$d"); done
    done
    grep -oE '"/[^"]*"' "$T_TMP/strace.out" | tr -d '"' | sed 's|\(.\)/$|\1|' | sort -u |
      while IFS= read -r p; do
        for d in "${keep[@]}"; do [[ $p == $d ]] && continue 2; done
        for h in $UKSTAP_HIDE; do [[ $p == "$h" || $p == "$h"/* ]] && { echo "$p"; break; }; done
      done
    return 0  # the paths printed are the failure
  }
  t "strace: no path under the source or build tree" 0 '' '' -- tree_paths
else
  t_skip "strace check (no strace, or no tree to watch)"
fi
t_done

#!/bin/bash
# SystemTap's options that scripts and their .meta files pass (issue 14; ukstap(1), "Options for
# SystemTap scripts"), each against SystemTap's documented meaning (man stap):
#   -W               "treat all warnings as errors"
#   --skip-badvars   "ignore unresolvable ... context variables and substitute with 0, without
#                    errors"
#   --disable-cache  "no files will be either read from or written to the cache" (watched: the
#                    cache directory, $XDG_CACHE_HOME/ukstap)
#   --compatible=V   the preprocessor's systemtap_v is V (the branch taken, -p1)
#   --runtime=MODE   bpf only; the other runtimes refused in one line
# and the documented no-ops accepted.
. "$(dirname "$0")/../e2e-lib.sh"

NL=$'\n'
HINT="Try 'ukstap --help' for more information."
OK='probe begin { exit() }'
# A local assigned and never read: pass 2's "Eliding assignment" warning.
WARNS='probe begin { x = 1 }'

# --- -W ----------------------------------------------------------------------------------------
t "warning without -W" 0 '*' '~^WARNING: Eliding assignment to' -- "$UKSTAP" -p2 -e "$WARNS"
t "-W: a warning fails pass 2" 1 '' '$Pass 2: analysis failed.  [man error::pass2]' -- \
  "$UKSTAP" -W -p2 -e "$WARNS"
t "-W: the warning is printed" 1 '' '~^WARNING: Eliding assignment to' -- "$UKSTAP" -W -p2 -e "$WARNS"
t "-W without warnings" 0 '*' '' -- "$UKSTAP" -W -p2 -e "$OK"
t "-W with -w: nothing printed, nothing counts" 0 '*' '' -- "$UKSTAP" -W -w -p2 -e "$WARNS"

# --- --compatible ------------------------------------------------------------------------------
VSCRIPT='%( systemtap_v < "2.0" %? probe begin {} %: probe end {} %)'
t "--compatible=1.8: old branch" 0 '~^probe begin' '' -- "$UKSTAP" --compatible=1.8 -p1 -e "$VSCRIPT"
t "--compatible 1.8 (separate word)" 0 '~^probe begin' '' -- "$UKSTAP" --compatible 1.8 -p1 -e "$VSCRIPT"
t "no --compatible: current branch" 0 '~^probe end' '' -- "$UKSTAP" -p1 -e "$VSCRIPT"
t "--compatible junk" 1 '' "ukstap: Invalid --compatible version '4.x' (numbers separated by dots, e.g. 4.8).${NL}$HINT${NL}" \
  -- "$UKSTAP" --compatible=4.x -p1 -e "$OK"

# --- --runtime ---------------------------------------------------------------------------------
t "--runtime=bpf" 0 '*' '' -- "$UKSTAP" --runtime=bpf -p2 -e "$OK"
t "--bpf" 0 '*' '' -- "$UKSTAP" --bpf -p2 -e "$OK"
t "--runtime=dyninst refused" 1 '' "ukstap: --runtime=dyninst is not available: ukstap has only the bpf runtime (BPF programs and a user-space consumer), not SystemTap's Dyninst runtime.${NL}$HINT${NL}" \
  -- "$UKSTAP" --runtime=dyninst -p2 -e "$OK"
t "--dyninst refused" 1 '' '~^ukstap: --runtime=dyninst is not available' -- "$UKSTAP" --dyninst -p2 -e "$OK"
t "--runtime=kernel refused" 1 '' '~^ukstap: --runtime=kernel is not available: .*kernel-module runtime\.$' \
  -- "$UKSTAP" --runtime=kernel -p2 -e "$OK"
t "--runtime=other" 1 '' "ukstap: Invalid --runtime 'lua' (ukstap has only the bpf runtime).${NL}$HINT${NL}" \
  -- "$UKSTAP" --runtime=lua -p2 -e "$OK"

# --- documented no-ops -------------------------------------------------------------------------
t "--all-modules" 0 '*' '' -- "$UKSTAP" --all-modules -p2 -e "$OK"
t "--check-version" 0 '*' '' -- "$UKSTAP" --check-version -p2 -e "$OK"
t "--prologue-searching" 0 '*' '' -- "$UKSTAP" --prologue-searching -p2 -e "$OK"
t "--prologue-searching=never" 0 '*' '' -- "$UKSTAP" --prologue-searching=never -p2 -e "$OK"
t "-P" 0 '*' '' -- "$UKSTAP" -P -p2 -e "$OK"
t "--prologue-searching=junk" 1 '' "ukstap: Invalid --prologue-searching 'often' (never, always or auto).${NL}$HINT${NL}" \
  -- "$UKSTAP" --prologue-searching=often -p2 -e "$OK"
t "--skip-badvars without bad vars" 0 '*' '' -- "$UKSTAP" --skip-badvars -p2 -e "$OK"
t "unknown option still one error" 1 '' "ukstap: unrecognized option '--skip-goodvars'${NL}$HINT${NL}" \
  -- "$UKSTAP" --skip-goodvars -p2 -e "$OK"
t "help lists them" 0 '~^   --skip-badvars ' '' -- "$UKSTAP" --help

# --- --skip-badvars: pass 2, then a run ---------------------------------------------------------
BAD='probe kernel.trace("sched_switch") { printf("%d %d\n", $no_such_var + 0, @defined($no_such_var)); exit() }'
t "bad \$var without --skip-badvars" 1 '' "~^semantic error: unable to find tracepoint variable '\\\$no_such_var'" \
  -- "$UKSTAP" -p2 -e "$BAD"
t "--skip-badvars: pass 2 accepts it" 0 '*' '' -- "$UKSTAP" --skip-badvars -p2 -e "$BAD"
t_require_root || { t_done; exit; }
t "--skip-badvars: reads as 0, @defined stays 0" 0 $'0 0\n' '' -- "$UKSTAP" --skip-badvars -e "$BAD"

# --- --disable-cache: the cache directory is neither written nor read ---------------------------
cache=$T_TMP/xdg
SCRIPT='probe kernel.trace("sched_switch") { exit() }'
t "--disable-cache: compiles" 0 '~\.bpf\.o$' '' -- env XDG_CACHE_HOME="$cache" "$UKSTAP" --disable-cache -p4 -e "$SCRIPT"
t "--disable-cache: no cache directory made" 1 '' '*' -- test -e "$cache/ukstap"
t "without it: the cache is written" 0 '*' '' -- env XDG_CACHE_HOME="$cache" "$UKSTAP" -p4 -e "$SCRIPT"
t "the cache holds the module" 0 '~\.bpf\.o$' '' -- find "$cache/ukstap" -name '*.bpf.o'
find "$cache" -exec stat -c '%n %s %Y' {} + | sort > "$T_TMP/before"
# The same script again: a cached run would say "Pass 4: using cached"; --disable-cache compiles
# into a private directory and leaves the cache as it was.
t "--disable-cache: the cache is not read" 0 '*' '~^Pass 4: compiled C into "/' -- \
  env XDG_CACHE_HOME="$cache" "$UKSTAP" --disable-cache -v -p4 -e "$SCRIPT"
t "--disable-cache: nor written" 0 '' '' -- bash -c \
  "find '$cache' -exec stat -c '%n %s %Y' {} + | sort | diff '$T_TMP/before' -"
t "cached run says so (control)" 0 '*' '~^Pass 4: using cached ' -- \
  env XDG_CACHE_HOME="$cache" "$UKSTAP" -v -p4 -e "$SCRIPT"
# --- SystemTap's kernel-module runtime options (man stap) ---------------------------------------
# Accepted where ukstap already does what they ask: -b (bulk per-CPU files: ukstap has one
# stream), -s NUM (per-CPU buffer megabytes, 1-4095), -r/-a naming the running kernel and
# machine (uname), --privilege=stapdev (full privileges). The output is that of the same run
# without them.
t "-b -s 4 -r \$(uname -r) -a \$(uname -m) --privilege=stapdev accepted" 0 '*' '' -- \
  "$UKSTAP" -b -s 4 -r "$(uname -r)" -a "$(uname -m)" --privilege=stapdev -p2 -e "$OK"
t "-s 0: stap's buffer-size error" 1 '' "Invalid buffer size (should be 1-4095).${NL}" -- \
  "$UKSTAP" -s 0 -p2 -e "$OK"
# The rest: one line naming the SystemTap meaning and that ukstap does not support it (not
# getopt's "invalid option", which reads as a typo).
refused() {  # NAME OPTION... : exit 1, "ukstap: NAME: SystemTap's ... not supported by ukstap..."
  local name=$1; shift
  t "$name refused with its SystemTap meaning" 1 '' \
    "~^ukstap: $name: SystemTap's .* (is|are) not supported by ukstap" -- "$UKSTAP" "$@" -p2 -e "$OK"
}
refused -t -t
refused -F -F
refused --suppress-handler-errors --suppress-handler-errors
refused --suppress-time-limits --suppress-time-limits
refused --poison-cache --poison-cache
refused --privilege=stapusr --privilege=stapusr
refused --unprivileged --unprivileged
refused "-r 2\.6\.32" -r 2.6.32
refused "-a s390x" -a s390x
# -q is undocumented in SystemTap (man stap has none): getopt's message stays (cli.sh checks it).

t_done

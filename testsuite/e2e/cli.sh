#!/bin/bash
# Command-line parsing and error paths of the driver (docs/STAP-FORMATS.md sections 5, 6 and 8).
# Needs no root and no BPF: nothing here gets past pass 2.
. "$(dirname "$0")/../e2e-lib.sh"

NL=$'\n'
HINT="Try 'ukstap --help' for more information."
OK='probe begin { exit() }'

# --- bad usage: one line, the --help hint, exit status 1 ---------------------------------------
t "unknown short option" 1 '' "ukstap: invalid option -- 'q'${NL}$HINT${NL}" -- "$UKSTAP" -q -e "$OK"
t "unknown long option" 1 '' "ukstap: unrecognized option '--bogus'${NL}$HINT${NL}" -- "$UKSTAP" --bogus -e "$OK"
t "missing option argument" 1 '' "ukstap: option '-e' requires an argument${NL}$HINT${NL}" -- "$UKSTAP" -e
t "-p out of range" 1 '' "ukstap: Invalid pass number (should be 1-5).${NL}$HINT${NL}" -- "$UKSTAP" -p 6 -e "$OK"
t "-p not a number" 1 '' "ukstap: Invalid pass number (should be 1-5).${NL}$HINT${NL}" -- "$UKSTAP" -p two -e "$OK"
t "-x not a pid" 1 '' "ukstap: Invalid target process ID number.${NL}$HINT${NL}" -- "$UKSTAP" -x abc -e "$OK"
t "-c with -x" 1 '' "ukstap: You can't specify -c and -x options together.${NL}$HINT${NL}" -- "$UKSTAP" -c true -x 1 -e "$OK"
t "two -e scripts" 1 '' "ukstap: Only one script can be given on the command line.${NL}$HINT${NL}" -- "$UKSTAP" -e "$OK" -e "$OK"
t "no script" 1 '' "ukstap: A script must be specified (SCRIPT_FILE, '-' for stdin, or -e SCRIPT).${NL}$HINT${NL}" -- "$UKSTAP"
t "-G without =" 1 '' "ukstap: Invalid -G global assignment 'x': expected VAR=VALUE.${NL}$HINT${NL}" -- "$UKSTAP" -G x -e "$OK"
t "-m bad module name" 1 '' '~^ukstap: Invalid module name' -- "$UKSTAP" -m 9lives -e "$OK"
t "-l with a script" 1 '' "ukstap: -l/-L cannot be used with a script.${NL}$HINT${NL}" -- "$UKSTAP" -l 'begin' -e "$OK"

# --- -T: seconds, fractions allowed, at least 1 ms (stap's own message, no prefix) -------------
t "-T under 1ms" 1 '' $'Invalid timeout interval.\n' -- "$UKSTAP" -T 0.0001 -e "$OK"
t "-T zero" 1 '' $'Invalid timeout interval.\n' -- "$UKSTAP" -T 0 -e "$OK"
t "-T negative" 1 '' $'Invalid timeout interval.\n' -- "$UKSTAP" -T -1 -e "$OK"
t "-T junk" 1 '' $'Invalid timeout interval.\n' -- "$UKSTAP" -T 1s -e "$OK"

# --- script files ------------------------------------------------------------------------------
t "missing script file" 1 '' "ukstap: cannot open script file '/nonexistent/x.stp': No such file or directory${NL}" \
  -- "$UKSTAP" /nonexistent/x.stp
t "script file is a directory" 1 '' "ukstap: cannot read script file '/': Is a directory${NL}" -- "$UKSTAP" -p1 /

# --- help and version --------------------------------------------------------------------------
t "-V" 0 "~^ukstap translator/driver \\(version ${UKSTAP_VERSION:-[0-9]}" '' -- "$UKSTAP" -V
t "--version" 0 '~^ukstap translator/driver \(version ' '' -- "$UKSTAP" --version
t "--help" 0 '~^Usage: ukstap \[OPTIONS\] \[SCRIPT_FILE \| - \| -e SCRIPT\] \[ARGS\.\.\.\]$' '' -- "$UKSTAP" --help
t "-h" 0 '~^   -T SECONDS ' '' -- "$UKSTAP" -h
t "--help with other options" 0 '~^Usage: ' '' -- "$UKSTAP" -h -p 1 -e "$OK"

# --- passes ------------------------------------------------------------------------------------
t "-p1 of -e" 0 '~^# parse tree dump$' '' -- "$UKSTAP" -p1 -e "$OK"
t "-p1 from stdin" 0 '~^# parse tree dump$' '' --stdin "$OK" -- "$UKSTAP" -p1 -
t "-p1 from a file" 0 '~^# parse tree dump$' '' -- "$UKSTAP" -p1 "$UKSTAP_TOP_SRCDIR/testsuite/fuzz/corpus/begin.stp"
t "-p1 -v reports pass 1" 0 '*' '~^Pass 1: parsed user script and [0-9]+ library scripts? using [0-9]+virt/' \
  -- "$UKSTAP" -vv -p1 -e "$OK"
# Passes 1, 2 and 3 each report with stap's tail (docs/STAP-FORMATS.md; stap's pass 3 line is
# `Pass 3: translated to C into "FILE" using ...`: ukstap's C has no file before pass 4).
t "-p3 -v reports passes 1, 2 and 3, each with its usage" 0 '' '' -- bash -c "
  '$UKSTAP' -v -p3 -e '$OK' 2>&1 >/dev/null | grep -cE '^Pass [123]: .* using [0-9]+virt/[0-9]+res/[0-9]+shr/[0-9]+data kb, in [0-9]+usr/[0-9]+sys/[0-9]+real ms\.\$' |
    grep -qx 3 && '$UKSTAP' -v -p3 -e '$OK' 2>&1 >/dev/null | grep -q '^Pass 3: translated to C '"
# The man page documents every option --help names, and says nothing is unimplemented.
t "man page: every --help option is documented, no 'not implemented'" 0 '' '' -- python3 -c "
import re, subprocess, sys
h = subprocess.run(['$UKSTAP', '--help'], capture_output=True, text=True).stdout
man = open('$UKSTAP_TOP_SRCDIR/man/ukstap.1').read().replace('\\\\-', '-')
opts = sorted(set(re.findall(r'(?:^|[\\s,\\[|])(--?[A-Za-z][A-Za-z-]*)', h)))
missing = [o for o in opts if o not in man]
bad = re.findall(r'not (?:yet )?implemented', man)
if len(opts) < 30 or missing or bad: sys.exit('%d options; not in the man page: %s; %s' % (len(opts), missing, bad))
"
t "parse error fails pass 1" 1 '' '$Pass 1: parse failed.  [man error::pass1]' -- "$UKSTAP" -p1 -e 'probe begin {'
t "semantic error fails pass 2" 1 '' '$Pass 2: analysis failed.  [man error::pass2]' \
  -- "$UKSTAP" -p2 -e 'probe begin { nosuchfunction_xyz() }'
t "-p2 lists the probes" 0 '~^# probes$' '' -- "$UKSTAP" -p2 -e "$OK"

t "pass 3-5 options parse" 0 '~^#include "stp_runtime.h"$' '*' -- "$UKSTAP" -p3 -c 'true' -o /tmp/ukstap-cli.out -d /bin/ls --ldd -k \
  -m mymod -T 0.5 -G g=1 -D MAXSTRINGLEN=64 -DMAXACTION=100 -I "$T_TMP" -g -w -u \
  -e 'global g; probe begin { printf("%d %s\n", g, @1); exit() }' arg1
t "-x sets target()" 0 $'1\n' '' -- "$UKSTAP" -x 1 -e 'probe begin { printf("%d\n", target()); exit() }'
t "-p4 prints the module path" 0 '~^/.*\.(so|bpf\.o)$' '' -- "$UKSTAP" -p4 -e "$OK"
t "script arguments after --" 0 $'-a-b\n' '' -- "$UKSTAP" -e 'probe begin { log(@1 . @2); exit() }' -- -a -b

# --- listing -----------------------------------------------------------------------------------
t "-l without a match prints nothing" 1 '' '' -- "$UKSTAP" -l 'nosuch_xyz.point'
t "-L without a match prints nothing" 1 '' '' -- "$UKSTAP" -L 'nosuch_xyz.point'
t "-l begin" 0 $'begin\n' '' -- "$UKSTAP" -l begin
t "--dump-probe-types" 0 '~^timer\.ms\(number\)$' '' -- "$UKSTAP" --dump-probe-types

t_done

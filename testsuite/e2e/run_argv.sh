#!/bin/bash
# tapsets/argv.stp: argc, argv_N and argv[N] are the script's arguments (SystemTap's argv
# tapset). The truth is the command line this test writes: its count, its words ("" past the
# last), and -G argv_N=... overriding one (the tapset's documented use).
set -u
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

S='probe begin { printf("%d [%s] [%s] [%s] [%s]\n", argc, argv_1, argv[2], argv_3, argv[3]); exit() }'
t "argc, argv_N, argv[N]: the arguments as given" 0 $'2 [one] [two words] [] []\n' '' -- \
  "$UKSTAP" -e "$S" one 'two words'
t "no arguments: argc 0, every argv_N empty" 0 $'0 [] [] [] []\n' '' -- "$UKSTAP" -e "$S"
t "-G argv_3=x sets argv_3 and argv[3]" 0 $'1 [a] [] [x] [x]\n' '' -- \
  "$UKSTAP" -G argv_3=x -e "$S" a
t_done

#!/bin/bash
# The runtime's global BPF functions (STP_RT_FN in runtime/bpf/) are compiled only into the
# modules that call them (translator/codegen/runtime_functions.cpp). Truth: the BPF object's
# symbol table as readelf(1) prints it, and what the program prints. Compiles only (-p4), no run:
# the behaviour of the functions is every other script's.
. "$(dirname "$0")/../e2e-lib.sh"
export XDG_CACHE_HOME="$T_CACHE"
FNS='stp_bpf_(strcmp|sfmt_long|sfmt_str|sfmt_mem|text_escape|substr|strpos|str_replace|tokenize|flags_str|strtol|buf_hash)|stp_uwalk_frame|stp_chain_check|stp_kwalk_hash'
# syms OBJ: "BIND NAME" of each runtime function in OBJ's symbol table, sorted
syms() { readelf -sW "$1" | awk -v re="^($FNS)\$" '$4 == "FUNC" && $8 ~ re {print $5, $8}' | sort; }

# A probe that calls none of them: none in the object (before: all 15, global).
obj=$("$UKSTAP" -p4 -e 'probe syscall.getpid { printf("%d\n", pid()) }' 2>/dev/null | grep '\.bpf\.o$')
t "a probe calling no runtime function: none of them in its object" 0 '' '' -- \
  bash -c '[ -f "$1" ] || { echo "no object: $1" >&2; exit 1; }; readelf -sW "$1" | grep -E " ($2)\$" >&2; [ $? = 1 ]' _ "$obj" "$FNS"

# substr() (a tapset's embedded C hook), print_ubacktrace() (the user walk: its frame function
# and the chain cache's check) and print_backtrace() (the kernel stack's hash): exactly those,
# global, none static.
obj=$("$UKSTAP" -p4 -e 'probe syscall.getpid { println(substr(execname(), 1, 2)); print_ubacktrace(); print_backtrace() }' 2>/dev/null | grep '\.bpf\.o$')
t "substr, print_ubacktrace, print_backtrace: their functions, global" 0 \
  $'GLOBAL stp_bpf_substr\nGLOBAL stp_chain_check\nGLOBAL stp_kwalk_hash\nGLOBAL stp_uwalk_frame\n' '' -- \
  bash -c "$(declare -f syms); FNS='$FNS'; syms \"\$1\"" _ "$obj"
t_done

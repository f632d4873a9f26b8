#!/bin/bash
# ukstap -i (issue 17, SystemTap's interactive mode), driven as a person drives it: in a real
# terminal (a tmux pane: send-keys types, capture-pane reads the screen), then with the
# commands piped in.
#
# The truths, none of them ukstap's run output:
#  - tab completion of a probe point prefix: what `ukstap -l` lists for that prefix (the listing
#    is the reference the completion must agree with), and the $variables/locals -L lists;
#  - a run's syscall count: strace's count of the same command's openat calls;
#  - a run's printf: printf(1) with the same format and arguments;
#  - ^C during a run: the kernel's view (bpftool prog/link show id) of the programs and links
#    the run's process held (read from its /proc fdinfo while it ran): all gone, and the prompt
#    process still alive;
#  - the history file: the lines the test typed, in order;
#  - `run &` then `stop`: the same kernel view, and the prompt usable while the run went on;
#  - a bad command: one error line, and the next command still runs.
# Every wait polls the screen or /proc for a condition (a loaded 2-core machine only makes it
# slower); two compiles in all (the ^C run's script is the count run's, from the cache).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
if ! command -v tmux > /dev/null; then
  echo "FAIL: tmux is not installed (scripts/install-deps installs it)"
  T_FAILED=$((T_FAILED + 1))
  t_done
  exit
fi
export XDG_CACHE_HOME="$T_CACHE"
SOCK="$T_TMP/tmux.sock"
trap 'tmux -S "$SOCK" kill-server 2> /dev/null; rm -rf "$T_TMP"' EXIT
trap 'exit 143' TERM  # the runner's stop: through the EXIT trap (no tmux server left behind)
trap 'exit 130' INT
WAIT_LIMIT=${UKSTAP_E2E_WAIT:-300}  # seconds a condition may take (compiles on a loaded machine)

fail_msg() { echo "  $*" >&2; return 1; }
pane() { tmux -S "$SOCK" capture-pane -p -J -S -5000 -t ix; }
keys() { tmux -S "$SOCK" send-keys -t ix "$@"; }
# wait_until CMD...: polls CMD every 0.1 s until it succeeds (WAIT_LIMIT at most).
wait_until() {
  local n=0
  until "$@"; do
    n=$((n + 1))
    [ $n -ge $((WAIT_LIMIT * 10)) ] && return 1
    sleep 0.1
  done
}
prompts() { pane | grep -c '^ukstap> '; }
# The pane ends with an empty prompt, and has at least N prompts.
at_prompt() { [ "$(prompts)" -ge "$1" ] && [ "$(pane | grep -v '^$' | tail -n 1)" = "ukstap> " ]; }
# enter TEXT: types TEXT and Enter, waits for the next prompt.
enter() {
  local before; before=$(prompts)
  keys -l "$1"
  keys Enter
  wait_until at_prompt $((before + 1)) || { echo "  timed out after '$1'"; pane | tail -n 20; return 1; }
}
# The screen's non-empty lines after the last line LINE followed by some (up to the next
# prompt; the pane below the cursor is blank).
after_line() {
  pane | sed 's/ *$//' | awk -v l="$1" '
    $0 == l { if (out != "") last = out; out = ""; on = 1; next }
    on && /^ukstap>/ { on = 0 }
    on && $0 != "" { out = out $0 "\n" }
    END { printf "%s", out != "" ? out : last }'
}

HOME_IX="$T_TMP/home"
mkdir -p "$HOME_IX"
tmux -S "$SOCK" new-session -d -s ix -x 200 -y 50 \
  "env HOME='$HOME_IX' TERM=xterm LC_ALL=C XDG_CACHE_HOME='$XDG_CACHE_HOME' '$UKSTAP' -i; echo \"[ukstap exited \$?]\"; exec cat"
tmux -S "$SOCK" set-option -t ix history-limit 20000 > /dev/null
started() { at_prompt 1 || pane | grep -q '^\[ukstap exited'; }
wait_until started
t "the prompt comes up" 0 '' '' -- at_prompt 1
if [ "$T_FAILED" != 0 ]; then  # no prompt: nothing else can be checked (and each would wait)
  pane | grep . | tail -n 5 | sed 's/^/  screen: /'
  t_done
  exit
fi

# ------------------------------------------------------------------------- tab completion
# One Tab completes to what every listed point with that prefix shares.
lcp() { awk 'NR == 1 { p = $0; next } { while (index($0, p) != 1) p = substr(p, 1, length(p) - 1) } END { print p }'; }
want_lcp=$("$UKSTAP" -l 'syscall.opena*' | lcp)
keys -l 'add probe syscall.opena'
keys Tab
line_is() { [ "$(pane | grep '^ukstap> ' | tail -n 1 | sed 's/ *$//')" = "$1" ]; }
t "Tab completes syscall.opena to the listing's common prefix ($want_lcp)" 0 '' '' -- \
  wait_until line_is "ukstap> add probe $want_lcp"
keys C-u
# Two Tabs (where one has nothing to add) list the candidates: the points `-l` lists with that
# prefix (a trailing '.' marks one with more components after it).
"$UKSTAP" -l 'syscall.open*' > "$T_TMP/op.want"
"$UKSTAP" -l 'syscall.open*.**' | cut -d. -f1-2 >> "$T_TMP/op.want"
sort -u -o "$T_TMP/op.want" "$T_TMP/op.want"
keys -l 'add probe syscall.open'
keys Tab Tab
listed() { after_line 'ukstap> add probe syscall.open' | tr -s ' ' '\n' | grep . | sed 's/\.$//' | sort -u > "$T_TMP/op.got"; [ -s "$T_TMP/op.got" ]; }
wait_until listed || pane | grep . | tail -n 8 | sed 's/^/  screen: /'
t "Tab Tab lists the syscall.open* points of ukstap -l" 0 '' '' -- diff "$T_TMP/op.want" "$T_TMP/op.got"
keys C-u
# In a probe body: the variables -L lists for the point (syscall.openat's filename_unquoted).
want_var=$("$UKSTAP" -L syscall.openat | tr ' ' '\n' | sed -n 's/^\(filename_u[a-z_]*\):.*/\1/p')
keys -l 'add probe syscall.openat { println(filename_u'
keys Tab
t "Tab completes a variable -L lists ($want_var)" 0 '' '' -- \
  wait_until line_is "ukstap> add probe syscall.openat { println($want_var"
keys C-u

# ------------------------------------------------------------------------- a run with -c
# The entry continues on a second line (ukstap>>>) while its brace is open.
t "add global" 0 '' '' -- enter 'add global n'
keys -l 'add probe syscall.openat { if (pid() == target())'
keys Enter
continuation() { [ "$(pane | grep -v '^$' | tail -n 1)" = "ukstap>>> " ]; }
t "an unfinished entry asks for more (ukstap>>>)" 0 '' '' -- wait_until continuation
t "the entry's second line" 0 '' '' -- enter 'n++ }'
t "add an end probe" 0 '' '' -- enter 'add probe end { printf("openat count %d\n", n) }'
t "set cmd" 0 '' '' -- enter 'set cmd wc -c /etc/hostname /etc/passwd'
t "list" 0 '' '' -- enter list
after_line 'ukstap> list' > "$T_TMP/list.got"
cat > "$T_TMP/list.want" <<'EOF'
1: global n
2: probe syscall.openat { if (pid() == target())
3: n++ }
4: probe end { printf("openat count %d\n", n) }
EOF
t "list: the lines as typed, numbered" 0 '' '' -- diff "$T_TMP/list.want" "$T_TMP/list.got"
run_output_count() { after_line 'ukstap> run' | grep '^openat count'; }
t "run (-c wc)" 0 '' '' -- enter run
LC_ALL=C strace -f -qq -e trace=openat -o "$T_TMP/wc.strace" wc -c /etc/hostname /etc/passwd > /dev/null
want_count=$(grep -c openat "$T_TMP/wc.strace")
t "the run counts the openat calls strace counts ($want_count)" 0 "openat count $want_count"$'\n' '' \
  -- run_output_count

# ------------------------------------------------------------------------- a bad command
t "a bad command" 0 '' '' -- enter 'frobnicate 1 2'
t "a bad command: one error line" 0 'ukstap: unknown command "frobnicate" (try "help")'$'\n' '' \
  -- after_line 'ukstap> frobnicate 1 2'

# ------------------------------------------------------------------------- ^C at the prompt
# Drops the line being typed: a fresh prompt, nothing run, nothing in the history.
before=$(prompts)
keys -l 'frobnicate-never-run'
keys C-c
t "^C at the prompt: a fresh prompt" 0 '' '' -- wait_until at_prompt $((before + 1))
t "^C at the prompt: the line did not run" 1 '' '' -- sh -c "tmux -S '$SOCK' capture-pane -p -J -S -5000 -t ix | grep -q 'unknown command \"frobnicate-never-run'"

# ------------------------------------------------------------------------- ^C stops a run
t "set cmd (none)" 0 '' '' -- enter 'set cmd'
IXPID=$(pgrep -P "$(tmux -S "$SOCK" display -p -t ix '#{pane_pid}')" -x ukstap)
before=$(prompts)
keys -l run
keys Enter
# (t runs its command in a subshell: the pid is kept in a file.)
run_pid() { RUNPID=$(pgrep -P "$IXPID" -x ukstap | head -n 1); [ -n "$RUNPID" ] && echo "$RUNPID" > "$T_TMP/runpid"; }
# The run's programs and links, from its fds, once the probe is attached (a perf link).
attached() {
  run_pid || return 1
  grep -ho 'link_id:[[:space:]]*[0-9]*' /proc/"$RUNPID"/fdinfo/* 2> /dev/null | awk '{print $2}' > "$T_TMP/links"
  grep -ho 'prog_id:[[:space:]]*[0-9]*' /proc/"$RUNPID"/fdinfo/* 2> /dev/null | awk '{print $2}' | sort -u > "$T_TMP/progs"
  [ -s "$T_TMP/links" ]
}
t "run: the probe is attached" 0 '' '' -- wait_until attached
keys C-c
t "^C: the run ends, its end probe prints, the prompt is back" 0 '' '' -- wait_until at_prompt $((before + 1))
t "^C: ukstap -i is still running" 0 '' '' -- kill -0 "$IXPID"
RUNPID=$(cat "$T_TMP/runpid")
t "^C: the run's process is gone" 1 '' '*' -- kill -0 "$RUNPID"
gone() {  # every id of the kind is unknown to the kernel now
  local kind=$1 file=$2 id
  while read -r id; do
    bpftool "$kind" show id "$id" > /dev/null 2>&1 && { echo "$kind $id still loaded" >&2; return 1; }
  done < "$file"
  return 0
}
t "^C: none of the run's programs is loaded (bpftool prog show id)" 0 '' '' -- gone prog "$T_TMP/progs"
t "^C: none of its links exists (bpftool link show id)" 0 '' '' -- gone link "$T_TMP/links"
t "^C: the end probe ran" 0 '~^(\^C)?openat count [0-9]+$' '' -- after_line 'ukstap> run'

# ------------------------------------------------------------------------- run & and stop
# The prompt comes back while the run goes on (a foreground run would hold it until ^C).
t "run &: the prompt is back while it runs" 0 '' '' -- enter 'run &'
t "run &: the probe is attached" 0 '' '' -- wait_until attached
RUNPID=$(cat "$T_TMP/runpid")
t "run &: the run is still going" 0 '' '' -- kill -0 "$RUNPID"
t "stop" 0 '' '' -- enter stop
t "stop: the run's process is gone" 1 '' '*' -- kill -0 "$RUNPID"
t "stop: none of the run's programs is loaded" 0 '' '' -- gone prog "$T_TMP/progs"
t "stop: none of its links exists" 0 '' '' -- gone link "$T_TMP/links"
t "stop: the end probe ran" 0 '~^openat count [0-9]+$' '' -- after_line 'ukstap> stop'
t "stop with nothing running: one error line" 0 '' '' -- enter stop
t "stop with nothing running: the line" 0 '~^ukstap: stop: no background run' '' -- after_line 'ukstap> stop'

# ------------------------------------------------------------------------- history, quit
keys -l quit
keys Enter
exited() { pane | grep -q '^\[ukstap exited 0\]$'; }
t "quit ends ukstap -i (status 0)" 0 '' '' -- wait_until exited
cat > "$T_TMP/history.want" <<'EOF'
add global n
add probe syscall.openat { if (pid() == target())
n++ }
add probe end { printf("openat count %d\n", n) }
set cmd wc -c /etc/hostname /etc/passwd
list
run
frobnicate 1 2
set cmd
run
run &
stop
quit
EOF
t "history: ~/.ukstap_history has the lines typed, in order" 0 '' '' -- diff "$T_TMP/history.want" "$HOME_IX/.ukstap_history"

# A history file that is a link (planted in a $HOME root runs with) is not followed: one line
# says so, and the file the link names is left as it was.
HOME_LINK="$T_TMP/home-link"
mkdir -p "$HOME_LINK"
echo "victim's own text" > "$T_TMP/victim"
ln -s "$T_TMP/victim" "$HOME_LINK/.ukstap_history"
tmux -S "$SOCK" new-session -d -s ixl -x 200 -y 20 \
  "env HOME='$HOME_LINK' TERM=xterm LC_ALL=C '$UKSTAP' -i; echo \"[ukstap exited \$?]\"; exec cat"
lpane() { tmux -S "$SOCK" capture-pane -p -J -t ixl; }
lprompt() { lpane | grep -q '^ukstap> '; }
wait_until lprompt
t "history: a link as ~/.ukstap_history is refused in one line" 0 '' '' -- bash -c \
  "tmux -S '$SOCK' capture-pane -p -J -t ixl | grep -qx 'ukstap: history not kept in $HOME_LINK/.ukstap_history: it is not a regular file'"
tmux -S "$SOCK" send-keys -t ixl -l 'list'
tmux -S "$SOCK" send-keys -t ixl Enter
tmux -S "$SOCK" send-keys -t ixl -l 'quit'
tmux -S "$SOCK" send-keys -t ixl Enter
lexited() { lpane | grep -q '^\[ukstap exited 0\]$'; }
wait_until lexited
t "history: the file the link names is unchanged" 0 "victim's own text"$'\n' '' -- cat "$T_TMP/victim"

# ------------------------------------------------------------------------- piped commands
# No prompt, no history; the output is the commands' own; errors on stderr, one line each.
HOME_PIPE="$T_TMP/home-pipe"
mkdir -p "$HOME_PIPE"
piped() {
  HOME="$HOME_PIPE" "$UKSTAP" -i > "$T_TMP/pipe.out" 2> "$T_TMP/pipe.err" <<'EOF'
add probe begin { printf("piped %d %s\n", 6 * 7,
"ok"); exit() }
bogus-command
add probe end { x = }
list
run
EOF
}
t "piped: status 0 at the end of the input" 0 '' '' -- piped
# shellcheck disable=SC2016
{ printf '1: probe begin { printf("piped %%d %%s\\n", 6 * 7,\n2: "ok"); exit() }\n'
  printf 'piped %d %s\n' $((6 * 7)) ok; } > "$T_TMP/pipe.want"
t "piped: list, then the run's printf (printf(1)'s text)" 0 '' '' -- diff "$T_TMP/pipe.want" "$T_TMP/pipe.out"
t "piped: the bad command is one error line" 0 'ukstap: unknown command "bogus-command" (try "help")'$'\n' '' \
  -- grep bogus "$T_TMP/pipe.err"
t "piped: the bad entry is not added (parse error shown)" 0 '' '' \
  -- grep -q '^ukstap: add: nothing added$' "$T_TMP/pipe.err"
t "piped: no history file written" 1 '' '' -- test -e "$HOME_PIPE/.ukstap_history"
t "-i with a script to read from stdin is refused" 1 '' \
  $'ukstap: -i reads its commands from stdin: give the script as a file or -e\n' -- "$UKSTAP" -i -
t_done

#!/usr/bin/env python3
"""input.char on a terminal (run_input.sh): ukstap runs on a new pseudo-terminal; once its begin
probe has printed "ready", the keys "a", "b", "q" are typed without a newline. The truth is what
was typed: each key reaches input.char when typed (non-canonical mode, stapprobes: "no newline
buffering"), the terminal does not echo it (the script prints it), and when ukstap exits the
terminal has its line mode and echo back. Prints "ok" or what differed.

usage: input_tty_check.py UKSTAP"""
import os
import pty
import select
import sys
import termios
import time

SCRIPT = ('probe begin { println("ready") } '
          'probe input.char { printf("[%s]", char); if (char == "q") exit() }')


def read_until(fd, want, deadline):
    got = b""
    while want not in got and time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return got


def main():
    ukstap = sys.argv[1]
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.close(master)
        import fcntl
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.execv(ukstap, [ukstap, "-e", SCRIPT])
    deadline = time.time() + 120
    out = read_until(master, b"ready", deadline)
    if b"ready" not in out:
        print("no 'ready' from the begin probe: %r" % out)
        return 1
    out = out[out.index(b"ready") + 5:]
    for key in (b"a", b"b"):
        os.write(master, key)
    out += read_until(master, b"[b]", deadline)  # before any newline: non-canonical
    os.write(master, b"q")
    out += read_until(master, b"[q]", deadline)
    _, status = os.waitpid(pid, 0)
    after = termios.tcgetattr(slave)
    text = out.replace(b"\r", b"").replace(b"\n", b"")
    errors = []
    if text != b"[a][b][q]":
        errors.append("output %r, expected b'[a][b][q]' (no echo of the keys)" % text)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        errors.append("exit status %r" % status)
    modes = termios.ICANON | termios.ECHO
    if (after[3] & modes) != (before[3] & modes):
        errors.append("terminal mode not restored: lflag %#x, was %#x" % (after[3], before[3]))
    print("; ".join(errors) if errors else "ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

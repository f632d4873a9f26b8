#!/usr/bin/env python3
"""syscall_vars_check.py STAP_OUT STRACE_DIR -- compare ukstap's syscall variables with strace.

STAP_OUT: lines `SYSCALL<TAB>TID<TAB>var=value<TAB>...` (testsuite/e2e/syscall_vars.sh), and
`SYSCALL<TAB>TID<TAB>+var=value` lines adding one variable to the call just printed.
STRACE_DIR: strace -ff -o DIR/st output, one file st.TID per thread, lines `name(args) = ret`.
The N-th call of a syscall in a tid is compared with strace's N-th call of it in that tid, each
variable with the strace argument RULES name. Prints `OK: ...` or the mismatches (exit 1).
"""
import glob
import os
import re
import sys

# SystemTap name -> strace name, where they differ.
STRACE_NAME = {"pread": "pread64", "mmap2": "mmap"}
FUTEX_OPS = {"FUTEX_WAIT": 0, "FUTEX_WAKE": 1, "FUTEX_WAIT_PRIVATE": 128, "FUTEX_WAKE_PRIVATE": 129}
FCNTL = {"F_GETFD": 1, "F_SETFD": 2, "F_GETFL": 3, "F_SETFL": 4}


def num(s):
    s = s.strip()
    if s == "NULL":
        return 0
    if s.startswith("-"):
        return -num(s[1:])
    if s.startswith("0x"):
        return int(s, 16)
    if len(s) > 1 and s.startswith("0"):
        return int(s, 8)
    return int(s)


def flagset(s):
    # AF_x == PF_x; AF_UNIX is PF_LOCAL (1), the name SystemTap's table has.
    s = s.strip().replace("AF_UNIX", "PF_LOCAL").replace("AF_", "PF_")
    if s in ("0", "0x0"):
        return set()
    return set(s.split("|"))


# syscall -> [(stap variable, strace argument index, comparison)]. Comparisons: str (exact
# text), num (value: strace's hex/octal/NULL), flags (set of |-joined names, 0 = empty),
# args (argstr against strace's whole argument list), futex/fcntl (strace's name -> number),
# kv:KEY (strace's KEY=value argument, e.g. clone's flags=).
RULES = {
    "openat": [("dfd_str", 0, "str"), ("filename", 1, "str"), ("flags_str", 2, "flags"),
               ("mode", 3, "num?"), ("argstr", None, "args")],
    "write": [("fd", 0, "num"), ("buf_str", 1, "str"), ("count", 2, "num")],
    "writev": [("fd", 0, "num"), ("count", -1, "num")],
    "read": [("fd", 0, "num"), ("count", 2, "num")],
    "pread": [("fd", 0, "num"), ("count", 2, "num"), ("offset", 3, "num")],
    "lseek": [("fildes", 0, "num"), ("offset", 1, "num"), ("whence_str", 2, "str"),
              ("argstr", None, "args")],
    "close": [("fd", 0, "num"), ("argstr", None, "args")],
    "dup": [("oldfd", 0, "num"), ("argstr", None, "args")],
    "dup3": [("oldfd", 0, "num"), ("newfd", 1, "num"), ("flags_str", 2, "flags"),
             ("argstr", None, "args")],
    "fcntl": [("fd", 0, "num"), ("cmd", 1, "fcntl"), ("cmd_str", 1, "str")],
    "madvise": [("start", 0, "num"), ("length", 1, "num"), ("advice_str", 2, "str"),
                ("argstr", None, "args")],
    "getrandom": [("count", 1, "num"), ("flags_str", 2, "flags")],
    "access": [("pathname", 0, "str"), ("mode_str", 1, "flags"), ("argstr", None, "args")],
    "faccessat": [("dirfd_str", 0, "str"), ("pathname", 1, "str"), ("mode_str", 2, "flags"),
                  ("argstr", None, "args")],
    "unlinkat": [("dfd_str", 0, "str"), ("pathname_str", 1, "str"), ("flag_str", 2, "flags")],
    "mkdirat": [("dirfd_str", 0, "str"), ("pathname", 1, "str"), ("mode", 2, "num"),
                ("argstr", None, "args")],
    "umask": [("mask", 0, "num"), ("argstr", None, "args")],
    "mmap2": [("start", 0, "num"), ("length", 1, "num"), ("prot_str", 2, "flags"),
              ("flags_str", 3, "flags"), ("fd", 4, "num"), ("pgoffset", 5, "num")],
    "mprotect": [("addr", 0, "num"), ("len", 1, "num"), ("prot_str", 2, "flags")],
    "munmap": [("start", 0, "num"), ("length", 1, "num")],
    "futex": [("futex_uaddr", 0, "num"), ("op", 1, "futex"), ("val", 2, "num"),
              ("argstr", None, "args")],
    "socketpair": [("family_str", 0, "flags"), ("type_str", 1, "flags"), ("protocol", 2, "num")],
    "sendto": [("s", 0, "num"), ("buf", 1, "str"), ("len", 2, "num"), ("flags_str", 3, "flags"),
               ("to_uaddr", 4, "num"), ("tolen", 5, "num")],
    "recvfrom": [("s", 0, "num"), ("len", 2, "num"), ("flags_str", 3, "flags"),
                 ("addr_uaddr", 4, "num"), ("addrlen_uaddr", 5, "num")],
    "poll": [("nfds", 1, "num"), ("timeout", 2, "num")],
    "connect": [("sockfd", 0, "num"), ("uaddr_af", 1, "sa:sa_family"),
                ("uaddr_ip", 1, "sa:sin_addr"), ("uaddr_ip_port", 1, "sa:sin_port"),
                ("addrlen", 2, "num")],
    "socket": [("family_str", 0, "flags"), ("type_str", 1, "flags")],
    # (argstr not compared: SystemTap prints a NULL pointer 0x0 and flags 0 "0x0", strace
    # NULL and 0.)
    "nanosleep": [("req_str", 0, "str"), ("rem_uaddr", 1, "num")],
    "clock_nanosleep": [("clk_id_str", 0, "str"), ("flags", 1, "num"), ("req_str", 2, "str"),
                        ("rem_uaddr", 3, "num")],
    "prlimit64": [("pid", 0, "num"), ("resource_str", 1, "str"), ("new_rlim_uaddr", 2, "num")],
    "clone": [("clone_flags_str", "flags", "kv"), ("child_tid_uaddr", "child_tidptr", "kvnum")],
    "kill": [("pid", 0, "num"), ("sig_name", 1, "str"), ("argstr", None, "args")],
    "wait4": [("pid", 0, "num"), ("options_str", 2, "flags"), ("rusage_uaddr", 3, "num")],
    "exit_group": [("status", 0, "num"), ("argstr", None, "args")],
}


def split_args(s):
    out, depth, cur, q, esc = [], 0, "", False, False
    for ch in s:
        if q:
            cur += ch
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                q = False
            continue
        if ch == '"':
            q = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def strace_calls(d):
    calls = {}
    for path in glob.glob(os.path.join(d, "st.*")):
        tid = int(path.rsplit(".", 1)[1])
        for line in open(path, errors="replace"):
            m = re.match(r"^(\w+)\((.*)\)\s+= .*$", line.rstrip("\n")) or \
                re.match(r"^(\w+)\((.*)\)\s+= \?$", line.rstrip("\n"))
            if not m:
                m = re.match(r"^(exit_group)\((.*)\)\s*=\s*\?", line)
            if not m:
                continue
            calls.setdefault((tid, m.group(1)), []).append(m.group(2))
    return calls


def timespecs(text):
    """strace's {tv_sec=S, tv_nsec=N} as SystemTap's [S.NNNNNNNNN]; NULL kept."""
    return re.sub(r"\{tv_sec=(-?\d+), tv_nsec=(\d+)\}",
                  lambda m: "[%s.%09d]" % (m.group(1), int(m.group(2))), text)


def compare(kind, got, args, idx, argtext):
    args = [timespecs(a) for a in args]
    argtext = timespecs(argtext)
    if kind == "args":
        return got == argtext, argtext
    if kind in ("kv", "kvnum"):
        kv = dict(a.split("=", 1) for a in args if "=" in a)
        want = kv.get(idx, "")
        if kind == "kv":
            return flagset(got) == flagset(want), want
        return num(got) == num(want), want
    if kind == "num?" and idx >= len(args):
        return True, ""
    if idx >= len(args) and idx != -1:
        return False, "<no argument %d>" % idx
    want = args[idx]
    if kind == "str":
        return got == want.replace("AF_", "PF_"), want
    if kind in ("num", "num?"):
        return num(got) == num(want), want
    if kind.startswith("sa:"):  # {sa_family=AF_INET, sin_port=htons(9), sin_addr=inet_addr("127.0.0.1")}
        f = dict(re.findall(r"(\w+)=([^,}]+)", want))
        w = f.get(kind[3:], "")
        w = re.sub(r'^(?:htons|inet_addr)\("?([^")]*)"?\)$', r"\1", w)
        return got == w, want
    if kind == "flags":
        return flagset(got) == flagset(want), want
    if kind == "futex":
        return num(got) == FUTEX_OPS.get(want, -1), want
    if kind == "fcntl":
        return num(got) == FCNTL.get(want, -1), want
    raise ValueError(kind)


def main():
    stap_out, stdir = sys.argv[1], sys.argv[2]
    mine = {}
    for line in open(stap_out, errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 3:
            continue
        if parts[2].startswith("+"):  # more variables of the call just printed
            k, v = parts[2][1:].split("=", 1)
            mine[(int(parts[1]), parts[0])][-1][k] = v
            continue
        vals = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
        mine.setdefault((int(parts[1]), parts[0]), []).append(vals)
    theirs = strace_calls(stdir)
    bad, checked, seen = [], 0, set()
    for (tid, sc), calls in sorted(mine.items()):
        st = theirs.get((tid, STRACE_NAME.get(sc, sc)), [])
        if len(st) != len(calls):
            bad.append("%s in tid %d: ukstap saw %d calls, strace %d" % (sc, tid, len(calls), len(st)))
            continue
        for vals, argtext in zip(calls, st):
            args = split_args(argtext)
            for var, idx, kind in RULES[sc]:
                ok, want = compare(kind, vals.get(var, "<unset>"), args, idx, argtext)
                checked += 1
                if not ok:
                    bad.append("%s(%s) in tid %d: %s=%s, strace: %s" %
                               (sc, argtext, tid, var, vals.get(var, "<unset>"), want))
            seen.add(sc)
    missing = sorted(set(RULES) - seen)
    if missing:
        bad.append("no call seen of: " + " ".join(missing))
    for b in bad:
        print(b)
    if bad:
        return 1
    print("OK: %d values of %d syscalls equal strace's" % (checked, len(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

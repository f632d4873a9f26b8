"""The Python half of bench/perf_agreement.sh (which says what it measures and sets up WORK):
ukstap's user stacks against perf record --call-graph dwarf on real programs. Stack lines are
read, and return addresses checked, by bench/lib/stap_stack.py."""
import os, re, shlex, shutil, statistics, subprocess, sys, time, collections

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (bench/ is distributed whole)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from stap_stack import follows_call, parse_frame, parse_perf_frame

UKSTAP = os.environ["UKSTAP"]; WORK = os.environ["WORK"]
PY = os.path.realpath("/usr/bin/python3")          # the real ELF, not a pyenv shim
# name, binary for -d, ukstap probe, perf tracepoint, command
PROGRAMS = [
    ("ls", "/bin/ls", "syscall.getdents", "syscalls:sys_enter_getdents64",
     "/bin/ls -R /usr/share/doc"),
    ("sort", "/usr/bin/sort", "syscall.write", "syscalls:sys_enter_write",
     "/usr/bin/sort -o /dev/null %s/sort_input.txt" % WORK),
    ("python3", PY, "syscall.getdents", "syscalls:sys_enter_getdents64",
     PY + " -c 'import os; [os.listdir(\"/usr/lib\") for _ in range(50)]'"),
    ("bash", "/bin/bash", "syscall.dup2", "syscalls:sys_enter_dup2",
     "/bin/bash -c 'for i in $(seq 200); do echo $i > /dev/null; done'"),
]
RUNS = 3

def run_timed(argv, **kw):
    for _ in range(20):                      # ukstap may be being rebuilt: wait for it
        if shutil.which(argv[0]): break
        time.sleep(3)
    t = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    return time.monotonic() - t, p

# ---------------------------------------------------------------- ELF helpers (readelf)
_elf = {}
def elf(path):
    """PT_LOADs, entry, symbols (name -> [(addr,size,type)], addr -> names) incl. the
    build-id debug file (libc6-dbg) that both tools also read."""
    if path in _elf: return _elf[path]
    info = {"loads": [], "entry": None, "byname": collections.defaultdict(list),
            "byaddr": collections.defaultdict(set), "funcs": []}
    _elf[path] = info
    if not os.path.isfile(path): return info
    out = subprocess.run(["readelf", "-hlnW", path], capture_output=True, text=True).stdout
    bid = None
    for l in out.splitlines():
        f = l.split()
        if l.strip().startswith("Entry point address:"): info["entry"] = int(f[-1], 16)
        if f and f[0] == "LOAD":
            info["loads"].append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # off, vaddr, filesz
        if "Build ID:" in l: bid = f[-1]
    files = [path]
    if bid:
        d = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
        if os.path.isfile(d): files.append(d)
    for fn in files:
        out = subprocess.run(["readelf", "-sW", "--dyn-syms", fn], capture_output=True, text=True).stdout
        for l in out.splitlines():
            f = l.split()
            if len(f) < 8 or not f[0].endswith(":") or f[3] not in ("FUNC", "IFUNC", "NOTYPE"): continue
            if f[6] in ("UND", "ABS"): continue
            name = strip_ver(f[7]); addr = int(f[1], 16)
            size = int(f[2], 0) if f[2].startswith("0x") else int(f[2])
            if not name or addr == 0 or name.startswith("$") or name.startswith(".L"): continue
            if (addr, size, f[3]) not in info["byname"][name]:
                info["byname"][name].append((addr, size, f[3]))
            info["byaddr"][addr].add(name)
    # A stripped program keeps no symbol for its entry point; by the ELF convention the code
    # there is _start (ukstap names it so; perf says [unknown]).
    if info["entry"] and not info["byaddr"].get(info["entry"]):
        info["byname"]["_start"].append((info["entry"], 0, "FUNC"))
        info["byaddr"][info["entry"]].add("_start")
    return info

def strip_ver(n): return n.split("@")[0]

def canon(path, name):
    """One name per address: aliases (__GI___getdents64 / __getdents64, __libc_start_main /
    __libc_start_main_impl) fold to the same string."""
    n = strip_ver(name)
    e = elf(path)
    c = e["byname"].get(n)
    if not c: return re.sub(r"^__GI_", "", n)
    names = e["byaddr"][c[0][0]]
    return min(names, key=lambda s: (s.startswith("__GI_") or s.startswith("__"), len(s), s))

def sym_addr(path, name, size=None):
    c = elf(path)["byname"].get(strip_ver(name))
    if not c: return None
    if size is not None:
        for a, s, t in c:
            if s == size: return a
    return c[0][0]

# ---------------------------------------------------------------- parsing
def parse_ukstap(fn):
    stacks, cur = [], None
    for l in open(fn, errors="replace"):
        l = l.rstrip("\n")
        if not l.startswith(" "):
            if cur is not None: stacks.append(cur)
            cur = [] if l.startswith("syscall.") else None
            continue
        if cur is None: continue
        f = parse_frame(l)
        if not f or not f.name:
            cur.append({"mod": "?", "name": "?", "addr": None, "raw": l.strip(), "inexact": False}); continue
        sym, size, mod, inex = f.name, f.size, f.module, f.inexact
        off = f.offset or 0
        if sym.startswith("sub_"):
            name, addr = "?", int(sym[4:], 16) + off
        elif sym.startswith("0x") or sym == "?":
            name, addr = "?", None
        else:
            name = canon(mod, sym)
            a = sym_addr(mod, sym, size)
            addr = a + off if a is not None else None
        if cur and off == 0 and addr is not None and name != "?":
            # A return address at the very start of a symbol (the call before it was the
            # previous function's last instruction): ukstap names the address itself, as
            # SystemTap does; perf names address - 1. Compare by perf's convention.
            name = canon(mod, name_at(mod, addr - 1) or name)
        cur.append({"mod": mod, "name": name, "addr": addr, "raw": l.strip(), "inexact": bool(inex)})
    if cur is not None: stacks.append(cur)
    return stacks

def name_at(path, vaddr):
    best = None
    for a, names in elf(path)["byaddr"].items():
        if a <= vaddr and (best is None or a > best[0]): best = (a, names)
    return sorted(best[1])[0] if best else None

def parse_perf(fn):
    stacks, cur = [], None
    for l in open(fn, errors="replace"):
        l = l.rstrip("\n")
        if not l.strip():
            if cur is not None: stacks.append(cur); cur = None
            continue
        if not l.startswith("\t") and not l.startswith(" " * 8):
            if cur is not None: stacks.append(cur)
            cur = []; continue
        f = parse_perf_frame(l)
        if cur is None or not f or f.dso is None: continue
        cur.append({"mod": f.dso, "sym": f.sym, "ip": f.ip, "off": f.offset,
                    "raw": l.strip(), "inexact": False})
    if cur is not None: stacks.append(cur)
    # perf prints dso-relative ips and, for callers, return address - 1. Learn each module's
    # ip -> vaddr delta from its named frames, apply it to the [unknown] ones.
    deltas = collections.defaultdict(collections.Counter)
    for s in stacks:
        for f in s:
            if f["sym"] != "[unknown]" and f["off"] is not None:
                a = sym_addr(f["mod"], f["sym"])
                if a is not None: deltas[f["mod"]][a + f["off"] - f["ip"]] += 1
    for s in stacks:
        for i, f in enumerate(s):
            adj = 0 if i == 0 else 1
            if f["sym"] == "[unknown]":
                f["name"] = "?"
                d = deltas[f["mod"]].most_common(1)
                if d: f["addr"] = f["ip"] + d[0][0] + adj
                else:   # file offset -> vaddr
                    f["addr"] = None
                    for off, va, fsz in elf(f["mod"])["loads"]:
                        if off <= f["ip"] < off + fsz: f["addr"] = f["ip"] - off + va + adj
                e = elf(f["mod"])["entry"]
                if f["addr"] is not None and e and e <= f["addr"] < e + 0x40 and \
                        "_start" in elf(f["mod"])["byaddr"].get(e, ()):
                    f["name"] = "_start"   # the same convention as above
            else:
                f["name"] = canon(f["mod"], f["sym"])
                a = sym_addr(f["mod"], f["sym"])
                f["addr"] = a + f["off"] + adj if (a is not None and f["off"] is not None) else None
    return stacks

def norm(stack):
    return tuple((os.path.basename(f["mod"]), f["name"]) for f in stack)

START_NAMES = {"_start", "_dl_start_user", "start_thread", "clone3", "__clone3", "clone", "__clone",
               "__GI___clone3", "__GI___clone"}
def ends_at_start(stack, main_bin):
    if not stack: return False
    f = stack[-1]
    if f["name"] in START_NAMES: return True
    e = elf(main_bin)["entry"]
    return (f["addr"] is not None and e is not None and os.path.realpath(f["mod"]) == os.path.realpath(main_bin)
            and e <= f["addr"] < e + 0x40)

def related(a, b):     # one is a leaf-side prefix of the other (a tool stopped earlier)
    n = min(len(a), len(b))
    return n > 0 and a[:n] == b[:n]

def fmt_stack(stack, mark=None):
    return "\n".join(("  >> " if i == mark else "     ") + f["raw"] for i, f in enumerate(stack))

# ---------------------------------------------------------------- runs
rows, notes = [], []
for name, binary, probe, tp, cmd in PROGRAMS:
    argv = shlex.split(cmd)          # no /bin/sh in between: dash forks, and perf then
                                     # fails to unwind the child (one frame per stack)
    bare = statistics.median(run_timed(argv)[0] for _ in range(RUNS))
    ukout = os.path.join(WORK, "uk_%s.txt" % name)
    script = "probe %s { if (pid() == target() || ppid() == target()) { log(pn()); print_ubacktrace() } }" % probe
    ukargv = [UKSTAP, "-o", ukout, "-d", binary, "--ldd", "-e", script, "-c", cmd]
    t_uk, uk_err, good = [], "", None
    for i in range(RUNS + 3):                # extra tries only if a run failed (rebuild)
        if i >= RUNS and good: break
        t, p = run_timed(ukargv)
        ok = p.returncode == 0 and os.path.exists(ukout) and any(
            l.startswith("syscall.") for l in open(ukout, errors="replace"))
        if not ok:
            uk_err = "run %d: rc %d, no events: %s" % (i, p.returncode, p.stderr.decode(errors="replace")[-200:])
            continue
        t_uk.append(t)
        if good is None: good = ukout + ".good"; os.replace(ukout, good)
    if good: os.replace(good, ukout)
    if not t_uk: t_uk = [float("nan")]
    # ukstap's fixed cost (compile cache warm, BPF load, symbol/CFI tables, tear-down):
    # the same script around /bin/true
    t_uk0 = statistics.median(run_timed(ukargv[:2] + [ukout + ".true"] + ukargv[3:-1] + ["/bin/true"])[0]
                              for _ in range(RUNS))
    pdata = os.path.join(WORK, "perf_%s.data" % name)
    pargv = ["perf", "record", "-e", tp, "--call-graph", "dwarf,65528", "-m", "16M", "--no-bpf-event",
             "-o", pdata, "--"] + argv
    t_pf, pf_err = [], ""
    for _ in range(RUNS):
        t, p = run_timed(pargv); t_pf.append(t); pf_err = p.stderr.decode(errors="replace")
    pscript = os.path.join(WORK, "perf_%s.txt" % name)
    t0 = time.monotonic()
    with open(pscript, "w") as fo:
        subprocess.run(["perf", "script", "--no-inline", "-i", pdata, "-F", "comm,pid,tid,event,ip,sym,symoff,dso"],
                       stdout=fo, stderr=subprocess.DEVNULL)
    t_script = time.monotonic() - t0

    us, ps = parse_ukstap(ukout), parse_perf(pscript)
    # perf follows the command's children too; our ukstap filter takes the command and its
    # direct children (bash's $(seq) subshell), so nothing to drop on either side.
    uset = collections.Counter(norm(s) for s in us); pset = collections.Counter(norm(s) for s in ps)
    exact = [s for s in uset if s in pset]
    rel = [s for s in uset if s not in pset and any(related(s, t) for t in pset)]
    ev_exact = sum(uset[s] for s in exact)
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
    lost = re.findall(r"lost ([0-9.]+)%", pf_err)
    m = re.search(r"Processed (\d+) samples and lost", pf_err)
    rows.append({
        "prog": name, "uk_ev": len(us), "pf_ev": len(ps),
        "pf_lost": ("%s %%" % lost[-1]) if lost else "0 %",
        "uk_distinct": len(uset), "pf_distinct": len(pset),
        "exact": 100.0 * len(exact) / max(1, len(uset)),
        "rel": 100.0 * len(rel) / max(1, len(uset)),
        "ev_exact": 100.0 * ev_exact / max(1, len(us)),
        "pf_in_uk": 100.0 * sum(1 for s in pset if s in uset) / max(1, len(pset)),
        "uk_depth": mean([len(s) for s in us]), "pf_depth": mean([len(s) for s in ps]),
        "uk_start": 100.0 * sum(ends_at_start(s, binary) for s in us) / max(1, len(us)),
        "pf_start": 100.0 * sum(ends_at_start(s, binary) for s in ps) / max(1, len(ps)),
        "uk_inexact": sum(f["inexact"] for s in us for f in s),
        "bare": bare, "t_uk": statistics.median(t_uk), "t_pf": statistics.median(t_pf), "t_uk0": t_uk0,
        "t_script": t_script,
        "bytes_per": os.path.getsize(pdata) / max(1, len(ps)),
    })

    # ---- consistency checks
    # 1. every ukstap caller frame must follow a call instruction in its file.
    bad_call, checked = [], 0
    seen = set()
    for s in us:
        for i, f in enumerate(s[1:], 1):
            if f["addr"] is None or f["mod"] == "?" or (f["mod"], f["addr"]) in seen: continue
            seen.add((f["mod"], f["addr"])); checked += 1
            if follows_call(f["mod"], f["addr"]) is False: bad_call.append((s, i))
    # same check on perf's frames, to calibrate the decoder
    pchecked, pbad = 0, 0; pseen = set()
    for s in ps:
        for i, f in enumerate(s[1:], 1):
            if f["addr"] is None or (f["mod"], f["addr"]) in pseen: continue
            pseen.add((f["mod"], f["addr"])); pchecked += 1
            if follows_call(f["mod"], f["addr"]) is False: pbad += 1
    notes.append("### %s: caller frames after a call instruction: ukstap %d/%d distinct return "
                 "addresses, perf %d/%d" % (name, checked - len(bad_call), checked, pchecked - pbad, pchecked))
    for s, i in bad_call[:3]:
        notes.append("ukstap frame %d does not follow a call:\n%s" % (i, fmt_stack(s, i)))
    # 2. same (module, return address) named differently by the two tools.
    un = collections.defaultdict(set); pn_ = collections.defaultdict(set); ex_u = {}; ex_p = {}
    for s in us:
        for i, f in enumerate(s):
            if f["addr"] is not None:
                k = (os.path.realpath(f["mod"]), f["addr"], i == 0); un[k].add(f["name"]); ex_u.setdefault((k, f["name"]), (s, i))
    for s in ps:
        for i, f in enumerate(s):
            if f["addr"] is not None:
                k = (os.path.realpath(f["mod"]), f["addr"], i == 0); pn_[k].add(f["name"]); ex_p.setdefault((k, f["name"]), (s, i))
    common = [k for k in un if k in pn_]
    diff = [k for k in common if un[k] != pn_[k] and "?" not in un[k] | pn_[k]]
    unnamed = [k for k in common if un[k] != pn_[k] and "?" in un[k] | pn_[k]]
    notes.append("same return address in both tools: %d; named differently: %d; named by one "
                 "tool only: %d" % (len(common), len(diff), len(unnamed)))
    for k in diff[:5]:
        us_, ui = ex_u[(k, sorted(un[k])[0])]; ps_, pi = ex_p[(k, sorted(pn_[k])[0])]
        notes.append("%s+0x%x: ukstap %s, perf %s\n ukstap:\n%s\n perf:\n%s" % (
            k[0], k[1], sorted(un[k]), sorted(pn_[k]), fmt_stack(us_, ui), fmt_stack(ps_, pi)))
    for k in unnamed[:3]:
        notes.append("%s+0x%x: ukstap %s, perf %s" % (k[0], k[1], sorted(un[k]), sorted(pn_[k])))
    # 3. ukstap stacks with neither an exact nor a prefix match: first frame that differs
    #    from the closest perf stack.
    other = [s for s in uset if s not in pset and s not in rel]
    for s in sorted(other, key=lambda s: -uset[s])[:3]:
        best = max(pset, key=lambda t: next((i for i in range(min(len(s), len(t))) if s[i] != t[i]), min(len(s), len(t))), default=())
        d = next((i for i in range(min(len(s), len(best))) if s[i] != best[i]), min(len(s), len(best)))
        notes.append("ukstap stack seen %dx, not in perf's set; differs from the closest perf "
                     "stack at frame %d: ukstap %s vs perf %s" % (uset[s], d, s[d] if d < len(s) else "-",
                                                                  best[d] if d < len(best) else "(end)"))
    if uk_err.strip():
        notes.append("ukstap stderr: " + uk_err.strip().splitlines()[-1][:200])

hdr = ("| program | events ukstap / perf (perf lost) | distinct stacks ukstap / perf | ukstap stacks in perf's set "
       "(distinct / events) | prefix relation only | perf stacks in ukstap's set | mean depth ukstap / perf | "
       "end at _start or thread start ukstap / perf | inexact frames (ukstap) |")
print(hdr); print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %(prog)s | %(uk_ev)d / %(pf_ev)d (%(pf_lost)s) | %(uk_distinct)d / %(pf_distinct)d | "
          "%(exact).0f %% / %(ev_exact).0f %% | %(rel).0f %% | %(pf_in_uk).0f %% | %(uk_depth).1f / %(pf_depth).1f | "
          "%(uk_start).0f %% / %(pf_start).0f %% | %(uk_inexact)d |" % r)
print()
print("| program | bare | ukstap (whole run) | ukstap, same script, -c /bin/true | perf record | perf script | perf.data bytes / sample |")
print("|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print("| %s | %.3f s | %.3f s | %.3f s | %.3f s | %.3f s | %s |" % (r["prog"], r["bare"], r["t_uk"], r["t_uk0"], r["t_pf"],
          r["t_script"], format(int(r["bytes_per"]), ",")))
print("(wall clock, median of %d runs; perf script once, --no-inline)" % RUNS)
print()
print("\n".join(notes))

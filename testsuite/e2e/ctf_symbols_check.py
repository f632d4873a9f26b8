#!/usr/bin/env python3
"""Checks of run_ctf_symbols.sh: a --ctf trace's user frames as `babeltrace2 --debug-info` resolves
them (the trace's lttng_ust_statedump events + ukstap:callstack_user_frame events), against
binutils' nm (independent of ukstap and of babeltrace2) and against the names ukstap itself wrote
into the same trace.

usage: ctf_symbols_check.py DEBUG_INFO_TEXT PROG PLUGIN GONE BLOB

DEBUG_INFO_TEXT: `babeltrace2 --debug-info --debug-info-full-path TRACE` output.
Exit 0 when every check passes; else one line per failure on stdout.
"""
import re
import subprocess
import sys

text_path, prog, plugin, gone, blob = sys.argv[1:6]
fails = []


def fail(msg):
    fails.append(msg)


EVENT = re.compile(r'^\[[^\]]*\] \([^)]*\) \S+ (?P<name>[^:]+:[^:]+|\S+): (?P<rest>.*)$')
DEBUG = re.compile(r'debug_info = \{ bin = "(?P<bin>[^"]*)", func = "(?P<func>[^"]*)", src = "(?P<src>[^"]*)" \}')
VPID = re.compile(r'vpid = (\d+)')


def field(rest, name):
    m = re.search(r'\b' + name + r' = (0x[0-9A-Fa-f]+|\d+|"[^"]*")', rest)
    if not m:
        return None
    v = m.group(1)
    return v.strip('"') if v.startswith('"') else int(v, 0)


events = []
for line in open(text_path, encoding='utf-8', errors='replace'):
    m = EVENT.match(line.rstrip('\n'))
    if not m:
        continue
    d = DEBUG.search(m.group('rest'))
    events.append({'name': m.group('name'), 'rest': m.group('rest'),
                   'bin': d.group('bin') if d else None, 'func': d.group('func') if d else None})

# nm -S: name -> (value, size) of each defined function symbol (the truth for names and offsets)
def nm_syms(path):
    out = subprocess.run(['nm', '-S', '--defined-only', path], capture_output=True, text=True).stdout
    syms = {}
    for l in out.splitlines():
        p = l.split()
        if len(p) == 4 and p[2] in 'tTwW':
            syms[p[3]] = (int(p[0], 16), int(p[1], 16))
    return syms


truth = {prog: nm_syms(prog), plugin: nm_syms(plugin)}

# The stacks: each stack event (callstack_user: its addresses; callstack_user_symbols: ukstap's
# names) and, for each of its frames, the process's ukstap:callstack_user_frame event with that
# frame's ip (ctf-writer/statedump.h: one per distinct address of a process, after the first
# stack event that has it, sent again after a statedump restart): the leaf's ip is its address,
# a caller's the address - 1 (the call; the address itself when ukstap's name is at +0x0).
SYMS = re.compile(r'callstack_user_symbols = \[ (.*?) \] \}?$')
ADDRS = re.compile(r'callstack_user = \[ (.*?) \]')
frames_of = {}  # vpid -> {ip: frame event}
stacks, pending = [], []


def settle():
    """The stacks seen since the last non-frame event: their frame events are in by now."""
    for st in pending:
        table = frames_of.get(st['vpid'], {})
        for depth, addr in enumerate(st['addrs']):
            name = st['ukstap'][depth] if depth < len(st['ukstap']) else ''
            ip = addr if depth == 0 or re.search(r'\+0x0/', name) else addr - 1
            f = table.get(ip)
            if f is None:
                fail(f'no frame event for depth {depth} ({addr:#x}) of a stack of {st["vpid"]}')
                break
            st['frames'].append(f)
        stacks.append(st)
    pending.clear()


for e in events:
    vpid = field(e['rest'], 'vpid')
    if e['name'] == 'ukstap:callstack_user_frame':
        ip = field(e['rest'], 'ip')
        if ip in frames_of.setdefault(vpid, {}):
            fail(f'a second frame event for {ip:#x} in {vpid} without a statedump restart')
        frames_of[vpid][ip] = e
        continue
    settle()
    if e['name'] == 'lttng_ust_statedump:start':
        frames_of.pop(vpid, None)  # the readers forget the process's files: frames come again
    elif 'callstack_user_symbols = ' in e['rest']:
        m = SYMS.search(e['rest'])
        names = re.findall(r'\[\d+\] = "([^"]*)"', m.group(1)) if m else []
        a = ADDRS.search(e['rest'])
        addrs = [int(x, 16) for x in re.findall(r'\[\d+\] = (0x[0-9A-Fa-f]+)', a.group(1))] if a else []
        pending.append({'vpid': vpid, 'addrs': addrs, 'ukstap': names, 'frames': []})
settle()
if not any(s['frames'] for s in stacks):
    fail('no ukstap:callstack_user_frame event in the trace')

# The test program's and the library's own functions (built from our sources, with DWARF).
OURS = {'leaf_fn', 'mid_fn', 'top_fn', 'main', 'plugin_leaf', 'plugin_fn'}
resolved = 0
for s in stacks:
    if len(s['ukstap']) != len(s['frames']):
        fail(f"{len(s['frames'])} frame events for {len(s['ukstap'])} frames ukstap named")
    for depth, f in enumerate(s['frames']):
        b = re.match(r'^(.*)\+(0x[0-9a-f]+)$', f['bin'] or '')
        if not b or b.group(1) not in truth:
            continue
        path, off = b.group(1), int(b.group(2), 16)
        fm = re.match(r'^(.*)\+(0x[0-9a-f]+)$', f['func'] or '')
        if not fm:
            # babeltrace2 looks only at DWARF when a file has some: crt1.o's _start has none.
            near = [n for n, (v, z) in truth[path].items() if v <= off < v + max(z, 1)]
            if set(near) & OURS:
                fail(f'{path}+{off:#x} ({near}): no function name from --debug-info')
            continue
        name, foff = fm.group(1), int(fm.group(2), 16)
        # 1. nm agrees: the frame's file offset (bin = PATH+0xOFF, ip - baddr) is the function's
        # nm value + the offset in func, inside the function.
        if name not in truth[path]:
            fail(f'{path}+{off:#x}: {name} is not a function nm knows')
            continue
        value, size = truth[path][name]
        if value + foff != off or not (value <= off < value + max(size, 1)):
            fail(f'{path}+{off:#x}: {name}+{foff:#x}, but nm has {name} at {value:#x} size {size:#x}')
        # 2. the name ukstap wrote for the same frame of the same event
        if depth < len(s['ukstap']) and not s['ukstap'][depth].startswith(name + '+'):
            fail(f'depth {depth}: --debug-info says {name}, ukstap wrote {s["ukstap"][depth]!r}')
        resolved += 1


def chain(s):
    return [re.sub(r'\+0x[0-9a-f]+$', '', f['func'] or '') for f in s['frames']]


chains = [chain(s) for s in stacks]
# 2. The program's own frames, leaf first, and the dlopen'd library's.
if not any(c[:4] == ['leaf_fn', 'mid_fn', 'top_fn', 'main'] for c in chains):
    fail('no stack leaf_fn, mid_fn, top_fn, main; stacks: ' + repr(chains))
if not any(c[:3] == ['plugin_leaf', 'plugin_fn', 'main'] for c in chains):
    fail('no stack plugin_leaf, plugin_fn, main (the dlopen\'d library); stacks: ' + repr(chains))

# 3. The vanished and the non-ELF file: no statedump event names them; their frames stay
# unresolved (empty func), and the other frames of those stacks still resolve.
for e in events:
    if e['name'].startswith('lttng_ust_statedump:') and (gone in e['rest'] or blob in e['rest']):
        fail('statedump event for a file that vanished or is not ELF: ' + e['rest'][:160])
leaves = [s['frames'][0] for s in stacks if s['frames']]
if not any(f['func'] == '' and (f['bin'] or '') == '' for f in leaves):
    fail('no unresolved leaf frame (the vanished library, the raw code blob)')

print(f'{len(stacks)} stacks, {resolved} frames checked against nm and ukstap\'s names')
for f in fails:
    print('FAIL:', f)
sys.exit(1 if fails else 0)

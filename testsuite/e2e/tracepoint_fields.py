#!/usr/bin/env python3
"""The $variables -L lists for a syscall tracepoint, read from its format file in tracefs: each
field but the common ones and __syscall_nr, a pointer keeping its C type with `const` after what
it qualifies (`const char *` -> `char const*`), any other field as long.

Usage: tracepoint_fields.py TRACEFS EVENT   (prints " $name:type" for each, on one line)
Imported by listings.sh's checks (fields())."""
import re
import sys


def fields(tracefs, event):
    out = []
    for line in open('%s/events/syscalls/%s/format' % (tracefs, event)):
        m = re.match(r'\s*field:(.*?)\s*(\w+);', line)
        if not m or m.group(2).startswith('common_') or m.group(2) == '__syscall_nr':
            continue
        t = m.group(1)
        if '*' in t:
            base, stars = t.split('*', 1)
            base = base.strip()
            if base.startswith('const '):
                base = base[6:] + ' const'
            t = base + '*' + stars.replace(' ', '')
        else:
            t = 'long'
        out.append('$%s:%s' % (m.group(2), t))
    return out


if __name__ == '__main__':
    print(''.join(' ' + f for f in fields(sys.argv[1], sys.argv[2])), end='')

#!/bin/bash
# What a person sees of `ukstap --profile` (issue 17): the summary on the terminal when it
# finishes, the SVG's geometry (it opens on the flame; a long title stays clear of "Search"),
# and pprof's kernel frames named as the kernel names them (no folded-stack "_[k]").
#
# Truths: progs/split_prog.c spends its samples in burn (its design); the SVG read by Python's
# XML parser and laid out by headless Chromium (the boxes of the title and the buttons, as
# rendered); pprof read by `go tool pprof -raw`; kernel function names from /proc/kallsyms.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
S="$T_TMP/split"
t_build split_prog gcc -O2 -fomit-frame-pointer -o "$S" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/split_prog.c" ||
  { t_done; exit; }
# A -c command of 190 characters: the SVG's title.
LONG="$T_TMP/split_under_a_name_long_enough_to_make_the_flame_graph_title_wider_than_the_space_between_its_buttons"
ln -s "$S" "$LONG"
CMD="$LONG 0.6 with arguments that make it longer still"

# --- the summary: on a terminal (script(1) gives ukstap one) ------------------------------------
t "svg run on a terminal" 0 '' '' -- bash -c "
  script -qec \"'$UKSTAP' --profile=499 -o '$T_TMP/p.svg' -c '$CMD'\" /dev/null | tr -d '\r' > '$T_TMP/tty.out'"
t "summary: the samples the SVG holds, its file, burn first with >= 90% (self)" 0 '' '' -- python3 -c "
import re, sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
tty = open('$T_TMP/tty.out').read()
root = [g for g in ET.parse('$T_TMP/p.svg').getroot().iter(ns + 'g') if g.get('data-d') == '0'][0]
n = int(re.match(r'all \((\d+) samples', root.find(ns + 'title').text).group(1))
m = re.search(r'^ukstap: wrote (\d+) samples \(499 Hz, a [0-9.]+ s run\) as an SVG flame graph to (\S+)\n'
              r'ukstap: running in most samples \(self\):\n +([0-9.]+)%  (.*)\n', tty, re.M)
ok = m and int(m.group(1)) == n and m.group(2) == '$T_TMP/p.svg' and float(m.group(3)) >= 90 and \
     m.group(4) == 'burn [split]'
sys.exit(0 if ok else 'summary: %r (SVG: %d samples)' % (tty, n))"
t "no summary when stderr is not a terminal" 0 '' '' -- "$UKSTAP" --profile=99 -o "$T_TMP/q.folded" -c "$S 0.1"

# --- SVG geometry ------------------------------------------------------------------------------
t "svg: the topmost frame is right under the header (y 60), height = viewBox, all frames inside" 0 '' '' -- python3 -c "
import sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
svg = ET.parse('$T_TMP/p.svg').getroot()
h = float(svg.get('height')); vb = [float(v) for v in svg.get('viewBox').split()]
ys = [(float(r.get('y')), float(r.get('height'))) for g in svg.iter(ns + 'g') if g.get('class') == 'f' for r in g.findall(ns + 'rect')]
top, bottom = min(y for y, _ in ys), max(y + hh for y, hh in ys)
ok = vb[3] == h and abs(top - 60) < 0.5 and bottom <= h - 30
sys.exit(0 if ok else 'height %s viewBox %s frames %s..%s' % (h, vb, top, bottom))"
t "svg: the whole -c command is the title's tooltip" 0 '' '' -- python3 -c "
import sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
t = [x for x in ET.parse('$T_TMP/p.svg').getroot().iter(ns + 'text') if x.find(ns + 'title') is not None][0]
sys.exit(0 if t.find(ns + 'title').text.endswith(' -c $CMD') else t.find(ns + 'title').text)"
# Rendered: the SVG inline in a page whose script writes each header text's box into the DOM.
python3 - "$T_TMP/p.svg" "$T_TMP/p.html" <<'PY'
import sys
svg = open(sys.argv[1]).read().split("\n", 1)[1]
open(sys.argv[2], "w").write("<!DOCTYPE html><html><body style='margin:0'>" + svg + """<script>
window.addEventListener('load', function () {
  var out = [];
  document.querySelectorAll('#hdr > text').forEach(function (t) {
    var b = t.getBBox(); out.push((t.id || 'text') + ':' + b.x.toFixed(1) + ':' + (b.x + b.width).toFixed(1));
  });
  document.body.setAttribute('data-boxes', out.join(' '));
});</script></body></html>""")
PY
t "svg (Chromium): the title lies between 'Reset Zoom' and 'Search'" 0 '' '' -- bash -c "
  timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom 'file://$T_TMP/p.html' 2>/dev/null |
    grep -o 'data-boxes=\"[^\"]*\"' | tr -d '\"' | cut -d= -f2 | tr ' ' '\n' > '$T_TMP/boxes'
  title=\$(grep '^text:' '$T_TMP/boxes' | head -n 1); zoom=\$(grep '^unzoom:' '$T_TMP/boxes'); search=\$(grep '^search:' '$T_TMP/boxes')
  awk -v t=\"\$title\" -v z=\"\$zoom\" -v s=\"\$search\" 'BEGIN {split(t, a, \":\"); split(z, b, \":\"); split(s, c, \":\");
    if (a[2] > b[3] + 10 && a[3] < c[2] - 10 && c[2] > 1000) exit 0; print t, z, s; exit 1}'"

# A flame taller than the window (80 frames of recursion): the SVG opens scrolled to its
# bottom, where the root frame is, with the header moved into view (Chromium, 1200x800 window).
X="$T_TMP/cxx_names"
t "svg taller than the window: run" 0 '' '' -- bash -c "
  g++ -O2 -o '$X' '$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/cxx_names.cpp' && '$UKSTAP' --profile=499 -o '$T_TMP/deep.svg' -c '$X 0.4 deep'"
t "svg taller than the window (Chromium): opens on the root frame, header in view" 0 '' '' -- bash -c "
  timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1200,800 --dump-dom 'file://$T_TMP/deep.svg' 2>/dev/null > '$T_TMP/deep.dom'
  python3 -c \"
import re, sys
d = open('$T_TMP/deep.dom').read()
h = float(re.search(r'<svg[^>]* height=.([0-9.]+)', d).group(1))
m = re.search(r'<g id=.hdr. transform=.translate\\(0,([0-9.]+)\\)', d)
root = re.search(r'<g class=.f. data-x=.0. data-w=.[0-9]+. data-d=.0.><title>[^<]*</title><rect x=.[0-9.]+. y=.([0-9.]+).', d)
top = float(m.group(1)) if m else -1
ok = h > 1200 and root and top > 0 and top <= float(root.group(1)) <= top + 700
sys.exit(0 if ok else 'height %s, scrolled to %s, root frame at %s' % (h, top, root and root.group(1)))\""

# --- pprof: kernel frames by mapping, plain names ----------------------------------------------
export HOME="$T_TMP/gohome" GOCACHE="$T_TMP/gohome/cache" GOPATH="$T_TMP/gohome/go"
t "pprof: kernel frames in [kernel.kallsyms] with kallsyms' names, no '_[k]'" 0 '' '' -- bash -c "
  '$UKSTAP' --profile=499 -o '$T_TMP/k.pb.gz' -c 'dd if=/dev/zero of=/dev/null bs=1M count=1500' 2> /dev/null &&
  go tool pprof -raw '$T_TMP/k.pb.gz' > '$T_TMP/raw.txt' 2>&1 && awk '{print \$3}' /proc/kallsyms | sort -u > '$T_TMP/ksyms' &&
  python3 -c \"
import re, sys
raw = open('$T_TMP/raw.txt').read(); ksyms = set(open('$T_TMP/ksyms').read().split())
maps = dict(re.findall(r'^(\\\\d+): \\\\S+ (\\\\S+)', raw.split('Mappings')[1], re.M))
kid = [k for k, v in maps.items() if v == '[kernel.kallsyms]']
locs = re.findall(r'^ +\\\\d+: 0x[0-9a-f]+ M=(\\\\d+) (\\\\S+) ', raw.split('Locations')[1].split('Mappings')[0], re.M)
kern = [f for m, f in locs if m in kid]
bad = [f for m, f in locs if f.endswith('_[k]')] + [f for f in kern if f not in ksyms]
sys.exit(0 if kid and len(kern) >= 3 and 'read_zero' in kern and not bad else 'kernel %s bad %s' % (kern, bad))\" ||
  { head -50 '$T_TMP/raw.txt'; exit 1; }"
t_done

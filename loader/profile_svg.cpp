// The SVG flame graph (profile.h). Layout as in Brendan Gregg's flame graphs: the root ("all")
// at the bottom, each stack frame a box on top of its caller, boxes as wide as their samples,
// siblings sorted by name, so the x axis is not time. Each box is a <g> carrying its position
// in samples (data-x, data-w) and its depth (data-d); the embedded script recomputes geometry
// from those on zoom, so the file needs nothing but a browser.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loader/profile.h"

namespace ukstap::profile {

namespace {

constexpr double kWidth = 1200, kPad = 10, kFrameH = 16, kTop = 60, kBottom = 40, kMinPx = 0.1;
constexpr size_t kTitleChars = 80;  // ~11 px each: 880 px centred, clear of the 100 px buttons

struct Node {
  std::string name;
  bool kernel = false, inexact = false;
  uint64_t total = 0;
  std::map<std::string, std::unique_ptr<Node>> kids;  // by label: sorted siblings
};

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) o += ' ';
        else o += c;
    }
  }
  return o;
}

// Stable colours: warm hues for user code (the flame palette), blue-green for the kernel,
// grey for frames without a name; the shade is a hash of the name, so a function keeps its
// colour across graphs.
std::string colour(const Node& n) {
  uint32_t h = 2166136261u;
  for (char c : n.name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0;
  int r, g, b;
  if (n.name.size() > 1 && n.name.front() == '[' && !n.kernel) {
    r = g = b = 180 + int(40 * v1);
  } else if (n.kernel) {
    r = int(50 + 60 * v1), g = int(160 + 60 * v2), b = int(160 + 60 * v1);
  } else {
    r = 205 + int(50 * v1), g = int(60 + 170 * v2), b = int(40 * v1);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", r, g, b);
  return buf;
}

struct Writer {
  std::string out;
  double scale = 0;  // px per sample
  uint64_t total = 0;
  int max_depth = 0;
  size_t dropped = 0;
  double height = 0;

  // The depth of the drawn frames only: a rare deep stack (a 128-frame recursion in one sample
  // of a system-wide profile) is narrower than kMinPx and not drawn, and counting it made a
  // graph 2,000 px taller than its flame, opening on empty space.
  void depth_of(const Node& n, int d) {
    if (n.total * scale < kMinPx) return;
    max_depth = std::max(max_depth, d);
    for (auto& [k, c] : n.kids) depth_of(*c, d + 1);
  }
  void frame(const Node& n, uint64_t x, int d) {
    double w = n.total * scale;
    if (w < kMinPx) {
      dropped++;
      return;
    }
    double px = kPad + x * scale, py = height - kBottom - (d + 1) * kFrameH;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f", total ? 100.0 * n.total / total : 0.0);
    std::string name = xml_escape(n.name);
    char geo[256];
    std::snprintf(geo, sizeof geo,
                  "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%d\">",
                  (unsigned long long)x, (unsigned long long)n.total, d);
    out += geo;
    out += "<title>" + name + " (" + std::to_string(n.total) + " sample" +
           (n.total == 1 ? "" : "s") + ", " + pct + "%)" + (n.inexact ? " inexact" : "") +
           "</title>";
    std::snprintf(geo, sizeof geo,
                  "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>",
                  px, py, w, kFrameH - 1, colour(n).c_str());
    out += geo;
    std::snprintf(geo, sizeof geo, "<text x=\"%.2f\" y=\"%.1f\">", px + 3, py + kFrameH - 5);
    out += geo;
    out += xml_escape(fit(n.name, w)) + "</text></g>\n";
    uint64_t cx = x;
    for (auto& [k, c] : n.kids) {
      frame(*c, cx, d + 1);
      cx += c->total;
    }
  }
  // The name cut to the box (about 7 px per character at 12 px), ".." when cut.
  static std::string fit(const std::string& s, double w) {
    size_t chars = w > 6 ? static_cast<size_t>((w - 6) / 7) : 0;
    if (chars < 3) return "";
    if (s.size() <= chars) return s;
    return s.substr(0, chars - 2) + "..";
  }
};

const char kScript[] = R"JS(
var W = 1200, PAD = 10, fullW = W - 2 * PAD, zoomed = null;
function frames() { return document.querySelectorAll('g.f'); }
function num(g, k) { return +g.getAttribute('data-' + k); }
function fitText(g, w) {
  var t = g.querySelector('text'), name = g.querySelector('title').textContent.replace(/ \(\d+ samples?, .*$/, '');
  var chars = w > 6 ? Math.floor((w - 6) / 7) : 0;
  t.textContent = chars < 3 ? '' : (name.length <= chars ? name : name.substring(0, chars - 2) + '..');
}
function place(g, x, w) {
  var r = g.querySelector('rect'), t = g.querySelector('text');
  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));
  t.setAttribute('x', (x + 3).toFixed(2)); fitText(g, w);
  g.style.display = '';
}
function zoom(z) {
  var zx = num(z, 'x'), zw = num(z, 'w'), zd = num(z, 'd'), s = fullW / zw;
  zoomed = z;
  frames().forEach(function (g) {
    var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');
    if (d < zd) {
      if (x <= zx && x + w >= zx + zw) place(g, PAD, fullW); else g.style.display = 'none';
    } else if (x >= zx && x + w <= zx + zw) {
      place(g, PAD + (x - zx) * s, w * s);
    } else {
      g.style.display = 'none';
    }
  });
  document.getElementById('unzoom').style.opacity = 1;
}
function unzoom() {
  var total = num(document.querySelector('g.f[data-d="0"]'), 'w'), s = fullW / total;
  zoomed = null;
  frames().forEach(function (g) { place(g, PAD + num(g, 'x') * s, num(g, 'w') * s); });
  document.getElementById('unzoom').style.opacity = 0;
}
function search(re) {
  var rx = new RegExp(re), total = num(document.querySelector('g.f[data-d="0"]'), 'w'), spans = [];
  frames().forEach(function (g) {
    var name = g.querySelector('title').textContent.replace(/ \(\d+ samples?, .*$/, '');
    var r = g.querySelector('rect');
    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));
    if (rx.test(name)) { r.setAttribute('fill', 'rgb(230,0,230)'); spans.push([num(g, 'x'), num(g, 'x') + num(g, 'w')]); }
    else r.setAttribute('fill', r.getAttribute('data-fill'));
  });
  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var covered = 0, end = -1;  /* nested matches count once */
  spans.forEach(function (s) { if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; } else if (s[1] > end) { covered += s[1] - end; end = s[1]; } });
  document.getElementById('matched').textContent = 'Matched: ' + (100 * covered / total).toFixed(2) + '%';
  return covered / total;
}
document.addEventListener('click', function (e) {
  var g = e.target.closest ? e.target.closest('g.f') : null;
  if (g) zoom(g);
  else if (e.target.id === 'unzoom') unzoom();
  else if (e.target.id === 'search') { var re = prompt('Search (regular expression):'); if (re) search(re); }
});
/* A graph taller than the window (a deep stack) opens on its flame: scrolled to the bottom,
   where the root is; the header follows the scroll. */
function keepHeader() {
  document.getElementById('hdr').setAttribute('transform', 'translate(0,' + (window.scrollY || 0) + ')');
}
window.addEventListener('scroll', keepHeader);
window.addEventListener('load', function () {
  window.scrollTo(0, document.documentElement.scrollHeight);
  keepHeader();
});
/* For scripted checks: #zoom=NAME clicks the widest frame named NAME once the page loads. */
window.addEventListener('load', function () {
  var m = /[#&]zoom=([^&]*)/.exec(location.hash);
  if (!m) return;
  var want = decodeURIComponent(m[1]), best = null;
  frames().forEach(function (g) {
    var name = g.querySelector('title').textContent.replace(/ \(\d+ samples?, .*$/, '');
    if (name === want && (!best || num(g, 'w') > num(best, 'w'))) best = g;
  });
  if (best) best.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true }));
});
)JS";

}  // namespace

std::string to_svg(const Profile& p) {
  Node root;
  root.name = "all";
  for (const Sample& s : p.samples) {
    root.total += s.count;
    Node* n = &root;
    auto step = [&](const std::string& label, bool kernel, bool inexact) {
      auto& slot = n->kids[label];
      if (!slot) {
        slot = std::make_unique<Node>();
        slot->name = label;
        slot->kernel = kernel;
        slot->inexact = inexact;
      }
      n = slot.get();
      n->total += s.count;
    };
    step(s.comm.empty() ? "[unknown]" : s.comm, false, false);
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it)
      step(frame_label(*it), it->kernel, it->inexact);
  }

  Writer w;
  w.total = root.total;
  w.scale = root.total ? (kWidth - 2 * kPad) / double(root.total) : 0;
  w.depth_of(root, 0);
  w.height = kTop + (w.max_depth + 1) * kFrameH + kBottom;
  std::string body;
  if (root.total) w.frame(root, 0, 0);

  char head[1024];
  std::snprintf(head, sizeof head,
                "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "xmlns=\"http://www.w3.org/2000/svg\">\n"
                "<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; "
                "pointer-events: none; } g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; } "
                "#unzoom, #search { cursor: pointer; }</style>\n"
                "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n",
                kWidth, w.height, kWidth, w.height);
  std::string out = head, hdr;  // hdr: the header's texts, drawn last (over the frames)
  char line[512];
  // The title between "Reset Zoom" and "Search" (kTitleChars at 17 px, as wide as Verdana's
  // and DejaVu Sans's widest lower-case runs); a longer one (a long -c command) is cut with
  // ".." and whole in its tooltip.
  std::string title = p.title;
  if (title.size() > kTitleChars) title = title.substr(0, kTitleChars - 2) + "..";
  hdr += "<text x=\"" + std::to_string(int(kWidth / 2)) +
         "\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\"><title>" + xml_escape(p.title) +
         "</title>" + xml_escape(title) + "</text>\n";
  std::snprintf(line, sizeof line,
                "<text x=\"%.0f\" y=\"44\" text-anchor=\"middle\">%llu samples%s%s</text>\n",
                kWidth / 2, (unsigned long long)root.total,
                p.hz ? (" at " + std::to_string(p.hz) + " Hz").c_str() : "",
                root.total ? "" : " (nothing was sampled)");
  hdr += line;
  hdr += "<text id=\"unzoom\" x=\"10\" y=\"24\" style=\"opacity:0; pointer-events:all\">Reset Zoom</text>\n";
  std::snprintf(line, sizeof line,
                "<text id=\"search\" x=\"%.0f\" y=\"24\" text-anchor=\"end\" style=\"pointer-events:all\">Search</text>\n",
                kWidth - 10);
  hdr += line;
  std::snprintf(line, sizeof line,
                "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"></text>\n",
                kWidth - 10, w.height - 12);
  out += line;
  if (w.dropped) {
    std::snprintf(line, sizeof line,
                  "<text x=\"10\" y=\"%.0f\">%zu frames narrower than %.1f px not drawn</text>\n",
                  w.height - 12, w.dropped, kMinPx);
    out += line;
  }
  out += "<script type=\"text/ecmascript\"><![CDATA[" + std::string(kScript) + "]]></script>\n";
  out += w.out;
  // The header on its own background, after the frames: the script moves it with the scroll
  // (a graph taller than the window opens on its flame, at the bottom, with the header in view).
  std::snprintf(line, sizeof line,
                "<g id=\"hdr\"><rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n",
                kWidth, kTop - 8);
  out += line + hdr + "</g>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace ukstap::profile

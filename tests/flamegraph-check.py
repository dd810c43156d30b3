#!/usr/bin/env python3
"""flamegraph-check.py CHROMIUM SVG DIR [FRAME]

Loads a flame graph made by `rsprof flamegraph` in headless Chromium, as a
user's browser would: the page's own script must lay the frames out; a
click on FRAME (a function name; default: the widest frame narrower than
the root) must zoom it to the full width and hide what is not in it; the
search must match it; and a screenshot of the page must show the picture
(many colours, not a blank page). Writes DIR/shot.png, prints what it
found, exits 1 when a check fails."""
import json
import os
import struct
import subprocess
import sys
import zlib

chromium, svg, out = sys.argv[1], sys.argv[2], sys.argv[3]
frame = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(out, exist_ok=True)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--user-data-dir=" + os.path.join(out, "profile"), "--window-size=1200,900",
         "--virtual-time-budget=10000"]

# The test, run by the page after its own load handler: the results into
# the document, which --dump-dom prints.
TEST = r"""
<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function () { setTimeout(function () {
  var r = {}, want = %s;
  var gs = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  r.frames = gs.length;
  r.labelled = gs.filter(function (g) { return g.querySelector('text').textContent.length > 0; }).length;
  var root = gs.filter(function (g) { return g.getAttribute('data-d') == '0'; })[0];
  var pick = null;
  var full = +root.getAttribute('data-v');
  gs.forEach(function (g) {
    if (g.getAttribute('data-d') == '0') return;
    if (want ? g.getAttribute('data-name') != want : +g.getAttribute('data-v') >= 0.9 * full) return;
    if (!pick || +g.getAttribute('data-v') > +pick.getAttribute('data-v')) pick = g;
  });
  r.root_width = +root.querySelector('rect').getAttribute('width');
  if (pick) {
    r.picked = pick.getAttribute('data-name');
    r.width_before = +pick.querySelector('rect').getAttribute('width');
    pick.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    r.width_after = +pick.querySelector('rect').getAttribute('width');
    r.hidden_after = gs.filter(function (g) { return g.style.display == 'none'; }).length;
    r.unzoom_shown = document.getElementById('unzoom').style.display != 'none';
    var esc = r.picked.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    r.matched = search('^' + esc + '$');
    r.matched_text = document.getElementById('matched').textContent;
  }
  var t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
  t.setAttribute('id', 'test-result');
  t.textContent = JSON.stringify(r);
  document.documentElement.appendChild(t);
}, 0); });
]]></script>
"""


def run(args):
    return subprocess.run([chromium] + FLAGS + args, capture_output=True, text=True, timeout=120)


def png_colours(path):
    """Distinct colours of an RGB(A) PNG, read with zlib (no imaging library)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat, w, h, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    bpp = 4 if ctype == 6 else 3
    stride = w * bpp
    colours, prev = set(), bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if y % 4 == 0:
            for x in range(0, stride, bpp * 4):
                colours.add(bytes(line[x:x + 3]))
    return len(colours)


fail = 0
src = open(svg, encoding="utf-8").read()
test_svg = os.path.join(out, "test.svg")
with open(test_svg, "w", encoding="utf-8") as f:
    f.write(src.replace("</svg>", TEST % json.dumps(frame) + "</svg>"))
dom = run(["--dump-dom", "file://" + os.path.abspath(test_svg)])
start = dom.stdout.find('<text id="test-result">')
if start < 0:
    print("no result from the page's script; chromium said:", dom.stderr[-2000:])
    sys.exit(1)
text = dom.stdout[start + len('<text id="test-result">'):]
r = json.loads(text[:text.find("</text>")].replace("&quot;", '"').replace("&amp;", "&")
               .replace("&lt;", "<").replace("&gt;", ">"))
print("page:", json.dumps(r))
checks = [
    ("frames drawn", r.get("frames", 0) >= 3),
    ("names written into the frames that fit them", r.get("labelled", 0) >= 1),
    ("the root spans the width", r.get("root_width", 0) > 1000),
    ("a click zooms the frame to the full width",
     r.get("width_after", 0) > 1000 and r.get("width_after", 0) > r.get("width_before", 0)),
    ("the zoom hides what is not in it, offers the reset",
     r.get("unzoom_shown") is True and r.get("hidden_after", 0) > 0),
    ("the search finds it", r.get("matched", 0) > 0 and r.get("matched_text", "").startswith("Matched: ")),
]
for name, good in checks:
    print(("ok   " if good else "FAIL ") + name)
    fail |= not good

shot = os.path.join(out, "shot.png")
run(["--screenshot=" + shot, "file://" + os.path.abspath(svg)])
n = png_colours(shot) if os.path.exists(shot) else 0
print("screenshot: %s, %d colours" % (shot, n))
good = n >= 8
print(("ok   " if good else "FAIL ") + "the screenshot shows the picture")
fail |= not good
sys.exit(1 if fail else 0)

#!/usr/bin/env python3
"""Render a Chrome trace-event JSON file (as written by `dprun --trace FILE`)
into a static SVG timeline, drawn roughly the way Perfetto / chrome://tracing
draws it. Standard library only.

Usage:
    trace_svg.py TRACE.json -o OUT.svg [--from MS] [--to MS] [--steps A:B]
                 [--width PX] [--title TEXT]

    --from/--to  time window in ms from the trace's start (the earliest event);
                 default is the whole trace. Spans are clipped to the window,
                 spans entirely outside it are skipped.
    --steps A:B  window from the start of "train step" A to the end of
                 "train step" B (args.n) on rank 0's first "device 0 compute"
                 thread. Cannot be combined with --from/--to.
    --width      image width in px (default 1600); --title replaces the title.

Examples:
    trace_svg.py run.json -o run.svg
    trace_svg.py run.json -o steps.svg --steps 3:5 --title "Steps 3-5"

What is drawn: one group per process (process_sort_index, then pid) headed by
its process_name; one row per thread (thread_sort_index, then tid) labelled on
the left. Complete ("X") spans nest on a thread, so each nesting depth gets its
own 14 px lane (a step on top, its kernels below). Async "b"/"e" pairs
(matched on pid, cat, name and id) go to an extra row "<thread> (async)" with
as many lanes as needed so overlapping pairs never collide; a "b" without its
"e" runs to the end of the trace. Colours follow the category (step, kernel,
collective, input, host; anything else is grey). Every rect has a <title>
tooltip (name, n, start, duration); names are written inside rects that are
wide enough, truncated with an ellipsis otherwise. Threads and processes with
nothing in the window are left out. Other event phases are ignored.

Sub-pixel rule: within one lane, a span narrower than 1 px is merged with the
neighbouring narrow spans of that lane that start less than 1 px after the
previous one ends (never across a wider span). A merged group is drawn as a
single rect, at least 1 px wide, coloured by the category holding most of its
time, and its tooltip says how many spans it holds. A lone narrow span is
drawn as a 1 px sliver, so nothing disappears. Rects 3 px or wider are drawn
0.4 px short so that back-to-back spans stay distinguishable. At most MAX_RECTS rects are
drawn; past that the image carries a note saying how many were left out.

Exit status: 0 on success, 2 on bad arguments, unreadable input or an empty
window. The output is written atomically (temporary file + os.replace).
"""
import argparse
import json
import math
import os
import sys
import tempfile
from collections import Counter, defaultdict
from xml.sax.saxutils import escape

MAX_RECTS = 20000
LANE_H, ROW_GAP, PROC_H, LABEL_W, MARGIN = 14, 6, 20, 180, 12
TOP = 64          # title + axis
CHAR_W = 5.4      # estimated width of one character of the 9 px span font
PALETTE = {       # category -> (fill, text colour)
    "step": ("#4e79a7", "#fff"), "kernel": ("#f28e2b", "#000"),
    "collective": ("#e15759", "#fff"), "input": ("#59a14f", "#fff"),
    "host": ("#8e6bb0", "#fff"), "other": ("#a0a0a0", "#000"),
}


def die(msg):
    sys.stderr.write("trace_svg.py: error: %s\n" % msg)
    sys.exit(2)


class Span:
    __slots__ = ("name", "cat", "a", "b", "n", "depth")

    def __init__(self, name, cat, a, b, n):
        self.name, self.cat, self.a, self.b, self.n = name, cat, a, b, n
        self.depth = 0


def load(path):
    """Returns (processes, t0, t1): processes maps pid -> {name, sort, threads};
    a thread is {name, sort, spans, async}; times are in microseconds."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        die("cannot read %s: %s" % (path, e.strerror or e))
    except (ValueError, UnicodeDecodeError) as e:
        die("%s is not valid JSON: %s" % (path, e))
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        die("%s has no traceEvents list" % path)
    procs = {}

    def proc(pid):
        return procs.setdefault(pid, {"name": "pid %s" % pid, "sort": pid, "threads": {}})

    def thread(pid, tid):
        return proc(pid)["threads"].setdefault(
            tid, {"name": "tid %s" % tid, "sort": tid, "spans": [], "async": []})
    opened, times = {}, []
    for e in events:
        if not isinstance(e, dict) or "pid" not in e:
            continue
        ph, pid, tid, args = e.get("ph"), e["pid"], e.get("tid", 0), e.get("args")
        args = args if isinstance(args, dict) else {}
        if ph == "M":
            kind = e.get("name")
            if kind == "process_name":
                proc(pid)["name"] = args.get("name", "pid %s" % pid)
            elif kind == "process_sort_index":
                proc(pid)["sort"] = args.get("sort_index", pid)
            elif kind == "thread_name":
                thread(pid, tid)["name"] = args.get("name", "tid %s" % tid)
            elif kind == "thread_sort_index":
                thread(pid, tid)["sort"] = args.get("sort_index", tid)
            continue
        if ph not in ("X", "b", "e") or not isinstance(e.get("ts"), (int, float)):
            continue
        ts = float(e["ts"])
        times.append(ts)
        if ph == "X":
            dur = e.get("dur")
            end = ts + (max(0.0, float(dur)) if isinstance(dur, (int, float)) else 0.0)
            times.append(end)
            thread(pid, tid)["spans"].append(
                Span(e.get("name", "?"), e.get("cat", ""), ts, end, args.get("n")))
            continue
        key = (pid, e.get("cat"), e.get("name"), e.get("id"))
        if ph == "b":
            opened[key] = (tid, Span(e.get("name", "?"), e.get("cat", ""), ts, None, args.get("n")))
        elif key in opened:
            btid, span = opened.pop(key)
            span.b = max(ts, span.a)
            thread(pid, btid)["async"].append(span)
    if not times:
        die("%s contains no timed events" % path)
    t0, t1 = min(times), max(times)
    for key, (tid, span) in opened.items():  # unterminated async: run to the end
        span.b = t1
        thread(key[0], tid)["async"].append(span)
    for p in procs.values():
        for th in p["threads"].values():
            assign_depths(th["spans"])
    return procs, t0, t1


def assign_depths(spans):
    """X spans on one thread nest properly: depth = size of the enclosing stack."""
    spans.sort(key=lambda s: (s.a, -s.b))
    stack = []
    for s in spans:
        while stack and s.a >= stack[-1].b:
            stack.pop()
        s.depth = len(stack)
        stack.append(s)


def sorted_procs(procs):
    """Yields (process, [threads]) in sort-index order."""
    for pid in sorted(procs, key=lambda p: (procs[p]["sort"], p)):
        ths = procs[pid]["threads"]
        yield procs[pid], [ths[t] for t in sorted(ths, key=lambda t: (ths[t]["sort"], t))]


def steps_window(procs, t0, spec):
    try:
        a, b = (int(x) for x in spec.split(":"))
    except ValueError:
        die("--steps expects A:B with integer step numbers, got %r" % spec)
    if a > b:
        die("--steps %s: the first step comes after the last" % spec)
    plist = list(sorted_procs(procs))
    rank0 = [pt for pt in plist if str(pt[0]["name"]).startswith("rank 0")] or plist[:1]
    threads = [t for t in (rank0[0][1] if rank0 else []) if t["name"] == "device 0 compute"]
    if not threads:
        die("--steps: rank 0 has no 'device 0 compute' thread")
    steps = {s.n: s for s in threads[0]["spans"] if s.name == "train step"}
    for k in (a, b):
        if k not in steps:
            have = sorted(n for n in steps if isinstance(n, int))
            die("--steps: train step %d not found on rank 0 device 0 (have %s)"
                % (k, "%d-%d" % (have[0], have[-1]) if have else "none"))
    return (steps[a].a - t0) / 1000.0, (steps[b].b - t0) / 1000.0


def pack_lanes(spans):
    """Greedy interval packing for async spans; returns a list of lanes."""
    lanes = []
    for s in sorted(spans, key=lambda s: (s.a, s.b)):
        for lane in lanes:
            if lane[-1].b <= s.a:
                lane.append(s)
                break
        else:
            lanes.append([s])
    return lanes


def fmt_dur(us):
    return "%.3f ms" % (us / 1000.0) if us >= 1000 else "%.2f \u00b5s" % us


def nice_step(raw):
    """Smallest 1/2/5 x 10^k that is >= raw."""
    k = 10.0 ** math.floor(math.log10(raw))
    return next(m * k for m in (1, 2, 5, 10) if m * k >= raw * (1 - 1e-9))


class Renderer:
    def __init__(self, t0, w0, w1, width):
        self.t0, self.w0, self.w1 = t0, w0, w1              # window in ms
        self.x0, self.pw = LABEL_W, width - LABEL_W - MARGIN
        self.out, self.rects, self.skipped = [], 0, 0

    def x(self, us):
        return self.x0 + ((us - self.t0) / 1000.0 - self.w0) / (self.w1 - self.w0) * self.pw

    def lane(self, spans, y):
        """Draws one lane of non-overlapping spans (sorted by start) at y."""
        lo, hi = self.x0, self.x0 + self.pw
        groups, cur = [], None          # group: [x0, x1, [spans]]
        for s in spans:
            a, b = max(self.x(s.a), lo), min(self.x(s.b), hi)
            if b - a >= 1.0:
                cur = None
                groups.append([a, b, [s]])
            elif cur is not None and a - cur[1] < 1.0:
                cur[1] = max(cur[1], b)
                cur[2].append(s)
            else:
                cur = [a, b, [s]]
                groups.append(cur)
        for a, b, members in groups:
            if self.rects >= MAX_RECTS:
                self.skipped += 1
                continue
            self.rects += 1
            w = b - a - 0.4 if b - a >= 3 else max(b - a, 1.0)  # hairline gap between wide rects
            if len(members) == 1:
                s = members[0]
                cat = s.cat if s.cat in PALETTE else "other"
                label = s.name if s.n is None or cat == "kernel" else "%s %s" % (s.name, s.n)
                tip = "%s%s\nstart %.3f ms, duration %s" % (
                    s.name, "" if s.n is None else " (n=%s)" % s.n,
                    (s.a - self.t0) / 1000.0, fmt_dur(s.b - s.a))
            else:
                busy = Counter()
                for s in members:
                    busy[s.cat if s.cat in PALETTE else "other"] += s.b - s.a
                cat, label = busy.most_common(1)[0][0], ""
                names = Counter(s.name for s in members).most_common(3)
                tip = "%d spans merged (%s)\nstart %.3f ms, extent %s, busy %s" % (
                    len(members), ", ".join("%s x%d" % nc for nc in names),
                    (members[0].a - self.t0) / 1000.0,
                    fmt_dur(max(s.b for s in members) - members[0].a),
                    fmt_dur(sum(busy.values())))
            self.out.append('<rect class="c-%s" x="%.1f" y="%d" width="%.1f" height="%d">'
                            '<title>%s</title></rect>' % (cat, a, y + 1, w, LANE_H - 2, escape(tip)))
            fit = int((w - 4) / CHAR_W)
            if label and fit >= 3:
                text = label if len(label) <= fit else label[:fit - 1] + "\u2026"
                self.out.append('<text class="t-%s" x="%.1f" y="%d">%s</text>'
                                % (cat, a + 2, y + LANE_H - 4, escape(text)))

    def axis(self, bottom):
        span = self.w1 - self.w0
        step = nice_step(span / max(1.0, self.pw / 110.0))
        decimals = max(0, -int(math.floor(math.log10(step))))
        parts = ['<text class="rl" x="6" y="%d">time (ms)</text>' % (TOP - 10)]
        i = math.ceil(self.w0 / step - 1e-9)
        while i * step <= self.w1 + step * 1e-9:
            x = self.x0 + (i * step - self.w0) / span * self.pw
            parts.append('<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>'
                         '<text class="tick" x="%.1f" y="%d">%.*f</text>'
                         % (x, TOP - 6, x, bottom, x, TOP - 10, decimals, i * step))
            i += 1
        return parts


def render(procs, t0, w0, w1, width, title, subtitle):
    r = Renderer(t0, w0, w1, width)
    a_us, b_us = t0 + w0 * 1000.0, t0 + w1 * 1000.0

    def visible(spans):  # overlaps the window (a zero-length span: lies inside it)
        return [s for s in spans if (s.b > a_us and s.a < b_us) or a_us <= s.a == s.b <= b_us]
    y, shown, band, bg = TOP, 0, 0, []   # bg: process headers, row bands, labels
    for proc, threads in sorted_procs(procs):
        rows = []
        for th in threads:
            sync, asyn = visible(th["spans"]), visible(th["async"])
            if sync:
                rows.append((th["name"], sync, None))
            if asyn:
                rows.append((th["name"] + " (async)", None, pack_lanes(asyn)))
            shown += len(sync) + len(asyn)
        if not rows:
            continue
        bg.append('<rect class="proc" x="0" y="%d" width="%d" height="%d"/>'
                  '<text class="ph" x="6" y="%d">%s</text>'
                  % (y, width, PROC_H, y + PROC_H - 6, escape(str(proc["name"]))))
        y += PROC_H + 4
        for label, sync, lanes in rows:
            if lanes is None:
                by_depth = defaultdict(list)
                for s in sync:
                    by_depth[s.depth].append(s)
                lanes = [by_depth[d] for d in range(max(by_depth) + 1)]
            h = len(lanes) * LANE_H
            band ^= 1
            bg.append('<rect class="row%d" x="0" y="%d" width="%d" height="%d"/>'
                      '<text class="rl" x="14" y="%d">%s</text>'
                      % (band, y - 2, width, h + 4, y + LANE_H - 4, escape(label)))
            for i, lane in enumerate(lanes):
                r.lane(sorted(lane, key=lambda s: s.a), y + i * LANE_H)
            y += h + ROW_GAP
    if not shown:
        die("no spans in the window %.3f-%.3f ms" % (w0, w1))
    bottom, y = y, y + 8
    legend = []
    for i, cat in enumerate(("step", "kernel", "collective", "input", "host")):
        lx = LABEL_W + i * 110
        legend.append('<rect class="c-%s" x="%d" y="%d" width="12" height="12"/>'
                      '<text class="rl" x="%d" y="%d">%s</text>' % (cat, lx, y, lx + 16, y + 10, cat))
    y += 18
    if r.skipped:
        legend.append('<text class="note" x="%d" y="%d">%d more rects not drawn (cap: %d rects)</text>'
                      % (LABEL_W, y + 10, r.skipped, MAX_RECTS))
        y += 16
    height = y + 6
    css = ["text{font-family:sans-serif;font-size:9px;pointer-events:none}",
           ".tick,.rl{font-size:10px;fill:#333}.ph{font-size:11px;font-weight:bold;fill:#222}",
           ".ti{font-size:14px;font-weight:bold}.sub{font-size:10px;fill:#555}",
           ".note{font-size:11px;fill:#c00}.tick{text-anchor:middle}",
           ".grid{stroke:#ccc;stroke-width:0.5}.proc{fill:#e2e2ea}.row0{fill:#fafafa}.row1{fill:#f0f0f4}"]
    css += [".c-%s{fill:%s}.t-%s{fill:%s}" % (c, f, c, t) for c, (f, t) in PALETTE.items()]
    head = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
            % (width, height, width, height),
            "<style>%s</style>" % "".join(css),
            '<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>' % (width, height),
            '<text class="ti" x="6" y="18">%s</text>' % escape(title),
            '<text class="sub" x="6" y="32">%s</text>' % escape(
                "%s; %d spans, %d rects drawn" % (subtitle, shown, r.rects))]
    # Row bands below the grid lines, spans above them.
    return "\n".join(head + bg + r.axis(bottom) + r.out + legend + ["</svg>\n"])


def write_atomic(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".trace_svg.", suffix=".tmp", dir=directory)
    except OSError as e:
        die("cannot write %s: %s" % (path, e.strerror or e))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; use the usual mode
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        die("cannot write %s: %s" % (path, e.strerror or e))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render a dprun Chrome trace as an SVG timeline.")
    ap.add_argument("trace", help="trace-event JSON written by dprun --trace")
    ap.add_argument("-o", "--output", required=True, help="SVG file to write")
    ap.add_argument("--from", dest="t_from", type=float, metavar="MS", help="window start, ms")
    ap.add_argument("--to", dest="t_to", type=float, metavar="MS", help="window end, ms")
    ap.add_argument("--steps", metavar="A:B", help="window = train steps A..B of rank 0 device 0")
    ap.add_argument("--width", type=int, default=1600, metavar="PX", help="image width (default 1600)")
    ap.add_argument("--title", help="title text (default: the trace file name)")
    args = ap.parse_args(argv)
    if args.width < LABEL_W + 200:
        ap.error("--width must be at least %d" % (LABEL_W + 200))
    if args.steps and (args.t_from is not None or args.t_to is not None):
        ap.error("--steps cannot be combined with --from/--to")
    for v in (args.t_from, args.t_to):
        if v is not None and not math.isfinite(v):
            ap.error("--from/--to must be finite numbers")
    procs, t0, t1 = load(args.trace)
    total = (t1 - t0) / 1000.0
    if args.steps:
        w0, w1 = steps_window(procs, t0, args.steps)
        what = "train steps %s:" % args.steps
    else:
        w0 = args.t_from if args.t_from is not None else 0.0
        w1 = args.t_to if args.t_to is not None else total
        what = "window"
    if w1 <= w0:
        die("empty window %.3f-%.3f ms (the trace spans 0-%.3f ms)" % (w0, w1, total))
    if w0 > total or w1 < 0:
        die("window %.3f-%.3f ms lies outside the trace (0-%.3f ms)" % (w0, w1, total))
    subtitle = "%s %.3f-%.3f ms of %.3f ms" % (what, w0, w1, total)
    svg = render(procs, t0, w0, w1, args.width, args.title or os.path.basename(args.trace), subtitle)
    write_atomic(args.output, svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())

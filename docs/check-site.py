#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads the built documentation site the way a reader does: every HTML page is opened in one
headless Chromium (driven over the DevTools protocol on a pipe, standard library only), MathJax is
given time to typeset, and the rendered page is checked. A page fails on
  - a MathJax error (.merror boxes, "Math Processing Error", a MathJax file that did not load),
  - TeX that was not typeset (\\( or \\[ left in the text), a leaked Doxygen formula placeholder
    (\\_form#N), a literal ** (bold that Markdown did not parse),
  - a Markdown table that did not become a <table> (pipes left in the text),
  - a broken image, a resource (script, style sheet, font, image) that failed to load,
  - a dead internal link (a missing file, or an #anchor that the target page does not have).
  - a backslash in a typeset formula (TeX shown as text, as \\_ inside \\text{}).
  - a command-line flag whose '--' became an en dash ("–no-build-isolation": Doxygen's
    typography outside code).
Every figure a page shows as SVG (\\image html x.svg) is opened on its own and must be a chart
that shows its data: per panel (<g class="plot">) a plot area, tick labels and a label on both
axes, a legend entry per series, no two series drawn alike, and the plotted data spanning the
plot area (>= 90% of its width, >= 5% of its height, nothing outside it). The figures are
written by examples/figures/svg_plot.hpp, which uses these class names.
Text inside code (pre, code, .fragment, source listings) is not checked for these patterns.
Screenshots of the pages named with --screenshot are written to --shots.

  check-site.py --html <site>/html --chromium <chromium> [--shots <dir>] [--screenshot index.html ...]
Exit status 0 when every page passes; the failures are listed otherwise.
"""
import argparse
import base64
import json
import os
import pathlib
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

# Runs in the page once MathJax has finished: what the reader would see that is wrong.
PAGE_CHECK_JS = r"""
(async () => {
  // images the page's scripts added late (navigation tree, search box) get up to 5 s to load
  const pending = [...document.images].filter(i => !i.complete)
      .map(i => new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }));
  await Promise.race([Promise.all(pending), new Promise(r => setTimeout(r, 5000))]);
  const problems = [];
  const codeLike = 'pre, code, .fragment, div.line, script, style, textarea, kbd, .MathJax, .MathJax_Display, .MathJax_Preview, .MJX_Assistive_MathML';
  const shorten = s => { s = s.replace(/\s+/g, ' ').trim(); return s.length > 120 ? s.slice(0, 117) + '...' : s; };
  for (const e of document.querySelectorAll('.merror, .MathJax_Error'))
    problems.push('MathJax error: ' + shorten(e.textContent || e.getAttribute('title') || '?'));
  // a backslash in typeset output is TeX shown as text (e.g. \_ inside \text{})
  for (const m of document.querySelectorAll('span.MathJax'))
    if (m.textContent.includes('\\')) problems.push('backslash in a typeset formula: ' + shorten(m.textContent));
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const patterns = [
    [/\\\(|\\\[|\\f\$|\\f\[/, 'TeX not typeset'],
    [/\\_form#|\\form#\d/, 'leaked formula placeholder'],
    [/\*\*/, 'literal ** (bold not parsed)'],
    [/Math Processing Error/, 'MathJax processing error'],
    [/(^|\n)[ \t]*\|[^\n]*\|[ \t]*(\n|$)/, 'a line of | cells in the text (a Markdown table that did not render)'],
    [/\|\s*:?-{3,}:?\s*\|/, 'Markdown table separator in the text'],
    [/(^|[\s(\[])\u2013[A-Za-z]/, 'a command-line flag shown with an en dash (-- outside code)'],
  ];
  // Text is checked per block (a paragraph, list item, cell), so patterns split across inline
  // elements (e.g. ** around a <code>) are still seen.
  const blocks = new Map();
  let n;
  while ((n = walker.nextNode())) {
    const p = n.parentElement;
    if (!p || p.closest(codeLike)) continue;
    const block = p.closest('p, li, td, th, dd, dt, h1, h2, h3, h4, h5, h6, blockquote, div') || document.body;
    blocks.set(block, (blocks.get(block) || '') + n.nodeValue);
  }
  for (const [, text] of blocks)
    for (const [re, what] of patterns)
      if (re.test(text)) problems.push(what + ': "' + shorten(text) + '"');
  // An image that loaded but has no pixels is broken; one still loading on a busy machine is
  // checked as a link (its file must exist) and by the network log (its load must not fail).
  const links = [];
  for (const img of document.images) {
    if (img.complete && img.naturalWidth === 0 && img.currentSrc) problems.push('broken image: ' + img.getAttribute('src'));
    if (img.src && img.src.startsWith('file:')) links.push(img.src);
  }
  for (const a of document.querySelectorAll('a[href], area[href]')) {
    const h = a.getAttribute('href');
    if (!h || /^(https?:|mailto:|javascript:|ftp:)/i.test(h)) continue;
    links.push(a.href);
  }
  for (const e of document.querySelectorAll('link[href]')) {
    const h = e.getAttribute('href');
    if (h && !/^(https?:|data:)/i.test(h)) links.push(e.href);
  }
  const ids = [...document.querySelectorAll('[id]')].map(e => e.id)
      .concat([...document.querySelectorAll('a[name]')].map(e => e.getAttribute('name')));
  const figures = [...document.querySelectorAll('div.image object[data], div.image img[src]')]
      .map(e => e.tagName === 'OBJECT' ? e.data : e.src).filter(u => /\.svg$/i.test(u));
  const formulas = document.querySelectorAll('script[type^="math/tex"]').length;
  const rendered = document.querySelectorAll('span.MathJax').length;
  return JSON.stringify({problems, links, ids, formulas, rendered, figures, title: document.title,
                         mathjaxErrors: window.__posencMathJaxErrors || []});
})()
"""

# Runs in an SVG figure opened on its own: what keeps a reader from reading the data.
FIGURE_CHECK_JS = r"""
(() => {
  const out = [];
  const plots = [...document.querySelectorAll('g.plot')];
  if (!plots.length) return ['no chart (<g class="plot">): a figure needs axes with ticks and a legend'];
  for (const p of plots) {
    const t = p.getAttribute('data-title') || 'panel';
    const area = p.querySelector('rect.plot-area');
    if (!area) { out.push(t + ': no plot area (rect.plot-area)'); continue; }
    const a = area.getBBox();
    const series = [...p.querySelectorAll('g.series')];
    const lines = p.querySelectorAll('.reference').length;
    const entries = p.querySelectorAll('g.legend-entry').length;
    if (!series.length) out.push(t + ': no data series');
    if (entries !== series.length + lines)
      out.push(`${t}: ${entries} legend entries for ${series.length + lines} series and reference lines`);
    for (const ax of ['x', 'y']) {
      const n = p.querySelectorAll(`.axis.${ax} .tick-label`).length;
      if (n < 2) out.push(`${t}: ${n} tick labels on the ${ax} axis (at least 2)`);
      const label = p.querySelector(`.axis.${ax} .axis-label`);
      if (!label || !label.textContent.trim()) out.push(`${t}: the ${ax} axis has no label`);
    }
    const styles = new Map();
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const s of series) {
      const line = s.querySelector('polyline, path');
      if (!line) { out.push(`${t}: series ${s.dataset.name} draws nothing`); continue; }
      const style = line.getAttribute('stroke') + '|' + (line.getAttribute('stroke-dasharray') || '');
      if (styles.has(style)) out.push(`${t}: series ${styles.get(style)} and ${s.dataset.name} are drawn alike`);
      styles.set(style, s.dataset.name);
      const b = line.getBBox();
      x0 = Math.min(x0, b.x); x1 = Math.max(x1, b.x + b.width);
      y0 = Math.min(y0, b.y); y1 = Math.max(y1, b.y + b.height);
    }
    if (!series.length) continue;
    const tol = 1.5;
    if (x0 < a.x - tol || x1 > a.x + a.width + tol || y0 < a.y - tol || y1 > a.y + a.height + tol)
      out.push(`${t}: data outside the plot area (data x ${x0.toFixed(0)}..${x1.toFixed(0)}, y ${y0.toFixed(0)}..${y1.toFixed(0)};` +
               ` area x ${a.x}..${a.x + a.width}, y ${a.y}..${a.y + a.height})`);
    if (x1 - x0 < 0.9 * a.width)
      out.push(`${t}: the data spans ${(100 * (x1 - x0) / a.width).toFixed(1)}% of the plot area's width (at least 90%)`);
    if (y1 - y0 < 0.05 * a.height)
      out.push(`${t}: the data spans ${(100 * (y1 - y0) / a.height).toFixed(1)}% of the plot area's height (at least 5%)`);
  }
  return out;
})()
"""

# Installed before any page script: MathJax 2 reads window.MathJax as its configuration, so these
# hooks are registered when it starts, and report the files and formulas it could not process.
MATHJAX_HOOKS_JS = r"""
window.__posencMathJaxErrors = [];
window.MathJax = { AuthorInit: function () {
  const hub = MathJax.Hub, errs = window.__posencMathJaxErrors;
  hub.Register.MessageHook('file load error', m => errs.push('file load error: ' + m[1]));
  hub.Register.MessageHook('Math Processing Error', m => errs.push('Math Processing Error: ' + (m[2] && m[2].message)));
  hub.Register.MessageHook('TeX Jax - parse error', m => errs.push('TeX parse error: ' + m[1] + ' in ' + m[2]));
  hub.Register.StartupHook('HTML-CSS Jax Startup', () => {
    hub.Register.MessageHook('HTML-CSS Jax - no valid font', m => errs.push('no valid MathJax font'));
  });
}};
"""

# Resolves when MathJax has typeset the page (or at once when the page has no MathJax).
WAIT_MATHJAX_JS = r"""
new Promise(resolve => {
  const t0 = Date.now();
  const poll = () => {
    const mj = window.MathJax;
    const hasScript = !!document.querySelector('script[src$="MathJax.js"]');
    if (!hasScript) return resolve('none');
    if (mj && mj.Hub && mj.isReady) return mj.Hub.Queue(() => resolve('typeset'));
    if (Date.now() - t0 > %d) return resolve('timeout');
    setTimeout(poll, 25);
  };
  poll();
})
"""


class Browser:
    """Headless Chromium over --remote-debugging-pipe (fd 3: commands in, fd 4: replies out).
    One reader thread hands replies to the callers waiting for them and events to their tab."""

    def __init__(self, exe, width, height):
        self.profile = tempfile.mkdtemp(prefix="posenc-docs-chromium-")
        self.width, self.height = width, height
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def setup():  # the child must see the pipes as fds 3 and 4
            a, b = os.dup(to_child_r), os.dup(from_child_w)  # above 4, so neither dup2 clobbers the other
            os.dup2(a, 3)
            os.dup2(b, 4)
        args = [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--disable-background-timer-throttling",
                "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows", "--mute-audio", "--hide-scrollbars",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=setup, pass_fds=(3, 4),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=None if os.environ.get("POSENC_CHROMIUM_LOG") else subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting = {}   # id -> [event, reply]
        self.tabs = {}      # sessionId -> queue of events
        self.dead = False
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        buf = b""
        while True:
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                self.dead = True
                for w in list(self.waiting.values()):
                    w[0].set()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    w = self.waiting.pop(msg["id"], None)
                    if w:
                        w[1] = msg
                        w[0].set()
                elif msg.get("sessionId") in self.tabs:
                    self.tabs[msg["sessionId"]].put(msg)

    def call(self, method, session=None, timeout=60, **params):
        with self.lock:
            self.next_id += 1
            mid = self.next_id
            w = self.waiting[mid] = [threading.Event(), None]
            msg = {"id": mid, "method": method, "params": params}
            if session:
                msg["sessionId"] = session
            os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        if not w[0].wait(timeout) or w[1] is None:
            raise RuntimeError(f"{method}: no answer from Chromium" + (" (it exited)" if self.dead else ""))
        if "error" in w[1]:
            raise RuntimeError(f"{method}: {w[1]['error']}")
        return w[1].get("result", {})

    def new_tab(self):
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.tabs[session] = queue.Queue()
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable", session)
        self.call("Emulation.setDeviceMetricsOverride", session, width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        self.call("Page.addScriptToEvaluateOnNewDocument", session, source=MATHJAX_HOOKS_JS)
        return session

    def drain(self, session):
        q, out = self.tabs[session], []
        while not q.empty():
            out.append(q.get_nowait())
        return out

    def wait_event(self, session, method, seen, timeout=60):
        """Events of the tab until `method` (all of them appended to seen)."""
        q = self.tabs[session]
        deadline = time.monotonic() + timeout
        while True:
            e = q.get(timeout=max(0.01, deadline - time.monotonic()))
            seen.append(e)
            if e.get("method") == method:
                return e

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def failed_loads(events):
    urls = {}
    failed = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Network.requestWillBeSent":
            urls[p["requestId"]] = p["request"]["url"]
        elif m == "Network.loadingFailed" and not p.get("canceled") and \
                p.get("blockedReason") != "inspector" and not urls.get(p["requestId"], "").startswith("about:"):
            failed.append(f"{urls.get(p['requestId'], '?')} ({p.get('errorText')})")
        elif m == "Network.responseReceived" and p["response"].get("status", 200) >= 400:
            failed.append(f"{p['response']['url']} (HTTP {p['response']['status']})")
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--html", required=True, type=pathlib.Path)
    ap.add_argument("--self-test", action="store_true",
                    help="check a generated site with one defect per page (MathJax from --html/mathjax)")
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--shots", type=pathlib.Path)
    ap.add_argument("--screenshot", nargs="*", default=[])
    ap.add_argument("--mathjax-timeout-ms", type=int, default=20000)
    ap.add_argument("--tabs", type=int, default=4, help="pages loaded at once")
    ap.add_argument("--shot-scale", type=float, default=1.0, help="screenshot scale (0.5: half size)")
    ap.add_argument("--only", nargs="*", help="check only these pages (links are still resolved)")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    args = ap.parse_args()

    if args.self_test:
        return self_test(args)
    problems = check(args, args.html.resolve())
    return 1 if problems is None or problems else 0


def check(args, root):
    """Checks every page of the site in root; returns {page: [problems]} (None: no pages)."""
    pages = sorted(p.name for p in root.glob("*.html"))
    if args.only:
        pages = [p for p in pages if p in args.only]
    if not pages:
        print(f"no HTML pages in {root}")
        return None
    t0 = time.monotonic()
    browser = Browser(args.chromium, args.width, args.height)
    problems = {}
    ids = {}
    links = {}
    counts = {"formulas": 0, "rendered": 0}
    todo = queue.Queue()
    for name in pages:
        todo.put(name)
    failures = []

    def evaluate(session, expression, **kw):
        return browser.call("Runtime.evaluate", session, returnByValue=True, expression=expression,
                            **kw)["result"].get("value")

    def check(session, name):
        tp = time.monotonic()
        browser.drain(session)
        events = []
        # MathJax only runs where the page has TeX (Doxygen writes formulas as \\( \\) and \\[ \\]);
        # elsewhere it is not loaded, which saves most of the time of a page.
        has_tex = any(d in (root / name).read_text(encoding="utf-8", errors="replace") for d in ("\\(", "\\["))
        browser.call("Network.setBlockedURLs", session, urls=[] if has_tex else ["*/mathjax/*"])
        browser.call("Page.navigate", session, url=(root / name).as_uri())
        browser.wait_event(session, "Page.loadEventFired", events)
        state = "no TeX"
        if has_tex:
            state = evaluate(session, WAIT_MATHJAX_JS % args.mathjax_timeout_ms, awaitPromise=True,
                             timeout=args.mathjax_timeout_ms / 1000 + 30)
        res = json.loads(evaluate(session, PAGE_CHECK_JS, awaitPromise=True))
        page_problems = list(res["problems"])
        if state == "timeout":
            page_problems.append("MathJax did not finish (MathJax.js not loaded?)")
        page_problems += [f"MathJax: {e}" for e in res["mathjaxErrors"]]
        if res["formulas"] and res["rendered"] < res["formulas"]:
            page_problems.append(f"{res['formulas'] - res['rendered']} of {res['formulas']} formulas not typeset")
        page_problems += [f"failed to load: {f}" for f in failed_loads(events + browser.drain(session))]
        with browser.lock:
            counts["formulas"] += res["formulas"]
            counts["rendered"] += res["rendered"]
            ids[name] = set(res["ids"])
            links[name] = res["links"]
            for f in res["figures"]:
                figures.setdefault(f, []).append(name)
            if page_problems:
                problems[name] = page_problems
        if name in args.screenshot and args.shots:
            args.shots.mkdir(parents=True, exist_ok=True)
            stem = pathlib.Path(name).stem
            evaluate(session, "(() => { const s = document.createElement('style');"
                              " s.textContent = '#MathJax_Message { display: none !important; }';"
                              " document.head.appendChild(s); })()")
            clip = {"x": 0, "y": 0, "width": args.width, "height": args.height, "scale": args.shot_scale}
            shot = browser.call("Page.captureScreenshot", session, format="png", clip=clip)
            (args.shots / f"{stem}.png").write_bytes(base64.b64decode(shot["data"]))
            # and the page around its first displayed formula, where it has one
            if evaluate(session, "(() => { const m = document.querySelector('.MathJax_Display');"
                                 " if (!m) return false; m.scrollIntoView({block: 'center'}); return true; })()"):
                shot = browser.call("Page.captureScreenshot", session, format="png", clip=clip)
                (args.shots / f"{stem}-formula.png").write_bytes(base64.b64decode(shot["data"]))
        if os.environ.get("POSENC_CHECK_SITE_TIMES"):
            print(f"{time.monotonic() - tp:6.2f} s {state:8} {name}", flush=True)

    def worker():
        try:
            session = browser.new_tab()
            while True:
                try:
                    name = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    check(session, name)
                except Exception as e:  # one page's failure is reported, the others are still checked
                    with browser.lock:
                        problems.setdefault(name, []).append(f"could not be checked: {e}")
        except Exception as e:
            failures.append(str(e))

    figures = {}  # figure URL -> the pages that show it

    def check_figures():
        session = browser.new_tab()
        for url, shown_on in sorted(figures.items()):
            path = pathlib.Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
            if not path.exists():
                continue  # reported as a dead link
            browser.drain(session)
            browser.call("Page.navigate", session, url=url)
            browser.wait_event(session, "Page.loadEventFired", [])
            for p in evaluate(session, FIGURE_CHECK_JS) or []:
                for page in shown_on:
                    problems.setdefault(page, []).append(f"figure {path.name}: {p}")

    try:
        workers = [threading.Thread(target=worker) for _ in range(max(1, args.tabs))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        try:
            check_figures()
        except Exception as e:
            failures.append(f"figures: {e}")
    finally:
        browser.close()
    if failures:
        print("the browser could not be driven: " + "; ".join(failures))
        return None
    formulas, rendered = counts["formulas"], counts["rendered"]

    # Internal links: the file exists and, for a page of the site, the anchor is on it.
    for name, hrefs in links.items():
        for href in hrefs:
            u = urllib.parse.urlsplit(href)
            if u.scheme != "file":
                continue
            target = pathlib.Path(urllib.parse.unquote(u.path))
            if not target.exists():
                problems.setdefault(name, []).append(f"dead link: {href}")
                continue
            try:
                rel = target.resolve().relative_to(root)
            except ValueError:
                problems.setdefault(name, []).append(f"link outside the site: {href}")
                continue
            if u.fragment and str(rel) in ids and urllib.parse.unquote(u.fragment) not in ids[str(rel)]:
                problems.setdefault(name, []).append(f"dead anchor: {rel}#{u.fragment}")

    elapsed = time.monotonic() - t0
    print(f"checked {len(pages)} pages in {elapsed:.1f} s: {rendered} of {formulas} formulas typeset, "
          f"{sum(len(v) for v in links.values())} internal links")
    if problems:
        n = sum(len(v) for v in problems.values())
        print(f"{n} problems on {len(problems)} pages:")
        for name in sorted(problems):
            for p in sorted(set(problems[name])):
                print(f"  {name}: {p}")
    return problems


# The self-test: a small site with one defect per page (and one page without any), checked with
# the built site's MathJax; each defect must be reported on its page and nothing on the good one.
SELF_TEST_HEAD = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{name}</title>
<script type="text/x-mathjax-config">
MathJax.Hub.Config({{ extensions: ["tex2jax.js", "TeX/AMSmath.js", "TeX/AMSsymbols.js"],
                      jax: ["input/TeX","output/HTML-CSS"] }});
</script>{script}</head><body>
"""
MATHJAX_TAG = '<script type="text/javascript" async="async" src="mathjax/MathJax.js"></script>'
# a 1 x 1 PNG
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
SELF_TEST_PAGES = {
    # page: (body, the problems that must be reported (substrings); none for the good page)
    "good.html": ('<h1 id="top">Good</h1><p>\\(\\tfrac{1}{2} + \\operatorname{tr} A\\)</p>'
                  '<p>Dormand\u2013Prince, 0\u20134096, <code>--flag</code></p>'
                  '<div class="image"><object type="image/svg+xml" data="chart.svg"></object></div>'
                  '<p><b><code>backprop(dL_dP)</code></b> and \\[x^2\\]</p><table><tr><td>a</td><td>b</td></tr></table>'
                  '<p><img src="pixel.png" alt="pixel"> <a href="leaked.html#here">link</a></p>', []),
    "tex_error.html": ("<p>\\(\\undefinedmacro x\\)</p>", ["MathJax error"]),
    "leaked.html": ('<p id="here">we denote P as an \\_form#80 matrix</p>', ["leaked formula placeholder"]),
    "stars.html": ("<ul><li>**<code>backprop(dL_dP)</code>** — reverse mode</li></ul>", ["literal **"]),
    "table.html": ("<p>| option | values |\n| <code>layout</code> | interleaved |</p>", ["Markdown table"]),
    "image.html": ('<p><img src="missing.png" alt="missing"></p>', ["missing.png"]),
    "links.html": ('<p><a href="nowhere.html">a</a> <a href="good.html#nope">b</a></p>', ["dead link", "dead anchor"]),
    "untypeset.html": ("<p>the rule \\(x^2\\) without MathJax</p>", ["TeX not typeset"]),
    "backslash.html": ("<p>\\(\\text{num\\_buckets}\\)</p>", ["backslash in a typeset formula"]),
    "dash.html": ("<p>rebuild with pip install \u2013no-build-isolation ./python</p>", ["flag shown with an en dash"]),
    "figure.html": ('<div class="image"><object type="image/svg+xml" data="squeezed.svg"></object></div>'
                    '<div class="image"><object type="image/svg+xml" data="bare.svg"></object></div>',
                    ["squeezed.svg: p: the data spans", "squeezed.svg: p: 1 legend entries for 2",
                     "squeezed.svg: p: series a and b are drawn alike", "squeezed.svg: p: 0 tick labels on the x axis",
                     "bare.svg: no chart"]),
}


def _chart(points_a, points_b, stroke_b="#0072b2", legend=2, xticks=2):
    ticks = "".join(f'<text class="tick-label" x="{10 + 40 * i}" y="115">{i}</text>' for i in range(xticks))
    entries = "".join(f'<g class="legend-entry" data-name="s{i}"><text>s{i}</text></g>' for i in range(legend))
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="130"><g class="plot" data-title="p">'
            '<rect class="plot-area" x="10" y="10" width="100" height="100" fill="none" stroke="black"/>'
            f'<g class="axis x">{ticks}<text class="axis-label">x (units)</text></g>'
            '<g class="axis y"><text class="tick-label">0</text><text class="tick-label">1</text>'
            '<text class="axis-label">y (units)</text></g>'
            f'<g class="series" data-name="a"><polyline fill="none" stroke="#000" points="{points_a}"/></g>'
            f'<g class="series" data-name="b"><polyline fill="none" stroke="{stroke_b}" points="{points_b}"/></g>'
            f'<g class="legend">{entries}</g></g></svg>')


# chart.svg is sound; squeezed.svg has its data in the first pixels (x scaled by sample index),
# one legend entry for two series, both series alike and no x tick labels; bare.svg is no chart.
SELF_TEST_FIGURES = {
    "chart.svg": _chart("10,110 60,60 110,10", "10,100 110,90"),
    "squeezed.svg": _chart("10,110 11,60 12,10", "10,100 13,90", stroke_b="#000", legend=1, xticks=0),
    "bare.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><polyline points="0,0 1,1"/></svg>',
}


def self_test(args):
    mathjax = args.html.resolve() / "mathjax"
    if not (mathjax / "MathJax.js").exists():
        print(f"self-test: no MathJax in {mathjax} (build the site first)")
        return 1
    with tempfile.TemporaryDirectory(prefix="posenc-check-site-") as tmp:
        site = pathlib.Path(tmp)
        (site / "mathjax").symlink_to(mathjax, target_is_directory=True)
        (site / "pixel.png").write_bytes(PIXEL)
        for name, svg in SELF_TEST_FIGURES.items():
            (site / name).write_text(svg, encoding="utf-8")
        for name, (body, _) in SELF_TEST_PAGES.items():
            script = "" if name == "untypeset.html" else MATHJAX_TAG
            (site / name).write_text(SELF_TEST_HEAD.format(name=name, script=script) + body + "</body></html>",
                                     encoding="utf-8")
        args.only = None
        args.screenshot = []
        problems = check(args, site)
        if problems is None:
            return 1
        bad = []
        for name, (_, expected) in SELF_TEST_PAGES.items():
            got = " | ".join(problems.get(name, []))
            if not expected and got:
                bad.append(f"{name}: reported although it has no defect: {got}")
            for e in expected:
                if e not in got:
                    bad.append(f"{name}: '{e}' not reported (got: {got or 'nothing'})")
        if bad:
            print("self-test FAILED:\n  " + "\n  ".join(bad))
            return 1
        print(f"self-test: each of the {len(SELF_TEST_PAGES) - 1} defects reported on its page, none on good.html")
        return 0


if __name__ == "__main__":
    sys.exit(main())

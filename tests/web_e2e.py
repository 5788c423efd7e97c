#!/usr/bin/env python3
"""web_e2e.py — the dashboard in a real browser (issue 30 item 6).

Builds a file with the emqlite tool (queues with JSON, hostile and
binary payloads, a dead job, a lane, a stream with a group, a flow), starts
`emqlite ui` on a loopback port it picks (--listen 127.0.0.1:0), and drives
headless Chromium through the DevTools protocol over a pipe
(--remote-debugging-pipe: NUL-separated JSON on fds 3 and 4, so no
WebSocket client and no pip package is needed). It loads every page, checks
what each shows, checks that a payload's markup is shown as text and never
runs, clicks the retry button of the dead job, reads the result line, checks
with the tool that the job is pending again, and saves screenshots of the
queue overview and the job page into SHOTS (default ./web-shots).

Prints "web_e2e: N passed, M failed" and exits 0 when none failed, 1
otherwise, 77 (skipped, with the reason) when chromium is not installed or
`emqlite ui` is not in this build.
Usage: EMQLITE=./emqlite python3 web_e2e.py [SHOTS]
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

EMQ = os.environ.get("EMQLITE", os.path.join(os.getcwd(), "emqlite"))
SHOTS = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "web-shots")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + str(detail) if detail else ""))


def tool(db, *args, stdin=None):
    r = subprocess.run([EMQ, "--db", db, "--json"] + list(args), input=stdin,
                       capture_output=True, text=True, timeout=30)
    if r.returncode not in (0,):
        raise RuntimeError("emqlite %s: %s %s" % (args, r.returncode,
                                                   r.stderr))
    return json.loads(r.stdout) if r.stdout.strip() else None


class Browser:
    """Chromium's DevTools protocol over --remote-debugging-pipe."""

    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # the child reads commands on fd 3 and writes replies on fd 4
        def fds():
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--user-data-dir=" + profile, "--remote-debugging-pipe",
             "about:blank"],
            # close_fds runs after preexec_fn: keep 3 and 4 by number
            preexec_fn=fds, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(raw)
                if m.get("id") == self.next_id:
                    if "error" in m:
                        raise RuntimeError("%s: %s" % (method, m["error"]))
                    return m.get("result", {})
            import select
            r, _, _ = select.select([self.from_child], [], [], 0.5)
            if r:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
        raise RuntimeError("%s: no answer in %ss" % (method, timeout))

    def open(self, url):
        t = self.send("Target.createTarget", {"url": "about:blank"},
                      session=False)
        a = self.send("Target.attachToTarget",
                      {"targetId": t["targetId"], "flatten": True},
                      session=False)
        self.session = a["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 860, "deviceScaleFactor": 1,
                   "mobile": False})
        self.go(url)

    def go(self, url):
        self.send("Page.navigate", {"url": url})

    def eval(self, expr):
        r = self.send("Runtime.evaluate",
                      {"expression": expr, "returnByValue": True})
        return r.get("result", {}).get("value")

    def wait(self, expr, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                v = self.eval(expr)
            except RuntimeError:
                v = None
            if v:
                return v
            time.sleep(0.1)
        return None

    def shot(self, path):
        r = self.send("Page.captureScreenshot", {"format": "png"})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("web_e2e: chromium is not installed (apt-get install "
              "chromium): skipped")
        return 77
    if not os.access(EMQ, os.X_OK):
        print("web_e2e: %s not found (run from the build directory)" % EMQ,
              file=sys.stderr)
        return 1
    r = subprocess.run([EMQ, "ui", "--help"], capture_output=True)
    work = tempfile.mkdtemp(prefix="emq-web-e2e.")
    db = os.path.join(work, "e2e.db")
    probe = subprocess.run([EMQ, "--db", db, "ui", "--listen", "bad"],
                           capture_output=True, text=True)
    if probe.returncode == 10:
        print("web_e2e: emqlite ui is not in this build (no "
              "libmicrohttpd): skipped")
        return 77
    os.makedirs(SHOTS, exist_ok=True)
    server = browser = None
    try:
        # the file: two queues, JSON and hostile payloads, a dead job
        ids = [tool(db, "enqueue", "mail",
                    json.dumps({"to": "user%d@example.com" % i, "n": i}))["id"]
               for i in range(30)]
        hostile = tool(db, "enqueue", "mail",
                       '<img src=x onerror="window.__xss=1">')["id"]
        doomed = tool(db, "enqueue", "billing",
                      '{"invoice": 42, "amount": "12.50"}')["id"]
        c = tool(db, "claim", "billing")
        tool(db, "retry", "billing", c["id"], str(c["attempts"]), "--max",
             "1", "--error", "card declined")
        done = tool(db, "enqueue", "billing", '{"invoice": 43}')["id"]
        c = tool(db, "claim", "billing")
        tool(db, "complete", "billing", c["id"], str(c["attempts"]))
        group = "PRT0KHTOWnGLuC"
        for i in range(3):
            tool(db, "lane", "enqueue", "tenants", group, "job %d" % i)
        tool(db, "stream", "add", "mail", "audit", "k", "v")
        tool(db, "group", "create", "mail", "audit", "billing")
        tool(db, "pause", "mail")
        del done

        server = subprocess.Popen([EMQ, "--db", db, "--json", "ui", "--listen",
                                   "127.0.0.1:0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = server.stdout.readline()
        info = json.loads(line)
        base = info["url"].rstrip("/")
        check("emqlite ui listens on loopback",
              info["listen"].startswith("127.0.0.1:"), line)

        browser = Browser(chromium, os.path.join(work, "profile"))
        browser.open(base + "/#/")
        rows = browser.wait("document.querySelectorAll('#queues tbody tr')"
                            ".length")
        check("overview lists the queues", rows == 3, rows)
        check("overview shows mail paused", browser.eval(
            "document.querySelector('tr[data-queue=mail]').textContent"
            ".includes('paused')"))
        check("overview shows the dead job", browser.eval(
            "document.querySelector('tr[data-queue=billing] td:nth-child(5)')"
            ".textContent") == "1")
        check("overview draws the per-minute plots (completed, dead, "
              "retried per queue)", browser.eval(
            "document.querySelectorAll('svg.spark polyline').length") == 9)
        browser.shot(os.path.join(SHOTS, "overview.png"))

        browser.go(base + "/#/q/mail")
        n = browser.wait("document.querySelectorAll('#jobs tbody tr').length")
        check("the queue page pages 50 jobs at most", n == 31, n)
        check("a payload's markup is shown as text", browser.wait(
            "Array.from(document.querySelectorAll('#jobs td')).some(function"
            "(t){return t.textContent.indexOf('<img src=x') === 0})"))
        browser.go(base + "/#/q/mail?prefix=%7B%22to%22%3A%20%22user1")
        n = browser.wait("location.hash.includes('prefix') && "
                         "document.querySelectorAll('#jobs tbody tr').length"
                         " === 11 && 11")
        check("payload-prefix search", n == 11, n)

        browser.go(base + "/#/q/mail/job/" + hostile)
        check("the hostile job page renders", browser.wait(
            "document.querySelector('#payload') && document.querySelector("
            "'#payload').textContent.includes('onerror')"))
        check("its markup never ran", browser.eval(
            "window.__xss === undefined && !document.querySelector("
            "'main img')"))

        browser.go(base + "/#/q/billing/job/" + doomed)
        check("the dead job page shows its error", browser.wait(
            "document.querySelector('#last-error') && document.querySelector"
            "('#last-error').textContent") == "card declined")
        check("the JSON payload is pretty-printed", "\n  \"invoice\": 42" in (
            browser.eval("document.querySelector('#payload').textContent")
            or ""))
        hist = browser.wait(
            "document.querySelectorAll('#history li').length >= 3 && "
            "Array.from(document.querySelectorAll('#history li'))"
            ".map(function (l) { return l.textContent; }).join('\\n')") or ""
        check("the dead job page shows its history, ending in its death",
              "enqueued" in hist and "claimed" in hist and
              "dead" in hist.splitlines()[-1] and
              "card declined" in hist.splitlines()[-1], hist)
        browser.shot(os.path.join(SHOTS, "job.png"))
        browser.eval("document.querySelector('button[data-action=retry]')"
                     ".click()")
        res = browser.wait("document.querySelector('#result').textContent")
        check("clicking retry shows its result", res == "retry %s: requeued"
              % doomed, res)
        st = tool(db, "job", "billing", doomed)
        check("the job is pending again", "pending" in json.dumps(st), st)
        browser.wait("document.querySelector('.badge') && document."
                     "querySelector('.badge').textContent === 'pending'")
        browser.shot(os.path.join(SHOTS, "job-after-retry.png"))

        browser.go(base + "/#/q/tenants/lanes")
        check("the lanes page", browser.wait(
            "document.querySelector('#lanes tbody tr') && document."
            "querySelector('#lanes tbody tr').textContent.includes('" +
            group + "')"))
        browser.go(base + "/#/q/mail/streams")
        check("the streams page", browser.wait(
            "document.querySelector('main h2') && document.querySelector("
            "'main h2').textContent === 'stream audit'"))
        browser.go(base + "/#/events")
        check("the live event log", browser.wait(
            "document.querySelectorAll('#events tbody tr').length >= 2"))
        browser.go(base + "/#/q/bad%20name")
        check("a bad queue name shows the rule", "a queue name is" in (
            browser.wait("document.querySelector('#error') && document."
                         "querySelector('#error').textContent") or ""))
        print("web_e2e: screenshots in " + SHOTS)
    except Exception as e:  # a broken run is a failure, with its reason
        check("the run completed", False, repr(e))
    finally:
        if browser:
            browser.close()
        if server:
            server.terminate()
            try:
                server.wait(timeout=10)
                check("emqlite ui stops on SIGTERM with 0",
                      server.returncode == 0, server.returncode)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
                check("emqlite ui stops on SIGTERM", False)
        shutil.rmtree(work, ignore_errors=True)
    print("web_e2e: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

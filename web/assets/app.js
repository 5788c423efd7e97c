// app.js — the emqlite dashboard (doc/WEB.md). Every value from the
// file reaches the page through textContent or an attribute set by the
// DOM (never parsed as markup), so payloads and errors cannot inject markup.
"use strict";
(function () {
  var session = { csrf: "", read_only: true, history: "off" };
  var timer = null;
  var main = document.getElementById("main");

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "on") e.addEventListener("click", attrs[k]);
      else e.setAttribute(k, attrs[k]);
    });
    (kids || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function bytes(v) {           // a JSON value of the API: text or {b64}
    if (v === null || v === undefined) return "";
    if (typeof v === "object" && v.b64 !== undefined) return "base64:" + v.b64;
    return String(v);
  }
  function iso(ms) {
    if (ms === null || ms === undefined) return "";
    try { return new Date(ms).toISOString(); } catch (e) { return String(ms); }
  }
  function enc(s) { return encodeURIComponent(s); }
  function link(href, text) { return el("a", { href: href, text: text }); }

  function api(path) {
    return fetch(path, { credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error((j && j.message) || ("HTTP " + r.status));
        return j;
      });
    });
  }
  function result(text, bad) {
    var r = document.getElementById("result");
    r.textContent = text;
    r.className = bad ? "error" : "";
  }
  function post(path, label) {
    return fetch(path, { method: "POST", credentials: "same-origin",
                         headers: { "X-CSRF-Token": session.csrf } })
      .then(function (r) {
        return r.json().then(function (j) {
          if (!r.ok) { result(label + ": refused — " + j.message, true); return; }
          var t = label + ": " + j.result;
          if (j.count !== undefined) t += " (" + j.count + " jobs";
          if (j.skipped !== undefined) t += ", " + j.skipped + " skipped";
          if (j.count !== undefined) t += ")";
          result(t, false);
          render();
        });
      }).catch(function (e) { result(label + ": " + e.message, true); });
  }
  function actionButton(text, path, label, cls) {
    var b = el("button", { type: "button", "data-action": text,
                           text: text, on: function () { post(path, label); } });
    if (cls) b.className = cls;
    if (session.read_only) { b.disabled = true; b.title = "read-only"; }
    return b;
  }

  // A sparkline of completions and failures per minute (inline SVG).
  function spark(pm) {
    var ns = "http://www.w3.org/2000/svg", w = 120, h = 24;
    var s = document.createElementNS(ns, "svg");
    s.setAttribute("class", "spark");
    s.setAttribute("width", w); s.setAttribute("height", h);
    s.setAttribute("viewBox", "0 0 " + w + " " + h);
    var max = 1;
    var retried = pm.retried || [];
    pm.completed.concat(pm.failed, retried).forEach(function (v) { if (v > max) max = v; });
    [["completed", "done"], ["failed", "fail"], ["retried", "retry"]].forEach(function (p) {
      if (!pm[p[0]]) return;
      var pts = pm[p[0]].map(function (v, i) {
        return (i * w / (pm[p[0]].length - 1)).toFixed(1) + "," +
               (h - 1 - v * (h - 2) / max).toFixed(1);
      }).join(" ");
      var l = document.createElementNS(ns, "polyline");
      l.setAttribute("points", pts);
      l.setAttribute("class", p[1]);
      s.appendChild(l);
    });
    var t = document.createElementNS(ns, "title");
    var sum = function (a) { return a.reduce(function (x, y) { return x + y; }, 0); };
    t.textContent = sum(pm.completed) + " completed, " + sum(pm.failed) +
      " dead-lettered, " + sum(retried) + " retried in the last " +
      pm.completed.length + " minutes";
    s.appendChild(t);
    return s;
  }

  function overview() {
    return api("api/overview").then(function (o) {
      var rows = o.queues.map(function (q) {
        var qh = "#/q/" + enc(q.name);
        return el("tr", { "data-queue": q.name }, [
          el("td", null, [link(qh, q.name), " ",
            q.paused ? el("span", { "class": "badge paused", text: "paused" }) : null]),
          el("td", { "class": "n", text: String(q.pending) }),
          el("td", { "class": "n", text: String(q.active) }),
          el("td", { "class": "n", text: String(q.scheduled) }),
          el("td", { "class": "n" }, [q.dead ? link(qh + "?state=dead", String(q.dead)) : "0"]),
          el("td", { "class": "n", text: String(q.completed) }),
          el("td", { "class": "n", text: String(q.failed) }),
          el("td", { "class": "n" }, [q.lanes ? link(qh + "/lanes", q.lanes + " (" + q.lane_jobs + " jobs)") : "0"]),
          el("td", null, [spark(q.per_minute)]),
          el("td", null, [
            q.paused ? actionButton("resume", "api/queues/" + enc(q.name) + "/resume", "resume " + q.name)
                     : actionButton("pause", "api/queues/" + enc(q.name) + "/pause", "pause " + q.name),
            " ",
            q.dead ? actionButton("requeue dead", "api/queues/" + enc(q.name) + "/requeue-dead", "requeue dead of " + q.name) : null])
        ]);
      });
      clear(main);
      main.appendChild(el("h1", { text: "Queues" }));
      if (!rows.length) { main.appendChild(el("p", { "class": "muted", text: "No queue has keys in this file yet." })); return; }
      main.appendChild(el("table", { id: "queues" }, [
        el("thead", null, [el("tr", null, ["queue", "pending", "active", "scheduled", "dead",
          "completed", "failed", "lanes", "per minute (" + o.minutes + " min)", ""].map(function (h, i) {
            return el("th", { "class": i > 0 && i < 8 ? "n" : "", text: h }); }))]),
        el("tbody", null, rows)]));
    });
  }

  function tabs(q, on) {
    var qh = "#/q/" + enc(q);
    var items = [["pending", qh], ["active", qh + "?state=active"],
      ["scheduled", qh + "?state=scheduled"], ["dead", qh + "?state=dead"],
      ["completed", qh + "?state=completed"],
      ["lanes", qh + "/lanes"], ["streams", qh + "/streams"]];
    return el("div", { "class": "tabs" }, items.map(function (t) {
      var a = link(t[1], t[0]);
      if (t[0] === on) a.className = "on";
      return a;
    }));
  }

  function queuePage(q, params) {
    var state = params.state || "pending";
    var qs = "state=" + enc(state) + "&limit=50";
    if (params.group) qs += "&group=" + enc(params.group);
    if (params.after) qs += "&after=" + enc(params.after);
    if (params.prefix) qs += "&prefix=" + enc(params.prefix);
    return Promise.all([api("api/queues/" + enc(q)),
                        api("api/queues/" + enc(q) + "/jobs?" + qs)]).then(function (r) {
      var s = r[0], page = r[1];
      clear(main);
      main.appendChild(el("h1", null, [q + " ",
        s.paused ? el("span", { "class": "badge paused", text: "paused" }) : null]));
      main.appendChild(tabs(q, params.group ? "lanes" : state));
      var idBox = el("input", { placeholder: "job id", size: "16", id: "find-id" });
      var pBox = el("input", { placeholder: "payload prefix", size: "24", id: "find-prefix" });
      pBox.value = params.prefix || "";
      main.appendChild(el("div", { "class": "row" }, [
        el("span", { text: s.pending + " pending · " + s.active + " active · " +
          s.scheduled + " scheduled · " + s.dead + " dead" }),
        idBox, el("button", { type: "button", text: "open job", on: function () {
          location.hash = "#/q/" + enc(q) + "/job/" + enc(idBox.value.trim()); } }),
        pBox, el("button", { type: "button", text: "search", on: function () {
          var h = "#/q/" + enc(q) + "?state=" + enc(state);
          if (params.group) h += "&group=" + enc(params.group);
          if (pBox.value) h += "&prefix=" + enc(pBox.value);
          location.hash = h; } }),
        state === "dead" && s.dead ? actionButton("requeue all dead",
          "api/queues/" + enc(q) + "/requeue-dead", "requeue dead of " + q) : null,
        state === "dead" && s.dead ? actionButton("requeue dead older than 1 h",
          "api/queues/" + enc(q) + "/requeue-dead?older_than=3600000", "requeue dead older than 1 h of " + q) : null]));
      var timeHead = state === "active" ? "lease deadline" : state === "scheduled" ? "run at"
        : state === "completed" ? "finished" : "";
      var rows = page.jobs.map(function (j) {
        return el("tr", { "data-job": j.id }, [
          el("td", { "class": "mono" }, [link("#/q/" + enc(q) + "/job/" + enc(j.id), j.id)]),
          el("td", { "class": "mono", text: timeHead ? iso(j.score) : "" }),
          el("td", { "class": "n", text: j.attempts === null ? "" : String(j.attempts) }),
          el("td", { "class": "mono", text: bytes(j.preview) }),
          el("td", { "class": "mono", text: bytes(j.last_error) })]);
      });
      main.appendChild(el("table", { id: "jobs" }, [
        el("thead", null, [el("tr", null, ["id", timeHead, "attempts", "payload", "last error"].map(function (h) {
          return el("th", { text: h }); }))]),
        el("tbody", null, rows)]));
      var nav = el("div", { "class": "row" });
      if (!page.jobs.length) nav.appendChild(el("span", { "class": "muted", text: "No jobs here." }));
      if (params.prefix) nav.appendChild(el("span", { "class": "muted", text: page.scanned + " jobs read for this page" }));
      if (params.after) nav.appendChild(link("#/q/" + enc(q) + "?state=" + enc(state) +
        (params.group ? "&group=" + enc(params.group) : "") +
        (params.prefix ? "&prefix=" + enc(params.prefix) : ""), "first page"));
      if (page.next) nav.appendChild(link("#/q/" + enc(q) + "?state=" + enc(state) +
        (params.group ? "&group=" + enc(params.group) : "") +
        (params.prefix ? "&prefix=" + enc(params.prefix) : "") +
        "&after=" + enc(page.next), "next page"));
      main.appendChild(nav);
    });
  }

  function pretty(v) {
    var t = bytes(v);
    try { var j = JSON.parse(t); if (typeof j === "object" && j !== null) return JSON.stringify(j, null, 2); }
    catch (e) { /* not JSON: shown as it is */ }
    return t;
  }

  function jobPage(q, id) {
    return api("api/queues/" + enc(q) + "/jobs/" + enc(id)).then(function (j) {
      clear(main);
      var qh = "#/q/" + enc(q);
      main.appendChild(el("h1", null, [link(qh, q), " / ", el("span", { "class": "mono", text: j.id })]));
      var dl = el("dl", { id: "job" });
      function row(k, v) { if (v === null || v === undefined || v === "") return;
        dl.appendChild(el("dt", { text: k })); dl.appendChild(el("dd", null, [v])); }
      row("state", el("span", { "class": "badge " + j.state, text: j.state }));
      row("attempts", bytes(j.attempts));
      row("last error", j.last_error === null ? null : el("span", { "class": "mono", id: "last-error", text: bytes(j.last_error) }));
      row("lease deadline", j.deadline !== undefined ? iso(j.deadline) : null);
      row("run at", j.run_at !== undefined ? iso(j.run_at) : null);
      row("lane", j.group === null ? null : bytes(j.group));
      row("progress", j.progress === null ? null : bytes(j.progress));
      row("finished", j.kept_at !== undefined ? iso(j.kept_at) + " (kept after it left the queue)" : null);
      row("result", j.result === undefined || j.result === null ? null : el("span", { "class": "mono", id: "job-result", text: bytes(j.result) }));
      if (j.parent !== null) {
        var pq = j.parent_queue !== null ? bytes(j.parent_queue) : q;
        row("flow parent", link("#/q/" + enc(pq) + "/job/" + enc(bytes(j.parent)), bytes(j.parent) + (pq !== q ? " (" + pq + ")" : "")));
      }
      row("locked", j.locked ? "yes" : null);
      main.appendChild(dl);
      main.appendChild(el("div", { "class": "row" }, [
        j.state === "dead" ? actionButton("retry", "api/queues/" + enc(q) + "/jobs/" + enc(id) + "/retry", "retry " + id) : null,
        j.state === "scheduled" ? actionButton("run now", "api/queues/" + enc(q) + "/jobs/" + enc(id) + "/run-now", "run now " + id) : null,
        j.row ? actionButton("remove", "api/queues/" + enc(q) + "/jobs/" + enc(id) + "/remove", "remove " + id, "danger") : null]));
      main.appendChild(el("h2", { text: "Payload" }));
      main.appendChild(el("pre", { id: "payload", text: pretty(j.payload) }));
      if (j.flow && j.flow.length) {
        main.appendChild(el("h2", { text: "Flow" }));
        main.appendChild(el("ul", { "class": "tree", id: "flow" }, j.flow.map(function (n) {
          var li = el("li", null, [link("#/q/" + enc(n.queue || q) + "/job/" + enc(bytes(n.id)), bytes(n.id)),
            " ", el("span", { "class": "muted", text: [n.queue, n.state, n.outcome].filter(Boolean).join(" · ") })]);
          li.style.paddingLeft = ((n.level - 1) * 1.5) + "em";
          return li; })));
      }
      main.appendChild(el("h2", { text: "History" }));
      main.appendChild(j.history && j.history.length ? el("ul", { id: "history" }, j.history.map(function (h) {
        var t = [iso(h.at), h.kind];
        if (h.attempts !== null) t.push("attempt " + h.attempts);
        if (h.delay_ms !== undefined) t.push("delay " + h.delay_ms + " ms");
        if (h.run_at !== undefined) t.push("run at " + iso(h.run_at));
        if (h.error !== null) t.push("error: " + bytes(h.error));
        if (h.host) t.push("by " + h.host + " pid " + h.pid + (h.worker ? " " + h.worker : ""));
        return el("li", { text: t.join(" · ") }); }))
        : el("p", { "class": "muted", text: session.history === "off" ? "The job history is off (emqlite history --on)."
          : session.history === "failures" ? "Nothing recorded: the history keeps failures only, and none happened to this job."
          : "No history recorded for this job." }));
      if (j.logs && j.logs.length) {
        main.appendChild(el("h2", { text: "Logs" }));
        main.appendChild(el("pre", { id: "logs", text: j.logs.map(bytes).join("\n") }));
      }
      main.appendChild(el("h2", { text: "Row" }));
      main.appendChild(el("table", null, [el("tbody", null, j.fields.map(function (f) {
        return el("tr", null, [el("td", { "class": "mono", text: bytes(f[0]) }),
                               el("td", { "class": "mono", text: bytes(f[1]) })]); }))]));
    });
  }

  function lanesPage(q) {
    return api("api/queues/" + enc(q) + "/lanes").then(function (l) {
      clear(main);
      main.appendChild(el("h1", { text: q }));
      main.appendChild(tabs(q, "lanes"));
      main.appendChild(el("p", { "class": "muted", text: l.total + " lanes" }));
      main.appendChild(el("table", { id: "lanes" }, [
        el("thead", null, [el("tr", null, ["group", "depth", "in flight", "limit", "weight", ""].map(function (h) {
          return el("th", { text: h }); }))]),
        el("tbody", null, l.lanes.map(function (g) {
          var base = "api/queues/" + enc(q) + "/lanes/" + enc(g.group);
          return el("tr", null, [
            el("td", { "class": "mono" }, [link("#/q/" + enc(q) + "?state=lane&group=" + enc(g.group), g.group), " ",
              g.paused ? el("span", { "class": "badge paused", text: "paused" }) : null]),
            el("td", { "class": "n", text: String(g.depth) }),
            el("td", { "class": "n", text: String(g.in_flight) }),
            el("td", { "class": "n", text: g.limit === null ? "none" : String(g.limit) }),
            el("td", { "class": "n", text: String(g.weight) }),
            el("td", null, [g.paused ? actionButton("resume", base + "/resume", "resume lane " + g.group)
                                     : actionButton("pause", base + "/pause", "pause lane " + g.group)])]); }))]));
    });
  }

  function streamsPage(q) {
    return api("api/queues/" + enc(q) + "/streams").then(function (s) {
      clear(main);
      main.appendChild(el("h1", { text: q }));
      main.appendChild(tabs(q, "streams"));
      if (!s.streams.length) main.appendChild(el("p", { "class": "muted", text: "No streams in this queue." }));
      s.streams.forEach(function (x) {
        main.appendChild(el("h2", { text: "stream " + bytes(x.name) }));
        main.appendChild(el("p", { "class": "muted", text: x.length + " entries, first " + x.first + ", last " + x.last + ", " + x.added + " added" }));
        main.appendChild(el("table", null, [
          el("thead", null, [el("tr", null, ["group", "last delivered", "lag", "pending", "consumers (pending, idle ms)"].map(function (h) {
            return el("th", { text: h }); }))]),
          el("tbody", null, x.groups.map(function (g) {
            return el("tr", null, [el("td", { text: bytes(g.name) }), el("td", { "class": "mono", text: g.last_delivered }),
              el("td", { "class": "n", text: g.lag === null ? "?" : String(g.lag) }),
              el("td", { "class": "n", text: String(g.pending) }),
              el("td", { text: g.consumers.map(function (c) { return bytes(c.name) + " (" + c.pending + ", " + c.idle + ")"; }).join(", ") })]); }))]));
      });
    });
  }

  var evCursor = null;
  function eventsPage(first) {
    if (first) {
      evCursor = null;
      clear(main);
      main.appendChild(el("h1", { text: "Events (live)" }));
      main.appendChild(el("table", { id: "events" }, [
        el("thead", null, [el("tr", null, ["seq", "at", "queue", "event", "job", "message"].map(function (h) {
          return el("th", { text: h }); }))]), el("tbody")]));
    }
    var path = "api/events?limit=100" + (evCursor !== null ? "&after=" + evCursor : "");
    return api(path).then(function (e) {
      evCursor = e.cursor;
      var tb = document.querySelector("#events tbody");
      if (!tb) return;
      e.events.forEach(function (v) {
        tb.insertBefore(el("tr", null, [el("td", { "class": "n", text: String(v.seq) }),
          el("td", { "class": "mono", text: iso(v.at) }),
          el("td", null, [link("#/q/" + enc(bytes(v.queue)), bytes(v.queue))]),
          el("td", { text: bytes(v.event) }),
          el("td", { "class": "mono" }, [link("#/q/" + enc(bytes(v.queue)) + "/job/" + enc(bytes(v.job)), bytes(v.job))]),
          el("td", { "class": "mono", text: bytes(v.message) })]), tb.firstChild);
      });
      while (tb.children.length > 500) tb.removeChild(tb.lastChild);
    });
  }

  function parseHash() {
    var h = location.hash.replace(/^#/, "") || "/";
    var qi = h.indexOf("?"), params = {};
    if (qi >= 0) {
      h.slice(qi + 1).split("&").forEach(function (kv) {
        var p = kv.split("=");
        if (p[0]) params[decodeURIComponent(p[0])] = decodeURIComponent(p[1] || "");
      });
      h = h.slice(0, qi);
    }
    return { parts: h.split("/").filter(Boolean).map(decodeURIComponent), params: params };
  }

  function render() {
    var r = parseHash(), p = r.parts, work;
    if (timer) { clearInterval(timer); timer = null; }
    if (p.length === 0) { work = overview(); timer = setInterval(function () { overview().catch(function () {}); }, 5000); }
    else if (p[0] === "events") { work = eventsPage(true); timer = setInterval(function () { eventsPage(false).catch(function () {}); }, 2000); }
    else if (p[0] === "q" && p.length === 2) work = queuePage(p[1], r.params);
    else if (p[0] === "q" && p.length === 3 && p[2] === "lanes") work = lanesPage(p[1]);
    else if (p[0] === "q" && p.length === 3 && p[2] === "streams") work = streamsPage(p[1]);
    else if (p[0] === "q" && p.length === 4 && p[2] === "job") work = jobPage(p[1], p[3]);
    else { clear(main); main.appendChild(el("p", { text: "No such page." })); return; }
    work.catch(function (e) {
      clear(main);
      main.appendChild(el("p", { "class": "error", id: "error", text: e.message }));
    });
  }

  api("api/session").then(function (s) {
    session = s;
    document.getElementById("mode").textContent =
      "emqlite " + s.version + (s.read_only ? " · read-only" : "");
    window.addEventListener("hashchange", function () { result(""); render(); });
    render();
  }).catch(function (e) {
    main.textContent = "Cannot reach the dashboard's API: " + e.message;
  });
})();

// The HTML report's filters, search and diff views. Filters live in the URL's
// fragment (#category=add,modify&kind=Deployment&q=web), so a view can be linked.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var objects = Array.prototype.slice.call(document.querySelectorAll("details.obj"));
  var shown = document.getElementById("shown");
  var started = performance.now();

  function state() {
    var cats = {};
    form.querySelectorAll("input[name=category]").forEach(function (c) { if (c.checked) cats[c.value] = true; });
    return {
      cats: cats,
      kind: form.kind.value,
      namespace: form.namespace.value,
      risky: form.risky.checked,
      q: form.q.value.trim().toLowerCase(),
      view: form.view.value
    };
  }

  function apply(keepHash) {
    var t0 = performance.now();
    var s = state(), n = 0;
    for (var i = 0; i < objects.length; i++) {
      var o = objects[i], d = o.dataset;
      var show = !!s.cats[d.category] &&
        (!s.kind || d.kind === s.kind) &&
        (!s.namespace || d.namespace === s.namespace) &&
        (!s.risky || d.risky === "1") &&
        (!s.q || d.search.indexOf(s.q) >= 0);
      if (o.hidden === show) o.hidden = !show;
      if (show) n++;
    }
    shown.value = n + " of " + objects.length + " objects shown";
    document.body.dataset.shown = n;
    void document.body.offsetHeight; // the layout the filter causes counts too
    document.body.dataset.filterMs = (performance.now() - t0).toFixed(1);
    if (!keepHash) writeHash(s);
  }

  function writeHash(s) {
    var parts = ["category=" + Object.keys(s.cats).join(",")];
    if (s.kind) parts.push("kind=" + encodeURIComponent(s.kind));
    if (s.namespace) parts.push("namespace=" + encodeURIComponent(s.namespace));
    if (s.risky) parts.push("risky=1");
    if (s.q) parts.push("q=" + encodeURIComponent(s.q));
    if (s.view !== "unified") parts.push("view=" + s.view);
    var h = "#" + parts.join("&");
    if (location.hash !== h && history.replaceState) history.replaceState(null, "", h);
  }

  function readHash() {
    var h = location.hash.replace(/^#/, "");
    if (h.indexOf("=") < 0) return false;
    h.split("&").forEach(function (p) {
      var kv = p.split("="), k = kv[0], v = decodeURIComponent(kv.slice(1).join("="));
      if (k === "category") {
        var want = {};
        v.split(",").forEach(function (c) { want[c] = true; });
        form.querySelectorAll("input[name=category]").forEach(function (c) { c.checked = !!want[c.value]; });
      } else if (k === "risky") {
        form.risky.checked = v === "1";
      } else if (k === "kind" || k === "namespace" || k === "q" || k === "view") {
        // Only the filters' own fields: form[k] of any other name from a link may be
        // one of the form's properties (action, method), which strict mode refuses to set.
        form[k].value = v;
      }
    });
    return true;
  }

  // Diffs are coloured, and laid side by side, when first opened.
  function render(o) {
    var pre = o.querySelector("pre.diff");
    if (!pre) return;
    if (!pre.dataset.text) pre.dataset.text = pre.textContent;
    var lines = pre.dataset.text.replace(/\n$/, "").split("\n");
    var view = form.view.value;
    var old = o.querySelector("table.split");
    if (old) old.remove();
    if (view === "split") {
      pre.hidden = true;
      o.querySelector(".body").appendChild(split(lines));
      return;
    }
    pre.hidden = false;
    if (pre.dataset.coloured) return;
    pre.textContent = "";
    lines.forEach(function (l) {
      var span = document.createElement("span");
      span.textContent = l;
      var c = l.charAt(0);
      span.className = l.indexOf("+++") === 0 || l.indexOf("---") === 0 ? "l-head" : c === "@" ? "l-hunk" : c === "+" ? "l-add" : c === "-" ? "l-del" : "";
      pre.appendChild(span);
    });
    pre.dataset.coloured = "1";
  }

  function split(lines) {
    var table = document.createElement("table");
    table.className = "split";
    var ln = 0, rn = 0, dels = [], adds = [];
    function cell(row, text, cls) {
      var td = row.insertCell();
      td.textContent = text;
      if (cls) td.className = cls;
    }
    function flush() {
      for (var i = 0; i < Math.max(dels.length, adds.length); i++) {
        var row = table.insertRow();
        var d = dels[i], a = adds[i];
        cell(row, d ? String(++ln) : "", "n");
        cell(row, d ? d.slice(1) : "", d ? "l-del" : "");
        cell(row, a ? String(++rn) : "", "n");
        cell(row, a ? a.slice(1) : "", a ? "l-add" : "");
      }
      dels = []; adds = [];
    }
    lines.forEach(function (l) {
      if (l.indexOf("+++") === 0 || l.indexOf("---") === 0) return;
      var c = l.charAt(0);
      if (c === "@") {
        flush();
        var m = /-(\d+)(?:,\d+)? \+(\d+)/.exec(l);
        if (m) { ln = Number(m[1]) - 1; rn = Number(m[2]) - 1; if (ln < 0) ln = 0; if (rn < 0) rn = 0; }
        var row = table.insertRow();
        var td = row.insertCell();
        td.colSpan = 4; td.textContent = l; td.className = "l-hunk";
        return;
      }
      if (c === "-") { dels.push(l); return; }
      if (c === "+") { adds.push(l); return; }
      flush();
      var r = table.insertRow();
      cell(r, String(++ln), "n"); cell(r, l.slice(1), "");
      cell(r, String(++rn), "n"); cell(r, l.slice(1), "");
    });
    flush();
    return table;
  }

  document.addEventListener("toggle", function (e) {
    if (e.target.classList && e.target.classList.contains("obj") && e.target.open) render(e.target);
  }, true);
  form.addEventListener("input", function (e) {
    if (e.target.name === "view") {
      objects.forEach(function (o) { if (o.open) render(o); });
    }
    apply(false);
  });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  // A link to an object opens it, and shows it whatever the filters.
  function reveal(hash) {
    var id = (typeof hash === "string" ? hash : location.hash).replace(/^#/, "");
    if (!id || id.indexOf("=") >= 0) return;
    var o = document.getElementById(id);
    if (o && o.classList.contains("obj")) { o.hidden = false; o.open = true; o.scrollIntoView(); }
  }
  window.addEventListener("hashchange", reveal);
  var initial = location.hash;
  var linked = readHash();
  apply(true);
  if (!linked) reveal(initial);
  document.querySelectorAll("details.obj[open]").forEach(render);
  void document.body.offsetHeight;
  // From navigation to here: parsing the page, this script, the first layout.
  document.body.dataset.openMs = performance.now().toFixed(0);
  document.body.dataset.scriptMs = (performance.now() - started).toFixed(1);
  document.body.dataset.ready = "1";
})();

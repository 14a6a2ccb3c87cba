// Dashboard: live delivery status. The pages are complete without this;
// it listens to /dashboard/events (server-sent events of the project's
// delivery events) and updates what is on screen: a notification's status
// and attempts, or the statuses in the notifications list.
(function () {
  "use strict";
  if (!window.EventSource || !window.fetch || !window.DOMParser) { return; }
  var root = document.documentElement;
  var uuidEl = document.getElementById("uuid");
  var list = document.getElementById("all");
  if (!uuidEl && !list) { return; }

  // A small indicator next to the heading: live, reconnecting or off.
  var h1 = document.querySelector("main h1");
  var badge = document.createElement("span");
  badge.id = "live";
  badge.className = "live";
  badge.setAttribute("role", "status");
  if (h1) { h1.appendChild(document.createTextNode(" ")); h1.appendChild(badge); }
  var state = function (s, text) {
    root.dataset.live = s;
    badge.className = "live live-" + s;
    badge.textContent = text;
  };
  state("connecting", "connecting…");

  var setStatus = function (el, status) {
    if (!el || !status) { return; }
    el.textContent = status;
    el.className = "badge st-" + status;
  };

  // The server's page is the one rendering of a notification: fetch it
  // and swap the parts that change. Refreshes never overlap; one asked
  // for during another runs after it.
  var busy = false, again = false;
  var swap = function (doc, id) {
    var now = document.getElementById(id), next = doc.getElementById(id);
    if (now && next) { now.replaceWith(document.importNode(next, true)); }
  };
  var attemptsBlock = function (doc) {
    var t = doc.getElementById("attempts");
    return t ? t.closest(".scroll") : doc.getElementById("no-attempts");
  };
  var refresh = function () {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { cache: "no-store", credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) {
        if (!r.ok || r.redirected) { throw new Error(String(r.status)); }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        ["facts", "resend-rule", "headers-note", "headers"].forEach(function (id) { swap(doc, id); });
        var now = attemptsBlock(document), next = attemptsBlock(doc);
        if (now && next) { now.replaceWith(document.importNode(next, true)); }
      })
      .catch(function () { /* the page stays as it was; the next event retries */ })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  };

  var note = null;
  var newArrived = function () {
    if (note || !list) { return; }
    note = document.createElement("p");
    note.id = "live-note";
    note.className = "live-note";
    note.setAttribute("role", "status");
    note.appendChild(document.createTextNode("New notifications arrived. "));
    var a = document.createElement("a");
    a.href = location.href;
    a.textContent = "Reload";
    note.appendChild(a);
    list.parentNode.insertBefore(note, list);
  };

  var url = "/dashboard/events";
  if (uuidEl) { url += "?uuid=" + encodeURIComponent(uuidEl.textContent.trim()); }
  var es = new EventSource(url);
  es.addEventListener("open", function () {
    state("open", "live");
    // Whatever happened before the stream opened is in the page fetched
    // now; whatever happens after comes as events.
    if (uuidEl) { refresh(); }
  });
  es.addEventListener("error", function () {
    if (es.readyState === EventSource.CLOSED) {
      state("off", "not live: reload to see changes");
    } else {
      state("connecting", "reconnecting…");
    }
  });
  es.addEventListener("end", function () {
    es.close();
    state("off", "signed out: not live");
  });
  es.addEventListener("delivery", function (m) {
    var ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    if (uuidEl) {
      setStatus(document.getElementById("n-status"), ev.delivery_status);
      refresh();
      return;
    }
    var rows = document.querySelectorAll('tr[data-uuid="' + CSS.escape(ev.uuid) + '"]');
    if (rows.length === 0) {
      if (ev.kind === "created") { newArrived(); }
      return;
    }
    rows.forEach(function (row) {
      row.className = "st-" + ev.delivery_status;
      setStatus(row.querySelector(".badge"), ev.delivery_status);
      var n = row.querySelector('[data-col="attempts"]');
      if (n && ev.kind === "attempt" && ev.attempt > Number(n.textContent)) { n.textContent = String(ev.attempt); }
      row.classList.add("live-changed");
    });
  });
})();

// Hosted payment pages: live status, countdown, copy buttons, redirect on
// paid. Everything essential is in the HTML already; this only enhances.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var body = document.body;
  // The page's words, in its language (data-t-* of the body).
  var words = {
    copy: body.dataset.tCopy || "Copy",
    copied: body.dataset.tCopied || "Copied",
    left: body.dataset.tLeft || "{t} left",
    expired: body.dataset.tExpired || "expired"
  };

  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    var el = document.getElementById(b.getAttribute("data-copy"));
    if (!el || !navigator.clipboard) { return; }
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(el.textContent.trim()).then(function () {
        b.textContent = words.copied;
        setTimeout(function () { b.textContent = words.copy; }, 1500);
      });
    });
  });

  // A subscription's plan chooser: each coin shows what the chosen plan
  // costs in it (without the script, every plan's amount is shown).
  var plans = document.querySelectorAll("input[name=option]");
  if (plans.length > 1) {
    var showPlan = function () {
      var chosen = document.querySelector("input[name=option]:checked");
      var v = chosen ? chosen.value : "";
      document.querySelectorAll(".coin-amount[data-option]").forEach(function (e) {
        e.hidden = e.getAttribute("data-option") !== v;
      });
    };
    plans.forEach(function (p) { p.addEventListener("change", showPlan); });
    showPlan();
  }

  // The server's clock, so a wrong clock on the phone does not mislead.
  var skew = Number(body.dataset.now || 0) * 1000;
  skew = skew ? skew - Date.now() : 0;
  var cd = document.getElementById("countdown");
  var done = false; // paid: the countdown stops
  if (cd) {
    var exp = Number(cd.dataset.expires) * 1000;
    var two = function (n) { return (n < 10 ? "0" : "") + n; };
    var tick = function () {
      var left = Math.floor((exp - (Date.now() + skew)) / 1000);
      if (done) { return; }
      if (left <= 0) { cd.textContent = words.expired; return; }
      var h = Math.floor(left / 3600), m = Math.floor(left / 60) % 60, s = left % 60;
      cd.textContent = words.left.replace("{t}", (h > 0 ? h + ":" + two(m) : m) + ":" + two(s));
      setTimeout(tick, 1000);
    };
    tick();
  }

  var status = document.getElementById("status");
  var ret = document.getElementById("return");
  var link = document.getElementById("return-link");
  var go = function (url) { setTimeout(function () { window.location.assign(url); }, 1500); };
  var show = function (s) {
    if (!status) { return; }
    status.textContent = s.text;
    status.className = "status status-" + s.status;
    body.dataset.status = s.status;
    if (s.redirect && link && ret) { link.href = s.redirect; ret.hidden = false; }
    if (s.status === "paid" && s.final) {
      // Paid means done: the instructions and the countdown go.
      done = true;
      document.querySelectorAll("[data-until-paid]").forEach(function (e) { e.hidden = true; });
    }
  };
  if (body.dataset.final === "true" && body.dataset.redirect) { go(body.dataset.redirect); return; }
  var url = body.dataset.statusUrl;
  var every = Number(body.dataset.poll) || 3000;
  if (!url || body.dataset.final === "true") { return; }
  var poll = function () {
    fetch(url, { cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) { throw new Error(String(r.status)); } return r.json(); })
      .then(function (s) {
        show(s);
        if (s.final) {
          if (s.status === "paid" && s.redirect) { go(s.redirect); }
          return;
        }
        setTimeout(poll, every);
      })
      .catch(function () { setTimeout(poll, every * 2); });
  };
  setTimeout(poll, every);
})();

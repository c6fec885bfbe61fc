// Client runtime for shifted pages: shows the planned popup and reports what happened.
// No dependencies; configured by the data-cfg attribute of its own <script> tag:
//   b: beacon path, k: beacon key, l: load index, p: popup plan or null.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var cfg;
  try { cfg = JSON.parse(script.getAttribute("data-cfg") || "{}"); } catch (e) { return; }
  var nonce = script.nonce || script.getAttribute("nonce") || "";

  function report(type, data) {
    var event = { k: cfg.k, type: type, url: location.href, load: cfg.l, t: Date.now() };
    for (var key in data || {}) event[key] = data[key];
    var body = JSON.stringify(event);
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(cfg.b, body)) return;
    } catch (e) { /* fall through to fetch */ }
    try { fetch(cfg.b, { method: "POST", body: body, keepalive: true, credentials: "same-origin" }); }
    catch (e) { /* nothing else to try */ }
  }

  function storageGet(key) { try { return localStorage.getItem(key); } catch (e) { return null; } }
  function storageSet(key, value) { try { localStorage.setItem(key, value); } catch (e) { /* private mode */ } }

  var visible = null;  // the overlay while a popup is up

  function showPopup(plan, restored) {
    if (visible) return;
    // `once`: the client-side guard (localStorage is shared by every tab of the origin) keeps a
    // reload, a back/forward restore or an SPA route change from showing it again.
    if (plan.guard) {
      if (storageGet(plan.guard)) { report("popup_suppressed", { kind: plan.kind, reason: "guard" }); return; }
      storageSet(plan.guard, String(Date.now()));
    }
    var style = document.createElement("style");
    if (nonce) style.nonce = nonce;
    style.textContent = plan.css;
    (document.head || document.documentElement).appendChild(style);
    var holder = document.createElement("div");
    holder.innerHTML = plan.markup;
    var overlay = holder.firstElementChild;
    document.body.appendChild(overlay);
    visible = overlay;
    var dialog = overlay.querySelector("[role=dialog]");
    var focusables = dialog.querySelectorAll("button, [href], input, select, textarea");
    var previous = document.activeElement;
    var primary = dialog.querySelector("[data-dismiss]:not([data-dismiss=close])") || focusables[0];
    if (primary) primary.focus();

    function dismiss(how) {
      if (!overlay.parentNode) return;
      overlay.parentNode.removeChild(overlay);
      if (style.parentNode) style.parentNode.removeChild(style);
      document.removeEventListener("keydown", onKey, true);
      document.removeEventListener("focusin", onFocus, true);
      visible = null;
      if (previous && previous.focus) try { previous.focus(); } catch (e) { /* gone */ }
      report("popup_dismissed", { kind: plan.kind, how: how });
    }
    function onKey(event) {
      if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); dismiss("escape"); return; }
      if (event.key === "Tab" && focusables.length) {
        // Focus trap: Tab cycles inside the dialog.
        var first = focusables[0], last = focusables[focusables.length - 1];
        if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
        else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
        return;
      }
      if (!dialog.contains(event.target)) {
        event.preventDefault(); event.stopPropagation();
        report("blocked_interaction", { kind: plan.kind, input: "key", key: event.key });
      }
    }
    function onFocus(event) {
      if (!dialog.contains(event.target) && primary) primary.focus();
    }
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("focusin", onFocus, true);
    overlay.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest("[data-dismiss]") : null;
      if (button && dialog.contains(button)) { dismiss(button.getAttribute("data-dismiss")); return; }
      if (!dialog.contains(event.target)) {
        report("blocked_interaction", { kind: plan.kind, input: "click", x: event.clientX, y: event.clientY });
      }
    });
    report("popup_shown", { kind: plan.kind, delay_ms: plan.delay, restored: !!restored });
  }

  function start() {
    if (!cfg.p) return;
    var plan = cfg.p;
    setTimeout(function () { showPopup(plan, false); }, plan.delay || 0);
    // `multiple` shows on every navigation, including a back/forward restore from the bfcache
    // (which never reaches the proxy); `once` and `random` do not.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted && plan.regime === "multiple") showPopup(plan, true);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// Client runtime of the extended execution set: shows the planned interruption when its trigger
// comes, in its host, and reports what happened. No dependencies; configured by the data-cfg
// attribute of its own <script> tag:
//   b: beacon path, k: beacon key, l: load index, p: the plan or null
//   (kind, host, trigger, after, lasts_ms, delay, regime, guard; markup and css, or text).
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var cfg;
  try { cfg = JSON.parse(script.getAttribute("data-cfg") || "{}"); } catch (e) { return; }
  var nonce = script.nonce || script.getAttribute("nonce") || "";
  var plan = cfg.p;
  if (!plan) return;

  function report(type, data) {
    var event = { k: cfg.k, type: type, url: location.href, load: cfg.l, t: Date.now(),
                  kind: plan.kind, host: plan.host, trigger: plan.trigger };
    for (var key in data || {}) event[key] = data[key];
    var body = JSON.stringify(event);
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(cfg.b, body)) return;
    } catch (e) { /* fall through to fetch */ }
    try { fetch(cfg.b, { method: "POST", body: body, keepalive: true, credentials: "same-origin" }); }
    catch (e) { /* nothing else to try */ }
  }

  // `once`: the client-side guard (localStorage is shared by every tab of the origin) keeps a
  // reload, a back/forward restore or an SPA route change from showing it again.
  function guardAllows() {
    if (!plan.guard) return true;
    try {
      if (localStorage.getItem(plan.guard)) { report("popup_suppressed", { reason: "guard" }); return false; }
      localStorage.setItem(plan.guard, String(Date.now()));
    } catch (e) { /* private mode: no guard to keep */ }
    return true;
  }

  // -- triggers: call `show` once, when the plan's moment comes -------------------------------
  function arm(show) {
    var fired = false, undo = [];
    function listen(target, type, handler, options) {
      target.addEventListener(type, handler, options);
      undo.push(function () { target.removeEventListener(type, handler, options); });
    }
    function fire() {
      if (fired) return;
      fired = true;
      undo.forEach(function (stop) { stop(); });
      // A `beforeunload` is armed at once (it blocks nothing), so it is by the time anyone
      // can leave; what shows comes after the event that brought it has run its course.
      if (plan.kind === "native_beforeunload" && !plan.delay) show();
      else setTimeout(show, plan.delay || 0);
    }
    // An interstitial is on the page from the start: it is the page (planned so since; a
    // page recorded before may name another trigger).
    var trigger = plan.host === "interstitial" ? "load" : plan.trigger;
    if (trigger === "delay") { setTimeout(fire, plan.after); return; }
    if (trigger === "interaction") {
      // The interaction goes on to the page; the interruption comes right after it.
      listen(window, "pointerdown", fire, { capture: true, passive: true });
      listen(window, "keydown", fire, { capture: true, passive: true });
      return;
    }
    if (trigger === "scroll") {
      // Past the planned depth, or at the end of a page shorter than that.
      var check = function () {
        var room = document.documentElement.scrollHeight - window.innerHeight;
        if (room > 0 && window.scrollY >= Math.min(plan.after, room)) fire();
      };
      listen(window, "scroll", check, { passive: true });
      check();
      return;
    }
    if (trigger === "exit") {
      // Exit intent: the pointer leaves the page through its top edge (toward the tabs).
      listen(document, "mouseout", function (event) {
        if (!event.relatedTarget && event.clientY <= 0) fire();
      });
      return;
    }
    fire();  // "load"
  }

  // -- hosts: where the markup lives --------------------------------------------------------
  function styleIn(doc, parent) {
    var style = doc.createElement("style");
    if (nonce) style.nonce = nonce;
    style.textContent = plan.css;
    return parent.appendChild(style);
  }
  function fromMarkup(doc) {
    var holder = doc.createElement("div");
    holder.innerHTML = plan.markup;
    return holder.firstElementChild;
  }
  function place(node, pushes) {
    // A push banner takes the top of the page's flow; everything else goes on top of it.
    if (pushes) document.body.insertBefore(node, document.body.firstChild);
    else document.body.appendChild(node);
  }
  function mount(pushes) {
    var host = plan.host;
    if (host === "interstitial") {
      // The page is the interruption (the proxy served it instead of the one asked for):
      // leaving it is going on to that page, without a history entry for this one.
      var page = document.body.firstElementChild;
      var onward = page.querySelector("[data-dismiss=continue]");
      return { overlay: page, docs: [document],
               remove: function () { location.replace(onward.getAttribute("href")); } };
    }
    if (host === "shadow_open" || host === "shadow_closed") {
      var element = document.createElement("div");
      var shadow = element.attachShadow({ mode: host === "shadow_open" ? "open" : "closed" });
      styleIn(document, shadow);
      var inShadow = fromMarkup(document);
      shadow.appendChild(inShadow);
      place(element, pushes);
      return { overlay: inShadow, docs: [document], remove: function () { element.remove(); } };
    }
    if (host === "iframe") {
      var frame = document.createElement("iframe");
      frame.setAttribute("title", plan.kind.replace(/_/g, " "));
      frame.style.cssText = "position:fixed;inset:0;width:100%;height:100%;border:0;margin:0;" +
        "padding:0;z-index:2147483000;background:transparent;color-scheme:normal";
      document.body.appendChild(frame);
      var inner = frame.contentDocument;  // the initial about:blank: same origin, at once
      inner.body.style.margin = "0";
      // The frame's document inherits nothing of the page: the page's own font, as in the page.
      inner.body.style.fontFamily = getComputedStyle(document.body).fontFamily;
      styleIn(inner, inner.head);
      var inFrame = fromMarkup(inner);
      inner.body.appendChild(inFrame);
      return { overlay: inFrame, docs: [document, inner], remove: function () { frame.remove(); } };
    }
    var style = styleIn(document, document.head || document.documentElement);
    var overlay = fromMarkup(document);
    place(overlay, pushes);
    return { overlay: overlay, docs: [document],
             remove: function () { overlay.remove(); style.remove(); } };
  }

  // -- kinds ----------------------------------------------------------------------------------
  var visible = false;
  function showDialog() {
    if (visible) return;
    if (!document.body) {  // a frameset, say: nowhere to show it, and the log says so
      report("runtime_error", { reason: "no body to show the popup in" });
      return;
    }
    if (!guardAllows()) return;
    visible = true;
    var pushes = plan.kind === "consent_push";
    var mounted = mount(pushes);
    var dialog = mounted.overlay.querySelector("[role=dialog], [role=alertdialog]");
    var modal = dialog.getAttribute("aria-modal") === "true";
    var focusables = dialog.querySelectorAll("button, [href], input, select, textarea");
    var previous = document.activeElement;
    var primary = dialog.querySelector("[data-dismiss]:not([data-dismiss=close])") || focusables[0];
    if (modal && primary) primary.focus();
    var timer = plan.lasts_ms ? setTimeout(function () { dismiss("timeout"); }, plan.lasts_ms) : 0;

    function dismiss(how) {
      if (!visible) return;
      visible = false;
      clearTimeout(timer);
      report("popup_dismissed", { how: how });  // (first: an interstitial leaves the page)
      mounted.remove();
      mounted.docs.forEach(function (doc) {
        doc.removeEventListener("keydown", onKey, true);
        doc.removeEventListener("focusin", onFocus, true);
      });
      if (modal && previous && previous.focus) try { previous.focus(); } catch (e) { /* gone */ }
    }
    function inside(event) {
      var path = event.composedPath ? event.composedPath() : [event.target];
      if (path.indexOf(dialog) >= 0) return true;
      // A closed shadow root hides its nodes from the document's listeners, which see the
      // event as its host's: what has focus in the root says where the key or focus went.
      var root = dialog.getRootNode();
      return !!root.host && path[0] === root.host && dialog.contains(root.activeElement);
    }
    function onKey(event) {
      if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); dismiss("escape"); return; }
      if (!modal) return;
      if (event.key === "Tab" && focusables.length) {
        var first = focusables[0], last = focusables[focusables.length - 1];
        var active = dialog.getRootNode().activeElement;
        if (event.shiftKey && active === first) { event.preventDefault(); last.focus(); }
        else if (!event.shiftKey && active === last) { event.preventDefault(); first.focus(); }
        return;
      }
      if (!inside(event)) {
        event.preventDefault(); event.stopPropagation();
        report("blocked_interaction", { input: "key", key: event.key });
      }
    }
    function onFocus(event) {
      if (modal && !inside(event) && primary) primary.focus();
    }
    mounted.docs.forEach(function (doc) {
      doc.addEventListener("keydown", onKey, true);
      doc.addEventListener("focusin", onFocus, true);
    });
    mounted.overlay.addEventListener("click", function (event) {
      var path = event.composedPath();
      for (var i = 0; i < path.length && path[i] !== mounted.overlay; i++) {
        var action = path[i].getAttribute && path[i].getAttribute("data-dismiss");
        if (action) { event.preventDefault(); dismiss(action); return; }
      }
      if (!inside(event)) {
        report("blocked_interaction", { input: "click", x: event.clientX, y: event.clientY });
      }
    });
    report("popup_shown", { delay_ms: plan.delay, after: plan.after });
  }

  function showNative() {
    if (!guardAllows()) return;
    if (plan.kind === "native_beforeunload") {
      // The browser asks only if the page had a user gesture; the event says whether it had.
      var asked = false;
      window.addEventListener("beforeunload", function (event) {
        if (asked) return;
        asked = true;
        var active = navigator.userActivation ? navigator.userActivation.hasBeenActive : null;
        report("popup_shown", { after: plan.after, activation: active });
        event.preventDefault();
        event.returnValue = plan.text;
        // Timers stand still while the dialog is up: this runs once the agent chose to stay.
        setTimeout(function () { asked = false; report("popup_dismissed", { how: "stay" }); }, 0);
      });
      window.addEventListener("pagehide", function () {
        if (asked) report("popup_dismissed", { how: "leave" });
      });
      return;
    }
    report("popup_shown", { delay_ms: plan.delay, after: plan.after });
    if (plan.kind === "native_confirm") {
      report("popup_dismissed", { how: window.confirm(plan.text) ? "accept" : "decline" });
    } else {
      window.alert(plan.text);
      report("popup_dismissed", { how: "accept" });
    }
  }

  function start() {
    var show = plan.host === "native" ? showNative : showDialog;
    arm(show);
    // `multiple` shows on every navigation, including a back/forward restore from the bfcache
    // (which never reaches the proxy); `once` and `random` do not.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted && plan.regime === "multiple" && plan.host !== "native") arm(show);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

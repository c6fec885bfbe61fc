// Client runtime for shifted pages: shows the planned popup and reports what happened.
// No dependencies; configured by the data-cfg attribute of its own <script> tag:
//   b: beacon path, k: beacon key, l: load index, p: popup plan or null,
//   r: perceptual rules for DOM rendered after load (labels, controls, attributes, hooks).
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

  // Perceptual rules for nodes that JavaScript adds or rewrites after load, so a page rendered
  // by a framework shifts the same way as server-rendered HTML.
  function soleText(element) {
    var found = null;
    var walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.nodeValue.trim()) continue;
      if (found) return null;
      found = node;
    }
    return found;
  }
  // What this runtime itself wrote, per node: a node seen again (moved, re-scanned) keeps its
  // label instead of being mapped a second time (vocabularies may map A->B and B->A).
  var mine = new WeakMap();
  function has(labels, label) { return !!label && Object.prototype.hasOwnProperty.call(labels, label); }
  function shiftElement(element, rules) {
    var labels = rules.labels || {};
    if (rules.controls && element.matches(rules.controls)) {
      var text = soleText(element);
      var label = text && text.nodeValue.trim();
      if (has(labels, label) && mine.get(text) !== text.nodeValue) {
        text.nodeValue = text.nodeValue.replace(label, labels[label]);
        mine.set(text, text.nodeValue);
      }
    }
    var written = mine.get(element) || {};
    (rules.attributes || []).forEach(function (name) {
      var value = element.getAttribute(name);
      var trimmed = value && value.trim();
      if (has(labels, trimmed) && written[name] !== value) {
        element.setAttribute(name, labels[trimmed]);
        written[name] = labels[trimmed];
        mine.set(element, written);
      }
    });
    (rules.hooks || []).forEach(function (name) { if (element.hasAttribute(name)) element.removeAttribute(name); });
  }
  function shiftTree(root, rules) {
    if (root.nodeType === 3) root = root.parentElement;
    if (!root || root.nodeType !== 1) return;
    var control = root.closest && rules.controls ? root.closest(rules.controls) : null;
    if (control) shiftElement(control, rules);
    shiftElement(root, rules);
    var all = root.querySelectorAll("*");
    for (var i = 0; i < all.length; i++) shiftElement(all[i], rules);
  }
  function observe(rules) {
    var observer = new MutationObserver(function (records) {
      records.forEach(function (record) {
        if (visible && visible.contains(record.target)) return;
        if (record.type === "childList") {
          for (var i = 0; i < record.addedNodes.length; i++) {
            var added = record.addedNodes[i];
            if (visible && (visible === added || visible.contains(added))) continue;
            shiftTree(added, rules);
          }
        } else {
          shiftTree(record.target, rules);
        }
      });
      // Our own edits queue records too; dropping them is what keeps this from looping.
      observer.takeRecords();
    });
    observer.observe(document.documentElement, {
      childList: true, subtree: true, characterData: true, attributes: true,
      attributeFilter: (rules.attributes || []).concat(rules.hooks || []),
    });
  }

  // Observe from now on: the server already shifted the HTML parsed so far.
  if (cfg.r && window.MutationObserver) observe(cfg.r);

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

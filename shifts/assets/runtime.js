// Client runtime for shifted pages: shows the planned popup and reports what happened.
// No dependencies; configured by the data-cfg attribute of its own <script> tag:
//   b: beacon path, k: beacon key, l: load index, p: popup plan or null,
//   r: perceptual rules for DOM rendered after load (labels, controls, attributes, protect,
//      hooks, restyle), generated from the server's shifts.
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
  // by a framework shifts the same way as server-rendered HTML. Every rule comes from the
  // server's own shifts (labels: the episode's idempotent mapping; controls, attributes and
  // protect: the same selectors; hooks: the test hooks no asset names; restyle: the seeded
  // hue turn): nothing here decides anything the server did not.
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
  function has(labels, label) { return !!label && Object.prototype.hasOwnProperty.call(labels, label); }
  function isProtected(element, rules) {
    if (!rules.protect) return false;
    try { return !!element.closest(rules.protect); } catch (e) { return true; }
  }
  // The mapping never maps a synonym it produced (the server makes it so), so applying it to a
  // node again, however often site JS touches it, leaves the episode's label in place.
  function relabel(element, rules) {
    var labels = rules.labels;
    if (rules.controls && element.matches(rules.controls)) {
      var text = soleText(element);
      var label = text && text.nodeValue.trim();
      if (has(labels, label)) text.nodeValue = text.nodeValue.replace(label, labels[label]);
    }
    (rules.attributes || []).forEach(function (name) {
      var value = element.getAttribute(name);
      var trimmed = value && value.trim();
      if (has(labels, trimmed)) element.setAttribute(name, labels[trimmed]);
    });
  }
  // Restyle: text, border and background colours of controls turn by the episode's hue angle,
  // from each control's own colours; nothing that holds an image, no size or position.
  var restyled = new WeakSet();
  function turn(colour, angle) {
    var m = /^rgba?\(([\d.]+), ([\d.]+), ([\d.]+)(?:, ([\d.]+))?\)$/.exec(colour);
    if (!m || m[4] === "0") return null;
    var r = m[1] / 255, g = m[2] / 255, b = m[3] / 255;
    var max = Math.max(r, g, b), min = Math.min(r, g, b), l = (max + min) / 2, d = max - min;
    if (d < 0.05) return null;  // greys stay grey: turning them changes nothing
    var s = d / (1 - Math.abs(2 * l - 1));
    var h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    h = ((h * 60 + angle) % 360 + 360) % 360;
    return "hsla(" + h.toFixed(1) + ", " + (s * 100).toFixed(1) + "%, " + (l * 100).toFixed(1) + "%, " + (m[4] || 1) + ")";
  }
  function restyle(element, rules) {
    if (!rules.restyle || restyled.has(element) || !element.matches(rules.controls)) return;
    if (element.querySelector("img, svg, picture, canvas, video")) return;
    restyled.add(element);
    var style = getComputedStyle(element);
    if (style.backgroundImage !== "none") return;
    ["color", "background-color", "border-top-color", "border-right-color",
     "border-bottom-color", "border-left-color"].forEach(function (property) {
      var turned = turn(style.getPropertyValue(property), rules.restyle.angle);
      if (turned) element.style.setProperty(property, turned, "important");
    });
  }
  function shiftElement(element, rules) {
    if (isProtected(element, rules)) return;
    if (rules.labels) relabel(element, rules);
    restyle(element, rules);
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

  // Observe from now on: the server already shifted the HTML parsed so far (restyle, which
  // needs computed colours, goes over it once it is parsed).
  if (cfg.r && window.MutationObserver) observe(cfg.r);
  function restyleParsed() { if (cfg.r && cfg.r.restyle) shiftTree(document.body, cfg.r); }

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
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", restyleParsed);
    document.addEventListener("DOMContentLoaded", start);
  } else { restyleParsed(); start(); }
})();

// The browser alignment oracle's in-page script: one function, called with {mode, ...}.
//
//   init      (an init script, before any page script) wrap addEventListener to remember which
//             targets got listeners, and of which event types
//   labels    {key: label} of every interactive element, as the load event found it
//   settle    the page's animations as a screenshot draws them (finished or cancelled), and
//             a rendering update for what their ends set off (called before a snapshot)
//   snapshot  every element in document order: structural key, tag, role flags, box, visible,
//             hit-testable, label, image, listeners; plus window/document listeners; measured
//             with the animations settled again (any that an end started)
//   clip      scroll element #index of the last snapshot into view and give its viewport rect,
//             measured the same way
//   reset     scroll back to the top-left
//
// Structural keys are paths of element-sibling indexes from <html> that skip the elements
// given in `wrappers` (tag names of inserted wrappers: their children count as children of the
// wrapper's parent) and elements that render nothing (<head>, <script>, <style>, ...), so the
// same object has the same key in a page and its shifted version.
(arg) => {
  const REGISTRY = Symbol.for("alignment-oracle");
  const ON_PROPS = [
    "onclick", "ondblclick", "onauxclick", "oncontextmenu", "onmousedown", "onmouseup",
    "onmouseover", "onmouseout", "onmouseenter", "onmouseleave", "onmousemove",
    "onpointerdown", "onpointerup", "ontouchstart", "ontouchend", "onkeydown", "onkeyup",
    "onkeypress", "oninput", "onchange", "onsubmit", "onreset", "onfocus", "onblur",
    "onfocusin", "onfocusout", "onwheel", "onscroll", "ondragstart", "ondrop",
  ];
  const GLOBAL_ON_PROPS = ON_PROPS.concat([
    "onload", "onresize", "onhashchange", "onpopstate", "onbeforeunload", "onunload",
    "onmessage", "onpageshow", "onpagehide", "onstorage", "onreadystatechange",
    "onvisibilitychange",
  ]);

  const registry = window[REGISTRY] || { types: new WeakMap(), elements: [] };
  const wrappers = new Set((arg.wrappers || []).map((tag) => String(tag).toLowerCase()));
  const SKIPPED = new Set([
    "head", "script", "style", "link", "meta", "noscript", "template", "base", "title",
  ]);
  const OPAQUE = new Set(["svg", "canvas", "video", "iframe", "object", "embed", "select",
    "math"]);
  const IMAGES = new Set(["img", "svg", "canvas", "picture", "video"]);
  // shifts/interactive.py's definition, put here by api/oracle/run.py's page_script().
  const INTERACTIVE = "__INTERACTIVE__";
  const HEADING = "h1, h2, h3, h4, h5, h6";

  function tagOf(el) {
    return el.localName.toLowerCase();
  }

  function logicalChildren(parent, out) {
    for (const child of parent.children) {
      const tag = tagOf(child);
      if (wrappers.has(tag)) logicalChildren(child, out);
      else if (!SKIPPED.has(tag)) out.push(child);
    }
    return out;
  }

  function walk(visit) {
    const root = document.documentElement;
    if (!root) return;
    const stack = [[root, "html"]];
    while (stack.length) {
      const [el, key] = stack.pop();
      visit(el, key);
      if (OPAQUE.has(tagOf(el))) continue;
      const children = logicalChildren(el, []);
      for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], key + "/" + i]);
    }
  }

  function collapse(text) {
    return String(text || "").replace(/\s+/g, " ").trim().slice(0, 200);
  }

  function labelOf(el) {
    const aria = el.getAttribute("aria-label");
    if (aria && aria.trim()) return collapse(aria);
    const inner = el.querySelector ? el.querySelector("img[alt]") : null;
    const values = [el.innerText, el.value, el.getAttribute("alt"), el.getAttribute("title"),
      inner && inner.getAttribute("alt")];
    for (const value of values) {
      const text = typeof value === "string" ? collapse(value) : "";
      if (text) return text;
    }
    return "";
  }

  if (arg.mode === "init") {
    if (window[REGISTRY]) return null;
    const types = new WeakMap();
    const original = EventTarget.prototype.addEventListener;
    Object.defineProperty(window, REGISTRY, {
      value: { types: types, elements: [] }, enumerable: false, configurable: false,
    });
    EventTarget.prototype.addEventListener = function (type, listener, options) {
      const target = this == null ? window : this;
      if (listener && (typeof listener === "function" || typeof listener === "object")) {
        let set = types.get(target);
        if (!set) {
          set = new Set();
          types.set(target, set);
        }
        set.add(String(type));
      }
      return original.call(target, type, listener, options);
    };
    // The labels as the load event finds them, taken in it: this listener is the page's first
    // (registered before any page script, in the capture phase, which runs first), so no
    // script the load sets off has run yet. Taken later (when the oracle's next call arrives,
    // which a busy machine delays), a timer the load started could have run first.
    original.call(window, "load", function () {
      const labels = new Map();
      for (const el of document.querySelectorAll(INTERACTIVE)) labels.set(el, labelOf(el));
      window[REGISTRY].labelsAtLoad = labels;
    }, { capture: true, once: true });
    return null;
  }

  function listenersOf(target, props) {
    const found = new Set(registry.types.get(target) || []);
    for (const prop of props) {
      try {
        if (target[prop]) found.add(prop.slice(2));
      } catch (error) {
        // a getter that throws: nothing set
      }
    }
    if (target.getAttributeNames) {
      for (const name of target.getAttributeNames()) {
        if (name.startsWith("on")) found.add(name.slice(2));
      }
    }
    return Array.from(found).sort();
  }

  if (arg.mode === "labels") {
    // An element the load did not find (added or rendered again since), or any without the
    // init script (a page the oracle did not open): its label as the page is now.
    const atLoad = registry.labelsAtLoad || new Map();
    const labels = {};
    walk((el, key) => {
      if (el.matches(INTERACTIVE)) labels[key] = atLoad.has(el) ? atLoad.get(el) : labelOf(el);
    });
    return labels;
  }

  // Measured as the screenshot draws it, or a box measured mid-animation (a spinning logo's
  // turned square, a spinning control) would depend on when the load got there. This is
  // Playwright's rule for `animations: "disabled"`: no effect or a zero playback rate is left
  // alone, a finite end finished, any other (infinite, scroll-driven) cancelled.
  function settleAnimations() {
    for (const animation of document.getAnimations()) {
      if (!animation.effect || animation.playbackRate === 0) continue;
      try {
        if (Number.isFinite(animation.effect.getComputedTiming().endTime)) animation.finish();
        else animation.cancel();
      } catch (e) { /* as Playwright: it stays as it is */ }
    }
  }

  if (arg.mode === "settle") {
    settleAnimations();
    // What a finished animation's end sets off (`animationend`: a class swapped in, a style
    // set) runs at the next rendering update: the snapshot is taken after it.
    return new Promise((resolve) => {
      requestAnimationFrame(() => setTimeout(() => resolve(null), 0));
    });
  }

  if (arg.mode === "clip") {
    const el = registry.elements[arg.index];
    if (!el || !el.isConnected) return null;
    settleAnimations();  // (any started since the snapshot: a hover's transition)
    let rect = el.getBoundingClientRect();
    window.scrollTo({
      left: rect.left + window.scrollX, top: rect.top + window.scrollY, behavior: "instant",
    });
    rect = el.getBoundingClientRect();
    const left = Math.max(0, Math.floor(rect.left));
    const top = Math.max(0, Math.floor(rect.top));
    const right = Math.min(window.innerWidth, Math.ceil(rect.right));
    const bottom = Math.min(window.innerHeight, Math.ceil(rect.bottom));
    if (right - left < 1 || bottom - top < 1) return null;
    return { x: left, y: top, width: right - left, height: bottom - top };
  }

  if (arg.mode === "reset") {
    window.scrollTo({ left: 0, top: 0, behavior: "instant" });
    return null;
  }

  // What a recorded skill could locate an element by: id, classes, data-* hooks, and its
  // XPath with positions (wrappers included: that is the point of them).
  function locatorOf(el) {
    const hooks = [];
    for (const attribute of el.attributes) {
      if (attribute.name.startsWith("data-")) hooks.push(attribute.name + "=" + attribute.value);
    }
    const steps = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      let position = 1;
      for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
        if (sibling.localName === node.localName) position++;
      }
      steps.unshift(node.localName + "[" + position + "]");
    }
    return [el.id, el.getAttribute("class") || "", hooks.sort().join(" "), "/" + steps.join("/")];
  }

  // snapshot
  settleAnimations();
  window.scrollTo({ left: 0, top: 0, behavior: "instant" });
  const elements = [];
  const records = [];
  walk((el, key) => {
    const tag = tagOf(el);
    const rect = el.getBoundingClientRect();
    const box = [rect.left + window.scrollX, rect.top + window.scrollY, rect.width, rect.height]
      .map((v) => Math.round(v * 100) / 100);
    const interactive = el.matches(INTERACTIVE);
    const heading = el.matches(HEADING);
    // Image elements only: a CSS background's clip would hold whatever is painted over it
    // (a skin's header gradient under its tabs), so its pixels say nothing about the image.
    const image = IMAGES.has(tag);
    const visible = el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) &&
      rect.width > 0 && rect.height > 0;
    elements.push(el);
    records.push({
      key: key,
      tag: tag,
      interactive: interactive,
      heading: heading,
      box: box,
      visible: visible,
      hit: null,
      label: interactive || heading || image ? labelOf(el) : "",
      image: image,
      listeners: listenersOf(el, ON_PROPS),
      locator: interactive ? locatorOf(el) : null,
    });
  });
  // Hit tests last: they scroll, and boxes are measured at the top-left.
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (!record.visible || !(record.interactive || record.heading)) continue;
    const el = elements[i];
    let rect = el.getBoundingClientRect();
    let x = rect.left + rect.width / 2;
    let y = rect.top + rect.height / 2;
    if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) {
      window.scrollTo({
        left: x + window.scrollX - window.innerWidth / 2,
        top: y + window.scrollY - window.innerHeight / 2,
        behavior: "instant",
      });
      rect = el.getBoundingClientRect();
      x = rect.left + rect.width / 2;
      y = rect.top + rect.height / 2;
    }
    if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) continue;
    const hit = document.elementFromPoint(x, y);
    record.hit = Boolean(hit) && (hit === el || el.contains(hit) ||
      (hit.localName === "label" && hit.control === el));
    if (!record.hit) record.blocker = hit ? tagOf(hit) : "nothing";
  }
  window.scrollTo({ left: 0, top: 0, behavior: "instant" });
  registry.elements = elements;
  return {
    url: location.href,
    elements: records,
    window: listenersOf(window, GLOBAL_ON_PROPS),
    document: listenersOf(document, GLOBAL_ON_PROPS),
  };
}

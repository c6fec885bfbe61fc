// The admin page: every action is a call to the same REST API agents use.
// Data from episodes and pages is put on the page as text only (never as markup): event URLs
// and titles come from the sites under test.
"use strict";

const $ = (selector) => document.querySelector(selector);
const REFRESH_MS = 2000; // episodes and listener defaults also change through the API
const state = {
  episodes: [], editing: null, logEpisode: null, logAfter: null, logTimer: null, pagesEpisode: null,
  shown: null, loads: 0, listenerChoices: {}, sites: [], conditions: {}, routings: 0,
};

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "X-SkillShift-UI": "1", ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  // A 401 on signing in is a refused token, not a request to sign in.
  if (response.status === 401 && path !== "/ui/session") {
    $("#login").hidden = false;
    throw new Error("sign in with the API token");
  }
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = new Error((data && data.error) || `${response.status}`);
    throw Object.assign(error, { status: response.status });
  }
  return data;
}

function say(text, ok = false) {
  const message = $("#message");
  message.textContent = text;
  message.className = ok ? "ok" : "";
  message.hidden = !text;
}

// What the user sees of a control: its label's own text, without the text of the control.
function labelOf(control) {
  const label = control.labels && control.labels[0];
  if (!label) return control.getAttribute("aria-label") || control.dataset.field;
  return [...label.childNodes]
    .filter((node) => node.nodeType === Node.TEXT_NODE)
    .map((node) => node.textContent).join(" ").replace(/\s+/g, " ").trim();
}

// The API names a field by its path ("regime_params.max_ms: ..."); the banner by its label.
function labelled(message, form) {
  if (!form) return message;
  const controls = [...form.querySelectorAll("[data-field]")];
  return message.split("; ").map((part) => {
    const [, path, detail] = part.match(/^([\w.]+): ([\s\S]*)$/) || [];
    const control = controls.find((c) => path === c.dataset.field
      || (path || "").startsWith(`${c.dataset.field}.`));
    if (!control) return part;
    const rest = path.slice(control.dataset.field.length + 1);
    return `${labelOf(control)}${rest ? ` (${rest})` : ""}: ${detail}`;
  }).join("; ");
}

// Every user action: its failure goes to the banner, its success clears an error an earlier
// action left there (a success message stays until another replaces it). The handler is
// called at once, so a submit handler can still prevent the form's own submission.
function act(handler, form) {
  return async (event) => {
    try {
      await handler(event);
      if ($("#message").className !== "ok") say("");
    } catch (error) {
      say(labelled(error.message, form));
    }
  };
}

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function button(label, action, title) {
  const node = element("button", label, { type: "button", ...(title ? { "aria-label": title } : {}) });
  node.addEventListener("click", act(action));
  return node;
}

// ---- forms: one control per API field, named by its path in data-field ---------------------

function fieldControls(form) {
  return [...form.querySelectorAll("[data-field]")];
}

function parseJson(control) {
  try {
    return JSON.parse(control.value || "{}");
  } catch (error) {
    throw new Error(`${labelOf(control)}: not valid JSON (${error.message})`);
  }
}

// The request body of a form: JSON fields parsed, numbers as numbers, "(none)" choices as
// null; an empty number is left out, so the API's default applies.
function formBody(form) {
  const body = {};
  for (const control of fieldControls(form)) {
    if (control.disabled || (control.type === "number" && control.value === "")) continue;
    const path = control.dataset.field.split(".");
    const name = path.pop();
    const parent = path.reduce((node, key) => (node[key] ??= {}), body);
    if (control.tagName === "TEXTAREA") parent[name] = parseJson(control);
    else if (control.type === "number") parent[name] = Number(control.value);
    else parent[name] = control.value || null;
  }
  return body;
}

function showValue(control, value) {
  control.value = control.tagName === "TEXTAREA" ? JSON.stringify(value ?? {}) : String(value ?? "");
}

// The episode form's defaults, bounds and choices are those of the API's own schema, so a form
// left alone creates the episode the API would create from the same fields.
async function applySchema() {
  const schema = await api("GET", "/openapi.json");
  const resolve = (node) => (node.$ref ? resolve(schema.components.schemas[node.$ref.split("/").pop()]) : node);
  const create = schema.components.schemas.EpisodeCreate;
  for (const control of fieldControls($("#episode-form"))) {
    const property = control.dataset.field.split(".")
      .reduce((node, name) => resolve(resolve(node).properties[name]), create);
    if (property.enum) control.replaceChildren(...property.enum.map((v) => element("option", v)));
    if (property.minimum !== undefined) control.min = property.minimum;
    if (property.maximum !== undefined) control.max = property.maximum;
    showValue(control, property.default);
  }
  $("#episode-fields").disabled = false; // usable once every control shows the API's default
}

// ---- episodes -------------------------------------------------------------------------------

function fillForm(episode) {
  for (const control of fieldControls($("#episode-form"))) {
    showValue(control, control.dataset.field.split(".").reduce((node, key) => node?.[key], episode));
  }
  $("#f-ttl").disabled = true; // the lifetime is fixed at creation
  showRouting($("#episode-form")).catch(() => {});
}

function stopEditing() {
  state.editing = null;
  $("#episode-form-title").textContent = "New episode";
  $("#episode-submit").textContent = "Create episode";
  $("#episode-cancel").hidden = true;
  $("#f-ttl").disabled = false;
}

async function submitEpisode(event) {
  event.preventDefault();
  const body = formBody($("#episode-form"));
  if (state.editing) {
    await api("PATCH", `/episodes/${state.editing}`, body);
    say(`episode ${state.editing} changed`, true);
    stopEditing();
  } else {
    const created = await api("POST", "/episodes", body);
    say(`episode ${created.id} created — proxy ${created.proxy_url}`, true);
  }
  await loadEpisodes();
}

function episodeRow(episode) {
  const row = element("tr", null, { "data-episode": episode.id });
  const cells = [
    episode.id,
    episode.condition,
    episode.condition.endsWith("-Exec") ? episode.regime : "—",
    episode.seed,
    episode.site || "auto",
    episode.suspended ? "suspended" : "active",
    Object.entries(episode.tags).map(([k, v]) => `${k}=${v}`).join(" "),
  ];
  for (const value of cells) row.append(element("td", value));
  const actions = element("td", null, { class: "actions" });
  const id = episode.id;
  actions.append(
    button("Events", () => showLog(id), `Events of ${id}`),
    button("Pages", () => showPages(id), `Pages of ${id}`),
    button("Edit", async () => {
      state.editing = id;
      fillForm(episode);
      $("#episode-form-title").textContent = `Edit ${id}`;
      $("#episode-submit").textContent = "Save changes";
      $("#episode-cancel").hidden = false;
    }, `Edit ${id}`),
    button(episode.suspended ? "Resume" : "Suspend", async () => {
      await api("POST", `/episodes/${id}/${episode.suspended ? "resume" : "suspend"}`);
      await loadEpisodes();
    }, `${episode.suspended ? "Resume" : "Suspend"} ${id}`),
    button("Reset", async () => {
      await api("POST", `/episodes/${id}/reset`);
      say(`episode ${id} reset: flags, counters and events cleared`, true);
      await loadEpisodes();
    }, `Reset ${id}`),
    button("Delete", async () => {
      if (!confirm(`Delete episode ${id}?`)) return;
      await api("DELETE", `/episodes/${id}`);
      if (state.logEpisode === id) hideLog();
      await loadEpisodes();
    }, `Delete ${id}`),
  );
  row.append(actions);
  return row;
}

// Episodes and listeners, read together and redrawn only when they changed (a redraw while
// nothing changed would throw away a choice being made). Only the latest read is drawn: an
// older one finishing late would show what no longer is.
async function loadEpisodes() {
  const load = ++state.loads;
  const [episodes, listeners] = await Promise.all([api("GET", "/episodes"), api("GET", "/listeners")]);
  if (load !== state.loads) return;
  const shown = episodes.episodes.filter((e) => e.tags.preview !== "1");
  const key = JSON.stringify([shown, listeners.listeners]);
  if (key === state.shown) return;
  state.shown = key;
  state.episodes = shown;
  $("#episode-table tbody").replaceChildren(...shown.map(episodeRow));
  showListeners(listeners.listeners);
}

// ---- live event log -------------------------------------------------------------------------

function eventLine(event) {
  const { id, type, ts, source, ...rest } = event;
  const when = new Date(ts * 1000).toISOString().slice(11, 23);
  return element("li", `${when} ${source || ""} ${type} ${JSON.stringify(rest)}`, {
    "data-type": type,
  });
}

async function pollLog() {
  const id = state.logEpisode;
  if (!id) return;
  const query = state.logAfter ? `?after=${state.logAfter}&limit=1000` : "?limit=1000";
  const data = await api("GET", `/episodes/${id}/events${query}`);
  if (state.logEpisode !== id) return;
  $("#log-events").append(...data.events.map(eventLine));
  state.logAfter = data.next || state.logAfter;
}

async function showLog(id) {
  hideLog();
  state.logEpisode = id;
  $("#log").hidden = false;
  $("#log-title").textContent = `Event log of ${id}`;
  await pollLog();
  state.logTimer = setInterval(() => {
    if ($("#log-live").checked) pollLog().catch((error) => say(error.message));
  }, 1000);
}

function hideLog() {
  clearInterval(state.logTimer);
  Object.assign(state, { logEpisode: null, logAfter: null, logTimer: null });
  $("#log-events").replaceChildren();
  $("#log").hidden = true;
}

// ---- recorded pages, side by side ----------------------------------------------------------

function locators(side) {
  const parts = [];
  if (side.id) parts.push(`#${side.id}`);
  if (side.classes.length) parts.push(`.${side.classes.join(".")}`);
  for (const [name, value] of Object.entries(side.hooks)) parts.push(`[${name}=${value}]`);
  parts.push(side.path);
  return parts.join(" ");
}

async function showLoad(id, load) {
  const page = await api("GET", `/episodes/${id}/pages/${load}`);
  $("#pages-load").value = String(load);
  const base = `/ui/pages/${encodeURIComponent(id)}/${load}`;
  $("#pages-source").src = `${base}/source`;
  $("#pages-served").src = `${base}/served`;
  const popup = page.popup ? `; popup ${page.popup.kind} after ${page.popup.delay_ms} ms` : "";
  $("#pages-summary").textContent =
    `load ${load}: ${page.url} — ${page.elements.length} elements changed${popup}`;
  $("#pages-changes tbody").replaceChildren(...page.elements.map((change) => {
    const row = element("tr");
    row.append(element("td", `<${change.tag}> ${change.text}`),
      element("td", locators(change.before)), element("td", locators(change.after)));
    return row;
  }));
}

async function showPages(id) {
  const data = await api("GET", `/episodes/${id}/pages`);
  if (!data.pages.length) throw new Error(`episode ${id} has no recorded page`);
  state.pagesEpisode = id;
  $("#pages").hidden = false;
  $("#pages-title").textContent = `Recorded pages of ${id}`;
  $("#pages-load").replaceChildren(...data.pages.map((page) =>
    element("option", `${page.load}: ${page.url}`, { value: String(page.load) })));
  await showLoad(id, data.pages[0].load);
}

function stepLoad(offset) {
  const select = $("#pages-load");
  const index = select.selectedIndex + offset;
  if (index < 0 || index >= select.options.length) return Promise.resolve();
  return showLoad(state.pagesEpisode, Number(select.options[index].value));
}

// ---- listeners ------------------------------------------------------------------------------

function showListeners(listeners) {
  const rows = listeners.map((listener) => {
    const row = element("tr", null, { "data-listener": listener.name });
    row.append(element("td", listener.name), element("td", listener.kind),
      element("td", listener.upstream || "—"));
    if (!listener.takes_default) {
      // The agents' listener: a default would capture agents' browsers (see the README).
      row.append(element("td", "— (agents' listener: bind by credentials)"), element("td"));
      return row;
    }
    const select = element("select", null, { "aria-label": `Default episode of ${listener.name}` });
    select.append(element("option", "(none)", { value: "" }));
    for (const episode of state.episodes) {
      select.append(element("option", `${episode.id} (${episode.condition})`, { value: episode.id }));
    }
    // A choice not set yet survives a redraw, as long as its episode does.
    const choice = state.listenerChoices[listener.name];
    const offered = [...select.options].some((option) => option.value === choice);
    select.value = choice !== undefined && offered ? choice : listener.default_episode || "";
    select.addEventListener("change", () => { state.listenerChoices[listener.name] = select.value; });
    const cell = element("td");
    cell.append(select);
    row.append(cell);
    const set = element("td");
    set.append(button("Set", async () => {
      await api("PUT", `/listeners/${listener.name}`, { default_episode: select.value || null });
      delete state.listenerChoices[listener.name];
      say(`listener ${listener.name}: default episode ${select.value || "cleared"}`, true);
      await loadEpisodes();
    }, `Set default of ${listener.name}`));
    row.append(set);
    return row;
  });
  $("#listener-table tbody").replaceChildren(...rows);
}

// ---- what Tgt routes to ---------------------------------------------------------------------

// Without a target deployment for a page's origin, a Tgt condition serves the synthetic
// variant of a site profile; with the site left to "match by page", a profile's own targets do
// not apply. The form says which, from the API's answer for its site and targets.
async function showRouting(form) {
  const note = form.querySelector(".routing");
  const condition = form.querySelector("[data-field=condition]");
  const applies = !condition || (state.conditions[condition.value] || []).includes("contextual");
  note.hidden = !applies;
  if (!applies) return;
  const routing = ++state.routings;
  let text;
  try {
    const site = form.querySelector("[data-field=site]").value || null;
    const targets = parseJson(form.querySelector("[data-field=targets]"));
    const { routes } = await api("POST", "/ui/routing", { site, targets });
    const profile = site ? `the ${site} profile` : "the profile matched by each page";
    const pairs = Object.entries(routes).map(([source, target]) => `${source} → ${target}`);
    if (pairs.length) {
      text = `Tgt routes ${pairs.join(", ")}; pages of other origins get the synthetic variant `
        + `of ${profile}.`;
    } else {
      const withTargets = state.sites.filter((s) => Object.keys(s.targets).length).map((s) => s.name);
      text = `Tgt has no target deployment here: every page gets the synthetic variant of ${profile} `
        + "(a fixed re-skin, not a second version). Give Targets"
        + (withTargets.length ? `, or pick a site that has them: ${withTargets.join(", ")}.` : ".");
    }
  } catch (error) {
    text = `Tgt routing unknown: ${labelled(error.message, form)}`;
  }
  if (routing === state.routings) note.textContent = text;
}

// ---- preview and reports --------------------------------------------------------------------

async function submitPreview(event) {
  event.preventDefault();
  const grid = $("#preview-grid");
  const body = formBody($("#preview-form"));
  grid.replaceChildren(element("p", "Rendering… (one browser, six conditions)"));
  let data;
  try {
    data = await api("POST", "/ui/preview", body);
  } catch (error) {
    grid.replaceChildren();
    throw error;
  }
  grid.replaceChildren(...data.shots.map((shot) => {
    const figure = element("figure", null, { "data-condition": shot.condition });
    if (shot.png) figure.append(element("img", null, { src: shot.png, alt: `${shot.condition} screenshot` }));
    const caption = shot.error ? `${shot.condition}: ${shot.error}` : `${shot.condition} — ${shot.title}`;
    figure.append(element("figcaption", caption));
    return figure;
  }));
}

async function submitReport(event) {
  if (event) event.preventDefault();
  const groupBy = $("#r-group").value.trim() || "condition";
  $("#r-csv").href = `/reports?group_by=${encodeURIComponent(groupBy)}&format=csv`;
  const data = await api("GET", `/reports?group_by=${encodeURIComponent(groupBy)}`);
  const columns = [...data.group_by, ...data.columns];
  const head = element("tr");
  head.append(...columns.map((c) => element("th", c)));
  $("#report-table thead").replaceChildren(head);
  $("#report-table tbody").replaceChildren(...data.rows.map((row) => {
    const tr = element("tr");
    tr.append(...columns.map((c) => element("td", row[c] === null ? "—" : row[c])));
    return tr;
  }));
}

// ---- start ----------------------------------------------------------------------------------

async function showSection(name) {
  for (const section of document.querySelectorAll("main > section")) section.hidden = section.id !== name;
  for (const tab of document.querySelectorAll("nav button")) {
    tab.setAttribute("aria-pressed", String(tab.dataset.section === name));
  }
  if (name === "reports") await submitReport();
}

async function loadCatalogue() {
  const [conditions, sites] = await Promise.all([api("GET", "/conditions"), api("GET", "/sites")]);
  state.conditions = Object.fromEntries(conditions.conditions.map((c) => [c.name, c.shifts]));
  state.sites = sites.sites;
  for (const select of [$("#f-site"), $("#p-site")]) {
    select.append(...sites.sites.map((s) => element("option", s.name, { value: s.name })));
  }
  await applySchema();
}

async function health() {
  try {
    const data = await (await fetch("/health")).json();
    $("#health").textContent = `store ${data.store.kind}: ${data.status}`;
  } catch {
    $("#health").textContent = "API unreachable";
  }
}

async function signIn(event) {
  event.preventDefault();
  const token = $("#login-token");
  try {
    await api("POST", "/ui/session", { token: token.value });
  } catch (error) {
    if (error.status !== 401) throw error;
    token.value = "";
    token.focus();
    throw new Error("The API refused this token: it is not the token the service was started "
      + "with (--api-token). Try again.");
  }
  location.reload();
}

async function start() {
  for (const tab of document.querySelectorAll("nav button")) {
    tab.addEventListener("click", act(() => showSection(tab.dataset.section)));
  }
  const episodeForm = $("#episode-form");
  const previewForm = $("#preview-form");
  episodeForm.addEventListener("submit", act(submitEpisode, episodeForm));
  $("#episode-cancel").addEventListener("click", act(async () => stopEditing()));
  previewForm.addEventListener("submit", act(submitPreview, previewForm));
  for (const form of [episodeForm, previewForm]) {
    form.addEventListener("input", () => showRouting(form).catch(() => {}));
  }
  $("#pages-previous").addEventListener("click", act(() => stepLoad(-1)));
  $("#pages-next").addEventListener("click", act(() => stepLoad(1)));
  $("#pages-load").addEventListener("change", act(() =>
    showLoad(state.pagesEpisode, Number($("#pages-load").value))));
  $("#report-form").addEventListener("submit", act(submitReport));
  $("#login").addEventListener("submit", act(signIn));
  await health();
  setInterval(health, 5000);
  await loadCatalogue();
  await Promise.all([loadEpisodes(), showRouting(episodeForm), showRouting(previewForm)]);
  // A failed refresh is not the user's doing: the health line says when the API is down.
  setInterval(() => { if (!document.hidden) loadEpisodes().catch(() => {}); }, REFRESH_MS);
}

start().catch((error) => say(error.message));

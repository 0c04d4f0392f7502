// One function per page: it draws into `main` and may return a function that undoes what
// keeps running (the feed's socket). Everything read from the API is put in the page as
// text, never as HTML.

import { call, get, post, feedUrl } from "./api.js";

/// An element: `h("p", {class: "muted"}, "text", child, ...)`.
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) element.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const percent = (x) => `${Math.round(x * 100)}%`;
const short = (text, n = 160) => (text.length > n ? `${text.slice(0, n)}…` : text);
/// What a memory is called in a list: the title its source gave (a mail's subject, a
/// page's name), else the subject line of a text that starts with mail headers, else its
/// first line — never "From: … To: … Date: …".
function titleOf(m) {
  const given = m.metadata && typeof m.metadata.title === "string" && m.metadata.title.trim();
  if (given) return given;
  const lines = m.content.split("\n").map((l) => l.trim()).filter(Boolean);
  const header = /^(from|to|cc|bcc|date|subject|reply-to|message-id):\s/i;
  if (lines.length > 1 && header.test(lines[0])) {
    const subject = lines.find((l) => /^subject:\s/i.test(l));
    if (subject) return subject.replace(/^subject:\s*/i, "") || "(no subject)";
    const body = lines.find((l) => !header.test(l));
    if (body) return body;
  }
  return lines[0] || m.content;
}
const memoryLink = (m) => h("a", { href: `/memories/${encodeURIComponent(m.id)}` }, short(titleOf(m)));
const empty = (text) => h("p", { class: "empty" }, text);

/// A word-level diff of `before` → `after` (longest common subsequence over words and the
/// spaces between them): removed words in <del>, added ones in <ins>.
function wordDiff(before, after) {
  const a = before.split(/(\s+)/), b = after.split(/(\s+)/);
  // Quadratic in words: a held candidate and its neighbour are a few hundred at most.
  if (a.length * b.length > 4e6) return [h("del", {}, before), " ", h("ins", {}, after)];
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) { out.push(a[i]); i++; j++; }
    // On a tie the removed words come first, as diffs read.
    else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(h("del", {}, a[i++]));
    else out.push(h("ins", {}, b[j++]));
  }
  return out;
}

/// Whether the caller may change things (`/api/health` says its role): a viewer sees no
/// write buttons at all, rather than buttons that fail.
let canWrite = true;
let isAdmin = true;
export function setRole(role) {
  canWrite = role !== "viewer";
  isAdmin = role === "admin";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const when = (at) => new Date(at).toLocaleString();
/// The surface an event came through, and its client when that says more.
const via = (event) => [event.surface, event.client !== event.surface && event.client].filter(Boolean).join(" · ");

/// An event's detail as words: `by <memory>, similarity 0.82, stability_hours 31.2`; a
/// memory id links to its page.
function detail(object) {
  return Object.entries(object || {}).flatMap(([key, value], i) => {
    const shown = typeof value === "number" ? String(Math.round(value * 1000) / 1000)
      : typeof value === "string" ? value : JSON.stringify(value);
    const item = key === "by" && UUID.test(shown)
      ? [`${key} `, h("a", { href: `/memories/${encodeURIComponent(shown)}` }, shown.slice(0, 8))]
      : [`${key} ${shown}`];
    return i === 0 ? item : [", ", ...item];
  });
}

/// `element` with a height in percent, set through the CSSOM: the content security policy
/// refuses inline style attributes.
function sized(element, percent) {
  element.style.height = `${percent}%`;
  return element;
}

/// A warning paragraph per message given (none for none: `append` would print "null").
const warnings = (...messages) => messages.filter(Boolean).map((m) => h("p", { class: "warning" }, m));

/// A JSON block with a button that copies it.
function copyable(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const note = h("span", { class: "muted", role: "status" });
  const button = h("button", {
    type: "button",
    async onclick() {
      try { await navigator.clipboard.writeText(text); note.textContent = "copied"; }
      catch { note.textContent = "select the text and copy it (the clipboard is not available here)"; }
    },
  }, "Copy");
  return h("div", { class: "copy" }, h("pre", { tabindex: 0 }, text), button, " ", note);
}

/// Says what an action did in the notice under the header, where it stays until the next
/// one or until dismissed: a message beside a button vanished with the redraw the action
/// caused, before anyone could read it. `kind`: good or error.
export function notify(text, kind = "good") {
  const notice = document.getElementById("notice");
  if (!notice) return;
  notice.className = `notice ${kind}`;
  notice.querySelector("span").textContent = text;
  notice.hidden = false;
}

/// A button that runs `action`, says it was done (or the API's error beside itself), then
/// `done`; nothing for a viewer.
function action(label, run, done, kind) {
  if (!canWrite) return null;
  const note = h("span", { class: "muted", role: "status" });
  const button = h("button", {
    class: kind,
    async onclick() {
      button.disabled = true;
      try {
        const said = await run();
        note.textContent = "";
        // A run may say what happened in its own words; otherwise the button's.
        if (said !== false) notify(typeof said === "string" ? said : `${label.replace(/ \(.\)$/, "")}: done.`, "good");
        if (done) await done();
      } catch (error) {
        note.textContent = error.message;
        note.className = "error";
      } finally {
        button.disabled = false;
        // Keep the keyboard where it was: on the button, when the action left it in place.
        if (button.isConnected) button.focus();
      }
    },
  }, label);
  return h("span", {}, button, note);
}

function chart(target, labels, series, title) {
  if (!window.uPlot) return;
  // clientWidth includes the card's padding; the plot fits inside it.
  const width = Math.min((target.clientWidth || 600) - 32, 900);
  // A canvas takes colours, not CSS variables: read the theme's (light or dark) once.
  const style = getComputedStyle(document.documentElement);
  const color = (name) => style.getPropertyValue(name).trim();
  const axis = (label) => ({ label, stroke: color("--muted"), grid: { stroke: color("--line") }, ticks: { stroke: color("--line") } });
  new window.uPlot(
    { title, width, height: 220, scales: { x: { time: false }, y: { range: [0, 1] } },
      series: [{ label: labels.name }, { label: series.name, stroke: color("--accent"), width: 2 }],
      axes: [axis(labels.name), axis(series.name)] },
    [labels.values, series.values],
    target,
  );
}

/// A link to an entity's page (a person's under /people).
const entityLink = (e) => e ? h("a", { href: `/${e.kind === "person" ? "people" : "entities"}/${encodeURIComponent(e.id)}` }, e.name) : "?";
/// The day of an instant, in the browser's zone.
const day = (at) => (at ? new Date(at).toLocaleDateString() : "—");
/// The last time something happened with someone; a calendar's coming event is not "last".
const lastSeen = (at) => (at && new Date(at) > new Date() ? `next ${day(at)}` : day(at));

/// The graph as SVG: nodes on a circle (people, then the rest), lines as wide as their
/// weight. Scales with its container through the viewBox, so it never scrolls sideways.
function graphDrawing(graph) {
  const svg = (tag, attributes, ...children) => {
    const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    for (const child of children) element.append(child);
    return element;
  };
  const size = 640, middle = size / 2, radius = size / 2 - 110;
  const nodes = [...graph.nodes].sort((a, b) => (a.kind === "person" ? 0 : 1) - (b.kind === "person" ? 0 : 1));
  const at = new Map(nodes.map((n, i) => {
    const angle = (2 * Math.PI * i) / nodes.length - Math.PI / 2;
    return [n.id, { x: middle + radius * Math.cos(angle), y: middle + radius * Math.sin(angle), angle }];
  }));
  const heaviest = Math.max(1, ...graph.edges.map((e) => e.weight));
  const drawing = svg("svg", { viewBox: `0 0 ${size} ${size}`, role: "group", "aria-label": `Graph of ${nodes.length} entities`, class: "graph" });
  for (const edge of graph.edges) {
    const a = at.get(edge.from), b = at.get(edge.to);
    if (!a || !b) continue;
    drawing.append(svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "edge", "stroke-width": 0.5 + (4 * edge.weight) / heaviest },
      svg("title", {}, `${edge.weight} shared`)));
  }
  for (const node of nodes) {
    const p = at.get(node.id);
    const link = svg("a", { href: `/${node.kind === "person" ? "people" : "entities"}/${encodeURIComponent(node.id)}` },
      svg("circle", { cx: p.x, cy: p.y, r: 4 + Math.min(10, Math.sqrt(node.memories) * 2), class: `node ${node.kind}` }),
      svg("text", { x: p.x + 14 * Math.cos(p.angle), y: p.y + 14 * Math.sin(p.angle) + 4, "text-anchor": Math.cos(p.angle) < -0.1 ? "end" : Math.cos(p.angle) > 0.1 ? "start" : "middle" },
        node.name.length > 22 ? `${node.name.slice(0, 21)}…` : node.name),
      svg("title", {}, `${node.name} (${node.kind}) · ${node.memories} memories`));
    drawing.append(link);
  }
  return h("div", { class: "card graph" }, drawing);
}

/// A sync report's counts, in words.
const reportCounts = (r) => ["fetched", "admitted", "redacted", "updated", "unchanged", "held", "rejected", "failed", "skipped", "retired"]
  .filter((k) => r[k]).map((k) => `${r[k]} ${k}`).join(", ") || "nothing fetched";

/// What became of each item a run did not store (held, rejected, failed, skipped), and its
/// error lines.
function outcomes(report) {
  const items = report.not_stored || [];
  const parts = [];
  if (items.length) {
    parts.push(h("table", { class: "outcomes" }, items.map((item) => h("tr", {},
      h("td", {}, h("strong", {}, item.fate)),
      h("td", {}, h("code", {}, item.source_id)),
      h("td", { class: "terms" }, item.reason,
        item.held_id ? [" — ", h("a", { href: "/held" }, "decide on Held")] : "",
        item.nearest ? [" — like ", h("a", { href: `/memories/${encodeURIComponent(item.nearest)}` }, "this memory")] : "")))));
  }
  const retired = report.retirements || [];
  if (retired.length) {
    parts.push(h("table", { class: "outcomes", "aria-label": "Retired: gone from the source" }, retired.map((item) => h("tr", {},
      h("td", {}, h("strong", {}, item.kept_pinned ? "kept (pinned)" : "retired")),
      h("td", {}, h("code", {}, item.source_id)),
      h("td", { class: "terms" }, item.reason,
        item.memory_id ? [" — ", h("a", { href: `/memories/${encodeURIComponent(item.memory_id)}` }, "the retired memory")] : "",
        item.kept_pinned ? [" — ", h("a", { href: `/memories/${encodeURIComponent(item.kept_pinned)}` }, "the pinned memory")] : "")))));
  }
  const lines = (report.errors || []).filter((line) => !items.some((item) => line.includes(item.source_id)));
  if (lines.length) parts.push(h("ul", { class: "errors" }, lines.map((line) => h("li", {}, line))));
  return parts.length ? parts : [h("p", { class: "muted" }, "Every item was stored or already known.")];
}

/// One connector: what it asks for, what it was granted (grant / revoke), and a sync form
/// from its settings, showing the run's progress and each item's outcome.
function connectorCard(c) {
  const id = c.id;
  const base = `/api/connectors/${encodeURIComponent(id)}`;
  const card = h("section", { class: "card connector", "aria-label": id });
  if (c.error) {
    card.append(h("h2", {}, id), h("p", { class: "error" }, c.error));
    return card;
  }
  const grants = h("div");
  const form = h("form", { class: "sync" });
  const report = h("div", { class: "report", role: "status" });
  const asks = c.capabilities.map((cap) => cap.kind === "read-path" ? `read the path in ${cap.value}` : `reach the host in ${cap.value}`);
  card.append(h("h2", {}, id, h("span", { class: "muted" }, ` ${c.version} · ${c.origin}`)),
    h("p", {}, c.description),
    h("p", { class: "muted" }, `Asks to ${asks.join("; ") || "nothing"}.`),
    grants, h("details", {}, h("summary", {}, "Sync now…"), form, report));

  const wantsHosts = c.capabilities.some((cap) => cap.kind === "http-host");
  const wantsPaths = c.capabilities.some((cap) => cap.kind === "read-path");
  const drawGrants = (help) => {
    const given = [...help.granted_paths.map((p) => ["directory", p]), ...help.granted_hosts.map((x) => ["host", x])];
    grants.replaceChildren(
      given.length === 0 ? h("p", { class: "empty" }, "Nothing granted yet.") :
        h("ul", { class: "grants" }, given.map(([kind, value]) => h("li", {}, `${kind} `, h("code", {}, value), " ",
          isAdmin ? action("Revoke", async () => drawGrants(await post(`${base}/revoke`, { [kind]: value })), null, "danger") : null))));
    if (isAdmin && (wantsPaths || wantsHosts)) {
      const kind = wantsPaths ? "directory" : "host";
      const input = h("input", { name: kind, placeholder: kind === "directory" ? "/absolute/path/to/a/directory" : "api.example.com", "aria-label": `${kind} to grant ${id}`, required: true });
      const note = h("span", { class: "muted", role: "status" });
      const add = h("form", { class: "search" }, input, h("button", {}, `Grant ${kind}`), note);
      add.addEventListener("submit", async (event) => {
        event.preventDefault();
        try { drawGrants(await post(`${base}/grants`, { [kind]: input.value })); }
        catch (error) { note.className = "error"; note.textContent = error.message; }
      });
      grants.append(add);
    }
    drawForm(help);
  };

  const drawForm = (help) => {
    const granted = [...help.granted_paths, ...help.granted_hosts];
    const list = `granted-${id}`;
    form.replaceChildren(h("datalist", { id: list }, granted.map((g) => h("option", { value: g }))),
      ...help.manifest.config.map((key) => {
        const attributes = { name: key.name, "aria-label": key.name, required: key.required || undefined };
        const field = key.value_type === "boolean"
          ? h("input", { ...attributes, type: "checkbox", checked: key.default_value === "true" || undefined })
          : h("input", { ...attributes, type: key.value_type === "integer" ? "number" : "text",
            list: key.value_type === "path" ? list : undefined,
            placeholder: key.default_value || { path: "a granted path, or a file under one", "text-list": "comma-separated" }[key.value_type] || key.value_type });
        return h("label", {}, h("span", {}, h("code", {}, key.name), key.required ? " (required)" : ""), field, h("span", { class: "terms" }, key.help));
      }),
      h("label", {}, "project ", h("input", { name: "project", placeholder: "optional" })),
      h("label", {}, h("input", { name: "dry_run", type: "checkbox" }), " dry run (ask the gate, store nothing)"),
      canWrite ? h("button", { class: "primary" }, "Sync") : null);
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const config = {};
    for (const input of form.querySelectorAll("input[name]")) {
      if (input.name === "project" || input.name === "dry_run") continue;
      if (input.type === "checkbox") { if (input.checked) config[input.name] = "true"; }
      else if (input.value.trim()) config[input.name] = input.value.trim();
    }
    const body = { config, dry_run: data.get("dry_run") === "on" };
    if (data.get("project")) body.project = data.get("project");
    const button = form.querySelector("button");
    button.disabled = true;
    // The run's record is written after each page: read it while the sync runs.
    const progress = h("p", { class: "muted" }, "syncing…");
    report.replaceChildren(progress);
    const started = Date.now();
    const timer = setInterval(async () => {
      const [run] = await get(`/api/connectors/sync-state?id=${encodeURIComponent(id)}&limit=1`).catch(() => []);
      if (run && run.status === "running" && Date.parse(run.started_at) >= started - 5000)
        progress.textContent = run.pages ? `syncing… ${run.pages} pages so far: ${reportCounts(run)}` : "syncing… (reading the first page)";
    }, 500);
    try {
      const result = await post(`${base}/sync`, body);
      report.replaceChildren(h("p", {}, h("strong", {}, result.status), ` — ${reportCounts(result)}`), ...outcomes(result));
    } catch (error) {
      report.replaceChildren(h("p", { class: "error" }, error.message));
    } finally {
      clearInterval(timer);
      button.disabled = false;
    }
  });

  // The settings and grants come with the connector's help.
  get(base).then(drawGrants, (error) => grants.replaceChildren(h("p", { class: "error" }, error.message)));
  return card;
}

export const pages = {
  async home(main) {
    const [stats, fading, held, runs] = await Promise.all([
      get("/api/stats"),
      get("/api/memories/fading?limit=5"),
      get("/api/memories/held"),
      get("/api/connectors/sync-state"),
    ]);
    main.append(h("h1", {}, "Home"));
    if (stats.total === 0) {
      main.append(h("div", { class: "card" },
        h("p", {}, "No memories yet — capture one or run a connector."),
        h("p", {}, h("code", {}, 'levh capture "The deploy branch is main"'), " in a terminal, a connector on the ",
          h("a", { href: "/connectors" }, "Connectors"), " page, or an agent over MCP (configs on ",
          h("a", { href: "/settings" }, "Settings"), ").")));
    }
    main.append(h("div", { class: "grid" },
      h("div", { class: "card" }, h("div", { class: "count" }, stats.total), h("a", { href: "/memories" }, "memories")),
      h("div", { class: "card" }, h("div", { class: "count" }, stats.pinned), h("a", { href: "/memories?show=pinned" }, "pinned")),
      h("div", { class: "card" }, h("div", { class: "count" }, stats.fading), h("a", { href: "/fading" }, "fading")),
      h("div", { class: "card" }, h("div", { class: "count" }, held.held.length), h("a", { href: "/held" }, "held for review")),
      h("div", { class: "card" }, h("div", { class: "count" }, percent(stats.average_retention)), "average retention"),
    ));
    // Retention now, per tenth: an HTML bar chart (it reads in light and dark, and a
    // screen reader gets the numbers from its label).
    const bins = stats.retention_histogram;
    const top = Math.max(1, ...bins);
    const label = bins.map((n, i) => `${i * 10}–${i * 10 + 10}%: ${n}`).join(", ");
    main.append(h("h2", {}, "Retention now"), h("div", { class: "card" },
      h("div", { class: "bars", role: "img", "aria-label": `Memories by retention — ${label}` },
        bins.map((n, i) => h("div", { class: "bar", title: `${n} memories at ${i * 10}–${i * 10 + 10}% retention` },
          h("span", { class: "n" }, n || ""), sized(h("span", { class: "fill" }), (n / top) * 100)))),
      h("div", { class: "bars axis", "aria-hidden": "true" }, bins.map((_, i) => h("span", {}, `${i * 10}%`)))));
    // Each group a link to its memories.
    const counts = (title, map, filter) => h("div", { class: "card" }, h("h2", {}, title),
      Object.keys(map).length === 0 ? empty("none") :
        h("table", {}, Object.entries(map).map(([k, v]) => h("tr", {},
          h("td", {}, h("a", { href: `/memories?${filter}=${encodeURIComponent(k)}` }, k)), h("td", {}, v)))));
    main.append(h("div", { class: "grid" },
      counts("Projects", stats.by_project, "project"), counts("Sources", stats.by_source, "source"), counts("Kinds", stats.by_kind, "kind")));
    main.append(h("h2", {}, "Fading"), fading.memories.length === 0 ? empty("Nothing is fading.") :
      h("ul", {}, fading.memories.map((m) => h("li", {}, memoryLink(m), " ", h("span", { class: "muted" }, percent(m.retention))))));
    const recent = runs.slice(0, 5);
    main.append(h("h2", {}, "Recent syncs"), recent.length === 0 ? empty("No sync yet.") :
      h("table", {}, recent.map((r) => h("tr", {}, h("td", {}, r.connector), h("td", {}, r.status),
        h("td", {}, `${r.admitted} stored, ${r.held} held, ${r.failed} failed`), h("td", { class: "optional muted" }, r.started_at ? when(r.started_at) : "")))));
  },

  feed(main) {
    main.append(h("h1", {}, "Feed"), h("p", { class: "muted" }, "Every change in this workspace, as it happens."));
    const list = h("ul", { class: "feed" });
    const state = h("p", { class: "muted", role: "status" }, "connecting…");
    const kinds = ["", "store", "update", "importance", "recall-reinforce", "reinforce", "feedback", "pin", "unpin",
      "forget", "purge", "interfere", "supersede", "hold", "admit", "discard", "expire", "redact", "move", "review", "promote", "sync-run"];
    const surfaces = ["", "cli", "mcp", "http", "dashboard", "sync"];
    const select = (name, values) => h("select", { name, "aria-label": name },
      values.map((v) => h("option", { value: v }, v || `any ${name}`)));
    const filters = h("form", { class: "search" }, select("kind", kinds), select("surface", surfaces));
    // Filtering hides rows rather than dropping events, so widening it again shows them.
    const apply = () => {
      const data = new FormData(filters);
      for (const row of list.children) {
        row.hidden = (data.get("kind") && row.dataset.kind !== data.get("kind")) ||
          (data.get("surface") && row.dataset.surface !== data.get("surface"));
      }
    };
    filters.addEventListener("change", apply);
    main.append(filters, state, list);
    // Opening shows the workspace's recent events, then live ones; when the server goes
    // away (a restart) the page reconnects by itself, backing off to 10 s, and what the
    // server sends again on reconnecting is shown once (events are keyed by their seq).
    let socket = null;
    let closed = false;
    let delay = 500;
    const seen = new Set();
    const connect = () => {
      socket = new WebSocket(feedUrl());
      socket.onopen = () => { state.textContent = "live"; delay = 500; };
      socket.onclose = () => {
        if (closed) return;
        state.textContent = `disconnected — reconnecting in ${Math.round(delay / 1000) || 1} s…`;
        setTimeout(() => { if (!closed) connect(); }, delay);
        delay = Math.min(delay * 2, 10000);
      };
      socket.onmessage = receive;
    };
    // Events carry ids, never content: each memory's text is read once, for its link. A
    // memory forgotten or purged has none to read, and keeps its id.
    // The history arrives in one burst, oldest first: links are labelled a moment later,
    // so a memory forgotten or purged further on in the burst is not asked for (it has
    // no text to show, and asking would fail).
    const contents = new Map();
    const gone = new Set();
    let waiting = [];
    const flush = () => {
      for (const [link, id] of waiting) {
        if (gone.has(id)) continue;
        if (!contents.has(id)) contents.set(id, get(`/api/memories/${encodeURIComponent(id)}`).then((m) => short(m.content, 100), () => null));
        contents.get(id).then((text) => { if (text) link.textContent = text; });
      }
      waiting = [];
    };
    const label = (link, id, kind) => {
      if (kind === "forget" || kind === "purge") { gone.add(id); return; }
      if (waiting.length === 0) setTimeout(flush, 50);
      waiting.push([link, id]);
    };
    const receive = (message) => {
      const event = JSON.parse(message.data);
      if (event.seq !== undefined) {
        if (seen.has(event.seq)) return;
        seen.add(event.seq);
      }
      const target = event.memory_id ? h("a", { href: `/memories/${encodeURIComponent(event.memory_id)}` }, event.memory_id) : "";
      if (event.memory_id) label(target, event.memory_id, event.kind);
      list.prepend(h("li", { "data-kind": event.kind, "data-surface": event.surface }, h("strong", {}, event.kind), " ", target, " ",
        h("span", { class: "muted" }, [via(event), when(event.at)].join(" · "))));
      apply();
    };
    connect();
    return () => { closed = true; socket.close(); };
  },

  // Every memory, newest first, with filters; "More" reads the next page after the last
  // one shown (keyset: as cheap at the 100,000th memory as at the first).
  // Every memory, filtered, sorted and paged by keyset (each page after the last row
  // of the one before: as cheap as the first at any size), with the count that matches,
  // and actions on a selection of rows.
  async memories(main, _, query) {
    main.append(h("h1", {}, "Memories"));
    if (query.get("forgotten")) main.append(h("p", { class: "muted", role: "status" }, "Forgotten: it is no longer recalled, and kept for history until purged."));
    const [stats, people] = await Promise.all([get("/api/stats"), get("/api/people?limit=200").catch(() => ({ people: [] }))]);
    // The values that exist, with how many memories hold each: a filter offers them
    // rather than a free-text box that finds nothing on a typo.
    const choose = (name, label, counts) => h("label", {}, `${label} `, h("select", { name },
      h("option", { value: "" }, "any"),
      Object.entries(counts).map(([value, n]) => h("option", { value, selected: query.get(name) === value || undefined }, `${value} (${n})`))));
    const option = (name, value, text) => h("option", { value, selected: (query.get(name) || "") === value || undefined }, text);
    const form = h("form", { class: "filters", "aria-label": "Filters" },
      choose("project", "Project", stats.by_project),
      choose("kind", "Kind", stats.by_kind),
      choose("source", "Source", stats.by_source),
      h("label", {}, "Show ", h("select", { name: "show" },
        option("show", "", "live"), option("show", "pinned", "pinned"), option("show", "fading", "fading"),
        option("show", "forgotten", "forgotten"), option("show", "held", "held for review"))),
      h("label", {}, "About ", h("input", { name: "about", list: "memories-people", value: query.get("about") || "", placeholder: "a person or organization", size: 18 })),
      h("datalist", { id: "memories-people" }, people.people.map((p) => h("option", { value: p.name }))),
      h("label", {}, "From ", h("input", { name: "from", type: "date", value: query.get("from") || "" })),
      h("label", {}, "To ", h("input", { name: "to", type: "date", value: query.get("to") || "" })),
      h("label", {}, "Sort ", h("select", { name: "sort" },
        option("sort", "", "newest"), option("sort", "importance", "most important"),
        option("sort", "recalled", "last recalled"), option("sort", "retention", "weakest first"))),
      h("button", { class: "primary" }, "Filter"));
    const count = h("p", { class: "muted", role: "status", id: "memories-count" });
    const list = h("tbody");
    const more = h("button", { type: "button" }, "More");
    const all = h("input", { type: "checkbox", "aria-label": "Select every memory shown" });
    const head = h("thead", {}, h("tr", {}, h("th", {}, all), h("th", {}, "memory"), h("th", {}, "project"),
      h("th", { class: "optional" }, "kind"), h("th", {}, "retention"), h("th", { class: "optional" }, "importance"),
      h("th", { class: "optional" }, "created"), h("th", { class: "optional" }, "last recalled")));
    // The rows shown, by id: what a selection's actions and export act on.
    const shown = new Map();
    const selected = () => [...list.querySelectorAll("input[type=checkbox]:checked")].map((box) => box.value);
    const selection = h("div", { class: "actions selection", role: "group", "aria-label": "Selected memories" });
    const note = h("span", { role: "status", class: "muted" });
    const target = h("input", { list: "memories-projects", "aria-label": "Project to move to", placeholder: "project", size: 12 });
    const drawSelection = () => {
      const n = selected().length;
      all.checked = n > 0 && n === list.querySelectorAll("input[type=checkbox]").length;
      for (const button of selection.querySelectorAll("button")) button.disabled = n === 0;
      note.textContent = n ? `${n} selected` : "";
    };
    const each = async (run, done) => {
      const ids = selected();
      const failed = [];
      for (const id of ids) await run(id).catch((error) => failed.push(error.message));
      notify(failed.length ? `${done} ${ids.length - failed.length} of ${ids.length}; ${failed[0]}` : `${done} ${ids.length}.`, failed.length ? "error" : "good");
      await reload();
    };
    if (canWrite) {
      selection.append(
        h("button", { type: "button", onclick: () => each((id) => post(`/api/memories/${encodeURIComponent(id)}/pin`), "Pinned") }, "Pin"),
        h("button", { type: "button", class: "danger", onclick: () => {
          const n = selected().length;
          if (confirm(`Forget ${n} ${n === 1 ? "memory" : "memories"}? They will no longer be recalled (kept for history until purged).`)) each((id) => call("DELETE", `/api/memories/${encodeURIComponent(id)}`), "Forgot");
        } }, "Forget"),
        h("span", {}, target, " ", h("button", { type: "button", onclick: async () => {
          try {
            const moved = await post("/api/memories:move", { ids: selected(), project: target.value.trim() || null });
            notify(`Moved ${moved.moved.length} ${moved.project ? `to ${moved.project}` : "out of every project"}.`, "good");
            await reload();
          } catch (error) { notify(error.message, "error"); }
        } }, "Move to project")),
        h("datalist", { id: "memories-projects" }, Object.keys(stats.by_project).map((p) => h("option", { value: p }))));
    }
    selection.append(h("button", { type: "button", onclick: () => {
      // What `levh import` reads back: one memory a line, as the export writes it.
      const lines = selected().map((id) => JSON.stringify(shown.get(id))).join("\n") + "\n";
      const link = h("a", { href: URL.createObjectURL(new Blob([lines], { type: "application/x-ndjson" })), download: "levh-memories.jsonl" });
      document.body.append(link); link.click(); link.remove();
      notify(`Exported ${selected().length} to levh-memories.jsonl.`, "good");
    } }, "Export selection"), note);
    main.append(form, count, selection, h("table", { class: "memories" }, head, list), more);
    all.addEventListener("change", () => {
      for (const box of list.querySelectorAll("input[type=checkbox]")) box.checked = all.checked;
      drawSelection();
    });
    list.addEventListener("change", drawSelection);
    let after = null;
    let total = null;
    const filters = () => {
      const keep = new URLSearchParams();
      for (const [key, value] of new FormData(form)) if (value) keep.set(key, value);
      return keep;
    };
    // The page's filters as the API's parameters (a date is the person's local day).
    const params = (keep) => {
      const api = new URLSearchParams();
      for (const key of ["project", "kind", "source", "sort"]) if (keep.get(key)) api.set(key, keep.get(key));
      const show = keep.get("show");
      if (show === "pinned") api.set("pinned", "true");
      if (show === "fading") api.set("fading", "true");
      if (show === "forgotten") api.set("forgotten", "true");
      if (keep.get("about")) api.set("entity", keep.get("about"));
      if (keep.get("from")) api.set("created_after", new Date(`${keep.get("from")}T00:00`).toISOString());
      if (keep.get("to")) {
        const end = new Date(`${keep.get("to")}T00:00`);
        end.setDate(end.getDate() + 1);
        api.set("created_before", end.toISOString());
      }
      return api;
    };
    const row = (m) => {
      shown.set(m.id, m);
      return h("tr", {},
        h("td", {}, h("input", { type: "checkbox", value: m.id, "aria-label": `Select: ${short(m.content, 60)}` })),
        h("td", {}, memoryLink(m), m.pinned ? h("span", { class: "muted" }, " · pinned") : null),
        h("td", {}, m.project ? h("a", { href: `/memories?project=${encodeURIComponent(m.project)}` }, m.project) : "—"),
        h("td", { class: "optional" }, m.kind), h("td", {}, percent(m.retention)),
        h("td", { class: "optional" }, m.importance.toFixed(2)),
        h("td", { class: "optional muted" }, day(m.created_at)),
        h("td", { class: "optional muted" }, m.last_recalled_at ? day(m.last_recalled_at) : "never"));
    };
    const held = async () => {
      // Held candidates are not memories yet: shown here, decided on the Held page.
      const waiting = await get("/api/memories/held");
      list.replaceChildren(...waiting.held.map((c) => h("tr", {}, h("td", {}),
        h("td", {}, h("a", { href: "/held" }, short(c.content)), h("div", { class: "terms" }, c.reason || "")),
        h("td", {}, c.project || "—"), h("td", { class: "optional" }, c.source), h("td", {}, "held"),
        h("td", { class: "optional" }), h("td", { class: "optional muted" }, day(c.created_at)), h("td", { class: "optional" }))));
      selection.hidden = true;
      more.hidden = true;
      count.textContent = waiting.held.length === 0 ? "Nothing is held for review." : `${waiting.held.length} held for review — decide on the Held page.`;
    };
    const load = async () => {
      const keep = filters();
      if (keep.get("show") === "held") return held();
      selection.hidden = false;
      const api = params(keep);
      api.set("limit", "50");
      if (after) api.set("after", after);
      const page = await get(`/api/memories?${api}`);
      if (page.total !== undefined) total = page.total;
      list.append(...page.memories.map(row));
      if (page.memories.length > 0) after = page.memories[page.memories.length - 1].id;
      more.hidden = page.memories.length < 50;
      const n = list.children.length;
      count.textContent = n === 0 ? "No memories match." : total !== null && total > n ? `${n} of ${total} shown` : `${n} ${n === 1 ? "memory" : "memories"}`;
      drawSelection();
    };
    const reload = async () => {
      list.replaceChildren();
      shown.clear();
      after = null;
      total = null;
      await load();
    };
    const failed = (error) => { count.className = "error"; count.textContent = error.message; };
    more.addEventListener("click", () => load().catch(failed));
    // How long a filter change takes to show, and when the first page was on screen, as
    // User Timing entries (the browser's performance panel; the tests report them).
    const apply = async () => {
      const started = performance.now();
      const keep = filters();
      history.replaceState({}, "", keep.toString() ? `/memories?${keep}` : "/memories");
      count.className = "muted";
      try { await reload(); } catch (error) { failed(error); }
      performance.measure("levh:memories-list", { start: started });
    };
    form.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
    // A choice in a list applies at once; typed fields wait for Enter or Filter.
    form.addEventListener("change", (event) => { if (event.target.tagName === "SELECT" || event.target.type === "date") apply(); });
    await reload().catch(failed);
    performance.mark("levh:memories-shown");
  },

  async search(main, _, query) {
    main.append(h("h1", {}, "Search"));
    const stats = await get("/api/stats");
    // The values that exist, not free text that finds nothing on a typo.
    const choose = (name, label, counts) => h("select", { name, "aria-label": label },
      h("option", { value: "" }, `any ${name}`),
      Object.keys(counts).map((value) => h("option", { value, selected: query.get(name) === value || undefined }, value)));
    const form = h("form", { class: "search", role: "search" },
      h("input", { name: "query", type: "search", placeholder: "What do you want to find?", value: query.get("q") || "", "aria-label": "Query", required: true }),
      choose("project", "Project", stats.by_project),
      choose("kind", "Kind", stats.by_kind),
      choose("source", "Source", stats.by_source),
      h("label", { class: "muted" }, "as of ", h("input", { name: "as_of", type: "datetime-local", value: query.get("as_of") || "", title: "What was true then (world time)" })),
      h("label", { class: "muted" }, "known at ", h("input", { name: "known_at", type: "datetime-local", value: query.get("known_at") || "", title: "What levh knew then" })),
      h("button", { class: "primary", value: "search" }, "Search"),
      h("button", { value: "recall", title: "Recall reinforces what it returns" }, "Recall"));
    const results = h("div");
    main.append(form, results);
    const run = async (mode) => {
      const data = new FormData(form);
      const body = { query: data.get("query"), limit: 20 };
      for (const key of ["project", "kind", "source"]) if (data.get(key)) body[key] = data.get(key);
      // datetime-local is the person's local time; the API wants an instant.
      for (const key of ["as_of", "known_at"]) if (data.get(key)) body[key] = new Date(data.get(key)).toISOString();
      const answer = await post(mode === "recall" ? "/api/recall" : "/api/search", body);
      results.replaceChildren(answer.results.length === 0 ? empty("Nothing matches.") :
        h("table", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "memory"), h("th", {}, "relevance"), h("th", { class: "optional" }, "why")),
          // A hit is the memory's fields with what ranked it beside them. The H-score
          // ranks (lower first), which reads backwards as a score: the rank and the
          // relevance (higher is closer) are shown, the H-score among the reasons.
          answer.results.map((hit, n) => h("tr", {},
            h("td", {}, String(n + 1)),
            h("td", {}, memoryLink(hit)),
            h("td", {}, percent(hit.relevance)),
            h("td", { class: "optional terms" },
              `cosine ${hit.similarity.toFixed(2)}, lexical ${hit.lexical.toFixed(2)} · retention ${percent(hit.retention)} · importance ${hit.importance} · H-score ${hit.score.toFixed(3)} (lower ranks first)`)))));
      if (mode === "recall" && answer.reinforced.length) results.prepend(h("p", { class: "muted" }, `Reinforced ${answer.reinforced.length} memories.`));
    };
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const mode = event.submitter && event.submitter.value;
      const keep = new URLSearchParams();
      for (const [key, value] of new FormData(form)) if (value) keep.set(key === "query" ? "q" : key, value);
      history.replaceState({}, "", `/search?${keep}`);
      try { await run(mode); } catch (error) { results.replaceChildren(h("p", { class: "error" }, error.message)); }
    });
    if (query.get("q")) await run("search");
  },

  async memory(main, { id }) {
    const path = `/api/memories/${encodeURIComponent(id)}`;
    const draw = async () => {
      const [memory, curve, related, events] = await Promise.all([
        // A failure here costs the Related list, not the page: it says the API's message.
        get(path), get(`${path}/forgetting-curve`), get(`${path}/related`).catch((error) => ({ error })),
        get(`${path}/history?limit=50`).catch((error) => ({ error })),
      ]);
      main.replaceChildren(h("h1", {}, short(titleOf(memory), 80)));
      main.append(h("p", { class: "content card" }, memory.content));
      main.append(h("div", { class: "actions" },
        action("Reinforce", () => post(`${path}/reinforce`), draw, "primary"),
        action("Helpful", () => post(`${path}/feedback`, { helpful: true }), draw),
        action("Wrong", () => post(`${path}/feedback`, { helpful: false }), draw),
        memory.pinned ? action("Unpin", () => post(`${path}/unpin`), draw) : action("Pin", () => post(`${path}/pin`), draw),
        // A forgotten memory has no page to redraw: the list, saying what happened.
        action("Forget", async () => {
          if (!confirm("Forget this memory? It will no longer be recalled.")) return false;
          await call("DELETE", path);
          history.pushState({}, "", "/memories?forgotten=1");
          window.dispatchEvent(new PopStateEvent("popstate"));
          return `Forgotten: “${short(memory.content, 60)}” is no longer recalled, and kept for history until purged.`;
        }, null, "danger"),
        // A purge says what it erased and where the content can still be found: the
        // report goes with the person to the list, in the notice.
        action("Purge", async () => {
          if (!confirm("Purge this memory? Its content and every trace of it are erased; this cannot be undone.")) return false;
          const report = await post(`${path}/purge`);
          history.pushState({}, "", "/memories");
          window.dispatchEvent(new PopStateEvent("popstate"));
          const held = report.held_removed ? ` ${report.held_removed} held ${report.held_removed === 1 ? "copy" : "copies"} erased too.` : "";
          return report.residue.length === 0
            ? `Purged: no trace of its content is left in the store.${held}`
            : `Purged, but its content can still be found in: ${report.residue.join("; ")}.${held}`;
        }, null, "danger")));
      if (canWrite) {
        // An edit goes through the gate like a capture: the answer says what it decided.
        const verdict = h("p", { class: "muted", role: "status" });
        const editor = h("form", { class: "edit" },
          h("label", {}, "Content", h("textarea", { name: "content", rows: 4 }, memory.content)),
          h("label", {}, "Importance ", h("input", { name: "importance", type: "number", min: 0, max: 1, step: 0.05, value: memory.importance })),
          h("button", { class: "primary" }, "Save through the gate"), verdict);
        editor.addEventListener("submit", async (event) => {
          event.preventDefault();
          const data = new FormData(editor);
          const body = {};
          if (data.get("content") !== memory.content) body.content = data.get("content");
          if (Number(data.get("importance")) !== memory.importance) body.importance = Number(data.get("importance"));
          if (Object.keys(body).length === 0) { verdict.textContent = "Nothing changed."; return; }
          try {
            const answer = await call("PATCH", path, body);
            // The gate's verdict in words, kept in the notice: an applied edit redraws
            // the page, which would take a message beside the form with it.
            const why = answer.reason ? ` ${answer.reason}` : "";
            const words = {
              admit: "Saved: the gate admitted the edit.",
              redact: `Saved with ${answer.redactions.join(", ") || "secrets"} redacted.`,
              review: `Held for review: a person decides on the Held page.${why}`,
              reject: `Not saved: the gate rejected the edit.${why}`,
            }[answer.verdict] || `${answer.verdict}.${why}`;
            verdict.className = answer.applied ? "muted" : "warning";
            verdict.textContent = words;
            notify(words, answer.applied ? "good" : "error");
            if (answer.applied) await draw();
          } catch (error) { verdict.className = "error"; verdict.textContent = error.message; }
        });
        main.append(h("details", {}, h("summary", {}, "Edit"), editor));
      }
      // Its fields in words (the API's names are for programs), times in local time;
      // what only a developer reads (hashes, the vector, the workspace) folded away.
      const hours = (x) => (x >= 48 ? `${(x / 24).toFixed(1)} days` : `${x.toFixed(1)} hours`);
      const yes = (x) => (x ? "yes" : "no");
      const projectLink = (p) => h("a", { href: `/memories?project=${encodeURIComponent(p)}` }, p);
      const fields = [
        ["Project", memory.project ? projectLink(memory.project) : "none"],
        ["Kind", memory.kind], ["Written by", memory.source],
        ["Importance", memory.importance.toFixed(2)], ["Pinned", yes(memory.pinned)],
        ["Retention now", `${(memory.retention * 100).toFixed(1)}%`],
        ["Half-life", h("span", { title: `${memory.stability_hours} hours` }, hours(memory.stability_hours))],
        ["Fading", yes(memory.fading)], ["Fades below the threshold", memory.fades_at ? when(memory.fades_at) : "never (pinned)"],
        ["Recalled", `${memory.recall_count} ${memory.recall_count === 1 ? "time" : "times"}`],
        ["Last recalled", memory.last_recalled_at ? when(memory.last_recalled_at) : "never"],
        ["Stored", when(memory.created_at)], ["Holds from", when(memory.valid_from)],
        ["Held until", memory.valid_to ? when(memory.valid_to) : "still holds"],
        memory.superseded_by ? ["Replaced by", h("a", { href: `/memories/${encodeURIComponent(memory.superseded_by)}` }, "the newer memory")] : null,
        ["Admitted", `${memory.admission.verdict} by ${memory.admission.decided_by}${memory.admission.reasons.length ? ` — ${memory.admission.reasons.join("; ")}` : ""}`],
        memory.session_id ? ["Session", h("a", { href: "/sessions" }, memory.session_id.slice(0, 8))] : null,
      ].filter(Boolean);
      main.append(h("table", { class: "fields" }, fields.map(([name, value]) => h("tr", {}, h("th", {}, name), h("td", {}, value)))));
      // Metadata as words: its keys as labels, no empty values; a file the connector read
      // is the file the person named (source_uri), not the sandbox's path (source_id).
      const label = (key) => key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
      // A value in words: lists joined, a person as "Name <address> (role)", nothing for
      // what is empty (a literal null once showed).
      const words = (value) => {
        if (value === null || value === undefined || value === "") return null;
        if (Array.isArray(value)) {
          const items = value.map(words).filter(Boolean);
          return items.length ? items.join(", ") : null;
        }
        if (typeof value === "object") {
          if (value.name || value.email) return [value.name, value.email && `<${value.email}>`, value.role && `(${value.role})`].filter(Boolean).join(" ");
          const parts = Object.entries(value).map(([k, v]) => [k, words(v)]).filter(([, w]) => w !== null).map(([k, w]) => `${k}: ${w}`);
          return parts.length ? parts.join(", ") : null;
        }
        if (typeof value === "boolean") return value ? "yes" : "no";
        return String(value);
      };
      const technical = new Set(["source_id", "content_hash"]);
      const meta = Object.entries(memory.metadata || {}).filter(([key, value]) => !technical.has(key) && words(value) !== null);
      if (meta.length > 0) {
        main.append(h("h2", {}, "Details"), h("table", { class: "fields" }, meta.map(([key, value]) => h("tr", {}, h("th", {}, key === "source_uri" ? "Read from" : label(key)),
          h("td", {}, key === "source_uri" && /^(https?|file):/.test(value) ? h("a", { href: value }, value.replace(/^file:/, "")) : words(value))))));
      }
      main.append(h("details", {}, h("summary", {}, "Technical details"), h("table", { class: "fields" },
        [["Id", memory.id], ["Workspace", memory.workspace], ["Content hash", memory.content_hash],
          ["Source id", (memory.metadata || {}).source_id], ["Embedding", memory.embedding_model ? `${memory.embedding_model} (${memory.embedding_dimension} dimensions)` : "none"],
          ["Recall frequency", memory.frequency.toFixed(3)]]
          .filter(([, v]) => v !== undefined && v !== null).map(([name, value]) => h("tr", {}, h("th", {}, name), h("td", {}, h("code", {}, String(value))))))));
      // Who and what it involves, each a link to its page.
      const involved = await get(`${path}/entities`).catch(() => ({ entities: [] }));
      if (involved.entities.length > 0) {
        main.append(h("h2", {}, "Involves"), h("ul", { class: "involved" }, involved.entities.map((e) =>
          h("li", {}, entityLink(e), h("span", { class: "muted" }, ` — ${e.kind}${e.roles.length ? `, ${e.roles.join(", ")}` : ""}`)))));
      }
      // How far it can be believed, factor by factor (ranking is separate).
      const trust = await get(`${path}/trust`).catch((error) => ({ error }));
      main.append(h("h2", {}, "Trust"), trust.error ? h("p", { class: "error" }, trust.error.message) :
        h("div", { class: "card trust" },
          h("p", {}, h("strong", {}, `${trust.value.toFixed(2)} (${trust.label})`)),
          h("table", { class: "factors" }, trust.factors.map((f) => h("tr", {},
            h("td", {}, `${f.effect >= 0 ? "+" : ""}${f.effect.toFixed(2)}`), h("th", {}, f.factor), h("td", {}, f.why))))));
      const plot = h("div", { class: "card", "aria-label": "Forgetting curve" });
      main.append(h("h2", {}, "Forgetting curve (30 days)"), plot);
      chart(plot, { name: "day", values: curve.points.map((p) => p.day) }, { name: "retention", values: curve.points.map((p) => p.retention) });
      // A consolidation's summary lists what it replaced, and can be undone.
      const members = await get(`${path}/consolidated`).catch(() => ({ memories: [] }));
      if (members.memories.length > 0) {
        main.append(h("h2", {}, "Consolidated from"),
          h("ul", {}, members.memories.map((m) => h("li", {}, memoryLink(m)))));
        if (canWrite) main.append(h("div", { class: "actions" },
          // The summary is forgotten by the undo: go to its first member, live again.
          action("Undo consolidation", () => post(`/api/consolidations/${encodeURIComponent(id)}/undo`), () => {
            history.pushState({}, "", `/memories/${encodeURIComponent(members.memories[0].id)}`);
            window.dispatchEvent(new PopStateEvent("popstate"));
          })));
      }
      const files = await get(`${path}/attachments`).catch(() => ({ attachments: [] }));
      if (files.attachments.length > 0) {
        main.append(h("h2", {}, "Attachments"), h("ul", {}, files.attachments.map((a) =>
          h("li", {}, h("a", { href: `/memories/${encodeURIComponent(a.memory_id)}` }, a.name), ` — ${a.media_type}, ${a.bytes} bytes`))));
      }
      main.append(h("h2", {}, "Related"), related.error ? h("p", { class: "error" }, related.error.message) :
        related.related.length === 0 ? empty("Nothing close.") :
        h("ul", {}, related.related.map((m) => h("li", {}, memoryLink(m)))));
      main.append(h("h2", {}, "History"), events.error ? h("p", { class: "error" }, events.error.message) :
        h("table", { class: "history" }, events.events.map((e) => h("tr", {},
          h("td", { class: "optional muted" }, when(e.at)),
          h("td", {}, h("strong", {}, e.kind)),
          h("td", {}, via(e)),
          h("td", { class: "terms" }, detail(e.detail))))));
    };
    await draw();
  },

  // Every fading memory, weakest first, a page at a time (keyset: the list's own
  // cursor), each with the review decisions; Forget asks first, as the memory page does.
  async fading(main) {
    main.append(h("h1", {}, "Fading"),
      h("p", { class: "muted" }, "Every memory below the fading threshold, weakest first. ", h("a", { href: "/review" }, "Review"), " goes through the ones not put off, one at a time."));
    const count = h("p", { class: "muted", role: "status" });
    const rows = h("tbody");
    const more = h("button", { type: "button" }, "More");
    main.append(count, h("table", { class: "fading" },
      h("thead", {}, h("tr", {}, h("th", {}, "memory"), h("th", {}, "retention"), h("th", { class: "optional" }, "project"), h("th", {}, "decide"))), rows));
    let after = null;
    let total = 0;
    const load = async () => {
      const page = await get(`/api/memories?fading=true&sort=retention&limit=50${after ? `&after=${encodeURIComponent(after)}` : ""}`);
      if (page.total !== undefined) total = page.total;
      for (const m of page.memories) {
        // Each decision is a review: recorded in the memory's history and scheduled.
        const decide = (decision) => post(`/api/memories/${encodeURIComponent(m.id)}/review`, { decision });
        rows.append(h("tr", {}, h("td", {}, memoryLink(m)), h("td", {}, percent(m.retention)),
          h("td", { class: "optional" }, m.project || "—"),
          h("td", {}, h("div", { class: "actions" },
            action("Keep", () => decide("keep"), reload),
            action("Reinforce", () => decide("reinforce"), reload, "primary"),
            action("Weaken", () => decide("weaken"), reload),
            action("Pin", () => decide("pin"), reload),
            action("Forget", async () => {
              if (!confirm("Forget this memory? It will no longer be recalled (kept for history until purged).")) return false;
              await decide("forget");
              return `Forgotten: “${short(m.content, 60)}”.`;
            }, reload, "danger")))));
      }
      if (page.memories.length > 0) after = page.memories[page.memories.length - 1].id;
      // "More" is there only when there is more (a viewer's page has no button at all).
      if (page.memories.length < 50) more.remove();
      else if (!more.isConnected) main.append(more);
      const n = rows.children.length;
      count.textContent = total === 0 ? "Nothing is fading." : n < total ? `${n} of ${total} fading shown` : `${total} fading`;
    };
    const reload = async () => { rows.replaceChildren(); after = null; await load(); };
    more.addEventListener("click", () => load().catch((error) => { count.className = "error"; count.textContent = error.message; }));
    await load();
  },

  // Spaced repetition: the fading memories not put off, one at a time, each decision
  // recorded in its history; keys k r w p s f act on the one shown.
  async review(main) {
    main.append(h("h1", {}, "Review"),
      h("p", { class: "muted" }, "Fading memories, weakest first. Keep shows one again after 1, 2, 4, 8… days; snooze puts it off; reinforce and pin make it stay; forget retires it (kept for history)."));
    const box = h("div");
    const status = h("p", { role: "status", class: "muted" });
    main.append(status, box);
    let decided = 0;
    let current = null;
    const draw = async () => {
      const queue = await get("/api/review?limit=50");
      current = queue.memories[0] || null;
      if (!current) { box.replaceChildren(empty(decided ? `Done: ${decided} reviewed, nothing else is due.` : "Nothing to review: no memory is fading.")); return; }
      const m = current.memory;
      const days = h("input", { type: "number", min: "1", max: "3650", value: "7", "aria-label": "Snooze days", class: "days" });
      const decide = (decision, extra = {}) => async () => {
        const done = await post(`/api/memories/${encodeURIComponent(m.id)}/review`, { decision, ...extra });
        decided += 1;
        status.textContent = `${decision}: ${done.decision === "forget" ? "forgotten" : `next review ${when(done.next_review)}`}`;
      };
      box.replaceChildren(h("div", { class: "card review" },
        h("p", { class: "muted" }, `${queue.memories.length}${queue.memories.length === 50 ? "+" : ""} to review · retention ${percent(m.retention)} · importance ${m.importance.toFixed(2)} · ${current.reviews ? `reviewed ${current.reviews}×` : "never reviewed"}`),
        h("p", { class: "content" }, h("a", { href: `/memories/${encodeURIComponent(m.id)}` }, m.content)),
        h("p", { class: "terms" }, [m.project, m.kind, m.source, `created ${when(m.created_at)}`].filter(Boolean).join(" · ")),
        h("div", { class: "actions" },
          action("Keep (k)", decide("keep"), draw, "primary"),
          action("Reinforce (r)", decide("reinforce"), draw),
          action("Weaken (w)", decide("weaken"), draw),
          action("Pin (p)", decide("pin"), draw),
          h("span", {}, days, action("Snooze (s)", () => decide("snooze", { days: Number(days.value) })(), draw)),
          action("Forget (f)", decide("forget"), draw, "danger"))));
      box.querySelector("button")?.focus();
    };
    const keys = { k: 0, r: 1, w: 2, p: 3, s: 4, f: 5 };
    const onKey = (event) => {
      if (event.target.closest("input, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
      const n = keys[event.key];
      if (n === undefined || !current) return;
      const button = box.querySelectorAll(".actions button")[n];
      if (button && !button.disabled) { event.preventDefault(); button.click(); }
    };
    document.addEventListener("keydown", onKey);
    await draw();
    return () => document.removeEventListener("keydown", onKey);
  },

  async held(main) {
    const draw = async () => {
      const held = await get("/api/memories/held");
      main.replaceChildren(h("h1", {}, "Held for review"));
      if (held.held.length === 0) { main.append(empty("Nothing waits for a decision.")); return; }
      main.append(h("p", { class: "muted" }, "Each of these came close to a memory you already have, so a person decides. ",
        "Admit keeps both; Admit as replacement stores it and retires the memory it resembles; an edit held for review is applied or discarded; Discard lets it go."));
      // A held update is compared with the memory it would change; any other candidate
      // with the memory it resembles.
      const other = (c) => c.updates || (c.nearest && c.nearest.id);
      const neighbours = await Promise.all(held.held.map((c) =>
        other(c) ? get(`/api/memories/${encodeURIComponent(other(c))}`).catch(() => null) : null));
      held.held.forEach((candidate, n) => {
        const path = `/api/memories/held/${encodeURIComponent(candidate.id)}`;
        const near = neighbours[n];
        const update = Boolean(candidate.updates);
        const heading = update ? "Would change " : "Resembles ";
        const closeness = candidate.nearest ? ` (${candidate.nearest.measure} similarity ${candidate.nearest.similarity.toFixed(2)})` : "";
        main.append(h("div", { class: "card" },
          near ? null : h("p", { class: "content" }, candidate.content),
          h("p", { class: "muted" }, candidate.reason),
          near ? h("div", { class: "pair" },
            h("div", {}, h("h2", {}, update ? "Held edit" : "Held candidate"), h("p", { class: "content" }, candidate.content)),
            h("div", {}, h("h2", {}, heading, h("a", { href: `/memories/${encodeURIComponent(near.id)}` }, short(near.content, 60)), closeness),
              h("p", { class: "content" }, near.content)),
            h("div", { class: "diff" }, h("h2", {}, "What changes"), h("p", { class: "content" }, wordDiff(near.content, candidate.content)))) : null,
          h("div", { class: "actions" },
            action(update ? "Apply the edit" : "Admit", () => post(`${path}/admit`, {}), draw, "primary"),
            candidate.nearest && !update ? action("Admit as replacement", () => post(`${path}/admit`, { supersede: true }), draw) : null,
            action("Discard", () => post(`${path}/discard`), draw, "danger"))));
      });
    };
    await draw();
  },

  async decisions(main) {
    const [decided, promised] = await Promise.all([get("/api/decisions?limit=100"), get("/api/commitments?limit=100")]);
    main.append(h("h1", {}, "Decisions"),
      h("p", { class: "muted" }, "What the memories say was decided, and what their writers promised — read from their text ",
        "(\"we decided…\", \"karar verdik\", \"I'll send it by Friday\", \"yarın göndereceğim\")."));
    const where = (x) => [x.source, x.project].filter(Boolean).join(" · ");
    main.append(h("h2", {}, "Decided"), decided.decisions.length === 0 ? empty("No decision found yet.") :
      h("table", { class: "decisions" }, decided.decisions.map((d) => h("tr", {},
        h("td", { class: "optional muted" }, when(d.at)),
        h("td", {}, h("a", { href: `/memories/${encodeURIComponent(d.memory_id)}` }, d.sentence)),
        h("td", { class: "optional terms" }, [where(d), d.people.join(", ")].filter(Boolean).join(" — "))))));
    main.append(h("p", {}, `${promised.commitments.length}${promised.commitments.length === 100 ? "+" : ""} open promises are on `, h("a", { href: "/commitments" }, "Commitments"), "."));
  },

  // Every promise the memories make: who made it (you, or the speaker or sender the
  // memory names), when it is due, where; filtered by project and by whom, open or done.
  async commitments(main, _, query) {
    main.append(h("h1", {}, "Commitments"),
      h("p", { class: "muted" }, "Promises read from the memories' text (\"I'll send it by Friday\", \"yarın göndereceğim\"), ",
        "each by who made it: a transcript's speaker or a mail's sender, or you when you (or your agent) wrote it."));
    // Read once (open and done), then filtered here: the choices offered are the people
    // and projects the promises have.
    const found = await get("/api/commitments?include_done=true&limit=1000");
    const values = (pick) => [...new Set(found.commitments.map(pick).filter(Boolean))].sort();
    const pick = (name, label, options) => h("label", {}, `${label} `, h("select", { name }, options.map(([value, text]) =>
      h("option", { value, selected: (query.get(name) || "") === value || undefined }, text))));
    const form = h("form", { class: "filters", "aria-label": "Filters" },
      pick("project", "Project", [["", "any"], ...values((c) => c.project).map((p) => [p, p])]),
      pick("by", "By", [["", "anyone"], ["you", "you"], ...values((c) => c.by).map((p) => [p, p])]),
      pick("show", "Show", [["", "open"], ["done", "done"], ["all", "open and done"]]));
    const box = h("div");
    main.append(form, box);
    const draw = () => {
      const keep = new URLSearchParams();
      for (const [key, value] of new FormData(form)) if (value) keep.set(key, value);
      history.replaceState({}, "", keep.toString() ? `/commitments?${keep}` : "/commitments");
      const by = keep.get("by"), project = keep.get("project"), show = keep.get("show");
      const shown = found.commitments.filter((c) => (!project || c.project === project)
        && (!by || (by === "you" ? !c.by : c.by === by))
        && (show === "all" || (show === "done" ? c.done : !c.done)));
      box.replaceChildren(h("p", { class: "muted", role: "status" }, `${shown.length} ${shown.length === 1 ? "promise" : "promises"}${found.commitments.length === 1000 ? " (of the first 1,000)" : ""}. Due dates in ${found.time_zone}.`),
        shown.length === 0 ? empty("No promise matches.") :
        h("table", { class: "commitments" },
          h("thead", {}, h("tr", {}, h("th", {}, "due"), h("th", {}, "promise"), h("th", {}, "by"), h("th", { class: "optional" }, "project"),
            h("th", { class: "optional" }, "written"), h("th", {}, h("span", { class: "visually-hidden" }, "action")))),
          h("tbody", {}, shown.map((c) => h("tr", { class: c.overdue ? "overdue" : undefined },
            h("td", {}, c.due ? `${c.due}${c.overdue ? " (overdue)" : ""}` : "—"),
            h("td", {}, h("a", { href: `/memories/${encodeURIComponent(c.memory_id)}` }, c.sentence),
              c.people.length ? h("div", { class: "terms" }, `with ${c.people.join(", ")}`) : null),
            h("td", {}, c.by || "you"),
            h("td", { class: "optional" }, c.project || "—"),
            h("td", { class: "optional muted" }, day(c.written_at)),
            h("td", {}, c.done ? h("span", { class: "muted" }, `done ${day(c.done_at)}`)
              : action("Done", async () => {
                await post(`/api/commitments/${encodeURIComponent(c.id)}/done`);
                c.done = true;
                c.done_at = new Date().toISOString();
                c.overdue = false;
                return `Marked done: “${short(c.sentence, 60)}”`;
              }, draw)))))));
    };
    form.addEventListener("change", draw);
    draw();
  },

  async ask(main, _, query) {
    main.append(h("h1", {}, "Ask"),
      h("p", { class: "muted" }, "An answer from your memories, citing each memory it used. Asking reinforces nothing."));
    const form = h("form", { class: "search", role: "search" },
      h("label", {}, "Question ", h("input", { name: "question", type: "search", value: query.get("q") || "", required: true, size: 60 })),
      h("button", { class: "primary" }, "Ask"));
    const answer = h("div", { "aria-live": "polite" });
    main.append(form, answer);
    const draw = async (question) => {
      answer.replaceChildren(h("p", { class: "muted" }, "Looking…"));
      try {
        const a = await post("/api/ask", { question });
        const cite = (c) => h("li", {}, h("a", { href: `/memories/${encodeURIComponent(c.memory_id)}` }, c.sentence || c.memory_id),
          h("span", { class: "muted" }, ` — ${c.day}, ${c.kind}, ${c.source}${c.people.length ? `, ${c.people.join(", ")}` : ""}`));
        // `replaceChildren` takes nodes only: the parts, flattened, without the absent ones.
        answer.replaceChildren(...[
          a.mode === "model" ? h("p", { class: "content card" }, a.answer) : null,
          a.citations.length === 0 ? empty("No memory answers this.") : null,
          a.mode === "model" ? [h("h2", {}, "Cited"), h("ul", {}, a.citations.map(cite))]
            : a.groups.map((g) => [h("h2", {}, g.entity || "Other memories"), h("ul", {}, g.citations.map(cite))]),
          a.dropped_citations.length ? h("p", { class: "error" }, `Removed citations of memories not in the evidence: ${a.dropped_citations.join(", ")}`) : null,
          a.warnings.map((w) => h("p", { class: "error" }, w)),
        ].flat(2).filter(Boolean));
      } catch (error) {
        answer.replaceChildren(h("p", { class: "error" }, error.message));
      }
    };
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const question = new FormData(form).get("question");
      history.replaceState({}, "", `/ask?q=${encodeURIComponent(question)}`);
      await draw(question);
    });
    if (query.get("q")) await draw(query.get("q"));
  },

  async briefing(main, _, query) {
    const date = query.get("date");
    const b = await get(`/api/briefing${date ? `?date=${encodeURIComponent(date)}` : ""}`);
    const form = h("form", { class: "search" },
      h("label", {}, "Day ", h("input", { name: "date", type: "date", value: b.date })),
      h("button", {}, "Show"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      history.pushState({}, "", `/briefing?date=${encodeURIComponent(new FormData(form).get("date"))}`);
      window.dispatchEvent(new PopStateEvent("popstate"));
    });
    const link = (id, text) => h("a", { href: `/memories/${encodeURIComponent(id)}` }, text);
    const list = (title, items, none, item) => [h("h2", {}, title), items.length === 0 ? empty(none) : h("ul", {}, items.map((x) => h("li", {}, item(x))))];
    main.append(h("h1", {}, `Briefing for ${b.date}`), h("p", { class: "muted" }, `Times in ${b.time_zone}.`), form,
      ...list("Events", b.events, "No event on this day.", (e) => [`${e.local_time} `, link(e.memory_id, e.title),
        e.location ? ` — ${e.location}` : "", e.attendees.length ? h("span", { class: "muted" }, ` (${e.attendees.join(", ")})`) : "",
        " ", h("a", { href: `/meeting-prep?event=${encodeURIComponent(e.memory_id)}` }, "prepare")]),
      ...list("Due (yours)", b.due, "Nothing due.", (c) => [`${c.due}${c.overdue ? " (overdue)" : ""} `, link(c.memory_id, c.sentence)]),
      ...list("Owed to you", b.owed_to_me, "Nothing owed.", (c) => [`${c.due} ${c.by}: `, link(c.memory_id, c.sentence)]),
      ...list("Decisions (last 7 days)", b.decisions, "No decision.", (d) => [`${d.at.slice(0, 10)} `, link(d.memory_id, d.sentence)]),
      ...list("People today", b.people, "Nobody.", (p) => [p.name, p.last_discussed ? [" — last: ", link(p.last_discussed.memory_id, p.last_discussed.line), ` (${p.last_discussed.day})`] : ""]),
      ...list("Important and fading", b.fading, "Nothing important is fading.", (m) => link(m.memory_id, m.line)));
  },

  async "meeting-prep"(main, _, query) {
    let event = query.get("event");
    if (!event) {
      // The next event of the coming month, if any: no event is a state, not an error.
      const coming = await get(`/api/timeline?range=${encodeURIComponent("next 30 days")}&kind=event&limit=50`);
      const next = coming.days.flatMap((d) => d.memories).find((m) => new Date(m.at) >= new Date());
      if (!next) {
        main.append(h("h1", {}, "Meeting prep"), empty("No event in the coming 30 days. Open one from the Briefing or the Timeline."));
        return;
      }
      event = next.memory_id;
    }
    const prep = await get(`/api/meeting-prep?event=${encodeURIComponent(event)}`);
    const link = (id, text) => h("a", { href: `/memories/${encodeURIComponent(id)}` }, text);
    const e = prep.event;
    main.append(h("h1", {}, `Meeting prep: ${e.title}`),
      h("p", { class: "muted" }, [when(e.start), e.location].filter(Boolean).join(" — ")));
    for (const a of prep.attendees) {
      main.append(h("h2", {}, a.name),
        a.last_discussed.length === 0 ? empty("Nothing before this meeting.") :
          h("ul", {}, a.last_discussed.map((m) => h("li", {}, `${m.day} `, link(m.memory_id, m.line)))));
      if (a.commitments.length) {
        main.append(h("ul", { class: "commitments" }, a.commitments.map((c) => h("li", {}, "Open: ", link(c.memory_id, c.sentence)))));
      }
    }
    main.append(h("h2", {}, "Decisions"), prep.decisions.length === 0 ? empty("No related decision.") :
      h("ul", {}, prep.decisions.map((d) => h("li", {}, `${d.at.slice(0, 10)} `, link(d.memory_id, d.sentence)))));
    main.append(h("h2", {}, "Earlier meetings"), prep.previous.length === 0 ? empty("None.") :
      h("ul", {}, prep.previous.map((m) => h("li", {}, link(m.memory_id, m.day)))));
  },

  async conflicts(main) {
    main.append(h("h1", {}, "Conflicts"),
      h("p", { class: "muted" }, "Pairs of memories that may disagree — a different value, a negation, opposite words, another name in the same role. Resolving never deletes: a superseded memory is kept for history."));
    const box = h("div");
    main.append(h("div", { class: "actions" }, action("Look for conflicts", () => post("/api/conflicts/detect", {}), () => draw())), box);
    const draw = async () => {
      const list = await get("/api/conflicts");
      const resolve = (c, body) => post(`/api/conflicts/${encodeURIComponent(c.id)}/resolve`, body);
      box.replaceChildren(list.conflicts.length === 0 ? empty("No open conflict.") : h("div", {}, list.conflicts.map((c) =>
        h("div", { class: "card" },
          h("p", { class: "muted" }, `${c.kind} — found ${when(c.found_at)}`),
          h("div", { class: "pair" },
            h("div", {}, h("h2", {}, "Older"), h("p", { class: "content" }, h("a", { href: `/memories/${encodeURIComponent(c.older)}` }, c.older_content))),
            h("div", {}, h("h2", {}, "Newer"), h("p", { class: "content" }, h("a", { href: `/memories/${encodeURIComponent(c.newer)}` }, c.newer_content)))),
          h("div", { class: "actions" },
            action("Keep the newer", () => resolve(c, { resolution: "supersede", retire: c.older }), draw, "primary"),
            action("Keep the older", () => resolve(c, { resolution: "supersede", retire: c.newer }), draw),
            action("Keep both", () => resolve(c, { resolution: "keep_both" }), draw),
            action("Not a conflict", () => resolve(c, { resolution: "not_a_conflict" }), draw))))));
    };
    await draw();
  },

  async people(main, _, query) {
    main.append(h("h1", {}, "People"),
      h("p", { class: "muted" }, "Everyone the memories are about — attendees, senders, speakers, authors, names and addresses in the text — one per person across sources."));
    const form = h("form", { class: "search", role: "search" },
      h("input", { name: "name", type: "search", placeholder: "name, address or @handle", value: query.get("name") || "", "aria-label": "Name" }),
      h("button", { class: "primary" }, "Find"));
    const list = h("div");
    main.append(form, list);
    const draw = async () => {
      const name = new FormData(form).get("name");
      const people = await get(`/api/people?limit=200${name ? `&name=${encodeURIComponent(name)}` : ""}`);
      list.replaceChildren(people.people.length === 0 ? empty("No people yet: they come from synced mail, calendars and meetings, and from addresses in memories.") :
        h("table", { class: "people" }, h("tr", {}, h("th", {}, "person"), h("th", {}, "memories"), h("th", {}, "last"), h("th", { class: "optional" }, "channels"), h("th", { class: "optional" }, "organizations")),
          people.people.map((p) => h("tr", {},
            h("td", {}, entityLink(p), p.emails.length ? h("div", { class: "terms" }, p.emails.join(", ")) : null),
            h("td", {}, p.memories),
            h("td", {}, lastSeen(p.last_seen)),
            h("td", { class: "optional terms" }, p.channels.join(", ")),
            h("td", { class: "optional" }, p.organizations.join(", "))))));
    };
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const name = new FormData(form).get("name");
      history.replaceState({}, "", name ? `/people?name=${encodeURIComponent(name)}` : "/people");
      await draw();
    });
    await draw();
  },

  async entity(main, { id }) {
    const about = await get(`/api/entities/${encodeURIComponent(id)}?limit=50`);
    const e = about.entity;
    main.append(h("h1", {}, e.name), h("p", { class: "muted" }, e.kind),
      h("div", { class: "grid" },
        h("div", { class: "card" }, h("div", { class: "count" }, e.memories), h("div", { class: "muted" }, "memories")),
        h("div", { class: "card" }, h("div", { class: "count" }, lastSeen(e.last_seen)), h("div", { class: "muted" }, e.last_seen && new Date(e.last_seen) > new Date() ? "coming up" : "last seen")),
        h("div", { class: "card" }, h("div", {}, e.channels.join(", ") || "—"), h("div", { class: "muted" }, "channels"))),
      // `append` prints a null as "null": only what there is.
      ...(e.emails.length || e.handles.length ? [h("p", {}, [...e.emails, ...e.handles].join(" · "))] : []));
    if (about.memberships.length) {
      main.append(h("h2", {}, e.kind === "organization" ? "People" : "Organizations"),
        h("ul", { class: "grants" }, about.memberships.map((m) => h("li", {}, entityLink(m), h("span", { class: "muted" }, ` · ${m.memories} memories`)))));
    }
    if (about.related.length) {
      main.append(h("h2", {}, "Appears with"),
        h("ul", { class: "grants" }, about.related.slice(0, 20).map((r) => h("li", {}, entityLink(r.entity), h("span", { class: "muted" }, ` · ${r.entity.kind} · ${r.shared} shared`)))));
    }
    if (about.open_commitments.length) {
      // Promises made in memories this entity appears in — by whoever made them: the
      // "by" column says whose each is (theirs, yours, or someone else's).
      main.append(h("h2", {}, "Open promises in these memories"),
        h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "due"), h("th", {}, "promise"), h("th", {}, "by"))),
          h("tbody", {}, about.open_commitments.map((c) => h("tr", { class: c.overdue ? "overdue" : undefined },
            h("td", {}, c.due ? `${c.due}${c.overdue ? " (overdue)" : ""}` : "—"),
            h("td", {}, h("a", { href: `/memories/${encodeURIComponent(c.memory_id)}` }, c.sentence)),
            h("td", {}, c.by || "you"))))));
    }
    main.append(h("h2", {}, "Memories"), about.memories.length === 0 ? empty("No memory.") :
      h("table", {}, about.memories.map((m) => h("tr", {},
        h("td", { class: "muted" }, when(m.at)),
        h("td", {}, h("a", { href: `/memories/${encodeURIComponent(m.memory_id)}` }, m.preview)),
        h("td", { class: "optional terms" }, `${m.roles.join(", ")} · ${m.kind} · ${m.source}`)))));
  },

  // Who used the memory: each surface and client with what it wrote, recalled and
  // changed, and when — from the event log (ids and kinds, never content or queries).
  async agents(main, _, query) {
    const days = query.get("days") || "30";
    main.append(h("h1", {}, "Agents"),
      h("p", { class: "muted" }, "Which agents, tools and people wrote and read the memories, from the event log. ",
        "An agent's MCP client is named by the client itself; a connector by its name."));
    const form = h("form", { class: "filters", "aria-label": "Period" },
      h("label", {}, "Period ", h("select", { name: "days" }, [["1", "the last day"], ["7", "the last 7 days"], ["30", "the last 30 days"], ["90", "the last 90 days"], ["366", "the last year"]]
        .map(([value, text]) => h("option", { value, selected: value === days || undefined }, text)))));
    const box = h("div");
    main.append(form, box);
    const draw = async () => {
      const chosen = new FormData(form).get("days");
      history.replaceState({}, "", `/agents?days=${chosen}`);
      const found = await get(`/api/agents?days=${chosen}`);
      const surfaces = { mcp: "MCP", http: "REST", cli: "terminal", dashboard: "dashboard", sync: "connector" };
      box.replaceChildren(...[
        found.cut_short ? h("p", { class: "warning" }, "Only the newest 200,000 events of the log were read: earlier activity in this period is left out.") : null,
        found.agents.length === 0 ? empty("Nobody used the memory in this period.") :
          h("table", { class: "agents" },
            h("thead", {}, h("tr", {}, h("th", {}, "who"), h("th", {}, "wrote"), h("th", {}, "recalled"), h("th", {}, "other changes"),
              h("th", { class: "optional" }, "first"), h("th", {}, "last"))),
            h("tbody", {}, found.agents.map((a) => h("tr", {},
              h("td", {}, h("strong", {}, a.client || surfaces[a.surface] || a.surface), h("div", { class: "terms" }, `through ${surfaces[a.surface] || a.surface}`)),
              h("td", {}, a.wrote), h("td", {}, a.recalled),
              h("td", { title: Object.entries(a.kinds).map(([k, n]) => `${k} ${n}`).join(", ") }, a.changed),
              h("td", { class: "optional muted" }, when(a.first_at)), h("td", {}, when(a.last_at))))))].filter(Boolean));
    };
    form.addEventListener("change", () => draw().catch((error) => box.replaceChildren(h("p", { class: "error" }, error.message))));
    await draw();
  },

  // Agents' working sessions, newest first: when, which project and client, how many
  // memories each stored; an open one can be ended or summarised from here.
  async sessions(main) {
    main.append(h("h1", {}, "Sessions"),
      h("p", { class: "muted" }, "A session groups what an agent stored in one conversation or run (",
        h("code", {}, "create_session"), " over MCP, ", h("code", {}, "levh session start"), ")."));
    const list = h("tbody");
    const status = h("p", { class: "muted", role: "status" });
    const more = h("button", {}, "More");
    main.append(h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "started"), h("th", {}, "project"),
      h("th", { class: "optional" }, "client"), h("th", {}, "memories"), h("th", {}, "state"))), list), status, more);
    let before = null;
    const row = (s) => {
      const state = h("td", {});
      const path = `/api/sessions/${encodeURIComponent(s.session_id)}`;
      const drawState = (session) => {
        state.replaceChildren(session.ended_at ? `ended ${when(session.ended_at)}` : "open");
        let ended = null;
        let summary = null;
        // A viewer gets no buttons (action() gives null for them).
        const end = session.ended_at ? null : action("End", async () => { ended = await post(`${path}/end`); },
          () => drawState({ ...session, ...ended }));
        const summarize = action("Summarize", async () => { summary = await post(`${path}/summarize`); },
          () => said.replaceChildren(summary.text ? "summarised into a memory" : "nothing stored: no summary"));
        const said = h("span", { class: "muted", role: "status" });
        for (const part of [end, summarize]) if (part) state.append(" ", part);
        state.append(" ", said);
      };
      drawState(s);
      return h("tr", {}, h("td", { title: s.session_id }, when(s.started_at)), h("td", {}, s.project || "—"),
        h("td", { class: "optional" }, s.client || "—"), h("td", {}, String(s.memories)), state);
    };
    const load = async () => {
      const params = new URLSearchParams({ limit: "50" });
      if (before) params.set("before", before);
      const page = await get(`/api/sessions?${params}`);
      for (const s of page.sessions) list.append(row(s));
      if (page.sessions.length > 0) before = page.sessions[page.sessions.length - 1].started_at;
      more.hidden = page.sessions.length < 50;
      status.textContent = list.children.length === 0 ? "No session yet." : `${list.children.length} shown`;
    };
    more.addEventListener("click", () => load().catch((error) => { status.className = "error"; status.textContent = error.message; }));
    await load();
  },

  // Every project with its memory count, and where to look next: its memories, what
  // happened in it lately, its open promises.
  async projects(main) {
    const [list, promised] = await Promise.all([get("/api/projects"), get("/api/commitments?limit=200")]);
    main.append(h("h1", {}, "Projects"));
    const open = new Map();
    for (const c of promised.commitments) if (c.project) open.set(c.project, (open.get(c.project) || 0) + 1);
    const named = list.projects.filter((p) => p.name);
    main.append(named.length === 0 ? empty("No project yet: a memory's project is set when it is captured (--project, or an agent's session).") :
      h("table", {}, h("tr", {}, h("th", {}, "project"), h("th", {}, "memories"), h("th", {}, "open promises"), h("th", { class: "optional" }, "look")),
        named.map((p) => h("tr", {},
          h("td", {}, h("a", { href: `/memories?project=${encodeURIComponent(p.name)}` }, p.name)),
          h("td", {}, p.memories),
          h("td", {}, open.get(p.name) || 0),
          h("td", { class: "optional" },
            h("a", { href: `/timeline?range=${encodeURIComponent("last 30 days")}&project=${encodeURIComponent(p.name)}` }, "timeline"), " · ",
            h("a", { href: `/search?project=${encodeURIComponent(p.name)}` }, "search"))))));
  },

  async organizations(main) {
    const list = await get("/api/organizations?limit=200");
    main.append(h("h1", {}, "Organizations"),
      h("p", { class: "muted" }, "The people rolled up by their work e-mail domain (personal providers such as gmail.com are left out)."),
      list.organizations.length === 0 ? empty("No organization yet: they come from work e-mail addresses.") :
      h("table", {}, h("tr", {}, h("th", {}, "organization"), h("th", {}, "memories"), h("th", {}, "last contact"), h("th", { class: "optional" }, "people")),
        list.organizations.map((o) => h("tr", {},
          h("td", {}, entityLink(o)),
          h("td", {}, o.memories),
          h("td", {}, day(o.last_seen)),
          // The most frequent few; the organization's page lists them all.
          h("td", { class: "optional" }, o.people.slice(0, 8).flatMap((p, i) => i === 0 ? [entityLink(p)] : [", ", entityLink(p)]),
            o.people.length > 8 ? [", ", h("a", { href: `/entities/${encodeURIComponent(o.id)}` }, `and ${o.people.length - 8} more`)] : null)))));
  },

  async timeline(main, _, query) {
    main.append(h("h1", {}, "Timeline"));
    // What is coming (a calendar's events, due dates) as well as what happened.
    const ranges = ["today", "tomorrow", "this week", "next week", "next 30 days", "last week", "this month", "next month", "last month", "last 30 days"];
    const chosen = query.get("range") || (query.get("from") ? "" : "this week");
    const form = h("form", { class: "search" },
      h("label", { class: "muted" }, "range ", h("select", { name: "range" },
        h("option", { value: "" }, "from – to"),
        ranges.map((r) => h("option", { value: r, selected: r === chosen }, r)))),
      h("label", { class: "muted" }, "from ", h("input", { name: "from", type: "date", value: query.get("from") || "" })),
      h("label", { class: "muted" }, "to ", h("input", { name: "to", type: "date", value: query.get("to") || "" })),
      h("input", { name: "person", placeholder: "person", value: query.get("person") || "", "aria-label": "Person" }),
      h("input", { name: "project", placeholder: "project", value: query.get("project") || "", "aria-label": "Project" }),
      h("input", { name: "kind", placeholder: "kind", value: query.get("kind") || "", "aria-label": "Kind" }),
      h("button", { class: "primary" }, "Show"));
    const days = h("div");
    main.append(form, days);
    const draw = async () => {
      const data = new FormData(form);
      const keep = new URLSearchParams();
      if (data.get("range")) keep.set("range", data.get("range"));
      else for (const key of ["from", "to"]) if (data.get(key)) keep.set(key, data.get(key));
      for (const key of ["person", "project", "kind"]) if (data.get(key)) keep.set(key, data.get(key));
      history.replaceState({}, "", `/timeline?${keep}`);
      try {
        const view = await get(`/api/timeline?${keep}`);
        // replaceChildren takes nodes only: no arrays, no nulls.
        days.replaceChildren(...[h("p", { class: "muted" }, `${view.from} – ${view.to}, days in ${view.time_zone}.`),
          view.days.length === 0 ? empty("Nothing happened in these days, as far as the memories know.") : null,
          view.days.map((d) => h("section", { class: "day" },
            h("h2", {}, `${d.weekday} ${d.day}`),
            h("table", {}, d.memories.map((m) => h("tr", {},
              h("td", { class: "muted" }, m.time),
              h("td", {}, h("a", { href: `/memories/${encodeURIComponent(m.memory_id)}` }, m.preview)),
              h("td", { class: "optional terms" }, [m.kind, m.people.join(", ")].filter(Boolean).join(" · "))))))),
          view.truncated ? h("p", { class: "warning" }, "More memories fell in these days than are shown.") : null].flat().filter(Boolean));
      } catch (error) {
        days.replaceChildren(h("p", { class: "error" }, error.message));
      }
    };
    form.addEventListener("submit", (event) => { event.preventDefault(); draw(); });
    await draw();
  },

  async graph(main, _, query) {
    const kind = query.get("kind") || "";
    const graph = await get(`/api/graph?limit=40${kind ? `&kind=${encodeURIComponent(kind)}` : ""}`);
    main.append(h("h1", {}, "Graph"),
      h("p", { class: "muted" }, "Entities with the most memories; a line joins two that share memories, thicker for more."),
      h("p", {}, ["", "person", "organization", "project", "event", "document", "task"].flatMap((k, i) => [
        i ? " · " : "", k === kind ? h("strong", {}, k || "all") : h("a", { href: k ? `/graph?kind=${k}` : "/graph" }, k || "all")])));
    if (graph.nodes.length === 0) return main.append(empty("No entities yet."));
    // Which colour is which kind: each kind its own, said in words beside a swatch.
    const kinds = [...new Set(graph.nodes.map((n) => n.kind))].sort();
    main.append(h("ul", { class: "legend", "aria-label": "Legend" }, kinds.map((k) =>
      h("li", {}, h("span", { class: `swatch ${k}`, "aria-hidden": "true" }), ` ${k}`))));
    main.append(graphDrawing(graph));
    const name = (id) => graph.nodes.find((n) => n.id === id);
    main.append(h("h2", {}, "Shared memories"), graph.edges.length === 0 ? empty("No two share a memory yet.") :
      h("table", {}, graph.edges.slice(0, 60).map((edge) => h("tr", {},
        h("td", {}, entityLink(name(edge.from))), h("td", {}, entityLink(name(edge.to))), h("td", {}, edge.weight)))));
  },

  async connectors(main) {
    // The first listing after a start loads (and on a new machine compiles) every
    // connector component: the page says so instead of staying blank.
    const loading = h("p", { class: "muted", role: "status" }, "Loading the connectors…");
    main.append(h("h1", {}, "Connectors"),
      h("p", { class: "muted" }, "A connector reads only what a person granted it: a directory on this machine, or a host. ",
        "A sync goes through the admission gate like any capture."), loading);
    const [list, runs] = await Promise.all([get("/api/connectors"), get("/api/connectors/sync-state?limit=20")]);
    loading.remove();
    for (const c of list.connectors) main.append(connectorCard(c));
    main.append(h("h2", {}, "Sync history"), runs.length === 0 ? empty("No sync yet.") :
      h("div", {}, runs.map((r) => h("details", { class: "run" },
        h("summary", {}, h("strong", {}, r.connector), ` ${r.status} · ${reportCounts(r)}`,
          h("span", { class: "muted" }, ` · ${r.started_at ? when(r.started_at) : ""}`)),
        outcomes(r)))));
  },

  async settings(main) {
    const settings = await get("/api/settings");
    const { store, embedder, scorer, mcp } = settings;
    const row = (name, ...value) => h("tr", {}, h("th", {}, name), h("td", {}, ...value));
    const check = (ok) => h("span", { class: ok ? "good" : "bad" }, ok ? "✓ " : "✗ ");
    main.append(h("h1", {}, "Settings"),
      h("p", { class: "muted" }, `levh ${settings.version} · workspace ${settings.workspace} · you are ${settings.role}`));
    main.append(h("h2", {}, "Store"), h("table", {},
      row("file", store.path),
      row("schema", check(store.schema_version === store.latest_schema_version),
        `version ${store.schema_version} (this levh writes ${store.latest_schema_version})`),
      row("journal", check(store.journal_mode.toLowerCase() === "wal"), store.journal_mode),
      row("full-text index", check(store.full_text_in_step), store.full_text_in_step ? "in step with memories" : "out of step: run levh doctor")));
    main.append(h("h2", {}, "Embedder"), h("table", {},
      row("mode", embedder.mode, embedder.automatic ? h("span", { class: "muted" }, " (default; LEVH_EMBEDDER chooses another)") : ""),
      row("model", embedder.model),
      row("vectors", embedder.dimension ? `${embedder.dimension} dimensions` : "dimension known after the first embed",
        embedder.semantic ? ", semantic" : ", lexical fallback, not semantic")),
      ...warnings(embedder.warning));
    main.append(h("h2", {}, "Ranking"), h("p", {}, scorer.active
      ? ["Recall is ranked by the scorer component ", h("strong", {}, scorer.active), "."]
      : "Recall is ranked by the built-in H-score (levh scorer use ID installs another)."),
      ...warnings(scorer.warning));

    main.append(h("h2", {}, "Connect an agent"),
      h("p", {}, "Over HTTP, an MCP client connects to ", h("code", {}, `${location.origin}${mcp.http_path}`),
        ` (tool profile ${mcp.profile})`, sessionStorage.getItem("levh-token") ? ", sending a token as Authorization: Bearer." : "."),
      copyable({ mcpServers: { levh: { type: "http", url: `${location.origin}${mcp.http_path}` } } }),
      h("p", {}, "Or a client spawns levh itself over stdio — paste its configuration:"));
    for (const client of mcp.clients) {
      main.append(h("details", {}, h("summary", {}, h("strong", {}, client.client), h("span", { class: "muted" }, ` — ${client.file}`)),
        copyable(client.config)));
    }

    main.append(h("h2", {}, "Tokens"));
    if (!isAdmin) {
      main.append(h("p", { class: "muted" }, "An admin of this workspace issues and revokes its tokens."));
      return;
    }
    const list = h("div");
    const issued = h("div", { role: "status" });
    const drawTokens = async () => {
      const { tokens } = await get("/api/tokens");
      list.replaceChildren(tokens.length === 0 ? empty("No token yet: without LEVH_TOKEN, this server trusts the local person.") :
        h("table", { class: "tokens" }, h("tr", {}, h("th", {}, "id"), h("th", {}, "role"), h("th", {}, "label"),
          h("th", { class: "optional" }, "issued"), h("th", {}, "")),
          tokens.map((t) => h("tr", { class: t.revoked_at ? "muted" : undefined },
            h("td", {}, h("code", {}, t.id)), h("td", {}, t.role), h("td", {}, t.label || ""),
            h("td", { class: "optional" }, when(t.created_at)),
            h("td", {}, t.revoked_at ? `revoked ${when(t.revoked_at)}` :
              action("Revoke", async () => {
                if (confirm(`Revoke ${t.id}${t.label ? ` (${t.label})` : ""}? Clients using it are refused at once.`))
                  await call("DELETE", `/api/tokens/${encodeURIComponent(t.id)}`);
              }, drawTokens, "danger"))))));
    };
    const form = h("form", { class: "search" },
      h("select", { name: "role", "aria-label": "Role" }, ["viewer", "editor", "admin"].map((r) => h("option", { value: r }, r))),
      h("input", { name: "label", placeholder: "what it is for", "aria-label": "Label", maxlength: 200 }),
      h("button", { class: "primary" }, "Create token"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      try {
        const token = await post("/api/tokens", { role: data.get("role"), label: data.get("label") || null });
        // The one time the secret exists outside the client that will hold it.
        issued.replaceChildren(h("div", { class: "card" },
          h("p", {}, `Token ${token.id} (${token.role}) — copy the secret now; it is not shown again:`),
          copyable(token.secret)));
        form.reset();
        await drawTokens();
      } catch (error) { issued.replaceChildren(h("p", { class: "error" }, error.message)); }
    });
    main.append(form, issued, list);
    await drawTokens();
  },

  missing(main, { path }) {
    main.append(h("h1", {}, "No such page"), h("p", {}, `${path} is not a page of the dashboard. `, h("a", { href: "/" }, "Home")));
  },
};

// Quick capture from every page: the header's Capture button or the `c` key opens a form;
// the gate's verdict is shown in place, with a link to what it stored, held or matched.
export function captureDialog() {
  const dialog = document.getElementById("capture");
  const form = dialog.querySelector("form");
  const verdict = dialog.querySelector("[role=status]");
  const open = () => {
    if (!canWrite) return;
    verdict.replaceChildren();
    verdict.className = "muted";
    dialog.showModal();
    form.elements.content.focus();
  };
  document.getElementById("capture-open").addEventListener("click", open);
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (event.key === "c" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey && !dialog.open) {
      event.preventDefault();
      open();
    }
  });
  form.addEventListener("submit", async (event) => {
    if (event.submitter && event.submitter.value === "cancel") return;
    event.preventDefault();
    const data = new FormData(form);
    const body = { content: data.get("content") };
    if (data.get("project")) body.project = data.get("project");
    if (data.get("importance")) body.importance = Number(data.get("importance"));
    if (data.get("pin")) body.pin = true;
    try {
      const answer = await post("/api/memories", body);
      const link = (id, text) => h("a", { href: `/memories/${encodeURIComponent(id)}` }, text);
      const told = {
        admit: () => ["Stored. ", link(answer.memory_id, "Open it")],
        redact: () => [`Stored with ${answer.redactions.join(", ")} redacted. `, link(answer.memory_id, "Open it")],
        review: () => [`Held for a person's review: ${answer.reason || "close to another memory"}. `, h("a", { href: "/held" }, "Held queue")],
        reject: () => [`Not stored: ${answer.reason}. `, answer.nearest ? link(answer.nearest.id, "The memory it duplicates") : null],
      }[answer.verdict] || (() => [answer.verdict]);
      verdict.className = answer.verdict === "reject" ? "warning" : "muted";
      verdict.replaceChildren(...told().filter(Boolean));
      if (answer.verdict !== "reject") form.elements.content.value = "";
    } catch (error) {
      verdict.className = "error";
      verdict.textContent = error.message;
    }
  });
  // A link in the verdict closes the form and follows (the router takes it).
  verdict.addEventListener("click", (event) => { if (event.target.closest("a")) dialog.close(); });
  return (writable) => { document.getElementById("capture-open").hidden = !writable; };
}

// The command palette (Ctrl-K or ⌘K): pages, memories (search) and people by what is
// typed, and Capture; arrows move, Enter opens, Escape closes — the keyboard alone.
export function commandPalette() {
  const dialog = document.getElementById("palette");
  const input = dialog.querySelector("input");
  const list = dialog.querySelector("[role=listbox]");
  let items = [];
  let chosen = 0;
  let asked = 0;
  const pagesOf = () => [...document.querySelectorAll("nav a")].map((a) => ({ label: `Go to ${a.textContent}`, kind: "page", href: a.getAttribute("href") }));
  const render = () => {
    list.replaceChildren(...items.map((item, n) => h("li", {
      role: "option", id: `palette-${n}`, "aria-selected": n === chosen ? "true" : "false",
      onclick: () => { chosen = n; go(); },
    }, h("span", { class: "muted" }, `${item.kind} · `), item.label)));
    if (items.length) input.setAttribute("aria-activedescendant", `palette-${chosen}`);
    else input.removeAttribute("aria-activedescendant");
  };
  const go = () => {
    const item = items[chosen];
    if (!item) return;
    dialog.close();
    if (item.run) { item.run(); return; }
    history.pushState({}, "", item.href);
    window.dispatchEvent(new PopStateEvent("popstate"));
  };
  const update = async () => {
    const text = input.value.trim().toLowerCase();
    const fixed = [...pagesOf(), ...(canWrite ? [{ label: "Capture a memory", kind: "command", run: () => document.getElementById("capture-open").click() }] : [])];
    items = fixed.filter((item) => !text || item.label.toLowerCase().includes(text));
    chosen = 0;
    render();
    if (text.length < 2) return;
    const mine = ++asked;
    const [found, people] = await Promise.all([
      post("/api/search", { query: input.value.trim(), limit: 5 }).catch(() => ({ results: [] })),
      get(`/api/people?limit=5&name=${encodeURIComponent(input.value.trim())}`).catch(() => ({ people: [] })),
    ]);
    if (mine !== asked) return; // a newer keystroke's answer will come
    items = [
      ...items,
      ...found.results.map((m) => ({ label: short(m.content, 90), kind: "memory", href: `/memories/${encodeURIComponent(m.id)}` })),
      ...people.people.map((p) => ({ label: p.name, kind: "person", href: `/people/${encodeURIComponent(p.id)}` })),
    ];
    render();
  };
  input.addEventListener("input", () => { update(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") { chosen = Math.min(chosen + 1, items.length - 1); render(); event.preventDefault(); }
    else if (event.key === "ArrowUp") { chosen = Math.max(chosen - 1, 0); render(); event.preventDefault(); }
    else if (event.key === "Enter") { event.preventDefault(); go(); }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key.toLowerCase() === "k" && (event.ctrlKey || event.metaKey) && !dialog.open) {
      event.preventDefault();
      input.value = "";
      dialog.showModal();
      input.focus();
      update();
    }
  });
}

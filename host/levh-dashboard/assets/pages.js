// One function per page: it draws into `main` and may return a function that undoes what
// keeps running (the feed's socket). Everything read from the API is put in the page as
// text, never as HTML.

import { call, get, post, feedUrl } from "./api.js";
import { t, tParts } from "./i18n.js";

/// An element: `h("p", {class: "muted"}, "text", child, ...)`.
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) element.setAttribute(key, value);
  }
  // Nested lists of children at any depth (a message with a link inside is a list).
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const percent = (x) => t("format.percent", { n: Math.round(x * 100) });
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
    if (subject) return subject.replace(/^subject:\s*/i, "") || t("memory.no_subject");
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
      try { await navigator.clipboard.writeText(text); note.textContent = t("copy.done"); }
      catch { note.textContent = t("copy.unavailable"); }
    },
  }, t("copy.button"));
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
        if (said !== false) notify(typeof said === "string" ? said : t("action.done", { action: label.replace(/ \(.\)$/, "") }), "good");
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
const lastSeen = (at) => (at && new Date(at) > new Date() ? t("people.next", { day: day(at) }) : day(at));
/// A promise's due date, said to be overdue when it is.
const dueDate = (c) => (c.due ? (c.overdue ? t("promise.overdue", { due: c.due }) : c.due) : "—");

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
  const drawing = svg("svg", { viewBox: `0 0 ${size} ${size}`, role: "group", "aria-label": t("graph.drawing", { n: nodes.length }), class: "graph" });
  for (const edge of graph.edges) {
    const a = at.get(edge.from), b = at.get(edge.to);
    if (!a || !b) continue;
    drawing.append(svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "edge", "stroke-width": 0.5 + (4 * edge.weight) / heaviest },
      svg("title", {}, t("graph.edge", { n: edge.weight }))));
  }
  for (const node of nodes) {
    const p = at.get(node.id);
    const link = svg("a", { href: `/${node.kind === "person" ? "people" : "entities"}/${encodeURIComponent(node.id)}` },
      svg("circle", { cx: p.x, cy: p.y, r: 4 + Math.min(10, Math.sqrt(node.memories) * 2), class: `node ${node.kind}` }),
      svg("text", { x: p.x + 14 * Math.cos(p.angle), y: p.y + 14 * Math.sin(p.angle) + 4, "text-anchor": Math.cos(p.angle) < -0.1 ? "end" : Math.cos(p.angle) > 0.1 ? "start" : "middle" },
        node.name.length > 22 ? `${node.name.slice(0, 21)}…` : node.name),
      svg("title", {}, t("graph.node", { name: node.name, kind: node.kind, n: node.memories })));
    drawing.append(link);
  }
  return h("div", { class: "card graph" }, drawing);
}

/// A sync report's counts, in words (each one there is not zero).
const reportCounts = (r) => [
  r.fetched && t("connectors.count.fetched", { n: r.fetched }),
  r.admitted && t("connectors.count.admitted", { n: r.admitted }),
  r.redacted && t("connectors.count.redacted", { n: r.redacted }),
  r.updated && t("connectors.count.updated", { n: r.updated }),
  r.unchanged && t("connectors.count.unchanged", { n: r.unchanged }),
  r.held && t("connectors.count.held", { n: r.held }),
  r.rejected && t("connectors.count.rejected", { n: r.rejected }),
  r.failed && t("connectors.count.failed", { n: r.failed }),
  r.skipped && t("connectors.count.skipped", { n: r.skipped }),
  r.retired && t("connectors.count.retired", { n: r.retired }),
].filter(Boolean).join(", ") || t("connectors.count.none");

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
        item.held_id ? tParts("connectors.outcome.link", { link: h("a", { href: "/held" }, t("connectors.outcome.held")) }) : "",
        item.nearest ? tParts("connectors.outcome.like", { link: h("a", { href: `/memories/${encodeURIComponent(item.nearest)}` }, t("connectors.outcome.nearest")) }) : "")))));
  }
  const retired = report.retirements || [];
  if (retired.length) {
    parts.push(h("table", { class: "outcomes", "aria-label": t("connectors.retired") }, retired.map((item) => h("tr", {},
      h("td", {}, h("strong", {}, item.kept_pinned ? t("connectors.retired.kept") : t("connectors.retired.retired"))),
      h("td", {}, h("code", {}, item.source_id)),
      h("td", { class: "terms" }, item.reason,
        item.memory_id ? tParts("connectors.outcome.link", { link: h("a", { href: `/memories/${encodeURIComponent(item.memory_id)}` }, t("connectors.retired.memory")) }) : "",
        item.kept_pinned ? tParts("connectors.outcome.link", { link: h("a", { href: `/memories/${encodeURIComponent(item.kept_pinned)}` }, t("connectors.retired.pinned")) }) : "")))));
  }
  const lines = (report.errors || []).filter((line) => !items.some((item) => line.includes(item.source_id)));
  if (lines.length) parts.push(h("ul", { class: "errors" }, lines.map((line) => h("li", {}, line))));
  return parts.length ? parts : [h("p", { class: "muted" }, t("connectors.outcome.all_stored"))];
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
  const asks = c.capabilities.map((cap) => cap.kind === "read-path" ? t("connectors.asks.path", { value: cap.value }) : t("connectors.asks.host", { value: cap.value }));
  card.append(h("h2", {}, id, h("span", { class: "muted" }, ` ${c.version} · ${c.origin}`)),
    h("p", {}, c.description),
    h("p", { class: "muted" }, t("connectors.asks", { asks: asks.join("; ") || t("connectors.asks.nothing") })),
    grants, h("details", {}, h("summary", {}, t("connectors.sync.open")), form, report));

  const wantsHosts = c.capabilities.some((cap) => cap.kind === "http-host");
  const wantsPaths = c.capabilities.some((cap) => cap.kind === "read-path");
  // A grant's kind is the API's word ("directory" or "host"); the page says it in words.
  const kindWord = (kind) => (kind === "directory" ? t("connectors.grants.directory") : t("connectors.grants.host"));
  const drawGrants = (help) => {
    const given = [...help.granted_paths.map((p) => ["directory", p]), ...help.granted_hosts.map((x) => ["host", x])];
    grants.replaceChildren(
      given.length === 0 ? h("p", { class: "empty" }, t("connectors.grants.none")) :
        h("ul", { class: "grants" }, given.map(([kind, value]) => h("li", {}, ...tParts("connectors.grants.item", { kind: kindWord(kind), value: h("code", {}, value) }), " ",
          isAdmin ? action(t("connectors.grants.revoke"), async () => drawGrants(await post(`${base}/revoke`, { [kind]: value })), null, "danger") : null))));
    if (isAdmin && (wantsPaths || wantsHosts)) {
      const kind = wantsPaths ? "directory" : "host";
      const input = h("input", { name: kind, placeholder: kind === "directory" ? t("connectors.grant.directory.placeholder") : t("connectors.grant.host.placeholder"),
        "aria-label": kind === "directory" ? t("connectors.grant.directory.label", { id }) : t("connectors.grant.host.label", { id }), required: true });
      const note = h("span", { class: "muted", role: "status" });
      const add = h("form", { class: "search" }, input, h("button", {}, kind === "directory" ? t("connectors.grant.directory") : t("connectors.grant.host")), note);
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
            placeholder: key.default_value || { path: t("connectors.config.path"), "text-list": t("connectors.config.list") }[key.value_type] || key.value_type });
        return h("label", {}, h("span", {}, h("code", {}, key.name), key.required ? t("connectors.config.required") : ""), field, h("span", { class: "terms" }, key.help));
      }),
      h("label", {}, `${t("connectors.sync.project")} `, h("input", { name: "project", placeholder: t("connectors.sync.project.placeholder") })),
      h("label", {}, ...tParts("connectors.sync.dry_run", { field: h("input", { name: "dry_run", type: "checkbox" }) })),
      canWrite ? h("button", { class: "primary" }, t("connectors.sync.button")) : null);
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
    const progress = h("p", { class: "muted" }, t("connectors.sync.running"));
    report.replaceChildren(progress);
    const started = Date.now();
    const timer = setInterval(async () => {
      const [run] = await get(`/api/connectors/sync-state?id=${encodeURIComponent(id)}&limit=1`).catch(() => []);
      if (run && run.status === "running" && Date.parse(run.started_at) >= started - 5000)
        progress.textContent = run.pages ? t("connectors.sync.progress", { pages: run.pages, counts: reportCounts(run) }) : t("connectors.sync.first_page");
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
    main.append(h("h1", {}, t("home.title")));
    if (stats.total === 0) {
      main.append(h("div", { class: "card" },
        h("p", {}, t("home.empty")),
        h("p", {}, ...tParts("home.empty.how", {
          example: h("code", {}, t("home.empty.example")),
          connectors: h("a", { href: "/connectors" }, t("home.empty.connectors")),
          settings: h("a", { href: "/settings" }, t("home.empty.settings")),
        }))));
    }
    main.append(h("div", { class: "grid" },
      h("div", { class: "card" }, h("div", { class: "count" }, stats.total), h("a", { href: "/memories" }, t("home.card.memories"))),
      h("div", { class: "card" }, h("div", { class: "count" }, stats.pinned), h("a", { href: "/memories?show=pinned" }, t("home.card.pinned"))),
      h("div", { class: "card" }, h("div", { class: "count" }, stats.fading), h("a", { href: "/fading" }, t("home.card.fading"))),
      h("div", { class: "card" }, h("div", { class: "count" }, held.held.length), h("a", { href: "/held" }, t("home.card.held"))),
      h("div", { class: "card" }, h("div", { class: "count" }, percent(stats.average_retention)), t("home.card.retention")),
    ));
    // Retention now, per tenth: an HTML bar chart (it reads in light and dark, and a
    // screen reader gets the numbers from its label).
    const bins = stats.retention_histogram;
    const top = Math.max(1, ...bins);
    const label = bins.map((n, i) => t("home.retention.bin", { from: i * 10, to: i * 10 + 10, n })).join(", ");
    main.append(h("h2", {}, t("home.retention.title")), h("div", { class: "card" },
      h("div", { class: "bars", role: "img", "aria-label": t("home.retention.label", { bins: label }) },
        bins.map((n, i) => h("div", { class: "bar", title: t("home.retention.bar", { n, from: i * 10, to: i * 10 + 10 }) },
          h("span", { class: "n" }, n || ""), sized(h("span", { class: "fill" }), (n / top) * 100)))),
      h("div", { class: "bars axis", "aria-hidden": "true" }, bins.map((_, i) => h("span", {}, t("format.percent", { n: i * 10 }))))));
    // Each group a link to its memories.
    const counts = (title, map, filter) => h("div", { class: "card" }, h("h2", {}, title),
      Object.keys(map).length === 0 ? empty(t("home.counts.none")) :
        h("table", {}, Object.entries(map).map(([k, v]) => h("tr", {},
          h("td", {}, h("a", { href: `/memories?${filter}=${encodeURIComponent(k)}` }, k)), h("td", {}, v)))));
    main.append(h("div", { class: "grid" },
      counts(t("home.counts.projects"), stats.by_project, "project"), counts(t("home.counts.sources"), stats.by_source, "source"),
      counts(t("home.counts.kinds"), stats.by_kind, "kind")));
    main.append(h("h2", {}, t("home.fading.title")), fading.memories.length === 0 ? empty(t("home.fading.none")) :
      h("ul", {}, fading.memories.map((m) => h("li", {}, memoryLink(m), " ", h("span", { class: "muted" }, percent(m.retention))))));
    const recent = runs.slice(0, 5);
    main.append(h("h2", {}, t("home.syncs.title")), recent.length === 0 ? empty(t("home.syncs.none")) :
      h("table", {}, recent.map((r) => h("tr", {}, h("td", {}, r.connector), h("td", {}, r.status),
        h("td", {}, t("home.syncs.counts", { stored: r.admitted, held: r.held, failed: r.failed })), h("td", { class: "optional muted" }, r.started_at ? when(r.started_at) : "")))));
  },

  feed(main) {
    main.append(h("h1", {}, t("feed.title")), h("p", { class: "muted" }, t("feed.intro")));
    const list = h("ul", { class: "feed" });
    const state = h("p", { class: "muted", role: "status" }, t("feed.connecting"));
    const kinds = ["", "store", "update", "importance", "recall-reinforce", "reinforce", "feedback", "pin", "unpin",
      "forget", "purge", "interfere", "supersede", "hold", "admit", "discard", "expire", "redact", "move", "review", "promote", "sync-run",
      "recall", "session-start", "session-end"];
    const surfaces = ["", "cli", "mcp", "http", "dashboard", "sync"];
    // The options are the events' own words (kinds and surfaces as the log names them).
    const select = (name, label, any, values) => h("select", { name, "aria-label": label },
      values.map((v) => h("option", { value: v }, v || any)));
    const filters = h("form", { class: "search" }, select("kind", t("feed.filter.kind"), t("feed.filter.kind.any"), kinds),
      select("surface", t("feed.filter.surface"), t("feed.filter.surface.any"), surfaces));
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
      socket.onopen = () => { state.textContent = t("feed.live"); delay = 500; };
      socket.onclose = () => {
        if (closed) return;
        state.textContent = t("feed.disconnected", { seconds: Math.round(delay / 1000) || 1 });
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
      // A recall names how many memories it returned; a session its transport (an MCP
      // client's name is in `via`).
      const detail = event.detail || {};
      const target = event.memory_id ? h("a", { href: `/memories/${encodeURIComponent(event.memory_id)}` }, event.memory_id)
        : event.kind === "recall" && Array.isArray(detail.returned) ? t("feed.recall", { operation: detail.operation || "recall", n: detail.returned.length })
        : detail.transport ? t("agents.presence.transport", { transport: detail.transport }) : "";
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
    main.append(h("h1", {}, t("memories.title")));
    if (query.get("forgotten")) main.append(h("p", { class: "muted", role: "status" }, t("memories.forgotten")));
    // The page's filters (as its address has them) as the API's parameters (a date is the
    // person's local day).
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
    // The first page is asked for at once, beside the values the filters offer: on a large
    // store it is on screen one round trip sooner.
    const firstParams = params(query);
    firstParams.set("limit", "50");
    let first = query.get("show") === "held" ? null : get(`/api/memories?${firstParams}`);
    first?.catch(() => {});
    const [stats, people] = await Promise.all([get("/api/stats"), get("/api/people?limit=200").catch(() => ({ people: [] }))]);
    // The values that exist, with how many memories hold each: a filter offers them
    // rather than a free-text box that finds nothing on a typo.
    const choose = (name, label, counts) => h("label", {}, `${label} `, h("select", { name },
      h("option", { value: "" }, t("memories.filter.any")),
      Object.entries(counts).map(([value, n]) => h("option", { value, selected: query.get(name) === value || undefined }, `${value} (${n})`))));
    const option = (name, value, text) => h("option", { value, selected: (query.get(name) || "") === value || undefined }, text);
    const form = h("form", { class: "filters", "aria-label": t("memories.filters") },
      choose("project", t("memories.filter.project"), stats.by_project),
      choose("kind", t("memories.filter.kind"), stats.by_kind),
      choose("source", t("memories.filter.source"), stats.by_source),
      h("label", {}, `${t("memories.filter.show")} `, h("select", { name: "show" },
        option("show", "", t("memories.show.live")), option("show", "pinned", t("memories.show.pinned")), option("show", "fading", t("memories.show.fading")),
        option("show", "forgotten", t("memories.show.forgotten")), option("show", "held", t("memories.show.held")))),
      h("label", {}, `${t("memories.filter.about")} `, h("input", { name: "about", list: "memories-people", value: query.get("about") || "", placeholder: t("memories.filter.about.placeholder"), size: 18 })),
      h("datalist", { id: "memories-people" }, people.people.map((p) => h("option", { value: p.name }))),
      h("label", {}, `${t("memories.filter.from")} `, h("input", { name: "from", type: "date", value: query.get("from") || "" })),
      h("label", {}, `${t("memories.filter.to")} `, h("input", { name: "to", type: "date", value: query.get("to") || "" })),
      h("label", {}, `${t("memories.filter.sort")} `, h("select", { name: "sort" },
        option("sort", "", t("memories.sort.newest")), option("sort", "importance", t("memories.sort.importance")),
        option("sort", "recalled", t("memories.sort.recalled")), option("sort", "retention", t("memories.sort.retention")))),
      h("button", { class: "primary" }, t("memories.filter.button")));
    const count = h("p", { class: "muted", role: "status", id: "memories-count" });
    const list = h("tbody");
    const more = h("button", { type: "button" }, t("memories.more"));
    const all = h("input", { type: "checkbox", "aria-label": t("memories.select_all") });
    const head = h("thead", {}, h("tr", {}, h("th", {}, all), h("th", {}, t("memories.column.memory")), h("th", {}, t("memories.column.project")),
      h("th", { class: "optional" }, t("memories.column.kind")), h("th", {}, t("memories.column.retention")), h("th", { class: "optional" }, t("memories.column.importance")),
      h("th", { class: "optional" }, t("memories.column.created")), h("th", { class: "optional" }, t("memories.column.recalled"))));
    // The rows shown, by id: what a selection's actions and export act on.
    const shown = new Map();
    const selected = () => [...list.querySelectorAll("input[type=checkbox]:checked")].map((box) => box.value);
    const selection = h("div", { class: "actions selection", role: "group", "aria-label": t("memories.selection") });
    const note = h("span", { role: "status", class: "muted" });
    const target = h("input", { list: "memories-projects", "aria-label": t("memories.move.target"), placeholder: t("memories.move.target.placeholder"), size: 12 });
    const drawSelection = () => {
      const n = selected().length;
      all.checked = n > 0 && n === list.querySelectorAll("input[type=checkbox]").length;
      for (const button of selection.querySelectorAll("button")) button.disabled = n === 0;
      note.textContent = n ? t("memories.selected", { n }) : "";
    };
    // `said(n)` words what was done to all n; `said(n, of, error)` to n of them, and the
    // first error.
    const each = async (run, said) => {
      const ids = selected();
      const failed = [];
      for (const id of ids) await run(id).catch((error) => failed.push(error.message));
      notify(failed.length ? said(ids.length - failed.length, ids.length, failed[0]) : said(ids.length), failed.length ? "error" : "good");
      await reload();
    };
    if (canWrite) {
      selection.append(
        h("button", { type: "button", onclick: () => each((id) => post(`/api/memories/${encodeURIComponent(id)}/pin`),
          (n, of, error) => (of === undefined ? t("memories.pinned", { n }) : t("memories.pinned.partly", { n, of, error }))) }, t("memories.pin")),
        h("button", { type: "button", class: "danger", onclick: () => {
          const n = selected().length;
          if (confirm(t("memories.confirm.forget", { n }))) each((id) => call("DELETE", `/api/memories/${encodeURIComponent(id)}`),
            (n, of, error) => (of === undefined ? t("memories.forgot", { n }) : t("memories.forgot.partly", { n, of, error })));
        } }, t("memories.forget")),
        h("span", {}, target, " ", h("button", { type: "button", onclick: async () => {
          try {
            const moved = await post("/api/memories:move", { ids: selected(), project: target.value.trim() || null });
            notify(moved.project ? t("memories.moved.to", { n: moved.moved.length, project: moved.project }) : t("memories.moved.out", { n: moved.moved.length }), "good");
            await reload();
          } catch (error) { notify(error.message, "error"); }
        } }, t("memories.move"))),
        h("datalist", { id: "memories-projects" }, Object.keys(stats.by_project).map((p) => h("option", { value: p }))));
    }
    selection.append(h("button", { type: "button", onclick: () => {
      // What `levh import` reads back: one memory a line, as the export writes it.
      const lines = selected().map((id) => JSON.stringify(shown.get(id))).join("\n") + "\n";
      const file = "levh-memories.jsonl";
      const link = h("a", { href: URL.createObjectURL(new Blob([lines], { type: "application/x-ndjson" })), download: file });
      document.body.append(link); link.click(); link.remove();
      notify(t("memories.exported", { n: selected().length, file }), "good");
    } }, t("memories.export")), note);
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
    const row = (m) => {
      shown.set(m.id, m);
      return h("tr", {},
        h("td", {}, h("input", { type: "checkbox", value: m.id, "aria-label": t("memories.row.select", { memory: short(m.content, 60) }) })),
        h("td", {}, memoryLink(m), m.pinned ? h("span", { class: "muted" }, t("memories.row.pinned")) : null),
        h("td", {}, m.project ? h("a", { href: `/memories?project=${encodeURIComponent(m.project)}` }, m.project) : "—"),
        h("td", { class: "optional" }, m.kind), h("td", {}, percent(m.retention)),
        h("td", { class: "optional" }, m.importance.toFixed(2)),
        h("td", { class: "optional muted" }, day(m.created_at)),
        h("td", { class: "optional muted" }, m.last_recalled_at ? day(m.last_recalled_at) : t("memories.row.never")));
    };
    const held = async () => {
      // Held candidates are not memories yet: shown here, decided on the Held page.
      const waiting = await get("/api/memories/held");
      list.replaceChildren(...waiting.held.map((c) => h("tr", {}, h("td", {}),
        h("td", {}, h("a", { href: "/held" }, short(c.content)), h("div", { class: "terms" }, c.reason || "")),
        h("td", {}, c.project || "—"), h("td", { class: "optional" }, c.source), h("td", {}, t("memories.row.held")),
        h("td", { class: "optional" }), h("td", { class: "optional muted" }, day(c.created_at)), h("td", { class: "optional" }))));
      selection.hidden = true;
      more.hidden = true;
      count.textContent = waiting.held.length === 0 ? t("memories.held.none") : t("memories.held.count", { n: waiting.held.length });
    };
    const load = async () => {
      const keep = filters();
      if (keep.get("show") === "held") return held();
      selection.hidden = false;
      const api = params(keep);
      api.set("limit", "50");
      if (after) api.set("after", after);
      // The page asked for at the start, when the filters still say what it asked.
      const early = first && api.toString() === firstParams.toString() ? first : null;
      first = null;
      const page = await (early || get(`/api/memories?${api}`));
      if (page.total !== undefined) total = page.total;
      list.append(...page.memories.map(row));
      if (page.memories.length > 0) after = page.memories[page.memories.length - 1].id;
      more.hidden = page.memories.length < 50;
      const n = list.children.length;
      count.textContent = n === 0 ? t("memories.count.none") : total !== null && total > n ? t("memories.count.of", { n, total }) : t("memories.count", { n });
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
    main.append(h("h1", {}, t("search.title")));
    const stats = await get("/api/stats");
    // The values that exist, not free text that finds nothing on a typo.
    const choose = (name, label, any, counts) => h("select", { name, "aria-label": label },
      h("option", { value: "" }, any),
      Object.keys(counts).map((value) => h("option", { value, selected: query.get(name) === value || undefined }, value)));
    const form = h("form", { class: "search", role: "search" },
      h("input", { name: "query", type: "search", placeholder: t("search.query.placeholder"), value: query.get("q") || "", "aria-label": t("search.query"), required: true }),
      choose("project", t("search.filter.project"), t("search.filter.project.any"), stats.by_project),
      choose("kind", t("search.filter.kind"), t("search.filter.kind.any"), stats.by_kind),
      choose("source", t("search.filter.source"), t("search.filter.source.any"), stats.by_source),
      h("label", { class: "muted" }, `${t("search.as_of")} `, h("input", { name: "as_of", type: "datetime-local", value: query.get("as_of") || "", title: t("search.as_of.title") })),
      h("label", { class: "muted" }, `${t("search.known_at")} `, h("input", { name: "known_at", type: "datetime-local", value: query.get("known_at") || "", title: t("search.known_at.title") })),
      h("button", { class: "primary", value: "search" }, t("search.search")),
      h("button", { value: "recall", title: t("search.recall.title") }, t("search.recall")));
    const results = h("div");
    main.append(form, results);
    const run = async (mode) => {
      const data = new FormData(form);
      const body = { query: data.get("query"), limit: 20 };
      for (const key of ["project", "kind", "source"]) if (data.get(key)) body[key] = data.get(key);
      // datetime-local is the person's local time; the API wants an instant.
      for (const key of ["as_of", "known_at"]) if (data.get(key)) body[key] = new Date(data.get(key)).toISOString();
      const answer = await post(mode === "recall" ? "/api/recall" : "/api/search", body);
      results.replaceChildren(answer.results.length === 0 ? empty(t("search.none")) :
        h("table", {}, h("tr", {}, h("th", {}, t("search.column.rank")), h("th", {}, t("search.column.memory")), h("th", {}, t("search.column.relevance")),
          h("th", { class: "optional" }, t("search.column.why"))),
          // A hit is the memory's fields with what ranked it beside them. The H-score
          // ranks (lower first), which reads backwards as a score: the rank and the
          // relevance (higher is closer) are shown, the H-score among the reasons.
          answer.results.map((hit, n) => h("tr", {},
            h("td", {}, String(n + 1)),
            h("td", {}, memoryLink(hit)),
            h("td", {}, percent(hit.relevance)),
            h("td", { class: "optional terms" }, t("search.why", { cosine: hit.similarity.toFixed(2), lexical: hit.lexical.toFixed(2),
              retention: percent(hit.retention), importance: hit.importance, score: hit.score.toFixed(3) }))))));
      if (mode === "recall" && answer.reinforced.length) results.prepend(h("p", { class: "muted" }, t("search.reinforced", { n: answer.reinforced.length })));
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
        action(t("memory.reinforce"), () => post(`${path}/reinforce`), draw, "primary"),
        action(t("memory.helpful"), () => post(`${path}/feedback`, { helpful: true }), draw),
        action(t("memory.wrong"), () => post(`${path}/feedback`, { helpful: false }), draw),
        memory.pinned ? action(t("memory.unpin"), () => post(`${path}/unpin`), draw) : action(t("memory.pin"), () => post(`${path}/pin`), draw),
        // A forgotten memory has no page to redraw: the list, saying what happened.
        action(t("memory.forget"), async () => {
          if (!confirm(t("memory.confirm.forget"))) return false;
          await call("DELETE", path);
          history.pushState({}, "", "/memories?forgotten=1");
          window.dispatchEvent(new PopStateEvent("popstate"));
          return t("memory.forgotten", { memory: short(memory.content, 60) });
        }, null, "danger"),
        // A purge says what it erased and where the content can still be found: the
        // report goes with the person to the list, in the notice.
        action(t("memory.purge"), async () => {
          if (!confirm(t("memory.confirm.purge"))) return false;
          const report = await post(`${path}/purge`);
          history.pushState({}, "", "/memories");
          window.dispatchEvent(new PopStateEvent("popstate"));
          const held = report.held_removed ? t("memory.purged.held", { n: report.held_removed }) : "";
          return report.residue.length === 0
            ? t("memory.purged", { held })
            : t("memory.purged.residue", { places: report.residue.join("; "), held });
        }, null, "danger")));
      if (canWrite) {
        // An edit goes through the gate like a capture: the answer says what it decided.
        const verdict = h("p", { class: "muted", role: "status" });
        const editor = h("form", { class: "edit" },
          h("label", {}, t("memory.edit.content"), h("textarea", { name: "content", rows: 4 }, memory.content)),
          h("label", {}, `${t("memory.edit.importance")} `, h("input", { name: "importance", type: "number", min: 0, max: 1, step: 0.05, value: memory.importance })),
          h("button", { class: "primary" }, t("memory.edit.save")), verdict);
        editor.addEventListener("submit", async (event) => {
          event.preventDefault();
          const data = new FormData(editor);
          const body = {};
          if (data.get("content") !== memory.content) body.content = data.get("content");
          if (Number(data.get("importance")) !== memory.importance) body.importance = Number(data.get("importance"));
          if (Object.keys(body).length === 0) { verdict.textContent = t("memory.edit.unchanged"); return; }
          try {
            const answer = await call("PATCH", path, body);
            // The gate's verdict in words, kept in the notice: an applied edit redraws
            // the page, which would take a message beside the form with it.
            const why = answer.reason ? ` ${answer.reason}` : "";
            const words = {
              admit: t("memory.edit.admit"),
              redact: t("memory.edit.redact", { redactions: answer.redactions.join(", ") || t("memory.edit.secrets") }),
              review: t("memory.edit.review", { why }),
              reject: t("memory.edit.reject", { why }),
            }[answer.verdict] || t("memory.edit.other", { verdict: answer.verdict, why });
            verdict.className = answer.applied ? "muted" : "warning";
            verdict.textContent = words;
            notify(words, answer.applied ? "good" : "error");
            if (answer.applied) await draw();
          } catch (error) { verdict.className = "error"; verdict.textContent = error.message; }
        });
        main.append(h("details", {}, h("summary", {}, t("memory.edit")), editor));
      }
      // Its fields in words (the API's names are for programs), times in local time;
      // what only a developer reads (hashes, the vector, the workspace) folded away.
      const hours = (x) => (x >= 48 ? t("memory.days", { n: (x / 24).toFixed(1) }) : t("memory.hours", { n: x.toFixed(1) }));
      const yes = (x) => (x ? t("memory.yes") : t("memory.no"));
      const projectLink = (p) => h("a", { href: `/memories?project=${encodeURIComponent(p)}` }, p);
      const admission = memory.admission;
      const fields = [
        [t("memory.field.project"), memory.project ? projectLink(memory.project) : t("memory.none")],
        [t("memory.field.kind"), memory.kind], [t("memory.field.source"), memory.source],
        [t("memory.field.importance"), memory.importance.toFixed(2)], [t("memory.field.pinned"), yes(memory.pinned)],
        [t("memory.field.retention"), t("format.percent", { n: (memory.retention * 100).toFixed(1) })],
        [t("memory.field.half_life"), h("span", { title: t("memory.hours", { n: memory.stability_hours }) }, hours(memory.stability_hours))],
        [t("memory.field.fading"), yes(memory.fading)], [t("memory.field.fades_at"), memory.fades_at ? when(memory.fades_at) : t("memory.fades_never")],
        [t("memory.field.recalled"), t("memory.recalled", { n: memory.recall_count })],
        [t("memory.field.last_recalled"), memory.last_recalled_at ? when(memory.last_recalled_at) : t("memory.never")],
        [t("memory.field.stored"), when(memory.created_at)], [t("memory.field.valid_from"), when(memory.valid_from)],
        [t("memory.field.valid_to"), memory.valid_to ? when(memory.valid_to) : t("memory.still_holds")],
        memory.superseded_by ? [t("memory.field.replaced_by"), h("a", { href: `/memories/${encodeURIComponent(memory.superseded_by)}` }, t("memory.newer"))] : null,
        [t("memory.field.admitted"), admission.reasons.length
          ? t("memory.admitted.reasons", { verdict: admission.verdict, by: admission.decided_by, reasons: admission.reasons.join("; ") })
          : t("memory.admitted", { verdict: admission.verdict, by: admission.decided_by })],
        memory.session_id ? [t("memory.field.session"), h("a", { href: "/sessions" }, memory.session_id.slice(0, 8))] : null,
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
        if (typeof value === "boolean") return yes(value);
        return String(value);
      };
      const technical = new Set(["source_id", "content_hash"]);
      const meta = Object.entries(memory.metadata || {}).filter(([key, value]) => !technical.has(key) && words(value) !== null);
      if (meta.length > 0) {
        main.append(h("h2", {}, t("memory.details")), h("table", { class: "fields" }, meta.map(([key, value]) => h("tr", {}, h("th", {}, key === "source_uri" ? t("memory.details.read_from") : label(key)),
          h("td", {}, key === "source_uri" && /^(https?|file):/.test(value) ? h("a", { href: value }, value.replace(/^file:/, "")) : words(value))))));
      }
      main.append(h("details", {}, h("summary", {}, t("memory.technical")), h("table", { class: "fields" },
        [[t("memory.technical.id"), memory.id], [t("memory.technical.workspace"), memory.workspace], [t("memory.technical.content_hash"), memory.content_hash],
          [t("memory.technical.source_id"), (memory.metadata || {}).source_id],
          [t("memory.technical.embedding"), memory.embedding_model ? t("memory.technical.embedding.model", { model: memory.embedding_model, n: memory.embedding_dimension }) : t("memory.none")],
          [t("memory.technical.frequency"), memory.frequency.toFixed(3)]]
          .filter(([, v]) => v !== undefined && v !== null).map(([name, value]) => h("tr", {}, h("th", {}, name), h("td", {}, h("code", {}, String(value))))))));
      // Who and what it involves, each a link to its page.
      const involved = await get(`${path}/entities`).catch(() => ({ entities: [] }));
      if (involved.entities.length > 0) {
        main.append(h("h2", {}, t("memory.involves")), h("ul", { class: "involved" }, involved.entities.map((e) =>
          h("li", {}, entityLink(e), h("span", { class: "muted" }, ` — ${e.kind}${e.roles.length ? `, ${e.roles.join(", ")}` : ""}`)))));
      }
      // How far it can be believed, factor by factor (ranking is separate).
      const trust = await get(`${path}/trust`).catch((error) => ({ error }));
      main.append(h("h2", {}, t("memory.trust")), trust.error ? h("p", { class: "error" }, trust.error.message) :
        h("div", { class: "card trust" },
          h("p", {}, h("strong", {}, `${trust.value.toFixed(2)} (${trust.label})`)),
          h("table", { class: "factors" }, trust.factors.map((f) => h("tr", {},
            h("td", {}, `${f.effect >= 0 ? "+" : ""}${f.effect.toFixed(2)}`), h("th", {}, f.factor), h("td", {}, f.why))))));
      const plot = h("div", { class: "card", "aria-label": t("memory.curve") });
      main.append(h("h2", {}, t("memory.curve.title")), plot);
      chart(plot, { name: t("memory.curve.day"), values: curve.points.map((p) => p.day) }, { name: t("memory.curve.retention"), values: curve.points.map((p) => p.retention) });
      // A consolidation's summary lists what it replaced, and can be undone.
      const members = await get(`${path}/consolidated`).catch(() => ({ memories: [] }));
      if (members.memories.length > 0) {
        main.append(h("h2", {}, t("memory.consolidated")),
          h("ul", {}, members.memories.map((m) => h("li", {}, memoryLink(m)))));
        if (canWrite) main.append(h("div", { class: "actions" },
          // The summary is forgotten by the undo: go to its first member, live again.
          action(t("memory.consolidated.undo"), () => post(`/api/consolidations/${encodeURIComponent(id)}/undo`), () => {
            history.pushState({}, "", `/memories/${encodeURIComponent(members.memories[0].id)}`);
            window.dispatchEvent(new PopStateEvent("popstate"));
          })));
      }
      const files = await get(`${path}/attachments`).catch(() => ({ attachments: [] }));
      if (files.attachments.length > 0) {
        main.append(h("h2", {}, t("memory.attachments")), h("ul", {}, files.attachments.map((a) =>
          h("li", {}, h("a", { href: `/memories/${encodeURIComponent(a.memory_id)}` }, a.name), t("memory.attachment", { type: a.media_type, bytes: a.bytes })))));
      }
      main.append(h("h2", {}, t("memory.related")), related.error ? h("p", { class: "error" }, related.error.message) :
        related.related.length === 0 ? empty(t("memory.related.none")) :
        h("ul", {}, related.related.map((m) => h("li", {}, memoryLink(m)))));
      main.append(h("h2", {}, t("memory.history")), events.error ? h("p", { class: "error" }, events.error.message) :
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
    main.append(h("h1", {}, t("fading.title")),
      h("p", { class: "muted" }, ...tParts("fading.intro", { review: h("a", { href: "/review" }, t("fading.intro.review")) })));
    const count = h("p", { class: "muted", role: "status" });
    const rows = h("tbody");
    const more = h("button", { type: "button" }, t("fading.more"));
    main.append(count, h("table", { class: "fading" },
      h("thead", {}, h("tr", {}, h("th", {}, t("fading.column.memory")), h("th", {}, t("fading.column.retention")),
        h("th", { class: "optional" }, t("fading.column.project")), h("th", {}, t("fading.column.decide")))), rows));
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
            action(t("fading.keep"), () => decide("keep"), reload),
            action(t("fading.reinforce"), () => decide("reinforce"), reload, "primary"),
            action(t("fading.weaken"), () => decide("weaken"), reload),
            action(t("fading.pin"), () => decide("pin"), reload),
            action(t("fading.forget"), async () => {
              if (!confirm(t("fading.confirm.forget"))) return false;
              await decide("forget");
              return t("fading.forgotten", { memory: short(m.content, 60) });
            }, reload, "danger")))));
      }
      if (page.memories.length > 0) after = page.memories[page.memories.length - 1].id;
      // "More" is there only when there is more (a viewer's page has no button at all).
      if (page.memories.length < 50) more.remove();
      else if (!more.isConnected) main.append(more);
      const n = rows.children.length;
      count.textContent = total === 0 ? t("fading.none") : n < total ? t("fading.count.of", { n, total }) : t("fading.count", { n: total });
    };
    const reload = async () => { rows.replaceChildren(); after = null; await load(); };
    more.addEventListener("click", () => load().catch((error) => { count.className = "error"; count.textContent = error.message; }));
    await load();
  },

  // Spaced repetition: the fading memories not put off, one at a time, each decision
  // recorded in its history; keys k r w p s f act on the one shown.
  async review(main) {
    main.append(h("h1", {}, t("review.title")),
      h("p", { class: "muted" }, t("review.intro")));
    const box = h("div");
    const status = h("p", { role: "status", class: "muted" });
    main.append(status, box);
    let decided = 0;
    let current = null;
    const draw = async () => {
      const queue = await get("/api/review?limit=50");
      current = queue.memories[0] || null;
      if (!current) { box.replaceChildren(empty(decided ? t("review.done", { n: decided }) : t("review.none"))); return; }
      const m = current.memory;
      const days = h("input", { type: "number", min: "1", max: "3650", value: "7", "aria-label": t("review.snooze.days"), class: "days" });
      const decide = (decision, extra = {}) => async () => {
        const done = await post(`/api/memories/${encodeURIComponent(m.id)}/review`, { decision, ...extra });
        decided += 1;
        status.textContent = done.decision === "forget" ? t("review.status.forgotten", { decision }) : t("review.status.next", { decision, when: when(done.next_review) });
      };
      box.replaceChildren(h("div", { class: "card review" },
        h("p", { class: "muted" }, t("review.card", {
          count: `${queue.memories.length}${queue.memories.length === 50 ? "+" : ""}`, retention: percent(m.retention), importance: m.importance.toFixed(2),
          reviews: current.reviews ? t("review.card.reviewed", { n: current.reviews }) : t("review.card.never") })),
        h("p", { class: "content" }, h("a", { href: `/memories/${encodeURIComponent(m.id)}` }, m.content)),
        h("p", { class: "terms" }, [m.project, m.kind, m.source, t("review.created", { when: when(m.created_at) })].filter(Boolean).join(" · ")),
        // The keys (k r w p s f) press these buttons by their place, not their labels.
        h("div", { class: "actions" },
          action(t("review.keep"), decide("keep"), draw, "primary"),
          action(t("review.reinforce"), decide("reinforce"), draw),
          action(t("review.weaken"), decide("weaken"), draw),
          action(t("review.pin"), decide("pin"), draw),
          h("span", {}, days, action(t("review.snooze"), () => decide("snooze", { days: Number(days.value) })(), draw)),
          action(t("review.forget"), decide("forget"), draw, "danger"))));
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
      main.replaceChildren(h("h1", {}, t("held.title")));
      if (held.held.length === 0) { main.append(empty(t("held.none"))); return; }
      main.append(h("p", { class: "muted" }, t("held.intro")));
      // A held update is compared with the memory it would change; any other candidate
      // with the memory it resembles.
      const other = (c) => c.updates || (c.nearest && c.nearest.id);
      const neighbours = await Promise.all(held.held.map((c) =>
        other(c) ? get(`/api/memories/${encodeURIComponent(other(c))}`).catch(() => null) : null));
      held.held.forEach((candidate, n) => {
        const path = `/api/memories/held/${encodeURIComponent(candidate.id)}`;
        const near = neighbours[n];
        const update = Boolean(candidate.updates);
        const closeness = candidate.nearest ? t("held.closeness", { measure: candidate.nearest.measure, similarity: candidate.nearest.similarity.toFixed(2) }) : "";
        // "Would change <the memory> (…)" over the memory it compares with.
        const memory = near && h("a", { href: `/memories/${encodeURIComponent(near.id)}` }, short(near.content, 60));
        const heading = !near ? [] : update ? tParts("held.would_change", { memory, closeness }) : tParts("held.resembles", { memory, closeness });
        main.append(h("div", { class: "card" },
          near ? null : h("p", { class: "content" }, candidate.content),
          h("p", { class: "muted" }, candidate.reason),
          near ? h("div", { class: "pair" },
            h("div", {}, h("h2", {}, update ? t("held.edit") : t("held.candidate")), h("p", { class: "content" }, candidate.content)),
            h("div", {}, h("h2", {}, ...heading), h("p", { class: "content" }, near.content)),
            h("div", { class: "diff" }, h("h2", {}, t("held.changes")), h("p", { class: "content" }, wordDiff(near.content, candidate.content)))) : null,
          h("div", { class: "actions" },
            action(update ? t("held.apply") : t("held.admit"), () => post(`${path}/admit`, {}), draw, "primary"),
            candidate.nearest && !update ? action(t("held.replace"), () => post(`${path}/admit`, { supersede: true }), draw) : null,
            action(t("held.discard"), () => post(`${path}/discard`), draw, "danger"))));
      });
    };
    await draw();
  },

  async decisions(main) {
    const [decided, promised] = await Promise.all([get("/api/decisions?limit=100"), get("/api/commitments?limit=100")]);
    main.append(h("h1", {}, t("decisions.title")),
      h("p", { class: "muted" }, t("decisions.intro")));
    const where = (x) => [x.source, x.project].filter(Boolean).join(" · ");
    main.append(h("h2", {}, t("decisions.decided")), decided.decisions.length === 0 ? empty(t("decisions.none")) :
      h("table", { class: "decisions" }, decided.decisions.map((d) => h("tr", {},
        h("td", { class: "optional muted" }, when(d.at)),
        h("td", {}, h("a", { href: `/memories/${encodeURIComponent(d.memory_id)}` }, d.sentence)),
        h("td", { class: "optional terms" }, [where(d), d.people.join(", ")].filter(Boolean).join(" — "))))));
    main.append(h("p", {}, ...tParts("decisions.promises", { n: `${promised.commitments.length}${promised.commitments.length === 100 ? "+" : ""}`,
      commitments: h("a", { href: "/commitments" }, t("decisions.promises.link")) })));
  },

  // Every promise the memories make: who made it (you, or the speaker or sender the
  // memory names), when it is due, where; filtered by project and by whom, open or done.
  async commitments(main, _, query) {
    main.append(h("h1", {}, t("commitments.title")),
      h("p", { class: "muted" }, t("commitments.intro")));
    // Read once (open and done), then filtered here: the choices offered are the people
    // and projects the promises have.
    const found = await get("/api/commitments?include_done=true&limit=1000");
    const values = (pick) => [...new Set(found.commitments.map(pick).filter(Boolean))].sort();
    const pick = (name, label, options) => h("label", {}, `${label} `, h("select", { name }, options.map(([value, text]) =>
      h("option", { value, selected: (query.get(name) || "") === value || undefined }, text))));
    const form = h("form", { class: "filters", "aria-label": t("commitments.filters") },
      pick("project", t("commitments.filter.project"), [["", t("commitments.filter.project.any")], ...values((c) => c.project).map((p) => [p, p])]),
      pick("by", t("commitments.filter.by"), [["", t("commitments.filter.by.anyone")], ["you", t("commitments.filter.by.you")], ...values((c) => c.by).map((p) => [p, p])]),
      pick("show", t("commitments.filter.show"), [["", t("commitments.show.open")], ["done", t("commitments.show.done")], ["all", t("commitments.show.all")]]));
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
      box.replaceChildren(h("p", { class: "muted", role: "status" }, t("commitments.count", { n: shown.length,
        capped: found.commitments.length === 1000 ? t("commitments.count.capped") : "", zone: found.time_zone })),
        shown.length === 0 ? empty(t("commitments.none")) :
        h("table", { class: "commitments" },
          h("thead", {}, h("tr", {}, h("th", {}, t("commitments.column.due")), h("th", {}, t("commitments.column.promise")), h("th", {}, t("commitments.column.by")),
            h("th", { class: "optional" }, t("commitments.column.project")), h("th", { class: "optional" }, t("commitments.column.written")),
            h("th", {}, h("span", { class: "visually-hidden" }, t("commitments.column.action"))))),
          h("tbody", {}, shown.map((c) => h("tr", { class: c.overdue ? "overdue" : undefined },
            h("td", {}, dueDate(c)),
            h("td", {}, h("a", { href: `/memories/${encodeURIComponent(c.memory_id)}` }, c.sentence),
              c.people.length ? h("div", { class: "terms" }, t("commitments.with", { people: c.people.join(", ") })) : null),
            h("td", {}, c.by || t("promise.you")),
            h("td", { class: "optional" }, c.project || "—"),
            h("td", { class: "optional muted" }, day(c.written_at)),
            h("td", {}, c.done ? h("span", { class: "muted" }, t("commitments.done_on", { day: day(c.done_at) }))
              : action(t("commitments.done"), async () => {
                await post(`/api/commitments/${encodeURIComponent(c.id)}/done`);
                c.done = true;
                c.done_at = new Date().toISOString();
                c.overdue = false;
                return t("commitments.marked_done", { promise: short(c.sentence, 60) });
              }, draw)))))));
    };
    form.addEventListener("change", draw);
    draw();
  },

  async ask(main, _, query) {
    main.append(h("h1", {}, t("ask.title")),
      h("p", { class: "muted" }, t("ask.intro")));
    const form = h("form", { class: "search", role: "search" },
      h("label", {}, `${t("ask.question")} `, h("input", { name: "question", type: "search", value: query.get("q") || "", required: true, size: 60 })),
      h("button", { class: "primary" }, t("ask.ask")));
    const answer = h("div", { "aria-live": "polite" });
    main.append(form, answer);
    const draw = async (question) => {
      answer.replaceChildren(h("p", { class: "muted" }, t("ask.looking")));
      try {
        const a = await post("/api/ask", { question });
        const cite = (c) => h("li", {}, h("a", { href: `/memories/${encodeURIComponent(c.memory_id)}` }, c.sentence || c.memory_id),
          h("span", { class: "muted" }, ` — ${c.day}, ${c.kind}, ${c.source}${c.people.length ? `, ${c.people.join(", ")}` : ""}`));
        // `replaceChildren` takes nodes only: the parts, flattened, without the absent ones.
        answer.replaceChildren(...[
          a.mode === "model" ? h("p", { class: "content card" }, a.answer) : null,
          a.citations.length === 0 ? empty(t("ask.none")) : null,
          a.mode === "model" ? [h("h2", {}, t("ask.cited")), h("ul", {}, a.citations.map(cite))]
            : a.groups.map((g) => [h("h2", {}, g.entity || t("ask.other")), h("ul", {}, g.citations.map(cite))]),
          a.dropped_citations.length ? h("p", { class: "error" }, t("ask.dropped", { ids: a.dropped_citations.join(", ") })) : null,
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
      h("label", {}, `${t("briefing.day")} `, h("input", { name: "date", type: "date", value: b.date })),
      h("button", {}, t("briefing.show")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      history.pushState({}, "", `/briefing?date=${encodeURIComponent(new FormData(form).get("date"))}`);
      window.dispatchEvent(new PopStateEvent("popstate"));
    });
    const link = (id, text) => h("a", { href: `/memories/${encodeURIComponent(id)}` }, text);
    const list = (title, items, none, item) => [h("h2", {}, title), items.length === 0 ? empty(none) : h("ul", {}, items.map((x) => h("li", {}, item(x))))];
    main.append(h("h1", {}, t("briefing.title", { date: b.date })), h("p", { class: "muted" }, t("briefing.zone", { zone: b.time_zone })), form,
      ...list(t("briefing.events"), b.events, t("briefing.events.none"), (e) => [`${e.local_time} `, link(e.memory_id, e.title),
        e.location ? ` — ${e.location}` : "", e.attendees.length ? h("span", { class: "muted" }, ` (${e.attendees.join(", ")})`) : "",
        " ", h("a", { href: `/meeting-prep?event=${encodeURIComponent(e.memory_id)}` }, t("briefing.events.prepare"))]),
      ...list(t("briefing.due"), b.due, t("briefing.due.none"), (c) => [`${c.overdue ? t("promise.overdue", { due: c.due }) : c.due} `, link(c.memory_id, c.sentence)]),
      ...list(t("briefing.owed"), b.owed_to_me, t("briefing.owed.none"), (c) => [`${c.due} ${c.by}: `, link(c.memory_id, c.sentence)]),
      ...list(t("briefing.decisions"), b.decisions, t("briefing.decisions.none"), (d) => [`${d.at.slice(0, 10)} `, link(d.memory_id, d.sentence)]),
      ...list(t("briefing.people"), b.people, t("briefing.people.none"), (p) => [p.name, p.last_discussed
        ? tParts("briefing.people.last", { memory: link(p.last_discussed.memory_id, p.last_discussed.line), day: p.last_discussed.day }) : ""]),
      ...list(t("briefing.fading"), b.fading, t("briefing.fading.none"), (m) => link(m.memory_id, m.line)));
  },

  async "meeting-prep"(main, _, query) {
    let event = query.get("event");
    if (!event) {
      // The next event of the coming month, if any: no event is a state, not an error.
      const coming = await get(`/api/timeline?range=${encodeURIComponent("next 30 days")}&kind=event&limit=50`);
      const next = coming.days.flatMap((d) => d.memories).find((m) => new Date(m.at) >= new Date());
      if (!next) {
        main.append(h("h1", {}, t("meeting_prep.title")), empty(t("meeting_prep.none")));
        return;
      }
      event = next.memory_id;
    }
    const prep = await get(`/api/meeting-prep?event=${encodeURIComponent(event)}`);
    const link = (id, text) => h("a", { href: `/memories/${encodeURIComponent(id)}` }, text);
    const e = prep.event;
    main.append(h("h1", {}, t("meeting_prep.title.event", { title: e.title })),
      h("p", { class: "muted" }, [when(e.start), e.location].filter(Boolean).join(" — ")));
    for (const a of prep.attendees) {
      main.append(h("h2", {}, a.name),
        a.last_discussed.length === 0 ? empty(t("meeting_prep.nothing_before")) :
          h("ul", {}, a.last_discussed.map((m) => h("li", {}, `${m.day} `, link(m.memory_id, m.line)))));
      if (a.commitments.length) {
        main.append(h("ul", { class: "commitments" }, a.commitments.map((c) => h("li", {}, ...tParts("meeting_prep.open", { promise: link(c.memory_id, c.sentence) })))));
      }
    }
    main.append(h("h2", {}, t("meeting_prep.decisions")), prep.decisions.length === 0 ? empty(t("meeting_prep.decisions.none")) :
      h("ul", {}, prep.decisions.map((d) => h("li", {}, `${d.at.slice(0, 10)} `, link(d.memory_id, d.sentence)))));
    main.append(h("h2", {}, t("meeting_prep.earlier")), prep.previous.length === 0 ? empty(t("meeting_prep.earlier.none")) :
      h("ul", {}, prep.previous.map((m) => h("li", {}, link(m.memory_id, m.day)))));
  },

  async conflicts(main) {
    main.append(h("h1", {}, t("conflicts.title")),
      h("p", { class: "muted" }, t("conflicts.intro")));
    const box = h("div");
    main.append(h("div", { class: "actions" }, action(t("conflicts.detect"), () => post("/api/conflicts/detect", {}), () => draw())), box);
    const draw = async () => {
      const list = await get("/api/conflicts");
      const resolve = (c, body) => post(`/api/conflicts/${encodeURIComponent(c.id)}/resolve`, body);
      box.replaceChildren(list.conflicts.length === 0 ? empty(t("conflicts.none")) : h("div", {}, list.conflicts.map((c) =>
        h("div", { class: "card" },
          h("p", { class: "muted" }, t("conflicts.found", { kind: c.kind, when: when(c.found_at) })),
          h("div", { class: "pair" },
            h("div", {}, h("h2", {}, t("conflicts.older")), h("p", { class: "content" }, h("a", { href: `/memories/${encodeURIComponent(c.older)}` }, c.older_content))),
            h("div", {}, h("h2", {}, t("conflicts.newer")), h("p", { class: "content" }, h("a", { href: `/memories/${encodeURIComponent(c.newer)}` }, c.newer_content)))),
          h("div", { class: "actions" },
            action(t("conflicts.keep_newer"), () => resolve(c, { resolution: "supersede", retire: c.older }), draw, "primary"),
            action(t("conflicts.keep_older"), () => resolve(c, { resolution: "supersede", retire: c.newer }), draw),
            action(t("conflicts.keep_both"), () => resolve(c, { resolution: "keep_both" }), draw),
            action(t("conflicts.not_a_conflict"), () => resolve(c, { resolution: "not_a_conflict" }), draw))))));
    };
    await draw();
  },

  async people(main, _, query) {
    main.append(h("h1", {}, t("people.title")),
      h("p", { class: "muted" }, t("people.intro")));
    const form = h("form", { class: "search", role: "search" },
      h("input", { name: "name", type: "search", placeholder: t("people.name.placeholder"), value: query.get("name") || "", "aria-label": t("people.name") }),
      h("button", { class: "primary" }, t("people.find")));
    const list = h("div");
    main.append(form, list);
    const draw = async () => {
      const name = new FormData(form).get("name");
      const people = await get(`/api/people?limit=200${name ? `&name=${encodeURIComponent(name)}` : ""}`);
      list.replaceChildren(people.people.length === 0 ? empty(t("people.none")) :
        h("table", { class: "people" }, h("tr", {}, h("th", {}, t("people.column.person")), h("th", {}, t("people.column.memories")), h("th", {}, t("people.column.last")),
          h("th", { class: "optional" }, t("people.column.channels")), h("th", { class: "optional" }, t("people.column.organizations"))),
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
        h("div", { class: "card" }, h("div", { class: "count" }, e.memories), h("div", { class: "muted" }, t("entity.memories"))),
        h("div", { class: "card" }, h("div", { class: "count" }, lastSeen(e.last_seen)),
          h("div", { class: "muted" }, e.last_seen && new Date(e.last_seen) > new Date() ? t("entity.coming_up") : t("entity.last_seen"))),
        h("div", { class: "card" }, h("div", {}, e.channels.join(", ") || "—"), h("div", { class: "muted" }, t("entity.channels")))),
      // `append` prints a null as "null": only what there is.
      ...(e.emails.length || e.handles.length ? [h("p", {}, [...e.emails, ...e.handles].join(" · "))] : []));
    if (about.memberships.length) {
      main.append(h("h2", {}, e.kind === "organization" ? t("entity.people") : t("entity.organizations")),
        h("ul", { class: "grants" }, about.memberships.map((m) => h("li", {}, entityLink(m), h("span", { class: "muted" }, t("entity.membership", { n: m.memories }))))));
    }
    if (about.related.length) {
      main.append(h("h2", {}, t("entity.related")),
        h("ul", { class: "grants" }, about.related.slice(0, 20).map((r) => h("li", {}, entityLink(r.entity), h("span", { class: "muted" }, t("entity.related.shared", { kind: r.entity.kind, n: r.shared }))))));
    }
    if (about.open_commitments.length) {
      // Promises made in memories this entity appears in — by whoever made them: the
      // "by" column says whose each is (theirs, yours, or someone else's).
      main.append(h("h2", {}, t("entity.promises")),
        h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, t("entity.promises.column.due")), h("th", {}, t("entity.promises.column.promise")),
          h("th", {}, t("entity.promises.column.by")))),
          h("tbody", {}, about.open_commitments.map((c) => h("tr", { class: c.overdue ? "overdue" : undefined },
            h("td", {}, dueDate(c)),
            h("td", {}, h("a", { href: `/memories/${encodeURIComponent(c.memory_id)}` }, c.sentence)),
            h("td", {}, c.by || t("promise.you")))))));
    }
    main.append(h("h2", {}, t("entity.memories.title")), about.memories.length === 0 ? empty(t("entity.memories.none")) :
      h("table", {}, about.memories.map((m) => h("tr", {},
        h("td", { class: "muted" }, when(m.at)),
        h("td", {}, h("a", { href: `/memories/${encodeURIComponent(m.memory_id)}` }, m.preview)),
        h("td", { class: "optional terms" }, `${m.roles.join(", ")} · ${m.kind} · ${m.source}`)))));
  },

  // Who used the memory: the MCP sessions connected now (kept current by the live feed),
  // each surface and client with what it wrote, recalled and changed, what each stored
  // and recalled per day, and what was asked and done with the answers — from the event
  // log (ids, kinds and counts; query text only when the operator turned it on).
  async agents(main, _, query) {
    const days = query.get("days") || "30";
    const surfaces = { mcp: t("agents.surface.mcp"), http: t("agents.surface.http"), cli: t("agents.surface.cli"),
      dashboard: t("agents.surface.dashboard"), sync: t("agents.surface.sync") };
    main.append(h("h1", {}, t("agents.title")),
      h("p", { class: "muted" }, t("agents.intro")));

    const present = h("div", { class: "presence" });
    main.append(h("h2", {}, t("agents.presence.title")), present);
    const drawPresence = async () => {
      const found = await get("/api/presence");
      present.replaceChildren(h("p", { class: "muted", role: "status" }, t("agents.presence.count", { n: found.connected })),
        found.sessions.length === 0 ? empty(t("agents.presence.none")) :
          h("table", { class: "presence" },
            h("thead", {}, h("tr", {}, h("th", {}, t("agents.presence.column.client")), h("th", {}, t("agents.presence.column.state")),
              h("th", {}, t("agents.presence.column.project")), h("th", { class: "optional" }, t("agents.presence.column.started")),
              h("th", {}, t("agents.presence.column.last")), h("th", { class: "optional" }, t("agents.presence.column.calls")))),
            h("tbody", {}, found.sessions.map((s) => h("tr", { class: s.connected ? "connected" : "ended" },
              h("td", {}, h("strong", {}, s.client || t("agents.presence.unnamed")),
                h("div", { class: "terms" }, t("agents.presence.transport", { transport: s.transport }), s.token ? ` · ${s.token}` : "")),
              h("td", {}, s.connected ? h("span", { class: "good" }, t("agents.presence.connected"))
                : h("span", { class: "muted" }, t("agents.presence.ended", { when: when(s.ended_at) }))),
              h("td", {}, s.project || "—"),
              h("td", { class: "optional muted" }, when(s.started_at)),
              h("td", {}, when(s.last_seen_at)),
              h("td", { class: "optional" }, s.calls))))));
    };
    await drawPresence();

    const form = h("form", { class: "filters", "aria-label": t("agents.period") },
      h("label", {}, `${t("agents.period")} `, h("select", { name: "days" }, [["1", t("agents.period.day")], ["7", t("agents.period.week")],
        ["30", t("agents.period.month")], ["90", t("agents.period.quarter")], ["366", t("agents.period.year")]]
        .map(([value, text]) => h("option", { value, selected: value === days || undefined }, text)))));
    const box = h("div");
    const usageBox = h("div");
    const recallBox = h("div");
    main.append(h("h2", {}, t("agents.activity.title")), form, box,
      h("h2", {}, t("agents.usage.title")), usageBox,
      h("h2", {}, t("agents.recalls.title")), recallBox);
    const draw = async () => {
      const chosen = new FormData(form).get("days");
      history.replaceState({}, "", `/agents?days=${chosen}`);
      const since = new Date(Date.now() - Number(chosen) * 86400000).toISOString();
      const [found, usage, recalls] = await Promise.all([get(`/api/agents?days=${chosen}`),
        get(`/api/reports/usage?since=${encodeURIComponent(since)}`),
        get(`/api/reports/recalls?since=${encodeURIComponent(since)}&limit=50`)]);
      box.replaceChildren(...[
        found.cut_short ? h("p", { class: "warning" }, t("agents.cut_short")) : null,
        found.agents.length === 0 ? empty(t("agents.none")) :
          h("table", { class: "agents" },
            h("thead", {}, h("tr", {}, h("th", {}, t("agents.column.who")), h("th", {}, t("agents.column.wrote")), h("th", {}, t("agents.column.recalled")),
              h("th", { class: "optional" }, t("agents.column.changed")), h("th", { class: "optional" }, t("agents.column.first")), h("th", {}, t("agents.column.last")))),
            h("tbody", {}, found.agents.map((a) => h("tr", {},
              h("td", {}, h("strong", {}, a.client || surfaces[a.surface] || a.surface),
                h("div", { class: "terms" }, t("agents.through", { surface: surfaces[a.surface] || a.surface }))),
              h("td", {}, a.wrote), h("td", {}, a.recalled),
              h("td", { class: "optional", title: Object.entries(a.kinds).map(([k, n]) => `${k} ${n}`).join(", ") }, a.changed),
              h("td", { class: "optional muted" }, when(a.first_at)), h("td", {}, day(a.last_at), h("div", { class: "terms" }, new Date(a.last_at).toLocaleTimeString()))))))].filter(Boolean));

      const number = (n) => n.toLocaleString();
      const total = usage.totals;
      usageBox.replaceChildren(...[
        usage.cut_short ? h("p", { class: "warning" }, t("agents.cut_short")) : null,
        usage.days.length === 0 ? empty(t("agents.usage.none")) :
          h("table", { class: "usage" },
            h("thead", {}, h("tr", {}, h("th", {}, t("agents.usage.column.day")), h("th", {}, t("agents.column.who")),
              h("th", {}, t("agents.usage.column.stored")), h("th", { class: "optional" }, t("agents.usage.column.stored_bytes")),
              h("th", {}, t("agents.usage.column.recalls")), h("th", {}, t("agents.usage.column.tokens")),
              h("th", { class: "optional" }, t("agents.usage.column.returned_bytes")))),
            h("tbody", {}, usage.days.map((d) => h("tr", {},
              h("td", {}, new Date(`${d.day}T00:00:00Z`).toLocaleDateString(undefined, { timeZone: "UTC" })),
              h("td", {}, h("strong", {}, d.client || surfaces[d.surface] || d.surface),
                h("div", { class: "terms" }, t("agents.through", { surface: surfaces[d.surface] || d.surface }), d.token ? ` · ${d.token}` : "")),
              h("td", {}, number(d.stored)), h("td", { class: "optional" }, number(d.stored_bytes)),
              h("td", {}, number(d.recalls)), h("td", {}, number(d.returned_tokens)),
              h("td", { class: "optional" }, number(d.returned_bytes))))),
            h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, t("agents.usage.total")), h("td", {}),
              h("td", {}, number(total.stored)), h("td", { class: "optional" }, number(total.stored_bytes)),
              h("td", {}, number(total.recalls)), h("td", {}, number(total.returned_tokens)),
              h("td", { class: "optional" }, number(total.returned_bytes)))))].filter(Boolean));

      const sum = recalls.totals;
      // When and how in the who cell: six columns do not fit a phone.
      const recallRow = (r) => h("tr", {},
        h("td", {}, h("strong", {}, r.client || surfaces[r.surface] || r.surface), h("div", { class: "terms" }, `${r.operation} · ${when(r.at)}`)),
        h("td", {}, r.query !== undefined ? r.query : h("span", { class: "muted" }, t("agents.recalls.words", { n: r.words }))),
        h("td", { class: "optional" }, r.project || "—"),
        h("td", {}, r.returned.length), h("td", {}, r.used.length), h("td", {}, r.unhelpful.length));
      const recallTable = (rows) => h("table", { class: "recalls" },
        h("thead", {}, h("tr", {}, h("th", {}, t("agents.column.who")),
          h("th", {}, t("agents.recalls.column.query")), h("th", { class: "optional" }, t("agents.recalls.column.project")),
          h("th", {}, t("agents.recalls.column.returned")), h("th", {}, t("agents.recalls.column.used")), h("th", {}, t("agents.recalls.column.unhelpful")))),
        h("tbody", {}, rows.map(recallRow)));
      recallBox.replaceChildren(...[
        h("p", { class: "muted", role: "status" }, t("agents.recalls.summary", { n: sum.recalls, nothing: sum.found_nothing,
          returned: sum.returned, used: sum.used, unhelpful: sum.unhelpful })),
        recalls.queries_logged ? null : h("p", { class: "muted" }, ...tParts("agents.recalls.private", { setting: h("code", {}, "LEVH_LOG_QUERIES=1") })),
        recalls.cut_short ? h("p", { class: "warning" }, t("agents.cut_short")) : null,
        recalls.recalls.length === 0 ? empty(t("agents.recalls.none")) : recallTable(recalls.recalls),
        recalls.found_nothing.length === 0 ? null : h("h3", {}, t("agents.recalls.nothing.title")),
        recalls.found_nothing.length === 0 ? null : recallTable(recalls.found_nothing)].filter(Boolean));
    };
    form.addEventListener("change", () => draw().catch((error) => box.replaceChildren(h("p", { class: "error" }, error.message))));
    await draw();

    // Presence follows the live feed: a session that starts or ends, or an MCP client
    // that acts, redraws the list (at most once a second). A process killed says nothing:
    // a redraw every 15 s shows it gone.
    let socket = null, closed = false, pending = null;
    const every = setInterval(() => { if (!closed) drawPresence().catch(() => {}); }, 15000);
    const redraw = () => {
      if (pending) return;
      pending = setTimeout(() => { pending = null; if (!closed) drawPresence().catch(() => {}); }, 1000);
    };
    const connect = () => {
      socket = new WebSocket(feedUrl());
      socket.onmessage = (message) => {
        const event = JSON.parse(message.data);
        if (event.kind === "session-start" || event.kind === "session-end" || event.surface === "mcp") redraw();
      };
      socket.onclose = () => { if (!closed) setTimeout(() => { if (!closed) connect(); }, 2000); };
    };
    connect();
    return () => { closed = true; clearTimeout(pending); clearInterval(every); if (socket) socket.close(); };
  },

  // What agents work towards and learn from: goals with their milestones and progress
  // notes, each task's latest checkpoint (and what `continue` would hand the next
  // session), and the ledger of mistakes an agent checks before it acts.
  async work(main, _, query) {
    main.append(h("h1", {}, t("work.title")), h("p", { class: "muted" }, t("work.intro")));
    const project = query.get("project") || "";
    const scoped = (path, sep = "?") => (project ? `${path}${sep}project=${encodeURIComponent(project)}` : path);

    // Goals.
    const goalsBox = h("div");
    main.append(h("h2", { id: "goals" }, t("work.goals.title")), goalsBox);
    const drawGoals = async () => {
      const found = await get(scoped("/api/goals"));
      const statusWords = { active: t("work.goals.status.active"), blocked: t("work.goals.status.blocked"),
        done: t("work.goals.status.done"), dropped: t("work.goals.status.dropped") };
      const statuses = Object.keys(statusWords);
      goalsBox.replaceChildren(found.goals.length === 0 ? empty(t("work.goals.none")) :
        h("ul", { class: "goals" }, found.goals.map((g) => {
          const reached = g.milestones.filter((m) => m.reached).length;
          const change = (body, said) => async () => {
            await post("/api/goals:update", { goal: g.title, project: g.project, ...body });
            return said;
          };
          const note = h("input", { name: "note", "aria-label": t("work.goals.note.label", { goal: g.title }), placeholder: t("work.goals.note.placeholder") });
          const notes = g.log.slice(-5).map((id) => {
            const link = h("a", { href: `/memories/${encodeURIComponent(id)}` }, id);
            get(`/api/memories/${encodeURIComponent(id)}`).then((m) => { link.textContent = short(m.content, 120); }, () => {});
            return h("li", {}, link);
          });
          return h("li", { class: "goal" },
            h("h3", {}, g.title),
            h("p", { class: "terms" }, t("work.goals.meta", { status: statusWords[g.status] || g.status, project: g.project || "—", when: when(g.updated_at) })),
            g.milestones.length === 0 ? null : h("p", {}, h("progress", { max: g.milestones.length, value: reached,
              "aria-label": t("work.goals.progress", { reached, n: g.milestones.length }) }), " ", t("work.goals.progress", { reached, n: g.milestones.length })),
            g.milestones.length === 0 ? null : h("ul", { class: "milestones" }, g.milestones.map((m) => h("li", { class: m.reached ? "reached" : undefined },
              m.reached ? `✓ ${m.name}` : m.name, " ",
              m.reached ? null : action(t("work.goals.reach"), change({ reached: [m.name] }, t("work.goals.reached", { milestone: m.name })), drawGoals)))),
            notes.length === 0 ? null : h("div", {}, h("h4", {}, t("work.goals.log")), h("ul", {}, notes)),
            canWrite ? h("div", { class: "actions" },
              h("label", {}, `${t("work.goals.status")} `, h("select", {
                name: "status",
                async onchange(event) {
                  try {
                    await post("/api/goals:update", { goal: g.title, project: g.project, status: event.target.value });
                    notify(t("work.goals.status.changed", { goal: g.title, status: statusWords[event.target.value] }), "good");
                    await drawGoals();
                  } catch (error) { notify(error.message, "error"); }
                },
              }, statuses.map((v) => h("option", { value: v, selected: v === g.status || undefined }, statusWords[v])))),
              note,
              action(t("work.goals.note.add"), async () => {
                if (!note.value.trim()) throw new Error(t("work.goals.note.empty"));
                await post("/api/goals:update", { goal: g.title, project: g.project, note: note.value });
                return t("work.goals.note.added", { goal: g.title });
              }, drawGoals)) : null);
        })));
    };
    await drawGoals();

    // Checkpoints: the current one of each task.
    const checkpointsBox = h("div");
    main.append(h("h2", { id: "checkpoints" }, t("work.checkpoints.title")), checkpointsBox);
    const checkpoints = await get(scoped("/api/memories?kind=checkpoint&limit=50", "&"));
    const list = (title, items) => (items && items.length ? h("div", {}, h("h4", {}, title), h("ul", {}, items.map((i) => h("li", {}, i)))) : null);
    checkpointsBox.replaceChildren(checkpoints.memories.length === 0 ? empty(t("work.checkpoints.none")) :
      h("ul", { class: "checkpoints" }, checkpoints.memories.map((m) => {
        const v = (m.metadata && m.metadata.value) || {};
        const resumed = h("div");
        const params = new URLSearchParams({ task: v.task || "", max_tokens: "2000" });
        if (m.project) params.set("project", m.project);
        return h("li", { class: "checkpoint" },
          h("h3", {}, v.task || t("work.checkpoints.untitled")),
          h("p", { class: "terms" }, t("work.checkpoints.meta", { project: m.project || "—", when: when(m.created_at), source: m.source })),
          v.goal ? h("p", {}, h("strong", {}, t("work.checkpoints.goal")), " ", v.goal) : null,
          list(t("work.checkpoints.done"), v.done), list(t("work.checkpoints.next"), v.next), list(t("work.checkpoints.questions"), v.questions),
          h("p", {}, h("a", { href: `/memories/${encodeURIComponent(m.id)}` }, t("work.checkpoints.open")), " ",
            h("button", {
              type: "button",
              async onclick(event) {
                event.target.disabled = true;
                try {
                  const found = await get(`/api/continue?${params}`);
                  resumed.replaceChildren(h("p", { class: "muted" }, t("work.checkpoints.resume.tokens", { n: found.tokens })), h("pre", { class: "resume" }, found.text));
                } catch (error) { resumed.replaceChildren(h("p", { class: "error" }, error.message)); }
                event.target.disabled = false;
              },
            }, t("work.checkpoints.resume"))),
          resumed);
      })));

    // Mistakes, and checking an action against them.
    const mistakesBox = h("div");
    main.append(h("h2", { id: "mistakes" }, t("work.mistakes.title")));
    if (canWrite) {
      const answer = h("div", { role: "status" });
      const check = h("form", { class: "search", "aria-label": t("work.mistakes.check") },
        h("label", {}, `${t("work.mistakes.check")} `, h("input", { name: "action", required: true, placeholder: t("work.mistakes.check.placeholder") })),
        h("button", { type: "submit" }, t("work.mistakes.check.button")));
      check.addEventListener("submit", async (event) => {
        event.preventDefault();
        try {
          const found = await post("/api/check-action", { action: new FormData(check).get("action"), project: project || undefined });
          const applies = (a) => h("li", {}, h("a", { href: `/memories/${encodeURIComponent(a.id)}` }, short(a.content, 140)),
            a.avoid ? h("div", { class: "terms" }, t("work.mistakes.avoid", { avoid: a.avoid })) : null);
          answer.replaceChildren(...[h("p", { class: found.known_issues ? "warning" : "good" }, found.summary),
            found.mistakes.length ? h("ul", {}, found.mistakes.map(applies)) : null,
            found.rules.length ? h("div", {}, h("h3", {}, t("work.mistakes.rules")), h("ul", {}, found.rules.map(applies))) : null].filter(Boolean));
          await drawMistakes();
        } catch (error) { answer.replaceChildren(h("p", { class: "error" }, error.message)); }
      });
      const record = h("form", { class: "record-mistake", "aria-label": t("work.mistakes.record") },
        h("label", {}, `${t("work.mistakes.what")} `, h("input", { name: "what", required: true })),
        h("label", {}, `${t("work.mistakes.why")} `, h("input", { name: "why" })),
        h("label", {}, `${t("work.mistakes.how")} `, h("input", { name: "avoid" })),
        h("button", { type: "submit" }, t("work.mistakes.record")));
      record.addEventListener("submit", async (event) => {
        event.preventDefault();
        const data = new FormData(record);
        try {
          const said = await post("/api/mistakes", { what: data.get("what"), why: data.get("why") || undefined,
            avoid: data.get("avoid") || undefined, project: project || undefined });
          notify(said.verdict === "admit" || said.verdict === "redact" ? t("work.mistakes.recorded") : t("work.mistakes.verdict", { verdict: said.verdict, reason: said.reason || "" }),
            said.verdict === "admit" || said.verdict === "redact" ? "good" : "error");
          record.reset();
          await drawMistakes();
        } catch (error) { notify(error.message, "error"); }
      });
      main.append(check, answer, h("details", {}, h("summary", {}, t("work.mistakes.record")), record));
    }
    main.append(mistakesBox);
    const drawMistakes = async () => {
      const found = await get(scoped("/api/mistakes?limit=100", "&"));
      mistakesBox.replaceChildren(found.memories.length === 0 ? empty(t("work.mistakes.none")) :
        h("table", { class: "mistakes" },
          h("thead", {}, h("tr", {}, h("th", {}, t("work.mistakes.column.what")), h("th", {}, t("work.mistakes.column.avoid")),
            h("th", { class: "optional" }, t("work.mistakes.column.project")), h("th", { class: "optional" }, t("work.mistakes.column.matched")),
            h("th", { class: "optional" }, t("work.mistakes.column.recorded")))),
          h("tbody", {}, found.memories.map((m) => {
            const meta = m.metadata || {};
            return h("tr", {},
              h("td", {}, h("a", { href: `/memories/${encodeURIComponent(m.id)}` }, short(meta.what || m.content, 140)),
                meta.why ? h("div", { class: "terms" }, t("work.mistakes.because", { why: meta.why })) : null),
              h("td", {}, meta.avoid || "—"),
              h("td", { class: "optional" }, m.project || "—"),
              h("td", { class: "optional" }, m.recall_count),
              h("td", { class: "optional muted" }, day(m.created_at)));
          }))));
    };
    await drawMistakes();
  },

  // Agents' working sessions, newest first: when, which project and client, how many
  // memories each stored; an open one can be ended or summarised from here.
  async sessions(main) {
    main.append(h("h1", {}, t("sessions.title")),
      h("p", { class: "muted" }, ...tParts("sessions.intro", { tool: h("code", {}, "create_session"), command: h("code", {}, "levh session start") })));
    const list = h("tbody");
    const status = h("p", { class: "muted", role: "status" });
    const more = h("button", {}, t("sessions.more"));
    main.append(h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, t("sessions.column.started")), h("th", {}, t("sessions.column.project")),
      h("th", { class: "optional" }, t("sessions.column.client")), h("th", {}, t("sessions.column.memories")), h("th", {}, t("sessions.column.state")))), list), status, more);
    let before = null;
    const row = (s) => {
      const state = h("td", {});
      const path = `/api/sessions/${encodeURIComponent(s.session_id)}`;
      const drawState = (session) => {
        state.replaceChildren(session.ended_at ? t("sessions.ended", { when: when(session.ended_at) }) : t("sessions.open"));
        let ended = null;
        let summary = null;
        // A viewer gets no buttons (action() gives null for them).
        const end = session.ended_at ? null : action(t("sessions.end"), async () => { ended = await post(`${path}/end`); },
          () => drawState({ ...session, ...ended }));
        const summarize = action(t("sessions.summarize"), async () => { summary = await post(`${path}/summarize`); },
          () => said.replaceChildren(summary.text ? t("sessions.summarized") : t("sessions.summarized.nothing")));
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
      status.textContent = list.children.length === 0 ? t("sessions.none") : t("sessions.shown", { n: list.children.length });
    };
    more.addEventListener("click", () => load().catch((error) => { status.className = "error"; status.textContent = error.message; }));
    await load();
  },

  // Every project with its memory count, and where to look next: its memories, what
  // happened in it lately, its open promises.
  async projects(main) {
    const [list, promised] = await Promise.all([get("/api/projects"), get("/api/commitments?limit=200")]);
    main.append(h("h1", {}, t("projects.title")));
    const open = new Map();
    for (const c of promised.commitments) if (c.project) open.set(c.project, (open.get(c.project) || 0) + 1);
    const named = list.projects.filter((p) => p.name);
    main.append(named.length === 0 ? empty(t("projects.none")) :
      h("table", {}, h("tr", {}, h("th", {}, t("projects.column.project")), h("th", {}, t("projects.column.memories")), h("th", {}, t("projects.column.promises")),
        h("th", { class: "optional" }, t("projects.column.look"))),
        named.map((p) => h("tr", {},
          h("td", {}, h("a", { href: `/memories?project=${encodeURIComponent(p.name)}` }, p.name)),
          h("td", {}, p.memories),
          h("td", {}, open.get(p.name) || 0),
          h("td", { class: "optional" },
            h("a", { href: `/timeline?range=${encodeURIComponent("last 30 days")}&project=${encodeURIComponent(p.name)}` }, t("projects.timeline")), " · ",
            h("a", { href: `/search?project=${encodeURIComponent(p.name)}` }, t("projects.search")))))));
  },

  async organizations(main) {
    const list = await get("/api/organizations?limit=200");
    main.append(h("h1", {}, t("organizations.title")),
      h("p", { class: "muted" }, t("organizations.intro")),
      list.organizations.length === 0 ? empty(t("organizations.none")) :
      h("table", {}, h("tr", {}, h("th", {}, t("organizations.column.organization")), h("th", {}, t("organizations.column.memories")),
        h("th", {}, t("organizations.column.last")), h("th", { class: "optional" }, t("organizations.column.people"))),
        list.organizations.map((o) => h("tr", {},
          h("td", {}, entityLink(o)),
          h("td", {}, o.memories),
          h("td", {}, day(o.last_seen)),
          // The most frequent few; the organization's page lists them all.
          h("td", { class: "optional" }, o.people.slice(0, 8).flatMap((p, i) => i === 0 ? [entityLink(p)] : [", ", entityLink(p)]),
            o.people.length > 8 ? [", ", h("a", { href: `/entities/${encodeURIComponent(o.id)}` }, t("organizations.more", { n: o.people.length - 8 }))] : null)))));
  },

  async timeline(main, _, query) {
    main.append(h("h1", {}, t("timeline.title")));
    // What is coming (a calendar's events, due dates) as well as what happened: each range
    // the API's words (the value) and the person's (the text).
    const ranges = [["today", t("timeline.range.today")], ["tomorrow", t("timeline.range.tomorrow")], ["this week", t("timeline.range.this_week")],
      ["next week", t("timeline.range.next_week")], ["next 30 days", t("timeline.range.next_30_days")], ["last week", t("timeline.range.last_week")],
      ["this month", t("timeline.range.this_month")], ["next month", t("timeline.range.next_month")], ["last month", t("timeline.range.last_month")],
      ["last 30 days", t("timeline.range.last_30_days")]];
    const chosen = query.get("range") || (query.get("from") ? "" : "this week");
    const form = h("form", { class: "search" },
      h("label", { class: "muted" }, `${t("timeline.range")} `, h("select", { name: "range" },
        h("option", { value: "" }, t("timeline.range.dates")),
        ranges.map(([r, text]) => h("option", { value: r, selected: r === chosen }, text)))),
      h("label", { class: "muted" }, `${t("timeline.from")} `, h("input", { name: "from", type: "date", value: query.get("from") || "" })),
      h("label", { class: "muted" }, `${t("timeline.to")} `, h("input", { name: "to", type: "date", value: query.get("to") || "" })),
      h("input", { name: "person", placeholder: t("timeline.person.placeholder"), value: query.get("person") || "", "aria-label": t("timeline.person") }),
      h("input", { name: "project", placeholder: t("timeline.project.placeholder"), value: query.get("project") || "", "aria-label": t("timeline.project") }),
      h("input", { name: "kind", placeholder: t("timeline.kind.placeholder"), value: query.get("kind") || "", "aria-label": t("timeline.kind") }),
      h("button", { class: "primary" }, t("timeline.show")));
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
        days.replaceChildren(...[h("p", { class: "muted" }, t("timeline.days", { from: view.from, to: view.to, zone: view.time_zone })),
          view.days.length === 0 ? empty(t("timeline.none")) : null,
          view.days.map((d) => h("section", { class: "day" },
            h("h2", {}, `${d.weekday} ${d.day}`),
            h("table", {}, d.memories.map((m) => h("tr", {},
              h("td", { class: "muted" }, m.time),
              h("td", {}, h("a", { href: `/memories/${encodeURIComponent(m.memory_id)}` }, m.preview)),
              h("td", { class: "optional terms" }, [m.kind, m.people.join(", ")].filter(Boolean).join(" · "))))))),
          view.truncated ? h("p", { class: "warning" }, t("timeline.truncated")) : null].flat().filter(Boolean));
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
    // The kinds are the entities' own words; "" is every kind.
    const every = t("graph.kind.all");
    main.append(h("h1", {}, t("graph.title")),
      h("p", { class: "muted" }, t("graph.intro")),
      h("p", {}, ["", "person", "organization", "project", "event", "document", "task"].flatMap((k, i) => [
        i ? " · " : "", k === kind ? h("strong", {}, k || every) : h("a", { href: k ? `/graph?kind=${k}` : "/graph" }, k || every)])));
    if (graph.nodes.length === 0) return main.append(empty(t("graph.none")));
    // Which colour is which kind: each kind its own, said in words beside a swatch.
    const kinds = [...new Set(graph.nodes.map((n) => n.kind))].sort();
    main.append(h("ul", { class: "legend", "aria-label": t("graph.legend") }, kinds.map((k) =>
      h("li", {}, h("span", { class: `swatch ${k}`, "aria-hidden": "true" }), ` ${k}`))));
    main.append(graphDrawing(graph));
    const name = (id) => graph.nodes.find((n) => n.id === id);
    main.append(h("h2", {}, t("graph.shared")), graph.edges.length === 0 ? empty(t("graph.shared.none")) :
      h("table", {}, graph.edges.slice(0, 60).map((edge) => h("tr", {},
        h("td", {}, entityLink(name(edge.from))), h("td", {}, entityLink(name(edge.to))), h("td", {}, edge.weight)))));
  },

  async connectors(main) {
    // The first listing after a start loads (and on a new machine compiles) every
    // connector component: the page says so instead of staying blank.
    const loading = h("p", { class: "muted", role: "status" }, t("connectors.loading"));
    main.append(h("h1", {}, t("connectors.title")),
      h("p", { class: "muted" }, t("connectors.intro")), loading);
    const [list, runs] = await Promise.all([get("/api/connectors"), get("/api/connectors/sync-state?limit=20")]);
    loading.remove();
    for (const c of list.connectors) main.append(connectorCard(c));
    main.append(h("h2", {}, t("connectors.history")), runs.length === 0 ? empty(t("connectors.history.none")) :
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
    main.append(h("h1", {}, t("settings.title")),
      h("p", { class: "muted" }, t("settings.about", { version: settings.version, workspace: settings.workspace, role: settings.role })));
    main.append(h("h2", {}, t("settings.store")), h("table", {},
      row(t("settings.store.file"), store.path),
      row(t("settings.store.schema"), check(store.schema_version === store.latest_schema_version),
        t("settings.store.schema.version", { version: store.schema_version, latest: store.latest_schema_version })),
      row(t("settings.store.journal"), check(store.journal_mode.toLowerCase() === "wal"), store.journal_mode),
      row(t("settings.store.full_text"), check(store.full_text_in_step), store.full_text_in_step ? t("settings.store.full_text.in_step") : t("settings.store.full_text.out_of_step"))));
    main.append(h("h2", {}, t("settings.embedder")), h("table", {},
      row(t("settings.embedder.mode"), embedder.mode, embedder.automatic ? h("span", { class: "muted" }, t("settings.embedder.mode.default")) : ""),
      row(t("settings.embedder.model"), embedder.model),
      row(t("settings.embedder.vectors"), embedder.dimension ? t("settings.embedder.dimensions", { n: embedder.dimension }) : t("settings.embedder.dimensions.unknown"),
        embedder.semantic ? t("settings.embedder.semantic") : t("settings.embedder.lexical"))),
      ...warnings(embedder.warning));
    main.append(h("h2", {}, t("settings.ranking")), h("p", {}, scorer.active
      ? tParts("settings.ranking.component", { scorer: h("strong", {}, scorer.active) })
      : t("settings.ranking.builtin")),
      ...warnings(scorer.warning));

    const mcpUrl = h("code", {}, `${location.origin}${mcp.http_path}`);
    main.append(h("h2", {}, t("settings.agent")),
      h("p", {}, ...(sessionStorage.getItem("levh-token")
        ? tParts("settings.agent.http.token", { url: mcpUrl, profile: mcp.profile }) : tParts("settings.agent.http", { url: mcpUrl, profile: mcp.profile }))),
      copyable({ mcpServers: { levh: { type: "http", url: `${location.origin}${mcp.http_path}` } } }),
      h("p", {}, t("settings.agent.stdio")));
    for (const client of mcp.clients) {
      main.append(h("details", {}, h("summary", {}, h("strong", {}, client.client), h("span", { class: "muted" }, ` — ${client.file}`)),
        h("p", {}, t("settings.agent.stdio.binary")), copyable(client.config),
        h("p", {}, t("settings.agent.stdio.runner")), copyable(client.runner_config)));
    }

    main.append(h("h2", {}, t("settings.tokens")));
    if (!isAdmin) {
      main.append(h("p", { class: "muted" }, t("settings.tokens.admin_only")));
      return;
    }
    const list = h("div");
    const issued = h("div", { role: "status" });
    const drawTokens = async () => {
      const { tokens } = await get("/api/tokens");
      list.replaceChildren(tokens.length === 0 ? empty(t("settings.tokens.none")) :
        h("table", { class: "tokens" }, h("tr", {}, h("th", {}, t("settings.tokens.column.id")), h("th", {}, t("settings.tokens.column.role")),
          h("th", {}, t("settings.tokens.column.label")), h("th", { class: "optional" }, t("settings.tokens.column.issued")), h("th", {}, "")),
          tokens.map((token) => h("tr", { class: token.revoked_at ? "muted" : undefined },
            h("td", {}, h("code", {}, token.id)), h("td", {}, token.role), h("td", {}, token.label || ""),
            h("td", { class: "optional" }, when(token.created_at)),
            h("td", {}, token.revoked_at ? t("settings.tokens.revoked", { when: when(token.revoked_at) }) :
              action(t("settings.tokens.revoke"), async () => {
                if (confirm(token.label ? t("settings.tokens.confirm.revoke.label", { id: token.id, label: token.label }) : t("settings.tokens.confirm.revoke", { id: token.id })))
                  await call("DELETE", `/api/tokens/${encodeURIComponent(token.id)}`);
              }, drawTokens, "danger"))))));
    };
    const form = h("form", { class: "search" },
      h("select", { name: "role", "aria-label": t("settings.tokens.role") }, ["viewer", "editor", "admin"].map((r) => h("option", { value: r }, r))),
      h("input", { name: "label", placeholder: t("settings.tokens.label.placeholder"), "aria-label": t("settings.tokens.label"), maxlength: 200 }),
      h("button", { class: "primary" }, t("settings.tokens.create")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      try {
        const token = await post("/api/tokens", { role: data.get("role"), label: data.get("label") || null });
        // The one time the secret exists outside the client that will hold it.
        issued.replaceChildren(h("div", { class: "card" },
          h("p", {}, t("settings.tokens.issued", { id: token.id, role: token.role })),
          copyable(token.secret)));
        form.reset();
        await drawTokens();
      } catch (error) { issued.replaceChildren(h("p", { class: "error" }, error.message)); }
    });
    main.append(form, issued, list);
    await drawTokens();
  },

  missing(main, { path }) {
    main.append(h("h1", {}, t("missing.title")), h("p", {}, ...tParts("missing.text", { path, home: h("a", { href: "/" }, t("missing.home")) })));
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
    // datetime-local is the person's local time; the API wants an instant.
    for (const key of ["valid_from", "valid_to"]) if (data.get(key)) body[key] = new Date(data.get(key)).toISOString();
    try {
      const answer = await post("/api/memories", body);
      const link = (id, text) => h("a", { href: `/memories/${encodeURIComponent(id)}` }, text);
      const told = {
        admit: () => tParts("capture.stored", { link: link(answer.memory_id, t("capture.open")) }),
        redact: () => tParts("capture.redacted", { redactions: answer.redactions.join(", "), link: link(answer.memory_id, t("capture.open")) }),
        review: () => tParts("capture.held", { reason: answer.reason || t("capture.held.reason"), link: h("a", { href: "/held" }, t("capture.held.link")) }),
        reject: () => tParts("capture.rejected", { reason: answer.reason, link: answer.nearest ? link(answer.nearest.id, t("capture.rejected.duplicate")) : "" }),
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
  // `kind` is what the list says an item is, in words.
  const pagesOf = () => [...document.querySelectorAll("nav a")].map((a) => ({ label: t("palette.go", { page: a.textContent }), kind: t("palette.kind.page"), href: a.getAttribute("href") }));
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
  // Pages and commands are matched at each keystroke; the server is asked once typing
  // pauses (250 ms), not for every prefix of a word (each search is a recall in the log).
  let pause = null;
  const update = () => {
    const text = input.value.trim().toLowerCase();
    const fixed = [...pagesOf(), ...(canWrite ? [{ label: t("palette.capture"), kind: t("palette.kind.command"), run: () => document.getElementById("capture-open").click() }] : [])];
    items = fixed.filter((item) => !text || item.label.toLowerCase().includes(text));
    chosen = 0;
    render();
    clearTimeout(pause);
    const mine = ++asked;
    if (text.length < 2) return;
    pause = setTimeout(() => { lookup(mine, text).catch(() => {}); }, 250);
  };
  const lookup = async (mine, text) => {
    const [found, people, stats] = await Promise.all([
      post("/api/search", { query: input.value.trim(), limit: 5 }).catch(() => ({ results: [] })),
      get(`/api/people?limit=5&name=${encodeURIComponent(input.value.trim())}`).catch(() => ({ people: [] })),
      get("/api/stats").catch(() => ({ by_project: {} })),
    ]);
    if (mine !== asked) return; // a newer keystroke's answer will come
    // Projects by name: each opens its memories.
    const projects = Object.keys(stats.by_project).filter((p) => p.toLowerCase().includes(text)).slice(0, 5);
    items = [
      ...items,
      ...projects.map((p) => ({ label: p, kind: t("palette.kind.project"), href: `/memories?project=${encodeURIComponent(p)}` })),
      ...found.results.map((m) => ({ label: short(m.content, 90), kind: t("palette.kind.memory"), href: `/memories/${encodeURIComponent(m.id)}` })),
      ...people.people.map((p) => ({ label: p.name, kind: t("palette.kind.person"), href: `/people/${encodeURIComponent(p.id)}` })),
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

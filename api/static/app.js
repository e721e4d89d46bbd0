// citegraph explorer: a page over the public GraphQL API and the export endpoints.
// No build step, no runtime dependency besides the vendored Cytoscape.js (global `cytoscape`).

// ---------------------------------------------------------------------------------------------
// The API. Every GraphQL document the page sends is here, with the adapters that turn answers
// into the page's own shapes, so following a schema change means editing this block only.

const GRAPHQL_URL = "/graphql";
const EXPORT_URL = "/export";
const MAX_HOPS = 6; // the server's default cap (Settings.max_hops)

const NODE_FIELDS = "id label kind"; // GraphNode: `id` is the raw key edges refer to
const EDGE_FIELDS = "source target type weight terms reason"; // `reason`: the server's wording
// `Node` (search, node) is an interface keyed by a global id; the page works in raw keys.
const ANY_NODE = `__typename ... on Paper { key label } ... on Concept { key name } ... on Dataset { key name }
  ... on Work { key name }`;
// A prior or derivative work: a corpus paper, or an outside work with its reference key.
const LINK_NODE = `__typename ... on Paper { key label year } ... on Work { key name reference }`;

const Q = {
  search: `query Search($q: String!, $mode: SearchMode!, $kinds: [NodeKind!], $first: Int!) {
    search(query: $q, mode: $mode, kinds: $kinds, first: $first) { score node { ${ANY_NODE} } }
  }`,
  node: `query Node($id: ID!) { node(id: $id) { ${ANY_NODE} } }`,
  neighborhood: `query Neighborhood($id: ID!, $depth: Int!, $limit: Int!, $relTypes: [RelType!], $nodeKinds: [NodeKind!]) {
    neighborhood(id: $id, depth: $depth, limit: $limit, relTypes: $relTypes, nodeKinds: $nodeKinds) {
      truncated nodes { ${NODE_FIELDS} } edges { ${EDGE_FIELDS} }
    }
  }`,
  path: `query Path($from: ID!, $to: ID!, $maxHops: Int!) {
    shortestPath(from: $from, to: $to, maxHops: $maxHops) {
      nodes { ${NODE_FIELDS} } edges { ${EDGE_FIELDS} } hops { from to type weight reason }
    }
  }`,
  // The registry, the top-level topics (the topic map's legend) and the years papers have
  // (the year slider's ends): read once at start.
  registry: `query Registry {
    nodeKinds { kind name color shape }
    edgeTypes { type name color shown }
    topics(level: 1, first: 100) { edges { node { key label size } } }
    papersAggregate { countsBy(field: YEAR, first: 500) { year } }
  }`,
  // The side panel of a paper, with its prior and derivative works: one request.
  paper: `query Paper($id: ID!, $first: Int!, $works: Int!) {
    paper(id: $id) {
      key label title abstract venue year authors url topic { key label }
      concepts { weight concept { key name } }
      datasets { relation weight dataset { key name } }
      related(first: $first) { score paper { key label } reasons { kind text weight } }
    }
    priorWorks(ids: [$id], first: $works) { node { ${LINK_NODE} } }
    derivativeWorks(ids: [$id], first: $works) { node { ${LINK_NODE} } }
  }`,
  // An outside work's side panel: what it is and the corpus papers citing it.
  work: `query Work($id: ID!, $works: Int!) {
    node(id: $id) { ... on Work { key name reference } }
    derivativeWorks(ids: [$id], first: $works) { node { ${LINK_NODE} } }
  }`,
  // A topic's side panel: its label, size, papers per year, top papers, concepts, subtopics.
  topic: `query Topic($id: ID!) {
    topic(id: $id) {
      key label level size years { year count } parent { key label } subtopics { key label size }
      concepts(first: 10) { key name } topPapers(first: 8) { key label year }
    }
  }`,
  // What the drawing encodes for papers and outside works: year, top-level topic and
  // in-corpus citations. One request for every node a draw adds.
  citations: `query Citations($ids: [ID!]!) {
    nodes(ids: $ids) {
      ... on Paper { key year topic { key } citedBy { key } }
      ... on Work { key citedBy { key } }
    }
  }`,
};

/**
 * The node kinds and edge types, in legend order, with their colours and wording: the server's
 * registry (graph/schema.py), read once at start (`api.registry`). A new edge type gets its
 * colour, legend line and toggle from there, with no change here.
 */
const NODE_KINDS = [];
const EDGE_TYPES = [];
/** The top-level topics, largest first, each with its colour on the topic map. */
const TOPICS = [];

/** Normalise an enum value the API may spell "Paper" or "PAPER". */
const kindOf = (k) => String(k || "").toUpperCase();

/** An outside work's web page, from its reference key (`doi:…`, `arxiv:…`), or null. */
function workUrl(ref) {
  if (!ref) return null;
  if (ref.startsWith("doi:")) return `https://doi.org/${ref.slice(4)}`;
  if (ref.startsWith("arxiv:")) return `https://arxiv.org/abs/${ref.slice(6)}`;
  return null;
}
/** A CitationLink's node (Paper or Work) as {id, label, kind, year, url}. */
function toLink(n) {
  const work = n.__typename === "Work";
  return {
    id: n.key, label: n.label || n.name || n.key, kind: work ? "WORK" : "PAPER",
    year: work ? null : n.year, url: work ? workUrl(n.reference) : null,
  };
}

/** A GraphNode (graph payloads) or a Node interface value (search, node) as {id, label, kind}. */
function toNode(n) {
  if (n.__typename) return { id: n.key, label: n.label || n.name || n.key, kind: kindOf(n.__typename) };
  return { id: n.id, label: n.label || n.id, kind: kindOf(n.kind) };
}
function toEdge(e, reason = null) {
  return {
    source: e.source, target: e.target, type: kindOf(e.type),
    weight: typeof e.weight === "number" ? e.weight : 1, terms: e.terms || [], reason: reason || e.reason || null,
  };
}

class ApiError extends Error {
  constructor(message, codes = []) { super(message); this.codes = codes; }
}
class Unreachable extends ApiError {}

async function gql(query, variables) {
  let resp;
  try {
    resp = await fetch(GRAPHQL_URL, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query, variables }),
    });
  } catch (err) {
    throw new Unreachable("The citegraph server cannot be reached. Is `citegraph serve` running?");
  }
  let body = null;
  try { body = await resp.json(); } catch { /* not JSON: reported below */ }
  if (body && Array.isArray(body.errors) && body.errors.length) {
    throw new ApiError(body.errors.map((e) => e.message).join("; "),
      body.errors.map((e) => (e.extensions && e.extensions.code) || null));
  }
  if (!resp.ok || !body) {
    throw new ApiError(`The server answered HTTP ${resp.status}${resp.statusText ? " " + resp.statusText : ""}.`);
  }
  return body.data;
}

/** True when the API said "no such node" (an error, by the schema's design, not a null). */
const isNotFound = (err) => err instanceof ApiError && err.codes.includes("NOT_FOUND");

const api = {
  /** The registry: [{kind, name, color, shape}] and [{type, name, color, on}]. */
  async registry() {
    const d = await gql(Q.registry, {});
    return {
      nodeKinds: d.nodeKinds.map((k) => ({ kind: k.kind, name: k.name, color: k.color, shape: k.shape })),
      edgeTypes: d.edgeTypes.map((t) => ({ type: t.type, name: t.name, color: t.color, on: t.shown })),
      topics: d.topics.edges.map((e) => ({ id: e.node.key, label: e.node.label, size: e.node.size })),
      years: d.papersAggregate.countsBy.map((g) => g.year).filter((y) => typeof y === "number"),
    };
  },
  async search(q, mode, kinds, first = 15) {
    const d = await gql(Q.search, { q, mode, kinds, first });
    return d.search.map((h) => ({ score: h.score, ...toNode(h.node) }));
  },
  async node(id) {
    try {
      const d = await gql(Q.node, { id });
      return d.node ? toNode(d.node) : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  },
  /** Nodes within `depth` hops, walking only `relTypes` (null: every type), strongest first. */
  async neighborhood(id, depth, limit, relTypes = null, nodeKinds = null) {
    const d = await gql(Q.neighborhood, { id, depth, limit, relTypes, nodeKinds });
    const s = d.neighborhood;
    if (!s) return { nodes: [], edges: [], truncated: false };
    return { nodes: s.nodes.map(toNode), edges: s.edges.map((e) => toEdge(e)), truncated: !!s.truncated };
  },
  async path(from, to, maxHops = MAX_HOPS) {
    const d = await gql(Q.path, { from, to, maxHops });
    const p = d.shortestPath;
    if (!p) return null;
    // hops[i] joins nodes[i] and nodes[i+1] and says why; edges[i] is the same edge, stored way round.
    return { nodes: p.nodes.map(toNode), edges: p.edges.map((e, i) => toEdge(e, p.hops[i] ? p.hops[i].reason : null)) };
  },
  async paper(id, first = 8, works = WORKS_LIMIT) {
    const d = await gql(Q.paper, { id, first, works });
    const p = d.paper;
    if (!p) return null;
    return {
      prior: d.priorWorks.map((l) => toLink(l.node)), derivative: d.derivativeWorks.map((l) => toLink(l.node)),
      id: p.key, label: p.label, title: p.title, abstract: p.abstract, venue: p.venue, year: p.year,
      authors: p.authors || [], url: p.url, topic: p.topic ? { id: p.topic.key, label: p.topic.label } : null,
      concepts: p.concepts.map((m) => ({ id: m.concept.key, label: m.concept.name, kind: "CONCEPT", weight: m.weight })),
      datasets: p.datasets.map((m) => ({ id: m.dataset.key, label: m.dataset.name, kind: "DATASET", relation: m.relation })),
      related: p.related.map((r) => ({ id: r.paper.key, label: r.paper.label, kind: "PAPER", score: r.score, reasons: r.reasons })),
    };
  },
  async topic(id) {
    const t = (await gql(Q.topic, { id })).topic;
    if (!t) return null;
    return {
      id: t.key, label: t.label, level: t.level, size: t.size, years: t.years,
      parent: t.parent ? { id: t.parent.key, label: t.parent.label } : null,
      subtopics: t.subtopics.map((x) => ({ id: x.key, label: x.label, size: x.size })),
      concepts: t.concepts.map((c) => ({ id: c.key, label: c.name, kind: "CONCEPT" })),
      papers: t.topPapers.map((p) => ({ id: p.key, label: p.label, kind: "PAPER", year: p.year })),
    };
  },
  async work(id, works = WORKS_LIMIT) {
    const d = await gql(Q.work, { id, works });
    if (!d.node) return null;
    return { id: d.node.key, label: d.node.name, url: workUrl(d.node.reference), citedBy: d.derivativeWorks.map((l) => toLink(l.node)) };
  },
  /** {id: {year, topic, cites}} for papers and outside works: cites = how many corpus papers cite it. */
  async citations(ids) {
    const out = {};
    for (let i = 0; i < ids.length; i += 100) { // the server's page size cap
      const d = await gql(Q.citations, { ids: ids.slice(i, i + 100) });
      for (const n of d.nodes) {
        if (n && n.key) out[n.key] = { year: n.year ?? null, topic: n.topic?.key ?? null, cites: n.citedBy.length };
      }
    }
    return out;
  },
  exportUrl(format, view) {
    // one parameter per id (docs/api.md, Ids): an id may hold a comma
    const name = view.path ? "path" : "ids";
    const q = (view.path || view.ids).map((id) => `${name}=${encodeURIComponent(id)}`).join("&");
    return `${EXPORT_URL}/${format}?${q}`;
  },
};

// ---------------------------------------------------------------------------------------------
// Page state and helpers.

const INITIAL_LIMIT = 30; // nodes drawn for a chosen result; more becomes a hairball
const EXPAND_LIMIT = 15; // nodes added per click
const TERMS_LIMIT = 12; // a chosen node's own concepts and datasets, drawn beside its neighbours
const ABOUT_LIMIT = 25; // papers listed in a concept's or dataset's side panel
const WORKS_LIMIT = 25; // prior and derivative works listed in a paper's side panel

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k);
  return e;
};

const state = {
  root: null, // id of the node the view was drawn around (for exports)
  path: null, // [from, to] while a path is shown
  from: null, // {id, label} picked as path start
  to: null,
  selected: null,
  colourBy: "year", // "topic" once the graph has topics (useRegistry)
  searchSeq: 0,
  detailSeq: 0,
};

const edgeId = (e) => `${e.source}|${e.type}|${e.target}`;
const short = (s, n = 42) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
const fmt = (w) => (Math.abs(w) >= 10 ? w.toFixed(0) : w.toFixed(2));

function labelOf(id) {
  const n = cy.getElementById(id);
  return n.nonempty() ? n.data("label") : id;
}

/** Why two nodes are joined: the server's sentence (graph/schema.py words every edge type). */
function reasonFor(e) {
  return e.reason || e.type.toLowerCase().replace(/_/g, " ");
}

// ---------------------------------------------------------------------------------------------
// The drawing.

const kindStyle = {};
const typeStyle = {};

/** The drawing's stylesheet; the per-kind and per-type rules come from the registry. */
function stylesheet() {
  return [
    {
      selector: "node",
      style: {
        label: "data(short)", "font-size": 10, "font-family": "system-ui, sans-serif",
        color: "#1a202c", "text-valign": "bottom", "text-margin-y": 3,
        "text-wrap": "wrap", "text-max-width": 120,
        "text-outline-color": "#fff", "text-outline-width": 2,
        "background-color": "#999", width: 16, height: 16,
        "border-width": 1, "border-color": "#fff", "min-zoomed-font-size": 6,
      },
    },
    ...NODE_KINDS.map((k) => ({
      selector: `node[kind = "${k.kind}"]`,
      style: { "background-color": k.color, shape: k.shape },
    })),
    { selector: 'node[kind = "PAPER"]', style: { width: 26, height: 18, "font-size": 11, "font-weight": 600, "border-color": "#4a5568" } },
    // Outside works: hollow, dashed, in the registry's colour.
    ...NODE_KINDS.filter((k) => k.kind === "WORK").map((k) => ({
      selector: 'node[kind = "WORK"]',
      style: { "background-color": "#fff", "border-width": 2, "border-style": "dashed", "border-color": k.color, "font-size": 10, color: "#4a5568" },
    })),
    // Citations and year (api.citations): size = in-corpus citations, colour = year.
    { selector: "node[w]", style: { width: "data(w)", height: "data(h)" } },
    { selector: 'node[kind = "PAPER"][col]', style: { "background-color": "data(col)" } },
    { selector: 'node[kind = "CONCEPT"]', style: { width: 13, height: 13, "font-size": 9, color: "#7b341e" } },
    { selector: 'node[kind = "DATASET"]', style: { width: 18, height: 18, "font-size": 10, color: "#22543d" } },
    { selector: "node.root", style: { "border-width": 4, "border-color": "#1a202c" } },
    { selector: "node:selected", style: { "border-width": 4, "border-color": "#d53f8c" } },
    { selector: "node.end", style: { "border-width": 4, "border-color": "#e53e3e" } },
    {
      selector: "edge",
      style: {
        width: "mapData(wn, 0, 1, 0.6, 4)", "line-color": "#a0aec0", opacity: 0.18,
        "curve-style": "bezier", "target-arrow-shape": "none", "arrow-scale": 0.7, "control-point-step-size": 12,
        "font-size": 9, "text-rotation": "autorotate", "text-background-color": "#fff",
        "text-background-opacity": 0.85, "text-background-padding": 1, color: "#2d3748",
      },
    },
    ...EDGE_TYPES.map((t) => ({ selector: `edge[type = "${t.type}"]`, style: { "line-color": t.color, "target-arrow-color": t.color } })),
    { selector: 'edge[type = "CITES"], edge[type = "USES"], edge[type = "INTRODUCES"]', style: { "target-arrow-shape": "triangle" } },
    { selector: "edge.hl", style: { opacity: 0.9 } },
    { selector: "edge.hover", style: { opacity: 1, label: "data(wlabel)", "z-index": 20 } },
    { selector: "edge:selected", style: { opacity: 1, label: "data(wlabel)", "overlay-opacity": 0.08 } },
    { selector: "edge.hidden-type", style: { display: "none" } },
    { selector: "node.hidden-type", style: { display: "none" } },
    { selector: "node.out-of-years", style: { display: "none" } }, // the year slider
    { selector: ".dim", style: { opacity: 0.12 } },
    { selector: "edge.dim", style: { opacity: 0.06 } },
    {
      selector: "edge.path",
      style: {
        opacity: 1, width: 6, "line-color": "#e53e3e", "target-arrow-color": "#e53e3e",
        label: "data(reason)", "font-size": 10, "font-weight": 600, color: "#9b2c2c", "z-index": 10,
      },
    },
    { selector: "node.path", style: { opacity: 1, "border-width": 4, "border-color": "#e53e3e", "z-index": 10 } },
  ];
}

const cy = cytoscape({
  container: $("#cy"),
  minZoom: 0.15,
  maxZoom: 3,
  style: stylesheet(),
});

function edgeHidden(type) {
  const t = typeStyle[type];
  return t ? !t.on : false;
}

/** The edge types the user has on: what a neighbourhood walks, so every node drawn has a visible edge. */
function typesShown() {
  return EDGE_TYPES.filter((t) => t.on).map((t) => t.type);
}

/** Hide the nodes whose every drawn edge is of a hidden type (the root and a path's nodes stay). */
function hideStranded() {
  cy.nodes().forEach((n) => {
    const keep = n.hasClass("root") || n.hasClass("path") || n.connectedEdges().length === 0
      || n.connectedEdges().some((e) => !e.hasClass("hidden-type"));
    n.toggleClass("hidden-type", !keep);
  });
}

/** Add nodes and edges not yet drawn; returns the added collection. */
function merge(nodes, edges, near) {
  const added = [];
  const c = near && cy.getElementById(near).nonempty() ? cy.getElementById(near).position() : null;
  nodes.forEach((n, i) => {
    if (cy.getElementById(n.id).nonempty()) return;
    const a = (2 * Math.PI * i) / Math.max(nodes.length, 1);
    added.push({
      group: "nodes",
      data: { id: n.id, label: n.label, short: short(n.label, n.kind === "PAPER" ? 44 : 28), kind: n.kind },
      position: c ? { x: c.x + 120 * Math.cos(a), y: c.y + 120 * Math.sin(a) } : undefined,
    });
  });
  const have = new Set(nodes.map((n) => n.id));
  for (const e of edges) {
    const id = edgeId(e);
    if (cy.getElementById(id).nonempty()) continue;
    if (!have.has(e.source) && cy.getElementById(e.source).empty()) continue;
    if (!have.has(e.target) && cy.getElementById(e.target).empty()) continue;
    added.push({ group: "edges", data: { id, ...e, wn: 0.5 }, classes: edgeHidden(e.type) ? "hidden-type" : "" });
  }
  const col = cy.add(added);
  rescaleWeights();
  col.edges().forEach((ed) => ed.data("reason", reasonFor(ed.data())));
  return col;
}

// ---------------------------------------------------------------------------------------------
// Citations and years: papers sized by how many corpus papers cite them, coloured by year.

const NO_YEAR = "#cbd5e0"; // a paper without a year (named in the legend)
const OLD = "#f6e05e"; // the oldest year on screen; the newest is the registry's paper colour
const MID = "#4fd1c5";

// Topic colours: distinct hues, largest topic first; past the palette, one neutral dark grey
// (every legend entry shows its own swatch, so a reader can tell).
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
  "#9c755f", "#ff9da7", "#17becf", "#1f3d7a", "#a0522d", "#2e8b57", "#c71585", "#6a5acd",
  "#b8860b", "#008080", "#8b0000", "#556b2f", "#ff6347"];
const MORE_TOPICS = "#4a5568";
const topicStyle = {};

/** Node width for `c` in-corpus citations (square root, capped at 100), height 0.7 of it. */
const sizeFor = (c) => Math.round(24 + 8 * Math.sqrt(Math.min(c, 100)));

function hexRgb(h) {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(h.trim());
  return m ? m.slice(1).map((x) => parseInt(x, 16)) : [128, 128, 128];
}
/** The year scale: t = 0 (oldest on screen) … 1 (newest), through three stops. */
function yearColour(t) {
  const stops = [OLD, MID, kindStyle.PAPER?.color || "#2b6cb0"].map(hexRgb);
  const x = Math.max(0, Math.min(1, t)) * 2;
  const i = Math.min(1, Math.floor(x));
  const f = x - i;
  const rgb = stops[i].map((a, j) => Math.round(a + (stops[i + 1][j] - a) * f));
  return `#${rgb.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
}

/** The years of the papers drawn, [min, max], or null when none has one. */
function yearRange() {
  const ys = cy.nodes('[kind = "PAPER"]').map((n) => n.data("year")).filter((y) => typeof y === "number");
  return ys.length ? [Math.min(...ys), Math.max(...ys)] : null;
}

/** Colour every drawn paper by its top-level topic, or by its year on the scale of the years
 * drawn; redraw the legend and apply the year slider. */
function recolour() {
  const r = yearRange();
  const byTopic = state.colourBy === "topic";
  cy.nodes('[kind = "PAPER"]').forEach((n) => {
    if (n.data("cites") === undefined) return; // not read yet
    if (byTopic) { n.data("col", topicStyle[n.data("topic")]?.color || NO_YEAR); return; }
    const y = n.data("year");
    const t = r && typeof y === "number" ? (r[1] > r[0] ? (y - r[0]) / (r[1] - r[0]) : 1) : null;
    n.data("col", t === null ? NO_YEAR : yearColour(t));
  });
  paperLegend(r);
  applyYears();
}

// ---------------------------------------------------------------------------------------------
// The year slider: papers outside the range are not drawn (nor their edges); a paper without
// a year is out of any narrowed range. The node the view was drawn around always stays.

const years = { min: null, max: null };

function setYearBounds(list) {
  const box = $("#years");
  box.hidden = list.length < 2 || Math.min(...list) === Math.max(...list);
  if (box.hidden) return;
  years.min = Math.min(...list);
  years.max = Math.max(...list);
  for (const [sel, v] of [["#year-lo", years.min], ["#year-hi", years.max]]) {
    Object.assign($(sel), { min: years.min, max: years.max, step: 1, value: v });
  }
  applyYears();
}

function applyYears(moved = null) {
  if (years.min === null) return;
  const lo = $("#year-lo");
  const hi = $("#year-hi");
  // the two ends never cross: the one moved pushes the other
  if (Number(lo.value) > Number(hi.value)) { if (moved === lo) hi.value = lo.value; else lo.value = hi.value; }
  const [a, b] = [Number(lo.value), Number(hi.value)];
  const narrowed = a > years.min || b < years.max;
  let hidden = 0;
  cy.nodes('[kind = "PAPER"]').forEach((n) => {
    const y = n.data("year");
    const out = narrowed && !n.hasClass("root") && !(typeof y === "number" && y >= a && y <= b);
    n.toggleClass("out-of-years", out);
    hidden += out ? 1 : 0;
  });
  $("#years-label").textContent = a === b ? String(a) : `${a} – ${b}`;
  $("#years-msg").textContent = !narrowed ? "Move the ends to hide papers outside a range of years."
    : `${hidden} paper${hidden === 1 ? "" : "s"} drawn outside it (or without a year) hidden.`;
}

/** Read year and citations for the drawn papers and outside works not read yet. */
async function annotate() {
  const ids = cy.nodes('[kind = "PAPER"], [kind = "WORK"]').filter((n) => n.data("cites") === undefined).map((n) => n.id());
  if (!ids.length) return;
  try {
    const got = await api.citations(ids);
    for (const [id, a] of Object.entries(got)) {
      const n = cy.getElementById(id);
      if (n.empty()) continue; // cleared meanwhile
      const w = sizeFor(a.cites);
      n.data({ year: a.year, topic: a.topic, cites: a.cites, w, h: Math.round(w * 0.7) });
    }
    recolour();
  } catch (err) {
    reportError(err, null);
  }
}

/** Edge width shows weight, scaled per type (cosines and term weights differ in range). */
function rescaleWeights() {
  const max = {};
  cy.edges().forEach((e) => { max[e.data("type")] = Math.max(max[e.data("type")] || 0, e.data("weight")); });
  cy.edges().forEach((e) => {
    const m = max[e.data("type")] || 1;
    e.data({ wn: m > 0 ? Math.min(1, e.data("weight") / m) : 0.5, wlabel: `${e.data("type").toLowerCase()} ${fmt(e.data("weight"))}` });
  });
}

function runLayout(fresh) {
  const root = state.root;
  const opts = fresh
    ? {
      name: "concentric", animate: false, padding: 40, minNodeSpacing: 40, avoidOverlap: true,
      concentric: (n) => (n.id() === root ? 3 : n.data("kind") === "PAPER" ? 2 : 1),
      levelWidth: () => 1, startAngle: -Math.PI / 2, spacingFactor: 1.15,
    }
    : {
      // Dense neighbourhoods (every edge among the drawn nodes) pull cose into a knot:
      // strong repulsion and weak gravity spread it over the canvas.
      name: "cose", animate: false, randomize: false, padding: 40, nodeRepulsion: () => 60000,
      idealEdgeLength: () => 120, edgeElasticity: () => 60, gravity: 0.2, numIter: 1500,
      nodeOverlap: 20, nodeDimensionsIncludeLabels: true,
      // The canvas is wide: lay out in its shape, not in cose's square.
      boundingBox: { x1: 0, y1: 0, w: Math.max(cy.width(), 400), h: Math.max(cy.height(), 300) },
    };
  cy.layout(opts).run();
  fit();
}

/** Fit the drawing, but never blow a handful of nodes up to poster size. */
function fit(eles) {
  cy.fit(eles, 40);
  if (cy.zoom() > 1.2) { cy.zoom(1.2); cy.center(eles); }
}

function highlightAround(node) {
  cy.edges().removeClass("hl");
  if (node) node.connectedEdges().addClass("hl");
}

function clearPath() {
  cy.elements().removeClass("path dim");
  state.path = null;
  $("#path-hops").replaceChildren();
  $("#path-msg").textContent = "";
  updateExport();
}

// ---------------------------------------------------------------------------------------------
// Messages: every empty state and error is said in words.

function overlay(text, kind = "info") {
  const o = $("#overlay");
  if (!text) { o.hidden = true; return; }
  o.hidden = false;
  o.className = `overlay ${kind}`;
  o.replaceChildren(el("p", {}, text));
}

function setConn(ok, text) {
  const c = $("#conn");
  c.className = `conn ${ok ? "ok" : "bad"}`;
  c.textContent = text;
}

function reportError(err, where) {
  const text = err instanceof ApiError ? err.message : `Something went wrong: ${err.message || err}`;
  if (err instanceof Unreachable) setConn(false, "Server unreachable");
  if (where) { where.textContent = text; where.classList.add("error"); }
  if (!where || cy.elements().empty()) overlay(text, "error");
}

// ---------------------------------------------------------------------------------------------
// Search.

async function doSearch(ev) {
  ev.preventDefault();
  const q = $("#search-input").value.trim();
  const mode = $("#search-mode").value;
  const kinds = $("#search-kind").value ? [$("#search-kind").value] : null;
  const msg = $("#results-msg");
  const list = $("#results");
  msg.classList.remove("error");
  if (!q) { msg.textContent = "Type a word to search for."; list.replaceChildren(); return; }
  const seq = ++state.searchSeq;
  msg.textContent = `Searching for “${q}”…`;
  list.replaceChildren();
  try {
    const hits = await api.search(q, mode, kinds);
    if (seq !== state.searchSeq) return;
    setConn(true, "Connected");
    if (!hits.length) { msg.textContent = `No results for “${q}”. Try another word or the semantic mode.`; return; }
    msg.textContent = `${hits.length} result${hits.length === 1 ? "" : "s"} for “${q}”. Choose one to draw it.`;
    list.replaceChildren(...hits.map((h) => el("li", {},
      el("button", { type: "button", class: "result", "data-id": h.id, onclick: () => choose(h.id) },
        el("span", { class: `dot ${h.kind.toLowerCase()}`, "aria-hidden": "true" }),
        el("span", { class: "rlabel" }, h.label),
        el("span", { class: "rkind" }, kindStyle[h.kind]?.name || h.kind)))));
  } catch (err) {
    if (seq === state.searchSeq) reportError(err, msg);
  }
}

// ---------------------------------------------------------------------------------------------
// Drawing a neighbourhood, expanding, selecting.

async function choose(id) {
  overlay("Loading…");
  try {
    const depth = Number($("#depth").value);
    // Ranked by edge weight alone, a paper's neighbours are mostly papers (a shared-term
    // weight outweighs a mention), so its own concepts and datasets are asked for apart.
    const [sub, terms] = await Promise.all([
      api.neighborhood(id, depth, INITIAL_LIMIT, typesShown()),
      api.neighborhood(id, 1, TERMS_LIMIT, typesShown(), ["CONCEPT", "DATASET"]),
    ]);
    setConn(true, "Connected");
    cy.elements().remove();
    clearPath();
    state.root = id;
    merge(sub.nodes, sub.edges);
    merge(terms.nodes, terms.edges);
    const root = cy.getElementById(id);
    root.addClass("root");
    $("#truncated").hidden = !sub.truncated;
    await annotate(); // sizes first: the layout spaces nodes by them
    runLayout(true);
    overlay(cy.nodes().length ? null : "Nothing to draw around this node.");
    if (sub.nodes.length === 1) overlay("This node has no neighbours (with the edge types shown).", "info");
    select(root);
    location.hash = `node=${encodeURIComponent(id)}`;
  } catch (err) {
    reportError(err, null);
  }
  updateExport();
}

async function expand(node) {
  try {
    const sub = await api.neighborhood(node.id(), 1, EXPAND_LIMIT, typesShown());
    const before = cy.nodes().length;
    merge(sub.nodes, sub.edges, node.id());
    await annotate();
    if (cy.nodes().length > before) runLayout(false);
    if (sub.truncated) $("#truncated").hidden = false;
    if (state.selected === node.id()) highlightAround(node);
  } catch (err) {
    reportError(err, null);
  }
}

function select(node) {
  cy.elements().unselect();
  node.select();
  state.selected = node.id();
  highlightAround(node);
  showDetail(node.data());
}

// ---------------------------------------------------------------------------------------------
// The side panel.

/** replaceChildren, skipping the nulls conditional parts leave. */
function fill(box, ...kids) {
  box.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
}

function chip(n) {
  return el("li", {},
    el("button", { type: "button", class: `chip ${n.kind.toLowerCase()}`, title: n.id, onclick: () => focusOrDraw(n.id) }, n.label));
}

/** Prior or derivative works: each focuses its node (or draws it); outside works link out. */
function worksList(items, cls, none) {
  if (!items.length) return el("p", { class: "msg" }, none);
  return el("ol", { class: `works ${cls}` }, items.map((w) => el("li", { "data-id": w.id, "data-kind": w.kind },
    el("button", { type: "button", class: "link", title: w.id, onclick: () => focusOrDraw(w.id) }, w.label),
    w.kind === "WORK" ? el("span", { class: "outside" }, " (outside work)") : w.year ? el("span", { class: "score" }, ` ${w.year}`) : null,
    w.url ? [" ", el("a", { href: w.url, target: "_blank", rel: "noopener", class: "score" }, w.url.replace(/^https:\/\//, ""))] : null)));
}

function focusOrDraw(id) {
  const n = cy.getElementById(id);
  if (n.nonempty()) { select(n); cy.animate({ center: { eles: n } }, { duration: 200 }); } else choose(id);
}

function endButtons(d) {
  return el("div", { class: "row" },
    el("button", { type: "button", onclick: () => setEnd("from", d) }, "Path from here"),
    el("button", { type: "button", onclick: () => setEnd("to", d) }, "Path to here"));
}

async function showDetail(d) {
  const box = $("#detail");
  const seq = ++state.detailSeq;
  const head = [
    el("p", { class: `kind ${d.kind.toLowerCase()}` }, kindStyle[d.kind]?.name || d.kind),
    el("h3", {}, d.label),
    el("p", { class: "id" }, d.id),
    endButtons(d),
  ];
  if (d.kind === "WORK") {
    fill(box, ...head, el("p", { class: "msg" }, "Loading the papers citing it…"));
    try {
      const w = await api.work(d.id);
      if (seq !== state.detailSeq) return;
      if (!w) { fill(box, ...head, el("p", { class: "msg error" }, `No outside work with id ${d.id}.`)); return; }
      fill(box, ...head,
        el("p", { class: "meta" }, "Cited by papers in the graph, not in it itself."),
        w.url ? el("p", {}, el("a", { href: w.url, target: "_blank", rel: "noopener" }, w.url)) : null,
        el("h4", {}, `Cited by (${w.citedBy.length}${w.citedBy.length === WORKS_LIMIT ? "+" : ""})`),
        worksList(w.citedBy, "derivative", "No paper in the graph cites it."));
    } catch (err) {
      if (seq === state.detailSeq) fill(box, ...head, el("p", { class: "msg error" }, err.message));
    }
    return;
  }
  if (d.kind === "TOPIC") { showTopic(d.id, seq); return; }
  if (d.kind !== "PAPER") {
    fill(box, ...head, el("p", { class: "msg" }, "Loading the papers about it…"));
    try {
      const sub = await api.neighborhood(d.id, 1, ABOUT_LIMIT, ["MENTIONS", "USES", "INTRODUCES"], ["PAPER"]);
      if (seq !== state.detailSeq) return;
      const papers = sub.nodes.filter((n) => n.id !== d.id);
      const more = sub.truncated ? ` (the ${papers.length} strongest)` : "";
      fill(box, ...head,
        el("h4", {}, `Papers about it${more}, strongest first`),
        papers.length ? el("ul", { class: "chips" }, papers.map(chip)) : el("p", { class: "msg" }, "No paper mentions it."));
    } catch (err) {
      if (seq === state.detailSeq) fill(box, ...head, el("p", { class: "msg error" }, err.message));
    }
    return;
  }
  fill(box, ...head, el("p", { class: "msg" }, "Loading the paper…"));
  try {
    const p = await api.paper(d.id);
    if (seq !== state.detailSeq) return;
    if (!p) { fill(box, ...head, el("p", { class: "msg error" }, `No paper with id ${d.id}.`)); return; }
    const meta = [p.venue, p.year].filter(Boolean).join(" · ");
    const cites = cy.getElementById(d.id).data("cites");
    const more = (list) => (list.length === WORKS_LIMIT ? `the first ${WORKS_LIMIT}` : String(list.length));
    fill(box, ...head,
      p.title && p.title !== p.label ? el("p", { class: "title" }, p.title) : null,
      meta ? el("p", { class: "meta" }, meta) : null,
      p.topic ? el("p", { class: "meta" }, "Topic: ", topicButton(p.topic)) : null,
      typeof cites === "number" ? el("p", { class: "meta" }, `Cited by ${cites} paper${cites === 1 ? "" : "s"} in the graph`) : null,
      el("h4", {}, "Authors"),
      el("p", { class: "authors" }, p.authors.length ? p.authors.join(", ") : "(none given)"),
      el("h4", {}, "Abstract"),
      el("p", { class: "abstract" }, p.abstract || "(no abstract)"),
      el("h4", {}, `Prior works: what it cites (${more(p.prior)})`),
      worksList(p.prior, "prior", "No references recorded."),
      el("h4", {}, `Derivative works: papers citing it (${more(p.derivative)})`),
      worksList(p.derivative, "derivative", "No paper in the graph cites it."),
      el("h4", {}, `Concepts (${p.concepts.length})`),
      p.concepts.length ? el("ul", { class: "chips" }, p.concepts.map(chip)) : el("p", { class: "msg" }, "None found."),
      el("h4", {}, `Datasets (${p.datasets.length})`),
      p.datasets.length ? el("ul", { class: "chips" }, p.datasets.map(chip)) : el("p", { class: "msg" }, "None found."),
      el("h4", {}, "Related papers, and why"),
      p.related.length
        ? el("ol", { class: "related" }, p.related.map((r) => el("li", {},
          el("button", { type: "button", class: "link", onclick: () => focusOrDraw(r.id) }, r.label),
          el("span", { class: "score" }, ` ${r.score.toFixed(2)}`),
          el("ul", { class: "reasons" }, r.reasons.slice(0, 4).map((x) => el("li", {}, x.text))))))
        : el("p", { class: "msg" }, "No related papers."));
  } catch (err) {
    if (seq === state.detailSeq) fill(box, ...head, el("p", { class: "msg error" }, err.message));
  }
}

/** A button that opens a topic's panel, with the topic's colour when it is a top-level one. */
function topicButton(t) {
  const c = topicStyle[t.id]?.color;
  return el("button", { type: "button", class: "link topic-link", "data-id": t.id, onclick: () => showTopic(t.id) },
    c ? el("span", { class: "swatch", style: `background:${c}`, "aria-hidden": "true" }) : null, t.label);
}

/** Papers per year as small bars (the count above, the year below). */
function yearBars(list) {
  if (!list.length) return el("p", { class: "msg" }, "None of its papers has a year.");
  const most = Math.max(...list.map((y) => y.count));
  const yy = (y) => (list.length > 8 ? `’${String(y).slice(-2)}` : String(y));
  return el("div", { class: "bars", role: "img", "aria-label": list.map((y) => `${y.year}: ${y.count}`).join(", ") },
    list.map((y) => el("div", { class: "bar-col", title: `${y.year}: ${y.count} paper${y.count === 1 ? "" : "s"}` },
      el("span", { class: "bar-n" }, String(y.count)),
      el("span", { class: "bar", style: `height:${Math.max(2, Math.round((48 * y.count) / most))}px` }),
      el("span", { class: "bar-y" }, yy(y.year)))));
}

/** A topic's panel: label, size, papers per year, top papers, concepts, subtopics. */
async function showTopic(id, seq = ++state.detailSeq) {
  const box = $("#detail");
  const known = topicStyle[id];
  const head = (t) => [
    el("p", { class: "kind topic" }, t.level === 2 ? "Subtopic" : "Topic"),
    el("h3", {}, topicStyle[t.id] ? el("span", { class: "swatch", style: `background:${topicStyle[t.id].color}`, "aria-hidden": "true" }) : null,
      ` ${t.label}`),
    el("p", { class: "id" }, t.id),
  ];
  fill(box, ...head(known || { id, label: id }), el("p", { class: "msg" }, "Loading the topic…"));
  try {
    const t = await api.topic(id);
    if (seq !== state.detailSeq) return;
    if (!t) { fill(box, ...head({ id, label: id }), el("p", { class: "msg error" }, `No topic with id ${id}.`)); return; }
    const drawn = cy.nodes('[kind = "PAPER"]').filter((n) => n.data("topic") === t.id).length;
    fill(box, ...head(t),
      el("p", { class: "meta" }, `${t.size} paper${t.size === 1 ? "" : "s"}`,
        t.level === 1 ? ` · ${drawn} drawn` : null),
      t.parent ? el("p", { class: "meta" }, "Subtopic of ", topicButton(t.parent)) : null,
      el("h4", {}, "Papers per year"),
      yearBars(t.years),
      el("h4", {}, "Top papers, most important first"),
      t.papers.length ? el("ul", { class: "chips" }, t.papers.map(chip)) : el("p", { class: "msg" }, "None."),
      el("h4", {}, "Concepts, most distinctive first"),
      t.concepts.length ? el("ul", { class: "chips" }, t.concepts.map(chip)) : el("p", { class: "msg" }, "None."),
      t.subtopics.length ? [el("h4", {}, `Subtopics (${t.subtopics.length})`),
        el("ul", { class: "subtopics" }, t.subtopics.map((x) => el("li", {}, topicButton(x), el("span", { class: "score" }, ` ${x.size}`))))] : null);
  } catch (err) {
    if (seq === state.detailSeq) fill(box, ...head(known || { id, label: id }), el("p", { class: "msg error" }, err.message));
  }
}

function showEdge(d) {
  state.detailSeq++;
  $("#detail").replaceChildren(
    el("p", { class: "kind" }, `Edge · ${typeStyle[d.type]?.name || d.type}`),
    el("h3", {}, d.reason || reasonFor(d)),
    el("p", {}, el("button", { type: "button", class: "link", onclick: () => focusOrDraw(d.source) }, labelOf(d.source)),
      " → ", el("button", { type: "button", class: "link", onclick: () => focusOrDraw(d.target) }, labelOf(d.target))),
    el("p", { class: "meta" }, `weight ${fmt(d.weight)}`));
}

// ---------------------------------------------------------------------------------------------
// Paths.

function setEnd(which, d) {
  state[which] = { id: d.id, label: d.label };
  const dd = $(`#path-${which}`);
  dd.textContent = d.label;
  dd.dataset.id = d.id;
  cy.nodes().removeClass("end");
  for (const e of [state.from, state.to]) if (e) cy.getElementById(e.id).addClass("end");
  $("#path-go").disabled = !(state.from && state.to);
  if (state.from && state.to) findPath();
}

async function findPath() {
  const msg = $("#path-msg");
  msg.classList.remove("error");
  const { from, to } = state;
  if (!from || !to) { msg.textContent = "Pick two nodes first."; return; }
  if (from.id === to.id) { msg.textContent = "Pick two different nodes."; return; }
  msg.textContent = "Looking for the shortest path…";
  try {
    const p = await api.path(from.id, to.id);
    clearPath();
    if (!p) { msg.textContent = `No path between “${short(from.label)}” and “${short(to.label)}” within ${MAX_HOPS} hops.`; return; }
    if (cy.elements().empty()) state.root = from.id;
    const added = merge(p.nodes, p.edges);
    await annotate();
    if (added.nodes().length) runLayout(cy.nodes().length === added.nodes().length);
    const ids = new Set([...p.nodes.map((n) => n.id), ...p.edges.map(edgeId)]);
    cy.elements().forEach((x) => { x.addClass(ids.has(x.id()) ? "path" : "dim"); });
    // A path edge of a hidden type is still shown: the path is what was asked for.
    cy.edges(".path").removeClass("hidden-type");
    state.path = [from.id, to.id];
    msg.textContent = `${p.edges.length} hop${p.edges.length === 1 ? "" : "s"} from “${short(from.label, 30)}” to “${short(to.label, 30)}”:`;
    $("#path-hops").replaceChildren(...p.edges.map((e, i) => el("li", {},
      el("button", { type: "button", class: "link", onclick: () => focusOrDraw(p.nodes[i].id) }, p.nodes[i].label),
      el("span", { class: "why" }, ` — ${cy.getElementById(edgeId(e)).data("reason") || reasonFor(e)} → `),
      el("button", { type: "button", class: "link", onclick: () => focusOrDraw(p.nodes[i + 1].id) }, p.nodes[i + 1].label))));
    fit(cy.elements(".path"));
    overlay(null);
  } catch (err) {
    reportError(err, msg);
  }
  updateExport();
}

// ---------------------------------------------------------------------------------------------
// Legend, toggles, export.

/** The papers' legend: the topics, or the year scale of the papers drawn and the no-year grey. */
function paperLegend(range) {
  const byTopic = state.colourBy === "topic";
  $("#paper-legend-title").textContent = `Papers: colour = ${byTopic ? "topic" : "year"}`;
  $("#topic-legend").hidden = !byTopic;
  $("#year-legend").hidden = byTopic;
  const box = $("#year-scale");
  if (!range) {
    box.replaceChildren(el("span", { class: "hint" }, cy.nodes('[kind = "PAPER"]').length ? "No paper drawn has a year." : "Draw papers to see their years."));
  } else if (range[0] === range[1]) {
    box.replaceChildren(el("span", { class: "swatch year", style: `background:${yearColour(1)}`, "aria-hidden": "true" }),
      el("span", { class: "year-lo" }, String(range[0])), el("span", { class: "hint" }, "(the only year drawn)"));
  } else {
    const grad = `background:linear-gradient(to right, ${yearColour(0)}, ${yearColour(0.5)}, ${yearColour(1)})`;
    box.replaceChildren(el("span", { class: "year-lo" }, String(range[0])),
      el("span", { class: "ramp", style: grad, "aria-hidden": "true", title: `${range[0]}–${range[1]}` }),
      el("span", { class: "year-hi" }, String(range[1])));
  }
}

function buildLegend() {
  $("#no-year").style.background = NO_YEAR;
  $("#no-topic").style.background = NO_YEAR;
  $("#colour-by").hidden = !TOPICS.length;
  $(`#colour-${state.colourBy}`).checked = true;
  $("#topic-list").replaceChildren(...TOPICS.map((t) => el("li", {},
    el("button", { type: "button", class: "topic-entry", "data-id": t.id, title: t.id, onclick: () => showTopic(t.id) },
      el("span", { class: "swatch", style: `background:${t.color}`, "aria-hidden": "true" }),
      el("span", { class: "tlabel" }, t.label), el("span", { class: "score" }, String(t.size))))));
  $("#size-samples").replaceChildren(...[0, 5, 25].map((c) => el("li", {},
    el("span", { class: "box", style: `width:${sizeFor(c) / 2}px;height:${Math.round(sizeFor(c) * 0.35)}px`, "aria-hidden": "true" }),
    `${c}`)));
  paperLegend(yearRange());
  $("#node-legend").replaceChildren(...NODE_KINDS.map((k) => el("li", {},
    el("span", { class: `swatch ${k.kind.toLowerCase()}`, "aria-hidden": "true" }), k.name)));
  $("#edge-toggles").replaceChildren(...EDGE_TYPES.map((t) => {
    const id = `toggle-${t.type}`;
    const box = el("input", { type: "checkbox", id, checked: t.on, "data-type": t.type });
    box.addEventListener("change", () => {
      t.on = box.checked;
      cy.edges(`[type = "${t.type}"]`).not(".path").toggleClass("hidden-type", !t.on);
      hideStranded();
    });
    return el("li", {}, box,
      el("label", { for: id }, el("span", { class: "line", style: `background:${t.color}`, "aria-hidden": "true" }), t.name));
  }));
}

function updateExport() {
  const onScreen = cy.nodes().map((n) => n.id()).sort();
  const view = state.path ? { path: state.path } : onScreen.length ? { ids: onScreen } : null;
  const msg = $("#export-msg");
  for (const a of document.querySelectorAll("#export-links a")) {
    if (view) {
      a.href = api.exportUrl(a.dataset.format, view);
      a.setAttribute("download", `citegraph.${a.dataset.format.replace("cytoscape.json", "cyjs")}`);
      a.removeAttribute("aria-disabled");
    } else {
      a.removeAttribute("href");
      a.setAttribute("aria-disabled", "true");
    }
  }
  msg.textContent = !view ? "Draw something first."
    : view.path ? "The highlighted path, for Gephi or Cytoscape."
      : `The ${view.ids.length} nodes on screen and the edges among them, for Gephi or Cytoscape.`;
}

// ---------------------------------------------------------------------------------------------
// Wiring.

cy.on("tap", "node", (ev) => {
  const node = ev.target;
  const shift = ev.originalEvent && ev.originalEvent.shiftKey;
  if (shift && state.selected && state.selected !== node.id()) {
    const a = cy.getElementById(state.selected);
    setEnd("from", a.data());
    setEnd("to", node.data());
    return;
  }
  select(node);
  expand(node);
});
cy.on("tap", "edge", (ev) => { highlightAround(null); ev.target.addClass("hl"); showEdge(ev.target.data()); });
cy.on("tap", (ev) => { if (ev.target === cy) { cy.elements().unselect(); highlightAround(null); } });
cy.on("mouseover", "edge", (ev) => ev.target.addClass("hover"));
cy.on("mouseout", "edge", (ev) => ev.target.removeClass("hover"));

$("#search-form").addEventListener("submit", doSearch);
$("#path-go").addEventListener("click", findPath);
$("#path-clear").addEventListener("click", () => {
  state.from = state.to = null;
  for (const w of ["from", "to"]) { $(`#path-${w}`).textContent = "—"; $(`#path-${w}`).dataset.id = ""; }
  $("#path-go").disabled = true;
  cy.nodes().removeClass("end");
  clearPath();
});
$("#fit").addEventListener("click", () => fit());
$("#reset").addEventListener("click", () => {
  cy.elements().remove();
  state.root = null;
  clearPath();
  paperLegend(null);
  $("#truncated").hidden = true;
  overlay("Search above and choose a result to draw its neighbourhood.");
  history.replaceState(null, "", location.pathname);
});
$("#depth").addEventListener("change", updateExport);
for (const input of document.querySelectorAll("input[name='colour-by']")) {
  input.addEventListener("change", () => { state.colourBy = input.value; recolour(); });
}
for (const sel of ["#year-lo", "#year-hi"]) $(sel).addEventListener("input", (ev) => applyYears(ev.target));

/** Take the registry's kinds and types: legend, toggles, colours (canvas and CSS swatches). */
function useRegistry(reg) {
  NODE_KINDS.splice(0, NODE_KINDS.length, ...reg.nodeKinds);
  EDGE_TYPES.splice(0, EDGE_TYPES.length, ...reg.edgeTypes);
  for (const k of NODE_KINDS) {
    kindStyle[k.kind] = k;
    document.documentElement.style.setProperty(`--${k.kind.toLowerCase()}`, k.color);
  }
  for (const t of EDGE_TYPES) typeStyle[t.type] = t;
  const topics = [...reg.topics].sort((a, b) => b.size - a.size || (a.id < b.id ? -1 : 1));
  TOPICS.splice(0, TOPICS.length, ...topics.map((t, i) => ({ ...t, color: PALETTE[i] || MORE_TOPICS })));
  for (const t of TOPICS) topicStyle[t.id] = t;
  state.colourBy = TOPICS.length ? "topic" : "year";
  cy.style(stylesheet());
  buildLegend();
  setYearBounds(reg.years);
}

async function start() {
  updateExport();
  let health;
  try {
    health = await fetch("/healthz");
  } catch {
    setConn(false, "Server unreachable");
    overlay("The citegraph server cannot be reached. Is `citegraph serve` running?", "error");
    return;
  }
  try {
    useRegistry(await api.registry());
  } catch (err) {
    reportError(err, null);
    return;
  }
  // "Connected" once the page can draw: the legend and the colours are in
  setConn(health.ok, health.ok ? "Connected" : `Server answered HTTP ${health.status}`);
  await fromHash();
  window.addEventListener("hashchange", fromHash);
}

/** A link like /#node=p-123 draws that node. */
async function fromHash() {
  const m = location.hash.match(/node=([^&]+)/);
  if (!m) return;
  let id;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    return; // a malformed link (e.g. #node=%E0%A4%A): nothing to draw, and nothing to break
  }
  if (id === state.root) return; // the page itself wrote this hash
  try {
    const n = await api.node(id);
    if (n) choose(n.id);
    else overlay(`There is no node with id “${id}”. Search for it by name instead.`, "error");
  } catch (err) {
    reportError(err, null);
  }
}

// Tests read the drawing through this handle; it is not an API.
window.citegraph = { cy, state, focus: focusOrDraw, topic: showTopic };
start();

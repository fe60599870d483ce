/* The explorer's page: the index's list with instant search and filters, an entry page per
   `#model:key`, the equivalents side by side, and the diff view at `#diff`. Data arrive as
   <script> files calling USIS.index / USIS.chunk / USIS.schema / USIS.diff (file:// refuses XHR). */
"use strict";

const USIS = (() => {
  const state = {
    rows: [], byKey: new Map(), flags: [], models: [], chunks: [], operations: [],
    schema: null, loaded: new Map(), waiting: new Map(), pending: new Map(), diff: null, shown: 0, matches: [],
    readyAt: null, openedAt: null,
  };
  const PAGE = 200;

  /* -- DOM helpers ------------------------------------------------------------------------- */
  function h(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const $ = (selector) => document.querySelector(selector);
  const notApplicable = () => h("span", { class: "na", text: "not applicable" });
  const isKey = (value) => typeof value === "string" && state.byKey.has(value);
  const link = (key) => h("a", { href: "#" + key, class: "entry-link", text: key });

  /* -- data files -------------------------------------------------------------------------- */
  function index(document_) {
    const columns = document_.columns;
    const at = Object.fromEntries(columns.map((name, position) => [name, position]));
    state.flags = document_.flags;
    state.models = document_.models;
    state.chunks = document_.chunks;
    state.operations = document_.operations;
    state.rows = document_.rows.map((row) => {
      const item = {
        key: row[at.key], name: row[at.name], desc: row[at.desc], group: row[at.group],
        flags: row[at.flags], params: row[at.params], op: row[at.op], chunk: row[at.chunk],
      };
      item.model = item.key.slice(0, item.key.indexOf(":"));
      item.haystack = `${item.key} ${item.name} ${item.desc} ${item.params}`.toLowerCase();
      return item;
    });
    for (const row of state.rows) state.byKey.set(row.key, row);
  }
  function schema(definitions) { state.schema = definitions; }
  function diff(document_) { state.diff = document_; }
  function chunk(position, document_) {
    state.loaded.set(position, document_);
    const resolve = state.waiting.get(position);
    if (resolve) resolve(document_);
  }
  /* One <script> per chunk, however many callers wait for it. */
  function loadChunk(position) {
    if (state.loaded.has(position)) return Promise.resolve(state.loaded.get(position));
    if (!state.pending.has(position)) {
      state.pending.set(position, new Promise((resolve, reject) => {
        state.waiting.set(position, resolve);
        const tag = h("script", { src: `data/${state.chunks[position]}.js` });
        tag.onerror = () => reject(new Error(`data/${state.chunks[position]}.js did not load`));
        document.head.append(tag);
      }));
    }
    return state.pending.get(position);
  }
  async function entryOf(key) {
    const data = await loadChunk(state.byKey.get(key).chunk);
    return data.entries[key];
  }

  /* -- what the corpus says, as the Python API says it ------------------------------------- */
  function flag(row, name) { return (row.flags >> state.flags.indexOf(name)) & 1; }
  /* Corpus.equivalents: the entries of the other models with the same operation. */
  function equivalentsOf(key) {
    const row = state.byKey.get(key);
    if (row.op < 0) return [];
    return state.rows.filter((other) => other.op === row.op && other.model !== row.model)
      .map((other) => other.key);
  }
  /* Every provenance record of an entry, {pointer: {stage, method, from}}. */
  async function provenanceOf(key) {
    const data = await loadChunk(state.byKey.get(key).chunk);
    const flat = data.provenance[key];
    const records = {};
    for (let i = 0; i < flat.length; i += 2) {
      const [stage, method, from] = data.records[flat[i + 1]];
      records[data.pointers[flat[i]]] = { stage, method, from };
    }
    return records;
  }
  /* provenance.records.record_for: the record at the pointer's longest prefix. */
  function recordFor(records, pointer) {
    const parts = pointer.split("/").slice(1);
    for (let length = parts.length; length >= 0; length -= 1) {
      const prefix = parts.slice(0, length).map((p) => "/" + p).join("");
      if (prefix in records) return records[prefix];
    }
    return null;
  }

  /* -- the list ---------------------------------------------------------------------------- */
  function matching() {
    const words = $("#search").value.toLowerCase().split(/\s+/).filter(Boolean);
    const model = $("#filter-model").value;
    const group = $("#filter-group").value;
    const wanted = state.flags.map((name) => [name, $(`#filter-${name}`).value])
      .filter(([, value]) => value !== "");
    const found = state.rows.filter((row) =>
      (!model || row.model === model) && (!group || row.group === group)
      && wanted.every(([name, value]) => String(flag(row, name)) === value)
      && words.every((word) => row.haystack.includes(word)));
    if (words.length) {
      // Names that hold the words first, the rest (descriptions, parameters) after.
      const inName = (row) => words.every((word) => row.name.toLowerCase().includes(word));
      found.sort((a, b) => Number(inName(b)) - Number(inName(a)));
    }
    return found;
  }
  function renderList() {
    state.matches = matching();
    state.shown = 0;
    $("#results").replaceChildren();
    $("#count").textContent = `${state.matches.length} of ${state.rows.length} entries`;
    showMore();
  }
  function showMore() {
    const next = state.matches.slice(state.shown, state.shown + PAGE);
    state.shown += next.length;
    const current = decodeURIComponent(location.hash.slice(1));
    $("#results").append(...next.map((row) => h("li", {},
      h("a", { href: "#" + row.key, "data-key": row.key, class: row.key === current ? "current" : null },
        h("span", { class: "name", text: row.name }), h("span", { class: "model", text: row.model }),
        h("span", { class: "desc", text: row.desc })))));
    $("#more").hidden = state.shown >= state.matches.length;
  }

  /* -- an entry ---------------------------------------------------------------------------- */
  function provenanceBadge(records, pointer) {
    const record = recordFor(records, pointer);
    if (!record) return null;
    return h("span", {
      class: `prov prov-${record.method}`, "data-pointer": pointer,
      title: `${record.method}, ${record.stage} stage: ${record.from}`, text: record.method,
    });
  }
  function renderValue(value, definition, pointer, records) {
    if (value === null || value === undefined) return notApplicable();
    if (Array.isArray(value)) {
      if (!value.length) return h("span", { class: "na", text: "none" });
      if (value.every((item) => typeof item !== "object" || item === null)) {
        return h("span", {}, value.map((item, i) => [i ? ", " : "", isKey(item) ? link(item) : String(item)]));
      }
      return h("div", {}, value.map((item, i) => renderValue(item, definition, `${pointer}/${i}`, records)));
    }
    if (typeof value === "object") {
      const spec = (state.schema && state.schema[definition]) || { props: {} };
      const names = [...Object.keys(spec.props).filter((name) => name in value),
        ...Object.keys(value).filter((name) => !(name in spec.props))];
      return h("table", { class: "fields" }, names.map((name) => {
        const prop = spec.props[name] || {};
        const at = `${pointer}/${name}`;
        return h("tr", { "data-field": at },
          h("td", { class: "field", title: prop.desc || "" }, name, provenanceBadge(records, at)),
          h("td", {}, renderValue(value[name], prop.ref, at, records)));
      }));
    }
    if (isKey(value)) return link(value);
    return h("span", { text: String(value) });
  }
  function parametersTable(parameters, records) {
    if (!parameters.length) return h("p", { class: "na", text: "no parameters" });
    const columns = ["name", "direction", "kind", "C type", "pointer", "memory_space", "length",
      "root_only", "constraints", "desc"];
    const cell = (value) => (value === null || value === undefined ? notApplicable() : String(value));
    return h("table", { class: "parameters" },
      h("tr", {}, columns.map((name) => h("th", { text: name }))),
      parameters.map((p, i) => {
        const constraints = Object.entries(p.constraints || {}).filter(([, v]) => v !== null)
          .map(([k, v]) => `${k}: ${v}`).join("; ");
        return h("tr", { "data-parameter": p.name },
          h("td", { class: "field" }, p.name, provenanceBadge(records, `/parameters/${i}`)),
          h("td", {}, cell(p.direction)), h("td", {}, cell(p.kind)),
          h("td", {}, cell(p.binding_type && p.binding_type.c)), h("td", {}, cell(p.pointer)),
          h("td", {}, cell(p.memory_space)), h("td", {}, cell(p.length)), h("td", {}, cell(p.root_only)),
          h("td", {}, constraints || notApplicable()), h("td", {}, cell(p.desc)));
      }));
  }
  function relationships(entry, records) {
    const related = entry.relationships;
    const rows = [["superseded_by", related.superseded_by], ["supersedes", related.supersedes],
      ...Object.entries(related.variants).map(([name, key]) => [`variants.${name}`, key])];
    return h("table", { class: "relationships" }, rows.map(([name, value]) => h("tr", {},
      h("td", { class: "field" }, name, provenanceBadge(records, "/relationships/" + name.replace(".", "/"))),
      h("td", {}, renderValue(value, null, "", records)))));
  }
  function section(name, entry, records) {
    const spec = state.schema.entry.props[name] || {};
    const definition = name === "parameters" ? "parameter" : spec.ref || name;
    const description = (state.schema[definition] || {}).desc || spec.desc || "";
    let body;
    if (name === "parameters") body = parametersTable(entry.parameters, records);
    else if (name === "relationships") body = relationships(entry, records);
    else body = renderValue(entry[name], definition, `/${name}`, records);
    const parts = [h("h3", { text: name }, provenanceBadge(records, `/${name}`)),
      description ? h("p", { class: "schema-desc", text: description }) : null];
    if (name === "semantics" && entry.semantics.formal) {
      parts.push(h("h4", { text: "formal: who sends what to whom" }), USIS_FORMAL.picture(entry.semantics.formal));
    }
    return h("section", { id: `sec-${name}` }, parts, body);
  }
  async function equivalentsView(key) {
    const others = equivalentsOf(key);
    const box = h("section", { id: "equivalents" }, h("h3", { text: "equivalents in the other models" }));
    if (!others.length) {
      box.append(h("p", { class: "na", text: "none: the entry has no collective type, one-sided or atomic operation shared with another model" }));
      return box;
    }
    const byModel = new Map();
    for (const other of others) {
      const model = other.slice(0, other.indexOf(":"));
      if (!byModel.has(model)) byModel.set(model, []);
      byModel.get(model).push(other);
    }
    const columns = [key, ...[...byModel.values()].map((keys) => keys.find((k) => !k.includes("{T}")) || keys[0])];
    const entries = await Promise.all(columns.map(entryOf));
    box.append(h("div", { class: "side-by-side" }, columns.map((shown, i) => {
      const entry = entries[i];
      const model = shown.slice(0, shown.indexOf(":"));
      const rest = i === 0 ? [] : byModel.get(model).filter((k) => k !== shown);
      return h("div", { "data-model": model },
        h("h4", {}, model, ": ", i === 0 ? h("span", { text: entry.identity.name }) : link(shown)),
        h("p", { text: entry.identity.desc || "" }),
        entry.bindings.c && entry.bindings.c.signature ? h("pre", { class: "signature", text: entry.bindings.c.signature }) : null,
        h("p", {}, `blocking: ${entry.execution.blocking}, collective: ${entry.execution.collective}`),
        rest.length ? h("details", {}, h("summary", { text: `${rest.length} more in ${model}` }),
          h("p", {}, rest.map((k, j) => [j ? ", " : "", link(k)]))) : null);
    })));
    return box;
  }
  function provenanceTable(records) {
    return h("section", { id: "sec-provenance" }, h("h3", { text: "provenance" }),
      h("p", { class: "schema-desc", text: "Where each value came from: the stage that set it, how (source, rule or curated) and the source note. A value without a record of its own takes its nearest enclosing record's." }),
      h("table", {}, h("tr", {}, ["pointer", "stage", "method", "from"].map((n) => h("th", { text: n }))),
        Object.entries(records).map(([pointer, record]) => h("tr", {},
          h("td", { class: "field", text: pointer || "(entry)" }), h("td", { text: record.stage }),
          h("td", {}, h("span", { class: `prov prov-${record.method}`, text: record.method })),
          h("td", { text: record.from })))));
  }
  async function openEntry(key) {
    const row = state.byKey.get(key);
    const [entry, records] = await Promise.all([entryOf(key), provenanceOf(key)]);
    const view = $("#entry");
    const identity = entry.identity;
    const badges = [h("span", { class: "badge", text: identity.model }),
      identity.api_group ? h("span", { class: "badge", text: `group ${identity.api_group}` }) : null,
      entry.execution.blocking ? h("span", { class: "badge", text: "blocking" }) : null,
      entry.execution.collective ? h("span", { class: "badge", text: "collective" }) : null,
      identity.deprecated_in ? h("span", { class: "badge deprecated", text: `deprecated in ${identity.deprecated_in}` }) : null];
    const signature = entry.bindings.c && entry.bindings.c.signature;
    view.replaceChildren(
      h("h2", { text: identity.name }), h("div", { class: "key", text: key }), h("p", {}, badges),
      h("p", { class: "desc", text: identity.desc || "" }),
      h("section", { id: "sec-signature" }, h("h3", { text: "C signature" }),
        signature ? h("pre", { class: "signature", text: signature }) : notApplicable()),
      ...Object.keys(state.schema.entry.props).map((name) => section(name, entry, records)),
      await equivalentsView(key), provenanceTable(records));
    view.dataset.key = key;
    show("#entry");
    state.openedAt = performance.now();
    document.title = `${row.name} — usis explorer`;
    for (const a of document.querySelectorAll("#results a")) a.classList.toggle("current", a.dataset.key === key);
    window.scrollTo(0, 0);
  }

  /* -- the diff view ----------------------------------------------------------------------- */
  function openDiff() {
    const d = state.diff;
    const view = $("#diff");
    if (!d) {
      view.replaceChildren(h("p", { text: "This site was written without --diff." }));
      show("#diff");
      return;
    }
    const keys = (list) => list.length ? h("p", {}, list.map((k, i) => [i ? ", " : "", isKey(k) ? link(k) : k])) : h("p", { class: "na", text: "none" });
    const changed = Object.entries(d.changed);
    view.replaceChildren(
      h("h2", { text: `changes since ${d.against}` }),
      h("p", { id: "diff-summary", text: `${d.added.length} added, ${d.removed.length} removed, ${changed.length} changed` }),
      h("h3", { text: "added" }), keys(d.added), h("h3", { text: "removed" }), keys(d.removed),
      h("h3", { text: "changed" }),
      ...changed.map(([key, fields]) => h("details", { "data-key": key }, h("summary", {}, link(key), ` (${fields.length} field${fields.length === 1 ? "" : "s"})`),
        h("table", { class: "changed" }, h("tr", {}, ["field", "old", "new"].map((n) => h("th", { text: n }))),
          fields.map(([path, before, after]) => h("tr", {}, h("td", { class: "field", text: path }),
            h("td", { text: JSON.stringify(before) }), h("td", { text: JSON.stringify(after) })))))));
    show("#diff");
  }

  /* -- routing ----------------------------------------------------------------------------- */
  function show(selector) {
    for (const id of ["#welcome", "#entry", "#diff"]) $(id).hidden = id !== selector;
  }
  function route() {
    const target = decodeURIComponent(location.hash.slice(1));
    if (target === "diff") return openDiff();
    if (state.byKey.has(target)) return openEntry(target).catch((error) => {
      $("#welcome").textContent = String(error);
      show("#welcome");
    });
    $("#welcome").textContent = target
      ? `No entry ${target} in this corpus; search for it on the left.`
      : `${state.rows.length} entries of ${state.models.join(", ")}. Search, filter, and open an entry; an address such as index.html#mpi:mpi_bcast opens it directly.`;
    show("#welcome");
    return undefined;
  }
  function start() {
    const groups = [...new Set(state.rows.map((row) => row.group).filter(Boolean))].sort();
    $("#filter-group").append(...groups.map((group) => h("option", { value: group, text: group })));
    $("#search").addEventListener("input", renderList);
    for (const select of document.querySelectorAll("#filters select")) select.addEventListener("change", renderList);
    $("#more").addEventListener("click", showMore);
    window.addEventListener("hashchange", route);
    renderList();
    route();
    state.readyAt = performance.now();
    document.body.dataset.ready = "1";
  }

  return { index, chunk, schema, diff, start, state, equivalentsOf, provenanceOf, recordFor, entryOf };
})();

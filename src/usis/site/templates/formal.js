/* An entry's formal block as a picture of who sends what to whom: one column per participant
   instance (three drawn for a participant of many: the first, the second, the last), one row per
   data-flow access with its buffer and slice, and an arrow from each value's source access to
   the access that writes or combines it: within one instance for a structural source, from every
   instance where the source's scope is all participant instances (gathered, reduced). */
"use strict";

const USIS_FORMAL = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLUMN = 170, ROW = 66, TOP = 96, LEFT = 16, BOX_W = 150, BOX_H = 42, LABEL = 26;
  const MANY = ["first", "second", "last"];

  function el(tag, attributes, text) {
    const node = document.createElementNS(NS, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  /* Text cut to fit a box, the whole of it in a tooltip. */
  function text(attributes, value) {
    const shown = value.length > LABEL ? value.slice(0, LABEL - 1) + "…" : value;
    const node = el("text", attributes, shown);
    node.append(el("title", {}, value));
    return node;
  }
  const short = (ref) => (typeof ref === "string" ? ref.replace(/param:/g, "") : "");
  function slice(access) {
    const parts = [];
    const extent = access.extent;
    if (extent) {
      parts.push(extent.count_ref ? `${short(extent.count_ref)} × ${short(extent.datatype_ref) || "bytes"}`
        : Object.values(extent).filter((v) => typeof v === "string").map(short).join(" × "));
    }
    const offset = access.offset || (access.source && access.source.placement_offset);
    if (offset) parts.push(`at ${short(String(offset))}`);
    return parts.join(" ");
  }

  function picture(formal) {
    const participants = new Map(formal.participants.map((p) => [p.id, p]));
    const combined = formal.data_flow.some((a) => !participants.has(a.participant));
    // The columns: every instance of every participant, then one for accesses of no participant.
    const columns = [];
    for (const p of formal.participants) {
      const count = p.cardinality === "many" ? MANY.length : 1;
      for (let i = 0; i < count; i += 1) columns.push({ participant: p.id, instance: i, label: count > 1 ? MANY[i] : "" });
    }
    if (combined) columns.push({ participant: null, instance: 0, label: "" });
    const width = LEFT * 2 + columns.length * COLUMN;
    const height = TOP + Math.max(1, formal.data_flow.length) * ROW + 12;
    const svg = el("svg", { class: "formal", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    const defs = el("defs", {});
    const marker = el("marker", { id: "usis-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#0969da" }));
    defs.append(marker);
    svg.append(defs);
    const left = (column) => LEFT + columns.indexOf(column) * COLUMN;

    for (const column of columns) {
      const x = left(column);
      const p = participants.get(column.participant);
      svg.append(el("rect", { class: "participant", "data-participant": column.participant || "", x, y: 8, width: BOX_W, height: 50, rx: 5,
        fill: p ? "#ddf4ff" : "#f6f8fa", stroke: p ? "#0969da" : "#8c959f" }));
      if (p) {
        svg.append(text({ x: x + 7, y: 25, "font-weight": 600, "font-size": 12 }, `${p.id}${column.label ? ` (${column.label})` : ""}`));
        svg.append(text({ x: x + 7, y: 39, "font-size": 10.5, fill: "#57606a" }, `${p.role_kind}, ${p.cardinality}`));
        svg.append(text({ x: x + 7, y: 52, "font-size": 10.5, fill: "#57606a" }, short(p.selector || "")));
      } else {
        svg.append(text({ x: x + 7, y: 30, "font-size": 11.5, fill: "#57606a" }, "across participants"));
      }
      svg.append(el("line", { x1: x + BOX_W / 2, y1: 58, x2: x + BOX_W / 2, y2: height - 6, stroke: "#d0d7de", "stroke-dasharray": "4 4" }));
    }

    // Where each access is drawn: one box per instance of its participant.
    const boxes = new Map();
    formal.data_flow.forEach((access, row) => {
      const owner = participants.has(access.participant) ? access.participant : null;
      const top = TOP + row * ROW;
      const fill = { read: "#fff8c5", write: "#dafbe1", reduce: "#fbefff", read_modify_write: "#ffebe9" }[access.op] || "#fff";
      boxes.set(access.id, []);
      for (const column of columns.filter((c) => c.participant === owner)) {
        const x = left(column);
        boxes.get(access.id).push({ x, top, instance: column.instance, participant: owner });
        const group = el("g", { class: "access", "data-id": access.id, "data-participant": owner || "" });
        group.append(el("rect", { x, y: top, width: BOX_W, height: BOX_H, rx: 4, fill, stroke: "#57606a" }));
        group.append(text({ x: x + 7, y: top + 16, "font-size": 11.5, "font-weight": 600 }, `${access.op} ${short(access.buffer)}`.trim()));
        group.append(text({ x: x + 7, y: top + 32, "font-size": 10, fill: "#57606a" }, slice(access) || access.id));
        svg.append(group);
      }
    });

    function arrow(from, to, label) {
      const sameColumn = from.x === to.x;
      let d;
      if (sameColumn) {
        const bend = from.x + BOX_W + 14;
        d = `M${from.x + BOX_W},${from.top + BOX_H / 2} C${bend},${from.top + BOX_H / 2} ${bend},${to.top + BOX_H / 2} ${to.x + BOX_W},${to.top + BOX_H / 2}`;
      } else {
        d = `M${from.x + BOX_W / 2},${from.top + BOX_H} L${to.x + BOX_W / 2},${to.top}`;
      }
      const path = el("path", { class: "flow", d, fill: "none", stroke: "#0969da", "stroke-width": 1.3, "marker-end": "url(#usis-arrow)", opacity: 0.8 });
      path.append(el("title", {}, label));
      svg.append(path);
    }
    for (const access of formal.data_flow) {
      // A value that arrives through a matched event (a message) comes from outside the call's
      // own accesses: a dashed arrow in from the side, named by its event.
      if (access.source && !access.source.ref && access.source.via) {
        for (const target of boxes.get(access.id) || []) {
          const y = target.top + BOX_H / 2;
          const start = target.x + BOX_W + 56;
          const path = el("path", { class: "flow matched", d: `M${start},${y} L${target.x + BOX_W},${y}`, fill: "none", stroke: "#0969da", "stroke-dasharray": "3 3", "stroke-width": 1.3, "marker-end": "url(#usis-arrow)" });
          path.append(el("title", {}, `${access.source.kind} via ${access.source.via}`));
          svg.append(path);
          svg.append(text({ x: target.x + BOX_W + 2, y: y - 5, "font-size": 9.5, fill: "#0969da" }, access.source.kind));
        }
      }
      const sources = [];
      if (access.source && access.source.ref) sources.push({ ref: access.source.ref, scope: access.source.scope, kind: access.source.kind });
      for (const input of access.inputs || []) sources.push({ ref: input.ref, scope: input.scope, kind: access.op });
      for (const source of sources) {
        const from = boxes.get(source.ref) || [];
        const to = boxes.get(access.id) || [];
        const everyInstance = source.scope === "all_participant_instances";
        for (const target of to) {
          for (const origin of from) {
            // A structural source between instances of one participant stays in its instance.
            const same = origin.participant === target.participant;
            if (!everyInstance && same && origin.instance !== target.instance) continue;
            arrow(origin, target, `${source.kind}: ${source.ref} → ${access.id}`);
          }
        }
      }
    }
    return svg;
  }

  return { picture };
})();

// The judge's results page: reads /health, /offers, /grades, /leaderboard and /grades/{id},
// renders one view per address (#leaderboard, #grades, #tasks, #grade/ID) and polls /grades so
// that new grades (and the leaderboard they change) appear without a reload. A grade's view plots
// its timing pairs as inline SVG. Every value from the judge is written as text, never as markup.
"use strict";

const HB = {
  state: { newestId: null, polls: 0, grades: [], boards: [], offers: [], judge: null },
  pollMs: 2000,
};

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function getJson(path) {
  const answer = await fetch(path, { headers: { accept: "application/json" } });
  const body = await answer.json();
  if (!answer.ok) throw new Error(`${path}: ${body.detail || answer.status}`);
  return body;
}

function table(header, rows, rowClass) {
  return el("table", {},
    el("thead", {}, el("tr", {}, header.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((row, index) =>
      el("tr", rowClass ? { class: rowClass(index) } : {}, row.map((cell) =>
        cell instanceof Node ? el("td", {}, cell)
          : el("td", typeof cell === "number" ? { class: "number" } : {}, cell))))));
}

// hb.metrics' Estimate: the value, or "n too small" with the count and the minimum.
function shown(estimate) {
  if (!estimate) return "-";
  if (estimate.value === null) return `n too small (${estimate.n} < ${estimate.minimum})`;
  return Number(estimate.value).toPrecision(3).replace(/\.?0+$/, "");
}

// hb.metrics' Estimate with the geomeans of its tasks' bounds, where they differ from it.
function shownInterval(estimate) {
  if (!estimate || estimate.value === null || estimate.low == null || estimate.high == null
    || (estimate.low === estimate.value && estimate.high === estimate.value)) {
    return shown(estimate);
  }
  return `${shown(estimate)} [${shown({ ...estimate, value: estimate.low })}, `
    + `${shown({ ...estimate, value: estimate.high })}]`;
}

// A grade's 95% interval of its speedup: the answer's speedup_ci, or a row's two columns.
function intervalOf(grade) {
  if (Array.isArray(grade.speedup_ci)) return grade.speedup_ci.map(Number);
  if (grade.speedup_ci_low == null || grade.speedup_ci_high == null) return null;
  return [Number(grade.speedup_ci_low), Number(grade.speedup_ci_high)];
}

function precise(value) {
  return Number(value).toPrecision(3);
}

function speedupText(grade) {
  const interval = grade.correct ? intervalOf(grade) : null;
  const text = precise(grade.speedup) + (interval ? ` [${interval.map(precise).join(", ")}]` : "");
  if (grade.suspect) return el("span", { class: "suspect" }, `${text} (suspect)`);
  return grade.noisy ? el("span", {}, `${text} `, el("span", { class: "noisy" }, "noisy")) : text;
}

function operationsOf(requestText) {
  if (!requestText) return "-";
  const request = JSON.parse(requestText);
  const names = ((request.startup || {}).load || []).map((lib) => `load ${lib}`);
  for (const operation of request.operations || []) names.push(operation.action);
  return names.join(", ") || "-";
}

function gradeLink(id) {
  return el("a", { href: `#grade/${id}` }, `#${id}`);
}

// -- the views -------------------------------------------------------------------------------

const TRACKS = ["scientific_computing", "loop_level", "machine_learning"];
const FAST_P = ["0", "1", "1.5", "2", "4"];

function renderLeaderboard() {
  const view = document.getElementById("leaderboard");
  const parts = [el("h2", {}, "Leaderboard")];
  if (HB.state.boards.length === 0) {
    parts.push(el("p", { class: "empty" }, "No grades recorded yet."));
  }
  for (const board of HB.state.boards) {
    parts.push(el("h3", { "data-experiment": board.experiment },
      `Experiment ${board.experiment || "(none)"}`));
    parts.push(table(
      ["agent / setup", "tasks", "grades", "suspect", "noisy", "correct rate",
        ...TRACKS.map((t) => `geomean ${t.replace("_", " ")}`), "geomean overall",
        ...FAST_P.map((p) => `fast_${p}`), "conversion overhead per request kind", "judges"],
      board.groups.map((group) => [
        group.label, group.tasks, group.grades, group.suspect, group.noisy,
        shown(group.correct_rate), ...TRACKS.map((t) => shownInterval(group.geomean_speedup[t])),
        shownInterval(group.geomean_speedup.overall),
        ...FAST_P.map((p) => shown(group.fast_p[p])),
        Object.entries(group.conversion_share).map(([kind, e]) => `${kind}: ${shown(e)}`)
          .join("; ") || "-",
        group.judges.join(", ") || "-",
      ])));
    if (board.paired.length) {
      parts.push(table(
        ["a", "b", "paired tasks", "only a correct", "only b correct", "McNemar p",
          "both correct", "median speedup a/b", "Wilcoxon p"],
        board.paired.map((test) => [
          test.a, test.b, test.paired_tasks, test.a_only_correct, test.b_only_correct,
          shown(test.mcnemar_p), test.both_correct,
          test.median_speedup_ratio === null ? "-" : Number(test.median_speedup_ratio).toPrecision(3),
          shown(test.wilcoxon_p),
        ])));
    }
  }
  view.replaceChildren(...parts);
}

function renderGrades() {
  const view = document.getElementById("grades");
  const grades = HB.state.grades;
  view.replaceChildren(
    el("h2", {}, "Recent grades"),
    grades.length === 0 ? el("p", { class: "empty" }, "No grades recorded yet.")
      : table(
        ["grade", "kernel", "preset", "datatype", "route", "correct", "speedup [95% CI]",
          "requests", "agent / setup", "judge", "when"],
        grades.map((g) => [
          gradeLink(g.id), g.kernel, g.preset, g.datatype, g.route, g.correct ? "yes" : "no",
          speedupText(g), operationsOf(g.requests),
          `${g.agent_id || "-"} / ${g.setup || "-"}`, g.judge_id || "-", g.created_at,
        ]),
        (index) => (grades[index].correct ? "" : "incorrect")));
}

function renderTasks() {
  const view = document.getElementById("tasks");
  view.replaceChildren(
    el("h2", {}, `Tasks (${HB.state.offers.length})`),
    table(["kernel", "track", "precision", "offer", "summary"],
      HB.state.offers.map((t) => [
        t.kernel, t.track, t.precision, t.offer.split(",").join(", ") || "(none)", t.summary,
      ])));
}

// Round steps for an axis from `low` to `high`: about `count` of them.
function ticks(low, high, count) {
  const raw = (high - low) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const values = [];
  for (let v = Math.ceil(low / step) * step; v <= high + step * 1e-9; v += step) {
    values.push(Number(v.toPrecision(12)));
  }
  return values;
}

// The grade's pair ratios (baseline / submission, one dot per pair in pair order) over its 95%
// interval (the band) and its estimate (the line); a grade without ratios (a hidden one) shows
// its interval and estimate alone. Null where there is neither.
function ratioPlot(grade) {
  const ratios = ((grade.timing || {}).ratios || []).map(Number);
  const interval = grade.correct ? intervalOf(grade) : null;
  if (!ratios.length && !interval) return null;
  const estimate = Number(grade.measured_speedup || grade.speedup);
  const size = { width: 560, height: 230, left: 46, right: 96, top: 30, bottom: 44 };
  const plotWidth = size.width - size.left - size.right;
  const plotHeight = size.height - size.top - size.bottom;
  const values = [...ratios, ...(interval || []), estimate].filter((v) => Number.isFinite(v));
  let [low, high] = [Math.min(...values), Math.max(...values)];
  const pad = (high - low) * 0.12 || Math.abs(high) * 0.05 || 0.1;
  [low, high] = [Math.max(0, low - pad), high + pad];
  const y = (v) => size.top + ((high - v) / (high - low)) * plotHeight;
  const x = (i) => size.left + ((i + 0.5) / ratios.length) * plotWidth;
  const right = size.left + plotWidth;
  const parts = [];
  for (const tick of ticks(low, high, 4)) {
    parts.push(svg("line", { x1: size.left, x2: right, y1: y(tick), y2: y(tick), class: "grid" }),
      svg("text", { x: size.left - 6, y: y(tick) + 4, "text-anchor": "end" }, tick));
  }
  if (low <= 1 && 1 <= high) {
    parts.push(svg("line", { x1: size.left, x2: right, y1: y(1), y2: y(1), class: "parity" }));
    if (Math.abs(y(1) - y(estimate)) >= 12) {  // else the estimate's label would cover it
      parts.push(svg("text", { x: right + 6, y: y(1) + 4, class: "small" }, "1 = baseline"));
    }
  }
  if (interval) {
    parts.push(svg("rect", {
      x: size.left, width: plotWidth, y: y(interval[1]),
      height: Math.max(1, y(interval[0]) - y(interval[1])), class: "band",
    }));
  }
  parts.push(svg("line", { x1: size.left, x2: right, y1: y(estimate), y2: y(estimate),
    class: "estimate" }),
  svg("text", { x: right + 6, y: y(estimate) + 4, class: "estimate-label" },
    `estimate ${precise(estimate)}`));
  ratios.forEach((ratio, i) => parts.push(
    svg("circle", { cx: x(i), cy: y(ratio), r: 3, class: "pair" },
      svg("title", {}, `pair ${i + 1}: ${precise(ratio)}`))));
  parts.push(svg("rect", { x: size.left, y: size.top, width: plotWidth, height: plotHeight,
    class: "frame" }));
  const pairs = Number((grade.timing || {}).pairs || ratios.length);
  const counted = pairs === ratios.length ? "" : `, ${pairs} in the estimate`;
  const title = ratios.length
    ? `speedup per pair, baseline / submission (${ratios.length} pairs${counted})`
    : "hidden inputs: the interval and estimate only, no pairs shown";
  parts.push(svg("text", { x: size.left, y: 16, class: "title" }, title));
  const legend = [
    interval ? `band: 95% interval [${interval.map(precise).join(", ")}]` : "no interval",
    `line: estimate ${precise(estimate)}`,
  ];
  if (ratios.length) legend.unshift("dots: pairs in order");
  parts.push(svg("text", { x: size.left, y: size.height - 22, class: "small" },
    legend.join("  ·  ")));
  if (grade.noisy) {
    parts.push(svg("text", { x: size.left, y: size.height - 6, class: "noisy" },
      `noisy: the interval is wider than the judge allows; credited ${precise(grade.speedup)}, `
      + "its lower bound"));
  }
  return svg("svg", {
    class: "ratio-plot", viewBox: `0 0 ${size.width} ${size.height}`, role: "img",
    "aria-label": title,
  }, parts);
}

function repsText(text) {
  return text ? String(text).split(",").join(", ") : "-";
}

async function renderGrade(id) {
  const view = document.getElementById("grade");
  view.dataset.id = "";
  let grade;
  try {
    grade = await getJson(`/grades/${encodeURIComponent(id)}`);
  } catch (error) {
    view.replaceChildren(el("h2", {}, `Grade ${id}`), el("p", { class: "empty" }, error.message));
    view.dataset.id = String(id);
    return;
  }
  const fields = [
    ["kernel", grade.kernel], ["preset", grade.preset], ["datatype", grade.datatype],
    ["language", grade.language], ["route", grade.route], ["correct", grade.correct ? "yes" : "no"],
    ["detail", grade.detail || "-"], ["source sha256", grade.source_sha256 || "-"],
    ["native_ns", grade.native_ns], ["baseline_ns", grade.baseline_ns],
    ["speedup [95% CI]", speedupText(grade)], ["measured speedup", grade.measured_speedup],
    ["pairs", (grade.timing || {}).pairs ?? grade.pairs ?? "-"],
    ["convert_in_ns", grade.convert_in_ns], ["convert_out_ns", grade.convert_out_ns],
    ["rep times (ns)", repsText(grade.rep_ns)],
    ["baseline rep times (ns)", repsText(grade.baseline_rep_ns)],
    ["max relative error", grade.max_rel_error ?? "-"],
    ["precision override", grade.precision_override || "-"],
    ["protections", grade.protections || "-"],
    ["agent", `${grade.agent_id || "-"} (round ${grade.agent_round ?? "-"})`],
    ["experiment / setup", `${grade.experiment || "-"} / ${grade.setup || "-"}`],
    ["judge", grade.judge_id || "-"], ["machine", grade.machine || "-"],
    ["regrade of", grade.of_grade_id ? gradeLink(grade.of_grade_id) : "-"],
    ["recorded", grade.created_at],
  ];
  const request = grade.requests ? JSON.stringify(JSON.parse(grade.requests), null, 2) : "";
  const plot = ratioPlot(grade);
  view.replaceChildren(
    el("h2", {}, `Grade ${grade.id}`),
    el("div", { class: "columns" },
      el("div", { class: "fields" }, table(["field", "value"], fields)),
      el("div", { class: "side" },
    plot ? el("h3", {}, "Speedup per pair") : null,
    plot ? el("figure", { id: "grade-plot" }, plot) : null,
    el("h3", {}, "Request"),
    request ? el("pre", { id: "grade-request" }, request)
      : el("p", { class: "empty" }, "No request: the default layouts."),
    grade.request_rows.length ? table(["position", "kind", "name", "array", "entry"],
      grade.request_rows.map((r) => [r.position, r.kind, r.name, r.array || "-", r.entry])) : null,
    el("h3", {}, "Parallel-programming calls"),
    grade.ppm_calls.length ? table(["call", "model", "usis key"],
      grade.ppm_calls.map((c) => [c.name, c.model || "-", c.key || "-"]))
      : el("p", { class: "empty" }, "None read from the object."),
    el("h3", {}, "Findings"),
    grade.findings.length ? table(["kind", "message"],
      grade.findings.map((f) => [f.kind, f.message]))
      : el("p", { class: "empty" }, "None."))),
  );
  view.dataset.id = String(grade.id);
}

// -- addresses and polling -------------------------------------------------------------------

function route() {
  const address = location.hash.replace(/^#/, "") || "leaderboard";
  const [name, id] = address.split("/");
  const view = ["leaderboard", "grades", "tasks", "grade"].includes(name) ? name : "leaderboard";
  for (const section of document.querySelectorAll(".view")) {
    section.classList.toggle("shown", section.id === view);
  }
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("current", link.getAttribute("href") === `#${view}`);
  }
  if (view === "grade") return renderGrade(id);
  return Promise.resolve();
}

async function refresh() {
  const grades = await getJson("/grades?limit=50");
  const newest = grades.length ? grades[0].id : null;
  if (newest !== HB.state.newestId || HB.state.polls === 0) {
    HB.state.grades = grades;
    HB.state.boards = await getJson("/leaderboard");
    HB.state.newestId = newest;
    renderGrades();
    renderLeaderboard();
  }
  HB.state.polls += 1;
  document.getElementById("updated").textContent =
    `updated ${new Date().toLocaleTimeString()}`;
}

async function start() {
  const [judge, offers] = await Promise.all([getJson("/health"), getJson("/offers")]);
  HB.state.judge = judge;
  HB.state.offers = offers;
  document.getElementById("judge").textContent = `${judge.judge_id} on ${judge.machine}`;
  renderTasks();
  await refresh();
  await route();
  window.addEventListener("hashchange", route);
  document.body.dataset.ready = "1";
  setInterval(() => refresh().catch((error) => {
    document.getElementById("updated").textContent = `not updated: ${error.message}`;
  }), HB.pollMs);
}

start().catch((error) => {
  document.querySelector("main").replaceChildren(el("p", { class: "empty" }, error.message));
  document.body.dataset.ready = "error";
});

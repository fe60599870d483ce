// The judge's results page: reads /health, /offers, /grades, /leaderboard and /grades/{id},
// renders one view per address (#leaderboard, #grades, #tasks, #grade/ID) and polls /grades so
// that new grades (and the leaderboard they change) appear without a reload. Every value from
// the judge is written as text, never as markup.
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

function speedupText(grade) {
  const text = Number(grade.speedup).toPrecision(3);
  return grade.suspect ? el("span", { class: "suspect" }, `${text} (suspect)`) : text;
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
      ["agent / setup", "tasks", "grades", "suspect", "correct rate",
        ...TRACKS.map((t) => `geomean ${t.replace("_", " ")}`), "geomean overall",
        ...FAST_P.map((p) => `fast_${p}`), "conversion overhead per request kind", "judges"],
      board.groups.map((group) => [
        group.label, group.tasks, group.grades, group.suspect, shown(group.correct_rate),
        ...TRACKS.map((t) => shown(group.geomean_speedup[t])), shown(group.geomean_speedup.overall),
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
        ["grade", "kernel", "preset", "datatype", "route", "correct", "speedup", "requests",
          "agent / setup", "judge", "when"],
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
    ["speedup", speedupText(grade)], ["measured speedup", grade.measured_speedup],
    ["convert_in_ns", grade.convert_in_ns], ["convert_out_ns", grade.convert_out_ns],
    ["rep times (ns)", grade.rep_ns || "-"], ["max relative error", grade.max_rel_error ?? "-"],
    ["precision override", grade.precision_override || "-"],
    ["protections", grade.protections || "-"],
    ["agent", `${grade.agent_id || "-"} (round ${grade.agent_round ?? "-"})`],
    ["experiment / setup", `${grade.experiment || "-"} / ${grade.setup || "-"}`],
    ["judge", grade.judge_id || "-"], ["machine", grade.machine || "-"],
    ["regrade of", grade.of_grade_id ? gradeLink(grade.of_grade_id) : "-"],
    ["recorded", grade.created_at],
  ];
  const request = grade.requests ? JSON.stringify(JSON.parse(grade.requests), null, 2) : "";
  view.replaceChildren(
    el("h2", {}, `Grade ${grade.id}`),
    el("div", { class: "columns" }, el("div", {}, table(["field", "value"], fields)), el("div", {},
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

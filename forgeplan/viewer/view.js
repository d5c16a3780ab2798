// forgeplan view: the samples of one evaluate run, filtered, and one opened step by step.
// Everything from the run is data read with JSON.parse and shown through text nodes (never as markup).
"use strict";

const DATA = JSON.parse(document.getElementById("data").textContent);
const FAULT = "#d62728";
const FILTERS = [["f-verdict", r => [r.verdict]], ["f-category", r => [r.category || "(none)"]],
                 ["f-assembly", r => [r.assembly_id]],
                 ["f-fault", r => (r.fault_types.length ? r.fault_types : ["(no fault)"])]];
const NORMALS = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];
const CORNERS = [
  [[1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1]], [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 0]],
  [[0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 1, 0]], [[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]],
  [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], [[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0]]];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// ------------------------------------------------------------------ the list and its filters

function matches(row, except) {
  return FILTERS.every(([id, values]) => {
    if (id === except) return true;
    const want = document.getElementById(id).value;
    return want === "" || values(row).includes(want);
  });
}

function refreshFilters() {
  const rows = DATA.samples.map(s => s.row);
  for (const [id, values] of FILTERS) {
    const select = document.getElementById(id);
    const chosen = select.value;
    const counts = new Map();
    for (const r of rows) for (const v of values(r)) counts.set(v, (counts.get(v) || 0) + (matches(r, id) ? 1 : 0));
    const all = rows.filter(r => matches(r, id)).length;
    select.replaceChildren(el("option", {value: ""}, `(all) ${all}`));
    for (const v of [...counts.keys()].sort()) {
      const option = el("option", {value: v}, `${v} (${counts.get(v)})`);
      if (v === chosen) option.selected = true;
      select.append(option);
    }
  }
}

function refreshList() {
  refreshFilters();
  const body = document.querySelector("#list tbody");
  const shown = DATA.samples.filter(s => matches(s.row));
  body.replaceChildren(...shown.map(s => {
    const r = s.row;
    const tr = el("tr", {},
      el("td", {}, r.sample_id), el("td", {}, r.assembly_id), el("td", {}, r.fault_types.join(", ") || "(no fault)"),
      el("td", {class: `verdict-${r.verdict}`}, r.verdict), el("td", {}, r.category || ""),
      el("td", {}, r.failing_step == null ? "" : r.failing_step));
    tr.dataset.sample = r.sample_id;
    tr.addEventListener("click", () => open(s, tr));
    return tr;
  }));
  document.getElementById("shown").textContent = `${shown.length} of ${DATA.samples.length} samples`;
}

// ------------------------------------------------------------------ pictures

function camera(scene) {
  const e = scene.elev * Math.PI / 180, a = scene.azim * Math.PI / 180, alt = 65 * Math.PI / 180;
  return {eye: [Math.cos(e) * Math.cos(a), Math.cos(e) * Math.sin(a), Math.sin(e)],
          right: [-Math.sin(a), Math.cos(a), 0],
          up: [-Math.sin(e) * Math.cos(a), -Math.sin(e) * Math.sin(a), Math.cos(e)],
          sun: [Math.cos(alt) * Math.cos(a), Math.cos(alt) * Math.sin(a), Math.sin(alt)]};
}

const dot = (p, q) => p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
const toPlot = p => [p[0], -p[2], p[1]];   // scene (x, y, z) -> plot (x, -z, y): y is drawn up

function place(part, pose, p) {   // a point of a part (scene units) under its pose
  const c = part.centroid, d = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
  const r = pose.length > 3 ? [dot(pose.slice(3, 6), d), dot(pose.slice(6, 9), d), dot(pose.slice(9, 12), d)] : d;
  return [r[0] + c[0] + pose[0], r[1] + c[1] + pose[1], r[2] + c[2] + pose[2]];
}

function turn(pose, n) {
  return pose.length > 3 ? [dot(pose.slice(3, 6), n), dot(pose.slice(6, 9), n), dot(pose.slice(9, 12), n)] : n;
}

function bounds(scene, cam, states) {
  let lo = [Infinity, Infinity], hi = [-Infinity, -Infinity];
  for (const poses of states) {
    poses.forEach((pose, k) => {
      const part = scene.parts[k];
      if (!pose) pose = [0, 0, 0];
      const f = part.faces;
      for (let i = 0; i < f.length; i += 16) {
        const q = toPlot(place(part, pose, [f[i] + 0.5, f[i + 1] + 0.5, f[i + 2] + 0.5]));
        const x = dot(q, cam.right), y = -dot(q, cam.up);
        lo = [Math.min(lo[0], x), Math.min(lo[1], y)];
        hi = [Math.max(hi[0], x), Math.max(hi[1], y)];
      }
    });
  }
  return {lo: [lo[0] - 1.2, lo[1] - 1.2], hi: [hi[0] + 1.2, hi[1] + 1.2]};
}

function shade(hex, s, alpha) {
  const n = parseInt(hex.slice(1), 16);
  const c = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map(v => Math.round(v * s));
  return `rgba(${c[0]},${c[1]},${c[2]},${alpha})`;
}

// draw one state: poses per part (null: absent); `marked` part indices outlined (red when `red`)
function draw(canvas, scene, poses, box, marked, red, ghosts) {
  const cam = camera(scene), ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height;
  const scale = Math.min(w / (box.hi[0] - box.lo[0]), h / (box.hi[1] - box.lo[1]));
  const ox = (w - scale * (box.hi[0] - box.lo[0])) / 2, oy = (h - scale * (box.hi[1] - box.lo[1])) / 2;
  const screen = q => [ox + (dot(q, cam.right) - box.lo[0]) * scale, oy + (-dot(q, cam.up) - box.lo[1]) * scale];
  const faces = [];
  poses.forEach((pose, k) => {
    const ghost = !pose && ghosts.includes(k);
    if (!pose && !ghost) return;
    const part = scene.parts[k], at = pose || part.shift;
    const f = part.faces;
    for (let i = 0; i < f.length; i += 4) {
      const n = toPlot(turn(at, NORMALS[f[i + 3]]));
      if (dot(n, cam.eye) <= 1e-9) continue;
      const pts = CORNERS[f[i + 3]].map(c => toPlot(place(part, at, [f[i] + c[0], f[i + 1] + c[1], f[i + 2] + c[2]])));
      const mid = pts.reduce((s, p) => [s[0] + p[0] / 4, s[1] + p[1] / 4, s[2] + p[2] / 4], [0, 0, 0]);
      faces.push({k, ghost, depth: dot(mid, cam.eye), pts: pts.map(screen), mid: screen(mid),
                  light: 0.45 + 0.55 * Math.max(0, dot(n, cam.sun))});
    }
  });
  faces.sort((a, b) => a.depth - b.depth);
  ctx.clearRect(0, 0, w, h);
  const owner = new Map(), cell = 6 * (window.devicePixelRatio || 1);
  for (const f of faces) {
    const part = scene.parts[f.k], hit = marked.includes(f.k);
    ctx.beginPath();
    f.pts.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
    ctx.closePath();
    ctx.fillStyle = f.ghost ? "rgba(214,39,40,0.12)" : shade(part.colour, f.light, 1);
    ctx.fill();
    ctx.lineWidth = hit || f.ghost ? 2 : part.lock ? 1.2 : 0.6;
    ctx.strokeStyle = hit || f.ghost ? (red || f.ghost ? FAULT : "#111") : part.lock ? "#000" : shade(part.colour, 0.5, 0.8);
    ctx.stroke();
    owner.set(`${Math.floor(f.mid[0] / cell)},${Math.floor(f.mid[1] / cell)}`, f);
  }
  labels(ctx, scene, owner, marked, red);
}

function labels(ctx, scene, owner, marked, red) {
  const seen = new Map();
  for (const f of owner.values()) (seen.get(f.k) || seen.set(f.k, []).get(f.k)).push(f.mid);
  ctx.font = `${10 * (window.devicePixelRatio || 1)}px system-ui, sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (const [k, pts] of seen) {
    const m = pts.reduce((s, p) => [s[0] + p[0] / pts.length, s[1] + p[1] / pts.length], [0, 0]);
    const p = pts.reduce((b, q) => (Math.hypot(q[0] - m[0], q[1] - m[1]) < Math.hypot(b[0] - m[0], b[1] - m[1]) ? q : b));
    const text = scene.parts[k].label, tw = ctx.measureText(text).width + 6, th = 14 * (window.devicePixelRatio || 1);
    ctx.fillStyle = "rgba(255,255,255,0.85)";
    ctx.fillRect(p[0] - tw / 2, p[1] - th / 2, tw, th);
    ctx.fillStyle = marked.includes(k) && red ? FAULT : "#111";
    ctx.fillText(text, p[0], p[1]);
  }
}

function picture(scene, poses, box, marked, red, ghosts) {
  const ratio = window.devicePixelRatio || 1;
  const canvas = el("canvas", {width: String(Math.round(230 * ratio)), height: String(Math.round(180 * ratio))});
  canvas.style.width = "230px";
  canvas.style.height = "180px";
  draw(canvas, scene, poses, box, marked, red, ghosts);
  return canvas;
}

// ------------------------------------------------------------------ one sample

function stepBox(canvas, head, lines, cls) {
  return el("div", {class: `step ${cls}`}, canvas, el("div", {class: "text"}, ...head, ...lines));
}

function planColumn(title, plan, sample, scene, box, isPrediction) {
  const col = el("div", {}, el("h3", {}, title));
  const faulty = sample.faulty || [];
  col.append(stepBox(picture(scene, plan.states[0], box, faulty, true, faulty),
                     [el("div", {class: "action"}, "0. actual state")],
                     faulty.length ? [el("div", {class: "changes"}, "faulty parts in red")] : [], ""));
  for (const s of plan.steps) {
    const cls = (s.legal ? "" : "failing") + (isPrediction && sample.divergence === s.step ? " diverges" : "");
    const poses = s.legal ? plan.states[s.step] : plan.states[s.step - 1];
    const canvas = picture(scene, poses, box, s.parts, !s.legal, []);
    if (!s.legal) canvas.dataset.failing = "1";
    const lines = s.legal ? s.changes.map(c => el("div", {class: "changes"}, c))
                          : [el("div", {class: "reason"}, `refused [${s.code}]: ${s.reason}`)];
    col.append(stepBox(canvas, [el("div", {class: "action"}, `${s.step}. ${s.text}`)], lines, cls));
  }
  if (plan.more) col.append(el("p", {class: "hint"}, `${plan.more} more steps not drawn (at most ${DATA.limits.steps} per plan)`));
  return col;
}

function legend(scene) {
  return el("div", {class: "legend"}, ...scene.parts.map(p => {
    const swatch = el("i");
    swatch.style.background = p.colour;
    return el("span", {}, swatch, p.label === p.id ? p.id : `${p.label}  ${p.id}`);
  }));
}

function open(sample, tr) {
  document.querySelectorAll("#list tr.open").forEach(x => x.classList.remove("open"));
  tr.classList.add("open");
  const r = sample.row, pane = document.getElementById("detail");
  const facts = el("div", {class: "facts"},
    el("span", {class: `verdict-${r.verdict}`}, r.verdict), el("span", {}, `category: ${r.category || "none"}`),
    el("span", {}, `failing step: ${r.failing_step == null ? "none" : r.failing_step}`),
    el("span", {}, `assembly: ${r.assembly_id}`), el("span", {}, `faults: ${r.fault_types.join(", ") || "none"}`),
    el("span", {}, `difficulty: ${r.difficulty}`), r.extracted ? el("span", {}, "JSON extracted from the answer") : "");
  const parts = [el("h2", {}, r.sample_id), facts,
                 el("div", {class: r.verdict === "correct" ? "why ok" : "why"}, r.reason || r.verdict)];
  if (sample.note) parts.push(el("p", {class: "hint"}, sample.note));
  const scene = sample.assembly ? DATA.assemblies[sample.assembly] : null;
  if (scene && sample.reference) {
    const states = [...sample.reference.states, ...(sample.prediction ? sample.prediction.states : [])];
    const box = bounds(scene, camera(scene), states);
    parts.push(legend(scene));
    if (sample.prediction) {
      parts.push(el("p", {class: "facts"}, sample.divergence == null ? "The prediction is the reference, action for action."
        : `The prediction leaves the reference at step ${sample.divergence} (marked orange).`));
    }
    const plans = el("div", {class: "plans"});
    plans.append(sample.prediction ? planColumn(`prediction (${sample.prediction.steps.length} steps)`, sample.prediction, sample, scene, box, true)
                                   : el("div", {}, el("h3", {}, "prediction"), el("p", {class: "hint"}, "no plan to draw")));
    plans.append(planColumn(`reference (${sample.reference.steps.length} steps)`, sample.reference, sample, scene, box, false));
    parts.push(plans);
  }
  parts.push(el("h3", {}, "raw output" + (sample.raw_cut ? " (cut)" : "")),
             el("pre", {class: "raw"}, r.raw_output == null ? "(none)" : r.raw_output));
  pane.replaceChildren(...parts);
  pane.scrollTop = 0;
}

// ------------------------------------------------------------------ start

function start() {
  const run = DATA.run, counts = run.counts || {};
  document.getElementById("run").textContent =
    `run ${run.folder} · benchmark ${run.bench} · split ${run.split ?? "?"} · ${DATA.samples.length} samples` +
    (counts.answered != null ? ` · ${counts.answered} answered` : "");
  for (const [id] of FILTERS) document.getElementById(id).addEventListener("change", refreshList);
  refreshList();
}

start();

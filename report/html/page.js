// patchbench HTML report. Every element showing data is built with
// textContent: model text is untrusted.
"use strict";
(async function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const meta = JSON.parse($("pb-meta").textContent);

  async function gunzip(b64) {
    let bytes;
    if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(b64.trim());
    else {
      const bin = atob(b64.trim());
      bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    }
    const s = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(s).text());
  }

  $("title").textContent = meta.title;
  $("summary").textContent = meta.n + " cases in " + meta.runs.length + " run" +
    (meta.runs.length > 1 ? "s" : "") + ": " + meta.runs.join(", ");

  // Charts: drawn after the table is usable; each container says how many
  // marks it drew (data-marks) or why it could not (data-error).
  const chartsDone = Promise.all(meta.charts.map(async (c, i) => {
    const box = el("div", "chart");
    box.id = "chart-" + i;
    box.appendChild(el("h3", "", c.title));
    const target = el("div");
    box.appendChild(target);
    $("charts").appendChild(box);
    try {
      const res = await vegaEmbed(target, c.spec, { renderer: "svg", actions: false });
      box.dataset.marks = String(target.querySelectorAll(".role-mark > *").length);
      return res;
    } catch (e) {
      box.dataset.error = String(e);
      console.error("chart " + c.title + ": " + e);
    }
  }));

  // Case table: rows[i] = [run index, ...columns].
  const rows = await gunzip($("pb-cases").textContent);
  const cols = ["run"].concat(meta.columns);
  const multiRun = meta.runs.length > 1;
  const shown = multiRun ? cols : cols.slice(1);
  const colIdx = (name) => cols.indexOf(name);
  const value = (r, c) => (c === 0 ? meta.runs[r[0]] : r[c]);

  // Filters.
  const filters = {};
  const filterCols = (multiRun ? ["run"] : []).concat(meta.filters);
  for (const f of filterCols) {
    const ci = colIdx(f);
    const vals = new Set();
    for (const r of rows) vals.add(value(r, ci));
    const sel = el("select");
    sel.id = "filter-" + f;
    sel.appendChild(el("option", "", "all " + f));
    sel.firstChild.value = "";
    for (const v of Array.from(vals).sort()) {
      const o = el("option", "", v === null ? "(none)" : v);
      o.value = String(v);
      sel.appendChild(o);
    }
    sel.addEventListener("change", () => { filters[f] = sel.value; update(); });
    $("controls").insertBefore(sel, $("count"));
  }
  const search = $("search");
  let searchTimer;
  search.addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(update, 150); });

  // Header and sorting.
  const thead = $("thead");
  let sortCol = -1, sortDir = 1;
  for (const c of shown) {
    const h = el("div", "", c);
    h.dataset.col = c;
    h.addEventListener("click", () => {
      const ci = colIdx(c);
      if (sortCol === ci) sortDir = -sortDir; else { sortCol = ci; sortDir = 1; }
      for (const x of thead.children) x.className = "";
      h.className = sortDir > 0 ? "asc" : "desc";
      update();
    });
    thead.appendChild(h);
  }
  sizeColumns();

  // sizeColumns makes each column as wide as its header (with room for the
  // sort mark) and its widest value, up to CAP pixels; only a longer value
  // is cut, with an ellipsis and the whole value in its tooltip. Columns
  // share what room is left; when they need more than the page has, the
  // table scrolls sideways. (Fixed shares cut "em_tolerant" and
  // "search-replace" short.)
  function sizeColumns() {
    const CAP = 360, PAD = 14, SAMPLE = 5000;
    const g = document.createElement("canvas").getContext("2d");
    const width = (font, text) => { g.font = font; return g.measureText(text).width; };
    const headFont = getComputedStyle(thead).font;
    const probe = el("div", "tr");
    probe.appendChild(el("div", "", "x"));
    $("tbody").appendChild(probe);
    const cellFont = getComputedStyle(probe.firstChild).font;
    probe.remove();
    const mark = width(headFont, " ▲");
    const step = Math.max(1, Math.floor(rows.length / SAMPLE));
    const px = shown.map((c) => {
      const ci = colIdx(c);
      let w = width(headFont, c) + mark;
      for (let i = 0; i < rows.length; i += step) w = Math.max(w, Math.min(CAP, width(cellFont, fmt(value(rows[i], ci)))));
      return Math.ceil(w + PAD);
    });
    $("table").style.setProperty("--cols", px.map((w) => "minmax(" + w + "px," + w + "fr)").join(" "));
    $("table").style.setProperty("--table-width", px.reduce((a, b) => a + b, 0) + "px");
  }

  let view = rows.map((_, i) => i);
  function update() {
    const q = search.value.trim().toLowerCase();
    const active = filterCols.filter((f) => filters[f]).map((f) => [colIdx(f), filters[f]]);
    view = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      let ok = true;
      for (const [ci, v] of active) if (String(value(r, ci)) !== v) { ok = false; break; }
      if (ok && q) {
        ok = false;
        for (let c = 0; c < cols.length; c++) {
          const v = value(r, c);
          if (v !== null && String(v).toLowerCase().includes(q)) { ok = true; break; }
        }
      }
      if (ok) view.push(i);
    }
    if (sortCol >= 0) {
      const c = sortCol, d = sortDir;
      const key = (i) => value(rows[i], c);
      view.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === y) return a - b;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        if (typeof x === "number" && typeof y === "number") return (x - y) * d;
        return (String(x) < String(y) ? -1 : 1) * d;
      });
    }
    $("count").textContent = view.length + " of " + rows.length + " cases";
    $("spacer").style.height = view.length * ROW + "px";
    drawn.clear();
    for (const n of Array.from(tbody.querySelectorAll(".tr"))) n.remove();
    draw();
  }

  // Virtual scrolling: only the rows in sight are in the document.
  const ROW = 24;
  const tbody = $("tbody");
  const drawn = new Map();
  let selected = -1;
  function fmt(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(3);
    return String(v);
  }
  function draw() {
    const first = Math.max(0, Math.floor(tbody.scrollTop / ROW) - 10);
    const last = Math.min(view.length, first + Math.ceil(tbody.clientHeight / ROW) + 20);
    for (const [pos, n] of drawn) if (pos < first || pos >= last) { n.remove(); drawn.delete(pos); }
    for (let pos = first; pos < last; pos++) {
      if (drawn.has(pos)) continue;
      const i = view[pos], r = rows[i];
      const tr = el("div", "tr" + (i === selected ? " sel" : ""));
      tr.style.top = pos * ROW + "px";
      tr.dataset.case = String(i);
      for (const c of shown) {
        const v = value(r, colIdx(c));
        const td = el("div", c === "status" ? "st-" + v : "", fmt(v));
        td.title = fmt(v);
        tr.appendChild(td);
      }
      tr.addEventListener("click", () => openCase(i));
      tbody.appendChild(tr);
      drawn.set(pos, tr);
    }
  }
  tbody.addEventListener("scroll", () => requestAnimationFrame(draw));

  // Case details, decoded a chunk at a time. A chunk is {s, c}: the long
  // strings its rows share once each in s, and the cases in c, whose row
  // fields hold {"$pb_s": index} in their place.
  const chunks = new Map();
  async function loadChunk(k) {
    const { s, c } = await gunzip($("pb-chunk-" + k).textContent);
    for (const d of c) {
      for (const [f, v] of Object.entries(d.row)) {
        if (v && typeof v === "object" && typeof v.$pb_s === "number") d.row[f] = s[v.$pb_s];
      }
    }
    return c;
  }
  async function caseDetail(i) {
    const k = Math.floor(i / meta.chunk);
    if (!chunks.has(k)) chunks.set(k, loadChunk(k));
    return (await chunks.get(k))[i % meta.chunk];
  }

  function section(box, title) {
    box.appendChild(el("h3", "", title));
  }
  function pre(box, text) {
    box.appendChild(el("pre", "", text));
  }

  // renderDiff draws an edit with added and removed lines coloured; unified
  // diffs get old and new line numbers from their hunk headers, other
  // formats the line number in the edit.
  function renderDiff(text, format) {
    const t = el("table", "diff");
    const lines = text.replace(/\n$/, "").split("\n");
    let oldN = 0, newN = 0, inSearch = 0;
    const unified = /^(udiff|unified)/.test(format || "") || /^@@ /m.test(text);
    lines.forEach((line, k) => {
      let cls = "ctx", a = "", b = "";
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      if (m) { oldN = +m[1]; newN = +m[2]; cls = "hunk"; }
      else if (/^(---|\+\+\+|diff |index |\*\*\* )/.test(line)) cls = "meta";
      else if (/^<<<<<<< SEARCH/.test(line)) { inSearch = 1; cls = "meta"; }
      else if (/^=======/.test(line) && inSearch) { inSearch = 2; cls = "meta"; }
      else if (/^>>>>>>> REPLACE/.test(line)) { inSearch = 0; cls = "meta"; }
      else if (inSearch === 1) { cls = "del"; a = k + 1; }
      else if (inSearch === 2) { cls = "add"; b = k + 1; }
      else if (line.startsWith("+")) { cls = "add"; b = unified ? newN++ : k + 1; }
      else if (line.startsWith("-")) { cls = "del"; a = unified ? oldN++ : k + 1; }
      else if (unified && (line.startsWith(" ") || line === "")) { a = oldN++; b = newN++; }
      else { a = b = k + 1; }
      const tr = el("tr", cls);
      tr.appendChild(el("td", "ln", a || ""));
      tr.appendChild(el("td", "ln", b || ""));
      tr.appendChild(el("td", "tx", line));
      t.appendChild(tr);
    });
    return t;
  }

  const longText = (v) => typeof v === "string" && (v.length > 120 || v.includes("\n"));
  async function openCase(i) {
    selected = i;
    for (const n of tbody.querySelectorAll(".tr")) n.classList.toggle("sel", n.dataset.case === String(i));
    const d = await caseDetail(i);
    const box = $("case");
    box.replaceChildren();
    box.hidden = false;
    box.dataset.case = String(i);
    const row = d.row;
    box.appendChild(el("h2", "", (multiRun ? meta.runs[rows[i][0]] + ": " : "") + (row.id || row.instance_id || "case " + i)));
    section(box, "Scores");
    const kv = el("table", "kv");
    const texts = [];
    for (const [k, v] of Object.entries(row)) {
      if (longText(v)) { texts.push([k, v]); continue; }
      const tr = el("tr");
      tr.appendChild(el("td", "", k));
      tr.appendChild(el("td", "", typeof v === "object" && v !== null ? JSON.stringify(v) : fmt(v)));
      kv.appendChild(tr);
    }
    box.appendChild(kv);
    for (const k of ["prompt_text", "messages", "prompt"]) {
      const t = texts.find(([n]) => n === k);
      if (t) { section(box, "Prompt"); pre(box, t[1]); }
    }
    const resp = texts.find(([n]) => n === "response");
    if (resp) { section(box, "Response"); pre(box, resp[1]); }
    if (d.edit) {
      section(box, "Edit (" + (d.edit.format || "?") + ", from " + d.edit.source + ")");
      // The edit is the response's text from at[0] to at[1] unless given.
      const text = d.edit.text !== undefined ? d.edit.text : String(row.response || "").slice(d.edit.at[0], d.edit.at[1]);
      box.appendChild(renderDiff(text, d.edit.format));
    }
    if (d.candidates && d.candidates.length) {
      section(box, "Extraction");
      const t = el("table", "cands");
      const h = el("tr");
      for (const c of ["kind", "lines", "format", "chosen", "reason"]) h.appendChild(el("th", "", c));
      t.appendChild(h);
      for (const c of d.candidates) {
        const tr = el("tr");
        for (const v of [c.kind, c.lines, c.format, c.chosen ? "yes" : "", c.reason]) tr.appendChild(el("td", "", v));
        t.appendChild(tr);
      }
      box.appendChild(t);
    }
    const repair = ["repairs", "tiers", "candidates", "repair"].filter((k) => row[k] !== undefined && (!Array.isArray(row[k]) || row[k].length));
    if (repair.length) {
      section(box, "Repair report");
      const o = {};
      for (const k of repair) o[k] = row[k];
      pre(box, JSON.stringify(o, null, 2));
    }
    for (const [k, v] of texts) {
      if (["prompt_text", "messages", "prompt", "response"].includes(k)) continue;
      section(box, k);
      if (/patch|diff/.test(k)) box.appendChild(renderDiff(v, "udiff")); else pre(box, v);
    }
    box.scrollIntoView({ block: "nearest" });
  }

  update();
  document.body.dataset.interactive = "1";
  await chartsDone;
  document.body.dataset.ready = "1";
})().catch((e) => {
  console.error("patchbench report: " + (e && e.stack || e));
  document.body.dataset.error = String(e);
});

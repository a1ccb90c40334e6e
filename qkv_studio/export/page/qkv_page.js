// QKV Studio's interactive page: the front end of the exported .html page and of the notebook widget.
//
// One plain ES module, no build step, no import: the exported page inlines it in a <script type="module">
// and calls boot(); the notebook widget (qkv_studio/notebook.py) hands the same text to anywidget, which
// calls render({model, el}).  What it shows comes from Python as data (qkv_studio/export/page/__init__.py):
// the scenes as session-file objects, the stage registry (titles, formulas, columns, reveals) and the
// colour tables.  The numbers are computed here as qkv_studio/core/attention.py computes them (float64, the
// same operations in the same order); the captions are core/captions.py's rules, and tests/export/
// test_page_browser.py checks them equal to the core's, word for word, on thousands of seeded scenes.
// Never write a closing script tag in this file: the page inlines it (the export refuses one).

// ---- numbers written as the app writes them (core/text.py, render/figure_text.py) -----------------------
const MINUS = "\u2212";

// |x| rounded to `count` significant digits ("sig") or `count` decimals ("fix"), half to even on the exact
// binary value as Python's formatting does: {digits, exp} with exp the power of ten of digits[0].
function roundDecimal(x, mode, count) {
  const s = Math.abs(x).toExponential(60);  // exact to 61 significant digits: enough to see every tie
  const [mant, e] = s.split("e");
  const all = mant.replace(".", "");
  let exp = Number(e);
  const keep = mode === "sig" ? count : exp + 1 + count;
  if (keep < 0) return { digits: "0", exp: -count, zero: true };
  let head = all.slice(0, keep);
  const rest = all.slice(keep);
  let up = false;
  if (rest.length && rest[0] > "5") up = true;
  else if (rest.length && rest[0] === "5") {
    if (/[1-9]/.test(rest.slice(1))) up = true;
    else up = head.length ? Number(head[head.length - 1]) % 2 === 1 : false;
  }
  if (up) {
    const arr = head.split("").map(Number);
    let i = arr.length - 1;
    while (i >= 0 && arr[i] === 9) { arr[i] = 0; i -= 1; }
    if (i >= 0) arr[i] += 1; else { arr.unshift(1); exp += 1; if (mode === "sig") arr.pop(); }
    head = arr.join("");
  }
  if (!head.length) return { digits: "0", exp: -count, zero: true };
  return { digits: head, exp: mode === "sig" ? exp : exp + (head.length - keep), zero: /^0*$/.test(head) };
}

// Python's f"{x:.{d}f}" (the sign of a negative zero kept, as Python keeps it).
export function pyFixed(x, d) {
  const neg = x < 0 || Object.is(x, -0);
  if (Math.abs(x) >= 2 ** 53) {  // a whole number: every digit exactly (more than the 61 read below)
    return (neg ? "-" : "") + BigInt(Math.abs(x)).toString() + (d > 0 ? "." + "0".repeat(d) : "");
  }
  const r = roundDecimal(x, "fix", d);
  let intPart; let frac;
  if (r.zero) { intPart = "0"; frac = "0".repeat(d); } else {
    const digits = r.digits;
    const intLen = digits.length - d;
    if (intLen > 0) { intPart = digits.slice(0, intLen); frac = digits.slice(intLen); }
    else { intPart = "0"; frac = "0".repeat(-intLen) + digits; }
  }
  return (neg ? "-" : "") + intPart + (d > 0 ? "." + frac : "");
}

// Python's f"{x:.{p}g}".
export function pyGeneral(x, p) {
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const neg = x < 0;
  const r = roundDecimal(x, "sig", p);
  const e = r.exp;
  let text;
  if (e >= -4 && e < p) {
    text = pyFixed(Math.abs(x), Math.max(p - 1 - e, 0));
    if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
  } else {
    let m = r.digits[0] + (r.digits.length > 1 ? "." + r.digits.slice(1) : "");
    if (m.includes(".")) m = m.replace(/0+$/, "").replace(/\.$/, "");
    text = m + "e" + (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
  }
  return (neg ? "-" : "") + text;
}

function dropExpZeros(text) {  // "1.5e+200" → "1.5e200", "1e-05" → "1e-5" (as int(exp) writes it)
  if (!text.includes("e")) return text;
  const [mant, exp] = text.split("e");
  return `${mant}e${Number(exp)}`;
}

export function fmt(value, digits = 4) {
  if (value === Infinity) return "∞";
  if (value === -Infinity) return MINUS + "∞";
  if (Number.isNaN(value)) return "?";
  if (value === 0) return "0";
  return dropExpZeros(pyGeneral(value, digits)).replaceAll("-", MINUS);
}

export function fmtFixed(value, decimals = 2) {
  if (value === Infinity) return "∞";
  if (value === -Infinity) return MINUS + "∞";
  if (Number.isNaN(value)) return "?";
  if (Math.abs(value) >= 1e6) return fmt(value, 3);
  let text = pyFixed(value, decimals);
  if (text.startsWith("-") && Number(text) === 0) text = text.slice(1);
  return text.replaceAll("-", MINUS);
}

export function fmtVector(vec, digits = 3, limit = 4, decimals = null) {
  const items = Array.from(vec.slice(0, limit), (x) => (decimals === null ? fmt(x, digits) : fmtFixed(x, decimals)));
  if (vec.length > limit) items.push(`… (${vec.length})`);
  return "[" + items.join(", ") + "]";
}

// A heatmap cell's number (render/figure_text.py format_value, with the window's "0" for a zero weight).
export function cellText(x, signed) {
  if (x === 0 && !signed) return "0";
  if (x === Infinity) return "∞";
  if (x === -Infinity) return MINUS + "∞";
  if (!signed) return pyFixed(x, 2);
  const a = Math.abs(x);
  if (a === 0) return "0";
  let text;
  if (a >= 1) text = dropExpZeros(pyGeneral(x, 3));
  else if (a >= 0.001) text = pyFixed(x, 3).replace(/0+$/, "").replace(/\.$/, "");
  else text = pyGeneral(x, 1);
  return text.replaceAll("-", MINUS);
}

// A typed number (ui/widgets/formatting.py parse_number): the value, or an Error with the app's words.
export function parseNumber(text) {
  const raw = String(text);
  const stripped = raw.trim();
  const oneComma = (raw.match(/,/g) || []).length === 1 && !raw.includes(".");
  const cleaned = oneComma ? stripped.replaceAll("−", "-").replace(",", ".") : stripped.replaceAll("−", "-");
  if (!cleaned) throw new Error("empty: type a number");
  const shown = stripped.slice(0, 20);
  // Python's float(): decimal or exponent notation, inf/nan words, underscores between digits.
  const pyFloat = /^[+-]?((\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][+-]?\d(_?\d)*)?|inf(inity)?|nan)$/i;
  if (!pyFloat.test(cleaned) || !/\d|inf|nan/i.test(cleaned) || /^[+-]?\.?([eE]|$)/.test(cleaned)) {
    throw new Error(`“${shown}” is not a number`);
  }
  const value = Number(cleaned.replaceAll("_", "").replace(/^([+-]?)inf(inity)?$/i, "$1Infinity"));
  if (!Number.isFinite(value)) throw new Error(`“${shown}” is not a finite number`);
  return value;
}

// ---- attention, as core/attention.py computes it ------------------------------------------------------
function matmul(a, b) {  // a (n×d) · b (d×m)
  const n = a.length; const d = b.length; const m = d ? b[0].length : 0;
  const out = [];
  for (let i = 0; i < n; i += 1) {
    const row = new Array(m).fill(0);
    for (let j = 0; j < m; j += 1) {
      let s = 0;
      for (let t = 0; t < d; t += 1) s += a[i][t] * b[t][j];
      row[j] = s;
    }
    out.push(row);
  }
  return out;
}

const transpose = (a) => (a.length ? a[0].map((_, j) => a.map((row) => row[j])) : []);

export function blockedOf(mask, n) {
  if (mask === "causal") return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => j > i));
  if (Array.isArray(mask)) return mask.map((row) => row.map(Boolean));
  return Array.from({ length: n }, () => new Array(n).fill(false));
}

// Every stage of softmax(Q·Kᵀ/√dₖ)·V: scores and scaled −∞ where blocked, weights 0 there, a fully masked
// row all 0 (flagged).
export function compute(q, k, v, mask, scale) {
  const n = q.length; const dk = q[0].length;
  const blocked = blockedOf(mask, n);
  const root = scale ? Math.sqrt(dk) : 1;
  const raw = matmul(q, transpose(k));
  const scores = []; const scaled = []; const weights = []; const fully = [];
  for (let i = 0; i < n; i += 1) {
    const s = raw[i];
    const sc = s.map((x) => (scale ? x / root : x));
    let max = -Infinity;
    for (let j = 0; j < n; j += 1) if (!blocked[i][j] && sc[j] > max) max = sc[j];
    if (!Number.isFinite(max)) max = 0;
    const e = sc.map((x, j) => {
      if (blocked[i][j]) return 0;
      const shifted = x - max;
      return Math.exp(shifted === 0 ? 0 : shifted);
    });
    let total = 0;
    for (const x of e) total += x;
    weights.push(e.map((x) => (total > 0 ? x / total : 0)));
    fully.push(blocked[i].every(Boolean));
    scores.push(s.map((x, j) => (blocked[i][j] ? -Infinity : x)));
    scaled.push(sc.map((x, j) => (blocked[i][j] ? -Infinity : x)));
  }
  const output = matmul(weights, v);
  return { scores, scaled, weights, output, blocked, fully, dk, scale, n };
}

// ---- a scene: a session-file object (core/sessionfile.py scene_to_dict) and what derives from it ---------
const clone = (obj) => JSON.parse(JSON.stringify(obj));

export function isProjection(doc) { return Array.isArray(doc.X); }
export function matrixNames(doc) { return isProjection(doc) ? ["X", "Wq", "Wk", "Wv"] : ["Q", "K", "V"]; }
const PER_TOKEN = new Set(["X", "Q", "K", "V"]);

export function fullQKV(doc) {
  if (isProjection(doc)) return [matmul(doc.X, doc.Wq), matmul(doc.X, doc.Wk), matmul(doc.X, doc.Wv)];
  return [doc.Q, doc.K, doc.V];
}

export function tokenLabels(tokens) {
  const counts = new Map();
  for (const t of tokens) counts.set(t, (counts.get(t) || 0) + 1);
  const seen = new Map();
  return tokens.map((t) => {
    if (counts.get(t) > 1) { seen.set(t, (seen.get(t) || 0) + 1); return `${t}·${seen.get(t)}`; }
    return t;
  });
}

// The scene the views show: head `head`'s own columns of a scene split into heads (core/view.py shown_scene).
export function shownScene(doc, head) {
  const [q, k, v] = fullQKV(doc);
  const heads = doc.heads || 1;
  const h = Math.min(Math.max(head | 0, 0), heads - 1);
  const cols = (m) => {
    if (heads === 1) return m;
    const w = m[0].length / heads;
    return m.map((row) => row.slice(h * w, (h + 1) * w));
  };
  const sq = cols(q); const sk = cols(k); const sv = cols(v);
  return { tokens: doc.tokens, labels: tokenLabels(doc.tokens), q: sq, k: sk, v: sv, mask: doc.mask,
    scale: doc.scale, heads, head: h, n: doc.tokens.length, dk: sq[0].length, fullDk: q[0].length,
    result: compute(sq, sk, sv, doc.mask, doc.scale) };
}

// ---- the captions: core/captions.py's rules, the same words (checked equal by the tests) ------------------
export const esc = (text) => String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
const nameOf = (s, i) => `“${esc(s.labels[i])}”`;

function top(r, query, count = 4) {
  const w = r.weights[query];
  const idx = w.map((_, j) => j);
  idx.sort((a, b) => (-w[a]) - (-w[b]) || a - b);
  return idx.slice(0, count);
}

function argmax(row) {
  let best = 0;
  for (let j = 1; j < row.length; j += 1) if (row[j] > row[best]) best = j;
  return best;
}

export function headNote(s) {
  if (s.heads === 1) return "";
  return `<b>Head ${s.head}</b> of ${s.heads} (dₖ = ${s.fullDk / s.heads}): `;
}

function maskNote(s) {
  if (s.mask === "causal") {
    return (" Causal mask: a token may not look at tokens after it (−∞), because a language model "
      + "must not peek at the future it is predicting.");
  }
  if (Array.isArray(s.mask)) return " Masked keys (−∞) get weight 0 after the softmax.";
  return "";
}

const keysNamed = (count) => (count === 1 ? "1 other key" : `${count} other keys`);

function blendShape(s, r, query) {
  const w = r.weights[query]; const blocked = r.blocked[query];
  const visible = w.length - blocked.filter(Boolean).length;
  if (r.fully[query] || visible === 0) return "every key is masked: nothing is blended, the output is 0";
  const order = top(r, query, 2);
  const a = nameOf(s, order[0]);
  const w1 = w[order[0]];
  if (visible === 1) {
    return `a pick, not a blend: ${a} is the only key it may see, so it takes all the weight (${fmtFixed(w1)})`;
  }
  const w2 = w[order[1]];
  const b = nameOf(s, order[1]);
  if (w1 >= 0.99) {
    return `almost a pick, not a blend: ${a} takes ${fmtFixed(w1)}, the ${keysNamed(visible - 1)} share ${fmtFixed(1.0 - w1)}`;
  }
  let low = Infinity;
  for (let j = 0; j < w.length; j += 1) if (!blocked[j] && w[j] < low) low = w[j];
  if (w1 - low < 0.05) return `spread almost evenly (about ${fmtFixed(1.0 / visible)} each): a blend of all ${visible} keys`;
  if (w1 - w2 < 0.05) {
    let tied = 0;
    for (let j = 0; j < w.length; j += 1) if (!blocked[j] && w[j] > w1 - 0.05) tied += 1;
    const lead = top(r, query, Math.min(tied, 3));
    const wLast = w[lead[lead.length - 1]];
    const each = fmtFixed(w1) === fmtFixed(wLast) ? `${fmtFixed(w1)} each` : `${fmtFixed(wLast)}–${fmtFixed(w1)}`;
    let who;
    if (tied === 2) who = `${a} and ${b}`;
    else if (tied === 3) who = `${a}, ${b} and ${nameOf(s, lead[2])}`;
    else who = `${tied} keys`;
    return `a near tie: ${who} share the lead (${each}) — a blend, not a pick`;
  }
  if (w1 >= 0.5) return `a blend led by ${a} (${fmtFixed(w1)}): the ${keysNamed(visible - 1)} still add ${fmtFixed(1.0 - w1)}`;
  return `a blend, not a pick: no key takes half (${a} leads with ${fmtFixed(w1)})`;
}

const sentence = (phrase) => phrase[0].toUpperCase() + phrase.slice(1) + ".";

function contribution(s, r, query) {
  const w = r.weights[query];
  if (r.fully[query]) return "every key is masked, so nothing contributes: the output is 0";
  const shape = blendShape(s, r, query);
  if (shape.startsWith("a pick") || shape.startsWith("almost a pick")) {
    return shape + ` — the output is (almost) v<sub>${esc(s.labels[top(r, query, 1)[0]])}</sub> alone`;
  }
  let faint = 0; let masked = 0;
  for (let j = 0; j < w.length; j += 1) {
    if (r.blocked[query][j]) masked += 1; else if (w[j] < 0.005) faint += 1;
  }
  const notes = [];
  if (faint) notes.push(`${faint} key${faint > 1 ? "s" : ""} add${faint === 1 ? "s" : ""} less than 0.01`);
  if (masked) notes.push(`${masked} masked key${masked > 1 ? "s" : ""} add${masked === 1 ? "s" : ""} nothing`);
  if (!notes.length) notes.push(masked ? "every key it may see contributes" : "every token contributes");
  return shape + "; " + notes.join(", ");
}

export const CAPTIONS = {
  vectors(s, r, query) {
    return ("Every token carries three vectors: a <b>query</b> (what it looks for), a <b>key</b> (how it "
      + `advertises itself) and a <b>value</b> (what it hands over). The query for ${nameOf(s, query)} is `
      + `${fmtVector(s.q[query])}; dₖ = ${s.dk}.`);
  },
  scores(s, r, query) {
    const name = nameOf(s, query);
    const best = argmax(r.scores[query]);
    return (`Dot the query of ${name} with every key: one relevance score per token. `
      + `${name} matches ${nameOf(s, best)} best (q·k = ${fmt(r.scores[query][best])}).` + maskNote(s));
  },
  scaled(s) {
    if (!s.scale) {
      return ("Scaling is switched off: the raw scores go straight into the softmax, so with a large "
        + "dₖ it saturates.");
    }
    return (`Divide by √dₖ = ${fmt(Math.sqrt(s.dk))} so the scores keep unit size: without it, large dₖ `
      + "makes them swing widely and the softmax saturates.");
  },
  weights(s, r, query) {
    const name = nameOf(s, query);
    if (r.fully[query]) return `Every key is masked for ${name}: there is nothing to attend to, so all weights are 0.`;
    const keys = top(r, query);
    const list = keys.map((j) => `${fmtFixed(r.weights[query][j])} on ${nameOf(s, j)}`).join(", ");
    const rest = s.n - keys.length;
    return (`softmax turns the scores of ${name} into weights that sum to 1: ${list}${rest > 0 ? ` and ${rest} smaller` : ""}. `
      + sentence(blendShape(s, r, query)));
  },
  output(s, r, query) {
    const terms = top(r, query).map((j) => `${fmtFixed(r.weights[query][j])}·v<sub>${esc(s.labels[j])}</sub>`).join(" + ");
    return (`The output for ${nameOf(s, query)} is the weighted blend of the values: ${terms}`
      + `${s.n > 4 ? " + …" : ""} = ${fmtVector(r.output[query], 3, 4, 2)}. `
      + sentence(contribution(s, r, query)));
  },
};

// The stepper's caption (ui/panels/stage_stepper.py caption_text): the head's note, then the stage's words.
export function caption(s, stage, query) { return headNote(s) + CAPTIONS[stage](s, s.result, query); }

// ---- the view ------------------------------------------------------------------------------------------
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "html") el.innerHTML = value;
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c);
  return el;
}

function colour(table, t) {  // t in 0..1 → "rgb()" from the app's lookup table (a list of [r, g, b])
  const x = Math.min(Math.max(Number.isFinite(t) ? t : 0, 0), 1) * (table.length - 1);
  const i = Math.floor(x); const f = x - i; const a = table[i]; const b = table[Math.min(i + 1, table.length - 1)];
  const c = [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f));
  const lin = c.map((v) => { const u = v / 255; return u <= 0.04045 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4; });
  const dark = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.179;
  return { css: `rgb(${c[0]}, ${c[1]}, ${c[2]})`, dark };
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name });
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const SWIPE_PX = 50;

// The interactive view of `data` ({title, scenes: [session objects with "head"], stages, formula, colours,
// notes}) inside `root`; `onchange(doc)` is called after every change of the current scene (the widget
// sends it to Python).  Returns the app object (its methods are what the buttons and keys call).
export function mount(root, data, onchange = null) {
  const stages = data.stages;
  const stageNames = stages.map((s) => s.name);
  const original = clone(data.original || data.scenes);
  const app = {
    data, scenes: clone(data.scenes), index: 0, undo: [], redo: [], message: "", onchange,
    get doc() { return this.scenes[this.index]; },
  };
  root.classList.add("qkv-page");
  root.innerHTML = "";
  const live = h("p", { class: "qkv-message", role: "status", "aria-live": "polite" });
  const els = {};

  function commit(change, mergeKey = null) {  // one undoable step: change(doc) edits a copy
    const before = clone(app.doc);
    const after = clone(app.doc);
    change(after);
    let shown;
    try { shown = shownScene(after, after.head || 0); } catch (err) { say(String(err.message || err)); return false; }
    const r = shown.result;
    const finite = (m, blocked = null) => m.every((row, i) => row.every((x, j) => Number.isFinite(x) || (blocked && blocked[i][j])));
    if (![shown.q, shown.k, shown.v, r.output].every((m) => finite(m)) || !finite(r.scores, r.blocked)) return "overflow";
    if (!(mergeKey && app.lastKey === mergeKey)) { app.undo.push({ index: app.index, doc: before }); app.redo = []; }
    app.lastKey = mergeKey;
    app.scenes[app.index] = after;
    draw();
    return true;
  }
  function setView(change) { change(app.doc); app.lastKey = null; draw(); }
  function say(text) { app.message = text; live.textContent = text; }

  app.step = (delta) => setView((d) => {
    const i = stageNames.indexOf(d.stage);
    d.stage = stageNames[Math.min(Math.max(i + delta, 0), stageNames.length - 1)];
  });
  app.setStage = (name) => setView((d) => { d.stage = name; });
  app.setQuery = (i) => setView((d) => { d.query = Math.min(Math.max(i, 0), d.tokens.length - 1); });
  app.setHead = (i) => setView((d) => { d.head = i; });
  app.setScene = (i) => { app.index = Math.min(Math.max(i, 0), app.scenes.length - 1); app.lastKey = null; say(""); draw(); };
  app.setMask = (on) => commit((d) => { d.mask = on ? "causal" : "none"; });
  app.setScale = (on) => commit((d) => { d.scale = Boolean(on); });
  app.edit = (name, row, col, text) => {
    const labels = tokenLabels(app.doc.tokens);
    const where = `[${PER_TOKEN.has(name) ? labels[row] : `row ${row + 1}`}, ${col + 1}]`;
    const old = app.doc[name][row][col];
    let value;
    try { value = parseNumber(text); } catch (err) {
      say(`${name} ${where}: ${err.message} — the value stays ${fmt(old)}`); draw(); return false;
    }
    if (value === old) { draw(); return true; }
    const done = commit((d) => { d[name][row][col] = value; });
    if (done === "overflow") {
      say(`${name} ${where}: ${fmt(value)} makes a product beyond ±1.798e308, the largest number a double holds `
        + `— the value stays ${fmt(old)}`);
      draw(); return false;
    }
    say("");
    return done;
  };
  app.setVector = (name, row, cols, values, key) => commit((d) => { cols.forEach((c, t) => { d[name][row][c] = values[t]; }); }, key);
  app.undoStep = () => {
    const last = app.undo.pop(); if (!last) return;
    app.redo.push({ index: last.index, doc: clone(app.scenes[last.index]) });
    app.index = last.index; app.scenes[last.index] = last.doc; app.lastKey = null; say(""); draw();
  };
  app.redoStep = () => {
    const next = app.redo.pop(); if (!next) return;
    app.undo.push({ index: next.index, doc: clone(app.scenes[next.index]) });
    app.index = next.index; app.scenes[next.index] = next.doc; app.lastKey = null; say(""); draw();
  };
  app.reset = () => {
    app.undo.push({ index: app.index, doc: clone(app.doc) }); app.redo = [];
    app.scenes[app.index] = clone(original[app.index]); app.lastKey = null;
    say("Back to the lecturer's version (Undo brings yours back)"); draw();
  };
  app.sessionText = () => {  // the session file of the current scene (core/sessionfile.py, version 1)
    const d = clone(app.doc); delete d.head; delete d.note;
    return JSON.stringify(d, null, 1) + "\n";
  };
  app.pageText = () => {
    const doc = new DOMParser().parseFromString(data.pristine || document.documentElement.outerHTML, "text/html");
    const copy = { ...data, scenes: app.scenes, original };
    delete copy.pristine;
    const holder = doc.getElementById("qkv-data");
    holder.textContent = JSON.stringify(copy).replace(/</g, "\\u003c");
    const app0 = doc.getElementById("qkv-app"); if (app0) app0.innerHTML = "";
    return "<!DOCTYPE html>\n" + doc.documentElement.outerHTML;
  };
  const baseName = () => (app.doc.title || data.title || "attention").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "").toLowerCase() || "attention";
  app.saveSession = () => download(`${baseName()}.qkv.json`, app.sessionText(), "application/json");
  app.savePage = () => download(`${baseName()}-mine.html`, app.pageText(), "text/html");

  // ---- the parts -----------------------------------------------------------------------------------------
  const btn = (label, attrs, onclick) => h("button", { type: "button", ...attrs, onclick }, label);
  els.title = h("h1", { class: "qkv-title" });
  els.note = h("p", { class: "qkv-note" });
  els.sceneNav = h("nav", { class: "qkv-row", "aria-label": "Scenes of the lecture" });
  els.heads = h("div", { class: "qkv-row qkv-heads", role: "group", "aria-label": "Heads" });
  els.stageBar = h("div", { class: "qkv-stagebar", role: "group", "aria-label": "Stages" });
  els.back = btn("‹ Back", { "aria-label": "Previous stage", class: "qkv-step" }, () => app.step(-1));
  els.next = btn("Next ›", { "aria-label": "Next stage", class: "qkv-step" }, () => app.step(1));
  els.stageButtons = stages.map((s) => btn(s.button, { "aria-label": `Stage: ${s.title}`, class: "qkv-stage" }, () => app.setStage(s.name)));
  els.stageBar.append(els.back, ...els.stageButtons, els.next);
  els.formula = h("p", { class: "qkv-formula", "aria-label": "The formula" });
  els.stageFormula = h("p", { class: "qkv-formula qkv-stage-formula" });
  els.caption = h("p", { class: "qkv-caption", "aria-live": "polite" });
  els.heatTitle = h("h2", { class: "qkv-heat-title" });
  els.heatWrap = h("div", { class: "qkv-heatwrap", tabindex: "0", role: "region", "aria-label": "Heatmap (scrolls sideways when wider than the screen)" });
  els.options = h("div", { class: "qkv-row qkv-options" });
  els.mask = h("input", { type: "checkbox", id: "qkv-mask", onchange: (e) => app.setMask(e.target.checked) });
  els.scale = h("input", { type: "checkbox", id: "qkv-scale", onchange: (e) => app.setScale(e.target.checked) });
  els.maskNote = h("span", { class: "qkv-small" });
  els.options.append(
    h("label", { class: "qkv-check", for: "qkv-mask" }, els.mask, " Causal mask"), els.maskNote,
    h("label", { class: "qkv-check", for: "qkv-scale" }, els.scale, " ÷ √dₖ"));
  els.tools = h("div", { class: "qkv-row qkv-tools" },
    btn("Undo", { "aria-label": "Undo", "aria-keyshortcuts": "Control+Z" }, () => app.undoStep()),
    btn("Redo", { "aria-label": "Redo", "aria-keyshortcuts": "Control+Shift+Z" }, () => app.redoStep()),
    btn("Reset", { "aria-label": "Reset to the lecturer's version" }, () => app.reset()),
    btn("Save .qkv.json", { "aria-label": "Save my version as a session file the app opens" }, () => app.saveSession()),
    btn("Save page", { "aria-label": "Save a copy of this page with my version" }, () => app.savePage()));
  els.blend = h("section", { class: "qkv-blend", "aria-label": "The blend" });
  els.plane = h("section", { class: "qkv-plane" });
  els.calc = h("section", { class: "qkv-calc" });
  els.editors = h("section", { class: "qkv-editors" });
  els.stepper = h("section", { class: "qkv-stepper", "aria-label": "Stage stepper (swipe to step)" },
    els.stageBar, els.formula, els.stageFormula, els.caption);
  const main = h("div", { class: "qkv-main" },
    h("div", { class: "qkv-left" }, els.stepper, els.heatTitle, els.heatWrap, els.options, els.blend),
    h("div", { class: "qkv-right" }, els.calc, els.plane, els.tools, els.editors, live));
  root.append(h("header", { class: "qkv-header" }, els.title, els.note, els.sceneNav, els.heads), main);

  // Swipe on the stepper steps the stages; arrow keys anywhere but in a text box.
  let swipe = null;
  els.stepper.addEventListener("pointerdown", (e) => { swipe = { x: e.clientX, y: e.clientY }; });
  els.stepper.addEventListener("pointerup", (e) => {
    if (!swipe) return;
    const dx = e.clientX - swipe.x; const dy = e.clientY - swipe.y; swipe = null;
    if (Math.abs(dx) >= SWIPE_PX && Math.abs(dx) > 2 * Math.abs(dy)) app.step(dx < 0 ? 1 : -1);
  });
  root.tabIndex = -1;
  app.onKey = (e) => {
    if (e.target.tagName === "INPUT" && e.target.type !== "checkbox") return;
    const mod = e.ctrlKey || e.metaKey;
    if (mod && e.key.toLowerCase() === "z") { e.preventDefault(); if (e.shiftKey) app.redoStep(); else app.undoStep(); return; }
    if (mod && e.key.toLowerCase() === "y") { e.preventDefault(); app.redoStep(); return; }
    if (mod || e.altKey) return;
    const moves = { ArrowRight: () => app.step(1), ArrowLeft: () => app.step(-1),
      ArrowDown: () => app.setQuery(app.doc.query + 1), ArrowUp: () => app.setQuery(app.doc.query - 1) };
    if (moves[e.key]) { e.preventDefault(); moves[e.key](); }
  };
  root.addEventListener("keydown", app.onKey);

  function revealed(stage, what) {
    const at = stages.findIndex((s) => s.reveals.includes(what));
    return stageNames.indexOf(stage) >= at;
  }

  // How wide a token's name is written in the heatmap's headers (0.9 rem, semi-bold), measured on a canvas:
  // no layout of the page is forced for it.
  // How wide a token's name is written in the heatmap's headers (0.9 rem, semi-bold: the style sheet's
  // font), measured on a canvas: no style or layout of the page is forced for it.
  const HEADER_FONT = '600 14.4px system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif';
  let measurer = null;
  function textWidth(text) {
    if (!measurer) { measurer = document.createElement("canvas").getContext("2d"); measurer.font = HEADER_FONT; }
    return measurer.measureText(text).width;
  }

  // The heatmap: a table built when the tokens or the stage's shape change, its cells updated in place on
  // every edit (a 64-token scene has 4096 of them); one click listener picks the query.
  let heat = null;
  function buildHeatmap(s, spec) {
    const n = s.n;
    const t = h("table", { class: "qkv-heatmap" });
    const cap = h("caption", { class: "qkv-sr" });
    const headRow = h("tr", {}, h("th", { scope: "col", class: "qkv-corner" }, "q \\ k"));
    s.labels.forEach((label) => headRow.append(h("th", { scope: "col", class: "qkv-colhead" }, label)));
    if (spec.row_sums) headRow.append(h("th", { scope: "col", class: "qkv-colhead" }, "Σ"));
    const cols = h("colgroup", {}, h("col", { class: "qkv-col-head" }));
    for (let j = 0; j < n + (spec.row_sums ? 1 : 0); j += 1) cols.append(h("col", { class: "qkv-col-cell" }));
    t.append(cap, cols, h("thead", {}, headRow));
    const body = h("tbody");
    const rows = []; const cells = []; const sums = []; const buttons = [];
    for (let i = 0; i < n; i += 1) {
      const b = h("button", { type: "button", "aria-label": `Query ${s.labels[i]}`, "data-row": i }, s.labels[i]);
      const tr = h("tr", {}, h("th", { scope: "row", class: "qkv-rowhead" }, b));
      const row = [];
      for (let j = 0; j < n; j += 1) {
        const td = h("td", { class: "qkv-cell", "data-row": i, "data-col": j });
        row.push(td); tr.append(td);
      }
      if (spec.row_sums) { const td = h("td", { class: "qkv-cell qkv-sum" }); sums.push(td); tr.append(td); }
      rows.push(tr); cells.push(row); buttons.push(b); body.append(tr);
    }
    t.append(body);
    t.addEventListener("click", (e) => {
      const target = e.target.closest("[data-row]");
      if (target && t.contains(target)) app.setQuery(Number(target.dataset.row));
    });
    els.heatWrap.replaceChildren(t);
    // The cells share the width the row names leave (the heatmap is the largest picture), ≥ 44 px (a finger):
    // a wider map than the screen pans inside its frame.
    // Token names are never broken: the row names' column is as wide as the longest (measured), and the
    // column names stand upright when they are wider than a cell.
    // The cells' size is the style sheet's (the frame's width shared out, 44–96 px: --cols, --rowhead);
    // whether the column names stand upright is decided once the frame's width is known (fitHeatmap).
    const nameWidth = Math.ceil(Math.max(0, ...s.labels.map((label) => textWidth(label))));
    const rowHead = Math.max(56, nameWidth + 22);
    const columns = n + (spec.row_sums ? 1 : 0);
    t.style.setProperty("--rowhead", `${rowHead}px`);
    t.style.setProperty("--cols", String(columns));
    const built = { key: heatKey(s, spec), table: t, cap, rows, cells, sums, buttons, query: -1, nameWidth, rowHead,
      cols: columns };
    fitHeatmap(built, els.heatWrap.lastWidth);
    return built;
  }

  // Column names upright when they are wider than a cell at the frame's width (`width`: the frame's width as
  // last observed; before the first layout, an estimate from the window's).
  function fitHeatmap(built, width) {
    const frame = width || Math.min(window.innerWidth, 1400) - 24;
    const size = Math.max(44, Math.min(96, Math.floor((frame - built.rowHead - 8) / built.cols - 4)));
    built.table.classList.toggle("qkv-upright", built.nameWidth + 6 > size);
  }
  const resizes = typeof ResizeObserver === "function" ? new ResizeObserver((entries) => {
    els.heatWrap.lastWidth = entries[entries.length - 1].contentRect.width;
    if (heat) fitHeatmap(heat, els.heatWrap.lastWidth);
  }) : null;
  if (resizes) resizes.observe(els.heatWrap);
  app.destroy = () => { if (resizes) resizes.disconnect(); root.replaceChildren(); };
  const heatKey = (s, spec) => JSON.stringify([s.labels, spec.row_sums]);

  function drawHeatmap(s, spec, query) {
    const r = s.result;
    const matrix = r[spec.matrix];
    const signed = spec.signed; const preview = spec.previews;
    let m = 0;
    for (const row of matrix) for (const x of row) if (Number.isFinite(x)) m = Math.max(m, Math.abs(x));
    if (m === 0) m = 1;
    const table = signed ? data.colours.diverging : data.colours.sequential;
    const n = s.n;
    const words = (s.scale || !spec.heatmap_unscaled ? spec.heatmap : spec.heatmap_unscaled).replace("{d_k}", String(s.dk));
    if (els.heatTitle.innerHTML !== words) els.heatTitle.innerHTML = words;
    if (!heat || heat.key !== heatKey(s, spec)) heat = buildHeatmap(s, spec);
    heat.table.classList.toggle("qkv-preview", preview);
    heat.cap.textContent = `${spec.title}: rows are queries, columns are keys`
      + (preview ? " (the scores to come, shaded; their numbers show from Q·Kᵀ on)" : "");
    for (let i = 0; i < n; i += 1) {
      const row = heat.cells[i];
      for (let j = 0; j < n; j += 1) {
        const td = row[j];
        const x = matrix[i][j];
        const blocked = r.blocked[i][j];
        const c = blocked ? null : colour(table, signed ? (x + m) / (2 * m) : x);
        const look = `${x}|${preview}|${c ? c.css : ""}|${c && c.dark}`;
        if (td.look === look) continue;  // (only the cells an edit changed are written: the page stays quick)
        td.look = look;
        td.dataset.value = String(x);
        td.textContent = preview ? "" : cellText(x, signed);
        td.classList.toggle("qkv-blocked", blocked);
        td.style.background = c ? c.css : "";
        td.style.color = c ? (c.dark ? "#111" : "#fff") : "";
      }
      if (spec.row_sums) {
        let sum = 0; for (const w of r.weights[i]) sum += w;
        heat.sums[i].textContent = r.fully[i] ? "0" : pyFixed(sum, 2);
      }
    }
    if (heat.query !== query) {
      heat.rows.forEach((tr, i) => tr.classList.toggle("qkv-selected", i === query));
      heat.buttons.forEach((b, i) => b.setAttribute("aria-pressed", String(i === query)));
      heat.query = query;
    }
  }

  // A part written as HTML (every scene text through esc), replaced only when it reads differently.
  function setHTML(el, html) { if (el.lastHTML !== html) { el.innerHTML = html; el.lastHTML = html; } }

  function drawCalc(s, stage, query) {
    const r = s.result;
    const cols = stages.flatMap((spec, i) => spec.columns.map(([key, heading]) => ({ key, heading, at: i })))
      .filter((c) => c.at <= stageNames.indexOf(stage));
    const contrib = r.weights[query].map((w, j) => s.v[j].map((x) => w * x));
    const cellOf = (j, key) => ({
      token: () => s.labels[j], key: () => fmtVector(s.k[j], 3, 2), value: () => fmtVector(s.v[j], 3, 2),
      score: () => fmt(r.scores[query][j], 3), scaled: () => fmt(r.scaled[query][j], 3),
      weight: () => fmtFixed(r.weights[query][j]), weighted: () => fmtVector(contrib[j], 3, 2, 2),
    }[key]());
    const best = argmax(r.weights[query]);
    const rows = [];
    for (let j = 0; j < s.n; j += 1) {
      const cells = cols.map((c) => (c.key === "token" ? `<th scope="row">${esc(cellOf(j, c.key))}</th>` : `<td>${esc(cellOf(j, c.key))}</td>`));
      rows.push(`<tr${j === best && stageNames.indexOf(stage) >= 1 ? ' class="qkv-best"' : ""}>${cells.join("")}</tr>`);
    }
    let sum = 0; for (const w of r.weights[query]) sum += w;
    const total = { token: "Σ", weight: fmtFixed(sum), weighted: `o = ${fmtVector(r.output[query], 3, 2, 2)}` };
    rows.push(`<tr class="qkv-total">${cols.map((c) => `<td>${esc(total[c.key] || "")}</td>`).join("")}</tr>`);
    setHTML(els.calc, `<h2>Calculation</h2><div class="qkv-scroll"><table class="qkv-calctable">`
      + `<caption>The calculation for the query “${esc(s.labels[query])}”</caption>`
      + `<thead><tr>${cols.map((c) => `<th scope="col">${esc(c.heading)}</th>`).join("")}</tr></thead>`
      + `<tbody>${rows.join("")}</tbody></table></div>`);
  }

  function drawBlend(s, stage, query) {
    if (!revealed(stage, "weights")) {
      setHTML(els.blend, '<h2>The blend</h2><p class="qkv-small">The weights and the blend show from the softmax stage on.</p>');
      return;
    }
    const r = s.result;
    const items = r.weights[query].map((w, j) => `<li><span class="qkv-bar-label">${esc(s.labels[j])}</span>`
      + `<span class="qkv-bar" role="img" aria-label="${esc(s.labels[j])}: weight ${fmtFixed(w)}">`
      + `<span class="qkv-bar-fill" style="width:${(100 * w).toFixed(2)}%"></span></span>`
      + `<span class="qkv-bar-value">${fmtFixed(w)}</span></li>`);
    const output = revealed(stage, "output") ? `<p class="qkv-output">output o = ${fmtVector(r.output[query], 3, 4, 2)}</p>` : "";
    setHTML(els.blend, `<h2>The blend for “${esc(s.labels[query])}”</h2><ul class="qkv-bars">${items.join("")}</ul>${output}`);
  }

  function drawPlane(s, doc, query) {
    if (s.dk !== 2) { els.plane.replaceChildren(); return; }
    const direct = !isProjection(doc);
    const size = 300; const pts = [s.q[query], ...s.k];
    let m = 1; for (const p of pts) m = Math.max(m, Math.abs(p[0]), Math.abs(p[1]));
    m *= 1.15;
    const X = (x) => size / 2 + (x / m) * (size / 2 - 16); const Y = (y) => size / 2 - (y / m) * (size / 2 - 16);
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", `0 0 ${size} ${size}`); svg.setAttribute("class", "qkv-svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `The vector plane: q of “${s.labels[query]}” and every key k`);
    const el = (tag, attrs) => { const e = document.createElementNS(NS, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); svg.append(e); return e; };
    el("line", { x1: 0, y1: Y(0), x2: size, y2: Y(0), class: "qkv-axis" });
    el("line", { x1: X(0), y1: 0, x2: X(0), y2: size, class: "qkv-axis" });
    const colBase = s.heads > 1 ? s.head * 2 : 0;
    const arrow = (p, cls, label, name, row) => {
      el("line", { x1: X(0), y1: Y(0), x2: X(p[0]), y2: Y(p[1]), class: cls });
      const t = el("text", { x: X(p[0]) + 6, y: Y(p[1]) - 6, class: "qkv-arrow-label" }); t.textContent = label;
      if (!direct) return;
      const handle = el("circle", { cx: X(p[0]), cy: Y(p[1]), r: 14, class: `qkv-handle ${cls}`, tabindex: "0",
        role: "slider", "aria-label": `Drag ${label}`, "aria-valuetext": fmtVector(p) });
      // From the keyboard: the arrows move the tip by 0.1 (with Shift by 1), each press one undo step.
      handle.addEventListener("keydown", (e) => {
        const move = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[e.key];
        if (!move) return;
        e.preventDefault(); e.stopPropagation();
        const step = e.shiftKey ? 1 : 0.1;
        const cur = shownScene(app.doc, app.doc.head || 0)[name === "Q" ? "q" : "k"][row];
        app.focusHandle = `Drag ${label}`;
        app.setVector(name, row, [colBase, colBase + 1],
          [Number((cur[0] + move[0] * step).toFixed(6)), Number((cur[1] + move[1] * step).toFixed(6))], null);
      });
      if (app.focusHandle === `Drag ${label}`) { app.focusHandle = null; queueMicrotask(() => handle.focus()); }
      handle.addEventListener("pointerdown", (e) => {
        e.preventDefault(); e.stopPropagation(); handle.setPointerCapture(e.pointerId);
        const key = `drag:${name}:${row}:${e.pointerId}:${Date.now()}`;
        const move = (ev) => {
          const box = svg.getBoundingClientRect();
          const px = ((ev.clientX - box.left) / box.width) * size; const py = ((ev.clientY - box.top) / box.height) * size;
          const x = Number((((px - size / 2) / (size / 2 - 16)) * m).toFixed(3));
          const y = Number((((size / 2 - py) / (size / 2 - 16)) * m).toFixed(3));
          app.setVector(name, row, [colBase, colBase + 1], [x, y], key);
        };
        handle.addEventListener("pointermove", move);
        handle.addEventListener("pointerup", () => { handle.removeEventListener("pointermove", move); app.lastKey = null; }, { once: true });
      });
    };
    s.k.forEach((p, j) => arrow(p, "qkv-k", `k ${s.labels[j]}`, "K", j));
    arrow(s.q[query], "qkv-q", `q ${s.labels[query]}`, "Q", query);
    els.plane.replaceChildren(h("h2", {}, "The vector plane"), svg,
      h("p", { class: "qkv-small" }, direct ? "Drag the tip of q or of a key k (or focus it and use the arrow keys)."
        : "Q and K come from X·W here: edit X or W below."));
  }

  function drawEditors(doc) {
    const labels = tokenLabels(doc.tokens);
    const parts = [h("h2", {}, "Edit the numbers")];
    for (const name of matrixNames(doc)) {
      const m = doc[name];
      const t = h("table", { class: "qkv-editor" }, h("caption", {}, name));
      const head = h("tr", {}, h("th", {}, ""));
      m[0].forEach((_, c) => head.append(h("th", { scope: "col" }, String(c + 1))));
      t.append(h("thead", {}, head));
      const body = h("tbody");
      m.forEach((row, r) => {
        const label = PER_TOKEN.has(name) ? labels[r] : `row ${r + 1}`;
        const tr = h("tr", {}, h("th", { scope: "row" }, label));
        row.forEach((x, c) => {
          const input = h("input", { type: "text", inputmode: "decimal", value: String(x), "aria-label": `${name} ${label}, column ${c + 1}`,
            "data-matrix": name, "data-row": r, "data-col": c, spellcheck: "false", autocomplete: "off" });
          input.addEventListener("change", () => app.edit(name, r, c, input.value));
          input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); input.blur(); } });
          tr.append(h("td", {}, input));
        });
        body.append(tr);
      });
      t.append(body);
      parts.push(h("div", { class: "qkv-scroll" }, t));
    }
    els.editors.replaceChildren(...parts);
  }

  function sameNumbers(a, b) {
    const keys = ["tokens", "Q", "K", "V", "X", "Wq", "Wk", "Wv", "mask", "scale", "heads", "Wo"];
    return keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
  }

  function draw(notify = true) {
    const doc = app.doc;
    const s = shownScene(doc, doc.head || 0);
    const query = Math.min(doc.query, s.n - 1);
    const spec = stages[stageNames.indexOf(doc.stage)] || stages[stages.length - 1];
    els.title.textContent = doc.title || data.title || "Self-attention";
    els.note.textContent = doc.note && sameNumbers(doc, original[app.index]) ? doc.note : "";
    els.sceneNav.replaceChildren();
    if (app.scenes.length > 1) {
      els.sceneNav.append(
        btn("‹ Scene", { "aria-label": "Previous scene", disabled: app.index === 0 }, () => app.setScene(app.index - 1)),
        h("span", { class: "qkv-small" }, `Scene ${app.index + 1} of ${app.scenes.length}`),
        btn("Scene ›", { "aria-label": "Next scene", disabled: app.index === app.scenes.length - 1 }, () => app.setScene(app.index + 1)));
    }
    els.heads.replaceChildren();
    if (s.heads > 1) {
      for (let i = 0; i < s.heads; i += 1) {
        els.heads.append(btn(`Head ${i}`, { "aria-pressed": String(i === s.head), "aria-label": `Head ${i}` }, () => app.setHead(i)));
      }
    }
    els.stageButtons.forEach((b, i) => b.setAttribute("aria-pressed", String(stages[i].name === spec.name)));
    els.back.disabled = spec.name === stageNames[0];
    els.next.disabled = spec.name === stageNames[stageNames.length - 1];
    setHTML(els.formula, data.formula.replace(/\{(\w+)\[(\d)\]\}/g, (_, name, i) => {
      const piece = stages[stageNames.indexOf(name)].pieces[Number(i)];
      return name === spec.name ? `<span class="qkv-mark">${piece}</span>` : piece;
    }));
    setHTML(els.stageFormula, spec.formula);
    const deck = app.scenes.length > 1 ? `<span class="qkv-small">[${app.index + 1}/${app.scenes.length}]</span> ` : "";
    setHTML(els.caption, deck + caption(s, spec.name, query));
    els.mask.checked = doc.mask === "causal";
    els.maskNote.textContent = Array.isArray(doc.mask) ? "(a mask of its own, from the file)" : "";
    els.scale.checked = Boolean(doc.scale);
    drawHeatmap(s, spec, query);
    drawBlend(s, spec.name, query);
    app.shown = s;
    if (!app.ready) return;  // (the first paint shows the stepper and the heatmap; the rest follows at once)
    drawCalc(s, spec.name, query);
    drawPlane(s, doc, query);
    const editorKey = JSON.stringify([doc.tokens, matrixNames(doc).map((name) => [doc[name].length, doc[name][0].length])]);
    if (editorKey !== app.editorKey) { drawEditors(doc); app.editorKey = editorKey; } else {
      for (const input of els.editors.querySelectorAll("input")) {  // (the one being typed in keeps its text)
        const text = String(doc[input.dataset.matrix][input.dataset.row][input.dataset.col]);
        if (input !== document.activeElement && input.value !== text) input.value = text;
      }
    }
    if (notify && app.onchange) app.onchange(app.doc);
  }
  app.draw = draw;
  app.ready = false;
  draw(false);
  // The calculation, the plane and the editors (thousands of inputs in a 64-token scene) are built right
  // after the first frame is painted: the student sees the scene first.
  const rest = () => { app.ready = true; draw(false); };
  if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => setTimeout(rest, 0)); else rest();
  return app;
}

// ---- the two hosts: the page opened from disk, and anywidget in a notebook ----------------------------
export function boot() {
  const holder = document.getElementById("qkv-data");
  const data = JSON.parse(holder.textContent);
  data.pristine = "<!DOCTYPE html>\n" + document.documentElement.outerHTML;
  const root = document.getElementById("qkv-app");
  const app = mount(root, data);
  // The page is the app: its keys work wherever the focus is (also on the page itself, after a button
  // that had it was disabled).
  document.addEventListener("keydown", (e) => { if (!root.contains(e.target)) app.onKey(e); });
  globalThis.qkvApp = app;  // (for the browser's console and the tests)
  return app;
}

// anywidget's entry point (qkv_studio/notebook.py): "data" is the page's data (the lecturer's scene),
// "session" the current scene, set here after every edit and by Python's assignments.
export function render({ model, el }) {
  const data = JSON.parse(model.get("data"));
  data.original = data.scenes;
  const session = model.get("session");
  if (session) data.scenes = [JSON.parse(session)];
  const app = mount(el, data, (doc) => { model.set("session", JSON.stringify(doc)); model.save_changes(); });
  model.on("change:session", () => {
    const doc = JSON.parse(model.get("session"));
    if (JSON.stringify(doc) !== JSON.stringify(app.doc)) { app.scenes[app.index] = doc; app.draw(false); }
  });

  return () => app.destroy();
}

export const CORE = { fmt, fmtFixed, fmtVector, cellText, pyFixed, pyGeneral, parseNumber, compute, shownScene, caption, tokenLabels };
globalThis.qkvCore = CORE;
export default { render };

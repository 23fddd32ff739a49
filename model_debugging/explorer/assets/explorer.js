// The trace explorer: a call tree built lazily (only expanded rows are in the DOM) from the JSON
// embedded in the page. Rows carry data-module, data-status, data-level and data-origin for tests.
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const nodes = data.nodes;
  const count = nodes.length;
  const comparison = data.comparison;

  // ---- structure: nodes come in pre-order, each naming its parent
  const children = Array.from({ length: count }, () => []);
  const depth = new Int32Array(count);
  const subtreeEnd = new Int32Array(count); // one past the last descendant
  for (let i = 0; i < count; i++) {
    const parent = nodes[i].parent;
    if (parent >= 0) {
      children[parent].push(i);
      depth[i] = depth[parent] + 1;
    }
  }
  for (let i = count - 1; i >= 0; i--) {
    const kids = children[i];
    subtreeEnd[i] = kids.length ? subtreeEnd[kids[kids.length - 1]] : i + 1;
  }
  const lowerPaths = nodes.map((node) => node.path.toLowerCase());
  const status = (i) => (nodes[i].comparison ? nodes[i].comparison.status : "");
  const flagged = new Uint8Array(count);
  const flaggedInside = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const s = status(i);
    flagged[i] = (nodes[i].badges && nodes[i].badges.length) || (s && s !== "equal") ? 1 : 0;
  }
  for (let i = count - 1; i > 0; i--) {
    flaggedInside[nodes[i].parent] += flaggedInside[i] + flagged[i];
  }

  // ---- state
  let open = new Uint8Array(count);
  let shown = null; // while filtering: rows that match or contain a match
  let matched = null;
  let openBeforeFilter = null;
  let selected = -1;
  const rowOf = new Map();

  const tree = document.getElementById("tree");
  const detail = document.getElementById("detail");
  const search = document.getElementById("search");
  const flaggedOnly = document.getElementById("flagged-only");
  const filterStatus = document.getElementById("filter-status");

  // ---- formatting
  function el(tag, attributes, ...content) {
    const element = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value !== null && value !== undefined && value !== false) element.setAttribute(key, value);
    }
    for (const item of content) {
      if (item !== null && item !== undefined) element.append(item);
    }
    return element;
  }
  function number(value) {
    const x = Number(value);
    const text = formatNumber(x);
    return Number.isFinite(x) ? text : el("span", { class: "nonfinite" }, text);
  }
  function formatNumber(x) {
    if (Number.isNaN(x)) return "NaN";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (x === 0) return "0";
    const size = Math.abs(x);
    return size >= 1e4 || size < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(3)));
  }
  const DTYPE_SHORT = { float32: "f32", float16: "f16", bfloat16: "bf16", float64: "f64", int64: "i64", int32: "i32" };
  function shapeText(tensor) {
    return `[${tensor.shape.join(", ")}] ${DTYPE_SHORT[tensor.dtype] || tensor.dtype}`;
  }
  function firstTensor(tensors, withStats) {
    return (tensors || []).find((t) => t.shape && (!withStats || t.stats)) || null;
  }
  function keyTensor(node, withStats) {
    return firstTensor(node.outputs, withStats) || firstTensor(node.inputs, withStats);
  }

  // ---- rows
  function makeRow(i) {
    const node = nodes[i];
    const hasChildren = children[i].length > 0;
    const row = el("div", {
      class: "row",
      role: "treeitem",
      "data-index": i,
      "data-module": node.path,
      "aria-level": depth[i] + 1,
      "aria-expanded": hasChildren ? String(Boolean(open[i])) : null,
      "aria-selected": i === selected ? "true" : null,
    });
    if (i === selected) row.classList.add("selected");
    if (matched && !matched[i]) row.classList.add("context");
    const cmp = node.comparison;
    if (cmp) {
      row.dataset.status = cmp.status;
      if (cmp.status === "diverged") row.dataset.level = cmp.level;
    }
    if (comparison && comparison.origin === i) row.dataset.origin = "divergence-origin";
    if (comparison && comparison.firstInputDivergence === i) row.dataset.firstInputDivergence = "";

    const toggle = el("span", { class: "toggle" }, hasChildren ? (open[i] ? "▾" : "▸") : "");
    const name = el("span", { class: "name", title: node.path, style: `--depth: ${depth[i]}` }, toggle, node.name);
    if (node.call > 0) name.append(el("span", { class: "call" }, `#${node.call}`));
    const shapeTensor = keyTensor(node, false);
    const shape = el("span", { class: "shape" });
    if (shapeTensor) shape.textContent = (node.outputs && firstTensor(node.outputs) ? "→ " : "in ") + shapeText(shapeTensor);
    const statsTensor = keyTensor(node, true);
    const stats = ["mean", "std", "min", "max"].map((key) =>
      el("span", { class: "num" }, statsTensor && key in statsTensor.stats ? number(statsTensor.stats[key]) : ""),
    );
    row.append(name, shape, ...stats, el("span", { class: "flags" }, ...badges(i, hasChildren && !open[i])));
    rowOf.set(i, row);
    return row;
  }
  function badges(i, collapsed) {
    const node = nodes[i];
    const out = [];
    if (comparison && comparison.origin === i) out.push(el("span", { class: "badge origin", title: "divergence origin" }, "origin"));
    const cmp = node.comparison;
    if (cmp && cmp.status === "diverged") {
      out.push(el("span", { class: "badge diff", title: `${cmp.verdict}, max abs diff` }, "Δ", number(cmp.maxAbsDiff)));
    } else if (cmp && cmp.status === "unmatched") {
      out.push(el("span", { class: "badge unmatched", title: "no matching call in the candidate" }, "only in reference"));
    } else if (cmp && cmp.status === "candidate-only") {
      out.push(el("span", { class: "badge only", title: "no matching call in the reference" }, "only in candidate"));
    }
    for (const badge of node.badges || []) {
      out.push(el("span", { class: `badge ${badge.kind}`, title: badge.detail }, badge.label));
    }
    if (collapsed && flaggedInside[i]) {
      out.push(el("span", { class: "badge inside", title: "flagged calls inside this one" }, `${flaggedInside[i]} inside`));
    }
    return out;
  }
  function visibleBelow(i, out) {
    if (!open[i]) return out;
    const stack = children[i].slice().reverse();
    while (stack.length) {
      const j = stack.pop();
      if (shown && !shown[j]) continue;
      out.push(j);
      if (open[j]) for (let k = children[j].length - 1; k >= 0; k--) stack.push(children[j][k]);
    }
    return out;
  }
  function renderAll() {
    rowOf.clear();
    const fragment = document.createDocumentFragment();
    if (!shown || shown[0]) for (const i of visibleBelow(0, [0])) fragment.append(makeRow(i));
    tree.replaceChildren(fragment);
    if (!tree.firstChild) tree.append(el("p", { class: "empty" }, "No call matches."));
  }
  function refreshRow(i) {
    const row = rowOf.get(i);
    if (row) row.replaceWith(makeRow(i));
  }
  function expand(i) {
    if (open[i] || !children[i].length) return;
    open[i] = 1;
    const row = rowOf.get(i);
    if (!row) return;
    const fragment = document.createDocumentFragment();
    for (const j of visibleBelow(i, [])) fragment.append(makeRow(j));
    row.after(fragment);
    refreshRow(i);
  }
  function collapse(i) {
    if (!open[i]) return;
    open[i] = 0;
    const row = rowOf.get(i);
    if (!row) return;
    let next = row.nextElementSibling;
    while (next && Number(next.dataset.index) > i && Number(next.dataset.index) < subtreeEnd[i]) {
      const after = next.nextElementSibling;
      rowOf.delete(Number(next.dataset.index));
      next.remove();
      next = after;
    }
    if (selected > i && selected < subtreeEnd[i]) select(i, false);
    refreshRow(i);
  }
  const toggle = (i) => (open[i] ? collapse(i) : expand(i));

  function expandToDepth(limit) {
    for (let i = 0; i < count; i++) open[i] = limit < 0 || depth[i] < limit ? 1 : 0;
    renderAll();
    if (selected >= 0 && rowOf.has(selected)) select(selected, true);
  }
  function reveal(i) {
    if (shown && !shown[i]) clearFilter();
    for (let a = nodes[i].parent; a >= 0; a = nodes[a].parent) open[a] = 1;
    renderAll();
    select(i, true, "center");
  }

  // ---- filtering (search and "only flagged")
  function applyFilter() {
    const query = search.value.trim().toLowerCase();
    if (!query && !flaggedOnly.checked) {
      if (shown) {
        shown = matched = null;
        open = openBeforeFilter;
        openBeforeFilter = null;
      }
      filterStatus.textContent = "";
      renderAll();
      return;
    }
    if (!shown) openBeforeFilter = open.slice();
    shown = new Uint8Array(count);
    matched = new Uint8Array(count);
    open = new Uint8Array(count);
    let hits = 0;
    for (let i = 0; i < count; i++) {
      if ((query && !lowerPaths[i].includes(query)) || (flaggedOnly.checked && !flagged[i])) continue;
      hits++;
      matched[i] = shown[i] = 1;
      for (let a = nodes[i].parent; a >= 0; a = nodes[a].parent) {
        open[a] = 1;
        if (shown[a]) break;
        shown[a] = 1;
      }
    }
    filterStatus.textContent = `${hits.toLocaleString()} of ${count.toLocaleString()} calls match`;
    renderAll();
  }
  function clearFilter() {
    search.value = "";
    flaggedOnly.checked = false;
    applyFilter();
  }

  // ---- selection and the detail pane
  function select(i, scroll, block) {
    const previous = rowOf.get(selected);
    if (previous) {
      previous.classList.remove("selected");
      previous.removeAttribute("aria-selected");
    }
    selected = i;
    const row = rowOf.get(i);
    if (row) {
      row.classList.add("selected");
      row.setAttribute("aria-selected", "true");
      if (scroll) row.scrollIntoView({ block: block || "nearest" });
    }
    renderDetail(i);
  }
  function tensorBlock(tensor) {
    if (!tensor.shape) {
      return el("div", { class: "tensor" }, el("div", { class: "head" }, `${tensor.at || "(value)"} = ${tensor.text}`));
    }
    const block = el("div", { class: "tensor" }, el("div", { class: "head" }, `${tensor.at || "(tensor)"}  ${shapeText(tensor)}`));
    if (tensor.stats) {
      const names = Object.keys(tensor.stats);
      block.append(
        el("table", {},
          el("tr", {}, ...names.map((name) => el("th", {}, name))),
          el("tr", {}, ...names.map((name) => el("td", {}, number(tensor.stats[name]))))),
      );
    }
    if (tensor.histogram) block.append(histogram(tensor.histogram));
    if (tensor.histogramError) block.append(el("p", { class: "nonfinite" }, tensor.histogramError));
    if (tensor.values) {
      const more = tensor.valuesDropped ? `\n… ${tensor.valuesDropped} more lines` : "";
      block.append(el("pre", {}, tensor.values.join("\n") + more));
    }
    return block;
  }
  function histogram(h) {
    const ns = "http://www.w3.org/2000/svg";
    const width = 300, height = 80, top = 4, bottom = 14;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "hist");
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    const peak = Math.max(1, ...h.counts);
    const barWidth = width / Math.max(1, h.counts.length);
    h.counts.forEach((value, k) => {
      const bar = document.createElementNS(ns, "rect");
      const barHeight = ((height - top - bottom) * value) / peak;
      bar.setAttribute("x", k * barWidth + 0.5);
      bar.setAttribute("y", height - bottom - barHeight);
      bar.setAttribute("width", Math.max(1, barWidth - 1));
      bar.setAttribute("height", barHeight);
      bar.append(document.createElementNS(ns, "title"));
      bar.firstChild.textContent = String(value);
      svg.append(bar);
    });
    [[0, "start", h.low], [width, "end", h.high]].forEach(([x, anchor, value]) => {
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", x);
      label.setAttribute("y", height - 2);
      label.setAttribute("text-anchor", anchor);
      label.textContent = formatNumber(value);
      svg.append(label);
    });
    const extra = [["NaN", h.nan], ["+inf", h.posinf], ["-inf", h.neginf]].filter(([, n]) => n > 0);
    const box = el("div", {}, svg);
    if (extra.length) box.append(el("div", { class: "nonfinite" }, extra.map(([name, n]) => `${n} ${name}`).join(", ")));
    return box;
  }
  function renderDetail(i) {
    const node = nodes[i];
    const facts = [["call", `#${node.call}`], ["depth", String(depth[i])], ["children", String(children[i].length)]];
    if (node.parent >= 0) facts.push(["parent", nodes[node.parent].path]);
    if (node.exception) facts.push(["raised", node.exception]);
    for (const badge of node.badges || []) facts.push([badge.label, badge.detail]);
    const cmp = node.comparison;
    if (cmp && (cmp.status === "equal" || cmp.status === "diverged")) {
      facts.push(["compare", cmp.verdict], ["candidate", cmp.candidatePath]);
      if (cmp.maxAbsDiff !== null) facts.push(["max abs diff", number(cmp.maxAbsDiff)], ["max rel diff", number(cmp.maxRelDiff)], ["mean abs diff", number(cmp.meanAbsDiff)]);
      for (const line of cmp.details) facts.push(["detail", line]);
    } else if (cmp) {
      facts.push(["compare", cmp.status === "unmatched" ? "only in the reference trace" : "only in the candidate trace"]);
    }
    if (comparison && comparison.origin === i) facts.push(["origin", "the first call whose inputs agree and outputs differ"]);
    const parts = [el("h2", {}, node.path), el("dl", {}, ...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]))];
    parts.push(el("h3", {}, "Inputs"), ...(node.inputs.length ? node.inputs.map(tensorBlock) : [el("p", { class: "hint" }, "none recorded")]));
    parts.push(el("h3", {}, "Outputs"));
    if (node.outputs === null) parts.push(el("p", { class: "hint" }, "not recorded (the debugger records outputs of leaf modules)"));
    else parts.push(...(node.outputs.length ? node.outputs.map(tensorBlock) : [el("p", { class: "hint" }, "none")]));
    detail.replaceChildren(...parts);
  }

  // ---- navigation
  function rowIndex(row) {
    return row ? Number(row.dataset.index) : -1;
  }
  function move(step) {
    let row = rowOf.get(selected) || (step > 0 ? tree.firstElementChild : tree.lastElementChild);
    for (let k = 0; k < Math.abs(step) && row; k++) {
      const next = step > 0 ? row.nextElementSibling : row.previousElementSibling;
      if (!next || !next.dataset.index) break;
      row = next;
    }
    if (row && row.dataset.index) select(rowIndex(row), true);
  }
  function nextFlag(step) {
    for (let k = 1; k <= count; k++) {
      const i = (((selected + step * k) % count) + count) % count;
      if (flagged[i]) return reveal(i);
    }
  }
  function goToOrigin() {
    const target = comparison && (comparison.origin ?? comparison.firstInputDivergence);
    if (target !== null && target !== undefined) reveal(target);
  }
  tree.addEventListener("keydown", (event) => {
    const i = selected;
    const actions = {
      ArrowDown: () => move(1),
      ArrowUp: () => move(-1),
      PageDown: () => move(20),
      PageUp: () => move(-20),
      Home: () => select(0, true),
      End: () => move(count),
      ArrowRight: () => (children[i].length && !open[i] ? expand(i) : move(1)),
      ArrowLeft: () => (children[i].length && open[i] ? collapse(i) : nodes[i].parent >= 0 && rowOf.has(nodes[i].parent) && select(nodes[i].parent, true)),
      Enter: () => toggle(i),
      " ": () => toggle(i),
    };
    if (!(event.key in actions) || (i < 0 && !event.key.startsWith("Arrow"))) return;
    event.preventDefault();
    if (i < 0) return move(1);
    actions[event.key]();
  });
  tree.addEventListener("click", (event) => {
    const row = event.target.closest(".row");
    if (!row) return;
    const i = rowIndex(row);
    if (event.target.classList.contains("toggle")) toggle(i);
    select(i, false);
    tree.focus({ preventScroll: true });
  });
  tree.addEventListener("dblclick", (event) => {
    const row = event.target.closest(".row");
    if (row) toggle(rowIndex(row));
  });
  document.addEventListener("keydown", (event) => {
    const typing = event.target === search;
    if (event.key === "Escape" && typing) {
      clearFilter();
      tree.focus();
    } else if (!typing && event.key === "/") {
      event.preventDefault();
      search.focus();
    } else if (!typing && (event.key === "n" || event.key === "N")) {
      nextFlag(event.key === "n" ? 1 : -1);
    } else if (!typing && event.key === "o") {
      goToOrigin();
    }
  });
  search.addEventListener("input", applyFilter);
  flaggedOnly.addEventListener("change", applyFilter);
  for (const button of document.querySelectorAll("[data-depth]")) {
    button.addEventListener("click", () => expandToDepth(Number(button.dataset.depth)));
  }
  document.getElementById("next-flag").addEventListener("click", () => nextFlag(1));

  // ---- header
  document.getElementById("title").textContent = data.title;
  const recorded = data.mode === "tensors" ? "tensor files (histograms)" : "statistics and printed values";
  document.getElementById("meta").textContent =
    `${count.toLocaleString()} calls · ${recorded} · ${data.source}` +
    (flagged.some((f) => f) ? ` · ${flagged.reduce((a, b) => a + b, 0)} flagged` : "");
  if (comparison) {
    const summary = document.getElementById("comparison-summary");
    summary.hidden = false;
    summary.open = true;
    summary.querySelector("summary").textContent = `Comparison with ${comparison.candidate}`;
    summary.querySelector("ul").append(...comparison.lines.map((line) => el("li", {}, line)));
    const legend = el("span", { class: "legend", title: "max abs diff over atol" }, "diff/atol:");
    ["1", "10", "100", "1e3", "≥1e4"].forEach((label, k) =>
      legend.append(el("i", { style: `background: var(--level-${k + 1})`, title: label }), label),
    );
    document.getElementById("toolbar").append(legend);
    const originButton = document.getElementById("go-origin");
    originButton.hidden = comparison.origin === null && comparison.firstInputDivergence === null;
    originButton.addEventListener("click", goToOrigin);
  }

  // ---- first paint: two levels open, the origin (if any) revealed and selected
  for (let i = 0; i < count; i++) open[i] = depth[i] < 2 ? 1 : 0;
  if (count === 0) {
    tree.append(el("p", { class: "empty" }, "This trace records no calls."));
  } else if (comparison && (comparison.origin !== null || comparison.firstInputDivergence !== null)) {
    goToOrigin();
  } else {
    renderAll();
    select(0, false);
  }
  requestAnimationFrame(() =>
    setTimeout(() => {
      window.explorerFirstPaint = performance.now();
      document.body.dataset.ready = "true";
    }, 0),
  );
})();

// The tree: built lazily (only expanded rows are in the DOM) from the JSON embedded in the page.
// Rows carry data-module, data-status, data-level and data-origin, the contract tests rely on.

const data = JSON.parse(document.getElementById("trace-data").textContent);
const nodes = data.nodes;
const count = nodes.length;
const comparison = data.comparison;
const classes = data.classes;
const classOf = (i) => (nodes[i].cls === undefined ? null : classes[nodes[i].cls]);

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
// what search looks in: the path and the class name a row shows (a newline: no query spans both)
const searchTexts = nodes.map((node, i) => {
  const qualified = classOf(i);
  return (qualified === null ? node.path : `${node.path}\n${shortClass(qualified)}`).toLowerCase();
});
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
let painted = false; // the tree's first paint is done (the detail pane waits for it)
const rowOf = new Map();

const tree = document.getElementById("tree");
const detail = document.getElementById("detail");
const search = document.getElementById("search");
const flaggedOnly = document.getElementById("flagged-only");
const filterStatus = document.getElementById("filter-status");
const detailView = { nodes, classOf, depth, children, comparison, pane: detail };

// ---- rows: built as HTML text (one parse per batch is much faster than one DOM call per cell);
// every string from the trace goes through esc()
const cellCache = new Array(count); // the cells that do not depend on folding, selection or filtering
function staticCells(i) {
  const node = nodes[i];
  const qualified = classOf(i);
  let name = esc(node.name);
  if (qualified !== null) name += `<span class="cls" title="${esc(qualified)}">${esc(shortClass(qualified))}</span>`;
  if (node.call > 0) name += `<span class="call">#${node.call}</span>`;
  if (node.prunedBefore) {
    const title = `${node.prunedBefore} numbered blocks before this one were not recorded (layer pruning)`;
    name += `<span class="call" title="${title}">(${node.prunedBefore} pruned before)</span>`;
  }
  const shapeTensor = keyTensor(node, false);
  const prefix = node.outputs && firstTensor(node.outputs) ? "→ " : "in ";
  let rest = `<span class="shape">${shapeTensor ? esc(prefix + shapeText(shapeTensor)) : ""}</span>`;
  const statsTensor = keyTensor(node, true);
  for (const key of ["mean", "std", "min", "max"]) {
    rest += `<span class="num">${statsTensor && key in statsTensor.stats ? numberHtml(statsTensor.stats[key]) : ""}</span>`;
  }
  return { name, rest: `${rest}<span class="flags">${staticBadges(i)}` };
}
function badgeHtml(kind, title, text) {
  return `<span class="badge ${kind}" title="${esc(title)}">${text}</span>`;
}
function staticBadges(i) {
  const node = nodes[i];
  const cmp = node.comparison;
  let out = comparison && comparison.origin === i ? badgeHtml("origin", "divergence origin", "origin") : "";
  if (cmp && cmp.status === "diverged") {
    out += badgeHtml("diff", `${cmp.verdict}, max abs diff`, "Δ" + numberHtml(cmp.maxAbsDiff));
  } else if (cmp && cmp.status === "unmatched") {
    out += badgeHtml("unmatched", "no matching call in the candidate", "only in reference");
  } else if (cmp && cmp.status === "candidate-only") {
    out += badgeHtml("only", "no matching call in the reference", "only in candidate");
  } else if (cmp && cmp.status === "accounted") {
    out += badgeHtml("unmatched", ACCOUNTED, "accounted");
  } else if (cmp && cmp.status === "looked-through") {
    out += badgeHtml("unmatched", LOOKED_THROUGH, "looked through");
  }
  if (cmp && cmp.alignment) out += badgeHtml("only", `paired by the alignment (${cmp.alignment})`, esc(cmp.alignment));
  for (const badge of node.badges || []) out += badgeHtml(esc(badge.kind), badge.detail, esc(badge.label));
  return out;
}
function rowHtml(i) {
  const node = nodes[i];
  const hasChildren = children[i].length > 0;
  const isOpen = open[i] === 1;
  let attributes = `class="row${i === selected ? " selected" : ""}${matched && !matched[i] ? " context" : ""}"`;
  attributes += ` role="treeitem" data-index="${i}" data-module="${esc(node.path)}" aria-level="${depth[i] + 1}"`;
  if (hasChildren) attributes += ` aria-expanded="${isOpen}"`;
  if (i === selected) attributes += ' aria-selected="true"';
  const cmp = node.comparison;
  if (cmp) attributes += ` data-status="${esc(cmp.status)}"` + (cmp.status === "diverged" ? ` data-level="${Number(cmp.level)}"` : "");
  if (comparison && comparison.origin === i) attributes += ' data-origin="divergence-origin"';
  if (comparison && comparison.firstInputDivergence === i) attributes += " data-first-input-divergence";
  const cells = cellCache[i] || (cellCache[i] = staticCells(i));
  const glyph = hasChildren ? (isOpen ? "▾" : "▸") : "";
  const inside = hasChildren && !isOpen && flaggedInside[i] ? badgeHtml("inside", "flagged calls inside this one", `${flaggedInside[i]} inside`) : "";
  return (
    `<div ${attributes}><span class="name" title="${esc(node.path)}" style="--depth: ${depth[i]}">` +
    `<span class="toggle">${glyph}</span>${cells.name}</span>${cells.rest}${inside}</span></div>`
  );
}
// A call with thousands of children shows them a page at a time; the list of visible rows holds
// -(p + 1) where the "show more" row of parent p goes.
const PAGE = 200;
const childLimit = new Float64Array(count).fill(PAGE);
function pagerHtml(parent) {
  const hidden = visibleChildren(parent).length - childLimit[parent];
  return (
    `<div class="row more" data-pager-of="${parent}"><span class="name" style="--depth: ${depth[parent] + 1}">` +
    `<button type="button" data-more="${PAGE}">show ${Math.min(PAGE, hidden)} more</button> ` +
    `<button type="button" data-more="all">show all ${grouped(hidden)}</button></span></div>`
  );
}
function rowsHtml(list) {
  let html = "";
  for (const i of list) html += i >= 0 ? rowHtml(i) : pagerHtml(-i - 1);
  return html;
}
function indexRows(first, n) {
  let row = first;
  for (let k = 0; k < n && row; k++, row = row.nextElementSibling) {
    if (row.dataset.index) rowOf.set(Number(row.dataset.index), row);
  }
}
function visibleChildren(i) {
  return shown ? children[i].filter((j) => shown[j]) : children[i];
}
function visibleBelow(i, out) {
  const pushChildren = (stack, j) => {
    const kids = visibleChildren(j);
    if (kids.length > childLimit[j]) stack.push(-j - 1);
    for (let k = Math.min(kids.length, childLimit[j]) - 1; k >= 0; k--) stack.push(kids[k]);
  };
  const stack = [];
  if (open[i]) pushChildren(stack, i);
  while (stack.length) {
    const j = stack.pop();
    out.push(j);
    if (j >= 0 && open[j]) pushChildren(stack, j);
  }
  return out;
}
function rowOwner(row) {
  return Number(row.dataset.index ?? row.dataset.pagerOf);
}
function showMore(parent, how) {
  childLimit[parent] = how === "all" ? Infinity : childLimit[parent] + PAGE;
  const scroll = tree.scrollTop;
  renderAll();
  tree.scrollTop = scroll;
  if (rowOf.has(selected)) select(selected, false);
}
function renderAll() {
  rowOf.clear();
  const list = !shown || shown[0] ? visibleBelow(0, [0]) : [];
  tree.innerHTML = list.length ? rowsHtml(list) : '<p class="empty">No call matches.</p>';
  if (list.length) indexRows(tree.firstElementChild, list.length);
}
function refreshRow(i) {
  const row = rowOf.get(i);
  if (!row) return;
  const template = document.createElement("template");
  template.innerHTML = rowHtml(i);
  const fresh = template.content.firstElementChild;
  row.replaceWith(fresh);
  rowOf.set(i, fresh);
}
function expand(i) {
  if (open[i] || !children[i].length) return;
  open[i] = 1;
  const row = rowOf.get(i);
  if (!row) return;
  const list = visibleBelow(i, []);
  row.insertAdjacentHTML("afterend", rowsHtml(list));
  indexRows(row.nextElementSibling, list.length);
  refreshRow(i);
}
function collapse(i) {
  if (!open[i]) return;
  open[i] = 0;
  const row = rowOf.get(i);
  if (!row) return;
  let last = row;
  for (let next = row.nextElementSibling; next && rowOwner(next) < subtreeEnd[i]; next = next.nextElementSibling) {
    rowOf.delete(Number(next.dataset.index));
    last = next;
  }
  if (last !== row) {
    const range = document.createRange();
    range.setStartAfter(row);
    range.setEndAfter(last);
    range.deleteContents();
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
  for (let a = nodes[i].parent, child = i; a >= 0; child = a, a = nodes[a].parent) {
    open[a] = 1;
    const position = visibleChildren(a).indexOf(child);
    if (position >= childLimit[a]) childLimit[a] = position + PAGE / 2;
  }
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
    if ((query && !searchTexts[i].includes(query)) || (flaggedOnly.checked && !flagged[i])) continue;
    hits++;
    matched[i] = shown[i] = 1;
    for (let a = nodes[i].parent; a >= 0; a = nodes[a].parent) {
      open[a] = 1;
      if (shown[a]) break;
      shown[a] = 1;
    }
  }
  filterStatus.textContent = `${grouped(hits)} of ${grouped(count)} calls match`;
  renderAll();
}
function clearFilter() {
  search.value = "";
  flaggedOnly.checked = false;
  applyFilter();
}

// Selection, keys, the toolbar and the header, then the first paint (tree.js built the rows).

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
  if (painted) renderDetail(detailView, i);
}

// ---- navigation
function rowIndex(row) {
  return row ? Number(row.dataset.index) : -1;
}
function move(step) {
  let row = rowOf.get(selected) || (step > 0 ? tree.firstElementChild : tree.lastElementChild);
  for (let k = 0; k < Math.abs(step) && row; k++) {
    let next = step > 0 ? row.nextElementSibling : row.previousElementSibling;
    while (next && !next.dataset.index) next = step > 0 ? next.nextElementSibling : next.previousElementSibling;
    if (!next) break;
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
  if (event.target.dataset.more) return showMore(Number(row.dataset.pagerOf), event.target.dataset.more);
  if (!row.dataset.index) return;
  const i = rowIndex(row);
  if (event.target.classList.contains("toggle")) toggle(i);
  select(i, false);
  tree.focus({ preventScroll: true });
});
tree.addEventListener("dblclick", (event) => {
  const row = event.target.closest(".row[data-index]");
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
  `${grouped(count)} calls · ${recorded} · ${data.source}` +
  (flagged.some((f) => f) ? ` · ${flagged.reduce((a, b) => a + b, 0)} flagged` : "");
if (comparison) {
  const summary = document.getElementById("comparison-summary");
  summary.hidden = false;
  summary.open = true;
  summary.querySelector("summary").textContent = `Comparison with ${comparison.candidate}`;
  summary.querySelector("ul").append(...comparison.lines.map((line) => el("li", {}, line)));
  if (comparison.inferredRenames) {
    const title = "inferred rename rules (save as a .yaml file, edit, pass back with --config)";
    summary.append(el("details", {}, el("summary", {}, title), el("pre", {}, comparison.inferredRenames)));
  }
  const legend = el("span", { class: "legend", title: "max abs diff over atol" }, "diff/atol:");
  ["1", "10", "100", "1e3", "≥1e4"].forEach((label, k) =>
    legend.append(el("i", { style: `background: var(--level-${k + 1})`, title: label }), label),
  );
  document.getElementById("toolbar").append(legend);
  const originButton = document.getElementById("go-origin");
  originButton.hidden = comparison.origin === null && comparison.firstInputDivergence === null;
  originButton.addEventListener("click", goToOrigin);
}

// ---- first paint: the root open, then level after level while the tree stays under ROW_BUDGET
// rows; the origin (if any) revealed and selected
const ROW_BUDGET = 400;
function openFirstLevels() {
  let level = count ? [0] : [];
  let rows = 1;
  while (level.length) {
    const next = level.flatMap((i) => children[i]);
    const added = level.reduce((sum, i) => sum + Math.min(children[i].length, PAGE + 1), 0);
    if (rows > 1 && rows + added > ROW_BUDGET) break;
    for (const i of level) open[i] = 1;
    rows += added;
    level = next.filter((i) => children[i].length);
  }
}
openFirstLevels();
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
    // the printed values come after this script in the page: the parser may still be reading them
    const showDetail = () => {
      painted = true;
      if (selected >= 0) renderDetail(detailView, selected);
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", showDetail);
    else showDetail();
  }, 0),
);

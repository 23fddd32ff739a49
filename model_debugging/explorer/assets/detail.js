// The detail pane: one call's facts, comparison, and each input and output tensor.
let valueTexts = null;
function printedValues(index) {
  valueTexts = valueTexts || JSON.parse(document.getElementById("trace-values").textContent);
  return valueTexts[index];
}
function tensorBlock(tensor) {
  if (!tensor.shape) {
    return el("div", { class: "tensor" }, el("div", { class: "head" }, `${tensor.at || "(value)"} = ${tensor.text ?? "None"}`));
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
  if (tensor.values !== undefined) {
    const more = tensor.valuesDropped ? `\n… ${tensor.valuesDropped} more lines` : "";
    block.append(el("pre", {}, printedValues(tensor.values) + more));
  }
  return block;
}
// With a comparison: each value beside the candidate's value compare paired it with, and how they compare.
function valueBlocks(place, tensors, compared) {
  if (!compared) return tensors.map(tensorBlock);
  const mine = compared.filter((value) => value.place === place);
  const blocks = tensors.map((tensor) => {
    const value = mine.find((item) => item.at === tensor.at);
    return value ? pairBlock(tensorBlock(tensor), value) : tensorBlock(tensor);
  });
  for (const value of mine.filter((item) => item.at === null)) {
    blocks.push(pairBlock(el("div", { class: "tensor absent" }, "not passed by the reference"), value));
  }
  return blocks;
}
function pairBlock(referenceBlock, value) {
  let verdict = value.status;
  if (value.pairedBy && value.at !== null && value.candidateAt !== null) verdict += `, paired by ${value.pairedBy}`;
  if (value.form) verdict += ` (compared as ${value.form})`;
  if (value.maxAbsDiff !== undefined) verdict += `, max abs diff ${formatNumber(Number(value.maxAbsDiff))}`;
  if (value.note) verdict += ` — ${value.note}`;
  if (value.counted === false && value.status !== "equal") verdict += " (a note, not a difference)";
  const other = value.candidate
    ? tensorBlock(value.candidate)
    : el("div", { class: "tensor absent" }, value.candidateAt === null ? "not passed by the candidate" : value.candidateAt);
  const differs = value.status === "differs" && value.counted !== false;
  return el("div", { class: differs ? "pair differs" : "pair" }, el("div", { class: "verdict" }, verdict), el("div", { class: "sides" }, referenceBlock, other));
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
function renderDetail(view, i) {
  const { nodes, classOf, depth, children, comparison } = view;
  const node = nodes[i];
  const qualified = classOf(i);
  const facts = qualified === null ? [] : [["class", qualified]];
  facts.push(["call", `#${node.call}`], ["depth", String(depth[i])], ["children", String(children[i].length)]);
  if (node.parent >= 0) facts.push(["parent", nodes[node.parent].path]);
  if (node.exception) facts.push(["raised", node.exception]);
  for (const badge of node.badges || []) facts.push([badge.label, badge.detail]);
  const cmp = node.comparison;
  if (cmp && (cmp.status === "equal" || cmp.status === "diverged")) {
    facts.push(["compare", cmp.verdict], ["candidate", cmp.candidatePath]);
    if (cmp.candidateClass && cmp.candidateClass !== qualified) facts.push(["candidate class", cmp.candidateClass]);
    if (cmp.alignment) facts.push(["paired", `by the alignment (${cmp.alignment})`]);
    if (cmp.maxAbsDiff !== null) facts.push(["max abs diff", number(cmp.maxAbsDiff)], ["max rel diff", number(cmp.maxRelDiff)], ["mean abs diff", number(cmp.meanAbsDiff)]);
    for (const line of cmp.details) facts.push(["detail", line]);
  } else if (cmp) {
    const unpaired = {
      unmatched: "only in the reference trace",
      "candidate-only": "only in the candidate trace",
      accounted: ACCOUNTED,
      "looked-through": LOOKED_THROUGH,
    };
    facts.push(["compare", unpaired[cmp.status]]);
  }
  if (cmp) for (const line of cmp.notes || []) facts.push(["note", line]);
  if (comparison && comparison.origin === i) facts.push(["origin", "the first call whose inputs agree and outputs differ"]);
  const parts = [el("h2", {}, node.path), el("dl", {}, ...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]))];
  const compared = cmp && cmp.values ? cmp.values : null;
  if (compared) parts.push(el("div", { class: "sides legend" }, el("span", {}, "reference"), el("span", {}, `candidate ${cmp.candidatePath}`)));
  const inputs = valueBlocks("inputs", node.inputs, compared);
  parts.push(el("h3", {}, "Inputs"), ...(inputs.length ? inputs : [el("p", { class: "hint" }, "none recorded")]));
  parts.push(el("h3", {}, "Outputs"));
  if (node.outputs === null) parts.push(el("p", { class: "hint" }, "not recorded (the debugger records outputs of leaf modules)"));
  else {
    const outputs = valueBlocks("outputs", node.outputs, compared);
    parts.push(...(outputs.length ? outputs : [el("p", { class: "hint" }, "none")]));
  }
  view.pane.replaceChildren(...parts);
}

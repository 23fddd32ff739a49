// Formatting helpers shared by the tree and the detail pane (all text goes in as text nodes).
const ACCOUNTED =
  "not compared on its own: compare's alignment accounts for it (part of a fused or split projection, or an identity call such as dropout)";
const LOOKED_THROUGH =
  "no counterpart in the candidate: compare looked through it and paired its calls one by one; its own code (what it adds after its last call) is not compared on its own";
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
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
function esc(text) {
  return String(text).replace(/[&<>"']/g, (character) => ESCAPES[character]);
}
function numberHtml(value) {
  const x = Number(value);
  return Number.isFinite(x) ? formatNumber(x) : `<span class="nonfinite">${formatNumber(x)}</span>`;
}
function number(value) {
  const x = Number(value);
  const text = formatNumber(x);
  return Number.isFinite(x) ? text : el("span", { class: "nonfinite" }, text);
}
function grouped(n) {
  // not toLocaleString: its first call loads locale data, a visible delay before the first paint
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
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
// a module class is recorded as "<Python module>.<qualname>"; rows show the last part
function shortClass(qualified) {
  return qualified.slice(qualified.lastIndexOf(".") + 1);
}
function keyTensor(node, withStats) {
  return firstTensor(node.outputs, withStats) || firstTensor(node.inputs, withStats);
}

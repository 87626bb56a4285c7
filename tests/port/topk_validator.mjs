// A TopK descriptor validator written from `topkspec spec`'s JSON export alone: the fields are read
// as its `input_forms` says, the rules run in the order and with the check data of its `rules`,
// with the meanings of its `check_kinds`, and each finding's status follows `documented_from`.
//
//   node topk_validator.mjs SPEC.json < descriptors (one JSON text per line)
//
// prints one line per descriptor: {"error": "..."} or {"findings": [[rule, status], ...],
// "not_checked": [rule, ...]}.
import { readFileSync } from "node:fs";

// ---- JSON, keeping what input_forms.terms.integer asks: 2 is an integer, 2.0 and 2e0 are not ----
class JFloat { constructor(text) { this.value = Number(text); } }

function parseJSON(text) {
  let i = 0;
  const ws = () => { while (i < text.length && " \t\n\r".includes(text[i])) i++; };
  const fail = () => { throw new Error(`bad JSON at ${i}`); };
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++; const obj = Object.create(null); ws();
      if (text[i] === "}") { i++; return obj; }
      for (;;) {
        ws(); const key = string(); ws(); if (text[i++] !== ":") fail();
        obj[key] = value(); ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i++] === "}") return obj;
        fail();
      }
    }
    if (c === "[") {
      i++; const arr = []; ws();
      if (text[i] === "]") { i++; return arr; }
      for (;;) {
        arr.push(value()); ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i++] === "]") return arr;
        fail();
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, i)) { i += word.length; return v; }
    }
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m[0].length;
    if (m[2] || m[3]) return new JFloat(m[0]);
    const n = Number(m[0]);
    return Number.isSafeInteger(n) ? n : BigInt(m[0]);
  }
  function string() {
    if (text[i] !== '"') fail();
    let j = i + 1, out = "";
    for (;;) {
      const c = text[j];
      if (c === '"') { i = j + 1; return out; }
      if (c === "\\") {
        const e = text[j + 1];
        if (e === "u") { out += String.fromCharCode(parseInt(text.slice(j + 2, j + 6), 16)); j += 6; continue; }
        out += { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[e]; j += 2; continue;
      }
      out += c; j++;
    }
  }
  const v = value(); ws(); if (i !== text.length) fail(); return v;
}

// ---- the export ----
const SPEC = JSON.parse(readFileSync(process.argv[2], "utf8"));  // the export itself holds no float
const T = SPEC.tables;
const FORMS = SPEC.input_forms;
const field = (name) => FORMS.fields.find((f) => f.field === name);
const form = (name, type) => field(name).forms.find((f) => f.type === type);
const WS = FORMS.json_whitespace;

const isInt = (v) => typeof v === "number" || typeof v === "bigint";
const isUint = (v) => isInt(v) && v >= 0 && v <= 4294967295;
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof JFloat);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isStr = (v) => typeof v === "string";
const ascii = (s) => /^[\x00-\x7f]*$/.test(s);
const keys = (o) => Object.keys(o);
const eq = (a, b) => a === b || (isInt(a) && isInt(b) && BigInt(a) === BigInt(b));
const inList = (v, list) => list.some((x) => eq(x, v));
function trim(s) {
  let a = 0, b = s.length;
  while (a < b && WS.includes(s[a])) a++;
  while (b > a && WS.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

class Refused extends Error {}
class Unknown extends Error {}

// A name as a string form reads it: trimmed, ASCII only, upper case, the optional prefix dropped.
function nameOf(value, f) {
  if (!isStr(value)) return null;
  let text = trim(value);
  if (!ascii(text)) return null;
  text = text.toUpperCase();
  const prefix = f.optional_prefix || "";
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

function byEnum(value, name, table) {
  if (isInt(value)) { const hit = keys(T[table]).find((k) => eq(T[table][k], value)); return hit ?? null; }
  const n = nameOf(value, form(name, "string"));
  return n !== null && has(T[table], n) ? n : null;
}

function featureLevel(value) {
  let level;
  if (isInt(value)) level = Number(value);
  else {
    if (!isStr(value) || !ascii(value)) return null;
    let text = trim(value);
    const prefix = form("FeatureLevel", "string").optional_prefix;
    if (text.slice(0, prefix.length).toUpperCase() === prefix) text = text.slice(prefix.length);
    let m;
    if ((m = /^([0-9]+)[._]([0-9])$/.exec(text))) level = Number(m[1]) * 4096 + Number(m[2]) * 256;
    else if (/^0x[0-9a-fA-F]+$/.test(text)) level = parseInt(text.slice(2), 16);
    else return null;
  }
  if (level < 4096 || Math.floor(level / 4096) > 15 || level % 256 !== 0) return null;
  return level;
}
const levelName = (level) => `${Math.floor(level / 4096)}_${Math.floor(level / 256) % 16}`;

function onnxDtype(value) {
  if (!isStr(value)) return value;
  let text = trim(value);
  if (!ascii(text)) return value;
  text = text.toLowerCase();
  const f = form("X.dtype, K.dtype", "string");
  const [left, right] = f.optional_wrapper.split("...");
  if (text.startsWith(left) && text.endsWith(right) && text.length >= left.length + right.length)
    text = text.slice(left.length, text.length - right.length);
  const prefix = f.optional_prefix.toLowerCase();
  if (text.startsWith(prefix)) text = text.slice(prefix.length);
  if (has(f.aliases, text)) text = f.aliases[text];
  return has(T.onnx_type_strings, text) ? text : value;
}

// (view, profile): profile {family, version} or a null version when the descriptor names none.
function normalise(desc) {
  if (!isObj(desc)) throw new Refused("a descriptor must be a JSON object");
  const view = Object.assign(Object.create(null), desc);
  if (has(desc, "Type")) {
    const op = byEnum(desc.Type, "Type", "dml_operator_types");
    if (op === null) throw new Refused("unknown DirectML operator Type");
    view.Type = op;
    const level = featureLevel(has(desc, "FeatureLevel") ? desc.FeatureLevel : field("FeatureLevel").default);
    if (level !== null) view.FeatureLevel = levelName(level);
    if (isObj(desc.Desc)) {
      const body = view.Desc = Object.assign(Object.create(null), desc.Desc);
      for (const name of ["InputTensor", "OutputValueTensor", "OutputIndexTensor"]) {
        if (isObj(body[name]) && has(body[name], "DataType")) {
          body[name] = Object.assign(Object.create(null), body[name]);
          const dt = byEnum(body[name].DataType, "Desc.<tensor>.DataType", "dml_data_types");
          if (dt !== null) body[name].DataType = dt;
        }
      }
      if (has(body, "AxisDirection")) {
        const n = nameOf(body.AxisDirection, form("Desc.AxisDirection", "string"));
        if (n !== null && has(T.dml_axis_directions, n)) body.AxisDirection = T.dml_axis_directions[n];
      }
    }
    return [view, { family: "dml", op: view.Type, version: level }];
  }
  if (!has(desc, "op_type")) throw new Refused("not a TopK descriptor");
  const opset = isInt(desc.opset) && desc.opset >= 1 ? desc.opset : null;
  for (const key of ["X", "K"]) {
    if (isObj(desc[key]) && isStr(desc[key].dtype)) {
      view[key] = Object.assign(Object.create(null), desc[key]);
      view[key].dtype = onnxDtype(desc[key].dtype);
    }
  }
  let version = null;
  if (opset !== null) version = Math.max(...keys(T.onnx_versions).map(Number).filter((v) => v <= opset));
  return [view, { family: "onnx", op: "TopK", version }];
}

// ---- the check kinds, as check_kinds defines them ----
const known = (v, what) => { if (v === null) throw new Unknown(what); return v; };
const sizesOf = (view, t) => (t === "X" ? known(view.X.shape, "rank") : view.Desc[t].Sizes);
const kOf = (view) => {
  if (has(view, "Desc")) return view.Desc.K;
  const k = known(view.k, "k");
  return Array.isArray(k) ? k[0] : k;
};
const axisOf = (view, rank) => {
  if (has(view, "Desc")) return view.Desc.Axis;
  const attrs = view.attributes || {};
  const axis = has(attrs, "axis") ? attrs.axis : -1;
  return axis < 0 ? axis + rank : axis;
};
function rowOf(view, ctx) {
  const rows = (T.dml_support[view.Type] || []).filter((r) => T.dml_feature_levels[r.since] <= ctx.version);
  return rows.length ? rows.reduce((a, b) => (T.dml_feature_levels[b.since] > T.dml_feature_levels[a.since] ? b : a)) : null;
}
const uintList = (v) => Array.isArray(v) && v.every(isUint);
const big = (v) => BigInt(v);

// Whether two elements of a tensor with these sizes and strides share an address (spec/strides.py).
function overlapping(sizes, strides) {
  const dims = sizes.map((s, i) => [strides[i], s]).filter(([, s]) => s > 1).sort((a, b) => a[0] - b[0]);
  if (dims.some(([st]) => st === 0)) return true;
  let reach = 0;
  let stepsPast = true;
  for (const [stride, size] of dims) {
    if (stride <= reach) { stepsPast = false; break; }
    reach += (size - 1) * stride;
  }
  if (stepsPast) return false;
  const count = sizes.reduce((a, b) => a * b, 1);
  if (count > 1 << 22) return true;
  let offsets = [0];
  sizes.forEach((size, i) => {
    const next = [];
    for (const base of offsets) for (let k = 0; k < size; k++) next.push(base + k * strides[i]);
    offsets = next;
  });
  return new Set(offsets).size !== offsets.length;
}

const KINDS = {
  dml_fields(view) {
    const m = [];
    if (has(view, "FeatureLevel") && featureLevel(view.FeatureLevel) === null) m.push("FeatureLevel");
    const body = view.Desc;
    if (!isObj(body)) return [...m, "Desc"];
    const expected = T.dml_desc_fields[view.Type];
    for (const f of expected) if (!has(body, f)) m.push(`missing ${f}`);
    for (const f of keys(body)) if (!expected.includes(f)) m.push(`unknown ${f}`);
    for (const t of ["InputTensor", "OutputValueTensor", "OutputIndexTensor"]) if (has(body, t) && !isObj(body[t])) m.push(t);
    for (const f of ["Axis", "K"]) if (has(body, f) && !isUint(body[f])) m.push(f);
    if (has(body, "AxisDirection") && !isInt(body.AxisDirection) && !isStr(body.AxisDirection)) m.push("AxisDirection");
    return m;
  },
  dml_tensor_fields(view, p) {
    const m = [], allowed = [...T.dml_tensor_fields.required, ...T.dml_tensor_fields.optional];
    for (const name of p.tensors) {
      const t = view.Desc[name];
      for (const f of T.dml_tensor_fields.required) if (!has(t, f)) m.push(`${name} ${f}`);
      for (const f of keys(t)) if (!allowed.includes(f)) m.push(`${name} ${f}`);
      if (has(t, "DataType") && !(isStr(t.DataType) && has(T.dml_data_types, t.DataType))) m.push("DataType");
      for (const f of ["Sizes", "Strides"]) if (has(t, f) && !uintList(t[f])) m.push(f);
      for (const f of ["TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment", "Flags"])
        if (has(t, f) && !(isInt(t[f]) && t[f] >= 0)) m.push(f);
    }
    return m;
  },
  dml_operator_available: (view, p, ctx) => (rowOf(view, ctx) === null ? ["not available"] : []),
  sizes_min: (view, p) => (p.tensors.some((t) => sizesOf(view, t).some((s) => s < p.min)) ? ["size"] : []),
  same_rank: (view, p) => (new Set(p.tensors.map((t) => sizesOf(view, t).length)).size > 1 ? ["rank"] : []),
  rank_in_table: (view, p, ctx) => (p.tensors.some((t) => !rowOf(view, ctx).ranks.includes(sizesOf(view, t).length)) ? ["rank"] : []),
  dtype_in_table: (view, p, ctx) => (p.tensors.some((t) => !rowOf(view, ctx)[p.column].includes(view.Desc[t].DataType)) ? ["type"] : []),
  same_dtype: (view, p) => (new Set(p.tensors.map((t) => view.Desc[t].DataType)).size > 1 ? ["types"] : []),
  axis_below_rank: (view, p) => (view.Desc.Axis < sizesOf(view, p.tensor).length ? [] : ["axis"]),
  k_min: (view, p) => (kOf(view) >= p.min ? [] : ["k"]),
  k_max_axis_size(view, p) {
    const sizes = sizesOf(view, p.tensor);
    const axis = axisOf(view, sizes.length);
    const n = known(sizes[Number(axis)], "size"), k = kOf(view);
    return (p.inclusive ? k <= n : k < n) ? [] : ["k"];
  },
  enum(view, p) {
    const v = has(view.Desc, p.field) ? view.Desc[p.field] : null;
    return v === null || inList(v, p.values) ? [] : ["enum"];
  },
  output_sizes(view, p) {
    const want = [...sizesOf(view, p.input)];
    want[Number(view.Desc.Axis)] = view.Desc.K;
    const got = sizesOf(view, p.tensor);
    return got.length === want.length && got.every((s, i) => eq(s, want[i])) ? [] : ["sizes"];
  },
  same_sizes: (view, p) => (new Set(p.tensors.map((t) => sizesOf(view, t).map(String).join(","))).size > 1 ? ["sizes"] : []),
  outputs_distinct: (view, p) => (p.tensors.some((t) => has(view.Desc[t], "Strides") && overlapping(view.Desc[t].Sizes, view.Desc[t].Strides)) ? ["overlap"] : []),
  strides_length: (view, p) => (p.tensors.some((t) => has(view.Desc[t], "Strides") && view.Desc[t].Strides.length !== view.Desc[t].Sizes.length) ? ["strides"] : []),
  total_size_min(view, p) {
    const m = [];
    for (const name of p.tensors) {
      const t = view.Desc[name];
      if (!has(t, "TotalTensorSizeInBytes")) continue;
      let elements = 1n;
      if (has(t, "Strides")) { elements = 1n; t.Sizes.forEach((s, i) => { elements += (big(s) - 1n) * big(t.Strides[i]); }); }
      else t.Sizes.forEach((s) => { elements *= big(s); });
      const round = big(p.round_to);
      const bytes = elements * big(T.dml_data_type_sizes[t.DataType]);
      if (big(t.TotalTensorSizeInBytes) < (bytes + round - 1n) / round * round) m.push(name);
    }
    return m;
  },
  alignment(view, p) {
    return p.tensors.filter((name) => {
      const t = view.Desc[name];
      const v = big(has(t, "GuaranteedBaseOffsetAlignment") ? t.GuaranteedBaseOffsetAlignment : 0);
      const size = big(T.dml_data_type_sizes[t.DataType]);
      return v !== 0n && (v < size || (v & (v - 1n)) !== 0n);
    });
  },
  onnx_fields(view) {
    const m = [];
    if (!has(view, "opset")) m.push("opset missing");
    else if (!(isInt(view.opset) && view.opset >= 1)) m.push("opset");
    if (view.op_type !== "TopK") m.push("op_type");
    for (const k of keys(view)) if (!["op_type", "opset", "X", "k", "K", "attributes"].includes(k)) m.push(k);
    const x = view.X;
    if (!isObj(x)) m.push("X");
    else {
      if (!isStr(x.dtype)) m.push("dtype");
      const shape = has(x, "shape") ? x.shape : undefined;
      if (!((shape === null) || (Array.isArray(shape) && shape.every((s) => s === null || (isInt(s) && s >= 0))))) m.push("shape");
      for (const k of keys(x)) if (!["dtype", "shape"].includes(k)) m.push(k);
    }
    if (!has(view, "k")) m.push("k missing");
    else if (!(view.k === null || isInt(view.k) || (Array.isArray(view.k) && view.k.every(isInt)))) m.push("k");
    const attrs = has(view, "attributes") ? view.attributes : {};
    if (!isObj(attrs) || !Object.values(attrs).every(isInt)) m.push("attributes");
    if (has(view, "K")) {
      const t = view.K;
      if (!(isObj(t) && keys(t).length === 2 && has(t, "dtype") && has(t, "shape") && isStr(t.dtype) && Array.isArray(t.shape)
            && t.shape.every((d) => d === null || (isInt(d) && d >= 0)))) m.push("K");
    }
    return m;
  },
  onnx_attrs_allowed: (view, p, ctx) => keys(view.attributes || {}).filter((a) => !has(T.onnx_versions[ctx.version].attributes, a)),
  onnx_k_attribute_matches(view) {
    const attrs = view.attributes || {};
    return has(attrs, "k") && !eq(attrs.k, kOf(view)) ? ["k"] : [];
  },
  onnx_dtype_in_table: (view, p, ctx) => (T.onnx_versions[ctx.version][p.column].includes(view.X.dtype) ? [] : ["T"]),
  signed_axis_in_range(view) {
    const rank = sizesOf(view, "X").length;
    const attrs = view.attributes || {};
    const axis = has(attrs, "axis") ? attrs.axis : -1;
    return axis >= -rank && axis <= rank - 1 ? [] : ["axis"];
  },
  k_single(view, p, ctx) {
    const m = [];
    if (Array.isArray(view.k) && view.k.length !== 1) m.push("values");
    if (!has(view, "K")) return m;
    if (T.onnx_versions[ctx.version].k_from !== "input") return [...m, "no input K"];
    if (view.K.dtype !== "int64") m.push("dtype");
    if (view.K.shape.length !== 1) m.push("rank");
    else if (view.K.shape[0] !== null && !eq(view.K.shape[0], 1)) m.push("count");
    return m;
  },
  onnx_bool_attrs: (view, p) => p.attributes.filter((a) => has(view.attributes || {}, a) && !inList(view.attributes[a], p.values)),
};

// ---- the procedure ----
function statusAt(rule, family, version) {
  if (rule.status !== "interpretation" || version === null) return rule.status;
  for (const profile of rule.documented_from) {
    const [fam, v] = profile.split(":");
    if (fam !== family) continue;
    const since = family === "onnx" ? Number(v) : Number(v.split(".")[0]) * 4096 + Number(v.split(".")[1] || 0) * 256;
    if (since <= version) return "documented";
  }
  return rule.status;
}

function judge(desc) {
  const [view, prof] = normalise(desc);
  const ctx = { version: prof.version };
  const broken = new Set(), unknown = new Set(), findings = [], notChecked = [];
  for (const rule of SPEC.rules) {
    if (rule.scope !== prof.family || !rule.ops.includes(prof.op) || rule.check === null) continue;
    if (rule.strict_only) continue;  // judged without strict_doc
    if (rule.requires.some((r) => broken.has(r))) { broken.add(rule.id); continue; }
    if (rule.requires.some((r) => unknown.has(r))) { unknown.add(rule.id); notChecked.push(rule.id); continue; }
    let messages;
    try {
      messages = KINDS[rule.check.kind](view, rule.check, ctx);
    } catch (e) {
      if (!(e instanceof Unknown)) throw e;
      unknown.add(rule.id); notChecked.push(rule.id); continue;
    }
    if (messages.length) {
      broken.add(rule.id);
      findings.push([rule.id, statusAt(rule, prof.family, prof.version)]);
    }
  }
  return { findings, not_checked: notChecked };
}

const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.length);
for (const line of lines) {
  let out;
  try { out = judge(parseJSON(line)); } catch (e) {
    if (!(e instanceof Refused)) throw e;
    out = { error: e.message };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

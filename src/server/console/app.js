// toolgraph console: a dependency-free page over the /v1 API.
// Everything shown comes from the API with the key typed in above; text
// from the catalog or from external sources is only ever set as text, never
// parsed as HTML. No request goes anywhere but this page's own origin.
'use strict';

const KEY_STORE = 'toolgraph.console.key';
const CALLER_FIELDS = ['org', 'agent', 'channel', 'goal', 'session'];
const SVG_NS = 'http://www.w3.org/2000/svg';

const state = {
  key: sessionStorage.getItem(KEY_STORE) || '',
  me: null,
  caller: { org: '', agent: '', channel: '', goal: '', session: '' },
  search: { text: '', verb: '', mode: 'joint', limit: 10 },
  result: null,
  catalog: { domain: '', filter: '' },
  airlock: { status: 'pending' },
};

// ---------------------------------------------------------------- helpers

/** Builds an element: h('a', {href: '#/x', class: 'y', onclick: f}, 'text', child…). */
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
}

function announce(text) {
  const el = document.getElementById('announce');
  el.textContent = '';
  // A fresh text node so screen readers announce repeats too.
  setTimeout(() => { el.textContent = text; }, 30);
}

function pct(x) {
  const v = Math.max(0, Math.min(1, Number(x) || 0));
  return `${Math.round(v * 100)}%`;
}

function num(x, digits = 3) {
  return (Number(x) || 0).toFixed(digits);
}

function when(seconds) {
  if (!seconds) return '—';
  return new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function localName(iri) {
  const m = /[#/:]([^#/:]+)$/.exec(iri || '');
  return m ? m[1] : iri || '';
}

function callerParams(extra) {
  const p = new URLSearchParams();
  for (const f of CALLER_FIELDS) if (state.caller[f]) p.set(f, state.caller[f]);
  for (const [k, v] of Object.entries(extra || {})) if (v !== '' && v !== undefined && v !== null) p.set(k, v);
  const q = p.toString();
  return q ? `?${q}` : '';
}

function callerBody() {
  const c = {};
  for (const f of CALLER_FIELDS) if (state.caller[f]) c[f] = state.caller[f];
  return c;
}

function isAdmin() {
  return state.me && state.me.role === 'admin';
}

// -------------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, body, text) {
    const e = body && body.error;
    super(e ? e.message : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
    this.status = status;
    this.code = e ? e.code : 'http';
    this.field = e ? e.field : undefined;
  }
}

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (state.key) headers.authorization = `Bearer ${state.key}`;
  const init = { method, headers, cache: 'no-store' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, null, `the server did not answer (${e.message})`);
  }
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (_) {
    data = null;
  }
  if (!resp.ok) throw new ApiError(resp.status, data, text);
  return data;
}

function errorBox(err) {
  const where = err.field ? h('span', {}, ' (field ', h('code', { text: err.field }), ')') : null;
  const hint = err.status === 401 ? ' Enter a key above.' : err.status === 403 ? ' This key may not do that.' : '';
  return h('div', { class: 'notice bad', role: 'alert' },
    h('strong', { text: err.status ? `${err.status} ${err.code}: ` : 'Error: ' }), err.message, where, hint);
}

/** Replaces `slot`'s content with a loading line, then with `render(data)`
 * or the error. */
async function load(slot, promise, render) {
  slot.replaceChildren(h('p', { class: 'loading', text: 'Loading…' }));
  try {
    const data = await promise;
    slot.replaceChildren(...[render(data)].flat());
    return data;
  } catch (err) {
    slot.replaceChildren(errorBox(err));
    return null;
  }
}

// ----------------------------------------------------------- form pieces

function field(id, labelText, input, hint) {
  input.id = id;
  const kids = [h('label', { for: id, text: labelText }), input];
  if (hint) {
    input.setAttribute('aria-describedby', `${id}-hint`);
    kids.push(h('small', { id: `${id}-hint`, class: 'muted', text: hint }));
  }
  return h('div', { class: 'field' }, kids);
}

function textInput(name, value, attrs) {
  return h('input', Object.assign({ name, type: 'text', value: value || '', autocomplete: 'off', spellcheck: 'false' }, attrs || {}));
}

function select(name, options, value) {
  return h('select', { name }, options.map(([v, label]) => h('option', { value: v, selected: v === value, text: label })));
}

function callerFieldset(prefix) {
  const bound = state.me || {};
  return h('fieldset', { class: 'grid' },
    h('legend', { text: 'Caller (whose view of the catalog)' }),
    CALLER_FIELDS.map((f) => {
      const fixed = (f === 'org' && bound.org) || (f === 'agent' && bound.agent);
      const input = textInput(f, fixed || state.caller[f], fixed ? { readonly: true } : {});
      return field(`${prefix}-${f}`, f === 'goal' ? 'goal (boundary)' : f, input, fixed ? 'fixed by the key' : null);
    }));
}

function readCaller(form) {
  for (const f of CALLER_FIELDS) state.caller[f] = (form.elements[f].value || '').trim();
}

// ------------------------------------------------------------------ search

function viewSearch(main) {
  const results = h('div', { id: 'results' });
  const form = h('form', { class: 'panel grid', id: 'search-form', role: 'search', 'aria-label': 'Search the catalog' },
    h('div', { class: 'wide' },
      field('q-text', 'Request', textInput('text', state.search.text, {
        placeholder: 'e.g. Book a Southwest flight 175 tomorrow',
      }), 'a request, a planner verb, or both')),
    field('q-verb', 'Planner verb (optional)', textInput('verb', state.search.verb, { placeholder: 'MAKE_RESERVATION' })),
    field('q-mode', 'Ranking', select('mode', [['joint', 'joint (graph + dense + lexical)'], ['graph', 'graph only'], ['dense', 'dense only'], ['lexical', 'lexical only']], state.search.mode)),
    field('q-limit', 'Results', h('input', { name: 'limit', type: 'number', min: 1, max: 50, value: state.search.limit })),
    h('div', { class: 'wide' }, callerFieldset('q')),
    h('div', { class: 'actions wide' }, h('button', { type: 'submit', id: 'search-button', text: 'Search' })));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const el = form.elements;
    state.search = {
      text: el.text.value.trim(),
      verb: el.verb.value.trim(),
      mode: el.mode.value,
      limit: Math.max(1, Math.min(50, Number(el.limit.value) || 10)),
    };
    readCaller(form);
    if (!state.search.text && !state.search.verb) {
      el.text.setAttribute('aria-invalid', 'true');
      results.replaceChildren(h('div', { class: 'notice bad', role: 'alert', text: 'Give a request or a planner verb.' }));
      el.text.focus();
      return;
    }
    el.text.removeAttribute('aria-invalid');
    runSearch(results);
  });
  main.append(h('h1', { tabindex: -1, text: 'Search' }),
    h('p', { class: 'muted', text: 'Ask the way a planner does: a request, optionally a verb, as a given caller. Every score shows where it came from.' }),
    form, results);
  if (state.result) results.append(renderResult(state.result));
}

async function runSearch(slot) {
  if (!state.search.text && !state.search.verb) return;
  const req = { text: state.search.text, mode: state.search.mode, limit: state.search.limit, caller: callerBody() };
  if (state.search.verb) req.verb = state.search.verb;
  const res = await load(slot, api('POST', '/v1/search', req), (r) => {
    state.result = r;
    return renderResult(r);
  });
  if (res) {
    const top = res.matches[0];
    announce(top ? `${res.matches.length} results; best: ${top.tool}, ${pct(top.confidence)} confident${res.ambiguous ? '; ambiguous' : ''}` : 'No results');
  }
}

function bar(kind, label, value, note) {
  // Through the CSSOM: the CSP allows no inline style attributes.
  const fill = h('span', {});
  fill.style.width = pct(value);
  return [
    h('span', { text: label }),
    h('div', { class: `bar ${kind}`, 'aria-hidden': 'true' }, fill),
    h('span', { class: 'mono', title: note || '', text: num(value, 2) }),
  ];
}

function renderResult(r) {
  const out = [];
  if (r.abstain) {
    out.push(h('div', { class: 'notice warn', id: 'abstain' },
      h('strong', { text: 'Abstain: ' }), 'nothing fits well enough; a planner should not call any of these.'));
  }
  if (r.ambiguous && r.clarify) {
    out.push(h('div', { class: 'notice warn', id: 'clarify' },
      h('strong', { text: 'Ambiguous. Ask: ' }), h('q', { text: r.clarify.question }),
      h('ul', {}, r.clarify.contenders.map((c) => h('li', {}, h('strong', { text: c.tool }), ' has ',
        c.facts.length ? c.facts.join(', ') : 'nothing the others lack')))));
  }
  if (r.warnings && r.warnings.length) {
    out.push(h('div', { class: 'notice bad', id: 'warnings' },
      h('strong', { text: 'Removed by policy: ' }),
      h('ul', {}, r.warnings.map((w) => (w.tool
        ? h('li', {}, h('code', { text: w.tool }), ` (${w.layer}): ${w.reason}`)
        : h('li', { text: w.reason }))))));
  }
  if (r.mentions && r.mentions.length) {
    out.push(h('div', { class: 'panel' }, h('h2', { text: 'What the request says' }),
      h('ul', { class: 'chips', 'aria-label': 'Recognised terms' }, r.mentions.map((m) => h('li', { class: `chip ${m.kind}`, title: (m.iris || []).map((x) => x.iri || x).join(' ') },
        `${m.kind}: “${m.surface}”`, m.value && m.value !== m.surface.toLowerCase() ? ` → ${m.value}` : '')))));
  }
  if (!r.matches.length) {
    out.push(h('p', { class: 'notice warn', text: 'No tool this caller may see matches.' }));
    return out;
  }
  out.push(h('h2', { text: `Matches (${r.matches.length}, ${r.mode} ranking)` }));
  out.push(h('ol', { class: 'results', id: 'matches' }, r.matches.map((m, i) => renderMatch(m, i))));
  return out;
}

function renderMatch(m, i) {
  const d = m.details || {};
  const link = `#/tool/${encodeURIComponent(m.tool)}`;
  return h('li', { class: i === 0 ? 'top-match match' : 'match', 'data-tool': m.tool },
    h('div', { class: 'result-head' },
      h('span', { class: 'rank', text: `#${i + 1}` }),
      h('a', { class: 'name', href: link, 'aria-label': `${m.tool}: open its constellation`, text: m.tool }),
      m.requires_approval ? h('span', { class: 'chip hit', text: 'needs approval' }) : null,
      h('span', { class: 'confidence', title: 'calibrated probability that this is a right tool', text: `${pct(m.confidence)} confident` })),
    h('p', { text: m.description }),
    h('div', { class: 'bars', role: 'group', 'aria-label': `Scores of ${m.tool}` },
      bar('graph', 'graph', d.graph, 'share of the request\'s evidence the constellation explains'),
      bar('dense', 'dense', d.dense, 'cosine between request and tool embeddings'),
      bar('lexical', 'lexical', d.lexical, `BM25 ${num(d.bm25, 2)}, trusted ${pct(d.lexical_trust)}`),
      bar('fused', 'fused', d.fused, 'the score the order is based on')),
    d.exact_name ? h('p', { class: 'decided', text: 'The request names this tool.' }) : null,
    d.decided_by ? h('p', { class: 'decided' }, h('strong', { text: 'Decided by: ' }), d.decided_by) : null,
    d.best_for_step ? h('p', { class: 'muted', text: `Best for step: ${d.best_for_step}` }) : null,
    d.step && !d.best_for_step ? h('p', { class: 'muted', text: `From step: ${d.step}` }) : null,
    d.prerequisite_of ? h('p', { class: 'muted', text: `Listed because ${d.prerequisite_of.tool || ''} needs it first` }) : null,
    m.prerequisites && m.prerequisites.length ? h('p', {}, 'Run first: ', m.prerequisites.join(' → ')) : null,
    d.matched && d.matched.length ? h('ul', { class: 'chips', 'aria-label': 'Matched terms' }, d.matched.map((t) => h('li', { class: 'chip hit', text: t }))) : null,
    d.paths && d.paths.length ? h('details', {},
      h('summary', { text: `Graph paths (${d.paths.length})` }),
      h('ul', { class: 'paths' }, d.paths.map((p) => h('li', {}, `${p.explain}  (${p.weight >= 0 ? '+' : ''}${num(p.weight, 2)}, ${p.provenance})`)))) : null,
    h('div', { class: 'actions' }, h('a', { href: link, class: 'constellation-link', text: 'Constellation →' })));
}

// ----------------------------------------------------------- constellation

const KIND_ORDER = ['verb', 'entity', 'integration', 'channel', 'dependency', 'dependent', 'domain', 'category'];

function constellationModel(tool, edges, match) {
  const nodes = new Map();
  const links = [];
  const center = { id: tool.iri, label: tool.name, kind: 'tool' };
  nodes.set(center.id, center);
  const add = (kind, id, label, rel, extra) => {
    if (!nodes.has(id)) nodes.set(id, Object.assign({ id, label, kind }, extra || {}));
    links.push({ from: center.id, to: id, label: rel, kind });
  };
  for (const l of tool.verbs || []) add('verb', l.iri, l.label || localName(l.iri), 'performs', { provenance: l.provenance });
  for (const l of tool.entities || []) add('entity', l.iri, l.label || localName(l.iri), l.weight < 0.5 ? 'mentions' : 'actsOn', { provenance: l.provenance });
  for (const l of tool.domains || []) add('domain', l.iri, l.label || localName(l.iri), 'inDomain');
  for (const l of tool.integrations || []) add('integration', l.iri, l.label || localName(l.iri), 'needsIntegration');
  for (const l of tool.channels || []) add('channel', l.iri, l.label || localName(l.iri), 'onChannel');
  for (const e of edges) {
    if (e.tool === tool.name) add('dependency', `tool:${e.on}`, e.on, e.provenance === 'curated' ? 'dependsOn' : `dependsOn? ${num(e.confidence, 2)}`, { tool: e.on });
    else if (e.on === tool.name) add('dependent', `tool:${e.tool}`, e.tool, 'needed by', { tool: e.tool });
  }
  // The request's evidence: each path reaches a tool-side node from a request node.
  const hits = new Set();
  const requests = [];
  if (match) {
    const byRequest = new Map();
    for (const p of (match.details && match.details.paths) || []) {
      if (!nodes.has(p.via)) {
        nodes.set(p.via, { id: p.via, label: localName(p.via), kind: 'entity' });
        links.push({ from: center.id, to: p.via, label: p.relation, kind: 'entity' });
      }
      if (p.weight > 0) hits.add(p.via);
      const key = `${p.mention}\u0000${p.node}`;
      if (!byRequest.has(key)) {
        const r = { id: `request:${key}`, label: `“${p.mention}”`, kind: 'request', node: p.node, paths: [] };
        byRequest.set(key, r);
        requests.push(r);
      }
      byRequest.get(key).paths.push(p);
    }
  }
  return { center, nodes: [...nodes.values()].filter((n) => n !== center), links, hits, requests };
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function drawConstellation(model) {
  const W = 960;
  const H = 620;
  const cx = W / 2;
  const cy = H / 2;
  const ring = model.nodes.slice().sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
  const pos = new Map([[model.center.id, { x: cx, y: cy, angle: 0 }]]);
  const n = Math.max(ring.length, 1);
  ring.forEach((node, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / n;
    pos.set(node.id, { x: cx + 300 * Math.cos(angle) * 0.72, y: cy + 190 * Math.sin(angle) * 0.95, angle });
  });
  // Request nodes sit outside the node they reached (the first positive path's).
  const perVia = new Map();
  model.requests.forEach((r) => {
    const target = (r.paths.find((p) => p.weight > 0) || r.paths[0]).via;
    const p = pos.get(target) || { angle: 0 };
    const k = perVia.get(target) || 0;
    perVia.set(target, k + 1);
    const angle = p.angle + (k ? (k % 2 ? 1 : -1) * Math.ceil(k / 2) * 0.22 : 0);
    pos.set(r.id, { x: cx + 405 * Math.cos(angle), y: cy + 272 * Math.sin(angle), angle });
  });

  const svg = s('svg', {
    class: 'constellation', id: 'constellation', viewBox: `0 0 ${W} ${H}`, role: 'group',
    'aria-label': `Constellation of ${model.center.label}: ${model.nodes.length} linked nodes${model.requests.length ? `, ${model.requests.length} request terms` : ''}`,
  });
  const edgeLayer = s('g', { class: 'edges' });
  const nodeLayer = s('g', { class: 'nodes' });
  svg.append(edgeLayer, nodeLayer);

  const line = (a, b, cls, label, title) => {
    const pa = pos.get(a);
    const pb = pos.get(b);
    if (!pa || !pb) return;
    const g = s('g', { class: 'link' },
      s('line', { class: cls, x1: pa.x, y1: pa.y, x2: pb.x, y2: pb.y }),
      label ? s('text', { class: 'edge-label', x: (pa.x + pb.x) / 2, y: (pa.y + pb.y) / 2 - 3, 'text-anchor': 'middle', text: label }) : null,
      title ? s('title', { text: title }) : null);
    edgeLayer.append(g);
  };
  for (const l of model.links) line(l.from, l.to, model.hits.has(l.to) ? 'edge hit' : 'edge', l.label);
  for (const r of model.requests) {
    const seen = new Set();
    for (const p of r.paths) {
      if (seen.has(p.via)) continue;
      seen.add(p.via);
      const hop = p.hops > 1 ? ` ×${p.hops}` : '';
      line(r.id, p.via, p.weight > 0 ? 'edge request' : 'edge request negative', `${p.relation}${hop}`, p.explain);
    }
  }

  const node = (id, cls, label, opts) => {
    const p = pos.get(id);
    const g = s('g', { class: `node ${cls}`, transform: `translate(${p.x},${p.y})`, 'data-iri': id });
    if (cls.startsWith('request')) {
      const w = Math.min(170, 14 + label.length * 7);
      g.append(s('rect', { x: -w / 2, y: -13, width: w, height: 26, rx: 6 }),
        s('text', { 'text-anchor': 'middle', y: 4, text: clip(label, 24) }));
    } else if (cls.startsWith('tool')) {
      g.append(s('circle', { r: 26 }), s('text', { class: 'tool-label', 'text-anchor': 'middle', y: 46, text: clip(label, 40) }));
    } else {
      g.append(s('circle', { r: 12 }), s('text', { 'text-anchor': 'middle', y: 28, text: clip(label, 26) }));
    }
    g.append(s('title', { text: opts.title || label }));
    if (opts.go) {
      g.setAttribute('tabindex', '0');
      g.setAttribute('role', 'link');
      g.setAttribute('aria-label', `${label}: open its constellation`);
      const go = () => { location.hash = `#/tool/${encodeURIComponent(opts.go)}`; };
      g.addEventListener('click', go);
      g.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          go();
        }
      });
    }
    nodeLayer.append(g);
  };
  node(model.center.id, 'tool', model.center.label, { title: `${model.center.label} (this tool)` });
  for (const nd of ring) {
    const hit = model.hits.has(nd.id) ? ' hit' : '';
    node(nd.id, `${nd.kind}${hit}`, nd.label, {
      title: `${nd.kind}: ${nd.label}${nd.provenance ? ` (${nd.provenance})` : ''}${hit ? ' — matched by the request' : ''}\n${nd.id}`,
      go: nd.tool,
    });
  }
  for (const r of model.requests) node(r.id, 'request', r.label, { title: `request term ${r.label} → ${r.node}` });
  return svg;
}

function viewTool(main, name) {
  const match = state.result && state.result.matches.find((m) => m.tool === name || m.id === name);
  const slot = h('div', {});
  main.append(h('p', {}, h('a', { href: '#/search', text: '← Back to the search' })),
    h('h1', { tabindex: -1, text: `Constellation: ${name}` }), slot);
  const enc = encodeURIComponent(name);
  load(slot, Promise.all([api('GET', `/v1/tools/${enc}${callerParams()}`), api('GET', `/v1/tools/${enc}/dependencies${callerParams()}`)]), ([tool, edges]) => {
    const model = constellationModel(tool, edges, match);
    const side = h('div', {},
      h('div', { class: 'panel' },
        h('h2', { text: tool.name }),
        h('p', { text: tool.description }),
        h('p', { class: 'muted' }, `source: `, h('code', { text: tool.source || '—' }),
          tool.read_only ? ' · read-only' : '', tool.requires_approval ? ' · needs approval' : ''),
        tool.params && tool.params.length ? h('table', {},
          h('caption', { class: 'sr-only', text: 'Parameters' }),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'parameter' }), h('th', { scope: 'col', text: 'type' }), h('th', { scope: 'col', text: 'required' }))),
          h('tbody', {}, tool.params.map((p) => h('tr', { title: p.description || '' }, h('td', {}, h('code', { text: p.name })), h('td', { text: p.ty || '' }), h('td', { text: p.required ? 'yes' : '' }))))) : null),
      match ? h('div', { class: 'panel', id: 'matched-paths' },
        h('h2', { text: 'Why it matched' }),
        h('p', { class: 'muted', text: `From the search “${state.search.text}”: graph ${num(match.details.graph, 2)}, dense ${num(match.details.dense, 2)}, lexical ${num(match.details.lexical, 2)}, ${pct(match.confidence)} confident.` }),
        match.details.decided_by ? h('p', { class: 'decided', text: `Decided by: ${match.details.decided_by}` }) : null,
        h('ul', { class: 'paths' }, (match.details.paths || []).map((p) => h('li', { text: p.explain }))),
        (match.details.paths || []).length ? null : h('p', { class: 'muted', text: 'No graph path: this match rests on the text channels.' })) : null,
      h('div', { class: 'panel' },
        h('h2', { text: 'Links' }),
        h('ul', {}, model.nodes.map((nd) => h('li', {}, `${nd.kind}: `,
          nd.tool ? h('a', { href: `#/tool/${encodeURIComponent(nd.tool)}`, text: nd.label }) : h('span', { text: nd.label }),
          model.hits.has(nd.id) ? h('strong', { class: 'hit-note', text: ' — matched' }) : null)))));
    return h('div', { class: 'split' },
      h('div', {},
        h('ul', { class: 'legend', 'aria-label': 'Legend' },
          h('li', { class: 'verb', text: 'verb' }), h('li', { class: 'entity', text: 'entity' }), h('li', { class: 'domain', text: 'domain' }),
          h('li', { class: 'integration', text: 'integration / channel' }), h('li', { class: 'dependency', text: 'dependency (Enter opens)' }),
          h('li', { class: 'request', text: 'request term, matched paths in orange' })),
        drawConstellation(model)),
      side);
  }).then((data) => {
    if (data) announce(`Constellation of ${name}${match ? `, ${positivePaths(match)} matched paths highlighted` : ''}`);
  });
}

function positivePaths(match) {
  return ((match.details && match.details.paths) || []).filter((p) => p.weight > 0).length;
}

// ----------------------------------------------------------------- catalog

async function fetchAllTools() {
  const tools = [];
  let total = Infinity;
  while (tools.length < total && tools.length < 10000) {
    const page = await api('GET', `/v1/tools${callerParams({ limit: 500, offset: tools.length })}`);
    total = page.total;
    if (!page.tools.length) break;
    tools.push(...page.tools);
  }
  return { tools, total };
}

function viewCatalog(main) {
  const list = h('div', { id: 'catalog-list' });
  const policy = h('div', { id: 'policy-view' });
  const form = h('form', { class: 'panel grid', id: 'catalog-form', 'aria-label': 'Whose catalog' },
    h('div', { class: 'wide' }, callerFieldset('c')),
    h('div', { class: 'actions wide' }, h('button', { type: 'submit', text: 'Show this caller\'s catalog' })));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    readCaller(form);
    refresh();
  });
  main.append(h('h1', { tabindex: -1, text: 'Catalog' }),
    h('p', { class: 'muted', text: 'The tools a caller may see, by domain; and, for an admin, what the policy hides from that caller and which layer decided.' }),
    form, list, policy);

  let data = null;
  const render = () => {
    const q = state.catalog.filter.toLowerCase();
    const dom = state.catalog.domain;
    const keep = data.tools.filter((t) => (!dom || (t.domains || []).some((d) => localName(d.iri) === dom))
      && (!q || [t.name, t.description, ...(t.verbs || []).map((l) => l.label), ...(t.entities || []).map((l) => l.label)].join(' ').toLowerCase().includes(q)));
    const groups = new Map();
    for (const t of keep) {
      const ds = (t.domains || []).length ? t.domains : [{ iri: '', label: 'no domain' }];
      for (const d of ds) {
        if (dom && localName(d.iri) !== dom) continue;
        const k = d.label || localName(d.iri);
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(t);
      }
    }
    const out = h('div', { id: 'catalog-groups' });
    out.append(h('p', { id: 'catalog-count', role: 'status', text: `${keep.length} of ${data.total} tools this caller may see` }));
    for (const [label, tools] of [...groups.entries()].sort((a, b) => b[1].length - a[1].length)) {
      out.append(h('section', { 'aria-label': label },
        h('h2', { text: `${label} (${tools.length})` }),
        h('table', {},
          h('thead', {}, h('tr', {}, ['tool', 'does', 'on', 'description'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, tools.map((t) => h('tr', {},
            h('td', {}, h('a', { href: `#/tool/${encodeURIComponent(t.name)}`, text: t.name }), t.requires_approval ? h('span', { class: 'chip hit', text: 'approval' }) : null),
            h('td', { text: (t.verbs || []).map((l) => l.label).join(', ') }),
            h('td', { text: (t.entities || []).filter((l) => l.weight >= 0.5).map((l) => l.label).join(', ') }),
            h('td', { text: t.description })))))));
    }
    return out;
  };

  const refresh = async () => {
    const domains = await load(list, Promise.all([api('GET', `/v1/domains${callerParams()}`), fetchAllTools()]), ([ds, all]) => {
      data = all;
      const filter = textInput('filter', state.catalog.filter, { type: 'search', placeholder: 'name, description, verb or entity' });
      const groupsSlot = h('div', {}, render());
      filter.addEventListener('input', () => {
        state.catalog.filter = filter.value;
        groupsSlot.replaceChildren(render());
      });
      const buttons = [['', `all (${all.total})`], ...ds.map((d) => [d.domain, `${d.label} (${d.tools})`])].map(([v, label]) => {
        const b = h('button', { type: 'button', 'aria-pressed': String(state.catalog.domain === v), text: label });
        b.addEventListener('click', () => {
          state.catalog.domain = v;
          for (const o of b.parentElement.parentElement.querySelectorAll('button')) o.setAttribute('aria-pressed', 'false');
          b.setAttribute('aria-pressed', 'true');
          groupsSlot.replaceChildren(render());
        });
        return h('li', {}, b);
      });
      return [h('div', { class: 'panel' },
        field('catalog-filter', 'Filter', filter),
        h('h2', { id: 'domains-heading', text: 'Domains' }),
        h('ul', { class: 'domains', 'aria-labelledby': 'domains-heading' }, buttons)), groupsSlot];
    });
    if (domains) announce(`${domains[1].total} tools visible to this caller`);
    if (isAdmin()) {
      load(policy, api('GET', `/v1/policy/hidden${callerParams()}`), (hidden) => [
        h('h2', { text: `Policy view: hidden from this caller (${hidden.filter((x) => !x.allowed).length}), needing approval (${hidden.filter((x) => x.allowed).length})` }),
        hidden.length ? h('table', { id: 'hidden-table' },
          h('thead', {}, h('tr', {}, ['tool', 'verdict', 'deciding layer', 'why'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, hidden.map((x) => {
            const v = (x.layers || []).find((l) => l.layer === x.deciding) || {};
            return h('tr', {}, h('td', {}, h('code', { text: x.tool })),
              h('td', { text: x.allowed ? 'needs approval' : 'hidden' }),
              h('td', { text: x.deciding }), h('td', { text: v.reason || '' }));
          }))) : h('p', { class: 'muted', text: 'No layer hides anything from this caller.' })]);
    } else {
      policy.replaceChildren(h('p', { class: 'muted', text: 'The policy view (what is hidden, by which layer) needs an admin key.' }));
    }
  };
  refresh();
}

// ----------------------------------------------------------------- airlock

function viewAirlock(main, itemId) {
  main.append(h('h1', { tabindex: -1, text: 'Airlock' }),
    h('p', { class: 'muted', text: 'External tools wait here until someone reviews them: sources are scanned, every tool is screened, approved ones are pinned and become searchable.' }));
  if (!isAdmin()) {
    main.append(h('div', { class: 'notice warn', role: 'alert', text: 'The airlock needs an admin key: enter one above.' }));
    return;
  }
  const sources = h('div', { id: 'sources' });
  const queue = h('div', { id: 'queue' });
  const detail = h('div', { id: 'item-detail' });
  const feedback = h('div', { id: 'airlock-feedback', 'aria-live': 'polite' });
  main.append(feedback,
    h('section', { 'aria-labelledby': 'sources-h' }, h('h2', { id: 'sources-h', text: 'Sources' }), sourceForm(feedback, () => refreshSources(), queue), sources),
    h('section', { 'aria-labelledby': 'queue-h' }, h('h2', { id: 'queue-h', text: 'Review queue' }), queueFilter(queue), queue),
    detail);

  const refreshSources = () => load(sources, api('GET', '/v1/sources'), (list) => list.length ? h('table', { id: 'sources-table' },
    h('thead', {}, h('tr', {}, ['source', 'kind', 'location', 'tools', 'last scan', 'last error', 'actions'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, list.map((src) => {
      const scan = h('button', { type: 'button', class: 'secondary scan', 'aria-label': `Scan ${src.location}`, text: 'Scan' });
      scan.addEventListener('click', async () => {
        scan.disabled = true;
        try {
          const r = await api('POST', `/v1/sources/${encodeURIComponent(src.id)}/scan`);
          say(feedback, 'ok', `Scanned ${src.location}: ${r.discovered} found, ${r.new.length} new, ${r.changed.length} changed, ${r.missing.length} missing, ${r.unchanged} unchanged.`);
          refreshSources();
          refreshQueue(queue);
        } catch (err) {
          feedback.replaceChildren(errorBox(err));
          refreshSources();
        } finally {
          scan.disabled = false;
        }
      });
      const del = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${src.location}`, text: 'Delete' });
      let armed = false;
      del.addEventListener('click', async () => {
        if (!armed) {
          armed = true;
          del.textContent = 'Confirm delete';
          setTimeout(() => { armed = false; del.textContent = 'Delete'; }, 6000);
          return;
        }
        try {
          await api('DELETE', `/v1/sources/${encodeURIComponent(src.id)}`);
          say(feedback, 'ok', `Deleted ${src.location} and withdrew its tools.`);
          refreshSources();
          refreshQueue(queue);
        } catch (err) {
          feedback.replaceChildren(errorBox(err));
        }
      });
      return h('tr', { 'data-source': src.id },
        h('td', {}, h('code', { text: src.id })), h('td', { text: src.kind }), h('td', { class: 'mono', text: src.location }),
        h('td', { class: 'num', text: src.tools }), h('td', { text: when(src.last_scanned_at) }),
        h('td', { class: src.last_error ? 'status-rejected' : '', text: src.last_error || '' }),
        h('td', {}, h('div', { class: 'actions' }, scan, del)));
    }))) : h('p', { class: 'muted', text: 'No source yet: add an OpenAPI spec, an MCP server or a folder of manifests.' }));

  refreshSources();
  refreshQueue(queue);
  if (itemId) showItem(detail, itemId, feedback, queue);
}

function say(slot, kind, text) {
  slot.replaceChildren(h('div', { class: `notice ${kind}`, role: kind === 'bad' ? 'alert' : 'status', text }));
  announce(text);
}

function sourceForm(feedback, refreshSources, queue) {
  const form = h('form', { class: 'panel grid', id: 'source-form', 'aria-label': 'Add a source' },
    field('src-kind', 'Kind', select('kind', [['openapi', 'OpenAPI spec'], ['mcp', 'MCP server'], ['directory', 'folder of manifests']], 'openapi')),
    h('div', { class: 'wide' }, field('src-location', 'Location (URL, file or folder)', textInput('location', '', { required: true, placeholder: 'http://127.0.0.1:9000/openapi.json' }))),
    field('src-schedule', 'Rescan every (s)', h('input', { name: 'schedule', type: 'number', min: 1, placeholder: 'off' })),
    field('src-health', 'Health URL', textInput('health', '', { placeholder: 'optional' })),
    h('div', { class: 'actions wide' },
      h('button', { type: 'submit', id: 'add-source', text: 'Add and scan' })));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const el = form.elements;
    const body = { kind: el.kind.value, location: el.location.value.trim() };
    if (el.schedule.value) body.schedule_seconds = Number(el.schedule.value);
    if (el.health.value.trim()) body.health_url = el.health.value.trim();
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const src = await api('POST', '/v1/sources', body);
      const r = await api('POST', `/v1/sources/${encodeURIComponent(src.id)}/scan`);
      say(feedback, 'ok', `Added ${src.location} and scanned it: ${r.discovered} found, ${r.new.length} new.`);
      form.reset();
    } catch (err) {
      feedback.replaceChildren(errorBox(err));
      if (err.field && el[err.field === 'location' ? 'location' : 'kind']) el[err.field === 'location' ? 'location' : 'kind'].setAttribute('aria-invalid', 'true');
    } finally {
      button.disabled = false;
      refreshSources();
      refreshQueue(queue);
    }
  });
  return form;
}

function queueFilter(queue) {
  const sel = select('status', [['', 'every status'], ['pending', 'pending'], ['changed', 'changed'], ['approved', 'approved'], ['rejected', 'rejected'], ['missing', 'missing']], state.airlock.status);
  sel.addEventListener('change', () => {
    state.airlock.status = sel.value;
    refreshQueue(queue);
  });
  return h('div', { class: 'actions' }, field('queue-status', 'Show', sel));
}

function refreshQueue(queue) {
  const q = `?limit=500${state.airlock.status ? `&status=${encodeURIComponent(state.airlock.status)}` : ''}`;
  return load(queue, api('GET', `/v1/pending${q}`), (items) => items.length ? h('table', { id: 'queue-table' },
    h('thead', {}, h('tr', {}, ['tool', 'status', 'severity', 'screening', 'source', 'updated'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, items.map((it) => h('tr', { 'data-item': it.id },
      h('td', {}, h('a', { href: `#/airlock/${encodeURIComponent(it.id)}`, class: 'review-link', 'aria-label': `Review ${it.name}`, text: it.name })),
      h('td', { class: `status-${it.status}`, text: it.status }),
      h('td', { class: `severity-${it.severity || 'info'}`, text: it.severity || 'info' }),
      h('td', { text: it.reasons.map((r) => r.code).join(', ') || 'clean' }),
      h('td', {}, h('code', { text: it.source })),
      h('td', { text: when(it.updated_at) }))))) : h('p', { class: 'muted', text: 'Nothing in this state.' }));
}

function showItem(slot, id, feedback, queue) {
  load(slot, api('GET', `/v1/pending/${encodeURIComponent(id)}`), (it) => {
    const reasons = it.reasons.length ? h('ul', { id: 'reasons' }, it.reasons.map((r) => h('li', { class: 'reason' },
      h('span', { class: `severity severity-${r.severity || 'info'}`, text: r.severity || 'info' }), ' ',
      h('span', { class: 'code', text: r.code }), ': ', r.message,
      r.field ? h('span', { class: 'muted' }, ' in ', h('code', { text: r.field })) : null,
      r.evidence ? h('div', {}, 'evidence: ', h('code', { text: r.evidence })) : null))) : h('p', { class: 'notice ok', text: 'Screening found nothing.' });
    const diff = it.diff && it.diff.length ? h('table', { class: 'diff', id: 'diff' },
      h('caption', { text: 'Changed since the approved version' }),
      h('thead', {}, h('tr', {}, ['field', 'approved', 'now'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, it.diff.map((c) => h('tr', {}, h('td', {}, h('code', { text: c.field })),
        h('td', { class: 'before', text: c.before ?? '—' }), h('td', { class: 'after', text: c.after ?? '—' }))))) : null;
    const m = it.manifest || {};
    return h('section', { class: 'panel', 'aria-labelledby': 'item-h' },
      h('h2', { id: 'item-h', tabindex: -1, text: `Review: ${it.name}` }),
      h('p', {}, 'status ', h('span', { class: `status-${it.status}`, text: it.status }), ' · source ', h('code', { text: it.source }),
        ' · content ', h('code', { title: it.hash, text: it.hash.slice(0, 12) }), it.pinned_hash ? h('span', {}, ' · pinned ', h('code', { text: it.pinned_hash.slice(0, 12) })) : null),
      h('h3', { text: 'Description' }), h('p', { id: 'item-description', text: m.description || '(none)' }),
      (m.params || []).length ? h('p', { class: 'muted' }, 'parameters: ', m.params.map((p) => `${p.name}${p.required ? '*' : ''}`).join(', ')) : null,
      h('h3', { text: 'Screening' }),
      h('p', { id: 'item-severity' }, 'severity ', h('span', { class: `severity-${it.severity || 'info'}`, text: it.severity || 'info' }),
        it.score != null ? ` · learned score ${it.score.toFixed(2)}` : ''),
      reasons, diff,
      it.review ? h('p', { class: 'muted', text: `Last review: ${it.review.action} by ${it.review.by} at ${when(it.review.at)}${it.review.reason ? ` (${it.review.reason})` : ''}` }) : null,
      ['pending', 'changed', 'rejected'].includes(it.status) ? approveForm(it, feedback, queue, slot) : null,
      ['pending', 'changed', 'approved'].includes(it.status) ? rejectForm(it, feedback, queue, slot) : null);
  }).then((it) => {
    const head = document.getElementById('item-h');
    if (it && head) head.focus();
  });
}

function splitList(v) {
  return v.split(',').map((x) => x.trim()).filter(Boolean);
}

function approveForm(it, feedback, queue, slot) {
  const form = h('form', { class: 'grid', id: 'approve-form', 'aria-label': `Approve ${it.name}` },
    h('h3', { class: 'wide', text: 'Approve' }),
    field('ap-rate', 'Rate limit (calls/min per org)', h('input', { name: 'rate', type: 'number', min: 1, placeholder: 'none' })),
    field('ap-budget', 'Budget', h('input', { name: 'budget', type: 'number', min: 0, step: 'any', placeholder: 'none' })),
    field('ap-unit', 'Budget counts', select('unit', [['calls', 'calls'], ['cost', 'cost units']], 'calls')),
    field('ap-period', 'per', select('period', [['minute', 'minute'], ['hour', 'hour'], ['day', 'day'], ['week', 'week'], ['month', 'month']], 'day')),
    field('ap-orgs', 'Organizations allowed', textInput('orgs', '', { placeholder: 'comma-separated; empty: all' })),
    field('ap-agents', 'Agents allowed', textInput('agents', '', { placeholder: 'comma-separated; empty: all' })),
    field('ap-cost', 'Cost per call', h('input', { name: 'cost', type: 'number', min: 0, step: 'any', placeholder: '1 (cost budgets)' })),
    field('ap-health', 'Health URL', textInput('health', '', { placeholder: 'default: the source\'s' })),
    field('ap-categories', 'Categories (what agent profiles and goals name)', textInput('categories', '', { placeholder: 'comma-separated, e.g. information; empty: inferred' })),
    it.severity === 'block' ? field('ap-override', 'Override: why this blocked tool is safe (required, recorded)', textInput('override', '', { required: true, placeholder: 'reason' })) : null,
    h('div', { class: 'actions wide' }, h('button', { type: 'submit', id: 'approve-button', text: `Approve ${it.name}` })));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const el = form.elements;
    const body = {};
    if (el.rate.value) body.rate_limit = Number(el.rate.value);
    if (el.budget.value) body.budget = { limit: Number(el.budget.value), unit: el.unit.value, period: el.period.value };
    const orgs = splitList(el.orgs.value);
    const agents = splitList(el.agents.value);
    if (orgs.length || agents.length) body.access = { orgs, agents };
    if (el.cost.value) body.cost_per_call = Number(el.cost.value);
    if (el.health.value.trim()) body.health_url = el.health.value.trim();
    const categories = splitList(el.categories.value);
    if (categories.length) body.categories = categories;
    if (el.override && el.override.value.trim()) body.override_reason = el.override.value.trim();
    try {
      const done = await api('POST', `/v1/pending/${encodeURIComponent(it.id)}/approve`, body);
      const find = h('a', { href: '#/search', id: 'search-approved', text: `Search for ${done.name}` });
      find.addEventListener('click', () => {
        state.search.text = (done.manifest && done.manifest.description) || done.name;
        state.result = null;
        sessionStorage.setItem('toolgraph.console.autorun', '1');
      });
      feedback.replaceChildren(h('div', { class: 'notice ok', role: 'status', id: 'approved-notice' },
        `Approved ${done.name}: pinned and searchable. `, find));
      announce(`Approved ${done.name}`);
      refreshQueue(queue);
      slot.replaceChildren();
      find.focus();
    } catch (err) {
      form.prepend(errorBox(err));
    }
  });
  return form;
}

function rejectForm(it, feedback, queue, slot) {
  const form = h('form', { class: 'grid', id: 'reject-form', 'aria-label': `Reject ${it.name}` },
    h('h3', { class: 'wide', text: 'Reject' }),
    h('div', { class: 'wide' }, field('rj-reason', 'Reason', textInput('reason', '', { required: true, placeholder: 'why this tool may not be used' }))),
    h('div', { class: 'actions wide' }, h('button', { type: 'submit', class: 'danger', id: 'reject-button', text: `Reject ${it.name}` })));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const done = await api('POST', `/v1/pending/${encodeURIComponent(it.id)}/reject`, { reason: form.elements.reason.value.trim() });
      say(feedback, 'ok', `Rejected ${done.name}.`);
      refreshQueue(queue);
      slot.replaceChildren();
    } catch (err) {
      form.prepend(errorBox(err));
    }
  });
  return form;
}

// ------------------------------------------------------------------- usage

function ms(x) {
  return x === null || x === undefined ? '' : `${num(x, 1)} ms`;
}

function viewUsage(main) {
  main.append(h('h1', { tabindex: -1, text: 'Usage' }),
    h('p', { class: 'muted', text: 'Calls through toolgraph: per tool, its calls, errors and latency, and each organization\'s budget spent and left; calls held for approval; the latest calls.' }));
  if (!isAdmin()) {
    main.append(h('div', { class: 'notice warn', role: 'alert', text: 'Usage needs an admin key: enter one above.' }));
    return;
  }
  const feedback = h('div', { id: 'usage-feedback', 'aria-live': 'polite' });
  const tools = h('div', { id: 'usage-tools' });
  const held = h('div', { id: 'usage-held' });
  const recent = h('div', { id: 'usage-calls' });
  main.append(feedback,
    h('section', { 'aria-labelledby': 'usage-h' }, h('h2', { id: 'usage-h', text: 'Per tool' }), tools),
    h('section', { 'aria-labelledby': 'held-h' }, h('h2', { id: 'held-h', text: 'Held for approval' }), held),
    h('section', { 'aria-labelledby': 'calls-h' }, h('h2', { id: 'calls-h', text: 'Latest calls' }), recent));
  const refresh = () => {
    load(tools, api('GET', '/v1/usage/tools'), (list) => list.length ? h('table', { id: 'usage-table' },
      h('thead', {}, h('tr', {}, ['tool', 'state', 'calls', 'errors', 'error rate', 'p50', 'p95', 'organizations'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, list.map((u) => h('tr', { 'data-tool': u.tool },
        h('td', {}, h('code', { text: u.tool })),
        h('td', { class: u.active ? 'status-approved' : 'status-rejected', text: u.active ? 'on' : 'switched off' }),
        h('td', { class: 'num', text: u.calls }), h('td', { class: 'num', text: u.errors }),
        h('td', { class: 'num', text: pct(u.error_rate) }),
        h('td', { class: 'num', text: ms(u.p50_ms) }), h('td', { class: 'num', text: ms(u.p95_ms) }),
        h('td', {}, u.orgs.map((o) => h('div', { text: `${o.org}: ${o.total_calls} calls${o.rate_limit ? `, ${o.calls_last_minute}/${o.rate_limit} this minute` : ''}${o.budget_limit !== undefined ? `, spent ${num(o.spent, 2)} of ${num(o.budget_limit, 2)} (left ${num(o.budget_left, 2)})` : ''}` }))))))) : h('p', { class: 'muted', text: 'No call yet.' }));
    load(held, api('GET', '/v1/approvals?status=pending'), (list) => list.length ? h('table', { id: 'held-table' },
      h('thead', {}, h('tr', {}, ['request', 'tool', 'caller', 'asked', 'arguments', 'decision'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, list.map((r) => {
        const decide = (approve) => {
          const b = h('button', { type: 'button', class: approve ? '' : 'danger', text: approve ? 'Approve and run' : 'Reject', 'aria-label': `${approve ? 'Approve' : 'Reject'} ${r.id}` });
          b.addEventListener('click', async () => {
            b.disabled = true;
            try {
              const done = await api('POST', `/v1/approvals/${encodeURIComponent(r.id)}/${approve ? 'approve' : 'reject'}`, {});
              say(feedback, 'ok', `${r.tool}: ${done.status}${done.error ? ` (${done.error.message})` : ''}.`);
              refresh();
            } catch (err) {
              feedback.replaceChildren(errorBox(err));
              b.disabled = false;
            }
          });
          return b;
        };
        return h('tr', { 'data-approval': r.id },
          h('td', {}, h('code', { text: r.id })), h('td', {}, h('code', { text: r.tool })),
          h('td', { text: [r.caller.org, r.caller.agent].filter(Boolean).join(' · ') }),
          h('td', { text: when(r.created_at) }), h('td', { class: 'mono', text: clip(JSON.stringify(r.arguments), 120) }),
          h('td', {}, h('div', { class: 'actions' }, decide(true), decide(false))));
      }))) : h('p', { class: 'muted', text: 'No call waits for approval.' }));
    load(recent, api('GET', '/v1/calls?limit=20'), (list) => list.length ? h('table', { id: 'calls-table' },
      h('thead', {}, h('tr', {}, ['when', 'tool', 'caller', 'status', 'code', 'upstream', 'duration'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, list.map((c) => h('tr', {},
        h('td', { text: when(c.at) }), h('td', {}, h('code', { text: c.tool })),
        h('td', { text: [c.org, c.agent].filter(Boolean).join(' · ') }),
        h('td', { class: c.status === 'ok' ? 'status-approved' : (c.status === 'held' ? 'status-pending' : 'status-rejected'), text: c.status }),
        h('td', { text: c.code || '' }), h('td', { class: 'num', text: c.upstream_status || '' }),
        h('td', { class: 'num', text: ms(c.duration_ms) }))))) : h('p', { class: 'muted', text: 'No call yet.' }));
  };
  refresh();
}

// ------------------------------------------------------------- the shell

async function whoAmI() {
  const who = document.getElementById('who');
  try {
    state.me = await api('GET', '/v1/me');
    who.textContent = state.me.open ? 'open server (admin)' : `${state.me.role}${state.me.org ? ` · org ${state.me.org}` : ''}${state.me.agent ? ` · agent ${state.me.agent}` : ''}`;
    if (state.me.org) state.caller.org = state.me.org;
    if (state.me.agent) state.caller.agent = state.me.agent;
  } catch (err) {
    state.me = null;
    who.textContent = err.status === 401 ? 'no valid key' : `cannot reach the server: ${err.message}`;
  }
}

function route() {
  const hash = location.hash || '#/search';
  const [, view = 'search', ...rest] = hash.slice(1).split('/');
  const arg = rest.length ? decodeURIComponent(rest.join('/')) : '';
  for (const a of document.querySelectorAll('nav a[data-view]')) {
    if (a.dataset.view === (view === 'tool' ? 'search' : view)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const main = document.getElementById('main');
  main.replaceChildren();
  if (view === 'tool' && arg) viewTool(main, arg);
  else if (view === 'catalog') viewCatalog(main);
  else if (view === 'airlock') viewAirlock(main, arg);
  else if (view === 'usage') viewUsage(main);
  else {
    viewSearch(main);
    if (sessionStorage.getItem('toolgraph.console.autorun')) {
      sessionStorage.removeItem('toolgraph.console.autorun');
      runSearch(document.getElementById('results'));
    }
  }
  document.title = `toolgraph · ${view === 'tool' ? arg : view}`;
  const heading = main.querySelector('h1');
  if (heading && document.activeElement !== document.getElementById('api-key')) heading.focus({ preventScroll: true });
}

async function start() {
  const keyForm = document.getElementById('key-form');
  const keyInput = document.getElementById('api-key');
  keyInput.value = state.key;
  keyForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    state.key = keyInput.value.trim();
    if (state.key) sessionStorage.setItem(KEY_STORE, state.key);
    else sessionStorage.removeItem(KEY_STORE);
    await whoAmI();
    announce(state.me ? `Signed in as ${state.me.role}` : 'That key was not accepted');
    route();
  });
  document.getElementById('skip').addEventListener('click', (ev) => {
    ev.preventDefault();
    document.getElementById('main').focus();
  });
  window.addEventListener('hashchange', route);
  await whoAmI();
  route();
}

start();

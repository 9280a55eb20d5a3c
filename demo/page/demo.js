// The /demo page: one question, two arms (A and B), answered by POST /retrieve/compare and shown side by side.
// Plain DOM, no build step. Every text from the service is set with textContent, never parsed as HTML.
'use strict'

const MODES = ['hybrid', 'graphrag', 'episodic']
const DISPLAY_MODES = ['summary', 'highly_related_summary', 'detail']
const NORMALISATIONS = ['minmax', 'tmm', 'zscore']
// What hybrid does when neither the arm nor the namespace's retrieval defaults choose a fusion.
const DEFAULT_FUSION_TEXT = 'default: convex, min-max, alpha 0.5 (a namespace\'s retrieval defaults may set another)'
const ARM_NAMES = ['A', 'B']
const DEFAULT_NAMESPACE = 'default'
// The demo world lives in `default`: its example questions are offered only there.
const EXAMPLES_NAMESPACE = DEFAULT_NAMESPACE

// Questions from the demo world (demo/README.md, "Questions to try"), each with a pair of arms that shows a difference.
const EXAMPLES = [
  { q: '左氧氟沙星能给孩子用吗', arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] },
  { q: '咳嗽三周以上要做什么检查', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }] },
  { q: '谁负责鉴权中间件', arms: [{ mode: 'graphrag' }, { mode: 'hybrid' }] },
  { q: '智能分诊服务依赖什么', arms: [{ mode: 'graphrag' }, { mode: 'hybrid' }] },
  { q: '流式返回那个任务有哪些约束', arms: [{ mode: 'episodic' }, { mode: 'hybrid' }] },
  { q: '鉴权故障的根因是什么', arms: [{ mode: 'episodic' }, { mode: 'graphrag' }] },
  { q: '出差到杭州住宿每晚最多报销多少钱', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['vector'] }] },
  { q: 'How long do I have to submit a travel claim?', arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] },
  { q: '咳嗽三周以上要做什么检查', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', fusion: 'rrf' }] },
  { q: '智能分诊服务依赖什么', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['vector', 'lexical', 'graph'] }] }
]

/** Creates an element: h('p', {class: 'x'}, 'text', child, …); attributes starting with `on` are listeners. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value)
    else if (key === 'class') el.className = value
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return el
}

const $ = (selector) => document.querySelector(selector)
const fmt = (x, digits = 4) => (typeof x === 'number' ? String(Math.round(x * 10 ** digits) / 10 ** digits) : '–')

// ---------------------------------------------------------------- arm pickers

function buildArmPicker(fieldset, index) {
  const id = (name) => `arm${index}-${name}`
  const legend = fieldset.querySelector('legend')
  legend.textContent = `${ARM_NAMES[index]}`
  fieldset.append(
    h('div', { class: 'row' },
      h('label', { for: id('mode') }, 'mode '),
      h('select', { id: id('mode'), name: 'mode', onchange: () => showOptions(fieldset) },
        MODES.map((m) => h('option', { value: m }, m)))),
    h('div', { class: 'row', 'data-for': 'hybrid' },
      h('label', {}, h('input', { type: 'checkbox', id: id('vector'), checked: true }), ' vector leg'),
      h('label', {}, h('input', { type: 'checkbox', id: id('lexical'), checked: true }), ' lexical leg'),
      h('label', { title: 'the passages the knowledge graph reaches from the question: named entities and their neighbours, back to the chunks they cite' },
        h('input', { type: 'checkbox', id: id('graph') }), ' graph leg'),
      h('label', {}, 'window ', h('input', { type: 'number', id: id('window'), min: 1, max: 1000, placeholder: '50' }))),
    // Each fusion's own knobs, shown once it is chosen: the service refuses a request that mixes them.
    h('div', { class: 'row', 'data-for': 'hybrid' },
      h('label', { for: id('fusion') }, 'fusion '),
      h('select', { id: id('fusion'), onchange: () => showFusionOptions(fieldset) },
        h('option', { value: '' }, '(default)'), h('option', { value: 'convex' }, 'convex'), h('option', { value: 'rrf' }, 'rrf')),
      h('span', { class: 'hint', 'data-fusion': '' }, DEFAULT_FUSION_TEXT),
      h('label', { 'data-fusion': 'convex', title: 'weight of the lexical leg; the vector leg gets 1 − alpha' },
        'alpha ', h('input', { type: 'number', id: id('alpha'), min: 0, max: 1, step: 0.05, placeholder: '0.5' })),
      h('label', { 'data-fusion': 'convex' }, 'normalisation ',
        h('select', { id: id('normalisation') }, h('option', { value: '' }, '(default: minmax)'), NORMALISATIONS.map((n) => h('option', { value: n }, n)))),
      h('label', { 'data-fusion': 'rrf' }, 'rrf_k ', h('input', { type: 'number', id: id('rrf_k'), min: 0, max: 10000, placeholder: '60' }))),
    h('div', { class: 'row', 'data-for': 'graphrag' },
      h('label', {}, 'max_relations ', h('input', { type: 'number', id: id('max_relations'), min: 1, max: 100, placeholder: '10' }))),
    h('div', { class: 'row', 'data-for': 'episodic' },
      h('label', { for: id('display_mode') }, 'display_mode '),
      h('select', { id: id('display_mode') }, h('option', { value: '' }, '(default)'), DISPLAY_MODES.map((m) => h('option', { value: m }, m)))),
    h('details', {},
      h('summary', {}, 'more options (JSON)'),
      h('label', { for: id('extra'), class: 'visually-hidden' }, `Arm ${ARM_NAMES[index]} options as JSON`),
      h('textarea', { id: id('extra'), rows: 2, spellcheck: 'false', placeholder: '{"weights": {"vector": 2}}  or  {"episodic": {"hop_cost": 0.1}}' })))
  showOptions(fieldset)
}

function showOptions(fieldset) {
  const mode = fieldset.querySelector('select[name=mode]').value
  for (const row of fieldset.querySelectorAll('[data-for]')) row.hidden = row.dataset.for !== mode
  showFusionOptions(fieldset)
}

function showFusionOptions(fieldset) {
  const fusion = fieldset.querySelector('select[id$=-fusion]').value
  for (const knob of fieldset.querySelectorAll('[data-fusion]')) knob.hidden = knob.dataset.fusion !== fusion
}

/** The fusion an arm asks for: its `fusion`, else the one its options belong to (as the service reads them), else ''. */
function fusionOf(arm) {
  if (arm.fusion !== undefined) return arm.fusion
  if (arm.rrf_k !== undefined || arm.weights !== undefined) return 'rrf'
  if (arm.alpha !== undefined || arm.normalisation !== undefined) return 'convex'
  return ''
}

/** The arm as the form describes it; throws with a message when the JSON options do not parse. */
function readArm(index) {
  const v = (name) => document.getElementById(`arm${index}-${name}`)
  const arm = { mode: v('mode').value }
  if (arm.mode === 'hybrid') {
    const legs = ['vector', 'lexical', 'graph'].filter((leg) => v(leg).checked)
    if (legs.length !== 2 || legs.includes('graph')) arm.legs = legs
    if (v('window').value !== '') arm.window = Number(v('window').value)
    // Only the chosen fusion's knobs are sent, whatever the hidden ones hold.
    const fusion = v('fusion').value
    if (fusion !== '') arm.fusion = fusion
    if (fusion === 'convex' && v('alpha').value !== '') arm.alpha = Number(v('alpha').value)
    if (fusion === 'convex' && v('normalisation').value !== '') arm.normalisation = v('normalisation').value
    if (fusion === 'rrf' && v('rrf_k').value !== '') arm.rrf_k = Number(v('rrf_k').value)
  } else if (arm.mode === 'graphrag') {
    if (v('max_relations').value !== '') arm.max_relations = Number(v('max_relations').value)
  } else if (arm.mode === 'episodic') {
    if (v('display_mode').value !== '') arm.episodic = { display_mode: v('display_mode').value }
  }
  const extra = v('extra').value.trim()
  if (extra !== '') {
    let parsed
    try { parsed = JSON.parse(extra) } catch { throw new Error(`Arm ${ARM_NAMES[index]}: the options are not valid JSON`) }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`Arm ${ARM_NAMES[index]}: the options must be a JSON object`)
    for (const [key, value] of Object.entries(parsed)) {
      arm[key] = key === 'episodic' && arm.episodic ? { ...arm.episodic, ...value } : value
    }
  }
  return arm
}

/** Puts an arm into the form: the known options into their fields, the rest into the JSON box. */
function writeArm(index, arm) {
  const v = (name) => document.getElementById(`arm${index}-${name}`)
  const { mode, legs, alpha, normalisation, rrf_k, window: win, max_relations, episodic, ...rest } = arm
  delete rest.fusion
  v('mode').value = MODES.includes(mode) ? mode : 'hybrid'
  v('vector').checked = !legs || legs.includes('vector')
  v('lexical').checked = !legs || legs.includes('lexical')
  v('graph').checked = legs?.includes('graph') === true
  v('window').value = win ?? ''
  // The chosen fusion's knobs go into their fields; what the form cannot hold (an unknown fusion or normalisation,
  // a knob of the other fusion) stays in the JSON box, for the service to refuse as it would.
  const fusion = fusionOf(arm)
  const known = ['', 'convex', 'rrf'].includes(fusion)
  v('fusion').value = known ? fusion : ''
  if (!known) rest.fusion = fusion
  const convex = fusion === 'convex'
  v('alpha').value = convex ? alpha ?? '' : ''
  if (!convex && alpha !== undefined) rest.alpha = alpha
  const fits = convex && (normalisation === undefined || NORMALISATIONS.includes(normalisation))
  v('normalisation').value = fits ? normalisation ?? '' : ''
  if (!fits && normalisation !== undefined) rest.normalisation = normalisation
  v('rrf_k').value = fusion === 'rrf' ? rrf_k ?? '' : ''
  if (fusion !== 'rrf' && rrf_k !== undefined) rest.rrf_k = rrf_k
  v('max_relations').value = max_relations ?? ''
  const { display_mode, ...episodicRest } = episodic || {}
  v('display_mode').value = display_mode ?? ''
  if (Object.keys(episodicRest).length > 0) rest.episodic = episodicRest
  v('extra').value = Object.keys(rest).length > 0 ? JSON.stringify(rest) : ''
  if (v('extra').value !== '') v('extra').closest('details').open = true
  showOptions(v('mode').closest('fieldset'))
}

/** "hybrid · legs lexical" — what distinguishes an arm, for column headings. */
function describeArm(arm) {
  const { mode, ...options } = arm
  const parts = Object.entries(options).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : v}`)
  return { mode, options: parts.join(' · ') }
}

// ---------------------------------------------------------------- the namespace

const namespaceOf = () => $('#namespace').value || DEFAULT_NAMESPACE

/** The page's URL for a namespace (and a comparison in the hash): `/demo?namespace=…#…`. */
function pageUrl(namespace, hash) {
  const search = namespace === DEFAULT_NAMESPACE ? '' : `?namespace=${encodeURIComponent(namespace)}`
  return `${location.pathname}${search}${hash ? `#${hash}` : ''}`
}

/** Chooses `namespace` in the picker (adding it when the list does not have it, e.g. one that holds nothing yet). */
function chooseNamespace(namespace) {
  const picker = $('#namespace')
  if (![...picker.options].some((o) => o.value === namespace)) picker.append(h('option', { value: namespace }, namespace))
  picker.value = namespace
  // What it holds, once the list says: the modes that have nothing there answer empty.
  $('#namespace-holds').textContent = picker.selectedOptions[0]?.dataset.holds ?? ''
  $('#examples').hidden = namespace !== EXAMPLES_NAMESPACE
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** Namespaces the picker lists at most: GET /namespaces pages past it are not read. */
const MAX_LISTED_NAMESPACES = 5000
const NAMESPACE_PAGE = 1000

/** Fills the picker from GET /namespaces (what the caller's key may see), a page at a time, keeping the namespace chosen. */
async function listNamespaces() {
  const picker = $('#namespace')
  try {
    const namespaces = []
    let cursor
    do {
      const query = new URLSearchParams({ limit: String(NAMESPACE_PAGE), ...(cursor ? { cursor } : {}) })
      const response = await fetch(`/namespaces?${query}`)
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const page = await response.json()
      namespaces.push(...page.namespaces)
      cursor = page.next_cursor
    } while (cursor && namespaces.length < MAX_LISTED_NAMESPACES)
    picker.title = cursor ? `The first ${namespaces.length} namespaces in name order; another is reached by ?namespace= in the URL` : ''
    const chosen = namespaceOf()
    picker.replaceChildren(...namespaces.map((n) => h('option', {
      value: n.namespace,
      'data-holds': `${plural(n.documents, 'document')}, ${plural(n.entities, 'entity', 'entities')}, ${plural(n.episodes, 'Episode')}`
    }, n.namespace)))
    chooseNamespace(chosen)
    picker.dataset.state = 'listed'
  } catch (e) {
    // The page still works on the namespace of its URL; only the list is missing.
    picker.title = `The namespaces could not be listed: ${e.message}`
    picker.dataset.state = 'unlisted'
  }
}

function onNamespaceChange() {
  const namespace = namespaceOf()
  chooseNamespace(namespace)
  history.replaceState(null, '', pageUrl(namespace, location.hash.slice(1)))
  // The same question, asked again of the other corpus.
  if ($('#question').value.trim() !== '') void run()
}

// ---------------------------------------------------------------- the request

let inFlight

async function run() {
  const status = $('#status')
  const question = $('#question').value.trim()
  if (question === '') {
    status.textContent = 'Type a question first.'
    status.className = 'status bad'
    $('#question').focus()
    return
  }
  let body
  try {
    const pictures = $('#include-images').checked
    // include_images is a hybrid option: the other modes would refuse it
    const arms = [readArm(0), readArm(1)].map((arm) => (pictures && arm.mode === 'hybrid' ? { ...arm, include_images: true } : arm))
    body = { query: question, namespace: namespaceOf(), top_k: Number($('#top-k').value) || 5, arms }
  } catch (e) {
    status.textContent = e.message
    status.className = 'status bad'
    return
  }
  history.replaceState(null, '', pageUrl(body.namespace, encodeURIComponent(JSON.stringify(body))))
  inFlight?.abort()
  const controller = new AbortController()
  inFlight = controller
  $('#run').disabled = true
  status.className = 'status'
  status.textContent = 'Asking both arms…'
  document.body.dataset.state = 'loading'
  try {
    const response = await fetch('/retrieve/compare', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal
    })
    const answer = await response.json().catch(() => ({ message: `HTTP ${response.status}` }))
    if (!response.ok) {
      // The whole request was refused (bad input, overload, a key needed): nothing to show per arm.
      status.textContent = `${response.status}: ${answer.message ?? 'request failed'}`
      status.className = 'status bad'
      document.body.dataset.state = 'error'
      return
    }
    render(body, answer)
    status.textContent = `Answered in ${fmt(answer.took_ms, 1)} ms.`
    document.body.dataset.state = 'done'
    // On a phone the answers start below the form: bring them into view.
    if (matchMedia('(max-width: 760px)').matches) $('#summary').scrollIntoView({ block: 'start' })
  } catch (e) {
    if (e.name === 'AbortError') return
    status.textContent = `The service did not answer: ${e.message}`
    status.className = 'status bad'
    document.body.dataset.state = 'error'
  } finally {
    if (inFlight === controller) $('#run').disabled = false
  }
}

// ---------------------------------------------------------------- rendering

/** The chunks (or Episode) an item stands on: the rule `/retrieve/compare` documents for `arms[].evidence`. */
function evidenceOf(item) {
  if (item.mode === 'hybrid') return [item.id]
  if (item.mode === 'graphrag') return item.metadata.source_chunk_ids || []
  return [item.source]
}

function render(request, answer) {
  const pair = answer.comparison[0]
  renderSummary(request, answer, pair)
  answer.arms.forEach((arm, i) => renderColumn(document.getElementById(`column-${i}`), i, request.arms[i], arm, pair))
}

function renderSummary(request, answer, pair) {
  const summary = $('#summary')
  summary.replaceChildren()
  summary.hidden = false
  summary.append(h('h2', {}, 'How A and B differ'))
  if (!pair) {
    summary.append(h('p', { class: 'why' }, 'One arm failed, so there is nothing to compare: its column says why.'))
  } else {
    const [a, b] = request.arms.map(describeArm)
    const sentences = []
    if (a.mode !== b.mode) sentences.push(`${a.mode} returns ${kindOf(a.mode)}, ${b.mode} returns ${kindOf(b.mode)}.`)
    sentences.push(pair.common_ids.length > 0
      ? `${pair.common_ids.length} item${pair.common_ids.length === 1 ? '' : 's'} in both answers.`
      : 'No item in both answers.')
    sentences.push(pair.common_evidence.length > 0
      ? `They stand on ${pair.common_evidence.length} piece${pair.common_evidence.length === 1 ? '' : 's'} of evidence in common.`
      : 'They share no evidence.')
    summary.append(h('p', { class: 'why' }, sentences.join(' ')))
    summary.append(h('dl', {},
      h('dt', {}, 'items in common (id)'), h('dd', { 'data-figure': 'common_ids' }, list(pair.common_ids)),
      h('dt', {}, 'evidence in common'), h('dd', { 'data-figure': 'common_evidence' }, list(pair.common_evidence)),
      h('dt', {}, 'sources in common'), h('dd', { 'data-figure': 'common_sources' }, list(pair.common_sources)),
      h('dt', {}, 'Jaccard of sources'), h('dd', { 'data-figure': 'sources_jaccard' }, fmt(pair.sources_jaccard, 3)),
      h('dt', { title: 'rank-biased overlap, p = 0.9, extrapolated (RBO_ext): 1 = same evidence in the same order, 0 = nothing shared' },
        'RBO of evidence (p 0.9)'),
      h('dd', { 'data-figure': 'evidence_rbo' }, fmt(pair.evidence_rbo, 3)),
      h('dt', {}, 'time A / B'), h('dd', {}, `${fmt(pair.took_ms[0], 1)} ms / ${fmt(pair.took_ms[1], 1)} ms`),
      h('dt', {}, 'match strength A / B'), h('dd', {}, `${pair.match_strength[0]} / ${pair.match_strength[1]}`)))
    summary.append(h('div', { class: 'legend' },
      h('span', {}, h('span', { class: 'swatch ids' }), 'the same item in both'),
      h('span', {}, h('span', { class: 'swatch evidence' }), 'cites evidence the other answer cites too')))
  }
  const swagger = `/docs/?compare=${encodeURIComponent(JSON.stringify(request))}#/retrieve/post_retrieve_compare`
  summary.append(h('p', { class: 'links' },
    h('a', { href: swagger, target: '_blank', rel: 'noopener', id: 'swagger-link' }, 'Open this request in Swagger UI'),
    ' · ',
    h('a', { href: `#${encodeURIComponent(JSON.stringify(request))}` }, 'link to this comparison')))
}

const kindOf = (mode) => ({ hybrid: 'document chunks', graphrag: 'entities with their relations', episodic: 'Episodes' })[mode]
const list = (values) => (values.length === 0 ? 'none' : values.join(', '))

function renderColumn(column, index, requested, arm, pair) {
  column.replaceChildren()
  const { mode, options } = describeArm(requested)
  const head = h('div', { class: 'column-head' },
    h('h2', {}, `${ARM_NAMES[index]} · ${mode} `, options ? h('span', { class: 'arm-options' }, options) : null))
  column.append(head)
  if (arm.error) {
    column.dataset.outcome = 'error'
    column.append(h('div', { class: 'error-box', role: 'alert' },
      h('h3', {}, `${arm.error.statusCode} ${arm.error.error}`),
      h('p', {}, arm.error.message),
      h('p', { class: 'source' }, arm.error.code)))
    return
  }
  column.dataset.outcome = 'ok'
  const r = arm.response
  head.append(h('div', { class: 'facts' },
    h('span', {}, 'match ', h('span', { class: `badge ${r.match_strength}`, 'data-figure': 'match_strength' }, r.match_strength)),
    h('span', { 'data-figure': 'took_ms' }, `${fmt(r.took_ms, 1)} ms${r.cached ? ' (cached)' : ''}`),
    r.legs.map((leg) => h('span', { class: leg.status === 'ok' || leg.status === 'skipped' ? 'leg-ok' : 'leg-bad', title: leg.reason || '' },
      `${leg.name} ${leg.status}${leg.status === 'ok' ? ` ${fmt(leg.took_ms, 1)} ms, ${leg.hits} hit${leg.hits === 1 ? '' : 's'}` : ''}`))))
  if (r.image_items) column.append(renderPictures(r.image_items))
  if (r.recall_bundle.length === 0) {
    column.append(h('p', { class: 'empty' }, 'No item.'))
    return
  }
  const sharedIds = new Set(pair ? pair.common_ids : [])
  const sharedEvidence = new Set(pair ? pair.common_evidence : [])
  const names = new Map(r.recall_bundle.map((item) => [item.id, item.metadata.entity_name]))
  for (const item of r.recall_bundle) {
    const evidence = evidenceOf(item).filter((e) => sharedEvidence.has(e))
    const common = sharedIds.has(item.id) ? 'common-id' : evidence.length > 0 ? 'common-evidence' : ''
    column.append(renderItem(item, common, evidence, names))
  }
}

/** An arm's `image_items` (include_images): thumbnails from `GET /images/{id}`, each with its caption and score. */
function renderPictures(items) {
  const strip = h('section', { class: 'pictures', 'aria-label': 'Pictures (image_items)' }, h('h3', {}, `Pictures (${items.length})`))
  if (items.length === 0) strip.append(h('p', { class: 'empty' }, 'No picture.'))
  for (const item of items) {
    strip.append(h('figure', { class: 'picture', 'data-id': item.id },
      h('a', { href: item.url, target: '_blank', rel: 'noopener' }, h('img', { src: item.url, alt: item.caption || item.id, loading: 'lazy' })),
      h('figcaption', {},
        h('span', { class: 'caption', lang: 'zh-CN' }, item.caption || '(no caption)'),
        h('span', { class: 'score', title: 'cosine of the question to the picture\'s text; comparable among pictures only' }, `score ${fmt(item.score, 4)}`),
        h('span', { class: 'source' }, `${item.document}${item.page ? `, page ${item.page}` : ''}`))))
  }
  return strip
}

function renderItem(item, common, sharedEvidence, names) {
  const m = item.metadata
  const text = h('div', { class: 'text', lang: 'zh-CN' }, item.text)
  const card = h('article', { class: `item ${common}`, 'data-id': item.id },
    h('div', { class: 'item-head' },
      h('span', { class: 'rank' }, `#${m.rank}`),
      h('span', { class: 'id' }, item.id),
      h('span', { class: 'score', title: `score_kind: ${m.score_kind}` }, `score ${fmt(item.score, 6)}`),
      common === 'common-id' ? h('span', { class: 'shared ids' }, 'in both') : null,
      common === 'common-evidence' ? h('span', { class: 'shared', title: sharedEvidence.join(', ') }, 'shared evidence') : null),
    h('div', { class: 'source' }, item.source),
    text)
  const more = h('button', { type: 'button', class: 'more', 'aria-expanded': 'false' }, 'show all')
  more.addEventListener('click', () => {
    const open = text.classList.toggle('open')
    more.textContent = open ? 'show less' : 'show all'
    more.setAttribute('aria-expanded', String(open))
  })
  card.append(more, h('div', { class: 'why-item' }, explain(item, names), h('details', {},
    h('summary', {}, 'metadata (JSON)'), h('pre', {}, JSON.stringify(m, null, 2)))))
  // Only long texts need the button; measured once the card is in the page.
  requestAnimationFrame(() => { if (text.scrollHeight <= text.clientHeight + 2) more.hidden = true })
  return card
}

/** An entity reached by meaning: the question names none of it; its nearest name and how near. */
function meaningWords(similarity, text) {
  return `by meaning${text ? `, near "${text}"` : ''}${typeof similarity === 'number' ? ` (similarity ${fmt(similarity, 3)})` : ''}`
}

/** How the question reached a graph path's entity, in words. */
function reached(p) {
  if (p.matched_by === 'meaning') return `by meaning${typeof p.similarity === 'number' ? `, similarity ${fmt(p.similarity, 3)}` : ''}`
  return `named: ${p.matched_by}`
}

/** The readable part of `metadata`: why the item is here, in the mode's own terms. */
function explain(item, names) {
  const m = item.metadata
  if (item.mode === 'hybrid') {
    const row = (leg) => h('tr', {},
      h('th', {}, leg),
      h('td', {}, m.legs?.[leg] ? `rank ${m.legs[leg].rank}` : 'not found'),
      h('td', {}, m.legs?.[leg] ? `score ${fmt(m.legs[leg].score)}` : ''),
      h('td', {}, m.rrf?.contributions?.[leg] !== undefined ? `RRF +${fmt(m.rrf.contributions[leg], 6)}`
        : m.convex?.contributions?.[leg] !== undefined ? `convex +${fmt(m.convex.contributions[leg], 6)}` : ''))
    const rule = m.convex ? `convex (${m.convex.normalisation}) alpha = ${m.convex.alpha}${m.convex.graph_weight !== undefined ? `, graph ${fmt(m.convex.graph_weight)}` : ''}` : `RRF k = ${m.rrf?.k ?? '–'}`
    const graphRan = m.legs?.graph !== undefined || m.convex?.graph_weight !== undefined || m.rrf?.contributions?.graph !== undefined
    // each entity path that brought the chunk: entity, relation, hop
    const paths = (m.graph_paths || []).map((p) => h('li', {}, p.hop === 0
      ? `${p.entity_name} (${reached(p)}) · weight ${fmt(p.weight)}`
      : `${p.entity_name} ← ${p.relation ? `${p.relation.type} (${p.relation.source} → ${p.relation.target})` : 'a relation'} · hop 1 · weight ${fmt(p.weight)}`))
    return h('div', {},
      h('table', {}, h('tbody', {}, row('vector'), row('lexical'), graphRan ? row('graph') : null)),
      paths.length > 0 ? h('div', { class: 'graph-paths' }, 'graph paths: ', h('ul', {}, paths)) : null,
      h('div', {}, `${rule} · `, m.title ? `${m.title} · ` : '', `chunk ${m.chunk_index}`))
  }
  if (item.mode === 'graphrag') {
    const name = (id) => names.get(id) || id
    const how = m.matched_by === 'meaning' ? meaningWords(m.similarity, m.meaning_text)
      : { name: 'its name is in the question', alias: 'an alias is in the question', partial: 'a large part of its name is in the question',
          keyword: 'keyword fallback', evidence: 'its evidence chunks match the question' }[m.matched_by] || m.matched_by
    return h('div', {},
      h('div', {}, m.hop === 0 ? `Named: ${how}` : `Neighbour (hop 1) of ${m.via ? name(m.via) : 'an entity the question names'}`),
      m.relations?.length ? h('ul', {}, m.relations.map((r) =>
        h('li', {}, `${name(r.source)} -[${r.type}]-> ${name(r.target)}`, r.description ? `: ${r.description}` : ''))) : null,
      h('div', {}, 'evidence chunks: ', h('code', {}, (m.source_chunk_ids || []).join(', ') || 'none')))
  }
  return h('div', {},
    h('div', {}, `winning path: ${m.best_path} · cost ${fmt(m.cost)}`),
    h('ul', {},
      m.best_support_id ? h('li', {}, 'evidence hit: ', h('code', {}, m.best_support_id),
        typeof m.support_similarity === 'number' ? ` (cosine ${fmt(m.support_similarity, 3)})` : '') : null,
      m.best_facet_id ? h('li', {}, 'facet: ', h('code', {}, m.best_facet_id)) : null,
      m.best_point_id ? h('li', {}, 'point: ', h('code', {}, m.best_point_id)) : null,
      m.best_entity_id ? h('li', {}, 'entity: ', h('code', {}, m.best_entity_id)) : null),
    m.time ? h('div', {}, `time: ${m.time}`) : null)
}

// ---------------------------------------------------------------- start

/** "hybrid:lexical", "hybrid fusion rrf": an example arm in a few characters. */
const armLabel = (a) => `${a.mode}${a.legs ? `:${a.legs.join(',')}` : ''}${a.fusion ? ` fusion ${a.fusion}` : ''}`

function useExample(example) {
  $('#question').value = example.q
  example.arms.forEach((arm, i) => writeArm(i, arm))
  void run()
}

function start() {
  chooseNamespace(new URLSearchParams(location.search).get('namespace') || DEFAULT_NAMESPACE)
  $('#namespace').addEventListener('change', onNamespaceChange)
  void listNamespaces()
  document.querySelectorAll('fieldset.arm').forEach((fieldset, i) => buildArmPicker(fieldset, i))
  writeArm(0, { mode: 'hybrid' })
  writeArm(1, { mode: 'graphrag' })
  $('#examples').append(...EXAMPLES.map((example) => h('button', { type: 'button', onclick: () => { chooseNamespace(EXAMPLES_NAMESPACE); useExample(example) } },
    example.q, h('span', { class: 'modes' }, example.arms.map(armLabel).join(' / ')))))
  $('#ask').addEventListener('submit', (e) => { e.preventDefault(); void run() })
  // Enter asks; Shift+Enter is a new line; Enter that confirms an IME candidate (Chinese input) does neither.
  $('#question').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault()
      void run()
    }
  })
  if (location.hash.length > 1) {
    try {
      const request = JSON.parse(decodeURIComponent(location.hash.slice(1)))
      $('#question').value = request.query ?? ''
      // A linked comparison names its namespace; it wins over the URL's.
      if (typeof request.namespace === 'string') chooseNamespace(request.namespace)
      if (request.top_k) $('#top-k').value = request.top_k
      $('#include-images').checked = (request.arms || []).some((arm) => arm.include_images === true)
      ;(request.arms || []).slice(0, 2).forEach((arm, i) => writeArm(i, arm))
      void run()
    } catch {
      // A hash that is not a comparison is ignored.
    }
  }
}

start()

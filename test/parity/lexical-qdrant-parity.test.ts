import { inject } from 'vitest'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'
import { lexicalParitySuite } from './lexical-parity-suite.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-qdrant-parity: ${QDRANT_SKIP_LINE}`)

lexicalParitySuite('lexical leg on Qdrant against the embedded index (CMRC, two namespaces, deletes and re-ingests)', {
  skip: url ? undefined : QDRANT_SKIP_LINE,
  start: async () => ({ url, close: async () => undefined })
})

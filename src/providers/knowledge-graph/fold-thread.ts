import { serveFold } from '../embedded/fold-thread.js'
import { foldKnowledgeGraph } from './embedded.js'

// The thread that folds a namespace's log into its next snapshot (`BackgroundCompaction`).
serveFold(foldKnowledgeGraph)

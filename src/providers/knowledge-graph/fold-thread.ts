import { serveFold } from '../embedded/fold-thread.js'
import { foldKnowledgeGraphInBlocks } from './streaming-fold.js'

// The thread that folds a namespace's log into its next snapshot (`BackgroundCompaction`), a block of the snapshot at a time.
serveFold({ blocks: foldKnowledgeGraphInBlocks })

import { serveFold } from '../embedded/fold-thread.js'
import { foldEpisodicGraphInBlocks } from './streaming-fold.js'

// The thread that folds a namespace's log into its next snapshot (`BackgroundCompaction`), a block of the snapshot at a time.
serveFold({ blocks: foldEpisodicGraphInBlocks })

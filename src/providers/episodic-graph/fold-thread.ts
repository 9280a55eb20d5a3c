import { serveFold } from '../embedded/fold-thread.js'
import { foldEpisodicGraph } from './embedded.js'

// The thread that folds a namespace's log into its next snapshot (`BackgroundCompaction`).
serveFold(foldEpisodicGraph)

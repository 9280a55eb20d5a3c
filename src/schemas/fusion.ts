export { AlphaSchema, ConvexExplanationSchema, FusionSchema, NormalisationSchema } from '../../adapters/hybrid/fusion-schema.js'

export { AlphaSchema, FusionSchema, GraphWeightSchema, NormalisationSchema } from '../../adapters/hybrid/fusion-schema.js'

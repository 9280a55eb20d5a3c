export { AlphaSchema,  FusionSchema, NormalisationSchema } from '../../adapters/hybrid/fusion-schema.js'

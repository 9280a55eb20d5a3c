import { Type } from 'typebox'
import { NAMESPACE_PATTERN } from '../providers/namespace.js'

/** `top_k`: how many items the bundle holds at most. */
export const TopKSchema = Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Items to return, 1..100.' })

export const NamespaceSchema = Type.String({
  pattern: NAMESPACE_PATTERN,
  description: 'The namespace: lowercase letters and digits, then also `_` and `-`, at most 63 characters. Default `default`. ' +
    'A namespace holds its own documents, knowledge graph and episodic memory; a request never sees another\'s.'
})

/** `?namespace=` of routes that take no body. */
export const NamespaceQuerySchema = Type.Object({ namespace: Type.Optional(NamespaceSchema) }, { additionalProperties: false })

import { Type } from 'typebox'

/** `top_k`: how many items the bundle holds at most. */
export const TopKSchema = Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Items to return, 1..100.' })

export const LegNameSchema = Type.Enum(['vector', 'lexical'])
export const LEG_NAMES = ['vector', 'lexical'] as const
export type LegName = (typeof LEG_NAMES)[number]

import { buildApp } from './app.js'
import { loadConfig } from '../config.js'
import { backendNames } from '../backend-names.js'
import type { Runtime } from '../runtime.js'
import { Startup } from '../startup.js'

/**
 * The OpenAPI document exactly as the server serves it at /openapi.json. The routes and their schemas
 * do not depend on the backends, so the app is built over a runtime that holds none (nothing is called).
 */
export async function servedOpenApi(): Promise<unknown> {
  const config = loadConfig({})
  const runtime = { config, names: backendNames(config), corpus: {}, startup: new Startup(), requestBegins: () => () => {}, close: async () => {} } as unknown as Runtime
  const app = await buildApp(runtime, { logger: false })
  try {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' })
    return response.json()
  } finally {
    await app.close()
  }
}

import { buildApp } from './app.js'
import { loadConfig } from '../config.js'
import { backendNames, type Services } from '../services.js'
import { Startup } from '../startup.js'

/**
 * The OpenAPI document exactly as the server serves it at /openapi.json. The routes and their schemas
 * do not depend on the backends, so the app is built over services that hold none (nothing is called).
 */
export async function servedOpenApi(): Promise<unknown> {
  const config = loadConfig({})
  const services = { config, names: backendNames(config), startup: new Startup(), close: async () => {} } as unknown as Services
  const app = await buildApp(services.config, services, { logger: false })
  try {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' })
    return response.json()
  } finally {
    await app.close()
  }
}

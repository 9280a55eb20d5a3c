import { pino } from 'pino'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { loadDemoIfEmpty } from './demo.js'
import { openServices } from './services.js'

async function main(): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`recall: ${error.message}\nSee the configuration table in README.md.`)
      process.exit(1)
    }
    throw error
  }
  const logger = pino({ level: config.logLevel })
  const services = await openServices(config, undefined, { logger })
  const app = await buildApp(config, services, { loggerInstance: logger })
  if (config.demoData) await loadDemoIfEmpty(services, (msg) => app.log.info(msg))
  await app.modes.graphrag.warm().catch((error: unknown) => app.log.warn({ err: error }, 'graphrag name matcher not built yet'))

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    await app.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))

  await app.listen({ port: config.port, host: config.host })
  app.log.info(`Swagger UI: http://${config.host}:${config.port}/docs`)
}

main().catch((error: unknown) => {
  console.error('recall: failed to start:', error instanceof Error ? error.message : error)
  process.exit(1)
})

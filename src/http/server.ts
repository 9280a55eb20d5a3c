import { pino } from 'pino'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { createRuntime } from '../runtime.js'
import { createServices } from '../services.js'

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
  const services = createServices(config, {
    logger, loadDemo: true,
    onFatal: (step, error) => {
      logger.fatal({ step, err: error.message }, `start-up: ${step} cannot succeed; refusing to start`)
      console.error(`recall: refusing to start: ${error.message}`)
      // what start-up registered (the sole writer's registration, leases) is released, so a corrected restart is not refused for it
      setTimeout(() => process.exit(1), 5_000).unref()
      void services.close().catch(() => undefined).finally(() => process.exit(1))
    }
  })
  const app = await buildApp(createRuntime(services, { logger }), { loggerInstance: logger })

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

  // Listen first: the model, the stores and the demo world load afterwards, while /healthz answers,
  // /readyz says what is still loading and the routes that need it answer 503 with Retry-After.
  await app.listen({ port: config.port, host: config.host })
  app.log.info(`Swagger UI: http://${config.host}:${config.port}/docs`)
  services.startup.start()
}

main().catch((error: unknown) => {
  console.error('recall: failed to start:', error instanceof Error ? error.message : error)
  process.exit(1)
})
